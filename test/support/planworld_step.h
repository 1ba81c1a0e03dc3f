/*
 * support/planworld_step.h - a planning pass opened on a world so that one step of the cluster
 * planner (plan/internal.h: eo__plan_step_*) can be called on its own: pwst_begin opens the
 * pass with the planner's own eo__plan_begin (as eo_plan_cluster does before its
 * preconditions) and fails the test when that fails; pwst_observe sets the target from
 * status.observed and the roll's view of the members, as the target step does; pwst_end frees the
 * status built.
 *
 * Test code only. Names use the pwst_ prefix.
 */
#ifndef EO_TEST_PLANWORLD_STEP_H
#define EO_TEST_PLANWORLD_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/internal.h"
#include "plan/member.h"
#include "support/planworld_scale.h"

/* Opens the pass of in into *x, *c and *out; fails the test when that fails. */
void pwst_begin(struct eo__plan_ctx *x, struct eo__plan_counts *c, const struct eo_plan_input *in,
		struct eo_plan_result *out);
/* x->observed from the status (status.observed) and x->rv, as eo__plan_target sets them. */
void pwst_observe(struct eo__plan_ctx *x);
/* Frees the status the pass built (not out's). */
void pwst_end(struct eo__plan_ctx *x);
/* etcd's learners in in->etcd, as eo__plan_step_membership counts them. */
size_t pwst_learners(const struct eo_plan_input *in);
/* The first pending member (no initialCluster, not being deleted), or NULL. */
const struct eo_plan_member *pwst_pending(const struct eo_plan_input *in);

/*
 * Fails the test, naming what, unless the step's answer is the one wanted: decided (the step's
 * return), out->action, out->member's name (NULL: no member), out->etcd_id (0: not checked) and
 * a part of out->message (NULL: not checked).
 */
void pwst_check(const char *what, bool decided, const struct eo_plan_result *out, bool want_decided,
		enum eo_plan_action action, const char *member, uint64_t etcd_id,
		const char *message);

/*
 * Fails the test, naming what and field, unless got is want (both NULL counts as the same):
 * a condition's reason (eo_condition_reason), an Event's reason, ...
 */
void pwst_check_str(const char *what, const char *field, const char *got, const char *want);

/*
 * The whole planner on in (eo_plan_cluster), for the tests that plan a world end to end: fails
 * the test unless it returns 0 with the action wanted (naming both actions and the message).
 */
void pwst_plan(const struct eo_plan_input *in, struct eo_plan_result *r, enum eo_plan_action want);

/* The same for the member planner (eo_member_plan) and its action. */
void pwst_mplan(const struct eo_mplan_input *in, struct eo_mplan_result *r,
		enum eo_mplan_action want);

/* What a direct step test wants of the step, as pwst_check takes it. */
struct pwst_want {
	bool decided;
	enum eo_plan_action action;
	const char *member;
	uint64_t etcd_id;
	const char *message;
};
/* Changes the world of a table row before the pass opens. */
typedef void pwst_prepare_fn(struct pws_world *w, const void *row);
/* Calls the step of a table row on the opened pass (x->in: the input); returns whether it decided.
 */
typedef bool pwst_step_fn(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row);
/* Checks more of the pass after the step (x->st: the status built; out: the answer). */
typedef void pwst_after_fn(const char *what, const struct eo__plan_ctx *x,
			   const struct eo_plan_result *out, const void *row);

/*
 * One direct step call, named what: opens the pass on in (pwst_begin; pwst_observe when
 * observe), calls step, fails unless the pass stayed ok, checks the answer against want
 * (pwst_check) and the rest with after (when not NULL); then frees the pass and the result.
 */
void pwst_call(const char *what, const struct eo_plan_input *in, bool observe, pwst_step_fn *step,
	       pwst_after_fn *after, const void *row, struct pwst_want want);

/*
 * One row of a direct step table on the world of r: pws_world_init, prepare (when not NULL),
 * then pwst_call (observed, named r->what); then the world is freed.
 */
void pwst_run(const struct pws_row *r, pwst_prepare_fn *prepare, pwst_step_fn *step,
	      const void *row, struct pwst_want want);

#endif
