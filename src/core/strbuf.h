/*
 * A growing string with a hard size cap, for text the operator builds itself
 * (URLs, query strings, metrics pages).
 *
 * Appending never fails loudly: an allocation failure or an append that would
 * pass the cap marks the buffer failed, later appends are ignored, and
 * eo_strbuf_take() reports the failure by returning NULL. Callers build the
 * whole string and check once at the end.
 */
#ifndef EO_CORE_STRBUF_H
#define EO_CORE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct eo_strbuf {
	char *p;     /* owned; NUL-terminated once anything was appended */
	size_t len;  /* bytes used, without the NUL */
	size_t cap;  /* bytes allocated */
	size_t max;  /* the cap: len + 1 never exceeds it */
	bool failed; /* out of memory or over the cap */
};

/* An empty buffer that may grow to max bytes including the terminating NUL. */
#define EO_STRBUF_INIT(max_bytes)                                                                  \
	{                                                                                          \
		NULL, 0, 0, (max_bytes), false                                                     \
	}

void eo_strbuf_add_n(struct eo_strbuf *b, const char *s, size_t n);
void eo_strbuf_add(struct eo_strbuf *b, const char *s);

/*
 * Hands the string to the caller (free() it) and stores its length in *len
 * when len is not NULL. Returns NULL if the buffer failed. Either way the
 * buffer is left empty and owns nothing.
 */
char *eo_strbuf_take(struct eo_strbuf *b, size_t *len);

/* Releases the buffer's memory; the buffer is left empty. */
void eo_strbuf_free(struct eo_strbuf *b);

/*
 * A response body as a transfer's write callback receives it, with a hard cap: the body of an
 * etcd or Kubernetes API answer. Start it zeroed with max set (cap may be preallocated).
 */
struct eo_capbuf {
	char *data;    /* owned; NUL-terminated once anything was appended */
	size_t len;    /* bytes received, without the NUL */
	size_t cap;    /* bytes allocated */
	size_t max;    /* the cap on len */
	bool overflow; /* an append would have passed max */
};

/*
 * Appends n bytes: returns n, or 0 when they would pass max (overflow is set) or memory runs
 * out. 0 is what a libcurl write callback returns to abort the transfer.
 */
size_t eo_capbuf_append(struct eo_capbuf *b, const char *data, size_t n);

/*
 * The last non-empty line of text (a termination message, a log tail) copied into out, cut
 * to cap - 1 bytes; trailing blanks and line ends dropped. out is "" for NULL or blank text.
 */
void eo_last_line(const char *text, char *out, size_t cap);

/* Formats into err (capacity cap); nothing when err is NULL or cap is 0. */
void eo_set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Formats into a char array (an array, not a pointer: its size is taken with sizeof), cutting a
 * long text short: the one message formatter of the planners (their msgf and say).
 */
#define EO_FMT(array, ...) eo_set_err((array), sizeof(array), __VA_ARGS__)

#endif
