/*
 * kube/watch.h - one Kubernetes watch stream.
 *
 * A watch is a long GET (?watch=1&allowWatchBookmarks=true&timeoutSeconds=T
 * &resourceVersion=RV) answering with one JSON event per line:
 * {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}.
 * The stream is decoded with kube/objstream.h: each event's object is buffered
 * alone up to a per-object cap and decoded alone. An object over the cap, or
 * one jansson refuses (too deep, say), is reported to on_skip with what is
 * known of its identity and the stream goes on; only a broken stream (bad
 * framing) ends it with EO_KUBE_EPROTOCOL. managedFields are dropped.
 *
 * The stream runs on its own HTTP/1.1 connection inside a private curl multi
 * handle, so eo_kube_watch_cancel() can interrupt it at once from another
 * thread.
 */
#ifndef EO_KUBE_WATCH_H
#define EO_KUBE_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/err.h"

enum eo_kube_watch_type {
	EO_KUBE_WATCH_ADDED = 0,
	EO_KUBE_WATCH_MODIFIED,
	EO_KUBE_WATCH_DELETED,
	EO_KUBE_WATCH_BOOKMARK,
	EO_KUBE_WATCH_ERROR,
};

const char *eo_kube_watch_type_name(enum eo_kube_watch_type t);

/* Maps the Status of an ERROR event (410 Expired -> EO_KUBE_EGONE, ...). */
eo_kube_err eo_kube_watch_error(json_t *status, struct eo_kube_error *err);

typedef struct eo_kube_watch eo_kube_watch;

/* An event whose object was skipped (over the cap, or it does not decode). */
struct eo_kube_watch_skip {
	enum eo_kube_watch_type type;	  /* ADDED, MODIFIED, DELETED or BOOKMARK */
	const struct eo_kube_objref *ref; /* what the scan saw of its metadata */
	eo_kube_err why;		  /* ETOOLARGE or EPROTOCOL */
	const char *detail;
	size_t size; /* bytes counted before the object was given up */
};

struct eo_kube_watch_opts {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version; /* start after this version; NULL = now */
	int timeout_seconds;	      /* server-side end of the stream; 0 = 300 */
	size_t max_object;	      /* per-object cap; 0 = EO_KUBE_OBJECT_MAX */
	bool keep_all;		      /* keep managedFields etc. (kube/objstream.h) */
	/* Optional, called with the run's ud: on_skip for an event whose object was skipped
	 * (the stream goes on); on_open once the server answered 2xx (the watch is live). */
	void (*on_skip)(void *ud, const struct eo_kube_watch_skip *skip);
	void (*on_open)(void *ud);
};

/*
 * Event callback: object is borrowed for the duration of the call. Return
 * nonzero to stop the stream (eo_kube_watch_run then gives ECANCELED).
 * Not called for ERROR events.
 */
typedef int (*eo_kube_watch_cb)(void *ud, enum eo_kube_watch_type type, json_t *object);

/* The watch keeps a borrowed pointer to c. NULL on OOM. */
eo_kube_watch *eo_kube_watch_new(eo_kube_client *c);

/* Only when no run is in progress. */
void eo_kube_watch_free(eo_kube_watch *w);

/*
 * Streams r (r->name ignored) until the server ends the stream
 * (EO_KUBE_OK), an ERROR event arrives (its mapped result, EGONE for 410),
 * the request fails (non-2xx: mapped status; transport errors), the
 * callback stops it or eo_kube_watch_cancel() is called (ECANCELED).
 * One run at a time per watch.
 */
eo_kube_err eo_kube_watch_run(eo_kube_watch *w, const struct eo_kube_resource *r,
			      const struct eo_kube_watch_opts *opts, eo_kube_watch_cb cb, void *ud,
			      struct eo_kube_error *err);

/* Thread-safe; makes the current and every later run return ECANCELED
 * promptly. */
void eo_kube_watch_cancel(eo_kube_watch *w);

#endif
