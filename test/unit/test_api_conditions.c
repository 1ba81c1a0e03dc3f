/*
 * Unit tests for api/conditions: lastTransitionTime only moves when status
 * changes, reason/message/observedGeneration updates, no-op detection, lookup
 * and removal, argument checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <errno.h>
#include <string.h>

#include "api/conditions.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */
#define T1 (T0 + 60)
#define T2 (T0 + 120)

static const char *field(const json_t *status, const char *type, const char *key)
{
	return json_string_value(json_object_get(eo_condition_find(status, type), key));
}

static json_int_t gen_of(const json_t *status, const char *type)
{
	json_t *g = json_object_get(eo_condition_find(status, type), "observedGeneration");

	return json_is_integer(g) ? json_integer_value(g) : -1;
}

/* One step of a transition table, applied in order to the same status. */
struct step {
	const char *type;
	const char *status;
	const char *reason;
	const char *message;
	int64_t gen;
	time_t now;
	int want_rc;
	const char *want_ltt; /* lastTransitionTime after the step */
};

static const struct step steps[] = {
    /* New condition: changed, transition time = now. */
    {"Available", "False", "WaitingForSeed", "seed pending", 1, T0, 1, "2026-06-02T10:00:00Z"},
    /* Exactly the same later: no change, time kept. */
    {"Available", "False", "WaitingForSeed", "seed pending", 1, T1, 0, "2026-06-02T10:00:00Z"},
    /* Same status, new reason: changed, time kept. */
    {"Available", "False", "ClusterUnreachable", "seed pending", 1, T1, 1, "2026-06-02T10:00:00Z"},
    /* Same status, new message: changed, time kept. */
    {"Available", "False", "ClusterUnreachable", "dial failed", 1, T1, 1, "2026-06-02T10:00:00Z"},
    /* New generation only: changed, time kept. */
    {"Available", "False", "ClusterUnreachable", "dial failed", 2, T1, 1, "2026-06-02T10:00:00Z"},
    /* Status flips: time moves. */
    {"Available", "True", "QuorumHealthy", "", 2, T1, 1, "2026-06-02T10:01:00Z"},
    /* A second type is independent. */
    {"Progressing", "True", "InitialSnapshot", NULL, 2, T2, 1, "2026-06-02T10:02:00Z"},
    /* Back to the first type, unchanged. */
    {"Available", "True", "QuorumHealthy", "", 2, T2, 0, "2026-06-02T10:01:00Z"},
    /* NULL message equals "". */
    {"Available", "True", "QuorumHealthy", NULL, 2, T2, 0, "2026-06-02T10:01:00Z"},
    /* Unknown is a status of its own. */
    {"Available", "Unknown", "QuorumHealthy", NULL, 2, T2, 1, "2026-06-02T10:02:00Z"},
};

/* A Job-style status: the message of a True condition, nothing for False or absent ones. */
static void test_true_message(void **state)
{
	json_t *st = json_loads("{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
				"\"message\":\"BackoffLimitExceeded\"},{\"type\":\"Complete\","
				"\"status\":\"False\"},{\"type\":\"Bare\",\"status\":\"True\"}]}",
				0, NULL);
	const char *msg = "unset";

	(void)state;
	assert_non_null(st);
	assert_true(eo_condition_true_message(st, "Failed", &msg));
	assert_string_equal(msg, "BackoffLimitExceeded");
	msg = "unset";
	assert_false(eo_condition_true_message(st, "Complete", &msg));
	assert_string_equal(msg, "unset");
	assert_true(eo_condition_true_message(st, "Bare", &msg));
	assert_null(msg);
	assert_false(eo_condition_true_message(st, "Missing", NULL));
	assert_true(eo_condition_true_message(st, "Failed", NULL));
	assert_false(eo_condition_true_message(NULL, "Failed", NULL));
	json_decref(st);
}

static void test_transition_table(void **state)
{
	json_t *status = json_object();

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		const struct step *s = &steps[i];
		struct eo_condition c = {s->type, s->status, s->reason, s->message, s->gen};
		int rc = eo_condition_set(status, &c, s->now);

		if (rc != s->want_rc)
			fail_msg("step %zu: rc %d, want %d", i, rc, s->want_rc);
		assert_string_equal(field(status, s->type, "lastTransitionTime"), s->want_ltt);
		assert_string_equal(field(status, s->type, "status"), s->status);
		assert_string_equal(field(status, s->type, "reason"), s->reason);
		assert_string_equal(field(status, s->type, "message"),
				    s->message ? s->message : "");
		assert_int_equal(gen_of(status, s->type), s->gen);
	}
	assert_int_equal(json_array_size(json_object_get(status, "conditions")), 2);
	json_decref(status);
}

static void test_generation_omitted(void **state)
{
	json_t *status = json_object();
	struct eo_condition c = {"Ready", "True", "PodReady", "", 3};

	(void)state;
	assert_int_equal(eo_condition_set(status, &c, T0), 1);
	assert_int_equal(gen_of(status, "Ready"), 3);
	c.observed_generation = -1;
	assert_int_equal(eo_condition_set(status, &c, T0), 1);
	assert_null(json_object_get(eo_condition_find(status, "Ready"), "observedGeneration"));
	assert_int_equal(eo_condition_set(status, &c, T1), 0);
	json_decref(status);
}

static void test_existing_status_json(void **state)
{
	/* A condition read from the apiserver without lastTransitionTime gets one. */
	json_t *status = json_loads("{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\","
				    "\"reason\":\"PodReady\",\"message\":\"\"}]}",
				    0, NULL);
	struct eo_condition c = {"Ready", "True", "PodReady", "", -1};

	(void)state;
	assert_non_null(status);
	assert_int_equal(eo_condition_set(status, &c, T0), 1);
	assert_string_equal(field(status, "Ready", "lastTransitionTime"), "2026-06-02T10:00:00Z");
	assert_int_equal(eo_condition_set(status, &c, T1), 0);
	json_decref(status);
}

static void test_lookup_and_remove(void **state)
{
	json_t *status = json_object();
	struct eo_condition a = {"Available", "False", "Paused", "data is preserved", 1};
	struct eo_condition d = {"Degraded", "True", "QuorumLost", "", 1};

	(void)state;
	assert_null(eo_condition_find(status, "Available"));
	assert_null(eo_condition_status(status, "Available"));
	assert_false(eo_condition_is_true(status, "Available"));
	assert_int_equal(eo_condition_set(status, &a, T0), 1);
	assert_int_equal(eo_condition_set(status, &d, T0), 1);
	assert_string_equal(eo_condition_status(status, "Available"), "False");
	assert_string_equal(eo_condition_reason(status, "Available"), "Paused");
	assert_false(eo_condition_is_true(status, "Available"));
	assert_true(eo_condition_is_true(status, "Degraded"));
	assert_true(eo_condition_matches(status, "Available", "False", "Paused"));
	assert_true(eo_condition_matches(status, "Available", "False", NULL));
	assert_false(eo_condition_matches(status, "Available", "False", "QuorumLost"));
	assert_false(eo_condition_matches(status, "Available", "True", NULL));
	assert_false(eo_condition_matches(status, "Missing", "True", NULL));
	assert_int_equal(eo_condition_remove(status, "Available"), 1);
	assert_int_equal(eo_condition_remove(status, "Available"), 0);
	assert_null(eo_condition_find(status, "Available"));
	assert_true(eo_condition_is_true(status, "Degraded"));
	assert_null(eo_condition_find(NULL, "Degraded"));
	assert_int_equal(eo_condition_remove(NULL, "Degraded"), 0);
	json_decref(status);
}

static void test_invalid_arguments(void **state)
{
	json_t *status = json_object();
	json_t *arr = json_array();
	json_t *bad = json_pack("{s:s}", "conditions", "oops");
	struct eo_condition ok = {"Ready", "True", "PodReady", "", 1};
	struct eo_condition cases[] = {
	    {NULL, "True", "PodReady", "", 1},	 {"", "True", "PodReady", "", 1},
	    {"Ready", "Yes", "PodReady", "", 1}, {"Ready", NULL, "PodReady", "", 1},
	    {"Ready", "True", NULL, "", 1},	 {"Ready", "True", "", "", 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_condition_set(status, &cases[i], T0) != -EINVAL)
			fail_msg("case %zu accepted", i);
	assert_int_equal(json_object_size(status), 0);
	assert_int_equal(eo_condition_set(NULL, &ok, T0), -EINVAL);
	assert_int_equal(eo_condition_set(arr, &ok, T0), -EINVAL);
	assert_int_equal(eo_condition_set(status, NULL, T0), -EINVAL);
	assert_int_equal(eo_condition_set(bad, &ok, T0), -EINVAL);
	json_decref(status);
	json_decref(arr);
	json_decref(bad);
}

TU_MAIN(test_transition_table, test_generation_omitted, test_existing_status_json,
	test_lookup_and_remove, test_invalid_arguments, test_true_message)
