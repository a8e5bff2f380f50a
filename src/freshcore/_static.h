/* FRESHCORE_STATIC: file-local linkage for the definitions in freshcore's C headers.
 *
 * Each header is included into every compiled module that cimports it, and a module rarely uses all of a
 * header: `static` keeps one private copy per module, and on GCC and Clang `__attribute__((unused))`
 * keeps the unused ones from warning.  Other compilers (MSVC) get plain `static`.
 */
#ifndef FRESHCORE_STATIC_H
#define FRESHCORE_STATIC_H

#if defined(__GNUC__) || defined(__clang__)
#define FRESHCORE_STATIC static __attribute__((unused))
#else
#define FRESHCORE_STATIC static
#endif

#endif /* FRESHCORE_STATIC_H */
