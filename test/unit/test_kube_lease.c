/*
 * Unit tests for kube/lease against a fake apiserver that stores one Lease
 * with resourceVersion checks: create when missing, renew, respect a live
 * holder, take over after expiry (observed on our clock), a 409 race,
 * release, and the election thread's start/stop callbacks; the fences: a renew
 * that hangs ends leadership at the renew deadline (not at the request
 * timeout), and a renew that reads another holder ends it at once.
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
#include <time.h>
#include <unistd.h>

#include "api/meta.h"
#include "support/fake_apiserver.h"
#include "kube/lease.h"
#include "support/testutil.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/ops/leases/etcd-operator"

struct store {
	pthread_mutex_t mu;
	json_t *lease; /* NULL = absent */
	int rv;
	int force_conflicts; /* answer this many PUTs with 409 */
	int puts, creates;
	bool hang_puts; /* PUTs block until cleared (at most 5 s), then fail */
	pthread_cond_t unhang;
};

static void bump(struct store *s, json_t *obj)
{
	char rv[16];

	snprintf(rv, sizeof(rv), "%d", ++s->rv);
	json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(rv));
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct store *s = ud;

	pthread_mutex_lock(&s->mu);
	if (strcmp(rq->method, "POST") == 0 &&
	    strcmp(rq->path, "/apis/coordination.k8s.io/v1/namespaces/ops/leases") == 0) {
		s->creates++;
		if (s->lease) {
			rs->status = 409;
			rs->body = tu_status_body(409, "AlreadyExists", NULL);
		} else {
			s->lease = json_loads(rq->body, 0, NULL);
			bump(s, s->lease);
			rs->status = 201;
			rs->body = json_dumps(s->lease, JSON_COMPACT);
		}
	} else if (strcmp(rq->path, LEASE_PATH) != 0 || !s->lease) {
		rs->status = 404;
		rs->body = tu_status_body(404, "NotFound", NULL);
	} else if (strcmp(rq->method, "GET") == 0) {
		rs->body = json_dumps(s->lease, JSON_COMPACT);
	} else if (strcmp(rq->method, "PUT") == 0 && s->hang_puts) {
		struct timespec until;

		/* An apiserver that accepted the connection and never answers. */
		s->puts++;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		while (s->hang_puts && pthread_cond_timedwait(&s->unhang, &s->mu, &until) == 0)
			;
		rs->status = 503;
		rs->body = tu_status_body(503, "ServiceUnavailable", NULL);
	} else if (strcmp(rq->method, "PUT") == 0) {
		json_t *obj = json_loads(rq->body, 0, NULL);
		const char *rv = eo_meta_resource_version(obj);

		s->puts++;
		if (s->force_conflicts > 0 || !rv ||
		    strcmp(rv, eo_meta_resource_version(s->lease)) != 0) {
			if (s->force_conflicts > 0)
				s->force_conflicts--;
			rs->status = 409;
			rs->body = tu_status_body(409, "Conflict", NULL);
			json_decref(obj);
		} else {
			json_decref(s->lease);
			s->lease = obj;
			bump(s, s->lease);
			rs->body = json_dumps(s->lease, JSON_COMPACT);
		}
	} else {
		rs->status = 405;
	}
	pthread_mutex_unlock(&s->mu);
}

static const char *spec_str(struct store *s, const char *key, char *buf, size_t cap)
{
	const char *v;

	pthread_mutex_lock(&s->mu);
	v = json_string_value(json_object_get(json_object_get(s->lease, "spec"), key));
	snprintf(buf, cap, "%s", v ? v : "<none>");
	pthread_mutex_unlock(&s->mu);
	return buf;
}

static json_int_t spec_int(struct store *s, const char *key)
{
	json_int_t v;

	pthread_mutex_lock(&s->mu);
	v = json_integer_value(json_object_get(json_object_get(s->lease, "spec"), key));
	pthread_mutex_unlock(&s->mu);
	return v;
}

struct fixture {
	struct store st;
	eo_kube_fake *fake;
	eo_kube_client *c;
	int64_t clock_ms;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	eo_kube_config *cfg = NULL;
	struct eo_kube_client_opts co = {.timeout_ms = 2000};

	pthread_mutex_init(&fx->st.mu, NULL);
	pthread_cond_init(&fx->st.unhang, NULL);
	fx->clock_ms = 1000;
	fx->fake = eo_kube_fake_start(handler, &fx->st);
	if (!fx->fake ||
	    eo_kube_config_new(eo_kube_fake_url(fx->fake), NULL, NULL, &cfg, NULL) != EO_KUBE_OK ||
	    eo_kube_client_new(cfg, &co, &fx->c, NULL) != EO_KUBE_OK)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	pthread_mutex_lock(&fx->st.mu);
	fx->st.hang_puts = false;
	pthread_cond_broadcast(&fx->st.unhang);
	pthread_mutex_unlock(&fx->st.mu);
	eo_kube_client_free(fx->c);
	eo_kube_fake_stop(fx->fake);
	pthread_cond_destroy(&fx->st.unhang);
	json_decref(fx->st.lease);
	pthread_mutex_destroy(&fx->st.mu);
	free(fx);
	return 0;
}

static eo_kube_lease *elector(struct fixture *fx, const char *id)
{
	struct eo_kube_lease_opts o = {
	    .ns = "ops",
	    .name = "etcd-operator",
	    .identity = id,
	    .now_ms = tu_clock_now,
	    .clock_ud = &fx->clock_ms,
	};
	eo_kube_lease *le = eo_kube_lease_new(fx->c, &o);

	assert_non_null(le);
	return le;
}

static void test_identity_and_microtime(void **state)
{
	char *a = eo_kube_lease_identity("etcd-operator-7d9f-abcde");
	char *b = eo_kube_lease_identity("etcd-operator-7d9f-abcde");
	char ts[40];

	(void)state;
	assert_non_null(a);
	assert_int_equal(strncmp(a, "etcd-operator-7d9f-abcde_", 25), 0);
	assert_int_equal(strlen(a), 25 + 16);
	assert_string_not_equal(a, b);
	free(a);
	free(b);
	eo_kube_format_microtime(1700000000123LL, ts, sizeof(ts));
	assert_string_equal(ts, "2023-11-14T22:13:20.123000Z");
}

static void test_acquire_renew_respect_expire_release(void **state)
{
	struct fixture *fx = *state;
	eo_kube_lease *a = elector(fx, "pod-a_1"), *b = elector(fx, "pod-b_2");
	struct eo_kube_error err;
	bool held = false;
	char buf[64], renew1[64], renew2[64];

	/* No lease yet: A creates it. */
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_true(held);
	assert_int_equal(fx->st.creates, 1);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "pod-a_1");
	assert_int_equal(spec_int(&fx->st, "leaseDurationSeconds"), 15);
	assert_int_equal(spec_int(&fx->st, "leaseTransitions"), 0);
	spec_str(&fx->st, "renewTime", renew1, sizeof(renew1));
	assert_int_equal(strlen(renew1), 27); /* MicroTime */

	/* B sees a live holder and stays a candidate. */
	assert_int_equal(eo_kube_lease_try(b, &held, &err), EO_KUBE_OK);
	assert_false(held);
	fx->clock_ms += 14000;
	assert_int_equal(eo_kube_lease_try(b, &held, &err), EO_KUBE_OK);
	assert_false(held);

	/* A renews: the record changes, so B's expiry clock restarts. */
	usleep(2000); /* a different renewTime */
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_true(held);
	spec_str(&fx->st, "renewTime", renew2, sizeof(renew2));
	assert_string_not_equal(renew1, renew2);
	assert_int_equal(spec_int(&fx->st, "leaseTransitions"), 0);
	fx->clock_ms += 2000;
	assert_int_equal(eo_kube_lease_try(b, &held, &err), EO_KUBE_OK);
	assert_false(held);

	/* A goes silent; 15 s after B last saw a change, B takes over. */
	fx->clock_ms += 14999;
	assert_int_equal(eo_kube_lease_try(b, &held, &err), EO_KUBE_OK);
	assert_false(held);
	fx->clock_ms += 1;
	assert_int_equal(eo_kube_lease_try(b, &held, &err), EO_KUBE_OK);
	assert_true(held);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "pod-b_2");
	assert_int_equal(spec_int(&fx->st, "leaseTransitions"), 1);

	/* A comes back and must not steal it. */
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_false(held);

	/* A's release is a no-op (not the holder); B's release frees the lease
	 * and A may take it at once. */
	assert_int_equal(eo_kube_lease_release(a, &err), EO_KUBE_OK);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "pod-b_2");
	assert_int_equal(eo_kube_lease_release(b, &err), EO_KUBE_OK);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "");
	assert_int_equal(spec_int(&fx->st, "leaseDurationSeconds"), 1);
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_true(held);
	assert_int_equal(spec_int(&fx->st, "leaseTransitions"), 2);
	eo_kube_lease_free(a);
	eo_kube_lease_free(b);
}

static void test_conflict_means_lost_race(void **state)
{
	struct fixture *fx = *state;
	eo_kube_lease *a = elector(fx, "pod-a_1");
	struct eo_kube_error err;
	bool held = true;
	int puts;

	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_true(held);
	fx->st.force_conflicts = 1;
	puts = fx->st.puts;
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_false(held);
	assert_int_equal(fx->st.puts, puts + 1);
	assert_int_equal(eo_kube_lease_try(a, &held, &err), EO_KUBE_OK);
	assert_true(held);
	eo_kube_lease_free(a);
}

struct calls {
	atomic_int started, stopped;
};

static void started(void *ud)
{
	atomic_fetch_add(&((struct calls *)ud)->started, 1);
}

static void stopped(void *ud)
{
	atomic_fetch_add(&((struct calls *)ud)->stopped, 1);
}

static void test_thread_leads_and_releases(void **state)
{
	struct fixture *fx = *state;
	struct calls calls = {0};
	struct eo_kube_lease_opts o = {
	    .ns = "ops",
	    .name = "etcd-operator",
	    .identity = "pod-t_9",
	    .lease_duration_ms = 1000,
	    .renew_deadline_ms = 600,
	    .retry_period_ms = 20,
	    .on_started = started,
	    .on_stopped = stopped,
	    .ud = &calls,
	};
	eo_kube_lease *le = eo_kube_lease_new(fx->c, &o);
	char buf[64];
	int puts;

	assert_non_null(le);
	assert_false(eo_kube_lease_is_leader(le));
	assert_int_equal(eo_kube_lease_start(le, NULL), EO_KUBE_OK);
	for (int i = 0; i < 500 && !eo_kube_lease_is_leader(le); i++)
		usleep(2000);
	assert_true(eo_kube_lease_is_leader(le));
	assert_int_equal(atomic_load(&calls.started), 1);
	/* It keeps renewing. */
	puts = fx->st.puts;
	for (int i = 0; i < 500 && fx->st.puts < puts + 2; i++)
		usleep(2000);
	assert_true(fx->st.puts >= puts + 2);
	assert_true(eo_kube_lease_is_leader(le));

	eo_kube_lease_stop(le);
	assert_false(eo_kube_lease_is_leader(le));
	assert_int_equal(atomic_load(&calls.stopped), 1);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "");
	eo_kube_lease_free(le);
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static eo_kube_lease *leading(struct fixture *fx, struct calls *calls, long deadline_ms)
{
	struct eo_kube_lease_opts o = {
	    .ns = "ops",
	    .name = "etcd-operator",
	    .identity = "pod-t_9",
	    .lease_duration_ms = 10000,
	    .renew_deadline_ms = deadline_ms,
	    .retry_period_ms = 50,
	    .request_timeout_ms = 3000, /* far above the deadline: the deadline must bound */
	    .on_started = started,
	    .on_stopped = stopped,
	    .ud = calls,
	};
	eo_kube_lease *le = eo_kube_lease_new(fx->c, &o);

	assert_non_null(le);
	assert_int_equal(eo_kube_lease_held_until(le), 0);
	assert_int_equal(eo_kube_lease_start(le, NULL), EO_KUBE_OK);
	for (int i = 0; i < 1000 && !eo_kube_lease_is_leader(le); i++)
		usleep(2000);
	assert_true(eo_kube_lease_is_leader(le));
	return le;
}

/* A renew whose PUT never returns: leadership ends when the renew deadline passes, not
 * when the (much longer) request timeout would have ended the request. */
static void test_hung_renew_ends_at_deadline(void **state)
{
	struct fixture *fx = *state;
	struct calls calls = {0};
	eo_kube_lease *le = leading(fx, &calls, 500);
	char why[256];
	int64_t t0, held_until, elapsed;
	long left;

	left = eo_kube_lease_held_for_ms(le);
	assert_true(left > 0 && left <= 500);
	pthread_mutex_lock(&fx->st.mu);
	fx->st.hang_puts = true;
	pthread_mutex_unlock(&fx->st.mu);
	t0 = wall_ms();
	held_until = eo_kube_lease_held_until(le);
	assert_true(held_until > 0 && held_until <= t0 + 500);
	for (int i = 0; i < 2000 && atomic_load(&calls.stopped) == 0; i++)
		usleep(1000);
	elapsed = wall_ms() - t0;
	assert_int_equal(atomic_load(&calls.stopped), 1);
	assert_false(eo_kube_lease_is_leader(le));
	assert_int_equal(eo_kube_lease_held_until(le), 0);
	assert_int_equal(eo_kube_lease_held_for_ms(le), 0);
	/* Not before the last renew's deadline, and well before the 3 s request timeout. */
	assert_true(wall_ms() >= held_until);
	assert_true(elapsed <= 500 + 250);
	eo_kube_lease_stop_reason(le, why, sizeof(why));
	assert_non_null(strstr(why, "renew deadline (500 ms) passed"));
	pthread_mutex_lock(&fx->st.mu);
	fx->st.hang_puts = false;
	pthread_cond_broadcast(&fx->st.unhang);
	pthread_mutex_unlock(&fx->st.mu);
	eo_kube_lease_free(le);
}

/* Another holder in the lease ends leadership at the next renew, long before the deadline,
 * and the old leader does not write the lease back. */
static void test_other_holder_ends_at_once(void **state)
{
	struct fixture *fx = *state;
	struct calls calls = {0};
	eo_kube_lease *le = leading(fx, &calls, 8000);
	char why[256], buf[64];
	int64_t t0, elapsed;
	int puts;

	pthread_mutex_lock(&fx->st.mu);
	json_object_set_new(json_object_get(fx->st.lease, "spec"), "holderIdentity",
			    json_string("pod-x_7"));
	bump(&fx->st, fx->st.lease);
	puts = fx->st.puts;
	pthread_mutex_unlock(&fx->st.mu);
	t0 = wall_ms();
	for (int i = 0; i < 4000 && atomic_load(&calls.stopped) == 0; i++)
		usleep(1000);
	elapsed = wall_ms() - t0;
	assert_int_equal(atomic_load(&calls.stopped), 1);
	assert_true(elapsed < 1000);
	assert_int_equal(eo_kube_lease_held_until(le), 0);
	eo_kube_lease_stop_reason(le, why, sizeof(why));
	assert_string_equal(why, "the lease is held by pod-x_7");
	usleep(200000); /* a few retry periods as a candidate */
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "pod-x_7");
	pthread_mutex_lock(&fx->st.mu);
	assert_int_equal(fx->st.puts, puts);
	pthread_mutex_unlock(&fx->st.mu);
	eo_kube_lease_free(le);
	assert_string_equal(spec_str(&fx->st, "holderIdentity", buf, sizeof(buf)), "pod-x_7");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_identity_and_microtime),
	    cmocka_unit_test_setup_teardown(test_acquire_renew_respect_expire_release, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_conflict_means_lost_race, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_thread_leads_and_releases, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hung_renew_ends_at_deadline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_other_holder_ends_at_once, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
