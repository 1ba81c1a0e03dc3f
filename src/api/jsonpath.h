/*
 * Internal helpers of src/api: read values out of jansson trees by a dotted path
 * ("spec.storage.size"). Path segments cannot contain dots; that is enough for
 * the fixed field names of our CRDs. Every returned pointer is borrowed from the
 * tree and valid as long as the tree is not modified or freed.
 *
 * Names use the eo__ prefix: they are shared between files of src/api and are
 * not part of its public API.
 */
#ifndef EO_API_JSONPATH_H
#define EO_API_JSONPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The value at path, or NULL when any segment is missing or not an object. */
json_t *eo__json_at(const json_t *root, const char *path);

/* The object at path, or NULL when absent or not an object. */
json_t *eo__json_object_at(const json_t *root, const char *path);

/* The string at path, or NULL when absent or not a string. */
const char *eo__json_str_at(const json_t *root, const char *path);

/* True and *out set when path holds an integer; false otherwise. */
bool eo__json_int_at(const json_t *root, const char *path, int64_t *out);

/* The boolean at path, or def when absent or not a boolean. */
bool eo__json_bool_at(const json_t *root, const char *path, bool def);

/* A status.phase text and its enum value: one row of a kind's phase table. */
struct eo__phase_name {
	int phase;
	const char *name;
};

/* The value of obj's status.phase in t[0..n): none when absent or "", unknown when unlisted. */
int eo__phase_of(const json_t *obj, const struct eo__phase_name *t, size_t n, int none,
		 int unknown);

/* The text of phase in t[0..n), or NULL. */
const char *eo__phase_text(const struct eo__phase_name *t, size_t n, int phase);

/* True when path exists (any type, including null). */
bool eo__json_has(const json_t *root, const char *path);

/*
 * Get or create the object at path inside root, creating missing intermediate
 * objects. Returns a borrowed pointer, or NULL on allocation failure or when an
 * existing segment is not an object.
 */
json_t *eo__json_ensure_object(json_t *root, const char *path);

#endif
