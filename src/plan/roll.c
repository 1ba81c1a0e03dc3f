/*
 * plan/roll.c - rolling updates (pure). See roll.h.
 */
#include "plan/roll.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "plan/internal.h"

static const char *const step_names[] = {
    [EO_ROLL_DONE] = "done",
    [EO_ROLL_WAIT] = "wait",
    [EO_ROLL_UPDATE_SPEC] = "update-spec",
    [EO_ROLL_RESTART] = "restart",
    [EO_ROLL_REPLACE] = "replace",
    [EO_ROLL_MOVE_LEADER] = "move-leader",
};

const char *eo_roll_step_name(enum eo_roll_step s)
{
	if ((unsigned)s < sizeof(step_names) / sizeof(step_names[0]) && step_names[s] != NULL)
		return step_names[s];
	return "unknown";
}

struct ver {
	long major, minor, patch;
};

/* "MAJOR.MINOR.PATCH", digits only (the CRD's rule). */
static bool parse_version(const char *s, struct ver *v)
{
	long *parts[3] = {&v->major, &v->minor, &v->patch};

	if (s == NULL)
		return false;
	for (int i = 0; i < 3; i++) {
		char *end = NULL;

		if (*s < '0' || *s > '9')
			return false;
		*parts[i] = strtol(s, &end, 10);
		if (end == s || *parts[i] < 0 || *parts[i] > 100000)
			return false;
		s = end;
		if (i < 2) {
			if (*s != '.')
				return false;
			s++;
		}
	}
	return *s == '\0';
}

static void say(char *why, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));

static void say(char *why, size_t n, const char *f, ...)
{
	va_list ap;

	if (why == NULL || n == 0)
		return;
	va_start(ap, f);
	vsnprintf(why, n, f, ap);
	va_end(ap);
}

/*
 * The oldest patch of a minor from which etcd's upgrade guide allows the next minor (its "Update
 * 3.x" checklist). 3.6.11 for 3.7: "Earlier 3.6 patch releases may not be compatible with a
 * rolling upgrade to 3.7". A minor not listed has no floor here.
 */
static const struct ver upgrade_floors[] = {{3, 6, 11}};

static const struct ver *upgrade_floor(long major, long minor)
{
	for (size_t i = 0; i < sizeof(upgrade_floors) / sizeof(upgrade_floors[0]); i++)
		if (upgrade_floors[i].major == major && upgrade_floors[i].minor == minor)
			return &upgrade_floors[i];
	return NULL;
}

/* A member on the minor below the target's that runs a patch older than that minor's floor. */
static bool below_floor(const char *const *from, const char *const *names, size_t n, const char *to,
			const struct ver *t, char *why, size_t why_n)
{
	const struct ver *f = upgrade_floor(t->major, t->minor - 1);

	for (size_t i = 0; f != NULL && from != NULL && i < n; i++) {
		struct ver v;

		if (from[i] == NULL || !parse_version(from[i], &v) || v.minor != f->minor ||
		    v.patch >= f->patch)
			continue;
		say(why, why_n,
		    "etcd's upgrade guide allows %ld.%ld only from %ld.%ld.%ld or later: member %s "
		    "runs %s, spec.version is %s; upgrade to the newest %ld.%ld patch first",
		    t->major, t->minor, f->major, f->minor, f->patch,
		    names != NULL && names[i] != NULL ? names[i] : "(unnamed)", from[i], to,
		    f->major, f->minor);
		return true;
	}
	return false;
}

bool eo_plan_version_change_allowed(const char *const *from, const char *const *names, size_t n,
				    const char *to, char *why, size_t why_n)
{
	struct ver t, lo = {0}, hi = {0};
	bool any = false;

	say(why, why_n, "%s", "");
	if (!parse_version(to, &t)) {
		say(why, why_n, "spec.version %s is not an etcd release number",
		    to != NULL ? to : "(none)");
		return false;
	}
	for (size_t i = 0; from != NULL && i < n; i++) {
		struct ver v;

		if (from[i] == NULL || from[i][0] == '\0')
			continue;
		if (!parse_version(from[i], &v)) {
			say(why, why_n, "a member runs version %s, which is not a release number",
			    from[i]);
			return false;
		}
		if (v.major != t.major) {
			say(why, why_n,
			    "etcd %s cannot be changed to %s: a major version change is not "
			    "supported",
			    from[i], to);
			return false;
		}
		if (!any || v.minor < lo.minor)
			lo = v;
		if (!any || v.minor > hi.minor)
			hi = v;
		any = true;
	}
	if (!any)
		return true; /* nothing runs yet: any release */
	if (t.minor > lo.minor + 1) {
		say(why, why_n,
		    "etcd upgrades one minor version at a time: members run %ld.%ld, spec.version "
		    "%s skips %ld.%ld; upgrade to the newest %ld.%ld patch first",
		    lo.major, lo.minor, to, lo.major, lo.minor + 1, lo.major, lo.minor + 1);
		return false;
	}
	if (t.minor < hi.minor && t.minor != lo.minor) {
		say(why, why_n,
		    "etcd does not support downgrading a minor version by replacing its binary: "
		    "members run %ld.%ld, spec.version is %s; set spec.version back to a %ld.%ld "
		    "release",
		    hi.major, hi.minor, to, hi.major, hi.minor);
		return false;
	}
	if (t.minor == lo.minor + 1 && below_floor(from, names, n, to, &t, why, why_n))
		return false;
	return true;
}

/* A member that still has to be rolled. */
static bool outdated(const struct eo_roll_member *m)
{
	return !m->on_target || !m->pod_present || !m->pod_current;
}

static int by_name(const struct eo_roll_member *a, const struct eo_roll_member *b)
{
	return strcmp(a->name != NULL ? a->name : "", b->name != NULL ? b->name : "");
}

/* Rank of a candidate: followers before the leader, a half-rolled member first, then name. */
static bool goes_before(const struct eo_roll_input *in, const struct eo_roll_member *a,
			const struct eo_roll_member *b)
{
	bool la = in->leader != 0 && a->id == in->leader,
	     lb = in->leader != 0 && b->id == in->leader;

	if (la != lb)
		return !la;
	if (a->on_target != b->on_target)
		return a->on_target;
	return by_name(a, b) < 0;
}

/* The checks before any member is taken down: true (out->why says it) when the roll waits. */
static bool roll_blocked(const struct eo_roll_input *in, struct eo_roll_decision *out, size_t ready)
{
	if (!in->settled) {
		say(out->why, sizeof(out->why),
		    "rolling update waits for the membership change in flight");
		return true;
	}
	if (in->n == 2) {
		out->refused = true;
		say(out->why, sizeof(out->why),
		    "rolling update refused: a cluster of 2 members loses its quorum while either "
		    "member restarts; set spec.replicas to 3 to roll without stopping writes");
		return true;
	}
	/* The member the roll waits for: on target but its Pod not back and ready yet. */
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (m->ready)
			continue;
		if (m->on_target)
			out->rolling = (long)i;
		say(out->why, sizeof(out->why),
		    "rolling update waits for member %s to become ready (%zu of %zu ready)",
		    m->name, ready, in->n);
		return true;
	}
	if (in->leader == 0) {
		say(out->why, sizeof(out->why), "rolling update waits: no member knows a leader");
		return true;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (!m->has_status || m->id == 0) {
			say(out->why, sizeof(out->why),
			    "rolling update waits: member %s did not answer its status", m->name);
			return true;
		}
		if (m->applied + EO_PLAN_ROLL_MAX_LAG < in->leader_index) {
			say(out->why, sizeof(out->why),
			    "rolling update waits for member %s to catch up with the leader "
			    "(applied index %" PRIu64 ", leader's %" PRIu64 ")",
			    m->name, m->applied, in->leader_index);
			return true;
		}
	}
	return false;
}

/* The leader's turn: leadership moves first, to a member already rolled if any, else by name. */
static void move_leader_first(const struct eo_roll_input *in, struct eo_roll_decision *out,
			      const struct eo_roll_member *pick, size_t pi)
{
	const struct eo_roll_member *to = NULL;
	size_t ti = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (i == pi)
			continue;
		if (to == NULL || (!outdated(m) && outdated(to)) ||
		    (outdated(m) == outdated(to) && by_name(m, to) < 0)) {
			to = m;
			ti = i;
		}
	}
	out->step = EO_ROLL_MOVE_LEADER;
	out->transferee = ti;
	say(out->why, sizeof(out->why),
	    "rolling update: moving leadership from member %s to %s before its turn", pick->name,
	    to->name);
}

/* The picked follower's step: within the disruption budget, update, replace or restart it. */
static void roll_member(const struct eo_roll_input *in, struct eo_roll_decision *out,
			const struct eo_roll_member *pick)
{
	if ((pick->on_target || pick->memory) && in->n > 2 && in->pdb != EO_ROLL_PDB_ALLOWS) {
		/* The next step takes a member down: only within the disruption budget. */
		say(out->why, sizeof(out->why),
		    "rolling update waits for the PodDisruptionBudget to allow a disruption "
		    "before taking member %s down (%s)",
		    pick->name,
		    in->pdb == EO_ROLL_PDB_ABSENT  ? "no PodDisruptionBudget observed yet"
		    : in->pdb == EO_ROLL_PDB_STALE ? "its status is older than its spec"
						   : "status.disruptionsAllowed is 0");
		return;
	}
	if (!pick->on_target && !pick->memory) {
		out->step = EO_ROLL_UPDATE_SPEC;
		say(out->why, sizeof(out->why),
		    "rolling update: member %s gets the target spec (%zu of %zu members updated)",
		    pick->name, out->updated, in->n);
	} else if (pick->memory) {
		out->step = EO_ROLL_REPLACE;
		say(out->why, sizeof(out->why),
		    "rolling update: replacing memory member %s (its data cannot survive a "
		    "restart; %zu of %zu members updated)",
		    pick->name, out->updated, in->n);
	} else {
		out->step = EO_ROLL_RESTART;
		say(out->why, sizeof(out->why),
		    "rolling update: restarting member %s on its PVC with the new Pod (%zu of "
		    "%zu members updated)",
		    pick->name, out->updated, in->n);
	}
}

int eo_plan_roll_decide(const struct eo_roll_input *in, struct eo_roll_decision *out)
{
	const struct eo_roll_member *pick = NULL;
	size_t todo = 0, pi = 0, ready = 0;

	if (in == NULL || out == NULL || (in->n > 0 && in->m == NULL))
		return -1;
	memset(out, 0, sizeof(*out));
	out->rolling = -1;
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		ready += m->ready;
		if (!outdated(m) && m->ready)
			out->updated++;
		if (outdated(m))
			todo++;
	}
	if (todo == 0) {
		out->step = EO_ROLL_DONE;
		return 0;
	}
	out->step = EO_ROLL_WAIT;
	if (roll_blocked(in, out, ready))
		return 0;
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (outdated(m) && (pick == NULL || goes_before(in, m, pick))) {
			pick = m;
			pi = i;
		}
	}
	/* Every member is ready here, so one down keeps a quorum of 3 or more (n/2 + 1). */
	out->member = pi;
	out->rolling = (long)pi;
	if (in->n > 1 && pick->id == in->leader) {
		move_leader_first(in, out, pick, pi);
		return 0;
	}
	roll_member(in, out, pick);
	return 0;
}

/* --- the roll as a step of the cluster planner (plan/plan.h, plan/internal.h) --- */

/*
 * The roll's view of the members against the target x->observed: whether each one's spec is
 * on target and whether its Pod carries the target's hash (desired/desired.h).
 */
void eo__plan_fill_roll_view(struct eo__plan_ctx *x)
{
	struct eo__plan_roll_view *rv = &x->rv;
	struct eo_desired_opts o =
	    x->in->build != NULL ? *x->in->build : (struct eo_desired_opts){0};

	memset(rv, 0, sizeof(*rv));
	if (!json_is_object(x->observed))
		return;
	/* The Pods carry the CA bundles' digest as recorded (member.c builds them so). */
	o.ca_bundle_digest = json_string_value(json_object_get(x->st, "caBundleDigest"));
	for (size_t i = 0; i < x->in->n_members && rv->n < EO__PLAN_ROLL_MAX; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];
		struct eo_roll_member *r = &rv->rows[rv->n];
		char want[EO_DESIRED_HASH_MAX];
		const char *have = NULL;
		json_t *target = NULL;
		struct eo_storage st;

		if (eo_member_is_deleting(pm->member) || eo_member_is_pending(pm->member) ||
		    eo_member_dormant(pm->member))
			continue;
		eo_member_storage(pm->member, &st);
		r->name = eo_member_name(pm->member);
		r->memory = st.memory;
		r->on_target = eo_desired_member_on_target(pm->member, x->observed);
		r->pod_present = pm->pod != NULL && !eo_meta_is_deleting(pm->pod);
		r->ready = eo_plan_member_serving(pm->member, pm->pod);
		have = eo_meta_annotation(pm->pod, EO_ANNOTATION_POD_HASH);
		target = eo_desired_member_with_target(pm->member, x->observed);
		if (target == NULL) {
			x->ok = false;
			return;
		}
		if (r->pod_present && r->on_target && eo_member_pod_adopted(pm->member, pm->pod)) {
			/*
			 * The legacy Pod `kubectl etcd migrate` adopted as it ran: current until
			 * the target moves, then rolled into a Pod of this operator.
			 */
			r->pod_current = true;
		} else if (eo_desired_member_pod_hash(target, &o, want, sizeof(want)) != 0) {
			/*
			 * No Pod can be built from it (the member controller says why on the
			 * member): nothing to compare, so nothing to roll for its Pod.
			 */
			r->pod_current = r->pod_present;
		} else {
			r->pod_current = r->pod_present && have != NULL && strcmp(have, want) == 0;
		}
		json_decref(target);
		rv->pm[rv->n] = pm;
		if (!r->on_target || (r->pod_present && !r->pod_current))
			rv->outdated++;
		if (!r->on_target || !r->pod_present || !r->pod_current)
			rv->todo++;
		else if (r->ready)
			rv->updated++;
		rv->n++;
	}
}

/* What the observed PodDisruptionBudget lets the roll do (plan/roll.h). */
static enum eo_roll_pdb roll_pdb(const json_t *pdb)
{
	const json_t *st = json_object_get(pdb, "status");
	const json_t *allowed = json_object_get(st, "disruptionsAllowed");
	json_int_t gen = eo_meta_generation(pdb, 0);

	if (pdb == NULL)
		return EO_ROLL_PDB_ABSENT;
	if (!json_is_integer(allowed) ||
	    json_integer_value(json_object_get(st, "observedGeneration")) < gen)
		return EO_ROLL_PDB_STALE;
	return json_integer_value(allowed) > 0 ? EO_ROLL_PDB_ALLOWS : EO_ROLL_PDB_BLOCKS;
}

/*
 * A roll's replacement of a memory member of three or more: its Pod is evicted first, which
 * takes the member's data with it, so that the apiserver counts the disruption against the
 * PodDisruptionBudget atomically with a drain (removing it from etcd first would leave its
 * Pod counted as healthy while the quorum already lacks it). The lost-member step then
 * removes it through the others and the scale-up path adds its replacement from the target.
 * Only while the others hold quorum without it, as for a removal; false otherwise (the caller
 * then goes the removal's way, which waits and says why).
 */
static bool evict_memory_member(struct eo__plan_ctx *x, const struct eo_plan_member *pm,
				const char *why)
{
	const char *uid = eo_meta_uid(pm->pod);

	if (!eo_plan_removal_keeps_quorum(x->in->members, x->in->n_members, pm, NULL, NULL) ||
	    !eo_present(uid))
		return false;
	eo__plan_msgf(
	    x, "%s: evicting its Pod (its data goes with it), then it is removed and replaced",
	    why);
	snprintf(x->out->pod_uid, sizeof(x->out->pod_uid), "%s", uid);
	x->out->member = pm->member;
	x->out->action = EO_PLAN_RESTART_MEMBER;
	x->out->evict = true;
	x->out->requeue_ms = EO_PLAN_REQUEUE_ROLL_MS;
	return true;
}

/* What the roll decision reads of etcd: each row's ID and applied index, the leader's. */
void eo__plan_roll_input(struct eo__plan_ctx *x, struct eo_roll_input *ri)
{
	struct eo__plan_roll_view *rv = &x->rv;

	for (size_t i = 0; i < rv->n; i++) {
		struct eo_roll_member *r = &rv->rows[i];
		const struct eo_etcd_member *em = eo__plan_etcd_entry(x, rv->pm[i]->member);

		r->id = em != NULL ? em->id : 0;
		r->has_status = false;
		r->applied = 0;
		for (size_t j = 0; r->id != 0 && j < x->in->n_statuses; j++) {
			const struct eo_etcd_status *s = &x->in->statuses[j];

			if (s->member_id != r->id)
				continue;
			r->has_status = true;
			r->applied =
			    s->raft_applied_index != 0 ? s->raft_applied_index : s->raft_index;
		}
	}
	ri->pdb = roll_pdb(x->in->pdb);
	for (size_t j = 0; j < x->in->n_statuses && ri->leader == 0; j++)
		ri->leader = x->in->statuses[j].leader;
	for (size_t j = 0; j < x->in->n_statuses; j++)
		if (ri->leader != 0 && x->in->statuses[j].member_id == ri->leader)
			ri->leader_index = x->in->statuses[j].raft_index;
}

/*
 * MoveLeader from pm (the leader) to the member whose etcd ID is to, through pm's client URL
 * (the roll's, and the storage step's before a leader's Pod is restarted).
 */
void eo__plan_move_leader(struct eo__plan_ctx *x, const struct eo_plan_member *pm, uint64_t to)
{
	if (eo_desired_member_client_url(x->out->endpoints[0], EO_DESIRED_URL_MAX, x->in->build,
					 eo_member_name(pm->member), eo_member_service(pm->member),
					 eo_cluster_namespace(x->in->cluster),
					 eo_desired_member_client_tls(pm->member)) != 0)
		x->ok = false;
	x->out->member = pm->member;
	x->out->n_endpoints = 1;
	x->out->etcd_id = to;
	x->out->action = EO_PLAN_MOVE_LEADER;
	x->out->requeue_ms = EO_PLAN_REQUEUE_PROMOTE_MS;
	eo__plan_event(x, "Normal", EO_PLAN_REASON_LEADER_MOVED);
}

/* The roll's step on its member: move the leader, update the spec, restart or replace. */
static void roll_act(struct eo__plan_ctx *x, const struct eo_roll_decision *d)
{
	struct eo__plan_roll_view *rv = &x->rv;
	const struct eo_plan_member *pm = NULL;

	pm = rv->pm[d->member];
	x->out->member = pm->member;
	eo__plan_event(x, "Normal", EO_PLAN_REASON_ROLLING);
	switch (d->step) {
	case EO_ROLL_MOVE_LEADER:
		eo__plan_move_leader(x, pm, rv->rows[d->transferee].id);
		break;
	case EO_ROLL_UPDATE_SPEC:
		x->out->patch = eo_desired_member_roll_patch(pm->member, x->observed);
		if (x->out->patch == NULL)
			x->ok = false;
		x->out->action = EO_PLAN_UPDATE_MEMBER;
		break;
	case EO_ROLL_RESTART:
		snprintf(x->out->pod_uid, sizeof(x->out->pod_uid), "%s",
			 eo_meta_uid(pm->pod) != NULL ? eo_meta_uid(pm->pod) : "");
		x->out->action = EO_PLAN_RESTART_MEMBER;
		/* Where the roll asked the PDB, the apiserver decides again, atomically. */
		x->out->evict = rv->n > 2;
		x->out->requeue_ms = EO_PLAN_REQUEUE_ROLL_MS;
		break;
	case EO_ROLL_REPLACE:
		if (rv->n > 2 && evict_memory_member(x, pm, d->why))
			break;
		eo__plan_remove_if_safe(x, pm, "rolling update of a memory member");
		if (x->out->action == EO_PLAN_REMOVE_MEMBER) {
			eo__plan_msgf(x, "%s", d->why);
			eo__plan_event(x, "Normal", EO_PLAN_REASON_ROLLING);
		} else {
			x->out->member = NULL;
			eo__plan_event(x, NULL, NULL);
		}
		break;
	default:
		break;
	}
}

/*
 * 6b. Rolling update (plan/roll.h): once the membership is settled, one member at a time is
 * brought to the target in status.observed: followers first, the leader last after moving
 * leadership away; each step waits until every member is ready and caught up with the leader.
 */
bool eo__plan_step_roll(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			size_t learners, const struct eo_plan_member *pending)
{
	struct eo__plan_roll_view *rv = &x->rv;
	struct eo_roll_input ri = {.m = rv->rows, .n = rv->n};
	struct eo_roll_decision d;
	int32_t target = (int32_t)json_integer_value(json_object_get(x->observed, "replicas"));

	if (rv->todo == 0 || target <= 0 || x->held)
		return false;
	ri.settled = (int32_t)c->n == desired && (int32_t)rv->n == desired && pending == NULL &&
		     learners == 0 && c->deleting == 0 && c->voters == c->n && c->dormant == 0;
	if (!ri.settled)
		return false; /* the membership step goes first; the roll waits for it */
	eo__plan_roll_input(x, &ri);
	if (eo_plan_roll_decide(&ri, &d) != 0) {
		x->ok = false;
		return true;
	}
	if (d.rolling >= 0)
		eo__plan_set_status(x, "rollingMember", json_string(rv->rows[d.rolling].name));
	if (d.step == EO_ROLL_DONE)
		return false;
	eo__plan_msgf(x, "%s", d.why);
	if (d.step == EO_ROLL_WAIT && d.refused) {
		/* Nothing changes on its own: say so, and look again now and then. */
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_ROLL_REFUSED,
			      d.why);
		eo__plan_event(x, "Warning", EO_PLAN_REASON_ROLL_REFUSED);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_STEADY_MS);
		return true;
	}
	if (d.step == EO_ROLL_WAIT) {
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_ROLL_MS);
		return true;
	}
	roll_act(x, &d);
	return true;
}

/*
 * Whether the spec's version is a change etcd does not allow from what the members run
 * (their spec.version, and the target's when no member says): plan/roll.h.
 */
bool eo__plan_version_refused(struct eo__plan_ctx *x, const json_t *observed, char *why, size_t n)
{
	const char *from[EO__PLAN_ROLL_MAX + 1], *names[EO__PLAN_ROLL_MAX + 1];
	size_t k = 0;

	for (size_t i = 0; i < x->in->n_members && k < EO__PLAN_ROLL_MAX; i++) {
		const json_t *m = x->in->members[i].member;

		if (!eo_member_is_deleting(m) && eo_present(eo_member_version(m))) {
			names[k] = eo_member_name(m);
			from[k++] = eo_member_version(m);
		}
	}
	if (k == 0) {
		names[k] = "(the cluster's target)";
		from[k++] = json_string_value(json_object_get(observed, "version"));
	}
	return !eo_plan_version_change_allowed(from, names, k, eo_cluster_version(x->in->cluster),
					       why, n);
}
