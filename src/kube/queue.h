/*
 * kube/queue.h - the reconcile work queue.
 *
 * Keys are strings (usually "namespace/name"). The queue follows the
 * client-go workqueue rules:
 *   - a key waiting in the queue is held once, however often it is added;
 *   - a key is handed to one worker at a time: adding a key that is being
 *     processed marks it dirty, and done() puts it back in the queue;
 *   - add_after() holds a key back until a delay has passed (the earliest
 *     requested time wins);
 *   - add_rate_limited() delays by a per-key exponential backoff
 *     (base, 2*base, 4*base, ... capped), reset by forget();
 *   - shutdown() makes every blocked and future get() return
 *     EO_KUBE_QUEUE_SHUTDOWN once the ready keys are handed out; delayed keys
 *     are dropped and later adds are ignored.
 *
 * All functions are thread-safe. Keys are copied on add; get() returns a
 * heap copy the caller frees after calling done().
 */
#ifndef EO_KUBE_QUEUE_H
#define EO_KUBE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct eo_kube_queue eo_kube_queue;

#define EO_KUBE_QUEUE_BASE_DELAY_MS 5L
#define EO_KUBE_QUEUE_MAX_DELAY_MS  300000L
#define EO_KUBE_QUEUE_MAX_KEYS	    (1u << 20) /* hard cap on distinct keys held */
#define EO_KUBE_QUEUE_KEY_MAX	    1024       /* longer keys are refused */

struct eo_kube_queue_opts {
	long base_delay_ms; /* 0 = EO_KUBE_QUEUE_BASE_DELAY_MS */
	long max_delay_ms;  /* 0 = EO_KUBE_QUEUE_MAX_DELAY_MS */
	/* Clock for delays, in ms (tests pass a fake one); NULL = monotonic. A
	 * fake clock only decides readiness: blocked get() calls still sleep on
	 * the real clock, so tests with a fake clock poll with timeout 0. */
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
};

enum eo_kube_queue_rc {
	EO_KUBE_QUEUE_ITEM = 0,
	EO_KUBE_QUEUE_TIMEOUT,
	EO_KUBE_QUEUE_SHUTDOWN,
};

/* opts may be NULL. NULL on out of memory. */
eo_kube_queue *eo_kube_queue_new(const struct eo_kube_queue_opts *opts);

/* Frees the queue. Call after shutdown() and after all getters returned. */
void eo_kube_queue_free(eo_kube_queue *q);

/* Adds key now. False when shut down, over the key cap, or out of memory. */
bool eo_kube_queue_add(eo_kube_queue *q, const char *key);

/* Adds key after delay_ms (<= 0 means now). */
bool eo_kube_queue_add_after(eo_kube_queue *q, const char *key, long delay_ms);

/* Counts a failure of key and adds it after its backoff. Returns the delay
 * used in ms, or -1 if the key was not added. */
long eo_kube_queue_add_rate_limited(eo_kube_queue *q, const char *key);

/* The delay the next add_rate_limited(key) would use, without counting. */
long eo_kube_queue_backoff_ms(eo_kube_queue *q, const char *key);

/* Clears the failure count of key (call after a successful reconcile). */
void eo_kube_queue_forget(eo_kube_queue *q, const char *key);

/* Failures counted for key since the last forget(). */
int eo_kube_queue_requeues(eo_kube_queue *q, const char *key);

/*
 * Takes the next ready key, waiting up to timeout_ms (< 0 = forever). On
 * EO_KUBE_QUEUE_ITEM *key is a heap string the caller frees after done().
 */
enum eo_kube_queue_rc eo_kube_queue_get(eo_kube_queue *q, long timeout_ms, char **key);

/* Ends processing of key; a key added meanwhile goes back to the queue. */
void eo_kube_queue_done(eo_kube_queue *q, const char *key);

/* Wakes all getters; see the rules above. Idempotent. */
void eo_kube_queue_shutdown(eo_kube_queue *q);
bool eo_kube_queue_shutting_down(eo_kube_queue *q);

/* Depth for metrics: keys ready to be handed out now. */
size_t eo_kube_queue_len(eo_kube_queue *q);
/* Keys waiting for their delay. */
size_t eo_kube_queue_delayed(eo_kube_queue *q);
/* Keys being processed by workers. */
size_t eo_kube_queue_processing(eo_kube_queue *q);

#endif
