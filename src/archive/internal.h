/*
 * archive/internal.h - what the files of the archive module (segment.c, manifest.c)
 * share. Not an API: only src/archive includes it (the eo__ prefix: shared inside one
 * module).
 */
#ifndef EO_ARCHIVE_INTERNAL_H
#define EO_ARCHIVE_INTERNAL_H

#include <stddef.h>

/*
 * Writes the formatted message into err[cap] (when err is not NULL and cap > 0) and
 * returns rc: `return eo__archive_fail(EO_ARCHIVE_EINVAL, err, cap, "...", ...);`.
 * Defined in segment.c.
 */
int eo__archive_fail(int rc, char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
