/*
 * kube/lease.h - leader election on a coordination.k8s.io/v1 Lease.
 *
 * Follows client-go's rules: a candidate takes the lease when it does not
 * exist, when its holder is empty or ourselves, or when the record has not
 * changed for lease_duration as observed on our own monotonic clock (so
 * clock skew between nodes does not matter). Writes are PUTs carrying the
 * resourceVersion that was read: a 409 means another candidate won the race
 * and is a normal outcome. stop() releases a held lease by clearing
 * holderIdentity, so a successor need not wait for expiry.
 *
 * Fencing. An attempt that takes or renews the lease, started at time t, makes
 * us the leader until t + renew_deadline (held_until, our monotonic clock). A
 * standby only takes over lease_duration after it *saw* that write, which is
 * after t, so with renew_deadline < lease_duration our leadership ends before
 * anyone else's can begin. To keep that promise:
 *   - every request of a renew attempt gets timeout = held_until - now (at most
 *     request_timeout), so a hung apiserver cannot stretch an attempt;
 *   - when held_until passes without a successful renew, or a renew reads the
 *     lease with another holder, leadership ends at once (on_stopped);
 *   - eo_kube_lease_held_for_ms() tells workers how long they may still act, so
 *     a destructive step can be refused when too little is left.
 *
 * The client is the elector's own: the elector sets its request timeout before
 * every request (eo_kube_client_set_timeout).
 */
#ifndef EO_KUBE_LEASE_H
#define EO_KUBE_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/err.h"

typedef struct eo_kube_lease eo_kube_lease;

struct eo_kube_lease_opts {
	const char *ns;		 /* lease namespace (copied) */
	const char *name;	 /* lease name (copied) */
	const char *identity;	 /* our holderIdentity (copied); see eo_kube_lease_identity() */
	long lease_duration_ms;	 /* 0 = 15000 */
	long renew_deadline_ms;	 /* 0 = 10000 */
	long retry_period_ms;	 /* 0 = 2000 */
	long request_timeout_ms; /* cap on one request; 0 = retry_period_ms */
	/* Called on the elector's thread when we become / stop being the leader. */
	void (*on_started)(void *ud);
	void (*on_stopped)(void *ud);
	void *ud;
	/* Monotonic clock in ms for expiry decisions; NULL = CLOCK_MONOTONIC. */
	int64_t (*now_ms)(void *ud);
	void *clock_ud;
};

/* "<pod_name>_<16 random hex digits>" in a new heap string; pod_name NULL
 * uses $POD_NAME or the host name. NULL on failure. */
char *eo_kube_lease_identity(const char *pod_name);

/* c is borrowed and must outlive the elector. NULL on bad options / OOM. */
eo_kube_lease *eo_kube_lease_new(eo_kube_client *c, const struct eo_kube_lease_opts *opts);

/* Starts the election thread. */
eo_kube_err eo_kube_lease_start(eo_kube_lease *le, struct eo_kube_error *err);

/* Stops the thread; if leading, releases the lease and calls on_stopped.
 * Idempotent. */
void eo_kube_lease_stop(eo_kube_lease *le);

/* Stops if needed and frees. */
void eo_kube_lease_free(eo_kube_lease *le);

/* True while we hold (and keep renewing) the lease. */
bool eo_kube_lease_is_leader(eo_kube_lease *le);

/* While leading, the time (our clock: opts.now_ms or CLOCK_MONOTONIC, in ms) until which
 * we are sure to be the only leader: start of the last successful renew + renew_deadline.
 * 0 when not leading. Cheap (a mutex, no I/O). */
int64_t eo_kube_lease_held_until(eo_kube_lease *le);

/* held_until - now, or 0 when not leading or already past. */
long eo_kube_lease_held_for_ms(eo_kube_lease *le);

/* Why leadership last ended ("" if it never did), e.g. "renew deadline (10000 ms) passed:
 * ..." or "the lease is held by <identity>". */
void eo_kube_lease_stop_reason(eo_kube_lease *le, char *buf, size_t cap);

/*
 * One acquire-or-renew attempt (what the thread does every retry period), its
 * requests bounded by renew_deadline from now, exposed for tests and tools. *held tells whether we
 * hold the lease after the attempt. Losing a race (409 / AlreadyExists) and a lease held by someone
 * else are EO_KUBE_OK with *held = false; errors are transport or API failures.
 */
eo_kube_err eo_kube_lease_try(eo_kube_lease *le, bool *held, struct eo_kube_error *err);

/* Clears holderIdentity if we are the holder (EO_KUBE_OK otherwise too). */
eo_kube_err eo_kube_lease_release(eo_kube_lease *le, struct eo_kube_error *err);

/* Formats a wall-clock time (ms since the epoch) as a Kubernetes MicroTime,
 * "2006-01-02T15:04:05.000000Z". buf needs 32 bytes. */
void eo_kube_format_microtime(int64_t epoch_ms, char *buf, size_t cap);

#endif
