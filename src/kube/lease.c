/*
 * kube/lease.c - Lease-based leader election.
 */
#include "kube/lease.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api/meta.h"
#include "core/sleep.h"

struct eo_kube_lease {
	eo_kube_client *c;
	char *ns, *name, *id;
	long duration_ms, deadline_ms, retry_ms;
	long req_ms; /* cap on one request's timeout */
	void (*on_started)(void *ud);
	void (*on_stopped)(void *ud);
	void *ud;
	int64_t (*now_fn)(void *ud);
	void *clock_ud;

	/* What we last saw in the lease and when (for expiry). Used by one
	 * thread at a time: the elector thread, or the caller of _try. */
	char *obs_holder, *obs_renew, *obs_rv;
	int64_t obs_at;

	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool stopping;
	bool leader;
	int64_t held_until; /* our clock; valid while leader */
	char why[192];	    /* why leadership last ended */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now(eo_kube_lease *le)
{
	return le->now_fn ? le->now_fn(le->clock_ud) : mono_ms();
}

void eo_kube_format_microtime(int64_t epoch_ms, char *buf, size_t cap)
{
	time_t s = (time_t)(epoch_ms / 1000);
	struct tm tm;
	char base[24];

	gmtime_r(&s, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, cap, "%s.%06dZ", base, (int)(epoch_ms % 1000) * 1000);
}

static void wall_now(char *buf, size_t cap)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	eo_kube_format_microtime((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, buf, cap);
}

char *eo_kube_lease_identity(const char *pod_name)
{
	unsigned char rnd[8];
	char host[256] = "", *out = NULL;

	if (!pod_name || !pod_name[0])
		pod_name = getenv("POD_NAME");
	if (!pod_name || !pod_name[0]) {
		if (gethostname(host, sizeof(host) - 1) != 0 || !host[0])
			snprintf(host, sizeof(host), "etcd-operator");
		pod_name = host;
	}
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return NULL;
	if (asprintf(&out, "%s_%02x%02x%02x%02x%02x%02x%02x%02x", pod_name, rnd[0], rnd[1], rnd[2],
		     rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]) < 0)
		return NULL;
	return out;
}

eo_kube_lease *eo_kube_lease_new(eo_kube_client *c, const struct eo_kube_lease_opts *o)
{
	eo_kube_lease *le;

	if (!c || !o || !o->ns || !o->name || !o->identity || !o->identity[0])
		return NULL;
	le = calloc(1, sizeof(*le));
	if (!le)
		return NULL;
	le->c = c;
	le->ns = strdup(o->ns);
	le->name = strdup(o->name);
	le->id = strdup(o->identity);
	le->duration_ms = o->lease_duration_ms > 0 ? o->lease_duration_ms : 15000;
	le->deadline_ms = o->renew_deadline_ms > 0 ? o->renew_deadline_ms : 10000;
	le->retry_ms = o->retry_period_ms > 0 ? o->retry_period_ms : 2000;
	le->req_ms = o->request_timeout_ms > 0 ? o->request_timeout_ms : le->retry_ms;
	le->on_started = o->on_started;
	le->on_stopped = o->on_stopped;
	le->ud = o->ud;
	le->now_fn = o->now_ms;
	le->clock_ud = o->clock_ud;
	pthread_mutex_init(&le->mu, NULL);
	eo_cond_init_monotonic(&le->cond);
	if (!le->ns || !le->name || !le->id) {
		eo_kube_lease_free(le);
		return NULL;
	}
	return le;
}

void eo_kube_lease_free(eo_kube_lease *le)
{
	if (!le)
		return;
	eo_kube_lease_stop(le);
	free(le->ns);
	free(le->name);
	free(le->id);
	free(le->obs_holder);
	free(le->obs_renew);
	free(le->obs_rv);
	pthread_cond_destroy(&le->cond);
	pthread_mutex_destroy(&le->mu);
	free(le);
}

bool eo_kube_lease_is_leader(eo_kube_lease *le)
{
	bool l;

	pthread_mutex_lock(&le->mu);
	l = le->leader;
	pthread_mutex_unlock(&le->mu);
	return l;
}

int64_t eo_kube_lease_held_until(eo_kube_lease *le)
{
	int64_t t;

	pthread_mutex_lock(&le->mu);
	t = le->leader ? le->held_until : 0;
	pthread_mutex_unlock(&le->mu);
	return t;
}

long eo_kube_lease_held_for_ms(eo_kube_lease *le)
{
	int64_t t = eo_kube_lease_held_until(le), left;

	if (t == 0)
		return 0;
	left = t - now(le);
	return left > 0 ? (long)left : 0;
}

void eo_kube_lease_stop_reason(eo_kube_lease *le, char *buf, size_t cap)
{
	pthread_mutex_lock(&le->mu);
	snprintf(buf, cap, "%s", le->why);
	pthread_mutex_unlock(&le->mu);
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static void replace_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

/* Records the lease as seen now; the expiry clock restarts when it changed. */
static void observe(eo_kube_lease *le, const char *holder, const char *renew, const char *rv)
{
	if (le->obs_at != 0 && str_eq(holder, le->obs_holder) && str_eq(renew, le->obs_renew) &&
	    str_eq(rv, le->obs_rv))
		return;
	replace_str(&le->obs_holder, holder);
	replace_str(&le->obs_renew, renew);
	replace_str(&le->obs_rv, rv);
	le->obs_at = now(le);
	if (le->obs_at == 0)
		le->obs_at = 1; /* 0 means "never observed" */
}

static long duration_s(eo_kube_lease *le)
{
	long s = (le->duration_ms + 999) / 1000;

	return s > 0 ? s : 1;
}

static eo_kube_err create_lease(eo_kube_lease *le, bool *held, struct eo_kube_error *err)
{
	struct eo_kube_resource r = {"coordination.k8s.io/v1", "leases", le->ns, NULL};
	char ts[40];
	json_t *obj, *out = NULL;
	eo_kube_err rc;

	wall_now(ts, sizeof(ts));
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:s, s:s, s:i}}", "apiVersion",
			"coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", le->name,
			"namespace", le->ns, "spec", "holderIdentity", le->id,
			"leaseDurationSeconds", (json_int_t)duration_s(le), "acquireTime", ts,
			"renewTime", ts, "leaseTransitions", 0);
	if (!obj)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "lease object");
	rc = eo_kube_create(le->c, &r, obj, &out, err);
	if (rc == EO_KUBE_OK) {
		json_t *spec = json_object_get(out, "spec");

		observe(le, le->id, json_string_value(json_object_get(spec, "renewTime")),
			eo_meta_resource_version(out));
		*held = true;
	} else if (rc == EO_KUBE_EEXISTS || rc == EO_KUBE_ECONFLICT) {
		rc = EO_KUBE_OK; /* another candidate created it first */
	}
	json_decref(obj);
	json_decref(out);
	return rc;
}

/* Bounds the next request by the attempt's deadline (and the per-request cap). False when
 * the deadline has passed: the attempt must not send anything more. */
static bool bound(eo_kube_lease *le, int64_t deadline, struct eo_kube_error *err)
{
	int64_t left = deadline - now(le);

	if (left <= 0) {
		eo_kube_fail(err, EO_KUBE_ETIMEOUT, "lease %s/%s: renew deadline passed", le->ns,
			     le->name);
		return false;
	}
	eo_kube_client_set_timeout(le->c, left < le->req_ms ? (long)left : le->req_ms);
	return true;
}

/*
 * One acquire-or-renew attempt whose every request ends by deadline (our clock). *other is
 * set when the lease names a holder other than us (expired or not).
 */
static eo_kube_err attempt(eo_kube_lease *le, int64_t deadline, bool leading, bool *held,
			   bool *other, struct eo_kube_error *err)
{
	struct eo_kube_resource r = {"coordination.k8s.io/v1", "leases", le->ns, le->name};
	json_t *lease = NULL, *spec, *out = NULL;
	const char *holder;
	char ts[40];
	eo_kube_err rc;

	*held = false;
	*other = false;
	if (!bound(le, deadline, err))
		return EO_KUBE_ETIMEOUT;
	rc = eo_kube_get(le->c, &r, &lease, err);
	if (rc == EO_KUBE_ENOTFOUND)
		return bound(le, deadline, err) ? create_lease(le, held, err) : EO_KUBE_ETIMEOUT;
	if (rc != EO_KUBE_OK)
		return rc;
	spec = json_object_get(lease, "spec");
	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(lease, "spec", spec);
	}
	holder = json_string_value(json_object_get(spec, "holderIdentity"));
	observe(le, holder, json_string_value(json_object_get(spec, "renewTime")),
		eo_meta_resource_version(lease));
	*other = holder && holder[0] && strcmp(holder, le->id) != 0;
	if (*other && (leading || now(le) - le->obs_at < le->duration_ms)) {
		/* Held by someone else and not expired; or we thought we led, and someone
		 * took it: never take it back. */
		rc = EO_KUBE_OK;
		goto out;
	}

	wall_now(ts, sizeof(ts));
	if (!holder || strcmp(holder, le->id) != 0) {
		json_int_t tr = json_integer_value(json_object_get(spec, "leaseTransitions"));

		json_object_set_new(spec, "acquireTime", json_string(ts));
		json_object_set_new(spec, "leaseTransitions", json_integer(tr + 1));
	}
	json_object_set_new(spec, "holderIdentity", json_string(le->id));
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration_s(le)));
	json_object_set_new(spec, "renewTime", json_string(ts));
	/* The PUT carries the resourceVersion we read: a 409 means we lost. */
	if (!bound(le, deadline, err)) {
		rc = EO_KUBE_ETIMEOUT;
		goto out;
	}
	rc = eo_kube_update(le->c, &r, lease, &out, err);
	if (rc == EO_KUBE_OK) {
		observe(le, le->id, ts, eo_meta_resource_version(out));
		*held = true;
	} else if (rc == EO_KUBE_ECONFLICT) {
		rc = EO_KUBE_OK;
	}
out:
	json_decref(lease);
	json_decref(out);
	return rc;
}

eo_kube_err eo_kube_lease_try(eo_kube_lease *le, bool *held, struct eo_kube_error *err)
{
	bool other;

	return attempt(le, now(le) + le->deadline_ms, false, held, &other, err);
}

eo_kube_err eo_kube_lease_release(eo_kube_lease *le, struct eo_kube_error *err)
{
	struct eo_kube_resource r = {"coordination.k8s.io/v1", "leases", le->ns, le->name};
	json_t *lease = NULL, *spec;
	char ts[40];
	eo_kube_err rc;

	eo_kube_client_set_timeout(le->c, le->req_ms);
	rc = eo_kube_get(le->c, &r, &lease, err);
	if (rc == EO_KUBE_ENOTFOUND)
		return EO_KUBE_OK;
	if (rc != EO_KUBE_OK)
		return rc;
	spec = json_object_get(lease, "spec");
	if (!str_eq(json_string_value(json_object_get(spec, "holderIdentity")), le->id)) {
		json_decref(lease);
		return EO_KUBE_OK; /* not ours (any more) */
	}
	wall_now(ts, sizeof(ts));
	json_object_set_new(spec, "holderIdentity", json_string(""));
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
	json_object_set_new(spec, "renewTime", json_string(ts));
	rc = eo_kube_update(le->c, &r, lease, NULL, err);
	if (rc == EO_KUBE_ECONFLICT)
		rc = EO_KUBE_OK; /* someone else changed it: not ours to clear */
	json_decref(lease);
	return rc;
}

/* Sleeps ms unless stopping; returns false when stopping. */
static bool nap(eo_kube_lease *le, long ms)
{
	struct timespec ts = eo_mono_deadline_ms(ms);
	bool go;

	pthread_mutex_lock(&le->mu);
	while (!le->stopping && pthread_cond_timedwait(&le->cond, &le->mu, &ts) == 0)
		;
	go = !le->stopping;
	pthread_mutex_unlock(&le->mu);
	return go;
}

/* held_until > 0: we lead until then (our clock); 0: we do not lead. */
static void set_leader(eo_kube_lease *le, int64_t held_until, const char *why)
{
	bool v = held_until > 0;

	pthread_mutex_lock(&le->mu);
	le->leader = v;
	le->held_until = held_until;
	if (why)
		snprintf(le->why, sizeof(le->why), "%s", why);
	pthread_mutex_unlock(&le->mu);
	if (v && le->on_started)
		le->on_started(le->ud);
	if (!v && le->on_stopped)
		le->on_stopped(le->ud);
}

static void set_held_until(eo_kube_lease *le, int64_t t)
{
	pthread_mutex_lock(&le->mu);
	le->held_until = t;
	pthread_mutex_unlock(&le->mu);
}

/*
 * Leads from an attempt that started at start and took the lease. Every renew attempt is
 * bounded by the time left before the last successful renew's deadline; the lead ends at
 * that deadline, or at once when the lease names another holder. Returns false when
 * stopping (the lease has then been released).
 */
static bool lead(eo_kube_lease *le, int64_t start)
{
	struct eo_kube_error err = {0};
	int64_t until = start + le->deadline_ms;
	char why[sizeof(le->why)];

	set_leader(le, until, NULL);
	for (;;) {
		int64_t t = now(le);
		long wait = until - t < le->retry_ms ? (long)(until - t) : le->retry_ms;
		bool held = false, other = false;
		eo_kube_err rc;

		if (!nap(le, wait > 0 ? wait : 0)) {
			/* Stopping while leading: hand the lease over. */
			eo_kube_lease_release(le, &err);
			set_leader(le, 0, "stopped");
			return false;
		}
		t = now(le);
		if (t >= until) {
			snprintf(why, sizeof(why), "renew deadline (%ld ms) passed: %.150s",
				 le->deadline_ms, err.message[0] ? err.message : "no renew");
			break;
		}
		rc = attempt(le, until, true, &held, &other, &err);
		if (rc == EO_KUBE_OK && held) {
			until = t + le->deadline_ms;
			set_held_until(le, until);
			eo_kube_error_clear(&err);
		} else if (other) {
			snprintf(why, sizeof(why), "the lease is held by %.160s",
				 le->obs_holder ? le->obs_holder : "another candidate");
			break;
		} else if (rc == EO_KUBE_OK) {
			eo_kube_fail(&err, EO_KUBE_ECONFLICT, "renew lost a write race");
		}
	}
	set_leader(le, 0, why);
	return true;
}

static void *run(void *arg)
{
	eo_kube_lease *le = arg;
	struct eo_kube_error err;
	unsigned seed = (unsigned)mono_ms() ^ (unsigned)(uintptr_t)le;

	for (;;) {
		/* Candidate: try every retry period (plus up to 20% jitter). */
		long jitter = le->retry_ms / 5 > 0 ? rand_r(&seed) % (le->retry_ms / 5) : 0;
		int64_t start = now(le);
		bool held = false, other = false;

		if (attempt(le, start + le->deadline_ms, false, &held, &other, &err) ==
			EO_KUBE_OK &&
		    held) {
			if (!lead(le, start))
				break;
			continue;
		}
		if (!nap(le, le->retry_ms + jitter))
			break;
	}
	return NULL;
}

eo_kube_err eo_kube_lease_start(eo_kube_lease *le, struct eo_kube_error *err)
{
	if (le->started)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "elector already started");
	if (pthread_create(&le->thread, NULL, run, le) != 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "cannot start elector thread");
	le->started = true;
	return EO_KUBE_OK;
}

void eo_kube_lease_stop(eo_kube_lease *le)
{
	pthread_mutex_lock(&le->mu);
	le->stopping = true;
	pthread_cond_broadcast(&le->cond);
	pthread_mutex_unlock(&le->mu);
	if (le->started) {
		pthread_join(le->thread, NULL);
		le->started = false;
	}
}
