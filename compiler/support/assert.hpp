// GOV_ASSERT: checks of broken invariants, compiled in when the build sets GOV_ASSERTIONS.
#pragma once

#include <cstdio>
#include <cstdlib>

// Header-only on purpose: every layer (compiler, engine, store, embedding runtime) states its
// invariants with it, and none of them should link a library for that. CMake's GOV_ASSERTIONS
// option (on in Debug and sanitizer builds, off in Release) defines GOV_ASSERTIONS=1 for every
// gov target; NDEBUG plays no part, so a RelWithDebInfo sanitizer build checks them too.
//
// User mistakes are diagnostics and environment failures are errors; GOV_ASSERT is only for
// what the code itself guarantees. A failure prints file:line, the function, the condition and
// the reason to stderr and aborts.

namespace gov {

/// Whether GOV_ASSERT conditions are evaluated in this translation unit's build.
constexpr bool assertions_enabled() noexcept {
#if defined(GOV_ASSERTIONS) && GOV_ASSERTIONS
  return true;
#else
  return false;
#endif
}

/// Reports a failed GOV_ASSERT and aborts; called only by the macro.
[[noreturn]] inline void assertion_failed(const char* condition, const char* why, const char* file,
                                          int line, const char* function) noexcept {
  std::fprintf(stderr, "%s:%d: %s: assertion `%s` failed: %s\n", file, line, function, condition,
               why);
  std::fflush(stderr);
  std::abort();
}

}  // namespace gov

#if defined(GOV_ASSERTIONS) && GOV_ASSERTIONS
/// Aborts with file:line, the condition and `why` (a string literal) when `cond` is false.
#define GOV_ASSERT(cond, why)                                                                  \
  (static_cast<bool>(cond) ? static_cast<void>(0)                                              \
                           : ::gov::assertion_failed(#cond, why, __FILE__, __LINE__, __func__))
#else
// Not evaluated, but still parsed and type-checked (and its variables count as used), so a
// check cannot rot in the builds that skip it.
#define GOV_ASSERT(cond, why) static_cast<void>(sizeof(static_cast<bool>(cond)))
#endif
