/* kubectl-etcd's output: tables, JSON and YAML (plugin/render.h). */
#include "plugin/render.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "core/json.h"

char *eo_plugin_cell(const json_t *v, char *out, size_t cap)
{
	size_t i, len;

	if (cap == 0)
		return out;
	out[0] = '\0';
	if (!v || json_is_null(v)) {
		snprintf(out, cap, "-");
	} else if (json_is_string(v)) {
		snprintf(out, cap, "%s", json_string_value(v));
	} else if (json_is_integer(v)) {
		snprintf(out, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_real(v)) {
		snprintf(out, cap, "%.6g", json_real_value(v));
	} else if (json_is_boolean(v)) {
		snprintf(out, cap, "%s", json_is_true(v) ? "true" : "false");
	} else if (json_is_array(v)) {
		if (json_array_size(v) == 0) {
			snprintf(out, cap, "-");
			return out;
		}
		for (i = 0; i < json_array_size(v); i++) {
			char one[EO_PLUGIN_CELL_MAX];

			len = strlen(out);
			eo_plugin_cell(json_array_get(v, i), one, sizeof(one));
			snprintf(out + len, cap - len, "%s%s", i ? "," : "", one);
		}
	} else {
		snprintf(out, cap, "{...}");
	}
	return out;
}

static void pad(struct eo_strbuf *out, size_t n)
{
	static const char spaces[] = "                                ";

	while (n > 0) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		eo_strbuf_add_n(out, spaces, k);
		n -= k;
	}
}

int eo_plugin_render_table(const json_t *rows, const struct eo_plugin_col *cols, size_t ncols,
			   struct eo_strbuf *out)
{
	size_t width[EO_PLUGIN_COLS_MAX], r, c;
	char cell[EO_PLUGIN_CELL_MAX];

	if (!json_is_array(rows) || ncols == 0 || ncols > EO_PLUGIN_COLS_MAX)
		return -1;
	for (c = 0; c < ncols; c++)
		width[c] = strlen(cols[c].header);
	for (r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r);

		for (c = 0; c < ncols; c++) {
			eo_plugin_cell(json_object_get(row, cols[c].key), cell, sizeof(cell));
			if (strlen(cell) > width[c])
				width[c] = strlen(cell);
		}
	}
	for (r = 0; r <= json_array_size(rows); r++) {
		const json_t *row = r ? json_array_get(rows, r - 1) : NULL;

		for (c = 0; c < ncols; c++) {
			const char *s = cell;

			if (!row)
				s = cols[c].header;
			else
				eo_plugin_cell(json_object_get(row, cols[c].key), cell,
					       sizeof(cell));
			eo_strbuf_add(out, s);
			if (c + 1 < ncols)
				pad(out, width[c] - strlen(s) + 3);
		}
		eo_strbuf_add(out, "\n");
	}
	return out->failed ? -1 : 0;
}

int eo_plugin_render_json(const json_t *doc, struct eo_strbuf *out)
{
	size_t len = 0;
	char *s = eo_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER, &len);

	if (!s)
		return -1;
	eo_strbuf_add_n(out, s, len);
	eo_strbuf_add(out, "\n");
	free(s);
	return out->failed ? -1 : 0;
}

static int yaml_out(void *ud, unsigned char *buf, size_t size)
{
	struct eo_strbuf *out = ud;

	eo_strbuf_add_n(out, (const char *)buf, size);
	return out->failed ? 0 : 1;
}

/* Whether a plain YAML scalar s would read back as something other than the string s. */
static bool needs_quotes(const char *s)
{
	static const char *const words[] = {
	    "true", "false", "True", "False", "TRUE", "FALSE", "yes",  "no",   "Yes",  "No",
	    "YES",  "NO",    "on",   "off",   "On",   "Off",   "ON",   "OFF",  "null", "Null",
	    "NULL", "~",     "y",    "n",     "Y",    "N",     ".inf", ".nan", "-.inf"};
	size_t i;
	char *end = NULL;

	if (!s[0])
		return true;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(s, words[i]) == 0)
			return true;
	(void)strtod(s, &end);
	if (end && *end == '\0')
		return true; /* a number */
	/* 0x.., 0o.., and anything libyaml would have to quote anyway is left to it */
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'o');
}

static int emit(yaml_emitter_t *em, const json_t *v)
{
	yaml_event_t ev;
	char buf[64];
	const char *key;
	json_t *val;
	size_t i;
	const char *s = NULL;
	yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
	int ok;

	if (json_is_object(v)) {
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		json_object_foreach((json_t *)v, key, val)
		{
			if (!yaml_scalar_event_initialize(
				&ev, NULL, NULL, (yaml_char_t *)key, -1, 1, 1,
				needs_quotes(key) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
						  : YAML_ANY_SCALAR_STYLE) ||
			    !yaml_emitter_emit(em, &ev) || emit(em, val) != 0)
				return -1;
		}
		return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0
											    : -1;
	}
	if (json_is_array(v)) {
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  json_array_size(v)
							      ? YAML_BLOCK_SEQUENCE_STYLE
							      : YAML_FLOW_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(em, &ev))
			return -1;
		for (i = 0; i < json_array_size(v); i++)
			if (emit(em, json_array_get(v, i)) != 0)
				return -1;
		return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev) ? 0
											     : -1;
	}
	if (json_is_string(v)) {
		s = json_string_value(v);
		style = needs_quotes(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
	} else if (json_is_integer(v)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		s = buf;
	} else if (json_is_real(v)) {
		snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
		s = buf;
	} else if (json_is_boolean(v)) {
		s = json_is_true(v) ? "true" : "false";
	} else {
		s = "null";
	}
	ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, -1, 1, 1, style) &&
	     yaml_emitter_emit(em, &ev);
	return ok ? 0 : -1;
}

int eo_plugin_render_yaml(const json_t *doc, struct eo_strbuf *out)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int rc = -1;

	if (!doc || !yaml_emitter_initialize(&em))
		return -1;
	yaml_emitter_set_output(&em, yaml_out, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
	    !yaml_emitter_emit(&em, &ev))
		goto out;
	if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
	    !yaml_emitter_emit(&em, &ev))
		goto out;
	if (emit(&em, doc) != 0)
		goto out;
	if (!yaml_document_end_event_initialize(&ev, 1) || !yaml_emitter_emit(&em, &ev))
		goto out;
	if (!yaml_stream_end_event_initialize(&ev) || !yaml_emitter_emit(&em, &ev))
		goto out;
	rc = out->failed ? -1 : 0;
out:
	yaml_emitter_delete(&em);
	return rc;
}

char *eo_plugin_bytes(int64_t n, char *out, size_t cap)
{
	static const char *const units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	double v = (double)n;
	size_t u = 0;

	if (n < 1000) {
		snprintf(out, cap, "%" PRId64 " B", n);
		return out;
	}
	while (v >= 1000 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1000;
		u++;
	}
	snprintf(out, cap, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
	return out;
}

char *eo_plugin_progress(const char *member, int64_t bytes, int64_t elapsed_ms, char *out,
			 size_t cap)
{
	char size[32], rate[32] = "-";

	eo_plugin_bytes(bytes, size, sizeof(size));
	if (elapsed_ms > 0) {
		eo_plugin_bytes((int64_t)((double)bytes * 1000.0 / (double)elapsed_ms), rate,
				sizeof(rate));
		snprintf(rate + strlen(rate), sizeof(rate) - strlen(rate), "/s");
	}
	snprintf(out, cap, "snapshot of %s: %s, %s", member, size, rate);
	return out;
}
