/*
 * controller/informers.h - what the manager does with its informers' reports.
 *
 * An object the informer had to skip (over the per-object cap, or too deep or malformed to
 * decode) becomes a log line and a Warning Event on that object, so its owner sees why the
 * operator ignores their change; Events are rate-limited (EO_INFORMERS_EVENTS_PER_MIN, burst
 * the same) because they are posted from the informer's thread.
 *
 * A list or watch that fails is logged (the first failure at once, then at most every
 * EO_INFORMERS_LOG_EVERY_MS while it keeps failing, with the kind, namespace, HTTP status and
 * reason), counted in etcd_operator_watch_restarts_total{kind} (410 expiries too), and once an
 * informer has been failing for EO_INFORMERS_GRACE_MS the process is marked degraded: /readyz
 * answers 503 naming the watch and its error until it recovers. A recovery is logged too.
 *
 * One reporter serves every informer; each informer's handlers carry a struct
 * eo_informer_source naming its kind. Thread-safe.
 */
#ifndef EO_CONTROLLER_INFORMERS_H
#define EO_CONTROLLER_INFORMERS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kube/events.h"
#include "kube/informer.h"
#include "obs/metrics.h"
#include "obs/ready.h"

#define EO_INFORMERS_EVENTS_PER_MIN 10
#define EO_INFORMERS_GRACE_MS	    60000L
#define EO_INFORMERS_LOG_EVERY_MS   30000L
#define EO_INFORMERS_MAX_TRACKED    64 /* informers (kind x namespace) tracked for health */

struct eo_informer_reporter;

struct eo_informer_reporter_opts {
	eo_kube_recorder *rec;		/* borrowed; NULL = no Events */
	struct eo_operator_metrics *om; /* borrowed; NULL = no metrics */
	struct eo_ready *ready;		/* borrowed; NULL = readiness untouched */
	/* Monotonic clock in ms; NULL = CLOCK_MONOTONIC (tests pass a fake). */
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
	long grace_ms; /* 0 = EO_INFORMERS_GRACE_MS */
};

/* What one informer watches: its kind (for Events and logs) and group/version. */
struct eo_informer_source {
	struct eo_informer_reporter *r;
	const char *kind; /* "EtcdCluster", "Pod", ... (static) */
	const char *gv;	  /* "etcd-operator.cozystack.io/v1alpha2", "v1", ... (static) */
};

/* NULL on OOM. opts is copied. */
struct eo_informer_reporter *eo_informer_reporter_new(const struct eo_informer_reporter_opts *o);
void eo_informer_reporter_free(struct eo_informer_reporter *r);

/* The informer skipped an object: log it and put a Warning Event on it (rate-limited). */
void eo_informer_report_skip(const struct eo_informer_source *src,
			     const struct eo_kube_informer_skip *sk);

/* A list or watch failed (or a watch expired: f->rc == EO_KUBE_EGONE). */
void eo_informer_report_failure(const struct eo_informer_source *src,
				const struct eo_kube_informer_failure *f);

/* The informer listed or opened a watch again after failures. */
void eo_informer_report_recover(const struct eo_informer_source *src, const char *ns,
				unsigned long failures, long long failing_ms);

/*
 * The Node informer saw old_node become new_node (old_node NULL: added; new_node NULL:
 * deleted). When the change matters to the members on that node (plan/nodeloss.h,
 * eo_plan_node_change_matters: Ready, cordon, taints, the evacuate annotation, deletion), every
 * EtcdCluster with a member there (eo_plan_clusters_on_node over the Pods of pods and the PVCs
 * of pvcs, both the controller's caches; either may be NULL) is passed to enqueue as
 * "namespace/name", so the cluster looks at once rather than at its next periodic requeue. A
 * kubelet heartbeat enqueues nothing. Returns how many clusters were enqueued (-1 on OOM).
 */
struct eo_cache_set; /* controller/controller.h */
int eo_informer_node_changed(const struct eo_cache_set *pods, const struct eo_cache_set *pvcs,
			     const json_t *old_node, const json_t *new_node,
			     void (*enqueue)(void *ud, const char *key), void *ud);

#endif
