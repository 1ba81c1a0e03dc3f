/*
 * plan/forcenew.c - quorum-loss recovery through --force-new-cluster (pure). See forcenew.h.
 */
#include "plan/forcenew.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const step_names[] = {
    [EO_FNC_NONE] = "none",
    [EO_FNC_REFUSE] = "refuse",
    [EO_FNC_MARK] = "mark",
    [EO_FNC_RESTART] = "restart",
    [EO_FNC_WAIT] = "wait",
    [EO_FNC_QUERY] = "query",
    [EO_FNC_MARK_FORCED] = "mark-forced",
    [EO_FNC_PROCEED] = "proceed",
    [EO_FNC_FINISH] = "finish",
    [EO_FNC_UNMARK] = "unmark",
};

const char *eo_fnc_step_name(enum eo_fnc_step s)
{
	if ((unsigned)s < sizeof(step_names) / sizeof(step_names[0]) && step_names[s] != NULL)
		return step_names[s];
	return "unknown";
}

static void say(struct eo_fnc_decision *d, const char *f, ...)
    __attribute__((format(printf, 2, 3)));

static void say(struct eo_fnc_decision *d, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(d->why, sizeof(d->why), f, ap);
	va_end(ap);
}

static bool present(const char *s)
{
	return s != NULL && s[0] != '\0';
}

static bool is_step(const struct eo_fnc_member *m, const char *step)
{
	return m->step != NULL && strcmp(m->step, step) == 0;
}

static void pick(struct eo_fnc_decision *d, enum eo_fnc_step step, size_t i)
{
	d->step = step;
	d->member = i;
	d->has_member = true;
}

/* No request: drop what a finished or cancelled recovery left behind. */
static void cleanup(const struct eo_fnc_input *in, struct eo_fnc_decision *d)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->deleting || !present(m->step))
			continue;
		say(d, "member %s: dropping its force-new-cluster step \"%s\" (no request left)",
		    m->name, m->step);
		pick(d, EO_FNC_UNMARK, i);
		return;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->deleting || !m->pod_present || !m->pod_forces)
			continue;
		say(d,
		    "member %s still runs etcd with --force-new-cluster; restarting it without "
		    "the flag",
		    m->name);
		pick(d, EO_FNC_RESTART, i);
		return;
	}
	d->step = EO_FNC_NONE;
}

/* Whether the request may start on member s (index si); says why not. */
static bool may_start(const struct eo_fnc_input *in, const struct eo_fnc_member *s,
		      struct eo_fnc_decision *d)
{
	size_t voters = 0, lost = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m != s && !m->deleting && present(m->step)) {
			say(d,
			    "a recovery through member %s is under way (step \"%s\"); set the "
			    "annotation back to %s to finish it",
			    m->name, m->step, m->name);
			return false;
		}
		if (m->deleting || !m->voter || m->dormant)
			continue;
		voters++;
		lost += m->lost;
	}
	if (s->lost || s->memory) {
		say(d, "member %s has no data to start from (%s)", s->name,
		    s->memory ? "memory storage" : "its PVC is gone");
		return false;
	}
	if (s->pending || s->dormant || !s->voter) {
		say(d, "member %s is %s; name a voting member that has its data", s->name,
		    s->pending	 ? "still joining"
		    : s->dormant ? "dormant"
				 : "not a voter");
		return false;
	}
	if (voters == 0 || lost < voters / 2 + 1) {
		say(d,
		    "%zu of %zu voting member(s) lost their data: the others can still bring "
		    "the quorum back, so no new cluster is forced; bring their Pods back, or "
		    "replace members one at a time",
		    lost, voters);
		return false;
	}
	return true;
}

int eo_plan_force_new_cluster_decide(const struct eo_fnc_input *in, struct eo_fnc_decision *out)
{
	const struct eo_fnc_member *s = NULL;
	size_t si = 0;

	if (in == NULL || out == NULL || (in->n > 0 && in->m == NULL))
		return -1;
	memset(out, 0, sizeof(*out));
	if (!present(in->request)) {
		cleanup(in, out);
		return 0;
	}
	for (size_t i = 0; i < in->n && s == NULL; i++) {
		if (!in->m[i].deleting && in->m[i].name != NULL &&
		    strcmp(in->m[i].name, in->request) == 0) {
			s = &in->m[i];
			si = i;
		}
	}
	out->step = EO_FNC_REFUSE;
	if (s == NULL) {
		say(out, "force-new-cluster names %s, which is not a member of this cluster",
		    in->request);
		return 0;
	}
	out->member = si;
	out->has_member = true;
	if (!present(s->step)) {
		if (!may_start(in, s, out))
			return 0;
		say(out,
		    "forcing a new cluster from member %s: it restarts with --force-new-cluster "
		    "on its data",
		    s->name);
		pick(out, EO_FNC_MARK, si);
		return 0;
	}
	if (is_step(s, EO_FNC_STEP_FORCING)) {
		if (s->pod_present && !s->pod_forces) {
			say(out,
			    "forcing a new cluster: restarting member %s with --force-new-cluster",
			    s->name);
			pick(out, EO_FNC_RESTART, si);
		} else if (!s->pod_present || !s->pod_ready) {
			say(out,
			    "forcing a new cluster: waiting for member %s to start with "
			    "--force-new-cluster",
			    s->name);
			pick(out, EO_FNC_WAIT, si);
		} else if (!in->etcd_queried) {
			say(out, "forcing a new cluster: listing etcd's members through member %s",
			    s->name);
			pick(out, EO_FNC_QUERY, si);
		} else if (!in->etcd_ok) {
			say(out,
			    "forcing a new cluster: etcd's member list could not be read through "
			    "member %s",
			    s->name);
			pick(out, EO_FNC_WAIT, si);
		} else if (in->etcd_n != 1 || !in->survivor_listed) {
			say(out,
			    "forcing a new cluster: etcd still lists %zu member(s); waiting for "
			    "member %s alone",
			    in->etcd_n, s->name);
			pick(out, EO_FNC_WAIT, si);
		} else {
			say(out,
			    "forced a new cluster: etcd lists member %s alone; restarting it "
			    "without the flag, then re-adding the others",
			    s->name);
			pick(out, EO_FNC_MARK_FORCED, si);
		}
		return 0;
	}
	if (!is_step(s, EO_FNC_STEP_FORCED)) {
		say(out, "member %s carries an unknown force-new-cluster step \"%s\"", s->name,
		    s->step);
		return 0;
	}
	if (s->pod_present && s->pod_forces) {
		say(out, "forced a new cluster: restarting member %s without --force-new-cluster",
		    s->name);
		pick(out, EO_FNC_RESTART, si);
	} else if (!s->pod_present || !s->pod_ready) {
		say(out, "forced a new cluster: waiting for member %s to be ready again", s->name);
		pick(out, EO_FNC_WAIT, si);
	} else if (in->whole) {
		say(out,
		    "recovered from the quorum loss through member %s: every member is ready; "
		    "removing the force-new-cluster annotation",
		    s->name);
		pick(out, EO_FNC_FINISH, si);
	} else {
		say(out, "forced a new cluster from member %s: re-adding the other members",
		    s->name);
		pick(out, EO_FNC_PROCEED, si);
	}
	return 0;
}
