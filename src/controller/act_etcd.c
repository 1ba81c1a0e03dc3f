/*
 * controller/act_etcd.c - the actions carried out through etcd: dialling the members a plan
 * names (with the pass's TLS material and root password), adding a learner, promoting it,
 * removing a stray member, moving the leadership, enabling auth, and removing a member from
 * the member finalizer. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "plan/etcd_outcome.h"

#define ETCD_TIMEOUT_MS 5000L

static long etcd_timeout(const struct eo_controller *c)
{
	return c->etcd_timeout_ms > 0 ? c->etcd_timeout_ms : ETCD_TIMEOUT_MS;
}

eo_etcd_client *eo__ctl_etcd_dial(const struct eo_controller *c, const struct eo_pass *pass,
				  const char *const *endpoints, size_t n)
{
	struct eo_controller_routes routes;
	struct eo_etcd_config cfg = {.endpoints = endpoints,
				     .n_endpoints = n,
				     .timeout_ms = etcd_timeout(c),
				     .connect_to = c->etcd_connect_to,
				     .routes = routes.ptr};
	const struct eo_tls_material *tls = pass->tls;
	eo_etcd_client *ec = NULL;

	eo_controller_routes(c, endpoints, n, &routes);
	cfg.n_routes = routes.n;

	if (tls != NULL && tls->client_tls) {
		/* In memory only (libcurl's *_BLOB options): no key file on disk. */
		cfg.ca_pem = tls->ca;
		cfg.ca_pem_len = tls->ca_len;
		if (tls->cert != NULL && tls->key != NULL) {
			cfg.cert_pem = tls->cert;
			cfg.cert_pem_len = tls->cert_len;
			cfg.key_pem = tls->key;
			cfg.key_pem_len = tls->key_len;
		}
	}

	/* The client authenticates by itself when etcd asks for a token (etcd/client.h). */
	if (pass->auth != NULL && pass->auth->password != NULL)
		cfg.password = pass->auth->password;
	if (eo_etcd_client_new(&cfg, &ec, NULL) != EO_ETCD_OK)
		return NULL;
	return ec;
}

eo_etcd_client *eo__ctl_etcd_dial_urls(const struct eo_controller *c, const struct eo_pass *pass,
				       const char (*urls)[EO_DESIRED_URL_MAX], size_t n)
{
	const char *eps[EO_PLAN_MAX_ENDPOINTS];

	if (n > EO_PLAN_MAX_ENDPOINTS)
		n = EO_PLAN_MAX_ENDPOINTS;
	for (size_t i = 0; i < n; i++)
		eps[i] = urls[i];
	return eo__ctl_etcd_dial(c, pass, eps, n);
}

static eo_etcd_client *dial_plan(const struct eo_controller *c, const struct eo_pass *pass,
				 const struct eo_plan_result *pr)
{
	if (pr->n_endpoints == 0)
		return NULL;
	return eo__ctl_etcd_dial_urls(c, pass, pr->endpoints, pr->n_endpoints);
}

int eo__ctl_act_add_learner(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    const struct eo_plan_result *pr, long *requeue)
{
	const char *mname = eo_member_name(pr->member);
	const char *peer = pr->peer_url;
	struct eo_etcd_member added = {0};
	struct eo_etcd_members list = {0};
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = dial_plan(c, pass, pr);
	char *ic = NULL, msg[EO_NAME_MAX + 96], id[24];
	eo_etcd_err e = EO_ETCD_INVALID;
	struct eo_plan_etcd_outcome o;
	int rc = -1;

	if (ec != NULL)
		e = eo_fenced_member_add(&c->fence, ec, &peer, 1, true, &added, &list, &d);
	o = eo_plan_etcd_outcome(EO_PLAN_ADD_LEARNER, e);
	if (o.verdict == EO_PLAN_ETCD_RETRY) {
		/* already added (an earlier attempt), or not now: the next pass knows */
		eo_log_kv(EO_LOG_DEBUG, pass->lc, "adding learner deferred", "member", mname,
			  "reason", eo_etcd_strerror(e), "detail", d.message, NULL);
		*requeue = o.retry_ms;
		rc = 0;
		goto out;
	}
	if (o.verdict != EO_PLAN_ETCD_DONE)
		goto out;
	eo_plan_format_id(added.id, id, sizeof(id));
	snprintf(msg, sizeof(msg), "added member %s to etcd as learner %s", mname, id);
	eo_log_kv(EO_LOG_INFO, pass->lc, "added member as learner", "member", mname, "member_id",
		  id, NULL);
	eo__ctl_emit(c, cluster, "Normal", "LearnerAdded", msg);
	rc = 0;
	/* Its initial cluster right away; if that fails, SET_INITIAL_CLUSTER does it later. */
	ic = malloc(EO_PLAN_INITIAL_CLUSTER_MAX);
	if (ic != NULL &&
	    eo_plan_initial_cluster(&list, mname, peer, ic, EO_PLAN_INITIAL_CLUSTER_MAX) == 0 &&
	    eo__ctl_patch_member(c, pass, pr->member,
				 json_pack("{s:{s:s}}", "spec", "initialCluster", ic), false) == 0)
		eo_log_kv(EO_LOG_INFO, pass->lc, "member initial cluster set", "member", mname,
			  "initial_cluster", ic, NULL);
	else
		*requeue = EO_PLAN_REQUEUE_PROMOTE_MS;
out:
	if (rc != 0)
		eo_log_kv(EO_LOG_WARN, pass->lc, "adding learner failed", "member", mname, "error",
			  eo_etcd_strerror(e), "detail", d.message, NULL);
	free(ic);
	eo_etcd_member_clear(&added);
	eo_etcd_members_clear(&list);
	eo_etcd_client_free(ec);
	return rc;
}

int eo__ctl_act_promote(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			const struct eo_plan_result *pr, long *requeue)
{
	const char *mname = eo_member_name(pr->member);
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = dial_plan(c, pass, pr);
	eo_etcd_err e = EO_ETCD_INVALID;
	struct eo_plan_etcd_outcome o;
	char msg[EO_NAME_MAX + 64], id[24];

	if (ec != NULL)
		e = eo_fenced_member_promote(&c->fence, ec, pr->etcd_id, NULL, &d);
	eo_etcd_client_free(ec);
	o = eo_plan_etcd_outcome(EO_PLAN_PROMOTE_LEARNER, e);
	if (o.verdict == EO_PLAN_ETCD_RETRY) {
		/* The runbook's signal for the benign "not in sync with leader" answer. */
		eo_log_kv(e == EO_ETCD_LEARNER_NOT_READY ? EO_LOG_INFO : EO_LOG_DEBUG, pass->lc,
			  e == EO_ETCD_LEARNER_NOT_READY ? "learner not yet promotable; will retry"
							 : "promotion deferred",
			  "member", mname, "reason", eo_etcd_strerror(e), NULL);
		*requeue = o.retry_ms;
		return 0;
	}
	if (o.verdict != EO_PLAN_ETCD_DONE) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "promoting learner failed", "member", mname,
			  "error", eo_etcd_strerror(e), "detail", d.message, NULL);
		return -1;
	}
	eo_plan_format_id(pr->etcd_id, id, sizeof(id));
	if (e == EO_ETCD_OK) {
		snprintf(msg, sizeof(msg), "promoted learner %s (%s) to a voting member", mname,
			 id);
		eo_log_kv(EO_LOG_INFO, pass->lc, "promoted learner", "member", mname, "member_id",
			  id, NULL);
		eo__ctl_emit(c, cluster, "Normal", "MemberPromoted", msg);
	}
	if (eo__ctl_patch_member(c, pass, pr->member,
				 json_pack("{s:{s:b}}", "status", "isVoter", 1), true) != 0)
		return -1;
	eo__ctl_label_member_pod(c, pass, pr, true);
	return 0;
}

int eo__ctl_act_remove_stray(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     const struct eo_plan_result *pr, long *requeue)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = dial_plan(c, pass, pr);
	eo_etcd_err e = EO_ETCD_INVALID;
	struct eo_plan_etcd_outcome o;

	if (ec != NULL)
		e = eo_fenced_member_remove(&c->fence, ec, pr->etcd_id, NULL, &d);
	eo_etcd_client_free(ec);
	o = eo_plan_etcd_outcome(EO_PLAN_REMOVE_STRAY, e);
	if (o.verdict == EO_PLAN_ETCD_DONE) {
		eo_log_kv(EO_LOG_INFO, pass->lc, "stray learner removed", "message", pr->message,
			  NULL);
		if (e == EO_ETCD_OK)
			eo__ctl_emit(c, cluster, "Normal", "MemberRemoved", pr->message);
		return 0;
	}
	if (o.verdict == EO_PLAN_ETCD_RETRY) {
		*requeue = o.retry_ms;
		return 0;
	}
	eo_log_kv(EO_LOG_WARN, pass->lc, "removing stray learner failed", "error",
		  eo_etcd_strerror(e), "detail", d.message, NULL);
	return -1;
}

int eo__ctl_act_move_leader(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    struct eo_plan_result *pr, long *requeue)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = dial_plan(c, pass, pr);
	eo_etcd_err e = EO_ETCD_INVALID;
	struct eo_plan_etcd_outcome o;

	if (ec != NULL)
		e = eo_etcd_move_leader(ec, pr->endpoints[0], pr->etcd_id, &d);
	eo_etcd_client_free(ec);
	o = eo_plan_etcd_outcome(EO_PLAN_MOVE_LEADER, e);
	*requeue = o.retry_ms;
	if (o.verdict == EO_PLAN_ETCD_DONE) {
		eo_log_kv(EO_LOG_INFO, pass->lc, "leadership moved", "message", pr->message, NULL);
		eo__ctl_emit_planned(c, cluster, pr);
		return 0;
	}
	eo_log_kv(EO_LOG_WARN, pass->lc, "moving leadership failed; retrying", "error",
		  eo_etcd_strerror(e), "detail", d.message, NULL);
	return 0;
}

/*
 * spec.auth: root user and role, the grant and AuthEnable, each step tolerant of a previous
 * run (etcd/client.h). The next pass asks AuthStatus and latches status.authEnabled.
 */
int eo__ctl_act_enable_auth(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    struct eo_plan_result *pr, long *requeue)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = NULL;
	eo_etcd_err e = EO_ETCD_INVALID;
	struct eo_plan_etcd_outcome o;

	if (pass->auth == NULL || pass->auth->password == NULL)
		return -1; /* the plan asks only with the password in hand */
	ec = dial_plan(c, pass, pr);
	if (ec != NULL)
		e = eo_etcd_auth_enable_root(ec, pass->auth->password, &d);
	eo_etcd_client_free(ec);
	o = eo_plan_etcd_outcome(EO_PLAN_ENABLE_AUTH, e);
	*requeue = o.retry_ms;
	if (o.verdict == EO_PLAN_ETCD_DONE) {
		eo_log_kv(EO_LOG_INFO, pass->lc, "etcd authentication turned on", "message",
			  pr->message, NULL);
		eo__ctl_emit(c, cluster, "Normal", EO_PLAN_REASON_AUTH_ENABLED,
			     "etcd authentication turned on: root user and role created");
		return 0;
	}
	eo_log_kv(EO_LOG_WARN, pass->lc, "turning etcd authentication on failed; retrying", "error",
		  eo_etcd_strerror(e), "detail", d.message, NULL);
	return 0;
}

/* query: the member list (answered: the endpoint that answered, cap EO_ETCD_URL_MAX). */
int eo__ctl_dial_remove(struct eo_controller *c, const struct eo_pass *pass,
			const struct eo_rplan_result *rr, struct eo_etcd_members *list,
			eo_etcd_err *e, bool query, char *answered)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = eo__ctl_etcd_dial_urls(c, pass, rr->endpoints, rr->n_endpoints);

	if (ec == NULL)
		*e = EO_ETCD_INVALID;
	else if (query)
		*e = eo_etcd_member_list(ec, list, &d);
	else
		*e = eo_fenced_member_remove(&c->fence, ec, rr->etcd_id, NULL, NULL);
	if (query)
		snprintf(answered, EO_ETCD_URL_MAX, "%s", *e == EO_ETCD_OK ? d.endpoint : "");
	eo_etcd_client_free(ec);
	return *e == EO_ETCD_OK ? 0 : -1;
}
