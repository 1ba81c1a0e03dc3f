/*
 * Internal helpers of src/api for validation messages (eo__ prefix: shared
 * between files of src/api, not public).
 */
#ifndef EO_API_VALIDATE_H
#define EO_API_VALIDATE_H

#include <stddef.h>

/* Write a formatted message into msg (if non-NULL) and return -1. */
__attribute__((format(printf, 3, 4))) int eo__fail(char *msg, size_t n, const char *fmt, ...);

/* Empty msg (if non-NULL). */
void eo__clear(char *msg, size_t n);

#endif
