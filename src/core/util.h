/*
 * core/util.h - small helpers shared by every layer.
 */
#ifndef EO_CORE_UTIL_H
#define EO_CORE_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* True when s is a non-empty string (NULL and "" are absent). */
static inline bool eo_present(const char *s)
{
	return s != NULL && s[0] != '\0';
}

#endif
