#include "core/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eo_strbuf_add_n(struct eo_strbuf *b, const char *s, size_t n)
{
	size_t need, ncap;
	char *np;

	if (b->failed)
		return;
	if (n >= b->max || b->len >= b->max - n) {
		b->failed = true;
		return;
	}
	need = b->len + n + 1;
	if (need > b->cap) {
		ncap = b->cap ? b->cap : 128;
		while (ncap < need)
			ncap *= 2;
		if (ncap > b->max)
			ncap = b->max;
		np = realloc(b->p, ncap);
		if (!np) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void eo_strbuf_add(struct eo_strbuf *b, const char *s)
{
	eo_strbuf_add_n(b, s, strlen(s));
}

char *eo_strbuf_take(struct eo_strbuf *b, size_t *len)
{
	char *p = NULL;

	if (!b->failed) {
		if (!b->p)
			eo_strbuf_add_n(b, "", 0);
		if (!b->failed) {
			p = b->p;
			b->p = NULL;
			if (len)
				*len = b->len;
		}
	}
	eo_strbuf_free(b);
	return p;
}

void eo_strbuf_free(struct eo_strbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = 0;
	b->cap = 0;
}

void eo_last_line(const char *text, char *out, size_t cap)
{
	const char *end, *start;
	size_t len;

	if (cap == 0)
		return;
	out[0] = '\0';
	if (text == NULL)
		return;
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	len = (size_t)(end - start);
	if (len >= cap)
		len = cap - 1;
	memcpy(out, start, len);
	out[len] = '\0';
}

void eo_set_err(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (!err || cap == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
}

size_t eo_capbuf_append(struct eo_capbuf *b, const char *data, size_t n)
{
	if (n > b->max - b->len) {
		b->overflow = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 16384;
		char *np;

		while (ncap < b->len + n + 1)
			ncap *= 2;
		if (ncap - 1 > b->max) /* not "max + 1": max may be SIZE_MAX */
			ncap = b->max + 1;
		np = realloc(b->data, ncap);
		if (np == NULL)
			return 0;
		b->data = np;
		b->cap = ncap;
	}
	memcpy(b->data + b->len, data, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}
