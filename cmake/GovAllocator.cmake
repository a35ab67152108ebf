# The memory allocator of gov's programs (the `gov` CLI and gov-bench), not of the embedding
# library: a controller that links libgov keeps the allocator of its own process.
#
# jemalloc (Debian's libjemalloc-dev) instead of the C library's malloc: a simulation allocates
# and frees a decision's strings millions of times, with a heap of hundreds of megabytes, where
# glibc's bins miss the cache. Measured on 2026-11-29 (docs/perf/analysis.md, issue 21, session
# 33), the benchmark's 1,000,000-event replay, a build without it and one with it alternating:
# 9.05-9.47 s -> 7.91-8.14 s (-13%). gperftools' tcmalloc was 3-5% faster still (through
# LD_PRELOAD) but writes a line of its own to stderr when an allocation fails, before gov's "out
# of memory" error; mimalloc aborted the process there.
# Sanitizer and fuzzing builds keep their own allocator, and so does a machine without the
# package (a configure note says so; everything works, more slowly).
option(GOV_JEMALLOC "Link the gov programs with jemalloc when it is installed" ON)
set(GOV_USE_JEMALLOC OFF)
if(GOV_JEMALLOC AND NOT GOV_SANITIZE AND NOT GOV_FUZZ)
  find_library(GOV_JEMALLOC_LIBRARY jemalloc)
  find_path(GOV_JEMALLOC_INCLUDE jemalloc/jemalloc.h)
  if(GOV_JEMALLOC_LIBRARY AND GOV_JEMALLOC_INCLUDE)
    set(GOV_USE_JEMALLOC ON)
  else()
    message(STATUS "gov: jemalloc not found (libjemalloc-dev); the gov programs use the C library's allocator")
  endif()
endif()

# gov_fast_allocator(TARGET): links an executable with jemalloc when it is in use, and defines
# GOV_JEMALLOC=1 for it. --no-as-needed: nothing calls the library by name (it replaces malloc,
# and with it operator new), so a linker that drops unreferenced libraries would drop it.
function(gov_fast_allocator target)
  if(GOV_USE_JEMALLOC)
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" ${GOV_JEMALLOC_LIBRARY} "-Wl,--pop-state")
    target_include_directories(${target} PRIVATE ${GOV_JEMALLOC_INCLUDE})
    target_compile_definitions(${target} PRIVATE GOV_JEMALLOC=1)
  endif()
endfunction()
