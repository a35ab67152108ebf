/* GOV_API marks the functions and classes libgov exports. The library is built with
 * -fvisibility=hidden, so everything else in it (the compiler, the engine, LLVM glue) stays
 * private to it. C and C++. */
#ifndef GOV_EXPORT_H
#define GOV_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GOV_API __attribute__((visibility("default")))
#else
#define GOV_API
#endif

#endif /* GOV_EXPORT_H */
