/*
 * plan/forcenew.c - quorum-loss recovery through --force-new-cluster (pure). See forcenew.h.
 */
#include "plan/forcenew.h"

#include <inttypes.h>
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
    [EO_FNC_CHECK] = "check",
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

	d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED;

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

/* (raftTerm, raftIndex) of a before that of b. */
static bool older(const struct eo_fnc_member *a, const struct eo_fnc_member *b)
{
	return a->raft_term < b->raft_term ||
	       (a->raft_term == b->raft_term && a->raft_index < b->raft_index);
}

/* The answering member with the highest (raftTerm, raftIndex) other than s, or NULL. */
static const struct eo_fnc_member *freshest_other(const struct eo_fnc_input *in,
						  const struct eo_fnc_member *s)
{
	const struct eo_fnc_member *f = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m != s && m->answered && (f == NULL || older(f, m)))
			f = m;
	}
	return f;
}

/*
 * The checks on etcd's answers (forcenew.h): no foreign cluster, no "lost" member alive, no
 * leader anywhere, the survivor the freshest. Says why not.
 */
static bool answers_allow(const struct eo_fnc_input *in, const struct eo_fnc_member *s,
			  struct eo_fnc_decision *d)
{
	const struct eo_fnc_member *f = NULL;

	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->answered && m->foreign) {
			d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_FOREIGN;
			say(d,
			    "check cluster-id failed: member %s's address is answered by etcd "
			    "cluster %" PRIx64 ", not this cluster: nothing is forced on its word",
			    m->name, m->cluster_id);
			return false;
		}
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->answered && m->lost) {
			d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS;
			say(d,
			    "check lost-members-silent failed: member %s counts as lost (%s) but "
			    "its etcd answers: it is alive and may hold the quorum",
			    m->name, m->memory ? "its Pod is gone" : "its PVC is gone or replaced");
			return false;
		}
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->answered && m->leader != 0) {
			d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER;
			say(d,
			    "check no-leader failed: member %s answers with leader %" PRIx64
			    ": a quorum of the cluster still works; no new cluster is forced "
			    "beside it",
			    m->name, m->leader);
			return false;
		}
	}
	f = freshest_other(in, s);
	if (f == NULL || (s->answered && !older(s, f)))
		return true;
	d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_NOT_FRESHEST;
	if (!s->answered)
		say(d,
		    "check freshest failed: member %s does not answer and member %s does (raft "
		    "term %" PRIu64 ", index %" PRIu64 "): %s cannot be shown to hold the newest "
		    "writes; bring its Pod back or name %s",
		    s->name, f->name, f->raft_term, f->raft_index, s->name, f->name);
	else
		say(d,
		    "check freshest failed: member %s holds newer writes (raft term %" PRIu64
		    ", index %" PRIu64 ") than member %s (term %" PRIu64 ", index %" PRIu64
		    "); name %s",
		    f->name, f->raft_term, f->raft_index, s->name, s->raft_term, s->raft_index,
		    f->name);
	return false;
}

bool eo_plan_force_new_cluster_check(const struct eo_fnc_input *in, size_t si,
				     struct eo_fnc_decision *out)
{
	if (in == NULL || out == NULL || si >= in->n || in->m == NULL)
		return false;
	if (!in->checked) {
		out->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED;
		say(out, "member %s: the members' Pods, PVCs and etcd were not checked live",
		    in->m[si].name);
		return false;
	}
	return may_start(in, &in->m[si], out) && answers_allow(in, &in->m[si], out);
}

/* Before the first step that acts on the survivor: the live checks, or ask for them. */
static bool gate(const struct eo_fnc_input *in, size_t si, struct eo_fnc_decision *d)
{
	if (in->checked)
		return eo_plan_force_new_cluster_check(in, si, d);
	say(d,
	    "force-new-cluster through member %s: reading every member's Pod and PVC from the "
	    "apiserver and asking every member's etcd for its status first",
	    in->m[si].name);
	pick(d, EO_FNC_CHECK, si);
	return false;
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
	out->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_REFUSED;
	if (s == NULL) {
		say(out, "force-new-cluster names %s, which is not a member of this cluster",
		    in->request);
		return 0;
	}
	out->member = si;
	out->has_member = true;
	if (!present(s->step)) {
		if (!gate(in, si, out))
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
			if (!gate(in, si, out)) {
				/* refused before the flag reaches a Pod: the mark goes */
				out->unmark = out->step == EO_FNC_REFUSE;
				return 0;
			}
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
		} else if (in->etcd_foreign) {
			say(out,
			    "forcing a new cluster: the member list read through member %s carries "
			    "another cluster ID than this cluster's; waiting",
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
