/*
 * kube/informer.c - the list/watch loop on a background thread.
 */
#include "kube/informer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "core/sleep.h"
#include "kube/watch.h"

struct eo_kube_informer {
	eo_kube_client *c;
	eo_kube_cache *cache;
	eo_kube_watch *watch;
	struct eo_kube_informer_handlers h;

	/* owned copies of the options */
	char *gv, *plural, *ns, *label_selector, *field_selector;
	long page_limit;
	int watch_timeout_s;
	long retry_min_ms, retry_max_ms;
	size_t max_object;
	json_t *skips; /* key -> resourceVersion of skipped objects already reported */
	/* health, only touched by the informer's thread */
	unsigned long failures;
	long long failing_since_ms;

	pthread_t thread;
	bool started;

	pthread_mutex_t mu; /* guards the fields below */
	pthread_cond_t cond;
	bool stopping;
	bool synced;
	bool exited;
	char *rv;
	struct eo_kube_informer_stats stats;
	unsigned seed;
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

eo_kube_informer *eo_kube_informer_new(eo_kube_client *c, const struct eo_kube_informer_opts *opts,
				       const struct eo_kube_informer_handlers *handlers)
{
	eo_kube_informer *inf;

	if (!c || !opts || !opts->res.gv || !opts->res.plural)
		return NULL;
	inf = calloc(1, sizeof(*inf));
	if (!inf)
		return NULL;
	inf->c = c;
	if (handlers)
		inf->h = *handlers;
	inf->gv = strdup(opts->res.gv);
	inf->plural = strdup(opts->res.plural);
	inf->ns = opts->res.ns && opts->res.ns[0] ? strdup(opts->res.ns) : NULL;
	inf->label_selector = dup_or_null(opts->label_selector);
	inf->field_selector = dup_or_null(opts->field_selector);
	inf->page_limit = opts->page_limit > 0 ? opts->page_limit : 500;
	inf->watch_timeout_s = opts->watch_timeout_s;
	inf->retry_min_ms = opts->retry_min_ms > 0 ? opts->retry_min_ms : 200;
	inf->retry_max_ms = opts->retry_max_ms > 0 ? opts->retry_max_ms : 30000;
	inf->max_object = opts->max_object;
	inf->skips = json_object();
	inf->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)inf;
	inf->cache = eo_kube_cache_new(opts->index_label);
	inf->watch = eo_kube_watch_new(c);
	pthread_mutex_init(&inf->mu, NULL);
	eo_cond_init_monotonic(&inf->cond);
	if (!inf->gv || !inf->plural || (opts->res.ns && opts->res.ns[0] && !inf->ns) ||
	    (opts->label_selector && !inf->label_selector) ||
	    (opts->field_selector && !inf->field_selector) || !inf->cache || !inf->watch ||
	    !inf->skips) {
		eo_kube_informer_free(inf);
		return NULL;
	}
	return inf;
}

void eo_kube_informer_free(eo_kube_informer *inf)
{
	if (!inf)
		return;
	eo_kube_informer_stop(inf);
	eo_kube_watch_free(inf->watch);
	eo_kube_cache_free(inf->cache);
	free(inf->gv);
	free(inf->plural);
	free(inf->ns);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf->rv);
	json_decref(inf->skips);
	pthread_cond_destroy(&inf->cond);
	pthread_mutex_destroy(&inf->mu);
	free(inf);
}

eo_kube_cache *eo_kube_informer_cache(eo_kube_informer *inf)
{
	return inf->cache;
}

bool eo_kube_informer_has_synced(eo_kube_informer *inf)
{
	bool s;

	pthread_mutex_lock(&inf->mu);
	s = inf->synced;
	pthread_mutex_unlock(&inf->mu);
	return s;
}

bool eo_kube_informer_wait_synced(eo_kube_informer *inf, long timeout_ms)
{
	struct timespec ts = eo_mono_deadline_ms(timeout_ms > 0 ? timeout_ms : 0);
	bool s;

	pthread_mutex_lock(&inf->mu);
	while (!inf->synced && !inf->stopping && !inf->exited) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&inf->cond, &inf->mu);
		} else if (pthread_cond_timedwait(&inf->cond, &inf->mu, &ts) != 0) {
			break;
		}
	}
	s = inf->synced;
	pthread_mutex_unlock(&inf->mu);
	return s;
}

char *eo_kube_informer_resource_version(eo_kube_informer *inf)
{
	char *rv;

	pthread_mutex_lock(&inf->mu);
	rv = dup_or_null(inf->rv);
	pthread_mutex_unlock(&inf->mu);
	return rv;
}

void eo_kube_informer_stats(eo_kube_informer *inf, struct eo_kube_informer_stats *out)
{
	pthread_mutex_lock(&inf->mu);
	*out = inf->stats;
	pthread_mutex_unlock(&inf->mu);
}

static bool stopping(eo_kube_informer *inf)
{
	bool s;

	pthread_mutex_lock(&inf->mu);
	s = inf->stopping;
	pthread_mutex_unlock(&inf->mu);
	return s;
}

/* Sleeps up to ms unless stop() is called; returns false when stopping. */
static bool sleep_unless_stopped(eo_kube_informer *inf, long ms)
{
	struct timespec ts = eo_mono_deadline_ms(ms);
	bool s;

	pthread_mutex_lock(&inf->mu);
	while (!inf->stopping && pthread_cond_timedwait(&inf->cond, &inf->mu, &ts) == 0)
		;
	s = !inf->stopping;
	pthread_mutex_unlock(&inf->mu);
	return s;
}

static void set_rv(eo_kube_informer *inf, const char *rv)
{
	char *copy;

	if (!rv || !rv[0])
		return;
	copy = strdup(rv);
	if (!copy)
		return;
	pthread_mutex_lock(&inf->mu);
	free(inf->rv);
	inf->rv = copy;
	pthread_mutex_unlock(&inf->mu);
}

static void count(eo_kube_informer *inf, unsigned long *field)
{
	pthread_mutex_lock(&inf->mu);
	(*field)++;
	pthread_mutex_unlock(&inf->mu);
}

static struct eo_kube_resource resource(eo_kube_informer *inf)
{
	struct eo_kube_resource r = {inf->gv, inf->plural, inf->ns, NULL};

	return r;
}

/* Stores one object and fires add or update. */
static void apply_upsert(eo_kube_informer *inf, json_t *obj)
{
	json_t *old = NULL;

	if (eo_kube_cache_upsert(inf->cache, obj, &old) != EO_KUBE_OK) {
		json_decref(old);
		return;
	}
	if (old) {
		if (inf->h.on_update)
			inf->h.on_update(inf->h.ud, old, obj);
	} else if (inf->h.on_add) {
		inf->h.on_add(inf->h.ud, obj);
	}
	json_decref(old);
}

static void apply_delete(eo_kube_informer *inf, json_t *obj)
{
	json_t *old = NULL;

	eo_kube_cache_remove(inf->cache, eo_meta_namespace(obj), eo_meta_name(obj), &old);
	/* Report the final state the server sent, even if we never saw it. */
	if (inf->h.on_delete)
		inf->h.on_delete(inf->h.ud, obj);
	json_decref(old);
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reports a skipped object once per resourceVersion. */
static void report_skip(eo_kube_informer *inf, const char *key, const struct eo_kube_objref *ref,
			eo_kube_err why, const char *detail, size_t size)
{
	struct eo_kube_informer_skip sk = {ref, why, detail, size};
	const char *prev = key ? json_string_value(json_object_get(inf->skips, key)) : NULL;

	count(inf, &inf->stats.skipped);
	if (key && prev && strcmp(prev, ref->rv) == 0)
		return;
	if (key) {
		if (json_object_size(inf->skips) >= 1024)
			json_object_clear(inf->skips); /* bounded: at worst, report again */
		json_object_set_new(inf->skips, key, json_string(ref->rv));
	}
	if (inf->h.on_skip)
		inf->h.on_skip(inf->h.ud, &sk);
}

/*
 * A list in progress: objects are applied as they are decoded (new and changed ones upserted,
 * firing add / update; unchanged ones, same resourceVersion, fire nothing) and their keys
 * recorded; when the list completes, cached objects it lacked are deleted.
 */
struct listing {
	eo_kube_informer *inf;
	json_t *seen;
	bool seen_all;
	char *rv;
};

static void seen_key(struct listing *l, const char *key)
{
	if (!key || json_object_set_new_nocheck(l->seen, key, json_true()) != 0)
		l->seen_all = false;
}

static int on_list_event(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct listing *l = ud;
	eo_kube_informer *inf = l->inf;

	switch (ev->type) {
	case EO_KUBE_OS_ITEM: {
		json_t *item = ev->obj, *cur;
		char *key = eo_kube_cache_key(eo_meta_namespace(item), eo_meta_name(item));
		const char *a, *b;

		if (!key) {
			if (eo_meta_name(item))
				l->seen_all = false; /* out of memory, not a nameless item */
			return 0;
		}
		seen_key(l, key);
		cur = eo_kube_cache_get(inf->cache, eo_meta_namespace(item), eo_meta_name(item));
		a = eo_meta_resource_version(cur);
		b = eo_meta_resource_version(item);
		if (!cur || !a || !b || strcmp(a, b) != 0)
			apply_upsert(inf, item);
		json_decref(cur);
		free(key);
		return 0;
	}
	case EO_KUBE_OS_SKIP: {
		/* Keep what we had of it: it exists, it is only unreadable now. */
		char *key = ev->ref->name[0] ? eo_kube_cache_key(ev->ref->ns, ev->ref->name) : NULL;

		if (ev->ref->name[0])
			seen_key(l, key);
		report_skip(inf, key, ev->ref, ev->why, ev->detail, ev->size);
		free(key);
		return 0;
	}
	case EO_KUBE_OS_END: {
		const char *rv = eo_meta_resource_version(ev->obj);

		free(l->rv);
		l->rv = rv && rv[0] ? strdup(rv) : NULL;
		return 0;
	}
	case EO_KUBE_OS_RESTART:
		json_object_clear(l->seen);
		l->seen_all = true;
		return 0;
	}
	return 0;
}

/* Deletes the cached objects a complete list did not have. */
static void delete_unseen(eo_kube_informer *inf, json_t *seen)
{
	json_t *keys = eo_kube_cache_keys(inf->cache), *k;
	size_t i;

	json_array_foreach(keys, i, k)
	{
		const char *key = json_string_value(k);
		const char *slash;
		json_t *old = NULL;

		if (json_object_get(seen, key))
			continue;
		slash = strchr(key, '/');
		if (slash) {
			char *ns = strndup(key, (size_t)(slash - key));

			if (ns)
				eo_kube_cache_remove(inf->cache, ns, slash + 1, &old);
			free(ns);
		} else {
			eo_kube_cache_remove(inf->cache, NULL, key, &old);
		}
		if (old && inf->h.on_delete)
			inf->h.on_delete(inf->h.ud, old);
		json_decref(old);
	}
	json_decref(keys);
}

static eo_kube_err do_list(eo_kube_informer *inf, struct eo_kube_error *err)
{
	struct eo_kube_resource r = resource(inf);
	struct eo_kube_list_opts lo = {
	    .label_selector = inf->label_selector,
	    .field_selector = inf->field_selector,
	    .limit = inf->page_limit,
	    .max_object = inf->max_object,
	};
	struct listing l = {.inf = inf, .seen = json_object(), .seen_all = true};
	eo_kube_err rc;

	if (!l.seen)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "list");
	rc = eo_kube_list_each(inf->c, &r, &lo, on_list_event, &l, err);
	if (rc == EO_KUBE_OK) {
		/* Deleting what the list lacks needs a complete record of what it had: out of
		 * memory, keep the extra objects (a later relist drops them) rather than
		 * report objects that still exist as deleted. */
		if (l.seen_all)
			delete_unseen(inf, l.seen);
		set_rv(inf, l.rv);
		pthread_mutex_lock(&inf->mu);
		inf->synced = true;
		inf->stats.lists++;
		pthread_cond_broadcast(&inf->cond);
		pthread_mutex_unlock(&inf->mu);
	}
	json_decref(l.seen);
	free(l.rv);
	return rc;
}

static void on_watch_skip(void *ud, const struct eo_kube_watch_skip *sk)
{
	eo_kube_informer *inf = ud;
	char *key = sk->ref->name[0]
			? eo_kube_cache_key(sk->ref->ns[0] ? sk->ref->ns : NULL, sk->ref->name)
			: NULL;

	if (sk->type == EO_KUBE_WATCH_DELETED && sk->ref->name[0]) {
		/* Gone is gone, however large its last state was. */
		json_t *old = NULL;

		eo_kube_cache_remove(inf->cache, sk->ref->ns[0] ? sk->ref->ns : NULL, sk->ref->name,
				     &old);
		if (old && inf->h.on_delete)
			inf->h.on_delete(inf->h.ud, old);
		json_decref(old);
		if (key)
			json_object_del(inf->skips, key);
	} else if (sk->type != EO_KUBE_WATCH_BOOKMARK) {
		report_skip(inf, key, sk->ref, sk->why, sk->detail, sk->size);
	}
	free(key);
	/* The event happened: resume after it. */
	set_rv(inf, sk->ref->rv);
}

static void healthy(eo_kube_informer *inf)
{
	if (inf->failures > 0 && inf->h.on_recover)
		inf->h.on_recover(inf->h.ud, inf->ns, inf->failures,
				  mono_ms() - inf->failing_since_ms);
	inf->failures = 0;
}

static void on_watch_open(void *ud)
{
	healthy(ud);
}

static void failed(eo_kube_informer *inf, const char *op, eo_kube_err rc,
		   const struct eo_kube_error *err)
{
	struct eo_kube_informer_failure f = {
	    .op = op,
	    .ns = inf->ns,
	    .rc = rc,
	    .http_status = err->http_status,
	    .reason = err->reason,
	    .message = err->message,
	};

	count(inf, &inf->stats.errors);
	if (rc != EO_KUBE_EGONE) {
		if (inf->failures++ == 0)
			inf->failing_since_ms = mono_ms();
		f.consecutive = inf->failures;
		f.failing_ms = mono_ms() - inf->failing_since_ms;
	}
	if (inf->h.on_failure)
		inf->h.on_failure(inf->h.ud, &f);
}

static int on_event(void *ud, enum eo_kube_watch_type type, json_t *obj)
{
	eo_kube_informer *inf = ud;

	switch (type) {
	case EO_KUBE_WATCH_ADDED:
	case EO_KUBE_WATCH_MODIFIED:
		apply_upsert(inf, obj);
		count(inf, &inf->stats.events);
		break;
	case EO_KUBE_WATCH_DELETED:
		apply_delete(inf, obj);
		count(inf, &inf->stats.events);
		break;
	case EO_KUBE_WATCH_BOOKMARK:
	case EO_KUBE_WATCH_ERROR:
		break;
	}
	/* Every event, bookmarks included, moves the resume point forward. */
	set_rv(inf, eo_meta_resource_version(obj));
	return 0;
}

static eo_kube_err do_watch(eo_kube_informer *inf, struct eo_kube_error *err)
{
	struct eo_kube_resource r = resource(inf);
	char *rv = eo_kube_informer_resource_version(inf);
	int timeout = inf->watch_timeout_s;
	struct eo_kube_watch_opts wo;
	eo_kube_err rc;

	if (timeout <= 0) {
		/* Spread reconnects like client-go: 5 to 10 minutes. */
		pthread_mutex_lock(&inf->mu);
		timeout = 300 + (int)(rand_r(&inf->seed) % 300);
		pthread_mutex_unlock(&inf->mu);
	}
	wo = (struct eo_kube_watch_opts){
	    .label_selector = inf->label_selector,
	    .field_selector = inf->field_selector,
	    .resource_version = rv,
	    .timeout_seconds = timeout,
	    .max_object = inf->max_object,
	    .on_skip = on_watch_skip,
	    .on_open = on_watch_open,
	};
	count(inf, &inf->stats.watches);
	rc = eo_kube_watch_run(inf->watch, &r, &wo, on_event, inf, err);
	free(rv);
	return rc;
}

static void *run(void *arg)
{
	eo_kube_informer *inf = arg;
	struct eo_kube_error err;
	long backoff = inf->retry_min_ms;
	bool need_list = true;

	while (!stopping(inf)) {
		eo_kube_err rc;
		const char *op = need_list ? "list" : "watch";

		memset(&err, 0, sizeof(err));
		if (need_list) {
			rc = do_list(inf, &err);
			if (rc == EO_KUBE_OK) {
				need_list = false;
				backoff = inf->retry_min_ms;
				healthy(inf);
				continue;
			}
		} else {
			rc = do_watch(inf, &err);
			if (rc == EO_KUBE_OK) {
				/* The server ended the stream; resume from the last version. */
				backoff = inf->retry_min_ms;
				continue;
			}
		}
		if (rc == EO_KUBE_ECANCELED && stopping(inf))
			break;
		failed(inf, op, rc, &err);
		if (!need_list &&
		    (rc == EO_KUBE_EGONE || rc == EO_KUBE_ETOOLARGE || rc == EO_KUBE_EPROTOCOL)) {
			/* Our version is too old or the stream is unusable: list again right
			 * away (a relist that fails backs off). */
			need_list = true;
			continue;
		}
		if (rc == EO_KUBE_EUNAUTHORIZED)
			eo_kube_config_token_invalidate(eo_kube_client_config(inf->c));
		if (!sleep_unless_stopped(inf, backoff))
			break;
		backoff = backoff > inf->retry_max_ms / 2 ? inf->retry_max_ms : backoff * 2;
	}
	pthread_mutex_lock(&inf->mu);
	inf->exited = true;
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->mu);
	return NULL;
}

eo_kube_err eo_kube_informer_start(eo_kube_informer *inf, struct eo_kube_error *err)
{
	if (inf->started)
		return eo_kube_fail(err, EO_KUBE_EINVALID, "informer already started");
	if (pthread_create(&inf->thread, NULL, run, inf) != 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "cannot start informer thread");
	inf->started = true;
	eo_kube_error_clear(err);
	return EO_KUBE_OK;
}

void eo_kube_informer_stop(eo_kube_informer *inf)
{
	pthread_mutex_lock(&inf->mu);
	inf->stopping = true;
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->mu);
	if (inf->watch) /* NULL when eo_kube_informer_new() ran out of memory */
		eo_kube_watch_cancel(inf->watch);
	if (inf->started) {
		pthread_join(inf->thread, NULL);
		inf->started = false;
	}
}
