/*
 * kube/queue.c - deduplicating, rate-limited work queue.
 *
 * Sets and maps are jansson objects keyed by the work key (jansson hashes
 * keys and copies them), the ready queue is a ring of heap strings, and the
 * delayed keys sit in a binary min-heap ordered by (ready time, sequence).
 */
#include "kube/queue.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sleep.h"

struct delayed {
	int64_t at;
	uint64_t seq;
	char *key;
};

struct eo_kube_queue {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	long base_ms, max_ms;
	int64_t (*now_ms)(void *ud);
	void *clock_ud;

	char **ring; /* ready keys, FIFO */
	size_t head, count, cap;

	json_t *dirty;	    /* keys that need processing (queued or re-added) */
	json_t *processing; /* keys handed to a worker */
	json_t *waiting;    /* key -> ready time of its current heap entry */
	json_t *failures;   /* key -> failure count */

	struct delayed *heap;
	size_t heap_len, heap_cap;
	uint64_t seq;

	bool shutting_down;
};

static int64_t now(eo_kube_queue *q)
{
	return q->now_ms ? q->now_ms(q->clock_ud) : eo_mono_ms();
}

eo_kube_queue *eo_kube_queue_new(const struct eo_kube_queue_opts *opts)
{
	eo_kube_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return NULL;
	q->base_ms =
	    opts && opts->base_delay_ms > 0 ? opts->base_delay_ms : EO_KUBE_QUEUE_BASE_DELAY_MS;
	q->max_ms =
	    opts && opts->max_delay_ms > 0 ? opts->max_delay_ms : EO_KUBE_QUEUE_MAX_DELAY_MS;
	if (q->max_ms < q->base_ms)
		q->max_ms = q->base_ms;
	q->now_ms = opts ? opts->now_ms : NULL;
	q->clock_ud = opts ? opts->clock_ud : NULL;
	q->dirty = json_object();
	q->processing = json_object();
	q->waiting = json_object();
	q->failures = json_object();
	if (!q->dirty || !q->processing || !q->waiting || !q->failures) {
		json_decref(q->dirty);
		json_decref(q->processing);
		json_decref(q->waiting);
		json_decref(q->failures);
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

void eo_kube_queue_free(eo_kube_queue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->count; i++)
		free(q->ring[(q->head + i) % q->cap]);
	free(q->ring);
	for (size_t i = 0; i < q->heap_len; i++)
		free(q->heap[i].key);
	free(q->heap);
	json_decref(q->dirty);
	json_decref(q->processing);
	json_decref(q->waiting);
	json_decref(q->failures);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

static bool has(json_t *set, const char *key)
{
	return json_object_get(set, key) != NULL;
}

/* ---- ready ring ------------------------------------------------------- */

static bool ring_push(eo_kube_queue *q, const char *key)
{
	char *copy;

	if (q->count == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 16;
		char **nr = malloc(ncap * sizeof(*nr));

		if (!nr)
			return false;
		for (size_t i = 0; i < q->count; i++)
			nr[i] = q->ring[(q->head + i) % q->cap];
		free(q->ring);
		q->ring = nr;
		q->cap = ncap;
		q->head = 0;
	}
	copy = strdup(key);
	if (!copy)
		return false;
	q->ring[(q->head + q->count) % q->cap] = copy;
	q->count++;
	return true;
}

static char *ring_pop(eo_kube_queue *q)
{
	char *k = q->ring[q->head];

	q->head = (q->head + 1) % q->cap;
	q->count--;
	return k;
}

/* ---- delayed heap ----------------------------------------------------- */

static bool heap_less(const struct delayed *a, const struct delayed *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void heap_swap(struct delayed *a, struct delayed *b)
{
	struct delayed t = *a;

	*a = *b;
	*b = t;
}

static bool heap_push(eo_kube_queue *q, int64_t at, const char *key)
{
	size_t i;

	if (q->heap_len == q->heap_cap) {
		size_t ncap = q->heap_cap ? q->heap_cap * 2 : 16;
		struct delayed *nh = realloc(q->heap, ncap * sizeof(*nh));

		if (!nh)
			return false;
		q->heap = nh;
		q->heap_cap = ncap;
	}
	i = q->heap_len;
	q->heap[i].at = at;
	q->heap[i].seq = q->seq++;
	q->heap[i].key = strdup(key);
	if (!q->heap[i].key)
		return false;
	q->heap_len++;
	while (i > 0 && heap_less(&q->heap[i], &q->heap[(i - 1) / 2])) {
		heap_swap(&q->heap[i], &q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return true;
}

/* Removes the top entry; returns its key (caller frees). */
static char *heap_pop(eo_kube_queue *q)
{
	char *k = q->heap[0].key;
	size_t i = 0;

	q->heap[0] = q->heap[--q->heap_len];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->heap_len && heap_less(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->heap_len && heap_less(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(&q->heap[i], &q->heap[m]);
		i = m;
	}
	return k;
}

/* ---- core, called with the lock held --------------------------------- */

static bool add_locked(eo_kube_queue *q, const char *key)
{
	if (q->shutting_down)
		return false;
	if (has(q->dirty, key))
		return true;
	if (json_object_size(q->dirty) + json_object_size(q->processing) >= EO_KUBE_QUEUE_MAX_KEYS)
		return false;
	if (json_object_set_new_nocheck(q->dirty, key, json_true()) != 0)
		return false;
	if (has(q->processing, key))
		return true; /* done() re-queues it */
	if (!ring_push(q, key)) {
		json_object_del(q->dirty, key);
		return false;
	}
	pthread_cond_signal(&q->cond);
	return true;
}

/* Moves delayed keys whose time has come into the ready queue. */
static void promote_locked(eo_kube_queue *q, int64_t t)
{
	while (q->heap_len > 0 && q->heap[0].at <= t) {
		int64_t at = q->heap[0].at;
		char *k = heap_pop(q);
		json_t *w = json_object_get(q->waiting, k);

		/* Only the entry matching the recorded time is live; others were
		 * superseded by an earlier add_after() of the same key. */
		if (w && json_integer_value(w) == at) {
			json_object_del(q->waiting, k);
			add_locked(q, k);
		}
		free(k);
	}
}

static bool add_after_locked(eo_kube_queue *q, const char *key, long delay_ms)
{
	int64_t at;
	json_t *w;

	if (q->shutting_down)
		return false;
	if (delay_ms <= 0)
		return add_locked(q, key);
	at = now(q) + delay_ms;
	w = json_object_get(q->waiting, key);
	if (w && json_integer_value(w) <= at)
		return true; /* already due no later than requested */
	if (!w && json_object_size(q->waiting) >= EO_KUBE_QUEUE_MAX_KEYS)
		return false;
	if (json_object_set_new_nocheck(q->waiting, key, json_integer(at)) != 0)
		return false;
	if (!heap_push(q, at, key)) {
		json_object_del(q->waiting, key);
		return false;
	}
	/* A getter may be sleeping until a later time. */
	pthread_cond_broadcast(&q->cond);
	return true;
}

static long backoff_locked(eo_kube_queue *q, const char *key)
{
	json_int_t n = json_integer_value(json_object_get(q->failures, key));
	long d = q->base_ms;

	for (json_int_t i = 0; i < n && d < q->max_ms; i++)
		d = d > q->max_ms / 2 ? q->max_ms : d * 2;
	return d < q->max_ms ? d : q->max_ms;
}

static bool key_ok(const char *key)
{
	return key && key[0] && strnlen(key, EO_KUBE_QUEUE_KEY_MAX + 1) <= EO_KUBE_QUEUE_KEY_MAX;
}

/* ---- public ----------------------------------------------------------- */

bool eo_kube_queue_add(eo_kube_queue *q, const char *key)
{
	bool ok;

	if (!key_ok(key))
		return false;
	pthread_mutex_lock(&q->mu);
	ok = add_locked(q, key);
	pthread_mutex_unlock(&q->mu);
	return ok;
}

bool eo_kube_queue_add_after(eo_kube_queue *q, const char *key, long delay_ms)
{
	bool ok;

	if (!key_ok(key))
		return false;
	pthread_mutex_lock(&q->mu);
	ok = add_after_locked(q, key, delay_ms);
	pthread_mutex_unlock(&q->mu);
	return ok;
}

long eo_kube_queue_add_rate_limited(eo_kube_queue *q, const char *key)
{
	long d;
	json_int_t n;

	if (!key_ok(key))
		return -1;
	pthread_mutex_lock(&q->mu);
	d = backoff_locked(q, key);
	n = json_integer_value(json_object_get(q->failures, key));
	if (json_object_size(q->failures) < EO_KUBE_QUEUE_MAX_KEYS || n > 0)
		json_object_set_new_nocheck(q->failures, key, json_integer(n + 1));
	if (!add_after_locked(q, key, d))
		d = -1;
	pthread_mutex_unlock(&q->mu);
	return d;
}

long eo_kube_queue_backoff_ms(eo_kube_queue *q, const char *key)
{
	long d;

	pthread_mutex_lock(&q->mu);
	d = backoff_locked(q, key);
	pthread_mutex_unlock(&q->mu);
	return d;
}

void eo_kube_queue_forget(eo_kube_queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	json_object_del(q->failures, key);
	pthread_mutex_unlock(&q->mu);
}

int eo_kube_queue_requeues(eo_kube_queue *q, const char *key)
{
	int n;

	pthread_mutex_lock(&q->mu);
	n = (int)json_integer_value(json_object_get(q->failures, key));
	pthread_mutex_unlock(&q->mu);
	return n;
}

/* Absolute CLOCK_MONOTONIC time ms from now. */
static struct timespec deadline_in(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

enum eo_kube_queue_rc eo_kube_queue_get(eo_kube_queue *q, long timeout_ms, char **key)
{
	int64_t start = eo_mono_ms();
	enum eo_kube_queue_rc rc;

	*key = NULL;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		int64_t wait_ms = -1, left;

		if (!q->shutting_down)
			promote_locked(q, now(q));
		if (q->count > 0) {
			char *k = ring_pop(q);

			json_object_del(q->dirty, k);
			if (json_object_set_new_nocheck(q->processing, k, json_true()) != 0) {
				/* Cannot track it: put it back rather than lose it. */
				json_object_set_new_nocheck(q->dirty, k, json_true());
				ring_push(q, k);
				free(k);
				rc = EO_KUBE_QUEUE_TIMEOUT;
				break;
			}
			*key = k;
			rc = EO_KUBE_QUEUE_ITEM;
			break;
		}
		if (q->shutting_down) {
			rc = EO_KUBE_QUEUE_SHUTDOWN;
			break;
		}
		if (timeout_ms >= 0) {
			left = timeout_ms - (eo_mono_ms() - start);
			if (left <= 0) {
				rc = EO_KUBE_QUEUE_TIMEOUT;
				break;
			}
			wait_ms = left;
		}
		if (q->heap_len > 0) {
			int64_t until = q->heap[0].at - now(q);

			if (until < 1)
				until = 1;
			if (wait_ms < 0 || until < wait_ms)
				wait_ms = until;
		}
		if (wait_ms < 0) {
			pthread_cond_wait(&q->cond, &q->mu);
		} else {
			struct timespec ts = deadline_in(wait_ms);

			pthread_cond_timedwait(&q->cond, &q->mu, &ts);
		}
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void eo_kube_queue_done(eo_kube_queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	json_object_del(q->processing, key);
	if (has(q->dirty, key)) {
		if (q->shutting_down || !ring_push(q, key))
			json_object_del(q->dirty, key);
		else
			pthread_cond_signal(&q->cond);
	}
	pthread_mutex_unlock(&q->mu);
}

void eo_kube_queue_shutdown(eo_kube_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->shutting_down = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->mu);
}

bool eo_kube_queue_shutting_down(eo_kube_queue *q)
{
	bool s;

	pthread_mutex_lock(&q->mu);
	s = q->shutting_down;
	pthread_mutex_unlock(&q->mu);
	return s;
}

size_t eo_kube_queue_len(eo_kube_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	if (!q->shutting_down)
		promote_locked(q, now(q));
	n = q->count;
	pthread_mutex_unlock(&q->mu);
	return n;
}

size_t eo_kube_queue_delayed(eo_kube_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	n = json_object_size(q->waiting);
	pthread_mutex_unlock(&q->mu);
	return n;
}

size_t eo_kube_queue_processing(eo_kube_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->mu);
	n = json_object_size(q->processing);
	pthread_mutex_unlock(&q->mu);
	return n;
}
