/*
 * plan/auth.c - etcd authentication decisions (pure). See plan/auth.h.
 */
#include "plan/auth.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "core/util.h"
#include "plan/internal.h"

static const char *const names[] = {
    [EO_PLAN_AUTH_NONE] = "none",	[EO_PLAN_AUTH_QUERY] = "query",
    [EO_PLAN_AUTH_ENABLE] = "enable",	[EO_PLAN_AUTH_LATCH] = "latch",
    [EO_PLAN_AUTH_PROBLEM] = "problem",
};

const char *eo_plan_auth_verdict_name(enum eo_plan_auth_verdict v)
{
	return EO_ENUM_NAME(names, v, "none");
}

static void say(struct eo_plan_auth_result *out, enum eo_plan_auth_verdict v, const char *reason,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(struct eo_plan_auth_result *out, enum eo_plan_auth_verdict v, const char *reason,
		const char *fmt, ...)
{
	va_list ap;

	out->verdict = v;
	out->reason = reason;
	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
}

static const char *or_empty(const char *s)
{
	return s != NULL ? s : "";
}

void eo_plan_auth(const struct eo_plan_auth_input *in, struct eo_plan_auth_result *out)
{
	memset(out, 0, sizeof(*out));
	if (!in->queried && in->flagged && (in->creds_reason == NULL || !in->spec_enabled)) {
		say(out, EO_PLAN_AUTH_QUERY, NULL, "asking etcd again about authentication");
		return;
	}
	if (!in->spec_enabled) {
		if (in->queried && in->status_err == EO_ETCD_OK && in->auth_on)
			say(out, EO_PLAN_AUTH_PROBLEM, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED,
			    "etcd has authentication turned on (the restored snapshot was taken "
			    "with auth on, or it was enabled by hand) but spec.auth is not set: "
			    "the "
			    "operator cannot manage this cluster. spec.auth is immutable: delete "
			    "and recreate the EtcdCluster with spec.auth.enabled=true and "
			    "spec.auth.rootCredentialsSecretRef naming a Secret whose password is "
			    "the root password in effect when the snapshot was taken");
		return;
	}
	if (in->creds_reason != NULL && in->creds_reason[0] != '\0') {
		say(out, EO_PLAN_AUTH_PROBLEM, in->creds_reason, "%s",
		    in->creds_message != NULL && in->creds_message[0] != '\0' ? in->creds_message
									      : in->creds_reason);
		return;
	}
	if (!in->queried) {
		if (!in->latched && in->healthy)
			say(out, EO_PLAN_AUTH_QUERY, NULL,
			    "asking etcd whether authentication is on");
		else if (in->latched && in->unverified)
			say(out, EO_PLAN_AUTH_QUERY, NULL,
			    "checking the root password of Secret %s/%s with etcd",
			    or_empty(in->ns), or_empty(in->secret));
		return;
	}
	if (in->status_err != EO_ETCD_OK)
		return; /* unknown: the member list's own error, if any, tells */
	if (in->auth_on) {
		if (in->login_err == EO_ETCD_AUTH) {
			say(out, EO_PLAN_AUTH_PROBLEM, EO_REASON_AUTH_CREDENTIALS_REJECTED,
			    "etcd refused the root password of Secret %s/%s (%s): put the root "
			    "password etcd has (for a restored snapshot: the one in effect when it "
			    "was taken) under the key \"password\"; nothing is changed meanwhile",
			    or_empty(in->ns), or_empty(in->secret),
			    in->login_message != NULL && in->login_message[0] != '\0'
				? in->login_message
				: "authentication failed");
			return;
		}
		if (in->login_err != EO_ETCD_OK || in->latched)
			return;
		say(out, EO_PLAN_AUTH_LATCH, NULL,
		    "etcd authentication is on and the root password of Secret %s/%s works",
		    or_empty(in->ns), or_empty(in->secret));
		return;
	}
	if (in->healthy)
		say(out, EO_PLAN_AUTH_ENABLE, NULL,
		    "%s etcd authentication: root user and role from Secret %s/%s",
		    in->latched ? "turning on again" : "turning on", or_empty(in->ns),
		    or_empty(in->secret));
}

/* --- spec.auth as a step of the cluster planner (plan/plan.h, plan/internal.h) --- */

/*
 * spec.auth and what etcd says about authentication (plan/auth.h). True when the verdict
 * decides this pass: a problem stops everything else (nothing is created, removed or rolled),
 * a query, the enabling or the latch is the one action.
 */
bool eo__plan_step_auth(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
			bool healthy)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_auth_input ai = {
	    .spec_enabled = eo_cluster_auth_enabled(in->cluster),
	    .latched = eo_cluster_auth_latched(in->cluster),
	    .ns = eo_cluster_namespace(in->cluster),
	    .secret = eo_cluster_auth_secret(in->cluster),
	    .creds_reason = in->auth_reason,
	    .creds_message = in->auth_message,
	    .unverified = in->auth_unverified,
	    .healthy = healthy,
	    .queried = in->etcd_queried,
	    .status_err = in->auth_status_err,
	    .auth_on = in->auth_on,
	    .login_err = in->auth_login_err,
	    .login_message = in->auth_login_message,
	};
	struct eo_plan_auth_result ar;
	const json_t *st = json_object_get(in->cluster, "status");
	const char *types[] = {EO_COND_DEGRADED, EO_COND_AVAILABLE};

	/* A problem only etcd can tell about is asked about again on every pass. */
	for (size_t i = 0; i < 2; i++) {
		const char *r = eo_condition_reason(st, types[i]);

		if (r != NULL && (strcmp(r, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED) == 0 ||
				  strcmp(r, EO_REASON_AUTH_CREDENTIALS_REJECTED) == 0))
			ai.flagged = true;
	}
	eo_plan_auth(&ai, &ar);
	switch (ar.verdict) {
	case EO_PLAN_AUTH_PROBLEM:
		eo__plan_msgf(x, "%s", ar.message);
		eo__plan_stop_tls(x, c, running, ar.reason);
		/* etcd refuses the operator outright: it cannot keep the cluster available. */
		if (running && strcmp(ar.reason, EO_REASON_AUTH_REQUIRED_NOT_CONFIGURED) == 0)
			eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, ar.reason, ar.message);
		return true;
	case EO_PLAN_AUTH_QUERY:
	case EO_PLAN_AUTH_ENABLE:
		eo__plan_voter_endpoints(x);
		if (x->out->n_endpoints == 0)
			return false;
		eo__plan_msgf(x, "%s", ar.message);
		x->out->action =
		    ar.verdict == EO_PLAN_AUTH_QUERY ? EO_PLAN_QUERY_MEMBERS : EO_PLAN_ENABLE_AUTH;
		x->out->requeue_ms = EO_PLAN_REQUEUE_PROMOTE_MS;
		eo__plan_health(x, c);
		return true;
	case EO_PLAN_AUTH_LATCH:
		eo__plan_msgf(x, "%s", ar.message);
		eo__plan_set_status(x, "authEnabled", json_true());
		eo__plan_event(x, "Normal", EO_PLAN_REASON_AUTH_ENABLED);
		x->out->action = EO_PLAN_WRITE_STATUS;
		if (running)
			eo__plan_health(x, c);
		return true;
	default:
		return false;
	}
}
