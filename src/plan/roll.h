/*
 * plan/roll.h - rolling updates (pure): which version changes etcd allows, and which member a
 * roll touches next and how. docs/concepts.md "Rolling updates" tells the user-facing story.
 *
 * A member is "on target" when its EtcdMember's spec carries the rolled fields of
 * status.observed, and its Pod is "current" when the Pod carries the hash of the Pod that
 * target gives (desired/desired.h, eo_desired_member_pod_hash). eo_plan_roll_decide() looks
 * at one such row per member, plus what etcd said about each member (leader, raft indexes),
 * and returns one step. It never acts while the membership moves, while a member is not
 * ready, while a member lags the leader, and it leaves the leader for last, moving leadership
 * away first.
 *
 * Everything here is a pure function of its arguments.
 */
#ifndef EO_PLAN_ROLL_H
#define EO_PLAN_ROLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reasons (conditions and Events). Not in the seeds. */
#define EO_PLAN_REASON_ROLLING	       "RollingUpdate"
#define EO_PLAN_REASON_VERSION_REFUSED "VersionChangeRefused"
#define EO_PLAN_REASON_LEADER_MOVED    "LeaderMoved"
#define EO_PLAN_REASON_ROLL_REFUSED    "RollRefused"

/* A member whose raft applied index is within this many entries of the leader's is caught up. */
#define EO_PLAN_ROLL_MAX_LAG 100

/* Requeue while a roll waits (a restarted member coming back, a follower catching up). */
#define EO_PLAN_REQUEUE_ROLL_MS 2000L

#define EO_PLAN_ROLL_MSG_MAX 384

/*
 * Whether a cluster whose members run the versions from[0..n) (their EtcdMembers'
 * spec.version; at least one) may be sent to version to. Patch versions move freely, up or
 * down. Minor versions: at most one minor above the lowest one running (3.5 -> 3.6, never
 * 3.4 -> 3.6); never below the highest one running unless some member still runs to's minor
 * (a roll 3.5 -> 3.6 that stopped half way may go back to 3.5: etcd's cluster version is
 * still 3.5). A minor upgrade starts only from a patch etcd's upgrade guide allows it from
 * (3.7 from 3.6.11 or later): every member on the lower minor must run at least that patch.
 * The major version never changes. Unparsable versions are refused. names[i] (names may be
 * NULL) is the member running from[i], for the refusal. When refused and why is not NULL, why
 * receives a sentence saying why.
 */
bool eo_plan_version_change_allowed(const char *const *from, const char *const *names, size_t n,
				    const char *to, char *why, size_t why_n);

/* One member, as the roll sees it. */
struct eo_roll_member {
	const char *name;
	uint64_t id;	  /* etcd member ID, 0 when etcd does not list it */
	bool on_target;	  /* its spec carries the rolled fields of status.observed */
	bool pod_present; /* it has a Pod that is not being deleted */
	bool pod_current; /* that Pod carries the target's Pod hash */
	bool ready;	  /* that Pod is ready */
	bool memory;	  /* storage.medium Memory: a restart loses its data */
	bool has_status;  /* etcd's Status of this member was read */
	uint64_t applied; /* its raft applied index (raft index when etcd does not say) */
};

/*
 * What the PodDisruptionBudget the operator keeps over the voters (<cluster>, plan.h) says, as
 * observed: a restart is a voluntary disruption like an eviction, so the roll takes a member
 * down only while the budget allows one (status.disruptionsAllowed > 0, computed by
 * Kubernetes' disruption controller for the spec it has seen).
 */
enum eo_roll_pdb {
	EO_ROLL_PDB_ALLOWS = 0, /* status.disruptionsAllowed > 0 for the current spec */
	EO_ROLL_PDB_BLOCKS,	/* status.disruptionsAllowed is 0 */
	EO_ROLL_PDB_ABSENT,	/* no PDB observed (yet) */
	EO_ROLL_PDB_STALE,	/* status.observedGeneration behind metadata.generation */
};

struct eo_roll_input {
	const struct eo_roll_member *m;
	size_t n;
	/*
	 * The membership is settled: as many members as the target, all voters, no learner,
	 * nothing joining or being deleted. A roll never overlaps a membership step.
	 */
	bool settled;
	uint64_t leader;       /* the leader's member ID, 0 when unknown */
	uint64_t leader_index; /* the leader's raft index */
	enum eo_roll_pdb pdb;
};

enum eo_roll_step {
	EO_ROLL_DONE = 0,    /* every member is on target with a current Pod */
	EO_ROLL_WAIT,	     /* something must settle first (why says what) */
	EO_ROLL_UPDATE_SPEC, /* patch member's spec with the target's fields */
	EO_ROLL_RESTART,     /* delete member's Pod: it comes back from its spec on its PVC */
	EO_ROLL_REPLACE,     /* memory member: remove it; the scale-up path adds a new one */
	EO_ROLL_MOVE_LEADER, /* leadership from member (the leader) to transferee first */
};

/* "done", "wait", ...; never NULL. */
const char *eo_roll_step_name(enum eo_roll_step s);

struct eo_roll_decision {
	enum eo_roll_step step;
	size_t member;	   /* UPDATE_SPEC, RESTART, REPLACE, MOVE_LEADER: index in m */
	size_t transferee; /* MOVE_LEADER: index in m */
	size_t updated;	   /* members on target, with a current and ready Pod */
	/* The member being rolled (the one acted on, or the one the roll waits for), -1: none. */
	long rolling;
	/* WAIT: the roll cannot go on as the cluster is (two members), not just not yet */
	bool refused;
	char why[EO_PLAN_ROLL_MSG_MAX];
};

/*
 * The next step of a roll. In order: nothing to roll -> DONE; membership moving -> WAIT; a
 * member not ready (the roll waits for the member it restarted, and never takes a second one
 * down) -> WAIT; the leader unknown or a member without a status or lagging the leader by more
 * than EO_PLAN_ROLL_MAX_LAG -> WAIT; else the member to roll: one whose spec was already
 * updated (finish it), else the first follower by name, else the leader. For the leader of a
 * cluster of two or more: MOVE_LEADER to a member on target first (first by name; any other
 * when none is). Then UPDATE_SPEC when its spec is off target, REPLACE for a memory member,
 * RESTART otherwise. The two disruptive steps (RESTART, REPLACE) of a cluster of three or more
 * also wait until the PDB allows a disruption (in->pdb). A cluster of exactly two members is
 * refused (WAIT with refused set) before any step: either member down is a quorum loss, so
 * the roll would stop writes and a member that does not come back would keep them stopped;
 * scale to three first. A single member is restarted in place (no quorum to keep; its PDB
 * never allows a disruption, so it is not consulted). Returns 0, or -1 on bad input (NULL).
 */
int eo_plan_roll_decide(const struct eo_roll_input *in, struct eo_roll_decision *out);

#endif
