/*
 * controller/informers.c - skipped objects become log lines and Warning Events.
 */
#include "controller/informers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "obs/log.h"

struct eo_informer_reporter {
	struct eo_informer_reporter_opts o;
	pthread_mutex_t mu;
	/* token bucket for Events: tokens, refilled EVENTS_PER_MIN per minute */
	double tokens;
	int64_t refilled_ms;
};

static int64_t mono_ms(void *ud)
{
	struct timespec ts;

	(void)ud;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct eo_informer_reporter *eo_informer_reporter_new(const struct eo_informer_reporter_opts *o)
{
	struct eo_informer_reporter *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (o)
		r->o = *o;
	if (!r->o.now_ms)
		r->o.now_ms = mono_ms;
	pthread_mutex_init(&r->mu, NULL);
	r->tokens = EO_INFORMERS_EVENTS_PER_MIN;
	r->refilled_ms = r->o.now_ms(r->o.clock_ud);
	return r;
}

void eo_informer_reporter_free(struct eo_informer_reporter *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* Takes an Event token; false when the bucket is empty. Lock held. */
static bool take_token(struct eo_informer_reporter *r)
{
	int64_t now = r->o.now_ms(r->o.clock_ud);

	r->tokens += (double)(now - r->refilled_ms) * EO_INFORMERS_EVENTS_PER_MIN / 60000.0;
	if (r->tokens > EO_INFORMERS_EVENTS_PER_MIN)
		r->tokens = EO_INFORMERS_EVENTS_PER_MIN;
	r->refilled_ms = now;
	if (r->tokens < 1.0)
		return false;
	r->tokens -= 1.0;
	return true;
}

void eo_informer_report_skip(const struct eo_informer_source *src,
			     const struct eo_kube_informer_skip *sk)
{
	struct eo_informer_reporter *r = src->r;
	const struct eo_kube_objref *ref = sk->ref;
	bool too_large = sk->why == EO_KUBE_ETOOLARGE;
	char size[32];
	bool event;
	json_t *involved;

	snprintf(size, sizeof(size), "%zu", sk->size);
	eo_log_kv(EO_LOG_WARN, NULL, "skipped an object the operator cannot read", "kind",
		  src->kind, "namespace", ref->ns, "name", ref->name, "resourceVersion", ref->rv,
		  "bytes", size, "detail", sk->detail ? sk->detail : "", NULL);
	if (!r->o.rec || !ref->name[0])
		return;
	pthread_mutex_lock(&r->mu);
	event = take_token(r);
	pthread_mutex_unlock(&r->mu);
	if (!event)
		return;
	involved = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}}", "apiVersion", src->gv, "kind",
			     src->kind, "metadata", "name", ref->name, "namespace", ref->ns, "uid",
			     ref->uid, "resourceVersion", ref->rv);
	if (!involved)
		return;
	eo_kube_event(r->o.rec, involved, "Warning",
		      too_large ? "ObjectTooLarge" : "ObjectUnreadable", NULL,
		      "etcd-operator skipped this %s: %s (%zu bytes read); it acts on the last "
		      "version it could read until the object is fixed",
		      src->kind, sk->detail && sk->detail[0] ? sk->detail : "unreadable", sk->size);
	json_decref(involved);
}
