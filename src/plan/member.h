/*
 * plan/member.h - decisions of the member controller (pure).
 *
 * One EtcdMember, its Pod and PVC, its cluster and (when asked for) what its etcd endpoint says
 * about itself give the ONE next action and the member's desired status. Same two-phase use as
 * plan/plan.h: EO_MPLAN_QUERY_ETCD asks the controller to list members / read the member's
 * status through result->endpoint and plan again.
 *
 * Ownership: result->status and result->object are new references freed by
 * eo_member_plan_clear(); everything in the input is borrowed.
 */
#ifndef EO_PLAN_MEMBER_H
#define EO_PLAN_MEMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "api/names.h"
#include "desired/desired.h"
#include "etcd/types.h"

enum eo_mplan_action {
	EO_MPLAN_NONE = 0,	 /* write the status if it differs */
	EO_MPLAN_WAIT,		 /* e.g. initialCluster still empty */
	EO_MPLAN_ADD_FINALIZER,	 /* merge-patch metadata.finalizers (+ ours) */
	EO_MPLAN_REMOVE_MEMBER,	 /* deleting: MemberRemove via the other members, then drop */
	EO_MPLAN_DROP_FINALIZER, /* deleting, nothing to remove in etcd: drop our finalizer */
	EO_MPLAN_CREATE_PVC,	 /* create result->object */
	EO_MPLAN_CREATE_POD,	 /* create result->object */
	EO_MPLAN_DELETE_POD,	 /* dormant member: delete its Pod, keep the PVC */
	EO_MPLAN_PATCH_POD,	 /* merge-patch result->object onto the Pod (labels) */
	EO_MPLAN_REFUSE,	 /* a same-named PVC/Pod not controlled by this member */
	EO_MPLAN_QUERY_ETCD,	 /* ask result->endpoint, then plan again */
	EO_MPLAN_READ_VOLUME,	 /* GET PVC result->volume live, then plan again (volume_read) */
	EO_MPLAN_READ_CLASS,	 /* GET StorageClass result->storage_class live, then plan again */
	EO_MPLAN_PATCH_PVC,	 /* merge-patch result->object onto the PVC (its request grows) */
	EO_MPLAN_ACTION_COUNT_
};

const char *eo_mplan_action_name(enum eo_mplan_action a);

struct eo_plan_failure; /* plan/failure.h */

struct eo_mplan_input {
	const json_t *member;
	const json_t *cluster; /* owning EtcdCluster, NULL when gone */
	const json_t *pod;     /* Pod named after the member, NULL when absent */
	const json_t *pvc;     /* PVC data-<member>, NULL when absent */
	const struct eo_desired_opts *build;
	/* etcd, after EO_MPLAN_QUERY_ETCD */
	bool etcd_queried;
	eo_etcd_err list_err;		     /* member list through the endpoint */
	const struct eo_etcd_members *list;  /* valid when list_err == OK */
	eo_etcd_err status_err;		     /* Maintenance Status of the endpoint */
	const struct eo_etcd_status *status; /* valid when status_err == OK */
	/*
	 * The write the previous plan of this pass asked for (Pod or PVC create, label patch,
	 * Pod delete, finalizer patch) was refused: plan again with it to get the status to
	 * write (Ready=False/CreateFailed, ...); that plan's action is not carried out.
	 */
	const struct eo_plan_failure *failure;
	/*
	 * After EO_MPLAN_READ_VOLUME: the restore source PVC the Pod to create would mount, as a
	 * live GET found it (NULL: none). The Pod is created only when plan/volref.h accepts it;
	 * otherwise Ready=False/VolumeNotFound (waits) or ForeignVolume (refused).
	 */
	bool volume_read;
	const json_t *volume;
	/*
	 * After EO_MPLAN_READ_CLASS: the StorageClass of the member's unbound PVC, as a live GET
	 * found it (NULL: none, or it could not be read). A class that binds immediately makes
	 * the Pod wait for the PVC to be bound (see pod_held in plan/member.c).
	 */
	bool class_read;
	const json_t *storage_class;
	time_t now;
};

#define EO_MPLAN_MSG_MAX 1024

struct eo_mplan_result {
	enum eo_mplan_action action;
	json_t *object;			   /* CREATE_*: object, PATCH_POD, PATCH_PVC: patch */
	char endpoint[EO_DESIRED_URL_MAX]; /* QUERY_ETCD: the member's client URL */
	char volume[EO_NAME_MAX];	   /* READ_VOLUME: the PVC to read */
	char storage_class[EO_NAME_MAX];   /* READ_CLASS: the StorageClass to read */
	json_t *status;			   /* desired status (new ref) or NULL */
	bool status_changed;
	long requeue_ms;
	const char *event_type; /* NULL: no event */
	const char *event_reason;
	char message[EO_MPLAN_MSG_MAX];
};

int eo_member_plan(const struct eo_mplan_input *in, struct eo_mplan_result *out);
void eo_member_plan_clear(struct eo_mplan_result *r);

#endif
