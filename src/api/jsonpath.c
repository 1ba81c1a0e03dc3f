#include "api/jsonpath.h"

#include <string.h>

#define SEGMENT_MAX 128

/*
 * Copy the next segment of *path into seg and advance *path past it and its dot.
 * Returns false at the end of the path or for a segment that does not fit.
 */
static bool next_segment(const char **path, char seg[SEGMENT_MAX])
{
	const char *p = *path;
	const char *dot = NULL;
	size_t len = 0;

	if (p == NULL || *p == '\0')
		return false;
	dot = strchr(p, '.');
	len = dot ? (size_t)(dot - p) : strlen(p);
	if (len == 0 || len >= SEGMENT_MAX)
		return false;
	memcpy(seg, p, len);
	seg[len] = '\0';
	*path = dot ? dot + 1 : p + len;
	return true;
}

json_t *eo__json_at(const json_t *root, const char *path)
{
	char seg[SEGMENT_MAX];
	json_t *cur = (json_t *)root;

	if (root == NULL || path == NULL)
		return NULL;
	while (next_segment(&path, seg)) {
		if (!json_is_object(cur))
			return NULL;
		cur = json_object_get(cur, seg);
		if (cur == NULL)
			return NULL;
	}
	return cur;
}

json_t *eo__json_object_at(const json_t *root, const char *path)
{
	json_t *v = eo__json_at(root, path);

	return json_is_object(v) ? v : NULL;
}

const char *eo__json_str_at(const json_t *root, const char *path)
{
	return json_string_value(eo__json_at(root, path));
}

bool eo__json_int_at(const json_t *root, const char *path, int64_t *out)
{
	json_t *v = eo__json_at(root, path);

	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

bool eo__json_bool_at(const json_t *root, const char *path, bool def)
{
	json_t *v = eo__json_at(root, path);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

bool eo__json_has(const json_t *root, const char *path)
{
	return eo__json_at(root, path) != NULL;
}

json_t *eo__json_ensure_object(json_t *root, const char *path)
{
	char seg[SEGMENT_MAX];
	json_t *cur = root;

	if (!json_is_object(root) || path == NULL)
		return NULL;
	while (next_segment(&path, seg)) {
		json_t *next = json_object_get(cur, seg);

		if (next == NULL) {
			next = json_object();
			if (next == NULL || json_object_set_new(cur, seg, next) != 0)
				return NULL;
		} else if (!json_is_object(next)) {
			return NULL;
		}
		cur = next;
	}
	return cur;
}

int eo__phase_of(const json_t *obj, const struct eo__phase_name *t, size_t n, int none, int unknown)
{
	const char *s = eo__json_str_at(obj, "status.phase");

	if (s == NULL || s[0] == '\0')
		return none;
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, t[i].name) == 0)
			return t[i].phase;
	return unknown;
}

const char *eo__phase_text(const struct eo__phase_name *t, size_t n, int phase)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].phase == phase)
			return t[i].name;
	return NULL;
}
