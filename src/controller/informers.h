/*
 * controller/informers.h - what the manager does with its informers' reports.
 *
 * An object the informer had to skip (over the per-object cap, or too deep or malformed to
 * decode) becomes a log line and a Warning Event on that object, so its owner sees why the
 * operator ignores their change; Events are rate-limited (EO_INFORMERS_EVENTS_PER_MIN, burst
 * the same) because they are posted from the informer's thread.
 *
 * One reporter serves every informer; each informer's handlers carry a struct
 * eo_informer_source naming its kind. Thread-safe.
 */
#ifndef EO_CONTROLLER_INFORMERS_H
#define EO_CONTROLLER_INFORMERS_H

#include <stdint.h>

#include "kube/events.h"
#include "kube/informer.h"
#include "obs/metrics.h"
#include "obs/ready.h"

#define EO_INFORMERS_EVENTS_PER_MIN 10

struct eo_informer_reporter;

struct eo_informer_reporter_opts {
	eo_kube_recorder *rec;		/* borrowed; NULL = no Events */
	struct eo_operator_metrics *om; /* borrowed; NULL = no metrics */
	struct eo_ready *ready;		/* borrowed; NULL = readiness untouched */
	/* Monotonic clock in ms; NULL = CLOCK_MONOTONIC (tests pass a fake). */
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
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

#endif
