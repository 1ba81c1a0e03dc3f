/*
 * Unit tests for kube/queue: dedup, one worker per key, backoff, delayed
 * adds, shutdown, and a multithreaded stress run.
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

#include "kube/queue.h"
#include "support/testutil.h"
#include "support/tu_main.h"

static eo_kube_queue *fake_queue(int64_t *clock_ms)
{
	struct eo_kube_queue_opts o = {
	    .base_delay_ms = 5,
	    .max_delay_ms = 300000,
	    .now_ms = tu_clock_now,
	    .clock_ud = clock_ms,
	};
	eo_kube_queue *q = eo_kube_queue_new(&o);

	assert_non_null(q);
	return q;
}

/* Gets a key without waiting and checks it. */
static void expect_key(eo_kube_queue *q, const char *want)
{
	char *k = NULL;

	assert_int_equal(eo_kube_queue_get(q, 0, &k), EO_KUBE_QUEUE_ITEM);
	assert_string_equal(k, want);
	free(k);
}

static void expect_empty(eo_kube_queue *q)
{
	char *k = NULL;

	assert_int_equal(eo_kube_queue_get(q, 0, &k), EO_KUBE_QUEUE_TIMEOUT);
	assert_null(k);
}

static void test_fifo_and_dedup(void **state)
{
	eo_kube_queue *q = eo_kube_queue_new(NULL);

	(void)state;
	assert_true(eo_kube_queue_add(q, "ns/a"));
	assert_true(eo_kube_queue_add(q, "ns/b"));
	assert_true(eo_kube_queue_add(q, "ns/a"));
	assert_true(eo_kube_queue_add(q, "ns/c"));
	assert_true(eo_kube_queue_add(q, "ns/b"));
	assert_int_equal(eo_kube_queue_len(q), 3);
	expect_key(q, "ns/a");
	expect_key(q, "ns/b");
	expect_key(q, "ns/c");
	expect_empty(q);
	assert_int_equal(eo_kube_queue_len(q), 0);
	assert_int_equal(eo_kube_queue_processing(q), 3);
	eo_kube_queue_done(q, "ns/a");
	eo_kube_queue_done(q, "ns/b");
	eo_kube_queue_done(q, "ns/c");
	assert_int_equal(eo_kube_queue_processing(q), 0);
	/* Bad keys are refused. */
	assert_false(eo_kube_queue_add(q, ""));
	assert_false(eo_kube_queue_add(q, NULL));
	eo_kube_queue_shutdown(q);
	eo_kube_queue_free(q);
}

static void test_no_two_workers_on_one_key(void **state)
{
	eo_kube_queue *q = eo_kube_queue_new(NULL);

	(void)state;
	eo_kube_queue_add(q, "k");
	expect_key(q, "k");
	/* Re-added while processing: held back, not handed to a second worker. */
	assert_true(eo_kube_queue_add(q, "k"));
	assert_true(eo_kube_queue_add(q, "k"));
	assert_int_equal(eo_kube_queue_len(q), 0);
	expect_empty(q);
	/* done() releases it exactly once. */
	eo_kube_queue_done(q, "k");
	assert_int_equal(eo_kube_queue_len(q), 1);
	expect_key(q, "k");
	expect_empty(q);
	eo_kube_queue_done(q, "k");
	/* Not re-added: done() leaves nothing behind. */
	assert_int_equal(eo_kube_queue_len(q), 0);
	eo_kube_queue_shutdown(q);
	eo_kube_queue_free(q);
}

static void test_backoff_growth_and_forget(void **state)
{
	int64_t clock_ms = 1000;
	eo_kube_queue *q = fake_queue(&clock_ms);
	long want = 5;

	(void)state;
	assert_int_equal(eo_kube_queue_backoff_ms(q, "k"), 5);
	for (int i = 0; i < 30; i++) {
		long d = eo_kube_queue_add_rate_limited(q, "k");

		assert_int_equal(d, want);
		assert_int_equal(eo_kube_queue_requeues(q, "k"), i + 1);
		want = want * 2 > 300000 ? 300000 : want * 2;
	}
	/* Capped at the maximum. */
	assert_int_equal(eo_kube_queue_backoff_ms(q, "k"), 300000);
	/* Keys are independent. */
	assert_int_equal(eo_kube_queue_backoff_ms(q, "other"), 5);
	eo_kube_queue_forget(q, "k");
	assert_int_equal(eo_kube_queue_requeues(q, "k"), 0);
	assert_int_equal(eo_kube_queue_backoff_ms(q, "k"), 5);

	/* The first rate-limited add is due after 5 ms (the earliest entry). */
	expect_empty(q);
	clock_ms += 4;
	expect_empty(q);
	clock_ms += 1;
	expect_key(q, "k");
	eo_kube_queue_done(q, "k");
	eo_kube_queue_shutdown(q);
	eo_kube_queue_free(q);
}

static void test_add_after(void **state)
{
	int64_t clock_ms = 0;
	eo_kube_queue *q = fake_queue(&clock_ms);

	(void)state;
	assert_true(eo_kube_queue_add_after(q, "late", 100));
	assert_true(eo_kube_queue_add_after(q, "early", 50));
	assert_int_equal(eo_kube_queue_delayed(q), 2);
	assert_int_equal(eo_kube_queue_len(q), 0);
	expect_empty(q);
	clock_ms = 49;
	expect_empty(q);
	clock_ms = 50;
	expect_key(q, "early");
	eo_kube_queue_done(q, "early");
	clock_ms = 99;
	expect_empty(q);
	clock_ms = 100;
	assert_int_equal(eo_kube_queue_len(q), 1);
	expect_key(q, "late");
	eo_kube_queue_done(q, "late");

	/* A second add_after with an earlier time wins; the later one is dropped. */
	clock_ms = 1000;
	eo_kube_queue_add_after(q, "k", 100);
	eo_kube_queue_add_after(q, "k", 30);
	eo_kube_queue_add_after(q, "k", 60); /* later than 30: ignored */
	assert_int_equal(eo_kube_queue_delayed(q), 1);
	clock_ms = 1030;
	expect_key(q, "k");
	eo_kube_queue_done(q, "k");
	clock_ms = 1200;
	expect_empty(q);
	assert_int_equal(eo_kube_queue_delayed(q), 0);

	/* A delayed key that is already queued stays single. */
	eo_kube_queue_add(q, "d");
	eo_kube_queue_add_after(q, "d", 10);
	clock_ms = 1300;
	assert_int_equal(eo_kube_queue_len(q), 1);
	expect_key(q, "d");
	expect_empty(q);
	eo_kube_queue_done(q, "d");

	/* Zero delay means now. */
	eo_kube_queue_add_after(q, "now", 0);
	expect_key(q, "now");
	eo_kube_queue_done(q, "now");
	eo_kube_queue_shutdown(q);
	eo_kube_queue_free(q);
}

struct getter {
	eo_kube_queue *q;
	enum eo_kube_queue_rc rc;
	char *key;
};

static void *blocking_get(void *p)
{
	struct getter *g = p;

	g->rc = eo_kube_queue_get(g->q, -1, &g->key);
	return NULL;
}

static void test_blocked_getter_wakes_for_delayed_key(void **state)
{
	eo_kube_queue *q = eo_kube_queue_new(NULL);
	struct getter g = {.q = q};
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, blocking_get, &g), 0);
	usleep(20000); /* let it block on an empty queue */
	assert_true(eo_kube_queue_add_after(q, "delayed", 30));
	pthread_join(th, NULL);
	assert_int_equal(g.rc, EO_KUBE_QUEUE_ITEM);
	assert_string_equal(g.key, "delayed");
	free(g.key);
	eo_kube_queue_done(q, "delayed");
	eo_kube_queue_shutdown(q);
	eo_kube_queue_free(q);
}

static void test_shutdown_wakes_getters(void **state)
{
	eo_kube_queue *q = eo_kube_queue_new(NULL);
	struct getter g[3];
	pthread_t th[3];
	char *k = NULL;

	(void)state;
	for (int i = 0; i < 3; i++) {
		g[i] = (struct getter){.q = q, .rc = EO_KUBE_QUEUE_ITEM};
		assert_int_equal(pthread_create(&th[i], NULL, blocking_get, &g[i]), 0);
	}
	usleep(20000);
	assert_true(eo_kube_queue_add_after(q, "never", 60000));
	eo_kube_queue_shutdown(q);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(g[i].rc, EO_KUBE_QUEUE_SHUTDOWN);
		assert_null(g[i].key);
	}
	assert_true(eo_kube_queue_shutting_down(q));
	/* Later adds are refused; get keeps answering SHUTDOWN. */
	assert_false(eo_kube_queue_add(q, "x"));
	assert_false(eo_kube_queue_add_after(q, "y", 10));
	assert_int_equal(eo_kube_queue_add_rate_limited(q, "z"), -1);
	assert_int_equal(eo_kube_queue_get(q, -1, &k), EO_KUBE_QUEUE_SHUTDOWN);
	eo_kube_queue_free(q);
}

static void test_shutdown_hands_out_ready_keys_first(void **state)
{
	eo_kube_queue *q = eo_kube_queue_new(NULL);
	char *k = NULL;

	(void)state;
	eo_kube_queue_add(q, "a");
	eo_kube_queue_add(q, "b");
	expect_key(q, "a");
	eo_kube_queue_add(q, "a"); /* dirty while processing */
	eo_kube_queue_shutdown(q);
	expect_key(q, "b");
	eo_kube_queue_done(q, "b");
	/* A key re-added during processing is not requeued after shutdown. */
	eo_kube_queue_done(q, "a");
	assert_int_equal(eo_kube_queue_get(q, 0, &k), EO_KUBE_QUEUE_SHUTDOWN);
	eo_kube_queue_free(q);
}

/* ---- multithreaded stress --------------------------------------------- */

#define NKEYS	 8
#define NWORKERS 4
#define NADDS	 4000

struct stress {
	eo_kube_queue *q;
	atomic_int active[NKEYS];
	atomic_int processed[NKEYS];
	atomic_int overlap;
	atomic_int adds_done;
};

static int key_index(const char *k)
{
	return atoi(k + 4);
}

static void *stress_worker(void *p)
{
	struct stress *s = p;
	char *k = NULL;

	while (eo_kube_queue_get(s->q, -1, &k) == EO_KUBE_QUEUE_ITEM) {
		int i = key_index(k);

		if (atomic_fetch_add(&s->active[i], 1) != 0)
			atomic_fetch_add(&s->overlap, 1);
		/* Widen the window in which a second worker could sneak in. */
		for (volatile int spin = 0; spin < 2000; spin++)
			;
		atomic_fetch_sub(&s->active[i], 1);
		atomic_fetch_add(&s->processed[i], 1);
		if ((s->processed[i] % 7) == 0)
			eo_kube_queue_add(s->q, k); /* re-add from inside the worker */
		eo_kube_queue_done(s->q, k);
		free(k);
	}
	return NULL;
}

static void *stress_producer(void *p)
{
	struct stress *s = p;
	unsigned seed = 42;

	for (int n = 0; n < NADDS; n++) {
		char key[16];

		snprintf(key, sizeof(key), "key-%d", (int)(rand_r(&seed) % NKEYS));
		eo_kube_queue_add(s->q, key);
		if (n % 100 == 0)
			usleep(100);
	}
	atomic_store(&s->adds_done, 1);
	return NULL;
}

static void test_multithreaded(void **state)
{
	struct stress s;
	pthread_t workers[NWORKERS], producer;
	int total = 0;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.q = eo_kube_queue_new(NULL);
	for (int i = 0; i < NWORKERS; i++)
		assert_int_equal(pthread_create(&workers[i], NULL, stress_worker, &s), 0);
	assert_int_equal(pthread_create(&producer, NULL, stress_producer, &s), 0);
	pthread_join(producer, NULL);
	/* Drain: wait until nothing is queued or in flight. */
	for (int tries = 0; tries < 5000; tries++) {
		if (eo_kube_queue_len(s.q) == 0 && eo_kube_queue_processing(s.q) == 0)
			break;
		usleep(1000);
	}
	assert_int_equal(eo_kube_queue_len(s.q), 0);
	assert_int_equal(eo_kube_queue_processing(s.q), 0);
	eo_kube_queue_shutdown(s.q);
	for (int i = 0; i < NWORKERS; i++)
		pthread_join(workers[i], NULL);
	assert_int_equal(atomic_load(&s.overlap), 0);
	for (int i = 0; i < NKEYS; i++) {
		assert_true(s.processed[i] > 0);
		total += s.processed[i];
	}
	/* Dedup collapsed many adds; every key was still processed. */
	assert_true(total <= NADDS * 2);
	eo_kube_queue_free(s.q);
}

TU_MAIN(test_fifo_and_dedup, test_no_two_workers_on_one_key, test_backoff_growth_and_forget,
	test_add_after, test_blocked_getter_wakes_for_delayed_key, test_shutdown_wakes_getters,
	test_shutdown_hands_out_ready_keys_first, test_multithreaded)
