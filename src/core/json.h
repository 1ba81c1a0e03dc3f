/*
 * core/json.h - JSON text out of a jansson tree, safe under memory pressure.
 *
 * jansson 2.14's json_dumps() ignores a failed write of an object key
 * (akheron/jansson#655): when that one allocation fails, it goes on and
 * returns text that is not JSON ({"a":"b",":"c"}) instead of NULL. Here the
 * text goes into a capped eo_strbuf whose failure is sticky, so the write
 * after the lost key fails too and the whole dump returns NULL.
 */
#ifndef EO_CORE_JSON_H
#define EO_CORE_JSON_H

#include <stddef.h>

#include <jansson.h>

/* Cap on one encoded document. */
#define EO_JSON_DUMP_MAX ((size_t)256 << 20)

/*
 * Encodes j with jansson's flags (JSON_COMPACT, ...). Returns a malloc'd
 * NUL-terminated string (the caller frees it) and its length in *len when len
 * is not NULL, or NULL when out of memory, over EO_JSON_DUMP_MAX, or j is not
 * encodable.
 */
char *eo_json_dumps(const json_t *j, size_t flags, size_t *len);

/*
 * The first element of array whose "name" is name (a container, a volume, a mount, a port of
 * an object), or NULL; NULL too when array is not an array.
 */
json_t *eo_json_named(const json_t *array, const char *name);

#endif
