/*
 * plugin/render.h - kubectl-etcd's output: tables, JSON and YAML (pure: no I/O).
 *
 * Every command builds one JSON document (a jansson object) that is its result. With -o json
 * it is printed indented; with -o yaml it goes through libyaml's emitter; with the default
 * table format the rows under one key of the document become a column-aligned table (or, for
 * commands that do one thing, a sentence built by the command).
 *
 * Each renderer appends to a struct eo_strbuf; a buffer left failed (out of memory, over its
 * cap) means the output is incomplete.
 */
#ifndef EO_PLUGIN_RENDER_H
#define EO_PLUGIN_RENDER_H

#include <stddef.h>

#include <jansson.h>

#include "core/strbuf.h"

/* Caps: one table cell, and the widest column we pad to. */
#define EO_PLUGIN_CELL_MAX 512
#define EO_PLUGIN_COLS_MAX 16

/* A column: its header and the key of the row object it shows. */
struct eo_plugin_col {
	const char *header;
	const char *key;
};

/*
 * The text of one cell: a string as is, an integer in decimal, a real with up to 6 significant
 * digits, true/false, null or absent as "-", an array as its cells joined by ",". Writes at
 * most cap bytes including the NUL (truncating). Returns out.
 */
char *eo_plugin_cell(const json_t *v, char *out, size_t cap);

/*
 * A table: a header line of the columns' headers, then one line per element of rows (an array
 * of objects), columns separated by three spaces and padded to the widest cell; the last
 * column is not padded. No rows gives the header alone. 0, or -1 on bad arguments.
 */
int eo_plugin_render_table(const json_t *rows, const struct eo_plugin_col *cols, size_t ncols,
			   struct eo_strbuf *out);

/* The document as indented JSON with a final newline. 0 or -1. */
int eo_plugin_render_json(const json_t *doc, struct eo_strbuf *out);

/*
 * The document as a YAML block document (libyaml emitter): objects as mappings in their key
 * order, arrays as sequences, strings quoted where YAML would otherwise read them as something
 * else (numbers, booleans, null), integers, reals, booleans and null as plain scalars. 0 or -1.
 */
int eo_plugin_render_yaml(const json_t *doc, struct eo_strbuf *out);

/* Byte count as etcdctl shows it: "20 kB", "1.2 MB" (SI units, like etcdctl's humanize). */
char *eo_plugin_bytes(int64_t n, char *out, size_t cap);

/* A snapshot's progress line: "snapshot of M: 12 MB, 4.1 MB/s" (the rate over elapsed_ms; "-"
 * before the first millisecond). Returns out. */
char *eo_plugin_progress(const char *member, int64_t bytes, int64_t elapsed_ms, char *out,
			 size_t cap);

#endif
