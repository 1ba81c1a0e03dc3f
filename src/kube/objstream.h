/*
 * kube/objstream.h - decodes Kubernetes LIST and watch bodies one object at a time.
 *
 * A LIST answer is one JSON object whose "items" array may hold thousands of objects; a watch
 * answer is a stream of events {"type":...,"object":{...}}. Decoding either as one tree makes
 * the whole page or event stand or fall together: one object that is too large or too deep
 * (jansson refuses nesting beyond 2048) would fail every object beside it, and the tree costs
 * several times its JSON size while it is held.
 *
 * This decoder scans the bytes as they arrive with a small state machine (depth, strings and
 * the keys of the first few levels; no recursion, so any depth is fine to scan) and cuts out
 * each item: the elements of a LIST's top-level "items" array, or a watch event's "object".
 * Each item is buffered alone, up to max_object bytes, and decoded alone with jansson:
 *
 *   - an item that decodes to a JSON object is passed to the callback (EO_KUBE_OS_ITEM);
 *   - an item over max_object bytes, or one jansson refuses (too deep, bad JSON, not an
 *     object), is passed as EO_KUBE_OS_SKIP with its metadata name / namespace / uid /
 *     resourceVersion (captured while scanning, so they are known even for an item that was
 *     never buffered whole) and the stream goes on with the next item;
 *   - everything else (kind, apiVersion, metadata with resourceVersion and continue, the
 *     event's type) forms the envelope, with the item(s) replaced by null; it is capped at
 *     max_envelope bytes and passed as EO_KUBE_OS_END when its top-level value ends.
 *
 * metadata.managedFields (never read by the operator, often the largest part of an object) and
 * the kubectl.kubernetes.io/last-applied-configuration annotation (a second copy of the spec)
 * are dropped while scanning: they are neither buffered nor counted against max_object.
 *
 * Only the framing is checked here (balanced brackets, strings, one top-level object per LIST,
 * objects at the top of a watch stream); a framing error ends the stream with EPROTOCOL.
 */
#ifndef EO_KUBE_OBJSTREAM_H
#define EO_KUBE_OBJSTREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/err.h"

/* Default per-object cap. Objects of the kinds the operator watches are a few KiB; etcd
 * refuses requests over 1.5 MiB, so anything near this is abuse, not data. */
#define EO_KUBE_OBJECT_MAX   (256u << 10)
#define EO_KUBE_ENVELOPE_MAX (64u << 10)

enum eo_kube_objstream_mode {
	EO_KUBE_OBJSTREAM_LIST,	 /* one object; items are the elements of "items" */
	EO_KUBE_OBJSTREAM_WATCH, /* a sequence of objects; the item is each one's "object" */
};

/* Identity of a skipped object, as far as the scan saw it (empty strings when absent;
 * values longer than a field are cut). */
struct eo_kube_objref {
	char name[256];
	char ns[64];
	char uid[64];
	char rv[64];
};

enum eo_kube_objstream_ev {
	EO_KUBE_OS_ITEM,    /* obj: the decoded item (borrowed for the call) */
	EO_KUBE_OS_SKIP,    /* ref, why (ETOOLARGE or EPROTOCOL), detail, size */
	EO_KUBE_OS_END,	    /* obj: the envelope of one top-level value (borrowed) */
	EO_KUBE_OS_RESTART, /* (LIST only, from eo_kube_list_each) the list starts over */
};

struct eo_kube_objstream_event {
	enum eo_kube_objstream_ev type;
	json_t *obj;
	const struct eo_kube_objref *ref;
	eo_kube_err why;
	const char *detail;
	size_t size; /* bytes of the skipped item (as far as counted) */
};

/* Return nonzero to stop: eo_kube_objstream_feed() then gives EO_KUBE_ECANCELED. */
typedef int (*eo_kube_objstream_cb)(void *ud, const struct eo_kube_objstream_event *ev);

struct eo_kube_objstream_opts {
	enum eo_kube_objstream_mode mode;
	size_t max_object;   /* 0 = EO_KUBE_OBJECT_MAX */
	size_t max_envelope; /* 0 = EO_KUBE_ENVELOPE_MAX */
	bool keep_all;	     /* true: do not drop managedFields / last-applied-configuration */
	eo_kube_objstream_cb cb;
	void *ud;
};

typedef struct eo_kube_objstream eo_kube_objstream;

/* NULL on OOM. opts is copied. */
eo_kube_objstream *eo_kube_objstream_new(const struct eo_kube_objstream_opts *opts);
void eo_kube_objstream_free(eo_kube_objstream *s);

/*
 * Scans n more bytes. Returns OK, EPROTOCOL (framing broken: the stream cannot go on),
 * ETOOLARGE (the envelope exceeds its cap), ENOMEM, or ECANCELED when the callback stopped it.
 * After an error every later call returns the same error. err (may be NULL) gets the detail.
 */
eo_kube_err eo_kube_objstream_feed(eo_kube_objstream *s, const char *data, size_t n,
				   struct eo_kube_error *err);

/* At the end of the body: EPROTOCOL unless the input ended between top-level values (and, in
 * LIST mode, after exactly one). */
eo_kube_err eo_kube_objstream_finish(eo_kube_objstream *s, struct eo_kube_error *err);

/* Decodes buf (one complete object) the way items are decoded, dropping the same fields:
 * a new reference, or NULL with the jansson error text in detail (cap >= 1). */
json_t *eo_kube_objstream_decode(const char *buf, size_t len, bool keep_all, char *detail,
				 size_t cap);

#endif
