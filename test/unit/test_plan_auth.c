/*
 * Unit tests of plan/auth.c: the etcd authentication verdicts, table-driven, and spec.auth
 * through eo_plan_cluster (support/planworld_cluster.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "plan/auth.h"
#include "api/names.h"
#include "desired/desired.h"
#include "plan/plan.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "plan/internal.h"
#include "support/planworld_step.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

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

/*
 * spec.auth on a healthy cluster: ask etcd, turn auth on, latch status.authEnabled once etcd
 * says it is on and the password works; a restored cluster with auth already on is latched
 * without provisioning; a latched steady cluster asks nothing.
 */
static void test_auth_enable_and_latch(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_auth_world(&w, true, false);
	pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(
	    strstr(r.endpoints[0], "://demo-aaaaa.demo.default.svc.cluster.local:2379"));
	eo_plan_result_clear(&r);
	/* etcd: auth off -> enable it through the voters. */
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_OK;
	w.in.auth_on = false;
	pwst_plan(&w.in, &r, EO_PLAN_ENABLE_AUTH);
	assert_int_equal(r.n_endpoints, 1);
	assert_non_null(strstr(r.message, "Secret default/root"));
	assert_null(json_object_get(r.status, "authEnabled"));
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	eo_plan_result_clear(&r);
	/* etcd: auth on, the password works -> latch (also what a restored snapshot gets). */
	w.in.auth_on = true;
	pwst_plan(&w.in, &r, EO_PLAN_WRITE_STATUS);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	assert_string_equal(r.event_reason, EO_PLAN_REASON_AUTH_ENABLED);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY);
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* Latched and steady: no etcd query, nothing to do. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_true(json_is_true(json_object_get(r.status, "authEnabled")));
	eo_plan_result_clear(&r);
	/* The Secret's password changed (or the operator restarted): etcd is asked at once. */
	w.in.auth_unverified = true;
	pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_login_err = EO_ETCD_AUTH;
	w.in.auth_login_message = "etcdserver: authentication failed";
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
			EO_REASON_AUTH_CREDENTIALS_REJECTED);
	assert_string_equal(r.event_reason, EO_REASON_AUTH_CREDENTIALS_REJECTED);
	eo_plan_result_clear(&r);
	w.in.auth_login_err = EO_ETCD_OK;
	w.in.auth_unverified = false;
	/* Unknown auth state (3.4 refusing, etcd down): nothing is provisioned. */
	pwc_world_free(&w);
	pwc_auth_world(&w, true, false);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_status_err = EO_ETCD_UNAVAILABLE;
	assert_int_equal(eo_plan_cluster(&w.in, &r), 0);
	assert_int_not_equal(r.action, EO_PLAN_ENABLE_AUTH);
	assert_null(json_object_get(r.status, "authEnabled"));
	pwc_done(&w, &r);
}

/* etcd has auth on and the spec none: AuthRequiredNotConfigured, nothing done, asked again. */
static void test_auth_required_not_configured(void **state)
{
	struct pwc_world w;
	struct eo_plan_result r;

	(void)state;
	pwc_auth_world(&w, false, false);
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	assert_non_null(strstr(r.message, "delete and recreate"));
	json_object_set(w.cluster, "status", r.status);
	eo_plan_result_clear(&r);
	/* The next pass asks etcd again rather than reporting a healthy cluster. */
	w.in.etcd_queried = false;
	w.in.etcd = NULL;
	w.in.auth_on = false;
	pwst_plan(&w.in, &r, EO_PLAN_QUERY_MEMBERS);
	eo_plan_result_clear(&r);
	/* Still on: the same status, no write. */
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_false(r.status_changed);
	eo_plan_result_clear(&r);
	/* Bootstrapping a restored seed: refused before the cluster ID is latched. */
	pwc_world_free(&w);
	{
		char *st = pwc_latched_status(1, NULL);

		pwc_world_init(&w, pwc_cluster(1, st), true);
		free(st);
	}
	pwc_world_add(&w, pwc_member("demo-aaaaa", true, false, NULL), pwc_pod("demo-aaaaa", true));
	pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
	w.in.auth_on = true;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	assert_null(json_object_get(r.status, "clusterID"));
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	eo_plan_result_clear(&r);
	/* The same when etcd refused the anonymous member list itself. */
	w.in.etcd_err = EO_ETCD_AUTH;
	w.in.etcd = NULL;
	pwst_plan(&w.in, &r, EO_PLAN_NONE);
	pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_FALSE,
			EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED);
	pwc_done(&w, &r);
}

/* A wrong password or a missing Secret: a condition and a Warning, no action, no latch. */
static void test_auth_problems(void **state)
{
	const struct {
		bool latched;
		const char *creds_reason;
		eo_etcd_err login;
		const char *want;
	} rows[] = {
	    {false, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {true, NULL, EO_ETCD_AUTH, EO_REASON_AUTH_CREDENTIALS_REJECTED},
	    {false, EO_REASON_AUTH_SECRET_NOT_FOUND, EO_ETCD_OK, EO_REASON_AUTH_SECRET_NOT_FOUND},
	    {true, EO_REASON_AUTH_SECRET_INVALID, EO_ETCD_OK, EO_REASON_AUTH_SECRET_INVALID},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;
		struct eo_plan_result r;

		pwc_auth_world(&w, true, rows[i].latched);
		pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
		w.in.auth_on = true;
		w.in.auth_login_err = rows[i].login;
		w.in.auth_login_message = "etcdserver: authentication failed";
		w.in.auth_reason = rows[i].creds_reason;
		w.in.auth_message = "the root credentials Secret default/root does not exist";
		pwst_plan(&w.in, &r, EO_PLAN_NONE);
		pwc_assert_cond(r.status, EO_COND_DEGRADED, EO_COND_TRUE, rows[i].want);
		/* The members are fine: Available still says so. */
		pwc_assert_cond(r.status, EO_COND_AVAILABLE, EO_COND_TRUE,
				EO_REASON_QUORUM_HEALTHY);
		assert_string_equal(r.event_reason, rows[i].want);
		assert_int_equal(json_is_true(json_object_get(r.status, "authEnabled")),
				 rows[i].latched);
		if (rows[i].login == EO_ETCD_AUTH)
			assert_non_null(strstr(r.message, "authentication failed"));
		assert_null(strstr(r.message, "s3cret"));
		pwc_done(&w, &r);
	}
}

struct auth_row {
	const char *what;
	bool with_auth, latched; /* spec.auth; status.authEnabled */
	bool queried;		 /* etcd answered (member list and AuthStatus) */
	bool auth_on;		 /* ... AuthStatus: enabled */
	eo_etcd_err login_err;	 /* Authenticate with the Secret's password */
	const char *creds;	 /* in.auth_reason: the Secret's problem, NULL: none */
	bool decided;		 /* the step's return */
	enum eo_plan_action action;
	const char *event;    /* out.event_reason, NULL: none */
	const char *degraded; /* reason of Degraded, NULL: not set (the health is told
			       * when the step asks etcd or latches) */
};

static bool auth_step(struct eo__plan_ctx *x, struct eo__plan_counts *c, const void *row)
{
	(void)row;
	return eo__plan_step_auth(x, c, true, true);
}

/* The Event and the Degraded reason of an auth row. */
static void auth_after(const char *what, const struct eo__plan_ctx *x,
		       const struct eo_plan_result *out, const void *row)
{
	const struct auth_row *r = row;

	pwst_check_str(what, "event", out->event_reason, r->event);
	pwst_check_str(what, "Degraded", eo_condition_reason(x->st, EO_COND_DEGRADED), r->degraded);
}

/*
 * The step itself (eo__plan_step_auth), called directly on a formed one-member TLS cluster
 * (pwc_auth_world) with spec.auth or not: without auth nothing; unqueried, ask etcd; auth off,
 * enable it; on and the password works, latch status.authEnabled; the credentials missing or
 * rejected stop the pass and Degraded says why; latched and steady, nothing.
 */
static void test_auth_step(void **state)
{
	static const struct auth_row rows[] = {
	    {"no spec.auth: nothing", false, false, true, false, EO_ETCD_OK, NULL, false,
	     EO_PLAN_NONE, NULL, NULL},
	    {"not queried yet: ask etcd", true, false, false, false, EO_ETCD_OK, NULL, true,
	     EO_PLAN_QUERY_MEMBERS, NULL, EO_REASON_QUORUM_HEALTHY},
	    {"auth off: enable it", true, false, true, false, EO_ETCD_OK, NULL, true,
	     EO_PLAN_ENABLE_AUTH, NULL, EO_REASON_QUORUM_HEALTHY},
	    {"auth on, the password works: latch", true, false, true, true, EO_ETCD_OK, NULL, true,
	     EO_PLAN_WRITE_STATUS, EO_PLAN_REASON_AUTH_ENABLED, EO_REASON_QUORUM_HEALTHY},
	    {"latched and steady: nothing", true, true, false, false, EO_ETCD_OK, NULL, false,
	     EO_PLAN_NONE, NULL, NULL},
	    {"the Secret missing: stop, Degraded", true, false, true, false, EO_ETCD_OK,
	     EO_REASON_AUTH_SECRET_NOT_FOUND, true, EO_PLAN_NONE, EO_REASON_AUTH_SECRET_NOT_FOUND,
	     EO_REASON_AUTH_SECRET_NOT_FOUND},
	    {"the password rejected: stop, Degraded", true, true, true, true, EO_ETCD_AUTH, NULL,
	     true, EO_PLAN_NONE, EO_REASON_AUTH_CREDENTIALS_REJECTED,
	     EO_REASON_AUTH_CREDENTIALS_REJECTED},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pwc_world w;

		pwc_auth_world(&w, rows[i].with_auth, rows[i].latched);
		if (rows[i].queried) {
			pwc_world_etcd(&w, EO_ETCD_OK, "demo-aaaaa", 0x248adce0359142baULL, 1);
			w.in.auth_status_err = EO_ETCD_OK;
			w.in.auth_on = rows[i].auth_on;
			w.in.auth_login_err = rows[i].login_err;
			w.in.auth_login_message = "etcdserver: authentication failed";
		}
		if (rows[i].latched && rows[i].login_err != EO_ETCD_OK)
			w.in.auth_unverified = true;
		w.in.auth_reason = rows[i].creds;
		w.in.auth_message = rows[i].creds != NULL ? "the Secret's problem" : NULL;
		pwst_call(rows[i].what, &w.in, false, auth_step, auth_after, &rows[i],
			  (struct pwst_want){rows[i].decided, rows[i].action, NULL, 0, NULL});
		pwc_world_free(&w);
	}
}

TU_MAIN(test_verdicts, test_messages, test_auth_enable_and_latch, test_auth_required_not_configured,
	test_auth_problems, test_auth_step)
