/*
 * obs/ready.h - the process's readiness state, as reported by /readyz.
 *
 * Starts not ready with a reason. Whoever owns the condition (the manager, once informer caches
 * have synced) flips it with eo_ready_set(); the health server asks eo_ready_check(). Ready
 * must mean what it says: never set it before the caches have synced.
 *
 * Caller-allocated; eo_ready_init() before use, eo_ready_destroy() after the last reader (the
 * HTTP server) has stopped. All other calls are thread-safe.
 */
#ifndef EO_OBS_READY_H
#define EO_OBS_READY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define EO_READY_REASON_MAX 160

struct eo_ready {
	pthread_mutex_t mu;
	bool ready;
	char reason[EO_READY_REASON_MAX];
	bool degraded; /* a second, independent reason (a watch that keeps failing) */
	char degraded_reason[EO_READY_REASON_MAX];
};

void eo_ready_init(struct eo_ready *r, const char *reason);
void eo_ready_destroy(struct eo_ready *r);
/* reason is copied (and truncated to fit); it explains a not-ready state, NULL clears it. */
void eo_ready_set(struct eo_ready *r, bool ready, const char *reason);
/*
 * Marks the process degraded (not ready even though ready is set) with a reason, or clears it
 * when reason is NULL. Independent of eo_ready_set(): starting and shutting down still answer
 * with their own reason, and clearing a degradation never makes a not-ready process ready.
 */
void eo_ready_degrade(struct eo_ready *r, const char *reason);
/* Matches eo_http_ready_fn: `ud` is a struct eo_ready. Copies the reason when not ready. */
bool eo_ready_check(void *ud, char *reason, size_t cap);

#endif /* EO_OBS_READY_H */
