/*
 * controller/informers.c - skipped objects become log lines and Warning Events; failing
 * informers are logged, counted and, past a grace period, make /readyz fail.
 */
#include "controller/informers.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "controller/controller.h"
#include "obs/log.h"
#include "plan/nodeloss.h"

struct eo_informer_reporter {
	struct eo_informer_reporter_opts o;
	pthread_mutex_t mu;
	/* token bucket for Events: tokens, refilled EVENTS_PER_MIN per minute */
	double tokens;
	int64_t refilled_ms;
	/* informers failing now, by kind and namespace */
	struct failing {
		const char *kind;
		char ns[64];
		int64_t since_ms, logged_ms;
		bool red;
		char why[96];
	} f[EO_INFORMERS_MAX_TRACKED];
	size_t nf;
	bool degraded;
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
	if (r->o.grace_ms <= 0)
		r->o.grace_ms = EO_INFORMERS_GRACE_MS;
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

/* The entry for kind/ns, created when add is set; NULL when absent or the table is full. Lock
 * held. */
static struct failing *entry(struct eo_informer_reporter *r, const char *kind, const char *ns,
			     bool add)
{
	const char *n = ns ? ns : "";

	for (size_t i = 0; i < r->nf; i++)
		if (strcmp(r->f[i].kind, kind) == 0 && strcmp(r->f[i].ns, n) == 0)
			return &r->f[i];
	if (!add || r->nf == EO_INFORMERS_MAX_TRACKED)
		return NULL;
	memset(&r->f[r->nf], 0, sizeof(r->f[0]));
	r->f[r->nf].kind = kind;
	snprintf(r->f[r->nf].ns, sizeof(r->f[0].ns), "%s", n);
	return &r->f[r->nf++];
}

/* Degraded while any informer is past the grace period. Lock held. */
static void update_ready(struct eo_informer_reporter *r)
{
	const struct failing *worst = NULL;
	char reason[EO_READY_REASON_MAX];

	for (size_t i = 0; i < r->nf; i++)
		if (r->f[i].red && (!worst || r->f[i].since_ms < worst->since_ms))
			worst = &r->f[i];
	if (!r->o.ready || (!worst && !r->degraded))
		return;
	if (!worst) {
		eo_ready_degrade(r->o.ready, NULL);
		r->degraded = false;
		return;
	}
	snprintf(reason, sizeof(reason), "watch of %.24s%s%.40s failing for %llds: %.48s",
		 worst->kind, worst->ns[0] ? " in " : "", worst->ns,
		 (long long)(r->o.now_ms(r->o.clock_ud) - worst->since_ms) / 1000, worst->why);
	eo_ready_degrade(r->o.ready, reason);
	r->degraded = true;
}

void eo_informer_report_failure(const struct eo_informer_source *src,
				const struct eo_kube_informer_failure *f)
{
	struct eo_informer_reporter *r = src->r;
	const char *const kind[1] = {src->kind};
	struct failing *e;
	int64_t now;
	bool log = false;
	char http[16], count[24], secs[24];

	if (r->o.om)
		eo_metrics_inc(r->o.om->watch_restarts, kind);
	if (f->rc == EO_KUBE_EGONE) {
		eo_log_kv(EO_LOG_DEBUG, NULL, "watch expired; relisting", "kind", src->kind,
			  "namespace", f->ns ? f->ns : "", NULL);
		return;
	}
	now = r->o.now_ms(r->o.clock_ud);
	pthread_mutex_lock(&r->mu);
	e = entry(r, src->kind, f->ns, true);
	if (e) {
		if (f->consecutive <= 1 || e->since_ms == 0) {
			e->since_ms = now - f->failing_ms;
			e->logged_ms = 0;
		}
		if (e->logged_ms == 0 || now - e->logged_ms >= EO_INFORMERS_LOG_EVERY_MS) {
			log = true;
			e->logged_ms = now;
		}
		if (f->http_status)
			snprintf(e->why, sizeof(e->why), "%s %d %s", f->op, f->http_status,
				 f->reason[0] ? f->reason : eo_kube_strerror(f->rc));
		else
			snprintf(e->why, sizeof(e->why), "%s %s", f->op, eo_kube_strerror(f->rc));
		if (f->failing_ms >= r->o.grace_ms)
			e->red = true;
		update_ready(r);
	} else {
		log = true; /* untracked: at least say so every time */
	}
	pthread_mutex_unlock(&r->mu);
	if (!log)
		return;
	snprintf(http, sizeof(http), "%d", f->http_status);
	snprintf(count, sizeof(count), "%lu", f->consecutive);
	snprintf(secs, sizeof(secs), "%lld", f->failing_ms / 1000);
	eo_log_kv(EO_LOG_WARN, NULL, "watch failing", "kind", src->kind, "namespace",
		  f->ns ? f->ns : "", "op", f->op, "http_status", http, "reason", f->reason,
		  "error", eo_kube_strerror(f->rc), "detail", f->message, "failures", count,
		  "failing_seconds", secs, NULL);
}

void eo_informer_report_recover(const struct eo_informer_source *src, const char *ns,
				unsigned long failures, long long failing_ms)
{
	struct eo_informer_reporter *r = src->r;
	struct failing *e;
	char count[24], secs[24];

	pthread_mutex_lock(&r->mu);
	e = entry(r, src->kind, ns, false);
	if (e)
		*e = r->f[--r->nf]; /* drop it: move the last one here */
	update_ready(r);
	pthread_mutex_unlock(&r->mu);
	snprintf(count, sizeof(count), "%lu", failures);
	snprintf(secs, sizeof(secs), "%lld", failing_ms / 1000);
	eo_log_kv(EO_LOG_INFO, NULL, "watch recovered", "kind", src->kind, "namespace",
		  ns ? ns : "", "failures", count, "failing_seconds", secs, NULL);
}

int eo_informer_node_changed(const struct eo_cache_set *pods, const struct eo_cache_set *pvcs,
			     const json_t *old_node, const json_t *new_node,
			     void (*enqueue)(void *ud, const char *key), void *ud)
{
	const json_t *node = new_node != NULL ? new_node : old_node;
	json_t *p = NULL, *v = NULL, *keys = NULL, *k = NULL;
	int n = -1;
	size_t i;

	if (!eo_plan_node_change_matters(old_node, new_node))
		return 0;
	keys = json_array();
	p = pods != NULL ? eo_cache_set_list(pods, NULL) : NULL;
	v = pvcs != NULL ? eo_cache_set_list(pvcs, NULL) : NULL;
	if (keys == NULL || (pods != NULL && p == NULL) || (pvcs != NULL && v == NULL) ||
	    eo_plan_clusters_on_node(p, v, eo_meta_name(node), keys) != 0)
		goto out;
	json_array_foreach(keys, i, k) enqueue(ud, json_string_value(k));
	n = (int)json_array_size(keys);
	if (n > 0)
		eo_log_kv(EO_LOG_DEBUG, NULL, "node changed; its clusters enqueued", "node",
			  eo_meta_name(node), NULL);
out:
	json_decref(p);
	json_decref(v);
	json_decref(keys);
	return n;
}
