/*
 * plan/podissue.c - why a member's Pod does not run. See podissue.h.
 */
#include "plan/podissue.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/conditions.h"
#include "api/meta.h"
#include "core/strbuf.h"
#include "api/member.h"
#include "api/names.h"
#include "api/restorefail.h"
#include "api/timeutil.h"
#include "desired/restore.h"
#include "plan/failure.h"
#include "plan/volref.h"

/* Longest part of a kubelet or scheduler message that is quoted. */
#define QUOTE_MAX 400

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
	const json_t *o = json_object_get(obj, a);

	return json_string_value(b != NULL ? json_object_get(o, b) : o);
}

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

static bool one_of(const char *s, const char *const *set)
{
	for (size_t i = 0; s != NULL && set[i] != NULL; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

static const char *const IMAGE_PULL[] = {
    "ErrImagePull",    "ImagePullBackOff",    "InvalidImageName",	   "ErrImageNeverPull",
    "ErrImageInspect", "RegistryUnavailable", "SignatureValidationFailed", NULL};
static const char *const CONTAINER_ERR[] = {"CreateContainerConfigError", "CreateContainerError",
					    "RunContainerError",	  "PreStartHookError",
					    "PostStartHookError",	  NULL};

static void set(struct eo_pod_issue *out, enum eo_pod_issue_kind k, const char *reason,
		const char *f, ...) __attribute__((format(printf, 4, 5)));
static void set(struct eo_pod_issue *out, enum eo_pod_issue_kind k, const char *reason,
		const char *f, ...)
{
	va_list ap;

	out->kind = k;
	out->reason = reason;
	va_start(ap, f);
	vsnprintf(out->message, sizeof(out->message), f, ap);
	va_end(ap);
}

/* Skips a leading "<prefix>" (and the ": " after it) when s starts with it. */
static const char *skip(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(s, prefix, n) != 0)
		return s;
	s += n;
	while (*s == ':' || *s == ' ')
		s++;
	return s;
}

/*
 * The kubelet alternates ErrImagePull (with the registry's answer) and ImagePullBackOff
 * ("Back-off pulling image \"<image>\"", in newer versions followed by the same answer). Both
 * become "<answer>" so the message does not flip with the back-off.
 */
static const char *pull_detail(const char *msg, const char *image)
{
	char prefix[EO_NAME_MAX * 2];

	if (msg == NULL)
		return "";
	snprintf(prefix, sizeof(prefix), "Back-off pulling image \"%s\"", image);
	msg = skip(msg, prefix);
	msg = skip(msg, "ErrImagePull");
	return msg;
}

static const json_t *condition(const json_t *pod, const char *type)
{
	const json_t *c = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t != NULL && strcmp(t, type) == 0)
			return c;
	}
	return NULL;
}

static bool pvc_pending(const json_t *pvc)
{
	const char *phase = str_at(pvc, "status", "phase");

	return pvc != NULL && (phase == NULL || strcmp(phase, "Pending") == 0);
}

/* The first container status (init containers first) waiting in one of the reasons of set. */
static const json_t *waiting_in(const json_t *pod, const char *const *set)
{
	static const char *const lists[] = {"initContainerStatuses", "containerStatuses"};
	const json_t *st = json_object_get(pod, "status"), *cs = NULL;
	size_t i;

	for (size_t l = 0; l < 2; l++) {
		json_array_foreach(json_object_get(st, lists[l]), i, cs)
		{
			const json_t *w = json_object_get(json_object_get(cs, "state"), "waiting");

			if (one_of(json_string_value(json_object_get(w, "reason")), set))
				return cs;
		}
	}
	return NULL;
}

static const char *waiting_field(const json_t *cs, const char *key)
{
	const char *s = json_string_value(
	    json_object_get(json_object_get(json_object_get(cs, "state"), "waiting"), key));

	return s != NULL ? s : "";
}

static void image_issue(const json_t *cs, struct eo_pod_issue *out)
{
	const char *image = json_string_value(json_object_get(cs, "image"));
	const char *reason = waiting_field(cs, "reason");
	const char *detail = NULL;

	if (image == NULL)
		image = "";
	detail = pull_detail(waiting_field(cs, "message"), image);
	if (strcmp(reason, "InvalidImageName") == 0 || strcmp(reason, "ErrImageNeverPull") == 0)
		set(out, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
		    "image %s cannot be pulled: %s%s%.*s", image, reason, detail[0] ? ": " : "",
		    QUOTE_MAX, detail);
	else
		/* ErrImagePull and its back-off read the same, see pull_detail(). */
		set(out, EO_POD_ISSUE_IMAGE_PULL, EO_REASON_IMAGE_PULL_FAILED,
		    "image %s cannot be pulled: ErrImagePull%s%.*s", image, detail[0] ? ": " : "",
		    QUOTE_MAX, detail);
}

static void crash_issue(const json_t *cs, struct eo_pod_issue *out)
{
	const json_t *t = json_object_get(json_object_get(cs, "lastState"), "terminated");
	const char *name = json_string_value(json_object_get(cs, "name"));
	const char *why = json_string_value(json_object_get(t, "reason"));
	const char *msg = json_string_value(json_object_get(t, "message"));

	/* The kubelet's own message counts the back-off up; only the last exit is quoted. */
	set(out, EO_POD_ISSUE_CRASH_LOOP, EO_REASON_CONTAINER_CRASHLOOP,
	    "container %s keeps crashing (CrashLoopBackOff): last exit code %lld (%s)%s%.*s",
	    name != NULL ? name : "", (long long)json_integer_value(json_object_get(t, "exitCode")),
	    why != NULL ? why : "unknown", msg != NULL && msg[0] ? ": " : "", QUOTE_MAX,
	    msg != NULL ? msg : "");
}

bool eo_plan_archive_restored(const json_t *pod, int64_t *revision, char *time, size_t cap)
{
	const json_t *cs = NULL;
	size_t i;

	*revision = 0;
	if (cap > 0)
		time[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(pod, "status"), "initContainerStatuses"),
			   i, cs)
	{
		const char *name = json_string_value(json_object_get(cs, "name"));
		const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");
		const char *text = json_string_value(json_object_get(t, "message"));
		json_t *doc, *rev;
		const char *when;

		if (name == NULL || strcmp(name, EO_RESTORE_REPLAY_CONTAINER) != 0 ||
		    text == NULL || json_integer_value(json_object_get(t, "exitCode")) != 0 ||
		    !json_is_integer(json_object_get(t, "exitCode")))
			continue;
		doc = json_loads(text, 0, NULL);
		rev = json_object_get(doc, "revision");
		when = json_string_value(json_object_get(doc, "time"));
		if (json_is_integer(rev) && json_integer_value(rev) >= 1) {
			*revision = json_integer_value(rev);
			if (when != NULL && cap > 0 && strlen(when) < cap)
				snprintf(time, cap, "%s", when);
		}
		json_decref(doc);
		return *revision >= 1;
	}
	return false;
}

/*
 * A restore init container (desired/restore.h) that failed: its current state if it ended
 * with an error, else the last one while it is retried. One that has now succeeded, or
 * never failed, is no issue.
 */
static bool restore_issue(const json_t *pod, struct eo_pod_issue *out)
{
	const json_t *cs = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "status"), "initContainerStatuses"),
			   i, cs)
	{
		const char *name = json_string_value(json_object_get(cs, "name"));
		const json_t *t = json_object_get(json_object_get(cs, "state"), "terminated");
		const char *reason = NULL, *why, *text;
		char msg[EO_RESTORE_MESSAGE_MAX], line[QUOTE_MAX];
		json_int_t code;

		if (name == NULL || (strcmp(name, EO_RESTORE_CONTAINER) != 0 &&
				     strcmp(name, EO_RESTORE_REPLAY_CONTAINER) != 0 &&
				     strcmp(name, EO_RESTORE_REBUILD_CONTAINER) != 0))
			continue;
		if (t != NULL && json_integer_value(json_object_get(t, "exitCode")) == 0)
			continue; /* done (after earlier failures, perhaps) */
		if (t == NULL)
			t = json_object_get(json_object_get(cs, "lastState"), "terminated");
		code = json_integer_value(json_object_get(t, "exitCode"));
		if (t == NULL || code == 0)
			continue;
		why = json_string_value(json_object_get(t, "reason"));
		text = json_string_value(json_object_get(t, "message"));
		if (!eo_restore_failure_parse(text, &reason, msg, sizeof(msg))) {
			/* Not the agent's words: killed (OOMKilled), or an older agent's logs. */
			eo_last_line(text, line, sizeof(line));
			reason = EO_REASON_RESTORE_FAILED;
			snprintf(msg, sizeof(msg), "%s%s%s", why != NULL ? why : "exited",
				 line[0] ? ": " : "", line);
		}
		set(out, EO_POD_ISSUE_RESTORE_FAILED, reason,
		    "restoring the snapshot failed (init container %s, exit code %lld): %.*s; %s",
		    name, (long long)code, QUOTE_MAX, msg, eo_restore_reason_hint(reason));
		return true;
	}
	return false;
}

/* Whether the Pod condition c has held for at least grace seconds at now. */
static bool older_than(const json_t *c, time_t now, long grace)
{
	const char *since = json_string_value(json_object_get(c, "lastTransitionTime"));
	time_t t = 0;

	return since != NULL && eo_time_parse(since, &t) == 0 && now - t >= grace;
}

/* Scheduled more than the grace ago and still creating containers: a volume that hangs. */
static bool stuck_creating(const json_t *pod, const json_t *scheduled, time_t now)
{
	static const char *const creating[] = {"ContainerCreating", "PodInitializing", NULL};

	if (!older_than(scheduled, now, EO_POD_ISSUE_MOUNT_GRACE_S))
		return false;
	if (waiting_in(pod, creating) != NULL)
		return true;
	/* Before the kubelet reports container statuses at all. */
	return json_array_size(
		   json_object_get(json_object_get(pod, "status"), "containerStatuses")) == 0;
}

bool eo_plan_pod_issue(const json_t *member, const json_t *pod, const json_t *pvc, time_t now,
		       struct eo_pod_issue *out)
{
	const json_t *sched = NULL, *cs = NULL;
	char pvc_name[EO_NAME_MAX];

	memset(out, 0, sizeof(*out));
	if (pod == NULL || eo_plan_pod_ready(pod) || eo_meta_is_deleting(pod))
		return false;
	if (eo_name_member_pvc(pvc_name, sizeof(pvc_name), eo_member_name(member)) != 0)
		pvc_name[0] = '\0';

	sched = condition(pod, "PodScheduled");
	if (sched != NULL && str_at(sched, "status", NULL) != NULL &&
	    strcmp(str_at(sched, "status", NULL), "False") == 0) {
		const char *why = str_at(sched, "reason", NULL);
		const char *msg = str_at(sched, "message", NULL);

		if (why == NULL || strcmp(why, "Unschedulable") != 0)
			return false;
		if (msg == NULL)
			msg = "";
		if (pvc_pending(pvc)) {
			/* Every new PVC is briefly unbound while it is provisioned: not yet. */
			if (!older_than(sched, now, EO_POD_ISSUE_BIND_GRACE_S))
				return false;
			set(out, EO_POD_ISSUE_VOLUME_NOT_BOUND, EO_REASON_VOLUME_NOT_BOUND,
			    "PVC %s is not bound and the Pod cannot be scheduled: %.*s", pvc_name,
			    QUOTE_MAX, msg);
		} else {
			set(out, EO_POD_ISSUE_UNSCHEDULABLE, EO_REASON_UNSCHEDULABLE,
			    "Pod cannot be scheduled: Unschedulable: %.*s", QUOTE_MAX, msg);
		}
		return true;
	}
	if ((cs = waiting_in(pod, IMAGE_PULL)) != NULL) {
		image_issue(cs, out);
		return true;
	}
	if ((cs = waiting_in(pod, CONTAINER_ERR)) != NULL) {
		set(out, EO_POD_ISSUE_CONTAINER_ERROR, EO_REASON_CONTAINER_ERROR,
		    "container %s cannot start: %s: %.*s",
		    or_empty(json_string_value(json_object_get(cs, "name"))),
		    waiting_field(cs, "reason"), QUOTE_MAX, waiting_field(cs, "message"));
		return true;
	}
	if (restore_issue(pod, out))
		return true;
	if ((cs = waiting_in(pod, (const char *const[]){"CrashLoopBackOff", NULL})) != NULL) {
		crash_issue(cs, out);
		return true;
	}
	if (sched != NULL && str_at(sched, "status", NULL) != NULL &&
	    strcmp(str_at(sched, "status", NULL), "True") == 0 && stuck_creating(pod, sched, now)) {
		const char *node = str_at(pod, "spec", "nodeName");

		if (pvc_pending(pvc))
			set(out, EO_POD_ISSUE_VOLUME_NOT_BOUND, EO_REASON_VOLUME_NOT_BOUND,
			    "PVC %s is still not bound %d s after the Pod was scheduled on node %s "
			    "(kubectl describe pvc %s)",
			    pvc_name, EO_POD_ISSUE_MOUNT_GRACE_S, or_empty(node), pvc_name);
		else
			set(out, EO_POD_ISSUE_VOLUME_NOT_MOUNTED, EO_REASON_VOLUME_NOT_MOUNTED,
			    "containers are still being created %d s after the Pod was scheduled "
			    "on "
			    "node %s: a volume may fail to attach or mount (FailedMount / "
			    "FailedAttachVolume Events of the Pod)",
			    EO_POD_ISSUE_MOUNT_GRACE_S, or_empty(node));
		return true;
	}
	return false;
}

size_t eo_plan_member_issues(const struct eo_plan_member *v, size_t n, time_t now, char *buf,
			     size_t cap)
{
	size_t found = 0, len = 0;
	struct eo_pod_issue is;
	const char *r = NULL;

	if (cap > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const json_t *m = v[i].member;
		int w;

		if (eo_member_is_deleting(m) || eo_member_dormant(m) || eo_member_is_pending(m))
			continue;
		r = eo_condition_reason(json_object_get(m, "status"), EO_COND_READY);
		if (eo_plan_failure_reason_is(r) ||
		    (r != NULL && (strcmp(r, EO_REASON_FOREIGN_VOLUME) == 0 ||
				   strcmp(r, EO_REASON_VOLUME_NOT_FOUND) == 0))) {
			/*
			 * The member controller's write was refused, or it holds its Pod back
			 * over a volume it may not mount (its Ready condition says so).
			 */
			const json_t *c =
			    eo_condition_find(json_object_get(m, "status"), EO_COND_READY);

			memset(&is, 0, sizeof(is));
			snprintf(is.message, sizeof(is.message), "%s",
				 or_empty(json_string_value(json_object_get(c, "message"))));
		} else if (!eo_plan_pod_issue(m, v[i].pod, v[i].pvc, now, &is)) {
			continue;
		}
		if (++found > EO_POD_ISSUE_LIST_MAX || len >= cap)
			continue;
		w = snprintf(buf + len, cap - len, "%smember %s: %s", len ? "; " : "",
			     eo_member_name(m), is.message);
		if (w > 0)
			len += (size_t)w < cap - len ? (size_t)w : cap - len - 1;
	}
	if (found > EO_POD_ISSUE_LIST_MAX && len < cap)
		snprintf(buf + len, cap - len, " (and %zu more)", found - EO_POD_ISSUE_LIST_MAX);
	return found;
}
