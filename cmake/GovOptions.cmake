# Warning, -Werror and sanitizer flags shared by every gov target.
add_library(gov_options INTERFACE)
target_compile_options(gov_options INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
# GCC 12 reports false -Wrestrict positives inside std::string at -O2/-O3 (GCC bug 105329).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(gov_options INTERFACE -Wno-restrict)
endif()
if(GOV_WERROR)
  target_compile_options(gov_options INTERFACE -Werror)
endif()
# Include paths are rooted at the repository: #include "compiler/ast/ast.hpp".
target_include_directories(gov_options INTERFACE ${PROJECT_SOURCE_DIR})
# The public value types (gov/types.hpp) are the vocabulary of every layer, not only of the
# embedding API: resources, tasks, decisions.
target_include_directories(gov_options INTERFACE ${PROJECT_SOURCE_DIR}/runtime/include)

# GOV_ASSERTIONS=1 turns GOV_ASSERT on in every gov target; _GLIBCXX_ASSERTIONS adds
# libstdc++'s cheap precondition checks (operator[] bounds, front() of an empty container),
# which do not change the library's ABI.
if(GOV_ASSERTIONS)
  target_compile_definitions(gov_options INTERFACE GOV_ASSERTIONS=1 _GLIBCXX_ASSERTIONS)
endif()

if(GOV_SANITIZE)
  add_compile_options(-fsanitize=${GOV_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${GOV_SANITIZE})
  # GCC's flow analysis sees through the sanitizers' instrumentation badly and reports
  # -Wmaybe-uninitialized inside libstdc++ (std::regex's std::function states in GCC 12); the
  # gate for that warning is the plain build.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(gov_options INTERFACE -Wno-maybe-uninitialized)
  endif()
endif()
# libFuzzer's coverage instrumentation on every target; only the gov-fuzz-* binaries link
# libFuzzer itself (tests/fuzz/CMakeLists.txt).
if(GOV_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GOV_FUZZ needs clang (libFuzzer); configure with -DCMAKE_CXX_COMPILER=clang++-19")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# gov_library(NAME SOURCES... DEPS ... PRIVATE_DEPS ...): one static library per stage, aliased gov::NAME.
function(gov_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(gov_${name} STATIC ${ARG_SOURCES})
  add_library(gov::${name} ALIAS gov_${name})
  target_link_libraries(gov_${name} PUBLIC gov_options ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_target_properties(gov_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
