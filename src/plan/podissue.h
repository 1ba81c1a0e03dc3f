/*
 * plan/podissue.h - why a member's Pod does not run, in the user's words (pure).
 *
 * From the cached EtcdMember, its Pod and its PVC, eo_plan_pod_issue() tells what keeps the
 * member from running, when it is something the user has to fix rather than a step under
 * way: an image that cannot be pulled, a Pod the scheduler cannot place, a volume that is not
 * bound or not mounted, a container that cannot be created or started, an etcd that keeps
 * crashing, or a restore at bootstrap that failed (the reason the restore init container left
 * in its termination message, api/restorefail.h, with what to do).
 *
 * The member controller writes the issue into the EtcdMember's Ready=False condition (reason
 * and message). The cluster controller appends eo_plan_member_issues() to the EtcdCluster's
 * conditions that say something is wrong; that list also carries a write of the member
 * controller that the apiserver refused (its Pod or PVC create, recorded in the EtcdMember's
 * Ready condition with a reason of plan/failure.h). Messages are stable for a given problem (no
 * timestamps or counters), so an unchanged problem writes no status.
 */
#ifndef EO_PLAN_PODISSUE_H
#define EO_PLAN_PODISSUE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "api/names.h"
#include "plan/plan.h"

enum eo_pod_issue_kind {
	EO_POD_ISSUE_NONE = 0,
	EO_POD_ISSUE_IMAGE_PULL,	 /* ErrImagePull, ImagePullBackOff, InvalidImageName, ... */
	EO_POD_ISSUE_UNSCHEDULABLE,	 /* PodScheduled=False/Unschedulable */
	EO_POD_ISSUE_VOLUME_NOT_BOUND,	 /* ... and the member's PVC is Pending */
	EO_POD_ISSUE_VOLUME_NOT_MOUNTED, /* scheduled long ago, containers still being created */
	EO_POD_ISSUE_CONTAINER_ERROR,	 /* CreateContainerConfigError, RunContainerError, ... */
	EO_POD_ISSUE_CRASH_LOOP,	 /* CrashLoopBackOff */
	EO_POD_ISSUE_RESTORE_FAILED,	 /* an init container restore/restore-rebuild failed */
};

/* Reasons of the EtcdMember's Ready=False condition for each kind (CamelCase). */
#define EO_REASON_IMAGE_PULL_FAILED   "ImagePullFailed"
#define EO_REASON_UNSCHEDULABLE	      "Unschedulable"
#define EO_REASON_VOLUME_NOT_BOUND    "VolumeNotBound"
#define EO_REASON_VOLUME_NOT_MOUNTED  "VolumeNotMounted"
#define EO_REASON_CONTAINER_ERROR     "ContainerError"
#define EO_REASON_CONTAINER_CRASHLOOP "CrashLoopBackOff"
/* EO_POD_ISSUE_RESTORE_FAILED: one of the reasons of api/restorefail.h. */

/*
 * Seconds a scheduled Pod may spend creating its containers before the member reads
 * VolumeNotMounted (an attach or mount that does not finish shows only as Events).
 */
#define EO_POD_ISSUE_MOUNT_GRACE_S 120
/*
 * Seconds a Pod may be unschedulable for want of a bound PVC before the member reads
 * VolumeNotBound: the scheduler says "pod has unbound immediate PersistentVolumeClaims" for
 * a moment on every new member while its PVC is provisioned.
 */
#define EO_POD_ISSUE_BIND_GRACE_S 30

#define EO_POD_ISSUE_MSG_MAX 900

struct eo_pod_issue {
	enum eo_pod_issue_kind kind;
	const char *reason; /* one of the reasons above; NULL when none */
	char message[EO_POD_ISSUE_MSG_MAX];
};

/*
 * Classifies what keeps member (borrowed, with status) from running, given its Pod and PVC
 * (NULL when absent). now is used only for the VolumeNotMounted grace. True and *out filled
 * when there is an issue; false (out->kind NONE) when the Pod is ready, is being deleted, or
 * is simply on its way.
 */
bool eo_plan_pod_issue(const json_t *member, const json_t *pod, const json_t *pvc, time_t now,
		       struct eo_pod_issue *out);

/*
 * The point a seed was restored to from an archive: the result the restore-replay init
 * container (desired/restore.h) of pod left as its termination message when it succeeded
 * ({"revision":R,"time":"<RFC 3339>",...}). True with *revision (>= 1) and time (the
 * replayed revision's receive time, "" when not recorded or longer than cap); false when pod has
 * no such container or it has not succeeded.
 */
#define EO_ARCHIVE_TIME_MAX 40
bool eo_plan_archive_restored(const json_t *pod, int64_t *revision, char *time, size_t cap);

/*
 * "member <m>: <issue>; member <m2>: <issue>" for the members (not being deleted, not
 * dormant, not pending) that have an issue or whose Ready condition has a failure reason, at most
 * EO_POD_ISSUE_LIST_MAX of them, then "(and <k> more)". Empty when none. Returns the number of
 * members with an issue.
 */
#define EO_POD_ISSUE_LIST_MAX 2
/* Room for the list (EO_POD_ISSUE_LIST_MAX members with their names, and the tail). */
#define EO_PLAN_ISSUES_MAX (EO_POD_ISSUE_LIST_MAX * (EO_POD_ISSUE_MSG_MAX + EO_NAME_MAX + 16) + 32)
size_t eo_plan_member_issues(const struct eo_plan_member *v, size_t n, time_t now, char *buf,
			     size_t cap);

#endif
