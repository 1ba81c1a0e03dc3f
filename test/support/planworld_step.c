/*
 * support/planworld_step.c - see planworld_step.h. The pass opens with the planner's own
 * eo__plan_begin; first_pending (plan/membership.c) is restated for the direct step tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/names.h"
#include "support/planworld_step.h"

void pwst_begin(struct eo__plan_ctx *x, struct eo__plan_counts *c, const struct eo_plan_input *in,
		struct eo_plan_result *out)
{
	memset(out, 0, sizeof(*out));
	assert_int_equal(eo__plan_begin(x, c, in, out), 0);
	assert_true(x->ok);
}

void pwst_observe(struct eo__plan_ctx *x)
{
	x->observed = json_object_get(x->st, "observed");
	eo__plan_fill_roll_view(x);
	assert_true(x->ok);
}

void pwst_end(struct eo__plan_ctx *x)
{
	eo__plan_end(x);
}

size_t pwst_learners(const struct eo_plan_input *in)
{
	size_t n = 0;

	for (size_t i = 0; in->etcd != NULL && i < in->etcd->n; i++)
		if (in->etcd->v[i].is_learner)
			n++;
	return n;
}

const struct eo_plan_member *pwst_pending(const struct eo_plan_input *in)
{
	for (size_t i = 0; i < in->n_members; i++)
		if (!eo_member_is_deleting(in->members[i].member) &&
		    eo_member_is_pending(in->members[i].member))
			return &in->members[i];
	return NULL;
}

void pwst_check(const char *what, bool decided, const struct eo_plan_result *out, bool want_decided,
		enum eo_plan_action action, const char *member, uint64_t etcd_id,
		const char *message)
{
	const char *name = out->member != NULL ? eo_member_name(out->member) : NULL;

	if (decided != want_decided)
		fail_msg("%s: decided %d, want %d (%s: %s)", what, decided, want_decided,
			 eo_plan_action_name(out->action), out->message);
	if (out->action != action)
		fail_msg("%s: action %s, want %s (%s)", what, eo_plan_action_name(out->action),
			 eo_plan_action_name(action), out->message);
	if ((name == NULL) != (member == NULL) || (name != NULL && strcmp(name, member) != 0))
		fail_msg("%s: member %s, want %s", what, name ? name : "(none)",
			 member ? member : "(none)");
	if (etcd_id != 0 && out->etcd_id != etcd_id)
		fail_msg("%s: etcd id %llx, want %llx", what, (unsigned long long)out->etcd_id,
			 (unsigned long long)etcd_id);
	if (message != NULL && strstr(out->message, message) == NULL)
		fail_msg("%s: message \"%s\" lacks \"%s\"", what, out->message, message);
}

void pwst_plan(const struct eo_plan_input *in, struct eo_plan_result *r, enum eo_plan_action want)
{
	assert_int_equal(eo_plan_cluster(in, r), 0);
	if (r->action != want)
		fail_msg("planned %s, want %s (%s)", eo_plan_action_name(r->action),
			 eo_plan_action_name(want), r->message);
}

void pwst_mplan(const struct eo_mplan_input *in, struct eo_mplan_result *r,
		enum eo_mplan_action want)
{
	assert_int_equal(eo_member_plan(in, r), 0);
	if (r->action != want)
		fail_msg("planned %s, want %s", eo_mplan_action_name(r->action),
			 eo_mplan_action_name(want));
}

void pwst_check_str(const char *what, const char *field, const char *got, const char *want)
{
	if ((got == NULL) != (want == NULL) || (got != NULL && strcmp(got, want) != 0))
		fail_msg("%s: %s %s, want %s", what, field, got ? got : "(none)",
			 want ? want : "(none)");
}

void pwst_call(const char *what, const struct eo_plan_input *in, bool observe, pwst_step_fn *step,
	       pwst_after_fn *after, const void *row, struct pwst_want want)
{
	struct eo__plan_ctx x;
	struct eo__plan_counts c;
	struct eo_plan_result out;
	bool decided;

	pwst_begin(&x, &c, in, &out);
	if (observe)
		pwst_observe(&x);
	decided = step(&x, &c, row);
	if (!x.ok)
		fail_msg("%s: the pass failed", what);
	pwst_check(what, decided, &out, want.decided, want.action, want.member, want.etcd_id,
		   want.message);
	if (after != NULL)
		after(what, &x, &out, row);
	pwst_end(&x);
	eo_plan_result_clear(&out);
}

void pwst_run(const struct pws_row *r, pwst_prepare_fn *prepare, pwst_step_fn *step,
	      const void *row, struct pwst_want want)
{
	struct pws_world w;

	pws_world_init(&w, r);
	if (prepare != NULL)
		prepare(&w, row);
	pwst_call(r->what, &w.in, true, step, NULL, row, want);
	pws_world_free(&w);
}
