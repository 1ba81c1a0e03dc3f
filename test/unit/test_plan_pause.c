/*
 * Unit tests for plan/pause.c, called directly (plan/internal.h) on a small world: the pause
 * step of a cluster scaled to 0 (the last member goes dormant and keeps its PVC, or the cluster
 * stays paused) and the Paused conditions while a paused cluster wakes. The whole-planner rows
 * (the descent to one member, the wake-up) stay in test_plan_scale.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "plan/internal.h"
#include "support/testutil.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

/* An EtcdMember named name; dormant: spec.dormant; deleting: a deletionTimestamp. */
static json_t *member(const char *name, bool dormant, bool deleting)
{
	json_t *m = json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:b}}", "kind", "EtcdMember", "metadata",
			      "name", name, "namespace", "default", "spec", "clusterName", "demo",
			      "dormant", dormant);

	if (deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T09:59:00Z"));
	return m;
}

struct row {
	const char *name;
	const char *members; /* per member: 'a' awake, 'd' dormant, 'x' being deleted */
	enum eo_plan_action action;
	const char *member;  /* out.member's name, NULL: none */
	const char *message; /* a part of out.message */
	const char *event;   /* out.event_reason, NULL: none */
};

static void test_pause_step(void **state)
{
	static const char *const names[] = {"demo-a", "demo-b", "demo-c"};
	const struct row rows[] = {
	    {"no member left", "", EO_PLAN_NONE, NULL, "no member is left (data is lost)", NULL},
	    {"the last member goes dormant", "a", EO_PLAN_SET_DORMANT, "demo-a",
	     "member demo-a goes dormant; data is preserved on PVC data-demo-a", EO_REASON_PAUSED},
	    {"already dormant: stays paused", "d", EO_PLAN_NONE, NULL,
	     "cluster is paused; data is preserved on PVC data-demo-a", NULL},
	    {"a member being deleted is passed over", "xa", EO_PLAN_SET_DORMANT, "demo-b",
	     "member demo-b goes dormant", EO_REASON_PAUSED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		json_t *cluster = tu_jsonq("{'metadata':{'name':'demo','namespace':'default'}}");
		struct eo_plan_member pm[3] = {{0}};
		struct eo_plan_input in = {.cluster = cluster, .members = pm, .now = T0};
		struct eo_plan_result out = {0};
		struct eo__plan_ctx x = {.in = &in, .out = &out, .ok = true, .gen = 1};
		struct eo__plan_counts c;
		const char *types[] = {EO_COND_AVAILABLE, EO_COND_PROGRESSING, EO_COND_DEGRADED};

		for (size_t k = 0; r->members[k] != '\0'; k++)
			pm[in.n_members++].member =
			    member(names[k], r->members[k] == 'd', r->members[k] == 'x');
		x.st = json_object();
		eo__plan_count_members(&in, &c);
		eo__plan_step_pause(&x, &c);
		if (!x.ok)
			fail_msg("%s: the pass failed", r->name);
		if (out.action != r->action)
			fail_msg("%s: action %s, want %s", r->name, eo_plan_action_name(out.action),
				 eo_plan_action_name(r->action));
		if ((out.member == NULL) != (r->member == NULL) ||
		    (r->member != NULL &&
		     strcmp(json_string_value(
				json_object_get(json_object_get(out.member, "metadata"), "name")),
			    r->member) != 0))
			fail_msg("%s: the wrong member (or none) was chosen", r->name);
		if (strstr(out.message, r->message) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out.message,
				 r->message);
		if ((out.event_reason == NULL) != (r->event == NULL) ||
		    (r->event != NULL && strcmp(out.event_reason, r->event) != 0))
			fail_msg("%s: event %s, want %s", r->name,
				 out.event_reason ? out.event_reason : "none",
				 r->event ? r->event : "none");
		/* Paused owns all three conditions, False, with the step's message. */
		for (size_t k = 0; k < 3; k++) {
			const char *got = eo_condition_reason(x.st, types[k]);

			if (got == NULL || strcmp(got, EO_REASON_PAUSED) != 0 ||
			    eo_condition_is_true(x.st, types[k]))
				fail_msg("%s: %s is not False/Paused", r->name, types[k]);
		}
		for (size_t k = 0; k < in.n_members; k++)
			json_decref((json_t *)pm[k].member);
		json_decref(x.st);
		eo_plan_result_clear(&out);
		json_decref(cluster);
	}
}

/*
 * While a paused cluster's one member wakes, Available and Degraded keep saying Paused (nothing
 * was lost); once Available is no longer Paused, or is True, nothing is said.
 */
static void test_resuming(void **state)
{
	const struct {
		const char *name;
		const char *status; /* the cluster's stored status */
		bool says;
	} rows[] = {
	    {"woken from paused",
	     "{'conditions':[{'type':'Available','status':'False','reason':"
	     "'Paused','message':'m','lastTransitionTime':'2026-06-02T09:00:00Z'}]}",
	     true},
	    {"not paused before",
	     "{'conditions':[{'type':'Available','status':'False','reason':"
	     "'QuorumLost','message':'m','lastTransitionTime':"
	     "'2026-06-02T09:00:00Z'}]}",
	     false},
	    {"no conditions yet", "{}", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *cluster = tu_jsonq("{'metadata':{'name':'demo','namespace':'default'}}");
		struct eo_plan_member pm[1] = {{.member = member("demo-a", false, false)}};
		struct eo_plan_input in = {
		    .cluster = cluster, .members = pm, .n_members = 1, .now = T0};
		struct eo_plan_result out = {0};
		struct eo__plan_ctx x = {.in = &in, .out = &out, .ok = true, .gen = 1};
		const char *got = NULL;

		json_object_set_new(cluster, "status", tu_jsonq(rows[i].status));
		x.st = json_object();
		eo__plan_resuming(&x);
		got = eo_condition_reason(x.st, EO_COND_AVAILABLE);
		if (rows[i].says && (got == NULL || strcmp(got, EO_REASON_PAUSED) != 0 ||
				     eo_condition_reason(x.st, EO_COND_DEGRADED) == NULL))
			fail_msg("%s: Available/Degraded do not say Paused", rows[i].name);
		if (!rows[i].says && got != NULL)
			fail_msg("%s: Available says %s", rows[i].name, got);
		if (rows[i].says &&
		    strstr(json_string_value(json_object_get(
			       eo_condition_find(x.st, EO_COND_AVAILABLE), "message")),
			   "resuming: member demo-a is starting again; data is preserved on PVC "
			   "data-demo-a") == NULL)
			fail_msg("%s: the message does not say what happens", rows[i].name);
		json_decref((json_t *)pm[0].member);
		json_decref(x.st);
		eo_plan_result_clear(&out);
		json_decref(cluster);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pause_step),
	    cmocka_unit_test(test_resuming),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
