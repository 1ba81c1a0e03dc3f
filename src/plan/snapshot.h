/*
 * plan/snapshot.h - the next step of an EtcdSnapshot (pure).
 *
 * Input: the EtcdSnapshot, its EtcdCluster and members (with their Pods), the Job
 * <snapshot>-snapshot when the snapshot controls it, that Job's Pods. Output: one action,
 * the desired status (phase, artifact, the Ready condition) and an Event.
 *
 *   phase Complete / Failed      nothing, ever (final)
 *   spec invalid                 Failed / InvalidSpec
 *   Job exists, Complete         Complete / SnapshotStored with status.artifact from the
 *                                agent's result line (the Pod's termination message); a Job
 *                                that completed without a readable result is Failed / JobFailed
 *   Job exists, Failed           Failed / JobFailed, with the agent's last words
 *   Job exists, running          Started / JobRunning (JobCreated until a Pod runs)
 *   a foreign Job of that name   Failed / JobFailed (nothing of it is touched)
 *   no Job, phase Started        CONFIRM_JOB_GONE (the controller GETs the Job live), then
 *                                Failed / SnapshotJobLost
 *   no Job, not started          the cluster decides: missing -> Pending / ClusterNotFound,
 *                                paused -> Pending / ClusterPaused, no ready voter ->
 *                                Pending / ClusterNotReady (all retried), spec.auth not
 *                                latched yet (status.authEnabled) -> Pending / ClusterNotReady,
 *                                Failed / AuthLatchTimeout after EO_SPLAN_AUTH_LATCH_TIMEOUT_S
 *                                from the snapshot's creation; a PVC destination is
 *                                then read live (READ_VOLUME, plan/volref.h): missing ->
 *                                Pending / VolumeNotFound (retried), controlled by another
 *                                object or labelled as etcd member data -> Failed /
 *                                ForeignVolume (nothing mounted); otherwise CREATE_JOB
 *                                and Started / JobCreated
 *
 * The Job reaches etcd through the cluster's voters whose Pod is ready, oldest Pod first
 * (eo_plan_voter_endpoints over the voters only): never a learner.
 */
#ifndef EO_PLAN_SNAPSHOT_H
#define EO_PLAN_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "desired/desired.h"
#include "plan/plan.h"

/* Retry while the cluster is missing, paused or not ready; re-read a completed Job's Pod. */
#define EO_SPLAN_RETRY_MS	10000L
#define EO_SPLAN_RESULT_WAIT_MS 2000L
/* How long a snapshot of a cluster with spec.auth waits for status.authEnabled. */
#define EO_SPLAN_AUTH_LATCH_TIMEOUT_S 600
/* How long a completed Job may go without a readable result before the snapshot fails. */
#define EO_SPLAN_RESULT_GRACE_S 60

/* Reasons this build adds to the seed's list (api/conditions.h has the others). */
#define EO_REASON_CLUSTER_PAUSED    "ClusterPaused"
#define EO_REASON_CLUSTER_NOT_READY "ClusterNotReady"
#define EO_REASON_SNAPSHOT_INVALID  "InvalidSpec"

enum eo_splan_action {
	EO_SPLAN_NONE = 0,	   /* nothing to do (final, or only the status to write) */
	EO_SPLAN_WAIT,		   /* the Job runs, or the cluster is not there yet */
	EO_SPLAN_CREATE_JOB,	   /* create result->job, then write the status */
	EO_SPLAN_CONFIRM_JOB_GONE, /* GET the Job live; plan again with job_confirmed_gone */
	EO_SPLAN_READ_VOLUME,	   /* GET the destination PVC live; plan again with dest_pvc_read */
};

struct eo_splan_input {
	const json_t *snapshot;		      /* the EtcdSnapshot, with status */
	const json_t *cluster;		      /* its EtcdCluster, or NULL */
	const struct eo_plan_member *members; /* the cluster's members (any order) */
	size_t n_members;
	const json_t *job;	 /* Job <snapshot>-snapshot controlled by the snapshot, or NULL */
	const json_t *job_pods;	 /* array of that Job's Pods, or NULL */
	bool job_confirmed_gone; /* a live GET found no Job */
	bool foreign_job;	 /* a Job of that name exists and is not the snapshot's */
	/* After READ_VOLUME: the destination PVC as a live GET found it (NULL: none). */
	bool dest_pvc_read;
	const json_t *dest_pvc;
	const char *operator_image;
	const struct eo_desired_opts *build;
	time_t now;
};

struct eo_splan_result {
	enum eo_splan_action action;
	json_t *job;	     /* CREATE_JOB: the desired Job (new reference) */
	json_t *status;	     /* desired status (new reference) */
	bool status_changed; /* differs from the snapshot's status */
	long requeue_ms;
	const char *event_type; /* NULL: no Event */
	const char *event_reason;
	char message[EO_PLAN_MSG_MAX];
};

/* "none", "wait", "create-job", "confirm-job-gone", "read-volume". */
const char *eo_splan_action_name(enum eo_splan_action a);

/* Plans the next step. 0, or -1 on allocation failure or missing metadata. */
int eo_plan_snapshot(const struct eo_splan_input *in, struct eo_splan_result *out);

void eo_splan_result_clear(struct eo_splan_result *r);

/*
 * The agent's result line {"uri","sizeBytes","checksum"[,"revision"]} checked: uri non-empty
 * and at most 2048 bytes, sizeBytes >= 0, checksum "sha256:" and 64 lowercase hex digits,
 * revision (optional: agents before it leave it out) an integer >= 0. New reference of the
 * artifact object, or NULL (with why in err) when the line is not that.
 */
json_t *eo_splan_parse_result(const char *line, char *err, size_t errcap);

#endif
