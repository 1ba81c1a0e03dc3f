/*
 * plan/retain.h - spec.deletionPolicy: Retain (pure).
 *
 * A cluster with deletionPolicy Retain carries the finalizer EO_FINALIZER_RETAIN_DATA. Its
 * members' data PVCs are owned by their EtcdMembers, which the EtcdCluster owns; garbage
 * collection takes them once the cluster is gone. So, when such a cluster is being deleted,
 * the finalizer holds it (and with it every EtcdMember, Pod and PVC: a background deletion
 * touches the dependents only after the owner is gone) until the owner reference of each
 * member's PVC to its EtcdMember is removed, one PVC at a time with a resourceVersion
 * precondition. Then the finalizer goes, with an Event naming the PVCs kept; their labels stay.
 *
 * Outside deletion the finalizer follows the policy: added under Retain, removed otherwise.
 * Nothing is touched while `kubectl etcd migrate` holds the cluster. A finalizer cannot be
 * added to an object already being deleted: a cluster deleted before its finalizer was added
 * loses its PVCs (the chart's ValidatingAdmissionPolicy refuses that delete).
 *
 * The caller reads the PVCs live before it drops the finalizer of a Retain cluster (the
 * cache may not show a release yet, or show a PVC owned again): the same plan on the live
 * objects must still say DROP_FINALIZER.
 *
 * Ownership: result->patch is a new reference freed by eo_plan_retain_clear(); the input is
 * borrowed.
 */
#ifndef EO_PLAN_RETAIN_H
#define EO_PLAN_RETAIN_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "plan/plan.h"

/* Reasons of the Normal Events on the cluster. */
#define EO_PLAN_REASON_PVC_RELEASED  "PVCReleased"
#define EO_PLAN_REASON_DATA_RETAINED "DataRetained"

enum eo_retain_action {
	EO_RETAIN_NONE = 0,	  /* nothing to do */
	EO_RETAIN_ADD_FINALIZER,  /* add EO_FINALIZER_RETAIN_DATA to the cluster */
	EO_RETAIN_RELEASE_PVC,	  /* merge-patch result->patch onto PVC result->pvc */
	EO_RETAIN_DROP_FINALIZER, /* drop EO_FINALIZER_RETAIN_DATA; Event when event_reason */
	EO_RETAIN_ACTION_COUNT_
};

const char *eo_retain_action_name(enum eo_retain_action a);

struct eo_retain_input {
	const json_t *cluster;		      /* the EtcdCluster */
	const struct eo_plan_member *members; /* its EtcdMembers with their PVCs (any order) */
	size_t n_members;
};

struct eo_retain_result {
	enum eo_retain_action action;
	char pvc[EO_PLAN_NAME_MAX];    /* RELEASE_PVC: the claim's name */
	char member[EO_PLAN_NAME_MAX]; /* RELEASE_PVC: the EtcdMember that owns it */
	/*
	 * RELEASE_PVC: {"metadata":{"ownerReferences":<the others or null>,
	 * "resourceVersion":<the PVC's>}}: a 409 means the PVC changed, plan again.
	 */
	json_t *patch;
	/* DROP_FINALIZER of a Retain cluster: the PVCs it keeps (checked live by the caller) */
	bool retained;
	const char *event_type; /* "Normal" with event_reason, else NULL */
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

/* True when the cluster carries EO_FINALIZER_RETAIN_DATA. */
bool eo_plan_retain_has_finalizer(const json_t *cluster);

/*
 * For the member finalizer (plan/member.c), when its cluster is being deleted: true while the
 * cluster is Retain, holds EO_FINALIZER_RETAIN_DATA and the member's PVC (pvc, may be NULL)
 * still carries an owner reference to the member. The finalizer then waits for the release:
 * garbage collection would take the PVC with the EtcdMember.
 */
bool eo_plan_retain_holds_member(const json_t *cluster, const json_t *member, const json_t *pvc);

/* Plans the next step. 0, or -1 on allocation failure or missing metadata. */
int eo_plan_retain(const struct eo_retain_input *in, struct eo_retain_result *out);
void eo_plan_retain_clear(struct eo_retain_result *r);

#endif
