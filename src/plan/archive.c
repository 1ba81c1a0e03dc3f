/*
 * plan/archive.c - the EtcdArchive reconciler's decision. See archive.h.
 */
#include "plan/archive.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/archive.h"
#include "api/conditions.h"
#include "api/meta.h"
#include "api/timeutil.h"
#include "desired/archive.h"

/* ---- the agent's /status ---------------------------------------------------------- */

static int get_i64(const json_t *o, const char *key, int64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = json_integer_value(v);
	return 0;
}

int eo_aplan_parse_status(const char *body, size_t len, struct eo_aplan_agent *out, char *err,
			  size_t errcap)
{
	json_error_t je;
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je), *w;
	const char *e;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(doc)) {
		snprintf(err, errcap, "the archiver's /status is not a JSON object");
		goto out;
	}
	if (get_i64(doc, "clusterRevision", &out->cluster_revision) != 0 ||
	    get_i64(doc, "archivedRevision", &out->archived_revision) != 0 ||
	    get_i64(doc, "lagRevisions", &out->lag_revisions) != 0 ||
	    get_i64(doc, "lagSeconds", &out->lag_seconds) != 0 ||
	    get_i64(doc, "lastUploadMs", &out->last_upload_ms) != 0 ||
	    get_i64(doc, "gaps", &out->gaps) != 0) {
		snprintf(err, errcap, "the archiver's /status lacks a field or has a negative one");
		goto out;
	}
	e = json_string_value(json_object_get(doc, "error"));
	snprintf(out->error, sizeof(out->error), "%s", e != NULL ? e : "");
	w = json_object_get(doc, "window");
	if (w != NULL) {
		if (get_i64(w, "fromRevision", &out->from_revision) != 0 ||
		    get_i64(w, "fromMs", &out->from_ms) != 0 ||
		    get_i64(w, "toRevision", &out->to_revision) != 0 ||
		    get_i64(w, "toMs", &out->to_ms) != 0 || out->to_revision < out->from_revision) {
			snprintf(err, errcap, "the archiver's /status has a malformed window");
			goto out;
		}
		out->has_window = true;
	}
	rc = 0;
out:
	json_decref(doc);
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---- status ------------------------------------------------------------------------- */

static json_t *time_ms(int64_t ms)
{
	char buf[64];

	if (ms <= 0 || eo_time_format((time_t)(ms / 1000), buf, sizeof(buf)) != 0)
		return json_null();
	return json_string(buf);
}

/* The agent's figures into status: 0, -1 on OOM. */
static int set_figures(json_t *st, const struct eo_aplan_agent *a)
{
	int rc = 0;

	if (a->has_window)
		rc |= json_object_set_new(
		    st, "window",
		    json_pack("{s:I, s:o, s:I, s:o}", "fromRevision", (json_int_t)a->from_revision,
			      "fromTime", time_ms(a->from_ms), "toRevision",
			      (json_int_t)a->to_revision, "toTime", time_ms(a->to_ms)));
	else
		json_object_del(st, "window");
	rc |= json_object_set_new(st, "lag",
				  json_pack("{s:I, s:I}", "seconds", (json_int_t)a->lag_seconds,
					    "revisions", (json_int_t)a->lag_revisions));
	if (a->last_upload_ms > 0)
		rc |= json_object_set_new(st, "lastUploadTime", time_ms(a->last_upload_ms));
	rc |= json_object_set_new(st, "gaps", json_integer(a->gaps));
	return rc == 0 ? 0 : -1;
}

struct verdict {
	const char *ready_status, *ready_reason, *lag_status, *lag_reason;
	char msg[EO_APLAN_MSG_MAX], lag_msg[EO_APLAN_MSG_MAX];
};

static void refuse(struct verdict *v, const char *reason)
{
	v->ready_status = EO_COND_FALSE;
	v->ready_reason = reason;
	v->lag_status = EO_COND_UNKNOWN;
	v->lag_reason = EO_REASON_LAG_UNKNOWN;
	snprintf(v->lag_msg, sizeof(v->lag_msg), "the archiver does not report yet");
}

/* The agent answered: Ready and the lag from its figures. */
static void judge_agent(const struct eo_aplan_input *in, struct verdict *v)
{
	const struct eo_aplan_agent *a = in->agent;
	int64_t thr = eo_archive_lag_threshold_seconds(in->archive);

	if (a->error[0] != '\0') {
		refuse(v, EO_REASON_ARCHIVER_FAILING);
		snprintf(v->msg, sizeof(v->msg), "the archiver reports: %s", a->error);
		return;
	}
	if (!a->has_window) {
		refuse(v, EO_REASON_ARCHIVER_STARTING);
		snprintf(v->msg, sizeof(v->msg), "the archiver has no base snapshot stored yet");
		return;
	}
	v->ready_status = EO_COND_TRUE;
	v->ready_reason = EO_REASON_ARCHIVING;
	snprintf(v->msg, sizeof(v->msg),
		 "recoverable from revision %" PRId64 " to revision %" PRId64, a->from_revision,
		 a->to_revision);
	v->lag_status = a->lag_seconds > thr ? EO_COND_FALSE : EO_COND_TRUE;
	v->lag_reason =
	    a->lag_seconds > thr ? EO_REASON_LAG_TOO_HIGH : EO_REASON_LAG_WITHIN_THRESHOLD;
	snprintf(v->lag_msg, sizeof(v->lag_msg),
		 "the archive is %" PRId64 " s (%" PRId64 " revisions) behind the cluster; "
		 "threshold %" PRId64 " s",
		 a->lag_seconds, a->lag_revisions, thr);
}

/*
 * The archiver container of pod exited with an error and has not been ready since: true with
 * its exit code, restart count and termination message (the tail of its log) in msg.
 */
static bool crashed(const json_t *pod, char *msg, size_t cap)
{
	const json_t *cs = json_object_get(json_object_get(pod, "status"), "containerStatuses"), *c;
	size_t i;

	json_array_foreach(cs, i, c)
	{
		const char *name = json_string_value(json_object_get(c, "name"));
		const json_t *t = json_object_get(json_object_get(c, "lastState"), "terminated");
		const char *m = json_string_value(json_object_get(t, "message"));
		json_int_t code = json_integer_value(json_object_get(t, "exitCode"));
		size_t len;

		if (name == NULL || strcmp(name, EO_ARCHIVE_CONTAINER) != 0 || t == NULL ||
		    code == 0 || json_is_true(json_object_get(c, "ready")))
			continue;
		m = m != NULL ? m : "";
		len = strlen(m);
		/* The end of the log says why; keep the newest line that fits. */
		while (len > 0 && (m[len - 1] == '\n' || m[len - 1] == ' '))
			len--;
		if (len > 300)
			m += len - 300, len = 300;
		snprintf(msg, cap,
			 "the archiver exited with code %" JSON_INTEGER_FORMAT
			 " (restarts: %" JSON_INTEGER_FORMAT "): %.*s",
			 code, json_integer_value(json_object_get(c, "restartCount")), (int)len, m);
		return true;
	}
	return false;
}

/* The Deployment: what to do with it, and the verdict while it is not serving. */
static int judge_deployment(const struct eo_aplan_input *in, struct eo_aplan_result *out,
			    struct verdict *v)
{
	const char *want, *have;

	out->deployment = eo_desired_archiver(in->archive, in->cluster, in->operator_image,
					      in->build, in->endpoints, in->n_endpoints);
	if (out->deployment == NULL)
		return -1;
	want = eo_desired_archiver_hash(out->deployment);
	have = in->deployment != NULL ? eo_desired_archiver_hash(in->deployment) : NULL;
	if (in->deployment == NULL || have == NULL || strcmp(want, have) != 0) {
		out->action = in->deployment == NULL ? EO_APLAN_CREATE : EO_APLAN_REPLACE;
		if (out->action == EO_APLAN_REPLACE &&
		    json_object_set_new(json_object_get(out->deployment, "metadata"),
					"resourceVersion",
					json_string(eo_meta_resource_version(in->deployment) != NULL
							? eo_meta_resource_version(in->deployment)
							: "")) != 0)
			return -1;
		refuse(v, EO_REASON_ARCHIVER_STARTING);
		snprintf(v->msg, sizeof(v->msg), "%s the archiver Deployment",
			 out->action == EO_APLAN_CREATE ? "creating" : "updating");
		out->requeue_ms = EO_APLAN_STARTING_MS;
		return 1;
	}
	json_decref(out->deployment);
	out->deployment = NULL;
	if (!in->pod_ready && crashed(in->pod, v->msg, sizeof(v->msg))) {
		refuse(v, EO_REASON_ARCHIVER_FAILING);
		out->requeue_ms = EO_APLAN_STARTING_MS;
		return 1;
	}
	if (!in->pod_ready) {
		refuse(v, EO_REASON_ARCHIVER_STARTING);
		snprintf(v->msg, sizeof(v->msg), "the archiver Pod is not ready");
		out->requeue_ms = EO_APLAN_STARTING_MS;
		return 1;
	}
	return 0;
}

/*
 * The cluster is gone (or has no member) while this archive's archiver still runs: its
 * answer is still the archive's window, the one thing a restore after losing the cluster
 * needs. 1 when the Pod must be polled first, else 0 (the figures come from in->agent).
 */
static int keep_reading(const struct eo_aplan_input *in, struct eo_aplan_result *out,
			struct verdict *v)
{
	const struct eo_aplan_agent *a = in->agent;
	size_t len;

	if (in->deployment == NULL || in->deployment_foreign || !in->pod_ready)
		return 0;
	if (!in->polled) {
		out->action = EO_APLAN_POLL;
		return 1;
	}
	len = strlen(v->msg);
	if (a != NULL && a->has_window && len < sizeof(v->msg))
		snprintf(v->msg + len, sizeof(v->msg) - len,
			 "; the archiver still runs: recoverable from revision %" PRId64
			 " to revision %" PRId64,
			 a->from_revision, a->to_revision);
	return 0;
}

/* The verdict of this pass; 1 when the Pod must be polled first, -1 on OOM. */
static int judge(const struct eo_aplan_input *in, struct eo_aplan_result *out, struct verdict *v)
{
	struct eo_snapshot_location d;
	char msg[EO_APLAN_MSG_MAX];
	int rc;

	if (eo_archive_validate(in->archive, msg, sizeof(msg)) != 0) {
		refuse(v, EO_REASON_INVALID_SPEC);
		snprintf(v->msg, sizeof(v->msg), "%s", msg);
		return 0;
	}
	eo_archive_destination(in->archive, &d);
	if (in->cluster == NULL) {
		refuse(v, EO_REASON_ARCHIVE_CLUSTER_NOT_FOUND);
		snprintf(v->msg, sizeof(v->msg), "EtcdCluster %s not found",
			 eo_archive_cluster_name(in->archive));
		return keep_reading(in, out, v);
	} else if (d.kind != EO_LOCATION_PVC) {
		refuse(v, EO_REASON_DESTINATION_UNSUPPORTED);
		snprintf(v->msg, sizeof(v->msg),
			 "only a pvc destination is implemented for EtcdArchive; s3 is not yet");
	} else if (in->deployment_foreign) {
		refuse(v, EO_REASON_FOREIGN_OBJECT);
		snprintf(v->msg, sizeof(v->msg),
			 "Deployment %s-archiver exists and is not controlled by this EtcdArchive; "
			 "it is left alone",
			 eo_meta_name(in->archive));
	} else if (in->n_endpoints == 0) {
		refuse(v, EO_REASON_WAITING_FOR_MEMBERS);
		snprintf(v->msg, sizeof(v->msg), "the cluster has no member to archive yet");
		out->requeue_ms = EO_APLAN_STARTING_MS;
		return keep_reading(in, out, v);
	} else if ((rc = judge_deployment(in, out, v)) != 0) {
		return rc < 0 ? -1 : 0;
	} else if (!in->polled) {
		out->action = EO_APLAN_POLL;
		return 1;
	} else if (in->agent == NULL) {
		refuse(v, EO_REASON_ARCHIVER_UNREACHABLE);
		snprintf(v->msg, sizeof(v->msg), "the archiver's /status did not answer: %s",
			 in->poll_error != NULL ? in->poll_error : "no detail");
	} else {
		judge_agent(in, v);
	}
	return 0;
}

/* The Event of a condition change, if any. */
static void choose_event(const json_t *cur, const struct verdict *v, struct eo_aplan_result *out)
{
	bool ready_changed =
	    !eo_condition_matches(cur, EO_COND_ARCHIVE_READY, v->ready_status, v->ready_reason);
	bool lag_changed =
	    !eo_condition_matches(cur, EO_COND_LAG_WITHIN_THRESHOLD, v->lag_status, v->lag_reason);

	if (ready_changed && strcmp(v->ready_status, EO_COND_TRUE) == 0) {
		out->event_type = "Normal";
		out->event_reason = EO_REASON_ARCHIVE_READY;
	} else if (ready_changed && strcmp(v->ready_reason, EO_REASON_ARCHIVER_STARTING) != 0) {
		out->event_type = "Warning";
		out->event_reason = v->ready_reason;
	} else if (lag_changed && strcmp(v->lag_status, EO_COND_FALSE) == 0) {
		out->event_type = "Warning";
		out->event_reason = v->lag_reason;
		snprintf(out->message, sizeof(out->message), "%s", v->lag_msg);
	}
}

int eo_plan_archive(const struct eo_aplan_input *in, struct eo_aplan_result *out)
{
	const json_t *cur = json_object_get(in->archive, "status");
	int64_t gen = eo_meta_generation(in->archive, -1);
	struct verdict v = {0};
	int rc;

	memset(out, 0, sizeof(*out));
	out->requeue_ms = EO_APLAN_POLL_MS;
	rc = judge(in, out, &v);
	if (rc < 0)
		goto fail;
	if (rc > 0)
		return 0; /* poll first */
	out->status = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (out->status == NULL)
		goto fail;
	if (in->agent != NULL && set_figures(out->status, in->agent) != 0)
		goto fail;
	if (eo_condition_set(out->status,
			     &(struct eo_condition){EO_COND_ARCHIVE_READY, v.ready_status,
						    v.ready_reason, v.msg, gen},
			     in->now) < 0 ||
	    eo_condition_set(out->status,
			     &(struct eo_condition){EO_COND_LAG_WITHIN_THRESHOLD, v.lag_status,
						    v.lag_reason, v.lag_msg, gen},
			     in->now) < 0)
		goto fail;
	snprintf(out->message, sizeof(out->message), "%s", v.msg);
	choose_event(cur, &v, out);
	out->status_changed = !json_equal(out->status, (json_t *)cur);
	return 0;
fail:
	eo_aplan_result_clear(out);
	return -1;
}

void eo_aplan_result_clear(struct eo_aplan_result *r)
{
	json_decref(r->deployment);
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

const char *eo_aplan_action_name(enum eo_aplan_action a)
{
	switch (a) {
	case EO_APLAN_CREATE:
		return "create-archiver";
	case EO_APLAN_REPLACE:
		return "replace-archiver";
	case EO_APLAN_POLL:
		return "poll-archiver";
	default:
		return "none";
	}
}
