/*
 * Unit tests for kube/informer against the fake apiserver: initial list and
 * has_synced, watch from the list's version, events applied to the cache
 * and handlers, resume from the last version (bookmarks included) after the
 * server ends a stream, relist on an ERROR 410 with a diff of the cache,
 * retry after a failed list, and a clean stop with an open watch.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/meta.h"
#include "support/fake_apiserver.h"
#include "support/tu_main.h"
#include "kube/informer.h"

#define CLUSTER_LABEL "etcd-operator.cozystack.io/cluster"

struct server {
	pthread_mutex_t mu;
	char *list_body;	/* what the next LIST returns */
	int list_failures_left; /* answer LIST with 500 this many times */
	int lists;
	bool expire_next_watch;	 /* answer the next watch with ERROR 410 */
	int watch_failures_left; /* answer watches with 403 this many times */
	char watch_rvs[8][16];
	int watches;
	char last_selector[128];
};

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct server *s = ud;
	const char *watch = eo_kube_fake_arg(rq, "watch");
	const char *sel = eo_kube_fake_arg(rq, "labelSelector");

	pthread_mutex_lock(&s->mu);
	snprintf(s->last_selector, sizeof(s->last_selector), "%s", sel ? sel : "");
	if (strcmp(rq->path, "/apis/etcd-operator.cozystack.io/v1alpha2/namespaces/db/"
			     "etcdmembers") != 0) {
		rs->status = 404;
		rs->body = strdup("{\"kind\":\"Status\",\"code\":404}");
	} else if (!watch) {
		if (s->list_failures_left > 0) {
			s->list_failures_left--;
			rs->status = 500;
			rs->body = strdup("{\"kind\":\"Status\",\"code\":500,\"reason\":"
					  "\"InternalError\"}");
		} else {
			s->lists++;
			rs->body = strdup(s->list_body);
		}
	} else {
		const char *rv = eo_kube_fake_arg(rq, "resourceVersion");

		if (s->watches < 8)
			snprintf(s->watch_rvs[s->watches], sizeof(s->watch_rvs[0]), "%s",
				 rv ? rv : "");
		s->watches++;
		if (s->watch_failures_left > 0) {
			s->watch_failures_left--;
			rs->status = 403;
			rs->body =
			    strdup("{\"kind\":\"Status\",\"code\":403,\"reason\":"
				   "\"Forbidden\",\"message\":\"etcdmembers is forbidden\"}");
		} else if (s->expire_next_watch) {
			s->expire_next_watch = false;
			rs->body = strdup("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
					  "\"code\":410,\"reason\":\"Expired\",\"message\":"
					  "\"too old resource version\"}}\n");
		} else {
			rs->stream = true;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

static void set_list(struct server *s, const char *body)
{
	pthread_mutex_lock(&s->mu);
	free(s->list_body);
	s->list_body = strdup(body);
	pthread_mutex_unlock(&s->mu);
}

static int watches(struct server *s)
{
	int n;

	pthread_mutex_lock(&s->mu);
	n = s->watches;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Handler log: "+name", "~name@rv", "-name". */
struct seen {
	pthread_mutex_t mu;
	char log[64][32];
	int n;
};

static void note(struct seen *s, char op, json_t *obj)
{
	pthread_mutex_lock(&s->mu);
	if (s->n < 64) {
		if (op == '~')
			snprintf(s->log[s->n], sizeof(s->log[0]), "~%s@%s", eo_meta_name(obj),
				 eo_meta_resource_version(obj));
		else
			snprintf(s->log[s->n], sizeof(s->log[0]), "%c%s", op, eo_meta_name(obj));
	}
	s->n++;
	pthread_mutex_unlock(&s->mu);
}

static void on_add(void *ud, json_t *obj)
{
	note(ud, '+', obj);
}

static void on_update(void *ud, json_t *old_obj, json_t *new_obj)
{
	/* The old object is the previous cached state. */
	assert_string_equal(eo_meta_name(old_obj), eo_meta_name(new_obj));
	note(ud, '~', new_obj);
}

static void on_delete(void *ud, json_t *obj)
{
	note(ud, '-', obj);
}

static bool seen_has(struct seen *s, const char *entry)
{
	bool found = false;

	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->n && i < 64; i++)
		if (strcmp(s->log[i], entry) == 0)
			found = true;
	pthread_mutex_unlock(&s->mu);
	return found;
}

static int seen_count(struct seen *s)
{
	int n;

	pthread_mutex_lock(&s->mu);
	n = s->n;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Polls cond for up to 5 s. */
#define WAIT_FOR(cond)                                                                             \
	do {                                                                                       \
		for (int w_ = 0; w_ < 2500 && !(cond); w_++)                                       \
			usleep(2000);                                                              \
		assert_true(cond);                                                                 \
	} while (0)

static bool rv_is(eo_kube_informer *inf, const char *want)
{
	char *rv = eo_kube_informer_resource_version(inf);
	bool ok = rv && strcmp(rv, want) == 0;

	free(rv);
	return ok;
}

static unsigned long events_of(eo_kube_informer *inf)
{
	struct eo_kube_informer_stats st;

	eo_kube_informer_stats(inf, &st);
	return st.events;
}

#define MEMBER(name, rv, cluster, owner)                                                           \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"db\",\"resourceVersion\":\"" rv      \
	"\",\"labels\":{\"" CLUSTER_LABEL "\":\"" cluster "\"},"                                   \
	"\"ownerReferences\":[{\"uid\":\"" owner "\"}]}}"

static void test_list_watch_resume_relist(void **state)
{
	struct server srv = {0};
	struct seen seen = {0};
	eo_kube_fake *fake;
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	eo_kube_informer *inf;
	struct eo_kube_informer_opts o = {
	    .res = {"etcd-operator.cozystack.io/v1alpha2", "etcdmembers", "db", NULL},
	    .label_selector = "app.kubernetes.io/managed-by=etcd-operator",
	    .index_label = CLUSTER_LABEL,
	    .watch_timeout_s = 60,
	    .retry_min_ms = 10,
	};
	struct eo_kube_informer_handlers h = {
	    .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .ud = &seen};
	struct eo_kube_informer_stats st;
	json_t *got, *l;

	(void)state;
	pthread_mutex_init(&srv.mu, NULL);
	pthread_mutex_init(&seen.mu, NULL);
	set_list(&srv, "{\"kind\":\"EtcdMemberList\",\"metadata\":{\"resourceVersion\":\"11\"},"
		       "\"items\":[" MEMBER("a", "10", "main", "uid-main") "," MEMBER(
			   "b", "11", "main", "uid-main") "]}");
	srv.list_failures_left = 1; /* the first list fails: the informer retries */
	fake = eo_kube_fake_start(handler, &srv);
	assert_non_null(fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fake), "t", NULL, &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, NULL), EO_KUBE_OK);
	inf = eo_kube_informer_new(c, &o, &h);
	assert_non_null(inf);
	assert_false(eo_kube_informer_has_synced(inf));
	assert_int_equal(eo_kube_informer_start(inf, NULL), EO_KUBE_OK);

	/* Initial list (after one failure) fills the cache. */
	assert_true(eo_kube_informer_wait_synced(inf, 5000));
	assert_true(eo_kube_informer_has_synced(inf));
	assert_int_equal(eo_kube_cache_len(eo_kube_informer_cache(inf)), 2);
	assert_true(seen_has(&seen, "+a"));
	assert_true(seen_has(&seen, "+b"));
	eo_kube_informer_stats(inf, &st);
	assert_true(st.errors >= 1);
	assert_string_equal(srv.last_selector, "app.kubernetes.io/managed-by=etcd-operator");
	l = eo_kube_cache_by_label(eo_kube_informer_cache(inf), "main");
	assert_int_equal(json_array_size(l), 2);
	json_decref(l);

	/* It watches from the list's version. */
	WAIT_FOR(eo_kube_fake_open_streams(fake) == 1);
	assert_string_equal(srv.watch_rvs[0], "11");

	/* Events update the cache and call the handlers; bookmarks move the version. */
	eo_kube_fake_push(
	    fake,
	    "{\"type\":\"MODIFIED\",\"object\":" MEMBER(
		"a", "12", "main",
		"uid-main") "}\n"
			    "{\"type\":\"ADDED\",\"object\":" MEMBER(
				"c", "13", "main",
				"uid-main") "}\n"
					    "{\"type\":\"DELETED\",\"object\":" MEMBER(
						"b", "14", "main",
						"uid-main") "}\n"
							    "{\"type\":\"BOOKMARK\",\"object\":{"
							    "\"metadata\":"
							    "{\"resourceVersion\":\"20\"}}}\n");
	WAIT_FOR(events_of(inf) == 3 && rv_is(inf, "20"));
	assert_true(seen_has(&seen, "~a@12"));
	assert_true(seen_has(&seen, "+c"));
	assert_true(seen_has(&seen, "-b"));
	got = eo_kube_cache_get(eo_kube_informer_cache(inf), "db", "a");
	assert_string_equal(eo_meta_resource_version(got), "12");
	json_decref(got);
	got = eo_kube_cache_get(eo_kube_informer_cache(inf), "db", "b");
	assert_null(got);
	l = eo_kube_cache_by_owner(eo_kube_informer_cache(inf), "uid-main");
	assert_int_equal(json_array_size(l), 2); /* a and c */
	json_decref(l);

	/* The server ends the stream: the informer resumes from the bookmark. */
	eo_kube_fake_close_streams(fake);
	WAIT_FOR(watches(&srv) >= 2 && eo_kube_fake_open_streams(fake) == 1);
	assert_string_equal(srv.watch_rvs[1], "20");
	eo_kube_informer_stats(inf, &st);
	assert_int_equal(st.lists, 1);

	/* A 410 on the next watch makes it relist and diff the cache:
	 * c vanished, d appeared, a is unchanged (no update fired). */
	set_list(&srv, "{\"kind\":\"EtcdMemberList\",\"metadata\":{\"resourceVersion\":\"30\"},"
		       "\"items\":[" MEMBER("a", "12", "main", "uid-main") "," MEMBER(
			   "d", "30", "other", "uid-other") "]}");
	pthread_mutex_lock(&srv.mu);
	srv.expire_next_watch = true;
	pthread_mutex_unlock(&srv.mu);
	{
		int before = seen_count(&seen);

		eo_kube_fake_close_streams(fake);
		WAIT_FOR(seen_has(&seen, "-c") && seen_has(&seen, "+d"));
		WAIT_FOR(eo_kube_fake_open_streams(fake) == 1 && watches(&srv) >= 4);
		assert_int_equal(seen_count(&seen), before + 2);
	}
	assert_string_equal(srv.watch_rvs[2], "20"); /* the one answered with 410 */
	assert_string_equal(srv.watch_rvs[3], "30"); /* after the relist */
	eo_kube_informer_stats(inf, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(eo_kube_cache_len(eo_kube_informer_cache(inf)), 2);
	l = eo_kube_cache_by_label(eo_kube_informer_cache(inf), "other");
	assert_int_equal(json_array_size(l), 1);
	json_decref(l);

	/* Stop with an open watch: returns promptly and joins the thread. */
	eo_kube_informer_stop(inf);
	eo_kube_informer_stop(inf); /* idempotent */
	eo_kube_informer_free(inf);
	eo_kube_client_free(c);
	eo_kube_fake_stop(fake);
	free(srv.list_body);
	pthread_mutex_destroy(&srv.mu);
	pthread_mutex_destroy(&seen.mu);
}

static void test_stop_before_sync(void **state)
{
	eo_kube_config *cfg = NULL;
	eo_kube_client *c = NULL;
	eo_kube_informer *inf;
	struct eo_kube_informer_opts o = {
	    .res = {"v1", "pods", NULL, NULL},
	    .retry_min_ms = 20,
	};

	(void)state;
	/* Nothing listens on port 1: lists keep failing and backing off. */
	assert_int_equal(eo_kube_config_new("http://127.0.0.1:1", NULL, NULL, &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &c, NULL), EO_KUBE_OK);
	inf = eo_kube_informer_new(c, &o, NULL);
	assert_non_null(inf);
	assert_int_equal(eo_kube_informer_start(inf, NULL), EO_KUBE_OK);
	assert_false(eo_kube_informer_wait_synced(inf, 100));
	eo_kube_informer_free(inf); /* stops and joins */
	eo_kube_client_free(c);
}

/* Skip and health reports, as the manager sees them. The seen log comes first so that the
 * add / update / delete handlers can take the same ud. */
struct reports {
	struct seen seen;
	pthread_mutex_t mu;
	char skips[8][64];
	int nskips;
	int failures, recovers;
	unsigned long last_consecutive, recovered_after;
	int last_http;
	char last_op[8], last_reason[32];
	int expired;
};

static void on_skip(void *ud, const struct eo_kube_informer_skip *sk)
{
	struct reports *r = ud;

	pthread_mutex_lock(&r->mu);
	if (r->nskips < 8)
		snprintf(r->skips[r->nskips], sizeof(r->skips[0]), "%.20s/%.20s@%.10s:%s",
			 sk->ref->ns, sk->ref->name, sk->ref->rv,
			 sk->why == EO_KUBE_ETOOLARGE ? "big" : "bad");
	r->nskips++;
	pthread_mutex_unlock(&r->mu);
}

static void on_failure(void *ud, const struct eo_kube_informer_failure *f)
{
	struct reports *r = ud;

	pthread_mutex_lock(&r->mu);
	if (f->rc == EO_KUBE_EGONE) {
		r->expired++;
	} else {
		r->failures++;
		r->last_consecutive = f->consecutive;
		r->last_http = f->http_status;
		snprintf(r->last_op, sizeof(r->last_op), "%s", f->op);
		snprintf(r->last_reason, sizeof(r->last_reason), "%s", f->reason);
	}
	pthread_mutex_unlock(&r->mu);
}

static void on_recover(void *ud, const char *ns, unsigned long failures, long long failing_ms)
{
	struct reports *r = ud;

	(void)failing_ms;
	assert_string_equal(ns, "db");
	pthread_mutex_lock(&r->mu);
	r->recovers++;
	r->recovered_after = failures;
	pthread_mutex_unlock(&r->mu);
}

static int nskips(struct reports *r)
{
	int n;

	pthread_mutex_lock(&r->mu);
	n = r->nskips;
	pthread_mutex_unlock(&r->mu);
	return n;
}

static int recovers(struct reports *r)
{
	int n;

	pthread_mutex_lock(&r->mu);
	n = r->recovers;
	pthread_mutex_unlock(&r->mu);
	return n;
}

struct fx {
	struct server srv;
	struct reports rep;
	eo_kube_fake *fake;
	eo_kube_client *c;
	eo_kube_informer *inf;
};

static struct fx *fx_start(const char *list, size_t max_object, int watch_failures)
{
	struct fx *f = calloc(1, sizeof(*f));
	eo_kube_config *cfg = NULL;
	struct eo_kube_informer_opts o = {
	    .res = {"etcd-operator.cozystack.io/v1alpha2", "etcdmembers", "db", NULL},
	    .watch_timeout_s = 60,
	    .retry_min_ms = 10,
	    .retry_max_ms = 20,
	    .max_object = max_object,
	};
	struct eo_kube_informer_handlers h = {.on_add = on_add,
					      .on_update = on_update,
					      .on_delete = on_delete,
					      .on_skip = on_skip,
					      .on_failure = on_failure,
					      .on_recover = on_recover,
					      .ud = &f->rep};

	assert_non_null(f);
	pthread_mutex_init(&f->srv.mu, NULL);
	pthread_mutex_init(&f->rep.mu, NULL);
	pthread_mutex_init(&f->rep.seen.mu, NULL);
	set_list(&f->srv, list);
	f->srv.watch_failures_left = watch_failures;
	f->fake = eo_kube_fake_start(handler, &f->srv);
	assert_non_null(f->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(f->fake), "t", NULL, &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &f->c, NULL), EO_KUBE_OK);
	f->inf = eo_kube_informer_new(f->c, &o, &h);
	assert_non_null(f->inf);
	assert_int_equal(eo_kube_informer_start(f->inf, NULL), EO_KUBE_OK);
	return f;
}

static void fx_stop(struct fx *f)
{
	eo_kube_informer_free(f->inf);
	eo_kube_client_free(f->c);
	eo_kube_fake_stop(f->fake);
	free(f->srv.list_body);
	pthread_mutex_destroy(&f->srv.mu);
	pthread_mutex_destroy(&f->rep.mu);
	pthread_mutex_destroy(&f->rep.seen.mu);
	free(f);
}

#define OBJ(name, rv, extra)                                                                       \
	"{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"db\",\"resourceVersion\":\"" rv      \
	"\"" extra "}}"
#define PAD16 "0123456789abcdef"
#define PAD64 PAD16 PAD16 PAD16 PAD16
#define PAD1K                                                                                      \
	PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64 PAD64  \
	    PAD64
/* 5 KiB: over the 4500-byte cap the test sets, which the deep object (4.2 KiB) is under. */
#define BIG(name, rv)                                                                              \
	OBJ(name, rv, ",\"annotations\":{\"pad\":\"" PAD1K PAD1K PAD1K PAD1K PAD1K "\"}")

/*
 * One tenant's object over the cap, or too deep to decode, does not take the page or the
 * stream with it: the others are cached, the bad one is reported once per version, the cache
 * keeps its last good version, and a DELETED still removes it. managedFields are not cached.
 */
static void test_oversized_and_deep_objects_skipped(void **state)
{
	char list[16000];
	size_t n = 0;
	struct fx *f;
	json_t *got;
	struct eo_kube_informer_stats st;

	(void)state;
	n += (size_t)snprintf(
	    list, sizeof(list),
	    "{\"metadata\":{\"resourceVersion\":\"11\"},\"items\":[" OBJ(
		"a", "5",
		",\"managedFields\":[{\"manager\":\"m\"}]") "," OBJ("c", "6",
								    "") ","
									"{\"metadata\":{\"name\":"
									"\"deep\",\"namespace\":"
									"\"db\","
									"\"resourceVersion\":\"7\"}"
									",\"spec\":");
	for (int i = 0; i < 2100; i++)
		list[n++] = '[';
	for (int i = 0; i < 2100; i++)
		list[n++] = ']';
	snprintf(list + n, sizeof(list) - n, "}," BIG("huge", "8") "," OBJ("b", "10", "") "]}");
	f = fx_start(list, 4500, 0);

	assert_true(eo_kube_informer_wait_synced(f->inf, 5000));
	WAIT_FOR(nskips(&f->rep) == 2);
	assert_int_equal(eo_kube_cache_len(eo_kube_informer_cache(f->inf)), 3); /* a, b, c */
	assert_string_equal(f->rep.skips[0], "db/deep@7:bad");
	assert_string_equal(f->rep.skips[1], "db/huge@8:big");
	got = eo_kube_cache_get(eo_kube_informer_cache(f->inf), "db", "a");
	assert_non_null(got);
	assert_null(json_object_get(json_object_get(got, "metadata"), "managedFields"));
	json_decref(got);

	/* c grows over the cap: skipped, reported, the cache keeps c@6. The same version again
	 * is not reported twice. Then a small event after it still arrives. */
	WAIT_FOR(eo_kube_fake_open_streams(f->fake) == 1);
	eo_kube_fake_push(f->fake,
			  "{\"type\":\"MODIFIED\",\"object\":" BIG(
			      "c", "12") "}\n"
					 "{\"type\":\"MODIFIED\",\"object\":" BIG(
					     "c", "12") "}\n"
							"{\"type\":\"ADDED\",\"object\":" OBJ(
							    "d", "13", "") "}\n");
	WAIT_FOR(seen_has(&f->rep.seen, "+d"));
	assert_int_equal(nskips(&f->rep), 3);
	assert_string_equal(f->rep.skips[2], "db/c@12:big");
	assert_true(rv_is(f->inf, "13"));
	got = eo_kube_cache_get(eo_kube_informer_cache(f->inf), "db", "c");
	assert_string_equal(eo_meta_resource_version(got), "6");
	json_decref(got);

	/* Deleting an object whose last state is over the cap still removes it. */
	eo_kube_fake_push(f->fake, "{\"type\":\"DELETED\",\"object\":" BIG("c", "14") "}\n");
	WAIT_FOR(seen_has(&f->rep.seen, "-c"));
	assert_null(eo_kube_cache_get(eo_kube_informer_cache(f->inf), "db", "c"));
	assert_true(rv_is(f->inf, "14"));
	assert_int_equal(nskips(&f->rep), 3);
	eo_kube_informer_stats(f->inf, &st);
	assert_int_equal(st.lists, 1);	 /* no relist for any of it */
	assert_int_equal(st.skipped, 4); /* the DELETED was applied, not skipped */
	fx_stop(f);
}

/* A watch that keeps failing is reported with its HTTP status and the count in a row; the
 * first watch that opens again reports the recovery. */
static void test_failing_watch_reported_and_recovers(void **state)
{
	struct fx *f = fx_start("{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":[]}", 0, 3);

	(void)state;
	assert_true(eo_kube_informer_wait_synced(f->inf, 5000));
	WAIT_FOR(recovers(&f->rep) == 1);
	pthread_mutex_lock(&f->rep.mu);
	assert_int_equal(f->rep.failures, 3);
	assert_int_equal(f->rep.last_consecutive, 3);
	assert_int_equal(f->rep.last_http, 403);
	assert_string_equal(f->rep.last_op, "watch");
	assert_string_equal(f->rep.last_reason, "Forbidden");
	assert_int_equal(f->rep.recovered_after, 3);
	pthread_mutex_unlock(&f->rep.mu);
	WAIT_FOR(eo_kube_fake_open_streams(f->fake) == 1);
	/* A 410 is reported as an expiry, not as a failure. */
	pthread_mutex_lock(&f->srv.mu);
	f->srv.expire_next_watch = true;
	pthread_mutex_unlock(&f->srv.mu);
	eo_kube_fake_close_streams(f->fake);
	WAIT_FOR(f->rep.expired == 1 && eo_kube_fake_open_streams(f->fake) == 1);
	pthread_mutex_lock(&f->rep.mu);
	assert_int_equal(f->rep.failures, 3);
	assert_int_equal(f->rep.recovers, 1);
	pthread_mutex_unlock(&f->rep.mu);
	fx_stop(f);
}

TU_MAIN(test_list_watch_resume_relist, test_stop_before_sync,
	test_oversized_and_deep_objects_skipped, test_failing_watch_reported_and_recovers)
