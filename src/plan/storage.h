/*
 * plan/storage.h - storage that changes on a running cluster (pure): a raised
 * spec.storage.size or a changed spec.storage.storageClassName, once latched into
 * status.observed, moves every member onto the new storage, one member at a time.
 *
 * A member's storage is what its EtcdMember's spec.storage says (copied from the target when
 * the member was created; its PVC was made from it). A member whose size is below the target's,
 * or whose StorageClass (or medium) is another, is outdated. How it is brought onto the target:
 *
 *   - grown in place when only the size grows and its class allows expansion
 *     (allowVolumeExpansion: true, read live): the cluster controller raises the member's
 *     spec.storage.size, the member controller its PVC's request (eo_plan_pvc_grow_patch);
 *     the next member waits until the PVC reports the new capacity, and a PVC whose
 *     filesystem waits for a new Pod (FileSystemResizePending) gets its member's Pod
 *     restarted as a roll restarts one: while every member serves and is caught up with a
 *     known leader, the leader only after its leadership moved to a follower;
 *   - else replaced: a new member, built from the target (a new PVC of the new size and
 *     class), joins as a learner and is promoted; then the outdated member is removed through
 *     the quorum. Never while a member is down, never below quorum, one member at a time.
 *
 * docs/operations.md "Grow or move storage" tells the user-facing story.
 */
#ifndef EO_PLAN_STORAGE_H
#define EO_PLAN_STORAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "api/cluster.h"
#include "plan/plan.h"

/*
 * Reason of Progressing=True (and a Normal Event) while members are moved onto the target's
 * storage; of a Warning Event and Degraded=True while a replacement cannot be placed. Not in
 * the seeds.
 */
#define EO_PLAN_REASON_STORAGE_CHANGING "StorageChanging"
#define EO_PLAN_REASON_STORAGE_BLOCKED	"StorageChangeBlocked"

/* What a StorageClass says about expansion, as read (or not). */
enum eo_class_expansion {
	EO_CLASS_EXPANSION_UNKNOWN = 0, /* not read, or could not be read */
	EO_CLASS_EXPANSION_NO,		/* allowVolumeExpansion absent or false */
	EO_CLASS_EXPANSION_YES,		/* allowVolumeExpansion: true */
};

/* How a member's storage reaches the target's. */
enum eo_storage_change {
	EO_STORAGE_CURRENT = 0, /* on target (as large or larger, same class and medium) */
	EO_STORAGE_EXPAND,	/* grow its PVC in place */
	EO_STORAGE_REPLACE,	/* replace the member onto a new PVC */
};

/* "current", "expand", "replace"; never NULL. */
const char *eo_storage_change_name(enum eo_storage_change c);

/*
 * How the member whose storage is have reaches want. A size that does not parse on either side
 * is taken as on target (nothing is replaced on a value that cannot be compared). A smaller
 * target never shrinks anything (the CRD refuses it; a member larger than the target is on
 * target). A memory member, a changed medium or class, or a class whose expansion is not known
 * to be allowed: REPLACE. Only a PVC member of the same class that allows expansion: EXPAND.
 */
enum eo_storage_change eo_plan_storage_change(const struct eo_storage *have,
					      const struct eo_storage *want,
					      enum eo_class_expansion expansion);

/*
 * Whether member's storage (its spec.storage) is the target's (observed.storage); true when
 * observed carries no storage object (nothing to compare with).
 */
bool eo_plan_member_storage_current(const json_t *member, const json_t *observed);

/*
 * The outdated member to replace next among members[0..n): not being deleted, not pending, a
 * voter; one whose Pod is not ready first (it serves no one), then the oldest (creationTimestamp,
 * then name). NULL when none.
 */
const struct eo_plan_member *eo_plan_storage_victim(const struct eo_plan_member *members, size_t n,
						    const json_t *observed);

/*
 * What StorageClass sc (as read live, NULL: not found or not read) says about expansion, for
 * the class named name: UNKNOWN when sc is NULL or is another class; YES only for
 * allowVolumeExpansion: true.
 */
enum eo_class_expansion eo_plan_class_expansion(const json_t *sc, const char *name);

/*
 * The in-place growth of a member's PVC (member controller): the merge patch raising pvc's
 * spec.resources.requests.storage to the member's spec.storage.size, when the member is a PVC
 * member, its PVC is bound and not being deleted, and its request is smaller (both sizes
 * parse). NULL otherwise (or out of memory). New reference.
 */
json_t *eo_plan_pvc_grow_patch(const json_t *member, const json_t *pvc);

/*
 * Whether member's PVC is growing: the member asks for more (spec.storage.size) than the PVC's
 * status.capacity.storage says it has (a capacity not reported yet: not growing). When it is
 * and resize_pending is not NULL, *resize_pending says whether the PVC carries the condition
 * FileSystemResizePending=True: the volume grew, its filesystem grows when a Pod mounts it
 * again (a driver without online expansion).
 */
bool eo_plan_pvc_growing(const json_t *member, const json_t *pvc, bool *resize_pending);

#endif
