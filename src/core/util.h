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

/*
 * The name of an enum value in a table indexed by the value, other past the table's end or
 * at a hole in it: the one lookup behind the *_name() functions of the enums.
 */
static inline const char *eo_enum_name(const char *const *names, size_t n, int v, const char *other)
{
	return v >= 0 && (size_t)v < n && names[v] != NULL ? names[v] : other;
}

/* eo_enum_name over a table declared as an array (its length taken with sizeof). */
#define EO_ENUM_NAME(table, v, other)                                                              \
	eo_enum_name((table), sizeof(table) / sizeof((table)[0]), (int)(v), (other))

#endif
