/*
 * Fuzz target: the watch stream decoder (src/kube/watch.c) and the Status parser (err.c).
 *
 * Input: byte 0 picks the chunk size the stream arrives in, byte 1 the line cap; the rest is
 * the stream. It is fed to eo_kube_linebuf_feed in chunks, and every line goes through
 * eo_kube_watch_parse_event (and eo_kube_watch_error for ERROR events) and eo_kube_status_parse.
 *
 * Invariants: the lines delivered are exactly the non-empty '\n'-separated lines of the stream
 * with one trailing '\r' dropped, whatever the chunking; ETOOLARGE comes exactly when a line
 * grows past the cap; a parsed event has a known type and an object; an ERROR event never maps
 * to success.
 */
#include <jansson.h>

#include "kube/err.h"
#include "kube/watch.h"

#include "fuzz.h"

struct seen {
	const char *stream; /* the whole stream, to compare lines against */
	size_t n, pos;	    /* where the next expected line starts */
	size_t max;
	size_t lines;
};

/* The next non-empty line of the stream after pos, as the splitter should deliver it. */
static bool next_line(struct seen *s, size_t *start, size_t *len)
{
	while (s->pos < s->n) {
		const char *nl = memchr(s->stream + s->pos, '\n', s->n - s->pos);
		size_t b = s->pos, e;

		if (nl == NULL)
			return false; /* the partial last line is never delivered */
		e = (size_t)(nl - s->stream);
		s->pos = e + 1;
		if (e > b && s->stream[e - 1] == '\r')
			e--;
		if (e > b) {
			*start = b;
			*len = e - b;
			return true;
		}
	}
	return false;
}

static void check_event(const char *line, size_t len)
{
	enum eo_kube_watch_type type = EO_KUBE_WATCH_ADDED;
	struct eo_kube_error err;
	json_t *obj = NULL;
	eo_kube_err rc;

	rc = eo_kube_watch_parse_event(line, len, &type, &obj, &err);
	if (rc != EO_KUBE_OK) {
		FUZZ_CHECK(rc == EO_KUBE_EPROTOCOL, "parse_event gave %d", (int)rc);
		FUZZ_CHECK(obj == NULL, "failed parse left an object");
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL,
			   "message not terminated");
	} else {
		FUZZ_CHECK(obj != NULL && json_is_object(obj), "event without object");
		FUZZ_CHECK(type <= EO_KUBE_WATCH_ERROR, "type %d", (int)type);
		FUZZ_CHECK(strcmp(eo_kube_watch_type_name(type), "UNKNOWN") != 0, "unnamed type");
		if (type == EO_KUBE_WATCH_ERROR)
			FUZZ_CHECK(eo_kube_watch_error(obj, &err) != EO_KUBE_OK,
				   "ERROR event mapped to OK");
		json_decref(obj);
	}
	/* The same bytes as the body of a failed request. */
	rc = eo_kube_status_parse(422, line, len, &err);
	FUZZ_CHECK(rc != EO_KUBE_OK, "a 422 mapped to OK");
	FUZZ_CHECK(memchr(err.reason, '\0', sizeof(err.reason)) != NULL, "reason not terminated");
}

static int on_line(void *ud, char *line, size_t len)
{
	struct seen *s = ud;
	size_t start = 0, want = 0;

	FUZZ_CHECK(next_line(s, &start, &want), "line %zu delivered but not in the stream",
		   s->lines);
	FUZZ_CHECK(len == want && memcmp(line, s->stream + start, len) == 0,
		   "line %zu differs (%zu bytes, want %zu)", s->lines, len, want);
	FUZZ_CHECK(line[len] == '\0', "line not NUL-terminated");
	FUZZ_CHECK(len <= s->max, "line of %zu bytes over the cap %zu", len, s->max);
	s->lines++;
	check_event(line, len);
	return 0;
}

/* True when some line (counting its '\r', not its '\n') is longer than max. */
static bool first_oversized(const char *p, size_t n, size_t max, size_t *complete_before)
{
	size_t b = 0, lines = 0;

	while (b <= n) {
		const char *nl = b < n ? memchr(p + b, '\n', n - b) : NULL;
		size_t e = nl ? (size_t)(nl - p) : n;

		if (e - b > max) {
			*complete_before = lines;
			return true;
		}
		if (!nl)
			break;
		if (e > b && !(e - b == 1 && p[b] == '\r'))
			lines++;
		b = e + 1;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eo_kube_linebuf lb;
	struct seen s = {0};
	size_t chunk, max, off = 0, before = 0;
	bool too_large;
	eo_kube_err rc = EO_KUBE_OK;

	if (size < 2)
		return 0;
	chunk = (size_t)data[0] + 1;
	max = data[1] == 0 ? (size_t)1 << 20 : (size_t)data[1] * 8;
	data += 2;
	size -= 2;
	s.stream = (const char *)data;
	s.n = size;
	s.max = max;
	too_large = first_oversized(s.stream, size, max, &before);

	eo_kube_linebuf_init(&lb, max);
	while (off < size && rc == EO_KUBE_OK) {
		size_t take = size - off < chunk ? size - off : chunk;

		rc = eo_kube_linebuf_feed(&lb, s.stream + off, take, on_line, &s);
		off += take;
	}
	eo_kube_linebuf_free(&lb);
	if (too_large) {
		FUZZ_CHECK(rc == EO_KUBE_ETOOLARGE, "oversized line accepted (rc %d)", (int)rc);
		FUZZ_CHECK(s.lines == before, "%zu lines before the oversized one, want %zu",
			   s.lines, before);
	} else {
		size_t a, b;

		FUZZ_CHECK(rc == EO_KUBE_OK, "feed failed with %d", (int)rc);
		FUZZ_CHECK(!next_line(&s, &a, &b), "a complete line was not delivered");
	}
	return 0;
}
