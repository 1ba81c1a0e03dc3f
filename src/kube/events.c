/*
 * kube/events.c - Event building and a small dedup cache.
 */
#include "kube/events.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"

struct eo_kube_recorder {
	eo_kube_client *c;
	char *component, *instance;
	long window_ms;
	long min_write_ms; /* repeats sooner than this after the last write are only counted */
	size_t max_tracked;
	int64_t (*now_fn)(void *ud);
	void *clock_ud;
	pthread_mutex_t mu;
	/* dedup key -> {"name", "namespace", "count", "last"}: count is every occurrence (the
	 * server has it as of the last write), last the time of the last write */
	json_t *seen;
};

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void rfc3339(int64_t ms, char *buf, size_t cap)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Copies at most max bytes of s without splitting a UTF-8 sequence. */
static char *cut_utf8(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	return strndup(s, n);
}

json_t *eo_kube_event_build(const json_t *involved, const char *type, const char *reason,
			    const char *message, const char *component, const char *instance,
			    int64_t now_ms)
{
	const char *name = eo_meta_name(involved);
	const char *ns = eo_meta_namespace(involved);
	json_t *ev = NULL, *ref;
	char ts[32], *ev_name = NULL, *msg = NULL;
	const char *ref_keys[][2] = {
	    {"apiVersion", json_string_value(json_object_get(involved, "apiVersion"))},
	    {"kind", json_string_value(json_object_get(involved, "kind"))},
	    {"name", name},
	    {"namespace", ns},
	    {"uid", eo_meta_uid(involved)},
	    {"resourceVersion", eo_meta_resource_version(involved)},
	};

	if (!name || !type || !reason || !message ||
	    (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0))
		return NULL;
	if (asprintf(&ev_name, "%s.%llx", name, (unsigned long long)now_ms * 1000000ULL) < 0)
		return NULL;
	msg = cut_utf8(message, EO_KUBE_EVENT_MESSAGE_MAX);
	ref = json_object();
	if (!msg || !ref)
		goto out;
	for (size_t i = 0; i < sizeof(ref_keys) / sizeof(ref_keys[0]); i++)
		if (ref_keys[i][1])
			json_object_set_new(ref, ref_keys[i][0], json_string(ref_keys[i][1]));
	rfc3339(now_ms, ts, sizeof(ts));
	ev = json_pack("{s:s, s:s, s:{s:s, s:s}, s:O, s:s, s:s, s:s, s:{s:s}, s:s, s:s, s:i, "
		       "s:s, s:s}",
		       "apiVersion", "v1", "kind", "Event", "metadata", "name", ev_name,
		       "namespace", ns && ns[0] ? ns : "default", "involvedObject", ref, "reason",
		       reason, "message", msg, "type", type, "source", "component", component,
		       "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent",
		       component, "reportingInstance", instance ? instance : "");
out:
	json_decref(ref);
	free(ev_name);
	free(msg);
	return ev;
}

eo_kube_recorder *eo_kube_recorder_new(eo_kube_client *c, const struct eo_kube_recorder_opts *opts)
{
	eo_kube_recorder *rec = calloc(1, sizeof(*rec));

	if (!rec)
		return NULL;
	rec->c = c;
	rec->component = strdup(opts && opts->component ? opts->component : "etcd-operator");
	rec->instance = strdup(opts && opts->instance ? opts->instance : "");
	rec->window_ms = opts && opts->dedup_window_ms > 0 ? opts->dedup_window_ms : 600000;
	rec->max_tracked = opts && opts->max_tracked > 0 ? opts->max_tracked : 512;
	rec->min_write_ms = !opts || opts->min_write_interval_ms == 0 ? 60000
			    : opts->min_write_interval_ms < 0	      ? 0
								      : opts->min_write_interval_ms;
	rec->now_fn = opts ? opts->now_ms : NULL;
	rec->clock_ud = opts ? opts->clock_ud : NULL;
	rec->seen = json_object();
	pthread_mutex_init(&rec->mu, NULL);
	if (!rec->component || !rec->instance || !rec->seen) {
		eo_kube_recorder_free(rec);
		return NULL;
	}
	return rec;
}

void eo_kube_recorder_free(eo_kube_recorder *rec)
{
	if (!rec)
		return;
	free(rec->component);
	free(rec->instance);
	json_decref(rec->seen);
	pthread_mutex_destroy(&rec->mu);
	free(rec);
}

/* Drops the least recently used entry. Lock held. */
static void evict_oldest(eo_kube_recorder *rec)
{
	const char *k, *oldest = NULL;
	json_int_t best = 0;
	json_t *v;

	json_object_foreach(rec->seen, k, v)
	{
		json_int_t last = json_integer_value(json_object_get(v, "last"));

		if (!oldest || last < best) {
			oldest = k;
			best = last;
		}
	}
	if (oldest)
		json_object_del(rec->seen, oldest);
}

static void remember(eo_kube_recorder *rec, const char *key, const char *name, const char *ns,
		     json_int_t count, int64_t now_ms)
{
	pthread_mutex_lock(&rec->mu);
	if (!json_object_get(rec->seen, key) && json_object_size(rec->seen) >= rec->max_tracked)
		evict_oldest(rec);
	json_object_set_new_nocheck(rec->seen, key,
				    json_pack("{s:s, s:s, s:I, s:I}", "name", name, "namespace", ns,
					      "count", count, "last", (json_int_t)now_ms));
	pthread_mutex_unlock(&rec->mu);
}

eo_kube_err eo_kube_event(eo_kube_recorder *rec, const json_t *involved, const char *type,
			  const char *reason, struct eo_kube_error *err, const char *fmt, ...)
{
	int64_t now_ms = rec->now_fn ? rec->now_fn(rec->clock_ud) : wall_ms();
	const char *uid = eo_meta_uid(involved);
	const char *name = eo_meta_name(involved);
	const char *ns = eo_meta_namespace(involved);
	char *message = NULL, *key = NULL, *prev_name = NULL, *prev_ns = NULL;
	json_t *ev = NULL, *out = NULL, *patch = NULL;
	json_int_t count = 0;
	va_list ap;
	int n;
	eo_kube_err rc;

	va_start(ap, fmt);
	n = vasprintf(&message, fmt, ap);
	va_end(ap);
	if (n < 0) {
		message = NULL;
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "event message");
		goto out;
	}
	if (!name || !type || !reason) {
		rc = eo_kube_fail(err, EO_KUBE_EINVALID,
				  "event needs an involved object name, "
				  "a type and a reason");
		goto out;
	}
	if (asprintf(&key, "%s/%s/%s|%s|%s|%.*s", uid ? uid : "", ns ? ns : "", name, type, reason,
		     EO_KUBE_EVENT_MESSAGE_MAX, message) < 0) {
		key = NULL;
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "event key");
		goto out;
	}

	/* Seen recently? Then bump the existing Event instead of a new one. */
	pthread_mutex_lock(&rec->mu);
	{
		json_t *e = json_object_get(rec->seen, key);
		int64_t since = e ? now_ms - json_integer_value(json_object_get(e, "last")) : 0;

		if (e && since < rec->min_write_ms) {
			/* Too soon after the last write: count it for the next one. */
			json_object_set_new(
			    e, "count",
			    json_integer(json_integer_value(json_object_get(e, "count")) + 1));
			pthread_mutex_unlock(&rec->mu);
			rc = EO_KUBE_OK;
			goto out;
		}
		if (e && since < rec->window_ms) {
			prev_name = strdup(json_string_value(json_object_get(e, "name")));
			prev_ns = strdup(json_string_value(json_object_get(e, "namespace")));
			count = json_integer_value(json_object_get(e, "count"));
		}
	}
	pthread_mutex_unlock(&rec->mu);

	if (prev_name && prev_ns) {
		struct eo_kube_resource r = {"v1", "events", prev_ns, prev_name};
		char ts[32];

		rfc3339(now_ms, ts, sizeof(ts));
		patch = json_pack("{s:I, s:s}", "count", count + 1, "lastTimestamp", ts);
		if (!patch) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "event patch");
			goto out;
		}
		rc = eo_kube_patch(rec->c, &r, patch, NULL, err);
		if (rc == EO_KUBE_OK) {
			remember(rec, key, prev_name, prev_ns, count + 1, now_ms);
			goto out;
		}
		if (rc != EO_KUBE_ENOTFOUND)
			goto out;
		/* The Event expired on the server: start a new one. */
	}

	ev = eo_kube_event_build(involved, type, reason, message, rec->component, rec->instance,
				 now_ms);
	if (!ev) {
		rc = eo_kube_fail(err, EO_KUBE_EINVALID,
				  "cannot build event (type must be "
				  "Normal or Warning)");
		goto out;
	}
	{
		struct eo_kube_resource r = {"v1", "events", NULL, NULL};

		rc = eo_kube_create(rec->c, &r, ev, &out, err);
	}
	if (rc == EO_KUBE_OK)
		remember(rec, key, eo_meta_name(ev), eo_meta_namespace(ev), 1, now_ms);
out:
	free(message);
	free(key);
	free(prev_name);
	free(prev_ns);
	json_decref(ev);
	json_decref(out);
	json_decref(patch);
	return rc;
}
