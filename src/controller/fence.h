/*
 * controller/fence.h - no etcd membership change without the leader lease.
 *
 * Every call that changes etcd's membership (MemberAdd as learner, MemberPromote,
 * MemberRemove) goes through the wrappers below. Each first asks the fence how long this
 * process is still sure to be the only leader (kube/lease.h, eo_kube_lease_held_for_ms);
 * with less than margin_ms left the call is refused before anything is sent: the wrapper
 * returns EO_ETCD_UNAVAILABLE with a detail message, so the reconciler requeues as for an
 * unreachable etcd, and the lease is renewed (or lost, which ends the process) meanwhile.
 *
 * margin_ms should cover one etcd call (its request timeout), so a change sent with the
 * margin left completes or times out while the lease is still ours. A zero fence (no
 * held_for function) allows every call: leader election off, or unit tests.
 */
#ifndef EO_CONTROLLER_FENCE_H
#define EO_CONTROLLER_FENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd/client.h"

struct eo_fence {
	long (*held_for_ms)(void *ud); /* ms we still surely lead; NULL = always allowed */
	void *ud;
	long margin_ms; /* least time that must be left; 0 = EO_FENCE_DEFAULT_MARGIN_MS */
};

#define EO_FENCE_DEFAULT_MARGIN_MS 5000L

/* True when a membership change may be sent now; otherwise false and a one-line reason in
 * why (may be NULL). */
bool eo_fence_allows(const struct eo_fence *f, char *why, size_t cap);

/* eo_etcd_member_add / _promote / _remove behind the fence (same arguments and results;
 * a refusal is EO_ETCD_UNAVAILABLE with the reason in detail->message). */
eo_etcd_err eo_fenced_member_add(const struct eo_fence *f, eo_etcd_client *c,
				 const char *const *peer_urls, size_t n_peer_urls, bool as_learner,
				 struct eo_etcd_member *added, struct eo_etcd_members *members,
				 struct eo_etcd_detail *detail);
eo_etcd_err eo_fenced_member_promote(const struct eo_fence *f, eo_etcd_client *c, uint64_t id,
				     struct eo_etcd_members *members,
				     struct eo_etcd_detail *detail);
eo_etcd_err eo_fenced_member_remove(const struct eo_fence *f, eo_etcd_client *c, uint64_t id,
				    struct eo_etcd_members *members, struct eo_etcd_detail *detail);

#endif
