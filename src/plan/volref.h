/*
 * plan/volref.h - may the operator mount a PVC a user named? (pure)
 *
 * An EtcdSnapshot's destination PVC (the snapshot Job writes to it, with fsGroup) and an
 * EtcdCluster's restore source PVC (the seed's init containers read it) are names a user
 * chose. The operator mounts such a PVC only when it is the user's own plain volume:
 *
 *   - it exists (a live GET found it); a PVC that does not exist yet is waited for, never
 *     mounted by name on the chance it appears (MISSING);
 *   - no owner reference with controller: true names another object than referrer_uid (the
 *     EtcdSnapshot that names it; for a restore nothing of the operator ever controls the
 *     source, so any controller refuses it). That covers every member's data PVC (controlled
 *     by its EtcdMember), StatefulSet and other controllers' volumes (FOREIGN);
 *   - it does not carry the labels of etcd member data: etcd-operator.cozystack.io/cluster
 *     (this operator's member PVCs, also once spec.deletionPolicy Retain dropped their owner)
 *     or app.kubernetes.io/managed-by=etcd-operator (this operator's and the legacy
 *     etcd.aenix.io operator's) (FOREIGN).
 *
 * A PVC without a controller and without those labels is accepted: the namespace's RBAC is
 * what keeps a tenant from naming an application's uncontrolled volume (docs/security.md).
 */
#ifndef EO_PLAN_VOLREF_H
#define EO_PLAN_VOLREF_H

#include <stddef.h>

#include <jansson.h>

/* Reasons of the conditions that tell a refused or missing volume. */
#define EO_REASON_FOREIGN_VOLUME   "ForeignVolume"
#define EO_REASON_VOLUME_NOT_FOUND "VolumeNotFound"

enum eo_volref_verdict {
	EO_VOLREF_USABLE = 0,
	EO_VOLREF_MISSING, /* no such PVC: wait, mount nothing */
	EO_VOLREF_FOREIGN, /* held by something else: refuse */
};

/*
 * The verdict on pvc (the live object, NULL when the GET found none) named claim_name, for
 * the object whose UID is referrer_uid (may be NULL: then any controller is foreign). why
 * (always terminated, cut to n) names the PVC and what holds it; "" when USABLE.
 */
enum eo_volref_verdict eo_plan_volref_check(const json_t *pvc, const char *claim_name,
					    const char *referrer_uid, char *why, size_t n);

#endif
