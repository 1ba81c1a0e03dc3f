/*
 * Fuzz target: the streaming LIST / watch decoder (src/kube/objstream.c), which the informers
 * run on every byte the API server sends.
 *
 * Input: byte 0 picks the mode (LIST or watch), whether managedFields are kept, and the
 * per-object cap; byte 1 the chunk size; the rest is the body.
 *
 * Invariants: the events (items, skips, envelopes, in order) and the result are the same
 * whether the body arrives whole or in chunks; every item is a JSON object without
 * metadata.managedFields unless kept; a skip says ETOOLARGE or EPROTOCOL with a terminated
 * identity; no error other than EPROTOCOL, ETOOLARGE (the envelope cap) or ENOMEM; LIST mode
 * ends with at most one envelope.
 */
#include <jansson.h>

#include "kube/objstream.h"

#include "fuzz.h"

struct log {
	char *text;
	size_t len, cap;
	int ends;
	bool keep_all;
};

static void put(struct log *l, const char *s, size_t n)
{
	if (l->len + n + 1 > l->cap) {
		size_t ncap = (l->len + n + 1) * 2;
		char *p = realloc(l->text, ncap);

		if (!p)
			abort();
		l->text = p;
		l->cap = ncap;
	}
	memcpy(l->text + l->len, s, n);
	l->len += n;
	l->text[l->len] = '\0';
}

static int cb(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct log *l = ud;
	char *dump;

	switch (ev->type) {
	case EO_KUBE_OS_ITEM:
	case EO_KUBE_OS_END:
		FUZZ_CHECK(json_is_object(ev->obj), "event %d without an object", (int)ev->type);
		if (ev->type == EO_KUBE_OS_ITEM && !l->keep_all)
			FUZZ_CHECK(
			    !json_object_get(json_object_get(ev->obj, "metadata"), "managedFields"),
			    "managedFields kept");
		if (ev->type == EO_KUBE_OS_END)
			l->ends++;
		dump = json_dumps(ev->obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		put(l, ev->type == EO_KUBE_OS_ITEM ? "I" : "E", 1);
		if (dump)
			put(l, dump, strlen(dump));
		free(dump);
		break;
	case EO_KUBE_OS_SKIP:
		FUZZ_CHECK(ev->why == EO_KUBE_ETOOLARGE || ev->why == EO_KUBE_EPROTOCOL, "why %d",
			   (int)ev->why);
		FUZZ_CHECK(memchr(ev->ref->name, '\0', sizeof(ev->ref->name)) &&
			       memchr(ev->ref->ns, '\0', sizeof(ev->ref->ns)) &&
			       memchr(ev->ref->uid, '\0', sizeof(ev->ref->uid)) &&
			       memchr(ev->ref->rv, '\0', sizeof(ev->ref->rv)),
			   "identity not terminated");
		put(l, "S", 1);
		put(l, ev->ref->name, strlen(ev->ref->name));
		put(l, ev->why == EO_KUBE_ETOOLARGE ? "+" : "-", 1);
		break;
	case EO_KUBE_OS_RESTART:
		FUZZ_CHECK(false, "restart from the decoder");
		break;
	}
	put(l, "\n", 1);
	return 0;
}

static eo_kube_err run(const struct eo_kube_objstream_opts *base, const uint8_t *p, size_t n,
		       size_t chunk, struct log *l)
{
	struct eo_kube_objstream_opts o = *base;
	eo_kube_objstream *s;
	struct eo_kube_error err;
	eo_kube_err rc = EO_KUBE_OK;

	o.cb = cb;
	o.ud = l;
	l->keep_all = o.keep_all;
	s = eo_kube_objstream_new(&o);
	if (!s)
		abort();
	for (size_t off = 0; off < n && rc == EO_KUBE_OK; off += chunk)
		rc = eo_kube_objstream_feed(s, (const char *)p + off,
					    n - off < chunk ? n - off : chunk, &err);
	if (rc == EO_KUBE_OK)
		rc = eo_kube_objstream_finish(s, &err);
	else
		FUZZ_CHECK(rc == EO_KUBE_EPROTOCOL || rc == EO_KUBE_ETOOLARGE ||
			       rc == EO_KUBE_ENOMEM,
			   "feed gave %d", (int)rc);
	if (rc != EO_KUBE_OK)
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL,
			   "message not terminated");
	eo_kube_objstream_free(s);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t caps[] = {0, 64, 512, 4096};
	struct eo_kube_objstream_opts o = {0};
	struct log whole = {0}, chunked = {0};
	eo_kube_err a, b;
	size_t chunk;

	if (size < 2)
		return 0;
	o.mode = data[0] & 1 ? EO_KUBE_OBJSTREAM_WATCH : EO_KUBE_OBJSTREAM_LIST;
	o.keep_all = (data[0] & 2) != 0;
	o.max_object = caps[(data[0] >> 2) & 3];
	o.max_envelope = data[0] & 16 ? 256 : 0;
	chunk = (size_t)data[1] % 17 + 1;
	data += 2;
	size -= 2;

	a = run(&o, data, size, size ? size : 1, &whole);
	b = run(&o, data, size, chunk, &chunked);
	FUZZ_CHECK(a == b, "whole gave %d, chunks of %zu gave %d", (int)a, chunk, (int)b);
	FUZZ_CHECK((whole.text == NULL && chunked.text == NULL) ||
		       (whole.text && chunked.text && strcmp(whole.text, chunked.text) == 0),
		   "events differ with chunks of %zu", chunk);
	if (o.mode == EO_KUBE_OBJSTREAM_LIST)
		FUZZ_CHECK(whole.ends <= 1, "%d envelopes in a LIST", whole.ends);
	free(whole.text);
	free(chunked.text);
	return 0;
}
