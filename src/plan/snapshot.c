/*
 * plan/snapshot.c - the next step of an EtcdSnapshot. See snapshot.h.
 */
#include "plan/snapshot.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "api/member.h"
#include "api/names.h"
#include "api/snapshot.h"
#include "api/timeutil.h"
#include "core/util.h"
#include "desired/snapshot_job.h"
#include "api/meta.h"
#include "plan/volref.h"

#define URI_MAX	   2048
#define SHA256_HEX 64
#define WORDS_MAX  300 /* of the agent's last words quoted in a message */

static const char *const names[] = {
    [EO_SPLAN_NONE] = "none",
    [EO_SPLAN_WAIT] = "wait",
    [EO_SPLAN_CREATE_JOB] = "create-job",
    [EO_SPLAN_CONFIRM_JOB_GONE] = "confirm-job-gone",
    [EO_SPLAN_READ_VOLUME] = "read-volume",
};

const char *eo_splan_action_name(enum eo_splan_action a)
{
	return EO_ENUM_NAME(names, a, "none");
}

void eo_splan_result_clear(struct eo_splan_result *r)
{
	json_decref(r->job);
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

#define msgf(out, ...) EO_FMT((out)->message, __VA_ARGS__)

json_t *eo_splan_parse_result(const char *line, char *err, size_t errcap)
{
	json_error_t jerr;
	json_t *j = NULL, *uri, *size, *sum, *rev;
	const char *u, *c;

	if (line == NULL || line[0] == '\0') {
		snprintf(err, errcap, "no result line");
		return NULL;
	}
	j = json_loads(line, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(j)) {
		snprintf(err, errcap, "the result line is not a JSON object");
		json_decref(j);
		return NULL;
	}
	uri = json_object_get(j, "uri");
	size = json_object_get(j, "sizeBytes");
	sum = json_object_get(j, "checksum");
	rev = json_object_get(j, "revision");
	u = json_string_value(uri);
	c = json_string_value(sum);
	if (u == NULL || u[0] == '\0' || strlen(u) > URI_MAX) {
		snprintf(err, errcap, "the result has no usable uri");
		goto bad;
	}
	if (!json_is_integer(size) || json_integer_value(size) < 0) {
		snprintf(err, errcap, "the result has no usable sizeBytes");
		goto bad;
	}
	if (c == NULL || strncmp(c, "sha256:", 7) != 0 || strlen(c + 7) != SHA256_HEX) {
		snprintf(err, errcap, "the result has no sha256 checksum");
		goto bad;
	}
	for (const char *p = c + 7; *p; p++)
		if (!isdigit((unsigned char)*p) && (*p < 'a' || *p > 'f')) {
			snprintf(err, errcap, "the result's checksum is not lowercase hex");
			goto bad;
		}
	/* An agent older than the revision field leaves it out; a bad one is refused. */
	if (rev != NULL && (!json_is_integer(rev) || json_integer_value(rev) < 0)) {
		snprintf(err, errcap, "the result's revision is not a non-negative integer");
		goto bad;
	}
	{
		json_t *a = json_pack("{s:s, s:I, s:s}", "uri", u, "sizeBytes",
				      (json_int_t)json_integer_value(size), "checksum", c);

		if (a != NULL && rev != NULL &&
		    json_object_set_new(a, "revision", json_integer(json_integer_value(rev))) !=
			0) {
			json_decref(a);
			a = NULL;
		}
		json_decref(j);
		if (a == NULL)
			snprintf(err, errcap, "out of memory");
		return a;
	}
bad:
	json_decref(j);
	return NULL;
}

/* The Job's condition of that type is True (its message in *message). */
static bool job_condition(const json_t *job, const char *type, const char **message)
{
	return eo_condition_true_message(json_object_get(job, "status"), type, message);
}

/* The terminated state of the agent container of pod, or NULL. */
static const json_t *agent_terminated(const json_t *pod)
{
	const json_t *c =
	    eo_json_named(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
			  EO_SNAPSHOT_CONTAINER);

	return json_object_get(json_object_get(c, "state"), "terminated");
}

/* The artifact from a Pod that succeeded; NULL with why in err. */
static json_t *job_result(const json_t *pods, char *err, size_t errcap)
{
	const json_t *p;
	size_t i;

	snprintf(err, errcap, "no Pod of the Job has a result");
	json_array_foreach(pods, i, p)
	{
		const json_t *t = agent_terminated(p);
		char line[URI_MAX + 256];

		if (t == NULL || json_integer_value(json_object_get(t, "exitCode")) != 0)
			continue;
		eo_last_line(json_string_value(json_object_get(t, "message")), line, sizeof(line));
		return eo_splan_parse_result(line, err, errcap);
	}
	return NULL;
}

/* The last words of the newest failed agent container, into buf ("" when none). */
static void job_last_words(const json_t *pods, char *buf, size_t n)
{
	const char *best_at = NULL;
	const json_t *p;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(pods, i, p)
	{
		const json_t *t = agent_terminated(p);
		const char *at = json_string_value(json_object_get(t, "finishedAt"));

		if (t == NULL || json_integer_value(json_object_get(t, "exitCode")) == 0)
			continue;
		if (best_at != NULL && at != NULL && strcmp(at, best_at) <= 0)
			continue;
		best_at = at != NULL ? at : "";
		eo_last_line(json_string_value(json_object_get(t, "message")), buf, n);
	}
}

/* Seconds since the Job's completionTime (or its last condition), -1 when unknown. */
static long since_completion(const json_t *job, time_t now)
{
	const char *ts =
	    json_string_value(json_object_get(json_object_get(job, "status"), "completionTime"));
	time_t t;

	if (ts == NULL || eo_time_parse(ts, &t) != 0)
		return -1;
	return (long)(now - t);
}

/* Builds out->status from the snapshot's status with phase, artifact and Ready set. */
static int set_status(const struct eo_splan_input *in, struct eo_splan_result *out,
		      enum eo_snapshot_phase phase, json_t *artifact, const char *cond_status,
		      const char *reason)
{
	const json_t *cur = json_object_get(in->snapshot, "status");
	json_t *st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	struct eo_condition c = {
	    .type = EO_COND_READY,
	    .status = cond_status,
	    .reason = reason,
	    .message = out->message,
	    .observed_generation = eo_meta_generation(in->snapshot, -1),
	};

	if (st == NULL ||
	    json_object_set_new(st, "phase", json_string(eo_snapshot_phase_str(phase))) != 0 ||
	    (artifact != NULL && json_object_set(st, "artifact", artifact) != 0) ||
	    eo_condition_set(st, &c, in->now) < 0) {
		json_decref(st);
		return -1;
	}
	out->status = st;
	out->status_changed = !json_equal(st, cur);
	return 0;
}

/* A status-only step; the Event is emitted when the status changes. */
static int step(const struct eo_splan_input *in, struct eo_splan_result *out,
		enum eo_splan_action action, enum eo_snapshot_phase phase, json_t *artifact,
		const char *cond_status, const char *reason, const char *event_type)
{
	out->action = action;
	out->event_type = event_type;
	out->event_reason = reason;
	return set_status(in, out, phase, artifact, cond_status, reason);
}

static int plan_job(const struct eo_splan_input *in, struct eo_splan_result *out,
		    const char *job_name)
{
	char err[256], words[WORDS_MAX];
	const char *why = NULL;
	json_t *artifact = NULL;
	long since;
	int rc;

	if (job_condition(in->job, "Complete", NULL)) {
		artifact = job_result(in->job_pods, err, sizeof(err));
		if (artifact != NULL) {
			json_t *rev = json_object_get(artifact, "revision");
			char revs[40] = "";

			if (rev != NULL)
				snprintf(revs, sizeof(revs), ", revision %lld",
					 (long long)json_integer_value(rev));
			msgf(out, "snapshot stored at %s (%lld bytes, %s%s)",
			     json_string_value(json_object_get(artifact, "uri")),
			     (long long)json_integer_value(json_object_get(artifact, "sizeBytes")),
			     json_string_value(json_object_get(artifact, "checksum")), revs);
			rc = step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_COMPLETE, artifact,
				  EO_COND_TRUE, EO_REASON_SNAPSHOT_STORED, "Normal");
			json_decref(artifact);
			return rc;
		}
		since = since_completion(in->job, in->now);
		if (since >= 0 && since < EO_SPLAN_RESULT_GRACE_S) {
			/* The Pod's final status may not have reached the cache yet. */
			msgf(out, "Job %s completed; reading the agent's result", job_name);
			out->requeue_ms = EO_SPLAN_RESULT_WAIT_MS;
			return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_STARTED, NULL,
				    EO_COND_FALSE, EO_REASON_JOB_RUNNING, NULL);
		}
		msgf(out,
		     "Job %s completed but its result cannot be read (%s); the snapshot may be "
		     "stored: check the Job's log (kubectl logs job/%s) before you rely on it",
		     job_name, err, job_name);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_JOB_FAILED, "Warning");
	}
	if (job_condition(in->job, "Failed", &why)) {
		job_last_words(in->job_pods, words, sizeof(words));
		msgf(out, "Job %s failed (%s)%s%s; nothing new is stored: see kubectl logs job/%s",
		     job_name, why != NULL ? why : "no reason given", words[0] ? ": " : "", words,
		     job_name);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_JOB_FAILED, "Warning");
	}
	if (json_integer_value(json_object_get(json_object_get(in->job, "status"), "active")) > 0) {
		msgf(out, "Job %s is taking the snapshot", job_name);
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_STARTED, NULL, EO_COND_FALSE,
			    EO_REASON_JOB_RUNNING, "Normal");
	}
	msgf(out, "Job %s created", job_name);
	return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_STARTED, NULL, EO_COND_FALSE,
		    EO_REASON_JOB_CREATED, NULL);
}

/* Voter endpoints with a ready Pod, oldest first; -1 when a URL does not fit. */
static int ready_voters(const struct eo_splan_input *in, char endpoints[][EO_DESIRED_URL_MAX],
			size_t cap)
{
	struct eo_plan_member *v = calloc(in->n_members + 1, sizeof(*v));
	size_t n = 0;
	int rc;

	if (v == NULL)
		return -1;
	for (size_t i = 0; i < in->n_members; i++) {
		const struct eo_plan_member *m = &in->members[i];

		if (eo_member_is_voter(m->member) && !eo_member_is_deleting(m->member) &&
		    !eo_member_dormant(m->member) && eo_plan_pod_ready(m->pod))
			v[n++] = *m;
	}
	rc = n == 0 ? 0
		    : eo_plan_voter_endpoints(v, n, NULL, in->cluster, in->build, endpoints, cap);
	free(v);
	return rc;
}

/*
 * A PVC destination is mounted only after a live read found it the user's own (plan/volref.h).
 * 1 when this step decided (out filled, or READ_VOLUME asked), 0 to go on, -1 on error.
 */
static int check_volume(const struct eo_splan_input *in, struct eo_splan_result *out)
{
	struct eo_snapshot_location d;
	char why[EO_PLAN_MSG_MAX - 64];

	eo_snapshot_destination(in->snapshot, &d);
	if (d.kind != EO_LOCATION_PVC)
		return 0;
	if (!in->dest_pvc_read) {
		out->action = EO_SPLAN_READ_VOLUME;
		msgf(out, "reading PVC %s before it is mounted", d.claim_name);
		return 1;
	}
	switch (eo_plan_volref_check(in->dest_pvc, d.claim_name, eo_meta_uid(in->snapshot), NULL,
				     why, sizeof(why))) {
	case EO_VOLREF_USABLE:
		return 0;
	case EO_VOLREF_MISSING:
		msgf(out, "destination %s; the snapshot waits", why);
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
			    EO_REASON_VOLUME_NOT_FOUND, "Warning") == 0
			   ? 1
			   : -1;
	case EO_VOLREF_FOREIGN:
	default:
		out->requeue_ms = 0;
		msgf(out, "destination refused: %s", why);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_FOREIGN_VOLUME, "Warning") == 0
			   ? 1
			   : -1;
	}
}

/*
 * spec.auth: the snapshot is taken once the operator turned authentication on
 * (status.authEnabled), so that it holds the root user; a cluster that never gets there (wrong
 * password, Secret missing) fails the snapshot after a while.
 */
static int auth_not_on(const struct eo_splan_input *in, struct eo_splan_result *out,
		       const char *cname)
{
	const char *ts = json_string_value(eo_meta_get(in->snapshot, "creationTimestamp"));
	time_t created = 0;

	if (ts != NULL && eo_time_parse(ts, &created) == 0 &&
	    in->now - created >= EO_SPLAN_AUTH_LATCH_TIMEOUT_S) {
		msgf(out,
		     "EtcdCluster %s has spec.auth.enabled but did not turn authentication "
		     "on (status.authEnabled) within %d s; see its conditions "
		     "(AuthCredentialsRejected, AuthSecretNotFound, ...) and create a new "
		     "EtcdSnapshot once it has",
		     cname, EO_SPLAN_AUTH_LATCH_TIMEOUT_S);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_AUTH_LATCH_TIMEOUT, "Warning");
	}
	msgf(out,
	     "EtcdCluster %s has spec.auth.enabled and authentication is not on yet "
	     "(status.authEnabled); the snapshot waits",
	     cname);
	return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
		    EO_REASON_CLUSTER_NOT_READY, "Warning");
}

/* The cluster can serve a snapshot: the Job goes to its ready voters (or the volume waits). */
static int create_job(const struct eo_splan_input *in, struct eo_splan_result *out,
		      const char *job_name, const char *cname)
{
	char(*eps)[EO_DESIRED_URL_MAX] = NULL;
	int n, rc;

	eps = calloc(EO_PLAN_MAX_ENDPOINTS, sizeof(*eps));
	if (eps == NULL)
		return -1;
	n = ready_voters(in, eps, EO_PLAN_MAX_ENDPOINTS);
	if (n < 0) {
		free(eps);
		return -1;
	}
	if (n == 0) {
		free(eps);
		msgf(out,
		     "EtcdCluster %s has no voting member with a ready Pod; the snapshot "
		     "waits",
		     cname);
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
			    EO_REASON_CLUSTER_NOT_READY, "Warning");
	}
	rc = check_volume(in, out);
	if (rc != 0) {
		free(eps);
		return rc < 0 ? -1 : 0;
	}
	out->job = eo_desired_snapshot_job(in->snapshot, in->cluster, in->operator_image, in->build,
					   (const char(*)[EO_DESIRED_URL_MAX])eps, (size_t)n);
	free(eps);
	if (out->job == NULL)
		return -1;
	out->requeue_ms = 0;
	msgf(out, "Job %s created to snapshot EtcdCluster %s through %d voter(s)", job_name, cname,
	     n);
	rc = step(in, out, EO_SPLAN_CREATE_JOB, EO_SNAPSHOT_PHASE_STARTED, NULL, EO_COND_FALSE,
		  EO_REASON_JOB_CREATED, "Normal");
	return rc;
}

int eo_plan_snapshot(const struct eo_splan_input *in, struct eo_splan_result *out)
{
	const char *name = eo_meta_name(in->snapshot);
	const char *cname = eo_snapshot_cluster_name(in->snapshot);
	enum eo_snapshot_phase phase = eo_snapshot_phase(in->snapshot);
	char job_name[EO_NAME_MAX], vmsg[256];

	memset(out, 0, sizeof(*out));
	if (name == NULL || eo_meta_namespace(in->snapshot) == NULL ||
	    eo_meta_uid(in->snapshot) == NULL ||
	    eo_name_snapshot_job(job_name, sizeof(job_name), name) != 0)
		return -1;
	if (eo_snapshot_phase_is_terminal(phase))
		return 0; /* final: never runs again */
	if (eo_snapshot_validate(in->snapshot, NULL, vmsg, sizeof(vmsg)) != 0) {
		msgf(out, "invalid spec: %s", vmsg);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_SNAPSHOT_INVALID, "Warning");
	}
	if (in->foreign_job) {
		msgf(out,
		     "a Job named %s exists and does not belong to this snapshot; delete it or "
		     "create the EtcdSnapshot under another name",
		     job_name);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_JOB_FAILED, "Warning");
	}
	if (in->job != NULL)
		return plan_job(in, out, job_name);
	if (phase == EO_SNAPSHOT_PHASE_STARTED) {
		if (!in->job_confirmed_gone) {
			out->action = EO_SPLAN_CONFIRM_JOB_GONE;
			msgf(out, "Job %s is not in the cache", job_name);
			return 0;
		}
		msgf(out,
		     "Job %s was deleted before it reported a result; whether a snapshot was "
		     "stored is unknown: create a new EtcdSnapshot",
		     job_name);
		return step(in, out, EO_SPLAN_NONE, EO_SNAPSHOT_PHASE_FAILED, NULL, EO_COND_FALSE,
			    EO_REASON_SNAPSHOT_JOB_LOST, "Warning");
	}
	out->requeue_ms = EO_SPLAN_RETRY_MS;
	if (in->operator_image == NULL || in->operator_image[0] == '\0') {
		msgf(out, "the operator has no image to run the snapshot agent with: set "
			  "OPERATOR_IMAGE on the operator Deployment");
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
			    EO_REASON_OPERATOR_IMAGE_NOT_CONFIGURED, "Warning");
	}
	if (in->cluster == NULL || eo_cluster_is_deleting(in->cluster)) {
		msgf(out, "EtcdCluster %s %s; the snapshot waits for it", cname,
		     in->cluster == NULL ? "does not exist" : "is being deleted");
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
			    EO_REASON_CLUSTER_NOT_FOUND, "Warning");
	}
	if (eo_cluster_replicas(in->cluster) == 0) {
		msgf(out,
		     "EtcdCluster %s is paused (replicas 0); the snapshot waits until it is "
		     "scaled up",
		     cname);
		return step(in, out, EO_SPLAN_WAIT, EO_SNAPSHOT_PHASE_PENDING, NULL, EO_COND_FALSE,
			    EO_REASON_CLUSTER_PAUSED, "Warning");
	}
	if (eo_cluster_auth_enabled(in->cluster) && !eo_cluster_auth_latched(in->cluster))
		return auth_not_on(in, out, cname);
	return create_job(in, out, job_name, cname);
}
