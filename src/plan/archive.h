/*
 * plan/archive.h - the EtcdArchive reconciler's decision (pure), issue 20 item 1.
 *
 * Input: the EtcdArchive, its EtcdCluster (NULL: not found), the cluster's member client
 * URLs, the archiver Deployment read live (NULL: none; foreign: a Deployment of that name the
 * archive does not control), whether the archiver's Pod is ready, and what its GET /status
 * answered (agent/archive.h), if it was polled.
 *
 * Output: at most one Deployment action (create it, or replace it when its hash differs from
 * the one built now), the status the archive should have (the window, lag and last upload
 * from the agent's answer; kept from the previous status while the agent does not answer),
 * with the conditions:
 *
 *   Ready               True  Archiving              the agent answers and has a window
 *                       False InvalidSpec            a rule of the CRD fails
 *                       False ClusterNotFound        spec.clusterRef names no EtcdCluster
 *                       False DestinationUnsupported an s3 destination (not implemented yet)
 *                       False ForeignObject          <archive>-archiver is not ours
 *                       False WaitingForMembers      the cluster has no member to archive
 *                       False ArchiverStarting       the Deployment was just made or its Pod
 *                                                    is not ready, or no base is stored yet
 *                       False ArchiverUnreachable    the ready Pod's /status did not answer
 *                       False ArchiverFailing        the agent reports an error, or its
 *                                                    container has exited with an error and
 *                                                    is not ready again (its termination
 *                                                    message: the tail of its log)
 *   LagWithinThreshold  True  LagWithinThreshold     lag <= spec.lagThresholdSeconds
 *                       False LagTooHigh             lag above it
 *                       Unknown LagUnknown           no answer from the agent
 *
 * A Warning Event accompanies a change of Ready to False (except ArchiverStarting) and of
 * LagWithinThreshold to False; Normal ArchiveReady when Ready turns True. The reconciler comes
 * back every EO_APLAN_POLL_MS (the poll period).
 *
 * ClusterNotFound and WaitingForMembers with this archive's archiver Pod ready: the Pod is
 * still polled and its window, lag and last upload still written (the message adds the
 * window), so that after losing the cluster the status shows what a restore can reach.
 */
#ifndef EO_PLAN_ARCHIVE_H
#define EO_PLAN_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "desired/desired.h"

#define EO_APLAN_POLL_MS     30000L
#define EO_APLAN_STARTING_MS 5000L /* sooner while the archiver starts */
#define EO_APLAN_MSG_MAX     512

#define EO_COND_ARCHIVE_READY		    "Ready"
#define EO_COND_LAG_WITHIN_THRESHOLD	    "LagWithinThreshold"
#define EO_REASON_ARCHIVING		    "Archiving"
#define EO_REASON_ARCHIVE_CLUSTER_NOT_FOUND "ClusterNotFound"
#define EO_REASON_DESTINATION_UNSUPPORTED   "DestinationUnsupported"
#define EO_REASON_WAITING_FOR_MEMBERS	    "WaitingForMembers"
#define EO_REASON_ARCHIVER_STARTING	    "ArchiverStarting"
#define EO_REASON_ARCHIVER_UNREACHABLE	    "ArchiverUnreachable"
#define EO_REASON_ARCHIVER_FAILING	    "ArchiverFailing"
#define EO_REASON_LAG_WITHIN_THRESHOLD	    "LagWithinThreshold"
#define EO_REASON_LAG_TOO_HIGH		    "LagTooHigh"
#define EO_REASON_LAG_UNKNOWN		    "LagUnknown"
#define EO_REASON_ARCHIVE_READY		    "ArchiveReady"

/* What the agent's GET /status said. */
struct eo_aplan_agent {
	bool has_window;
	int64_t from_revision, from_ms, to_revision, to_ms;
	int64_t cluster_revision, archived_revision;
	int64_t lag_revisions, lag_seconds, last_upload_ms;
	int64_t gaps;
	char error[256]; /* "" when none */
};

/* Parses a /status body: 0, or -1 when it is not the document (message in err). */
int eo_aplan_parse_status(const char *body, size_t len, struct eo_aplan_agent *out, char *err,
			  size_t errcap);

enum eo_aplan_action {
	EO_APLAN_NONE,
	EO_APLAN_CREATE,  /* create out->deployment */
	EO_APLAN_REPLACE, /* replace the live Deployment with out->deployment (its rv set) */
	EO_APLAN_POLL,	  /* the Pod is ready: poll /status and plan again with the answer */
};

struct eo_aplan_input {
	const json_t *archive;
	const json_t *cluster; /* NULL: not found */
	const char (*endpoints)[EO_DESIRED_URL_MAX];
	size_t n_endpoints;
	const char *operator_image;
	/* the archiver Pod's user (NULL: the default) */
	const struct eo_desired_opts *build;
	const json_t *deployment; /* live, NULL: none */
	bool deployment_foreign;  /* deployment is not controlled by the archive */
	bool pod_ready;		  /* the archiver's Pod is Ready */
	const json_t *pod;	  /* the archiver's Pod, NULL: none (for its crash record) */
	bool polled;		  /* agent / poll_error say what the poll gave */
	const struct eo_aplan_agent *agent; /* NULL: it did not answer (poll_error says why) */
	const char *poll_error;
	time_t now;
};

struct eo_aplan_result {
	enum eo_aplan_action action;
	json_t *deployment; /* new reference for CREATE / REPLACE */
	json_t *status;	    /* the desired status (new reference) */
	bool status_changed;
	const char *event_type, *event_reason; /* NULL: no Event */
	char message[EO_APLAN_MSG_MAX];
	long requeue_ms;
};

/* 0, or -1 on OOM. */
int eo_plan_archive(const struct eo_aplan_input *in, struct eo_aplan_result *out);
void eo_aplan_result_clear(struct eo_aplan_result *r);
const char *eo_aplan_action_name(enum eo_aplan_action a);

#endif
