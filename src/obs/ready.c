/*
 * obs/ready.c - readiness flag with a reason, guarded by a mutex.
 */
#include "obs/ready.h"

#include <stdio.h>

void eo_ready_init(struct eo_ready *r, const char *reason)
{
	pthread_mutex_init(&r->mu, NULL);
	r->ready = false;
	r->degraded = false;
	r->degraded_reason[0] = '\0';
	snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "starting");
}

void eo_ready_destroy(struct eo_ready *r)
{
	pthread_mutex_destroy(&r->mu);
}

void eo_ready_set(struct eo_ready *r, bool ready, const char *reason)
{
	pthread_mutex_lock(&r->mu);
	r->ready = ready;
	snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
	pthread_mutex_unlock(&r->mu);
}

void eo_ready_degrade(struct eo_ready *r, const char *reason)
{
	pthread_mutex_lock(&r->mu);
	r->degraded = reason != NULL;
	snprintf(r->degraded_reason, sizeof(r->degraded_reason), "%s", reason ? reason : "");
	pthread_mutex_unlock(&r->mu);
}

bool eo_ready_check(void *ud, char *reason, size_t cap)
{
	struct eo_ready *r = ud;
	bool ready;

	pthread_mutex_lock(&r->mu);
	ready = r->ready && !r->degraded;
	if (!ready && reason && cap > 0)
		snprintf(reason, cap, "%s", r->ready ? r->degraded_reason : r->reason);
	pthread_mutex_unlock(&r->mu);
	return ready;
}
