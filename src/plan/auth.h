/*
 * plan/auth.h - what the cluster planner makes of etcd authentication (pure).
 *
 * spec.auth.enabled asks for etcd's own authentication with root as the only user, whose
 * password the user keeps in the Secret spec.auth.rootCredentialsSecretRef (key "password").
 * The controller reads that Secret on every pass (controller/authload.h) and, whenever it
 * queries etcd (EO_PLAN_QUERY_MEMBERS), also asks AuthStatus and, when auth is on and it holds
 * a password, whether that password authenticates. eo_plan_auth() turns that into one verdict:
 *
 *   PROBLEM  reason and message say what is wrong; the planner touches nothing else (no
 *            member created, removed or rolled): the credentials Secret is missing or lacks
 *            "password" (AuthSecretNotFound / AuthSecretInvalid), etcd refuses the password
 *            (AuthCredentialsRejected), or etcd has auth on while the spec has no spec.auth
 *            (AuthRequiredNotConfigured: a restored snapshot taken with auth on)
 *   QUERY    auth is wanted, not latched, and the cluster is healthy; or latched with a
 *            password not seen accepted yet; or the status tells a problem only etcd can
 *            clear: ask etcd first
 *   ENABLE   etcd has auth off and the cluster is healthy: create root (user and role), grant,
 *            enable (EO_PLAN_ENABLE_AUTH)
 *   LATCH    etcd has auth on and the password works, status.authEnabled is not set yet:
 *            set it (also for a restored snapshot: nothing is provisioned again)
 *   NONE     nothing to do about auth: plan as usual
 *
 * Nothing here ever disables auth or clears status.authEnabled.
 */
#ifndef EO_PLAN_AUTH_H
#define EO_PLAN_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "etcd/types.h"

/* Not in the seeds: the root credentials Secret is missing / unusable. */
#define EO_REASON_AUTH_SECRET_NOT_FOUND "AuthSecretNotFound"
#define EO_REASON_AUTH_SECRET_INVALID	"AuthSecretInvalid"
/* Event reason when the operator turned authentication on, or found it on and latched it. */
#define EO_PLAN_REASON_AUTH_ENABLED "AuthEnabled"

enum eo_plan_auth_verdict {
	EO_PLAN_AUTH_NONE = 0,
	EO_PLAN_AUTH_QUERY,
	EO_PLAN_AUTH_ENABLE,
	EO_PLAN_AUTH_LATCH,
	EO_PLAN_AUTH_PROBLEM,
};

struct eo_plan_auth_input {
	bool spec_enabled;	   /* spec.auth.enabled */
	bool latched;		   /* status.authEnabled */
	const char *ns;		   /* the cluster's namespace, for messages */
	const char *secret;	   /* spec.auth.rootCredentialsSecretRef.name, NULL when unset */
	const char *creds_reason;  /* the Secret's problem (EO_REASON_AUTH_SECRET_*), NULL: fine */
	const char *creds_message; /* its message */
	bool healthy;		   /* formed, every member ready, the target reached */
	bool flagged;		   /* the status tells AuthRequiredNotConfigured or
				    * AuthCredentialsRejected: look again (QUERY) */
	bool unverified;	   /* latched, but this password was not seen accepted (a
				    * changed Secret, an operator restart): look again */
	bool queried;		   /* etcd was asked in this pass: the fields below hold */
	eo_etcd_err status_err;	   /* AuthStatus: EO_ETCD_OK when auth_on is valid */
	bool auth_on;
	eo_etcd_err login_err;	   /* Authenticate with the Secret's password; OK when it worked
				    * or was not tried */
	const char *login_message; /* etcd's message when it did not */
};

#define EO_PLAN_AUTH_MSG_MAX 768

struct eo_plan_auth_result {
	enum eo_plan_auth_verdict verdict;
	const char *reason; /* PROBLEM */
	char message[EO_PLAN_AUTH_MSG_MAX];
};

void eo_plan_auth(const struct eo_plan_auth_input *in, struct eo_plan_auth_result *out);

/* "none", "query", "enable", "latch", "problem"; never NULL. */
const char *eo_plan_auth_verdict_name(enum eo_plan_auth_verdict v);

#endif
