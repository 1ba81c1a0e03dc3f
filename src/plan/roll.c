/*
 * plan/roll.c - rolling updates (pure). See roll.h.
 */
#include "plan/roll.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool eo_plan_version_change_allowed(const char *const *from, size_t n, const char *to, char *why,
				    size_t why_n)
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
	if (!in->settled) {
		say(out->why, sizeof(out->why),
		    "rolling update waits for the membership change in flight");
		return 0;
	}
	if (in->n == 2) {
		out->refused = true;
		say(out->why, sizeof(out->why),
		    "rolling update refused: a cluster of 2 members loses its quorum while either "
		    "member restarts; set spec.replicas to 3 to roll without stopping writes");
		return 0;
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
		return 0;
	}
	if (in->leader == 0) {
		say(out->why, sizeof(out->why), "rolling update waits: no member knows a leader");
		return 0;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct eo_roll_member *m = &in->m[i];

		if (!m->has_status || m->id == 0) {
			say(out->why, sizeof(out->why),
			    "rolling update waits: member %s did not answer its status", m->name);
			return 0;
		}
		if (m->applied + EO_PLAN_ROLL_MAX_LAG < in->leader_index) {
			say(out->why, sizeof(out->why),
			    "rolling update waits for member %s to catch up with the leader "
			    "(applied index %" PRIu64 ", leader's %" PRIu64 ")",
			    m->name, m->applied, in->leader_index);
			return 0;
		}
	}
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
		    "rolling update: moving leadership from member %s to %s before its turn",
		    pick->name, to->name);
		return 0;
	}
	if ((pick->on_target || pick->memory) && in->n > 2 && in->pdb != EO_ROLL_PDB_ALLOWS) {
		/* The next step takes a member down: only within the disruption budget. */
		say(out->why, sizeof(out->why),
		    "rolling update waits for the PodDisruptionBudget to allow a disruption "
		    "before taking member %s down (%s)",
		    pick->name,
		    in->pdb == EO_ROLL_PDB_ABSENT  ? "no PodDisruptionBudget observed yet"
		    : in->pdb == EO_ROLL_PDB_STALE ? "its status is older than its spec"
						   : "status.disruptionsAllowed is 0");
		return 0;
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
	return 0;
}
