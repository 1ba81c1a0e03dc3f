/*
 * plan/internal.h - what the files of the cluster planner (eo_plan_cluster, plan/plan.h) share:
 * the context of one planning pass, the member counts, the roll's view of the members, and
 * the helpers and steps that more than one file uses. Not an API: only src/plan and the
 * planner's unit tests include it (the eo__ prefix: shared inside one module).
 *
 * A step takes the context of the pass (struct eo__plan_ctx), writes its decision into
 * x->out and the status it builds into x->st, and returns true when it decided this pass.
 */
#ifndef EO_PLAN_INTERNAL_H
#define EO_PLAN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "core/strbuf.h"
#include "core/util.h"
#include "plan/plan.h"
#include "plan/podissue.h"
#include "plan/roll.h"

struct eo__plan_counts {
	size_t n;			      /* members not being deleted */
	size_t deleting;		      /* members being deleted */
	size_t pending;			      /* members without initialCluster (not deleting) */
	size_t ready;			      /* members whose Pod is ready (not deleting) */
	size_t voters;			      /* members with status.isVoter (not deleting, not
					       * dormant: a dormant member has no Pod to protect) */
	size_t voters_ready;		      /* ... whose Pod is ready */
	size_t dormant;			      /* members with spec.dormant (not deleting) */
	size_t broken;			      /* memory members that lost their Pod and members
					       * whose etcd crash-loops (not deleting) */
	size_t voters_lost;		      /* voters that lost their data (memory member
					       * without a Pod, PVC member without its PVC) */
	size_t node_due;		      /* members whose node trouble is past its grace
					       * (plan/nodeloss.h; not deleting) */
	const struct eo_plan_member *seed;    /* first non-deleting bootstrap member */
	const struct eo_plan_member *sleeper; /* first non-deleting dormant member */
	char not_ready[256];		      /* names of the members that are not ready */
	char voters_not_ready[256];	      /* names of the voters that are not ready */
	char voters_lost_names[256];	      /* names of the voters_lost */
};

/* Members as the roll sees them (plan/roll.h), without those being deleted. */
#define EO__PLAN_ROLL_MAX 32
struct eo__plan_roll_view {
	struct eo_roll_member rows[EO__PLAN_ROLL_MAX];
	const struct eo_plan_member *pm[EO__PLAN_ROLL_MAX];
	size_t n;
	size_t outdated; /* spec off target, or a Pod present that is not the target's */
	size_t todo;	 /* ... or a member on target without its Pod */
	size_t updated;	 /* on target with a current and ready Pod */
};

/* Members as the storage step sees them (plan/storage.h), without those being deleted. */
struct eo__plan_storage_view {
	size_t updated;	 /* on the target's storage (status.observed.storage) */
	size_t outdated; /* on another size, class or medium */
};

struct eo__plan_ctx {
	const struct eo_plan_input *in;
	const json_t *observed; /* status.observed (the target), NULL before the latch */
	struct eo__plan_roll_view rv;
	struct eo__plan_storage_view sv;
	struct eo_plan_result *out;
	json_t *st; /* desired status being built */
	int64_t gen;
	bool ok;
	/* A problem seen through etcd (not in Pod readiness) that Degraded tells about. */
	const char *etcd_problem; /* reason, NULL: none */
	char etcd_problem_msg[EO_PLAN_MSG_MAX];
	/* What keeps members from running (plan/podissue.h), "" when nothing does. */
	char issues[EO_PLAN_ISSUES_MAX];
	bool ca_changed; /* this pass records a new status.caBundleDigest */
	/*
	 * Past status.progressDeadline with the spec unchanged: the cluster heals (lost and
	 * crash-looping members replaced, strays removed, voter marks, promotion, the PDB) but
	 * does not move towards the target: no roll step, no scale-down, and no member created
	 * beyond held_size (status.membersAtDeadline: the members, joining and being deleted
	 * ones included, it had when the deadline passed).
	 */
	bool held;
	int32_t held_size;
};

/* The target of a pass (plan/target.c): what the steps after it go by. */
struct eo__plan_target {
	json_t *spec_obs; /* the spec as a target (new reference; the caller frees it) */
	int32_t desired;  /* members of the target (status.observed.replicas) */
	bool has_dl;	  /* a progress deadline runs */
	time_t dl;	  /* ... until then */
	bool complete;	  /* the target is reached */
	bool refused;	  /* the spec differs by a version change etcd does not allow ... */
	char refusal[EO_PLAN_MSG_MAX]; /* ... and why */
};

/*
 * plan/common.c: counts, conditions, status, message and event of the pass; the etcd view of
 * the members; the names of the members to create.
 */
const struct eo_plan_node *eo__plan_node_of(const struct eo_plan_input *in,
					    const struct eo_plan_member *pm);
bool eo__plan_node_due(const struct eo_plan_input *in, const struct eo_plan_member *pm);
void eo__plan_count_members(const struct eo_plan_input *in, struct eo__plan_counts *c);
void eo__plan_cond(struct eo__plan_ctx *x, const char *type, const char *status, const char *reason,
		   const char *msg);
void eo__plan_set_status(struct eo__plan_ctx *x, const char *key, json_t *v);
#define eo__plan_msgf(x, ...) EO_FMT((x)->out->message, __VA_ARGS__)
void eo__plan_event(struct eo__plan_ctx *x, const char *type, const char *reason);
const char *eo__plan_unreachable_reason(const struct eo_plan_input *in);
const char *eo__plan_etcd_err_text(const struct eo_plan_input *in);
void eo__plan_etcd_problem(struct eo__plan_ctx *x, const char *reason);
void eo__plan_ensure_next_member_name(struct eo__plan_ctx *x);
void eo__plan_create_named(struct eo__plan_ctx *x, enum eo_plan_action a);
int eo__plan_newer(const json_t *a, const json_t *b);
int eo__plan_peer_url_of(struct eo__plan_ctx *x, const json_t *member, char *buf, size_t n);
const struct eo_etcd_member *eo__plan_etcd_entry(struct eo__plan_ctx *x, const json_t *member);
const struct eo_plan_member *eo__plan_member_of(struct eo__plan_ctx *x,
						const struct eo_etcd_member *em);
void eo__plan_voter_endpoints(struct eo__plan_ctx *x);
void eo__plan_wait_for(struct eo__plan_ctx *x, long requeue_ms);
bool eo__plan_absence_verified(struct eo__plan_ctx *x, const json_t *member, const char *what);
void eo__plan_relabel_with_mark(struct eo__plan_ctx *x, const struct eo_plan_member *pm,
				bool voter);

/*
 * plan/plan.c: the opening of a pass, as eo_plan_cluster does it before its preconditions
 * (generation, a copy of the stored status, selector, member counts, next member name, Pod
 * issues, readyMembers, brokenMembers). -1 when the status could not be copied (nothing to
 * free); 0 otherwise, with x->ok false when the pass cannot go on (eo__plan_end frees it).
 * Lets a table test call one step on a small world.
 */
int eo__plan_begin(struct eo__plan_ctx *x, struct eo__plan_counts *c,
		   const struct eo_plan_input *in, struct eo_plan_result *out);
void eo__plan_end(struct eo__plan_ctx *x);

/* plan/pause.c: pause and resume (spec.replicas 0) */
void eo__plan_step_pause(struct eo__plan_ctx *x, const struct eo__plan_counts *c);
void eo__plan_resuming(struct eo__plan_ctx *x);

/* plan/bootstrap.c: before the cluster has an ID */
void eo__plan_step_bootstrap(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			     int32_t desired);

/* plan/health.c: Available and Degraded from the members */
void eo__plan_health_of(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool available);
void eo__plan_health(struct eo__plan_ctx *x, const struct eo__plan_counts *c);

/* plan/quorum.c: removals that keep the quorum */
bool eo__plan_counted_voter(const json_t *member);
bool eo__plan_remove_if_safe(struct eo__plan_ctx *x, const struct eo_plan_member *pm,
			     const char *what);

/* plan/scale_down.c: scale down */
bool eo__plan_step_scale_down(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			      int32_t desired);

/* plan/scale_up.c: scale up (a new member joins as a learner) */
bool eo__plan_step_set_initial_cluster(struct eo__plan_ctx *x,
				       const struct eo_plan_member *pending);
void eo__plan_step_scale_up(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			    int32_t desired, const struct eo_plan_member *pending);

/* plan/promote.c: promotion of a learner */
bool eo__plan_step_promote(struct eo__plan_ctx *x, size_t learners);

/* plan/replace.c: replacement of lost, missing, crash-looping and node-lost members */
bool eo__plan_step_replace_lost(struct eo__plan_ctx *x);
bool eo__plan_step_not_in_etcd(struct eo__plan_ctx *x);
bool eo__plan_step_replace_crashlooping(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
					int32_t desired, size_t learners);
bool eo__plan_step_replace_node(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				int32_t desired, size_t learners);

/* plan/storage.c: members moved onto the target's storage, one at a time */
void eo__plan_fill_storage_view(struct eo__plan_ctx *x);
bool eo__plan_step_storage(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			   size_t learners);
/* Whether a member's Pod is to be restarted for its filesystem: etcd's statuses are read. */
bool eo__plan_storage_wants_status(const struct eo__plan_ctx *x);

/* plan/membership.c: the membership steps in order */
bool eo__plan_step_query(struct eo__plan_ctx *x);
bool eo__plan_step_unmanaged(struct eo__plan_ctx *x);
bool eo__plan_step_voter_marks(struct eo__plan_ctx *x);
void eo__plan_step_membership(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			      int32_t desired);

/* plan/forcenew.c: quorum-loss recovery (force-new-cluster) */
bool eo__plan_force_active(const struct eo__plan_ctx *x);
void eo__plan_ask_live_check(struct eo__plan_ctx *x);
bool eo__plan_force_would_pass(const struct eo__plan_ctx *x, char *who, size_t wn, char *why,
			       size_t n);
bool eo__plan_step_force_new_cluster(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				     int32_t desired, bool *lift);

/* plan/roll.c: the rolling update */
void eo__plan_fill_roll_view(struct eo__plan_ctx *x);
bool eo__plan_step_roll(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			size_t learners, const struct eo_plan_member *pending);
bool eo__plan_version_refused(struct eo__plan_ctx *x, const json_t *observed, char *why, size_t n);
/* The roll's rows of x->rv read against etcd's statuses (IDs, applied indexes, the leader). */
void eo__plan_roll_input(struct eo__plan_ctx *x, struct eo_roll_input *ri);
void eo__plan_move_leader(struct eo__plan_ctx *x, const struct eo_plan_member *pm, uint64_t to);

/* plan/certs.c, plan/auth.c: cert-manager mode and spec.auth */
bool eo__plan_step_certs(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running);
bool eo__plan_step_auth(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
			bool healthy);

/* plan/running.c: the pass of a bootstrapped cluster */
bool eo__plan_step_pdb(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired);
void eo__plan_step_running(struct eo__plan_ctx *x, const struct eo__plan_counts *c, int32_t desired,
			   bool in_flight);

/* plan/preconditions.c: what must hold before anything moves; the stops it shares */
bool eo__plan_preconditions(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running);
void eo__plan_stop_with(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
			const char *reason);
void eo__plan_stop_tls(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
		       const char *reason);

/* plan/target.c: the target latch and the progress deadline */
bool eo__plan_target(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
		     struct eo__plan_target *t);
void eo__plan_target_finish(struct eo__plan_ctx *x, const struct eo__plan_target *t);

#endif
