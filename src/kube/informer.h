/*
 * kube/informer.h - list-then-watch cache of one kind.
 *
 * An informer lists the resource (paged), fills its cache, then watches
 * from the list's resourceVersion with bookmarks. When a watch ends it
 * resumes from the last resourceVersion it saw; on 410 Gone (an HTTP 410 or
 * an ERROR event with code 410) or a broken stream it lists again and
 * reconciles the cache with the fresh list (firing add / update / delete for
 * the differences). Failures back off exponentially (retry_min_ms doubling
 * to retry_max_ms); a 401 also makes the token be re-read.
 *
 * Lists and watches are decoded one object at a time (kube/objstream.h), and
 * metadata.managedFields and the last-applied-configuration annotation are
 * dropped before an object is cached. An object over max_object bytes, or one
 * that does not decode (too deep, say), is skipped: the cache keeps the last
 * good version of it (a skipped DELETED still removes it), the rest of the
 * page or stream is applied, and on_skip reports it once per resourceVersion.
 *
 * Health: every list or watch that fails (and every 410 that forces a
 * relist) is reported to on_failure, with the consecutive failure count and
 * how long the informer has been failing; the first list that completes or
 * watch that opens after failures is reported to on_recover.
 *
 * Handlers run on the informer's thread after the cache has been updated
 * and with no lock held, so they may read the cache (typically they map the
 * object to a work-queue key, e.g. its owner, and add it). Objects passed to
 * handlers are borrowed for the call; json_incref() to keep one. The cache
 * holds its own copy (see kube/cache.h), but treat them as read-only anyway.
 */
#ifndef EO_KUBE_INFORMER_H
#define EO_KUBE_INFORMER_H

#include <jansson.h>
#include <stdbool.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/err.h"

typedef struct eo_kube_informer eo_kube_informer;

struct eo_kube_informer_opts {
	struct eo_kube_resource res; /* name ignored; ns NULL = all namespaces */
	const char *label_selector;  /* copied; NULL = none */
	const char *field_selector;  /* copied; NULL = none */
	const char *index_label;     /* label key for the cache's label index */
	long page_limit;	     /* list page size; 0 = 500 */
	int watch_timeout_s;	     /* 0 = random in [300, 600) like client-go */
	long retry_min_ms;	     /* 0 = 200 */
	long retry_max_ms;	     /* 0 = 30000 */
	size_t max_object;	     /* per-object cap; 0 = EO_KUBE_OBJECT_MAX */
};

/* A skipped object (see above). */
struct eo_kube_informer_skip {
	const struct eo_kube_objref *ref;
	eo_kube_err why; /* ETOOLARGE (over max_object) or EPROTOCOL (does not decode) */
	const char *detail;
	size_t size; /* bytes counted before it was given up */
};

/* A failed list or watch, or a watch that expired (rc EGONE). */
struct eo_kube_informer_failure {
	const char *op;		   /* "list" or "watch" */
	const char *ns;		   /* the informer's namespace; NULL = all namespaces */
	eo_kube_err rc;		   /* EGONE: expired, relisting (not counted as failing) */
	int http_status;	   /* 0 when there was no HTTP answer */
	const char *reason;	   /* the Kubernetes Status reason, or "" */
	const char *message;	   /* detail; never a credential */
	unsigned long consecutive; /* failures in a row, this one included; 0 for EGONE */
	long long failing_ms;	   /* since the first failure in the row */
};

struct eo_kube_informer_handlers {
	void (*on_add)(void *ud, json_t *obj);
	void (*on_update)(void *ud, json_t *old_obj, json_t *new_obj);
	void (*on_delete)(void *ud, json_t *obj);
	/* Optional (NULL = not interested); run on the informer's thread. */
	void (*on_skip)(void *ud, const struct eo_kube_informer_skip *skip);
	void (*on_failure)(void *ud, const struct eo_kube_informer_failure *f);
	void (*on_recover)(void *ud, const char *ns, unsigned long failures, long long failing_ms);
	void *ud;
};

/*
 * Creates a stopped informer. c is borrowed and must outlive the informer;
 * opts strings are copied; handlers may be NULL. NULL on OOM.
 */
eo_kube_informer *eo_kube_informer_new(eo_kube_client *c, const struct eo_kube_informer_opts *opts,
				       const struct eo_kube_informer_handlers *handlers);

/* Starts the background thread. */
eo_kube_err eo_kube_informer_start(eo_kube_informer *inf, struct eo_kube_error *err);

/*
 * Stops and joins the thread. An open watch is interrupted at once; a list
 * in flight finishes first (bounded by the client's request timeout).
 * Idempotent.
 */
void eo_kube_informer_stop(eo_kube_informer *inf);

/* Stops if needed and frees everything. */
void eo_kube_informer_free(eo_kube_informer *inf);

/* True once the first list has been stored in the cache. */
bool eo_kube_informer_has_synced(eo_kube_informer *inf);

/* Waits for has_synced up to timeout_ms (< 0 = forever); false on timeout
 * or when the informer stopped first. */
bool eo_kube_informer_wait_synced(eo_kube_informer *inf, long timeout_ms);

/* The cache (borrowed; see kube/cache.h for the read API and ownership). */
eo_kube_cache *eo_kube_informer_cache(eo_kube_informer *inf);

/* Last resourceVersion seen (heap copy the caller frees; NULL if none). */
char *eo_kube_informer_resource_version(eo_kube_informer *inf);

/* Counters for metrics and tests. */
struct eo_kube_informer_stats {
	unsigned long lists;   /* completed lists */
	unsigned long watches; /* watch requests started */
	unsigned long events;  /* watch events applied (bookmarks excluded) */
	unsigned long errors;  /* failed lists or watches */
	unsigned long skipped; /* objects skipped (over the cap or undecodable) */
};
void eo_kube_informer_stats(eo_kube_informer *inf, struct eo_kube_informer_stats *out);

#endif
