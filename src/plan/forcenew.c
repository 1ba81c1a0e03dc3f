/*
 * plan/forcenew.c - quorum-loss recovery through --force-new-cluster (pure). See forcenew.h.
 */
#include "plan/forcenew.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "core/strbuf.h"
#include "core/util.h"
#include "plan/internal.h"

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
	return EO_ENUM_NAME(step_names, s, "unknown");
}

#define say(d, ...) EO_FMT((d)->why, __VA_ARGS__)

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

		if (m->deleting || !eo_present(m->step))
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

		if (m != s && !m->deleting && eo_present(m->step)) {
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

static bool answers_foreign(const struct eo_fnc_member *m)
{
	return m->foreign;
}

static bool answers_lost(const struct eo_fnc_member *m)
{
	return m->lost;
}

static bool answers_leader(const struct eo_fnc_member *m)
{
	return m->leader != 0;
}

/* The first member that answers and matches p, in input order; NULL when none. */
static const struct eo_fnc_member *first_answering(const struct eo_fnc_input *in,
						   bool (*p)(const struct eo_fnc_member *))
{
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_fnc_member *m = &in->m[i];

		if (m->answered && p(m))
			return m;
	}
	return NULL;
}

/*
 * The checks on etcd's answers (forcenew.h): no foreign cluster, no "lost" member alive, no
 * leader anywhere, the survivor the freshest. Says why not.
 */
static bool answers_allow(const struct eo_fnc_input *in, const struct eo_fnc_member *s,
			  struct eo_fnc_decision *d)
{
	const struct eo_fnc_member *f = NULL, *m;

	if ((m = first_answering(in, answers_foreign)) != NULL) {
		d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_FOREIGN;
		say(d,
		    "check cluster-id failed: member %s's address is answered by etcd "
		    "cluster %" PRIx64 ", not this cluster: nothing is forced on its word",
		    m->name, m->cluster_id);
		return false;
	}
	if ((m = first_answering(in, answers_lost)) != NULL) {
		d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LOST_ANSWERS;
		say(d,
		    "check lost-members-silent failed: member %s counts as lost (%s) but "
		    "its etcd answers: it is alive and may hold the quorum",
		    m->name, m->memory ? "its Pod is gone" : "its PVC is gone or replaced");
		return false;
	}
	if ((m = first_answering(in, answers_leader)) != NULL) {
		d->reason = EO_PLAN_REASON_FORCE_NEW_CLUSTER_LEADER;
		say(d,
		    "check no-leader failed: member %s answers with leader %" PRIx64
		    ": a quorum of the cluster still works; no new cluster is forced "
		    "beside it",
		    m->name, m->leader);
		return false;
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

/* The survivor is marked forcing: restart it with the flag, then wait until etcd lists it alone. */
static void step_forcing(const struct eo_fnc_input *in, const struct eo_fnc_member *s, size_t si,
			 struct eo_fnc_decision *out)
{
	if (s->pod_present && !s->pod_forces) {
		if (!gate(in, si, out)) {
			/* refused before the flag reaches a Pod: the mark goes */
			out->unmark = out->step == EO_FNC_REFUSE;
			return;
		}
		say(out, "forcing a new cluster: restarting member %s with --force-new-cluster",
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
}

/* The survivor is marked forced: restart it without the flag, then finish or re-add the others. */
static void step_forced(const struct eo_fnc_input *in, const struct eo_fnc_member *s, size_t si,
			struct eo_fnc_decision *out)
{
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
}

int eo_plan_force_new_cluster_decide(const struct eo_fnc_input *in, struct eo_fnc_decision *out)
{
	const struct eo_fnc_member *s = NULL;
	size_t si = 0;

	if (in == NULL || out == NULL || (in->n > 0 && in->m == NULL))
		return -1;
	memset(out, 0, sizeof(*out));
	if (!eo_present(in->request)) {
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
	if (!eo_present(s->step)) {
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
		step_forcing(in, s, si, out);
		return 0;
	}
	if (!is_step(s, EO_FNC_STEP_FORCED)) {
		say(out, "member %s carries an unknown force-new-cluster step \"%s\"", s->name,
		    s->step);
		return 0;
	}
	step_forced(in, s, si, out);
	return 0;
}

/* --- the recovery as a step of the cluster planner (plan/plan.h, plan/internal.h) --- */

/* The EtcdCluster's force-new-cluster request (plan/forcenew.h), NULL when none. */
static const char *force_request(const json_t *cluster)
{
	return eo_meta_annotation(cluster, EO_ANNOTATION_FORCE_NEW_CLUSTER);
}

static const char *force_step(const json_t *member)
{
	return eo_meta_annotation(member, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP);
}

/*
 * Whether a quorum-loss recovery is requested or has left something behind (a step mark, a
 * Pod with --force-new-cluster): the rolls and the deadline leave the cluster to it.
 */
bool eo__plan_force_active(const struct eo__plan_ctx *x)
{
	if (eo_present(force_request(x->in->cluster)))
		return true;
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];

		if (eo_member_is_deleting(pm->member))
			continue;
		if (eo_present(force_step(pm->member)) ||
		    eo_desired_pod_forces_new_cluster(pm->pod))
			return true;
	}
	return false;
}

/* Merge patch setting (value) or removing (NULL) an annotation. New reference. */
static json_t *annotation_patch(const char *key, const char *value)
{
	return json_pack("{s:{s:{s:o}}}", "metadata", "annotations", key,
			 value != NULL ? json_string(value) : json_null());
}

/* The ForceNewCluster condition and the three others while the survivor is not back. */
static void force_conditions(struct eo__plan_ctx *x, const char *why, bool serving)
{
	eo__plan_cond(x, EO_PLAN_COND_FORCE_NEW_CLUSTER, EO_COND_TRUE,
		      EO_PLAN_REASON_FORCE_NEW_CLUSTER, why);
	if (serving)
		return;
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_PLAN_REASON_FORCE_NEW_CLUSTER, why);
	eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, EO_PLAN_REASON_FORCE_NEW_CLUSTER, why);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_FORCE_NEW_CLUSTER, why);
}

/* The client URL of member into buf (EO_DESIRED_URL_MAX). 0, or -1 when it does not fit. */
static int client_url_of(const struct eo__plan_ctx *x, const json_t *member, char *buf)
{
	return eo_desired_member_client_url(buf, EO_DESIRED_URL_MAX, x->in->build,
					    eo_member_name(member), eo_cluster_name(x->in->cluster),
					    eo_cluster_namespace(x->in->cluster),
					    eo_desired_member_client_tls(member));
}

/*
 * The Maintenance Status member answered at its own address (input status_from), or, without
 * status_from, the one that carries its status.memberID. NULL: it did not answer.
 */
static const struct eo_etcd_status *status_of(const struct eo__plan_ctx *x, const json_t *member)
{
	const char *id = eo_member_member_id(member);
	char url[EO_DESIRED_URL_MAX] = "";
	uint64_t want = eo_present(id) ? strtoull(id, NULL, 16) : 0;

	if (x->in->status_from != NULL && client_url_of(x, member, url) != 0)
		return NULL;
	for (size_t j = 0; j < x->in->n_statuses; j++) {
		const char *from = x->in->status_from != NULL ? x->in->status_from[j] : NULL;

		if (from != NULL ? strcmp(from, url) == 0
				 : want != 0 && x->in->statuses[j].member_id == want)
			return &x->in->statuses[j];
	}
	return NULL;
}

/* The members as the recovery sees them (plan/forcenew.h); pms[i] stands behind rows[i]. */
static void fnc_view(const struct eo__plan_ctx *x, struct eo_fnc_member *rows,
		     const struct eo_plan_member **pms, struct eo_fnc_input *fi)
{
	const struct eo_plan_input *in = x->in;

	fi->m = rows;
	fi->n = 0;
	fi->checked = in->live_checked;
	for (size_t i = 0; i < in->n_members && fi->n < EO__PLAN_ROLL_MAX; i++) {
		const struct eo_plan_member *p = &in->members[i];
		const struct eo_etcd_status *es = in->live_checked ? status_of(x, p->member) : NULL;
		struct eo_fnc_member *r = &rows[fi->n];
		struct eo_storage st;

		eo_member_storage(p->member, &st);
		*r = (struct eo_fnc_member){
		    .name = eo_member_name(p->member),
		    .deleting = eo_member_is_deleting(p->member),
		    .pending = eo_member_is_pending(p->member),
		    .dormant = eo_member_dormant(p->member),
		    .memory = st.memory,
		    .voter = eo_member_is_voter(p->member),
		    .lost = eo_plan_member_lost_data(p->member, p->pod, p->pvc),
		    .step = force_step(p->member),
		    .pod_present = p->pod != NULL && !eo_meta_is_deleting(p->pod),
		    .pod_ready = eo_plan_pod_ready(p->pod),
		    .pod_forces = eo_desired_pod_forces_new_cluster(p->pod),
		    .answered = es != NULL,
		    .foreign = es != NULL && !eo_plan_same_cluster(in->cluster, es->cluster_id),
		    .cluster_id = es != NULL ? es->cluster_id : 0,
		    .leader = es != NULL ? es->leader : 0,
		    .raft_term = es != NULL ? es->raft_term : 0,
		    .raft_index = es != NULL ? es->raft_index : 0,
		};
		pms[fi->n++] = p;
	}
}

/*
 * Before a quorum-loss decision: read every member's Pod and PVC live and ask every member's
 * etcd for its Status (want_live), then plan again. A plan that already had an etcd answer
 * without that view cannot ask again: it waits.
 */
void eo__plan_ask_live_check(struct eo__plan_ctx *x)
{
	struct eo_plan_result *out = x->out;

	if (x->in->etcd_queried) {
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return;
	}
	for (size_t i = 0; i < x->in->n_members && out->n_endpoints < EO_PLAN_MAX_ENDPOINTS; i++) {
		if (client_url_of(x, x->in->members[i].member, out->endpoints[out->n_endpoints]) !=
		    0) {
			x->ok = false;
			return;
		}
		out->n_endpoints++;
	}
	out->action = EO_PLAN_QUERY_MEMBERS;
	out->want_status = true;
	out->want_live = true;
}

/*
 * Whether a force-new-cluster request would start now (eo_plan_force_new_cluster_check) from
 * some voter that kept its data on a PVC: its name into who. When none would, why says why
 * for the first such voter ("" when there is none).
 */
bool eo__plan_force_would_pass(const struct eo__plan_ctx *x, char *who, size_t wn, char *why,
			       size_t n)
{
	struct eo_fnc_member rows[EO__PLAN_ROLL_MAX];
	const struct eo_plan_member *pms[EO__PLAN_ROLL_MAX];
	struct eo_fnc_input fi = {0};

	why[0] = '\0';
	fnc_view(x, rows, pms, &fi);
	for (size_t i = 0; i < fi.n; i++) {
		const struct eo_fnc_member *r = &rows[i];
		struct eo_fnc_decision d = {0};

		if (r->deleting || r->memory || r->lost || !r->voter || r->pending || r->dormant)
			continue;
		if (eo_plan_force_new_cluster_check(&fi, i, &d)) {
			snprintf(who, wn, "%s", r->name);
			return true;
		}
		if (why[0] == '\0')
			snprintf(why, n, "%s", d.why);
	}
	return false;
}

/* What the quorum-loss decision reads: the members, the request and the etcd answer. */
static void fnc_input(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
		      struct eo_fnc_member *rows, const struct eo_plan_member **pms,
		      struct eo_fnc_input *fi)
{
	const struct eo_plan_input *in = x->in;

	fnc_view(x, rows, pms, fi);
	fi->request = force_request(in->cluster);
	fi->whole = (int32_t)c->n == desired && (int32_t)c->ready == desired && c->voters == c->n &&
		    c->pending == 0 && c->deleting == 0;
	fi->etcd_queried = in->etcd_queried;
	fi->etcd_ok = in->etcd_queried && in->etcd_err == EO_ETCD_OK && in->etcd != NULL;
	fi->etcd_n = fi->etcd_ok ? in->etcd->n : 0;
	fi->etcd_foreign = fi->etcd_ok && !eo_plan_same_cluster(in->cluster, in->etcd->cluster_id);
	if (eo_present(fi->request) && fi->etcd_ok) {
		for (size_t i = 0; i < fi->n; i++)
			if (!rows[i].deleting && strcmp(rows[i].name, fi->request) == 0)
				fi->survivor_listed =
				    eo__plan_etcd_entry(x, pms[i]->member) != NULL;
	}
}

/* EO_FNC_REFUSE: say the refusal once (true when it decided this pass). */
static bool fnc_refuse(struct eo__plan_ctx *x, const struct eo_fnc_decision *d,
		       const struct eo_plan_member *pm, const json_t *cur)
{
	struct eo_plan_result *out = x->out;
	char why[EO_FNC_MSG_MAX + 64];
	const char *said = NULL;

	snprintf(why, sizeof(why), "force-new-cluster refused: %s", d->why);
	if (!d->unmark &&
	    eo_condition_matches(cur, EO_PLAN_COND_FORCE_NEW_CLUSTER, EO_COND_FALSE, d->reason) &&
	    (said = json_string_value(json_object_get(
		 eo_condition_find(cur, EO_PLAN_COND_FORCE_NEW_CLUSTER), "message"))) != NULL &&
	    strcmp(said, why) == 0)
		return false; /* said already: plan as usual */
	eo__plan_cond(x, EO_PLAN_COND_FORCE_NEW_CLUSTER, EO_COND_FALSE, d->reason, why);
	eo__plan_msgf(x, "%s", why);
	eo__plan_event(x, "Warning", d->reason);
	out->action = EO_PLAN_WRITE_STATUS;
	if (d->unmark) {
		/* refused before the flag reached a Pod: the survivor's mark goes */
		out->patch = annotation_patch(EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, NULL);
		out->action = EO_PLAN_MARK_MEMBER;
		out->member = pm->member;
		if (out->patch == NULL)
			x->ok = false;
	}
	return true;
}

/*
 * The steps that decide this pass while the survivor is not serving as the new cluster yet
 * (mark, restart, query, wait). No request: a cleanup.
 */
static void fnc_act(struct eo__plan_ctx *x, const struct eo_fnc_decision *d,
		    const struct eo_plan_member *pm, const char *request)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;

	eo__plan_msgf(x, "%s", d->why);
	if (eo_present(request))
		force_conditions(x, d->why, false);
	switch (d->step) {
	case EO_FNC_MARK:
	case EO_FNC_MARK_FORCED:
		out->patch = annotation_patch(EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP,
					      d->step == EO_FNC_MARK ? EO_FNC_STEP_FORCING
								     : EO_FNC_STEP_FORCED);
		if (out->patch == NULL)
			x->ok = false;
		out->action = EO_PLAN_MARK_MEMBER;
		out->member = pm->member;
		out->requeue_ms = EO_PLAN_REQUEUE_PENDING_MS;
		eo__plan_event(x, d->step == EO_FNC_MARK ? "Warning" : "Normal",
			       EO_PLAN_REASON_FORCE_NEW_CLUSTER);
		break;
	case EO_FNC_RESTART:
		snprintf(out->pod_uid, sizeof(out->pod_uid), "%s",
			 eo_meta_uid(pm->pod) != NULL ? eo_meta_uid(pm->pod) : "");
		out->action = EO_PLAN_RESTART_MEMBER;
		out->member = pm->member;
		out->requeue_ms = EO_PLAN_REQUEUE_PENDING_MS;
		eo__plan_event(x, "Normal", EO_PLAN_REASON_FORCE_NEW_CLUSTER);
		break;
	case EO_FNC_QUERY:
		if (eo_desired_member_client_url(out->endpoints[0], EO_DESIRED_URL_MAX, in->build,
						 eo_member_name(pm->member),
						 eo_cluster_name(in->cluster),
						 eo_cluster_namespace(in->cluster),
						 eo_desired_member_client_tls(pm->member)) != 0)
			x->ok = false;
		out->n_endpoints = 1;
		out->action = EO_PLAN_QUERY_MEMBERS;
		break;
	default: /* WAIT */
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_PENDING_MS);
		break;
	}
}

/*
 * 0. Quorum-loss recovery (plan/forcenew.h), before anything else. True when it decided this
 * pass; *lift is set when the usual planning goes on without the quorum-lost stop (the lost
 * members are removed and replaced by the usual steps).
 */
bool eo__plan_step_force_new_cluster(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				     int32_t desired, bool *lift)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;
	struct eo_fnc_member rows[EO__PLAN_ROLL_MAX];
	const struct eo_plan_member *pms[EO__PLAN_ROLL_MAX];
	struct eo_fnc_input fi = {0};
	struct eo_fnc_decision d;
	const json_t *cur = json_object_get(in->cluster, "status");
	const struct eo_plan_member *pm = NULL;
	const char *creason = NULL;

	*lift = false;
	fnc_input(x, c, desired, rows, pms, &fi);
	if (eo_plan_force_new_cluster_decide(&fi, &d) != 0) {
		x->ok = false;
		return true;
	}
	pm = d.has_member ? pms[d.member] : NULL;
	creason = eo_condition_reason(cur, EO_PLAN_COND_FORCE_NEW_CLUSTER);
	switch (d.step) {
	case EO_FNC_NONE:
		/* A finished recovery stays on record; a refusal or a cancelled one goes. */
		if (creason != NULL &&
		    strcmp(creason, EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE) != 0 &&
		    eo_condition_remove(x->st, EO_PLAN_COND_FORCE_NEW_CLUSTER) < 0)
			x->ok = false;
		return false;
	case EO_FNC_REFUSE:
		return fnc_refuse(x, &d, pm, cur);
	case EO_FNC_CHECK:
		eo__plan_msgf(x, "%s", d.why);
		eo__plan_ask_live_check(x);
		return true;
	case EO_FNC_PROCEED:
		force_conditions(x, d.why, true);
		*lift = true;
		return false;
	case EO_FNC_FINISH:
		eo__plan_cond(x, EO_PLAN_COND_FORCE_NEW_CLUSTER, EO_COND_FALSE,
			      EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE, d.why);
		eo__plan_msgf(x, "%s", d.why);
		eo__plan_event(x, "Normal", EO_PLAN_REASON_FORCE_NEW_CLUSTER_DONE);
		out->patch = annotation_patch(EO_ANNOTATION_FORCE_NEW_CLUSTER, NULL);
		out->action = EO_PLAN_CLEAR_FORCE_REQUEST;
		if (out->patch == NULL)
			x->ok = false;
		return false; /* health and Progressing as usual: the cluster is whole */
	case EO_FNC_UNMARK:
		eo__plan_msgf(x, "%s", d.why);
		out->patch = annotation_patch(EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP, NULL);
		out->action = EO_PLAN_MARK_MEMBER;
		out->member = pm->member;
		if (out->patch == NULL)
			x->ok = false;
		return true;
	default:
		break;
	}
	fnc_act(x, &d, pm, fi.request);
	return true;
}
