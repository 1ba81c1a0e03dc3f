/*
 * core/json.c - see json.h.
 */
#include "core/json.h"

#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"

static int to_strbuf(const char *buf, size_t size, void *ud)
{
	struct eo_strbuf *b = ud;

	eo_strbuf_add_n(b, buf, size);
	return b->failed ? -1 : 0;
}

char *eo_json_dumps(const json_t *j, size_t flags, size_t *len)
{
	struct eo_strbuf b = EO_STRBUF_INIT(EO_JSON_DUMP_MAX);

	if (j == NULL || json_dump_callback(j, to_strbuf, &b, flags) != 0) {
		eo_strbuf_free(&b);
		return NULL;
	}
	return eo_strbuf_take(&b, len);
}

json_t *eo_json_named(const json_t *array, const char *name)
{
	json_t *e = NULL;
	size_t i;

	json_array_foreach(array, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));

		if (n != NULL && strcmp(n, name) == 0)
			return e;
	}
	return NULL;
}
