/*
 * kube/events.h - Kubernetes core/v1 Events about our objects.
 *
 * eo_kube_event_build() is pure: it turns an involved object and a
 * type/reason/message into an Event. The recorder posts them, and folds an
 * identical event (same object UID, type, reason and message) seen again
 * within the dedup window into the existing Event by patching count and
 * lastTimestamp, the way kubectl describe shows "(x3 over 5m)". Repeats that
 * come sooner than the write interval after the last write are only counted:
 * the next write after the interval carries their count. A failure that
 * repeats on every reconcile therefore costs at most one apiserver call per
 * interval, however fast the retries.
 *
 * Events are best effort: callers may ignore the result.
 */
#ifndef EO_KUBE_EVENTS_H
#define EO_KUBE_EVENTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/err.h"

#define EO_KUBE_EVENT_MESSAGE_MAX 1024 /* longer messages are cut at a UTF-8 boundary */

/*
 * Builds an Event (new reference) for involved (borrowed; uses apiVersion,
 * kind, metadata.name/namespace/uid/resourceVersion). type is "Normal" or
 * "Warning". now_ms is wall-clock ms since the epoch; it also names the
 * event "<involved name>.<hex ns>". NULL on bad arguments or OOM.
 */
json_t *eo_kube_event_build(const json_t *involved, const char *type, const char *reason,
			    const char *message, const char *component, const char *instance,
			    int64_t now_ms);

typedef struct eo_kube_recorder eo_kube_recorder;

struct eo_kube_recorder_opts {
	const char *component; /* copied; NULL = "etcd-operator" */
	const char *instance;  /* reportingInstance (copied), e.g. the pod name; may be NULL */
	long dedup_window_ms;  /* 0 = 10 minutes */
	/* Least time between two writes of the same event; 0 = 1 minute, < 0 = no limit. */
	long min_write_interval_ms;
	size_t max_tracked; /* distinct events remembered; 0 = 512 */
	/* Wall clock in ms since the epoch; NULL = CLOCK_REALTIME. */
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
};

/* c is borrowed. opts may be NULL. NULL on OOM. Thread-safe. */
eo_kube_recorder *eo_kube_recorder_new(eo_kube_client *c, const struct eo_kube_recorder_opts *opts);
void eo_kube_recorder_free(eo_kube_recorder *rec);

/* Records an event about involved (borrowed). The message is printf-style. */
eo_kube_err eo_kube_event(eo_kube_recorder *rec, const json_t *involved, const char *type,
			  const char *reason, struct eo_kube_error *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

#endif
