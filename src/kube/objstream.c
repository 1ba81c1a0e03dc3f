/*
 * kube/objstream.c - a byte-at-a-time scanner that cuts items out of LIST and watch bodies.
 *
 * State: the depth of open containers, whether we are inside a string, and for the first
 * TRACK levels a frame with the container's type, where it is in its grammar (expecting a
 * key, a colon, a value...) and the key whose value is being read. Deeper levels are only
 * counted: items are decoded (and so validated) by jansson, the scanner only has to know
 * where they begin and end. Whitespace outside strings is not copied.
 */
#include "kube/objstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACK	 6   /* tracked container levels: LIST top, items, item, metadata, annotations */
#define KEY_MAX	 128 /* tracked keys longer than this never match a key we look for */
#define KEEP_BUF (64u << 10) /* item buffer capacity kept between items */

enum st {
	EXPECT_KEY,
	EXPECT_COLON,
	EXPECT_VALUE,
	IN_VALUE,  /* a string or container value is open */
	IN_SCALAR, /* a number / true / false / null is being read */
	AFTER_VALUE,
};

struct frame {
	bool obj;
	enum st st;
	char key[KEY_MAX + 1];
	size_t klen;
};

struct buf {
	char *p;
	size_t len, cap;
};

struct eo_kube_objstream {
	struct eo_kube_objstream_opts o;
	size_t depth;
	struct frame fr[TRACK + 1]; /* fr[0] is the top level (between values) */
	bool in_str, esc;
	char *cap_dst; /* capture of a string being read (key or metadata value) */
	size_t cap_max, cap_len;

	size_t items_depth; /* LIST: depth of the "items" array once open, else 0 */
	bool item;	    /* inside an item */
	size_t item_parent; /* depth of the container holding the item */
	bool item_over;
	size_t item_size;
	struct buf ib, env;
	struct eo_kube_objref ref;

	bool dropping;
	size_t drop_parent;
	int tops; /* completed top-level values */

	eo_kube_err failed;
	char fail_msg[160];
};

eo_kube_objstream *eo_kube_objstream_new(const struct eo_kube_objstream_opts *opts)
{
	eo_kube_objstream *s;

	if (!opts || !opts->cb)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->o = *opts;
	if (!s->o.max_object)
		s->o.max_object = EO_KUBE_OBJECT_MAX;
	if (!s->o.max_envelope)
		s->o.max_envelope = EO_KUBE_ENVELOPE_MAX;
	s->fr[0].st = EXPECT_VALUE;
	return s;
}

void eo_kube_objstream_free(eo_kube_objstream *s)
{
	if (!s)
		return;
	free(s->ib.p);
	free(s->env.p);
	free(s);
}

static int fail(eo_kube_objstream *s, eo_kube_err e, const char *msg)
{
	if (s->failed == EO_KUBE_OK) {
		s->failed = e;
		snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", msg);
	}
	return -1;
}

static int buf_put(struct buf *b, char ch, size_t max)
{
	if (b->len + 1 >= b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 1024;
		char *np;

		if (ncap > max + 1)
			ncap = max + 1;
		if (b->len + 1 >= ncap)
			return 1; /* over the cap */
		np = realloc(b->p, ncap);
		if (!np)
			return -1;
		b->p = np;
		b->cap = ncap;
	}
	b->p[b->len++] = ch;
	b->p[b->len] = '\0';
	return 0;
}

static int emit_env(eo_kube_objstream *s, const char *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r = buf_put(&s->env, t[i], s->o.max_envelope);

		if (r > 0)
			return fail(s, EO_KUBE_ETOOLARGE, "response envelope exceeds its cap");
		if (r < 0)
			return fail(s, EO_KUBE_ENOMEM, "response envelope");
	}
	return 0;
}

static int emit_item(eo_kube_objstream *s, const char *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int r;

		s->item_size++;
		if (s->item_over)
			continue;
		r = buf_put(&s->ib, t[i], s->o.max_object);
		if (r > 0) {
			s->item_over = true; /* keep scanning; stop buffering */
			free(s->ib.p);
			s->ib = (struct buf){0};
		} else if (r < 0) {
			return fail(s, EO_KUBE_ENOMEM, "item buffer");
		}
	}
	return 0;
}

/* Routes a byte of structure or string: to the item, nowhere, or the envelope. */
static int emit(eo_kube_objstream *s, char ch)
{
	if (s->dropping)
		return 0;
	if (s->item)
		return emit_item(s, &ch, 1);
	if (s->items_depth && s->depth == s->items_depth)
		return 0; /* a comma between items */
	return emit_env(s, &ch, 1);
}

static bool key_is(const struct frame *f, const char *k)
{
	return f->obj && f->klen == strlen(k) && memcmp(f->key, k, f->klen) == 0;
}

/* The item's root container is at depth item_parent + 1; rel(i) is its i-th level. */
static const struct frame *rel(eo_kube_objstream *s, size_t i)
{
	size_t d = s->item_parent + 1 + i;

	return d <= TRACK ? &s->fr[d] : NULL;
}

/* A value begins in the container at depth d with character ch. */
static int begin_value(eo_kube_objstream *s, size_t d, char ch)
{
	struct frame *f = d <= TRACK ? &s->fr[d] : NULL;

	if (f) {
		if (f->st != EXPECT_VALUE)
			return fail(s, EO_KUBE_EPROTOCOL, "unexpected value in JSON stream");
		f->st = ch == '{' || ch == '[' || ch == '"' ? IN_VALUE : IN_SCALAR;
	}
	if (d == 0) {
		if (ch != '{')
			return fail(s, EO_KUBE_EPROTOCOL, "response is not a JSON object");
		if (s->o.mode == EO_KUBE_OBJSTREAM_LIST && s->tops > 0)
			return fail(s, EO_KUBE_EPROTOCOL, "more than one value in a LIST response");
		s->env.len = 0;
		s->items_depth = 0;
		return 0;
	}
	if (!s->item && f &&
	    ((s->o.mode == EO_KUBE_OBJSTREAM_LIST && s->items_depth && d == s->items_depth) ||
	     (s->o.mode == EO_KUBE_OBJSTREAM_WATCH && d == 1 && key_is(f, "object")))) {
		if (s->o.mode == EO_KUBE_OBJSTREAM_WATCH && emit_env(s, "null", 4) != 0)
			return -1;
		s->item = true;
		s->item_parent = d;
		s->item_over = false;
		s->item_size = 0;
		s->ib.len = 0;
		memset(&s->ref, 0, sizeof(s->ref));
		return 0;
	}
	if (s->item && d > s->item_parent && d <= TRACK) {
		/* Paths inside the item: drop, or capture identity. */
		const struct frame *r0 = rel(s, 0), *r1 = rel(s, 1), *r2 = rel(s, 2);
		size_t lvl = d - s->item_parent - 1;
		bool drop = false;

		if (!s->o.keep_all && !s->dropping && (ch == '{' || ch == '[' || ch == '"')) {
			drop =
			    (lvl == 1 && key_is(r0, "metadata") && key_is(r1, "managedFields")) ||
			    (lvl == 2 && key_is(r0, "metadata") && key_is(r1, "annotations") &&
			     key_is(r2, "kubectl.kubernetes.io/last-applied-configuration"));
		}
		if (drop) {
			if (emit_item(s, "null", 4) != 0)
				return -1;
			s->dropping = true;
			s->drop_parent = d;
		}
		if (ch == '"' && lvl == 1 && key_is(r0, "metadata")) {
			struct {
				const char *k;
				char *dst;
				size_t cap;
			} want[] = {{"name", s->ref.name, sizeof(s->ref.name)},
				    {"namespace", s->ref.ns, sizeof(s->ref.ns)},
				    {"uid", s->ref.uid, sizeof(s->ref.uid)},
				    {"resourceVersion", s->ref.rv, sizeof(s->ref.rv)}};

			for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
				if (key_is(r1, want[i].k)) {
					s->cap_dst = want[i].dst;
					s->cap_max = want[i].cap - 1;
					s->cap_len = 0;
					want[i].dst[0] = '\0';
				}
		}
	}
	if (s->o.mode == EO_KUBE_OBJSTREAM_LIST && d == 1 && ch == '[' && f && key_is(f, "items"))
		s->items_depth = 2;
	return 0;
}

static int end_item(eo_kube_objstream *s)
{
	struct eo_kube_objstream_event ev = {.ref = &s->ref, .size = s->item_size};
	char detail[160];
	int stop;

	s->item = false;
	if (s->item_over) {
		ev.type = EO_KUBE_OS_SKIP;
		ev.why = EO_KUBE_ETOOLARGE;
		snprintf(detail, sizeof(detail), "object exceeds the %zu-byte cap",
			 s->o.max_object);
		ev.detail = detail;
	} else {
		ev.obj = eo_kube_objstream_decode(s->ib.p ? s->ib.p : "", s->ib.len, true, detail,
						  sizeof(detail));
		if (ev.obj && !s->o.keep_all) {
			json_t *md = json_object_get(ev.obj, "metadata");

			/* The scan left null where it dropped a value. */
			if (json_is_null(json_object_get(md, "managedFields")))
				json_object_del(md, "managedFields");
			if (json_is_null(json_object_get(
				json_object_get(md, "annotations"),
				"kubectl.kubernetes.io/last-applied-configuration")))
				json_object_del(json_object_get(md, "annotations"),
						"kubectl.kubernetes.io/last-applied-configuration");
		}
		ev.type = ev.obj ? EO_KUBE_OS_ITEM : EO_KUBE_OS_SKIP;
		ev.why = ev.obj ? EO_KUBE_OK : EO_KUBE_EPROTOCOL;
		ev.detail = ev.obj ? NULL : detail;
	}
	stop = s->o.cb(s->o.ud, &ev);
	json_decref(ev.obj);
	if (s->ib.cap > KEEP_BUF) {
		free(s->ib.p);
		s->ib = (struct buf){0};
	}
	s->ib.len = 0;
	if (stop)
		return fail(s, EO_KUBE_ECANCELED, "stopped by callback");
	return 0;
}

static int end_top(eo_kube_objstream *s)
{
	struct eo_kube_objstream_event ev = {.type = EO_KUBE_OS_END};
	json_error_t jerr;
	int stop;

	s->tops++;
	ev.obj = json_loadb(s->env.p ? s->env.p : "", s->env.len, 0, &jerr);
	if (!json_is_object(ev.obj)) {
		json_decref(ev.obj);
		return fail(s, EO_KUBE_EPROTOCOL, "response envelope is not a valid JSON object");
	}
	stop = s->o.cb(s->o.ud, &ev);
	json_decref(ev.obj);
	s->env.len = 0;
	if (stop)
		return fail(s, EO_KUBE_ECANCELED, "stopped by callback");
	return 0;
}

/* The value that began in the container at depth d has ended. */
static int after_value(eo_kube_objstream *s, size_t d)
{
	if (d <= TRACK)
		s->fr[d].st = d == 0 ? EXPECT_VALUE : AFTER_VALUE;
	if (s->dropping && d == s->drop_parent)
		s->dropping = false;
	if (s->item && d == s->item_parent)
		return end_item(s);
	if (d == 0)
		return end_top(s);
	return 0;
}

static int step(eo_kube_objstream *s, char ch)
{
	size_t d = s->depth;
	struct frame *f = d <= TRACK ? &s->fr[d] : NULL;

	if (s->in_str) {
		if (emit(s, ch) != 0)
			return -1;
		if (s->esc) {
			s->esc = false;
		} else if (ch == '\\') {
			s->esc = true;
		} else if (ch == '"') {
			s->in_str = false;
			s->cap_dst = NULL;
			if (f && f->obj && f->st == EXPECT_KEY) {
				f->klen = s->cap_len;
				f->st = EXPECT_COLON;
				return 0;
			}
			return after_value(s, d);
		}
		if (s->cap_dst && s->cap_len < s->cap_max) {
			s->cap_dst[s->cap_len++] = ch;
			s->cap_dst[s->cap_len] = '\0';
		}
		return 0;
	}
	/* A scalar ends at the first byte that cannot belong to it. */
	if (f && f->st == IN_SCALAR &&
	    (ch == ',' || ch == '}' || ch == ']' || ch == ' ' || ch == '\t' || ch == '\n' ||
	     ch == '\r') &&
	    after_value(s, d) != 0)
		return -1;
	switch (ch) {
	case ' ':
	case '\t':
	case '\n':
	case '\r':
		return 0;
	case '"':
		if (f && f->obj && f->st == EXPECT_KEY) {
			f->klen = 0;
			f->key[0] = '\0';
			s->cap_dst = f->key;
			s->cap_max = KEY_MAX;
			s->cap_len = 0;
		} else if (begin_value(s, d, ch) != 0) {
			return -1;
		}
		s->in_str = true;
		return emit(s, ch);
	case '{':
	case '[':
		if (begin_value(s, d, ch) != 0 || emit(s, ch) != 0)
			return -1;
		s->depth++;
		if (s->depth == 0)
			return fail(s, EO_KUBE_EPROTOCOL, "JSON nesting overflow");
		if (s->depth <= TRACK) {
			struct frame *n = &s->fr[s->depth];

			n->obj = ch == '{';
			n->st = n->obj ? EXPECT_KEY : EXPECT_VALUE;
			n->klen = 0;
			n->key[0] = '\0';
		}
		return 0;
	case '}':
	case ']':
		if (d == 0)
			return fail(s, EO_KUBE_EPROTOCOL, "unbalanced JSON in stream");
		if (f && f->obj != (ch == '}'))
			return fail(s, EO_KUBE_EPROTOCOL, "mismatched bracket in JSON stream");
		if (s->items_depth && d == s->items_depth && !s->item) {
			s->items_depth = 0; /* the items array closes: back to the envelope */
			s->depth--;
			if (emit_env(s, &ch, 1) != 0)
				return -1;
			return after_value(s, s->depth);
		}
		if (emit(s, ch) != 0)
			return -1;
		s->depth--;
		return after_value(s, s->depth);
	case ':':
		if (d == 0)
			return fail(s, EO_KUBE_EPROTOCOL, "unexpected ':' in JSON stream");
		if (f && f->obj) {
			if (f->st != EXPECT_COLON)
				return fail(s, EO_KUBE_EPROTOCOL, "unexpected ':' in JSON stream");
			f->st = EXPECT_VALUE;
		}
		return emit(s, ch);
	case ',':
		if (d == 0)
			return fail(s, EO_KUBE_EPROTOCOL, "unexpected ',' in JSON stream");
		if (f) {
			if (f->st != AFTER_VALUE)
				return fail(s, EO_KUBE_EPROTOCOL, "unexpected ',' in JSON stream");
			f->st = f->obj ? EXPECT_KEY : EXPECT_VALUE;
		}
		return emit(s, ch);
	default:
		if (f && f->st != IN_SCALAR && begin_value(s, d, ch) != 0)
			return -1;
		return emit(s, ch);
	}
}

eo_kube_err eo_kube_objstream_feed(eo_kube_objstream *s, const char *data, size_t n,
				   struct eo_kube_error *err)
{
	for (size_t i = 0; i < n && s->failed == EO_KUBE_OK; i++)
		step(s, data[i]);
	if (s->failed != EO_KUBE_OK)
		return eo_kube_fail(err, s->failed, "%s", s->fail_msg);
	return EO_KUBE_OK;
}

eo_kube_err eo_kube_objstream_finish(eo_kube_objstream *s, struct eo_kube_error *err)
{
	if (s->failed != EO_KUBE_OK)
		return eo_kube_fail(err, s->failed, "%s", s->fail_msg);
	if (s->depth > 0 || s->in_str)
		return eo_kube_fail(err, EO_KUBE_EPROTOCOL, "response ends inside a JSON value");
	if (s->o.mode == EO_KUBE_OBJSTREAM_LIST && s->tops != 1)
		return eo_kube_fail(err, EO_KUBE_EPROTOCOL, "empty response");
	eo_kube_error_clear(err);
	return EO_KUBE_OK;
}

json_t *eo_kube_objstream_decode(const char *buf, size_t len, bool keep_all, char *detail,
				 size_t cap)
{
	json_error_t jerr;
	json_t *obj = json_loadb(buf, len, 0, &jerr), *md;

	if (!obj) {
		snprintf(detail, cap, "undecodable object: %s", jerr.text);
		return NULL;
	}
	if (!json_is_object(obj)) {
		json_decref(obj);
		snprintf(detail, cap, "item is not a JSON object");
		return NULL;
	}
	if (!keep_all) {
		md = json_object_get(obj, "metadata");
		json_object_del(md, "managedFields");
		json_object_del(json_object_get(md, "annotations"),
				"kubectl.kubernetes.io/last-applied-configuration");
	}
	detail[0] = '\0';
	return obj;
}
