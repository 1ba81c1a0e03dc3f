/*
 * Unit tests of plan/auth.c: the etcd authentication verdicts, table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "plan/auth.h"

#define AUTH_FAILED "etcdserver: authentication failed"

static void test_verdicts(void **state)
{
	const struct {
		const char *name;
		struct eo_plan_auth_input in;
		enum eo_plan_auth_verdict want;
		const char *reason;
	} rows[] = {
	    {"no auth, etcd not asked", {.healthy = true}, EO_PLAN_AUTH_NONE, NULL},
	    {"no auth, etcd has none", {.queried = true}, EO_PLAN_AUTH_NONE, NULL},
	    {"no auth, etcd has auth on",
	     {.queried = true, .auth_on = true},
	     EO_PLAN_AUTH_PROBLEM,
	     EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED},
	    {"no auth, AuthStatus failed",
	     {.queried = true, .auth_on = true, .status_err = EO_ETCD_UNAVAILABLE},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"no auth, flagged before: ask again", {.flagged = true}, EO_PLAN_AUTH_QUERY, NULL},
	    {"auth, Secret missing",
	     {.spec_enabled = true,
	      .healthy = true,
	      .creds_reason = EO_REASON_AUTH_SECRET_NOT_FOUND,
	      .creds_message = "the root credentials Secret ns/root does not exist"},
	     EO_PLAN_AUTH_PROBLEM,
	     EO_REASON_AUTH_SECRET_NOT_FOUND},
	    {"auth, Secret invalid even when flagged",
	     {.spec_enabled = true, .flagged = true, .creds_reason = EO_REASON_AUTH_SECRET_INVALID},
	     EO_PLAN_AUTH_PROBLEM,
	     EO_REASON_AUTH_SECRET_INVALID},
	    {"auth, unhealthy, not asked: wait", {.spec_enabled = true}, EO_PLAN_AUTH_NONE, NULL},
	    {"auth, healthy, not asked: ask",
	     {.spec_enabled = true, .healthy = true},
	     EO_PLAN_AUTH_QUERY,
	     NULL},
	    {"auth latched, healthy: nothing to ask",
	     {.spec_enabled = true, .latched = true, .healthy = true},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"auth latched, password not seen accepted (Secret edited, restart): ask",
	     {.spec_enabled = true, .latched = true, .unverified = true},
	     EO_PLAN_AUTH_QUERY,
	     NULL},
	    {"auth latched, unverified, asked: accepted, nothing more",
	     {.spec_enabled = true,
	      .latched = true,
	      .unverified = true,
	      .queried = true,
	      .auth_on = true},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"not latched, unverified, unhealthy: wait as before",
	     {.spec_enabled = true, .unverified = true},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"auth latched, password rejected before: ask again",
	     {.spec_enabled = true, .latched = true, .flagged = true},
	     EO_PLAN_AUTH_QUERY,
	     NULL},
	    {"auth, etcd off, healthy: enable",
	     {.spec_enabled = true, .healthy = true, .queried = true},
	     EO_PLAN_AUTH_ENABLE,
	     NULL},
	    {"auth, etcd off, not healthy: not yet",
	     {.spec_enabled = true, .queried = true},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"auth latched, etcd off again, healthy: enable again",
	     {.spec_enabled = true, .latched = true, .healthy = true, .queried = true},
	     EO_PLAN_AUTH_ENABLE,
	     NULL},
	    {"auth, etcd on, password works: latch (restored snapshot too)",
	     {.spec_enabled = true, .queried = true, .auth_on = true},
	     EO_PLAN_AUTH_LATCH,
	     NULL},
	    {"auth latched, etcd on: nothing",
	     {.spec_enabled = true, .latched = true, .queried = true, .auth_on = true},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"auth, etcd on, password refused",
	     {.spec_enabled = true,
	      .queried = true,
	      .auth_on = true,
	      .login_err = EO_ETCD_AUTH,
	      .login_message = AUTH_FAILED},
	     EO_PLAN_AUTH_PROBLEM,
	     EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {"auth, etcd on, login unreachable: no latch, no problem",
	     {.spec_enabled = true, .queried = true, .auth_on = true, .login_err = EO_ETCD_TIMEOUT},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	    {"auth, AuthStatus unknown: nothing provisioned",
	     {.spec_enabled = true,
	      .healthy = true,
	      .queried = true,
	      .status_err = EO_ETCD_UNSUPPORTED},
	     EO_PLAN_AUTH_NONE,
	     NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct eo_plan_auth_input in = rows[i].in;
		struct eo_plan_auth_result out;

		in.ns = "ns";
		in.secret = "root";
		eo_plan_auth(&in, &out);
		if (out.verdict != rows[i].want)
			fail_msg("%s: verdict %s, want %s", rows[i].name,
				 eo_plan_auth_verdict_name(out.verdict),
				 eo_plan_auth_verdict_name(rows[i].want));
		if (rows[i].reason != NULL) {
			assert_non_null(out.reason);
			assert_string_equal(out.reason, rows[i].reason);
			assert_true(out.message[0] != '\0');
		} else {
			assert_null(out.reason);
		}
	}
}

/* Messages name the Secret and quote etcd, and never carry more than they are given. */
static void test_messages(void **state)
{
	struct eo_plan_auth_input in = {.spec_enabled = true,
					.queried = true,
					.auth_on = true,
					.login_err = EO_ETCD_AUTH,
					.login_message = AUTH_FAILED,
					.ns = "prod",
					.secret = "etcd-root"};
	struct eo_plan_auth_result out;

	(void)state;
	eo_plan_auth(&in, &out);
	assert_non_null(strstr(out.message, "Secret prod/etcd-root"));
	assert_non_null(strstr(out.message, AUTH_FAILED));
	assert_non_null(strstr(out.message, "\"password\""));
	in = (struct eo_plan_auth_input){.queried = true, .auth_on = true};
	eo_plan_auth(&in, &out);
	assert_non_null(strstr(out.message, "spec.auth.rootCredentialsSecretRef"));
	assert_non_null(strstr(out.message, "delete and recreate"));
	assert_string_equal(eo_plan_auth_verdict_name(EO_PLAN_AUTH_LATCH), "latch");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verdicts),
	    cmocka_unit_test(test_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
