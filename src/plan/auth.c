/*
 * plan/auth.c - etcd authentication decisions (pure). See plan/auth.h.
 */
#include "plan/auth.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/conditions.h"

const char *eo_plan_auth_verdict_name(enum eo_plan_auth_verdict v)
{
	switch (v) {
	case EO_PLAN_AUTH_NONE:
		return "none";
	case EO_PLAN_AUTH_QUERY:
		return "query";
	case EO_PLAN_AUTH_ENABLE:
		return "enable";
	case EO_PLAN_AUTH_LATCH:
		return "latch";
	case EO_PLAN_AUTH_PROBLEM:
		return "problem";
	}
	return "none";
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
