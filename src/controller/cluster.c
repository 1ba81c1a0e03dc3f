/*
 * controller/cluster.c - the cluster reconciler (eo_cluster_reconcile, controller.h): observe
 * (controller/observe.c), then plan (plan/plan.h) and, while the plan needs more observed
 * (plan/needs.h: etcd, its leader, a member re-read live), observe that and plan again; carry
 * out the one action (controller/act_etcd.c, act_kube.c, netpol.c, retain.c), write the
 * status. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/cluster_metrics.h"
#include "controller/internal.h"
#include "plan/needs.h"

/*
 * The action failed. When the apiserver refused its write, tell it: a Warning Event on the
 * cluster (rate-limited by the recorder), and the status planned again with the refusal
 * (Degraded=True/CreateFailed, ...) so that readyMembers and the conditions are still written.
 */
static void cluster_refused(struct eo_controller *c, struct eo_pass *pass, struct eo_plan_input *in,
			    json_t *cluster)
{
	struct eo_plan_failure f;
	struct eo_plan_result pr = {0};
	char msg[EO_PLAN_FAILURE_MSG_MAX];

	if (!eo__ctl_take_refusal(pass, &f))
		return;
	eo_plan_failure_message(&f, msg, sizeof(msg));
	eo__ctl_emit(c, cluster, "Warning", eo_plan_failure_reason(&f), msg);
	in->failure = &f;
	if (eo_plan_cluster(in, &pr) == 0 && pr.status != NULL && pr.status_changed &&
	    eo_controller_write_status(c, pass->lc,
				       eo_kube_res_at(RES_CLUSTERS, eo_cluster_namespace(cluster),
						      eo_cluster_name(cluster)),
				       cluster, pr.status) == 0)
		eo_log_kv(EO_LOG_INFO, pass->lc, "cluster status changed", "message", msg, NULL);
	in->failure = NULL;
	eo_plan_result_clear(&pr);
}

/* What one pass of the cluster reconciler observes, plans and acts with. */
struct cluster_pass {
	struct eo_log_ctx lc;
	struct eo_pass pass;
	struct eo_plan_input in;
	struct eo_plan_result pr;
	struct observed_members om;
	struct eo_etcd_members list;
	struct eo_etcd_status statuses[EO_PLAN_MAX_ENDPOINTS];
	char status_from[EO_PLAN_MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	const char *status_from_p[EO_PLAN_MAX_ENDPOINTS];
	size_t n_statuses;
	struct eo_tls_material tls;
	struct eo_tlsload_problem tp;
	struct eo_certs_seen certs;
	struct eo_auth_creds creds;
	struct eo_tlsload_problem ap;
	char login_msg[EO_ETCD_MSG_MAX];
	char answered[EO_ETCD_URL_MAX], leader_why[EO_PLAN_MSG_MAX / 2];
	json_t *raw, *cluster, *hh, *hc, *pdb, *np;
	json_t *sc;   /* EO_PLAN_NEED_CLASS: the StorageClass read live, or NULL */
	long requeue; /* what the action asked for */
	bool np_failed;
};

static void cluster_pass_clear(struct cluster_pass *x)
{
	eo_tls_material_clear(&x->tls);
	eo_auth_creds_clear(&x->creds);
	eo_etcd_members_clear(&x->list);
	for (size_t i = 0; i < EO_PLAN_MAX_ENDPOINTS; i++)
		eo_etcd_status_clear(&x->statuses[i]);
	eo_plan_result_clear(&x->pr);
	eo_certs_seen_clear(&x->certs);
	eo__ctl_observed_members_free(&x->om);
	json_decref(x->pdb);
	json_decref(x->np);
	json_decref(x->sc);
	json_decref(x->hh);
	json_decref(x->hc);
	json_decref(x->cluster);
	json_decref(x->raw);
}

/* The cert-manager Certificates, the TLS material and the root password. 0, or -1. */
static int observe_credentials(struct eo_controller *c, struct cluster_pass *x)
{
	const json_t *cluster = x->cluster;

	if (eo_cluster_uses_cert_manager(cluster) && !eo_cluster_is_deleting(cluster)) {
		if (eo_certs_observe(c, &x->lc, cluster, &x->certs) != 0)
			return -1;
	}
	if (!eo_cluster_is_deleting(cluster) && !eo__ctl_certs_pending(cluster, &x->certs) &&
	    eo__ctl_load_tls(c, &x->pass, cluster, &x->tls, &x->tp) < 0)
		return -1;
	if (!eo_cluster_is_deleting(cluster) &&
	    eo__ctl_load_auth(c, &x->pass, cluster, &x->creds, &x->ap) < 0)
		return -1;
	if (x->tp.reason == NULL && x->creds.password != NULL)
		eo__ctl_check_auth_client_cert(&x->pass, cluster, &x->tls, &x->tp);
	return 0;
}

/* The objects under the cluster's own names, whoever holds them, and the NetworkPolicies. */
static void observe_owned(struct eo_controller *c, struct cluster_pass *x, const char *ns,
			  const char *name)
{
	char client[EO_NAME_MAX], headless[EO_NAME_MAX];

	if (eo_cluster_headless_service(x->cluster, headless, sizeof(headless)) == 0)
		x->hh = eo__ctl_observe_service(c, x->cluster, headless);
	if (eo_name_client_service(client, sizeof(client), name) == 0)
		x->hc = eo__ctl_observe_service(c, x->cluster, client);
	/* Whoever holds them: the plan stops with ForeignObject on one that is not ours. */
	x->pdb = eo_cache_set_get(&c->pdbs, ns, name);
	if (c->netpol != NULL && eo_desired_network_policy_enabled(x->cluster, c->netpol))
		x->np = eo_cache_set_get(&c->netpols, ns, name);
	if (eo__ctl_sync_network_policies(c, &x->lc, x->cluster) != 0)
		x->np_failed = true;
}

/* The plan's input from what the pass observed. */
static void plan_input(struct eo_controller *c, struct cluster_pass *x)
{
	const json_t *cluster = x->cluster;

	x->in = (struct eo_plan_input){
	    .cluster = cluster,
	    .members = x->om.v,
	    .n_members = x->om.n,
	    .nodes = x->om.nodes,
	    .headless_svc = x->hh,
	    .client_svc = x->hc,
	    .pdb = x->pdb,
	    .netpol = x->np,
	    .build = &c->build,
	    .tls_reason = x->tp.reason,
	    .tls_message = x->tp.message,
	    .auth_reason = x->ap.reason,
	    .auth_message = x->ap.message,
	    .auth_unverified = x->creds.password != NULL &&
			       !eo_authload_verified(eo_cluster_uid(cluster), x->creds.password),
	    .ca_bundle_digest =
		x->pass.tls != NULL && x->tls.ca_bundle_digest[0] ? x->tls.ca_bundle_digest : NULL,
	    .now = eo__ctl_now_of(c)};
	if (eo_cluster_uses_cert_manager(cluster) && !eo_cluster_is_deleting(cluster))
		x->in.certs = &x->certs.plan;
}

/*
 * What the pass observes before it plans: the cluster and its members, deletionPolicy Retain
 * (which may end the pass), the credentials and the owned objects. 0 go on to plan, 1 the
 * pass is over (out set), -1 failure.
 */
static int observe(struct eo_controller *c, struct cluster_pass *x, const char *ns,
		   const char *name, struct eo_reconcile_out *out)
{
	int rc;

	x->raw = eo_cache_set_get(&c->clusters, ns, name);
	if (x->raw == NULL)
		return 1; /* deleted: owner references take the children */
	x->cluster = eo_controller_typed_copy(x->raw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
	if (x->cluster == NULL || eo__ctl_observe_members(c, x->cluster, &x->om) != 0)
		return -1;
	rc = eo__ctl_act_retain(c, &x->pass, x->cluster, &x->om, &out->requeue_ms);
	if (rc != 0)
		return rc;
	if (observe_credentials(c, x) != 0)
		return -1;
	observe_owned(c, x, ns, name);
	plan_input(c, x);
	return 0;
}

/* EO_PLAN_NEED_ETCD: the live reads the plan asked for, then etcd. 0, or -1. */
static int observe_etcd(struct eo_controller *c, struct cluster_pass *x)
{
	const struct eo_plan_result *pr = &x->pr;
	struct eo_plan_input *in = &x->in;

	if (pr->want_live && eo__ctl_read_members_live(c, &x->lc, &x->om) != 0)
		return -1;
	if (pr->want_nodes && eo__ctl_read_nodes_live(c, &x->lc, &x->om) != 0)
		return -1;
	in->nodes_live = pr->want_nodes;
	in->etcd_queried = true;
	eo__ctl_query_members(c, &x->pass, pr, &x->list, &in->etcd_err, x->statuses, x->status_from,
			      &x->n_statuses, in, x->login_msg, sizeof(x->login_msg), x->answered,
			      sizeof(x->answered));
	in->etcd = in->etcd_err == EO_ETCD_OK ? &x->list : NULL;
	in->statuses = x->statuses;
	in->n_statuses = x->n_statuses;
	for (size_t i = 0; i < x->n_statuses; i++)
		x->status_from_p[i] = x->status_from[i];
	in->live_checked = pr->want_live;
	in->status_from = pr->want_live ? x->status_from_p : NULL;
	return 0;
}

/* EO_PLAN_NEED_LEADER: etcd's member list confirmed with the leader (or why not). */
static void observe_leader(struct eo_controller *c, struct cluster_pass *x)
{
	struct eo_plan_input *in = &x->in;

	in->etcd_leader_checked = true;
	in->etcd_from_leader =
	    eo__ctl_confirm_leader(c, &x->pass, x->cluster, x->om.v, x->om.n, x->answered, &x->list,
				   x->leader_why, sizeof(x->leader_why));
	in->etcd_leader_why = x->leader_why;
	eo_log_kv(in->etcd_from_leader ? EO_LOG_DEBUG : EO_LOG_WARN, &x->lc,
		  in->etcd_from_leader ? "member list confirmed with the leader"
				       : "member list not confirmed by the leader",
		  "message", x->pr.message, "check", x->leader_why, NULL);
}

/*
 * EO_PLAN_NEED_CONFIRM: the member to remove and what it owns re-read live. 1 the cache
 * lagged (the member's entry now holds the live objects), 0 it did not, -1 failure.
 */
static int observe_removed(struct eo_controller *c, struct cluster_pass *x)
{
	struct eo_plan_member *pm = NULL;
	int changed;

	for (size_t i = 0; i < x->om.n && pm == NULL; i++)
		if (x->om.v[i].member == x->pr.member)
			pm = &x->om.v[i];
	if (pm == NULL)
		return 0;
	changed = eo__ctl_confirm_live(c, &x->lc, &x->om, pm);
	if (changed > 0)
		eo_log_kv(EO_LOG_INFO, &x->lc,
			  "the cache lags behind the apiserver; planning again", "member",
			  eo_member_name(pm->member), "message", x->pr.message, NULL);
	return changed;
}

/*
 * EO_PLAN_NEED_CLASS: the StorageClass of a PVC to grow, read live (cluster-scoped; the chart
 * grants get). A failed read is logged and planned on as not read: the storage step waits.
 */
static void observe_class(struct eo_controller *c, struct cluster_pass *x)
{
	json_decref(x->sc);
	x->sc = NULL;
	if (eo__ctl_get_live(c, &x->lc,
			     eo_kube_res_at(RES_STORAGECLASSES, NULL, x->pr.storage_class),
			     &x->sc) != 0)
		x->sc = NULL;
	x->in.class_read = true;
	x->in.storage_class = x->sc;
}

/*
 * Plans, and while the plan needs more observed (plan/needs.h), observes it and plans again;
 * each need at most once, a member to remove re-read up to EO_PLAN_CONFIRM_MAX times. 0 act on
 * x->pr, 1 the pass is over (out set: the objects keep changing), -1 failure.
 */
static int plan(struct eo_controller *c, struct cluster_pass *x, struct eo_reconcile_out *out)
{
	enum eo_plan_need need = EO_PLAN_NEED_NONE;
	int confirms = 0, changed;

	for (;;) {
		if (eo_plan_cluster(&x->in, &x->pr) != 0)
			return -1;
		need = eo_plan_cluster_needs(&x->pr, &x->in, need);
		if (need == EO_PLAN_NEED_NONE)
			return 0;
		if (need == EO_PLAN_NEED_ETCD && observe_etcd(c, x) != 0)
			return -1;
		if (need == EO_PLAN_NEED_LEADER)
			observe_leader(c, x);
		if (need == EO_PLAN_NEED_CLASS)
			observe_class(c, x);
		if (need == EO_PLAN_NEED_CONFIRM) {
			if ((changed = observe_removed(c, x)) <= 0)
				return changed;
			if (++confirms == EO_PLAN_CONFIRM_MAX) {
				out->requeue_ms = CONFLICT_REQUEUE_MS;
				return 1;
			}
		}
		eo_plan_result_clear(&x->pr);
	}
}

/* EO_PLAN_SET_VOTER: the member's status.isVoter, then its Pod's voter label. */
static int act_set_voter(struct eo_controller *c, struct cluster_pass *x)
{
	int rc =
	    eo__ctl_patch_member(c, &x->pass, x->pr.member,
				 json_pack("{s:{s:b}}", "status", "isVoter", x->pr.voter), true);

	if (rc == 0)
		eo__ctl_label_member_pod(c, &x->pass, &x->pr, x->pr.voter);
	return rc;
}

/* EO_PLAN_ENSURE_CERTIFICATES: cert-manager's Certificates, a refused write recorded. */
static int act_certificates(struct eo_controller *c, struct cluster_pass *x)
{
	struct eo_certs_refusal cr;
	int rc = eo_certs_ensure(c, &x->lc, x->cluster, &x->certs, &cr);

	if (rc != 0 && cr.set)
		eo__ctl_note_refusal(&x->pass, cr.create ? EO_PLAN_VERB_CREATE : EO_PLAN_VERB_PATCH,
				     "Certificate", cr.name, EO_KUBE_EHTTP, &cr.err);
	return rc;
}

/* Carries out x->pr's action. 0 done (or nothing to do), non-zero failure. */
static int act(struct eo_controller *c, struct cluster_pass *x)
{
	struct eo_plan_result *pr = &x->pr;
	struct eo_pass *pass = &x->pass;
	json_t *cluster = x->cluster;

	switch (pr->action) {
	case EO_PLAN_ENSURE_SERVICES:
		return eo__ctl_act_services(c, pass, cluster);
	case EO_PLAN_CREATE_SEED:
	case EO_PLAN_CREATE_MEMBER:
		return eo__ctl_act_create_named(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_COMPLETE_SEED:
		return eo__ctl_act_complete_seed(c, pass, pr);
	case EO_PLAN_ADD_LEARNER:
		return eo__ctl_act_add_learner(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_SET_INITIAL_CLUSTER:
		return eo__ctl_act_set_initial_cluster(c, pass, pr);
	case EO_PLAN_PROMOTE_LEARNER:
		return eo__ctl_act_promote(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_REMOVE_MEMBER:
		return eo__ctl_act_remove_member(c, pass, cluster, pr);
	case EO_PLAN_REMOVE_STRAY:
		return eo__ctl_act_remove_stray(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_SET_VOTER:
		return act_set_voter(c, x);
	case EO_PLAN_ENSURE_PDB:
	case EO_PLAN_DELETE_PDB:
		return eo__ctl_act_pdb(c, pass, cluster, pr);
	case EO_PLAN_SET_DORMANT:
	case EO_PLAN_WAKE_DORMANT:
		return eo__ctl_act_dormant(c, pass, cluster, pr);
	case EO_PLAN_UPDATE_MEMBER:
		return eo__ctl_act_patch_member(c, pass, cluster, pr,
						"member spec brought to the target");
	case EO_PLAN_RESTART_MEMBER:
		return eo__ctl_act_restart_member(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_MOVE_LEADER:
		return eo__ctl_act_move_leader(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_MARK_MEMBER:
		return eo__ctl_act_patch_member(c, pass, cluster, pr,
						"member force-new-cluster step updated");
	case EO_PLAN_ENABLE_AUTH:
		return eo__ctl_act_enable_auth(c, pass, cluster, pr, &x->requeue);
	case EO_PLAN_ENSURE_CERTIFICATES:
		return act_certificates(c, x);
	default:
		return 0;
	}
}

/*
 * After the action: the planned status written (and told), or the action logged; the pass's
 * requeue. 0, 1 the status write conflicted (out set), -1 failure.
 */
static int report(struct eo_controller *c, struct cluster_pass *x, const char *ns, const char *name,
		  struct eo_reconcile_out *out)
{
	const struct eo_plan_result *pr = &x->pr;
	int rc;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(c, &x->lc, eo_kube_res_at(RES_CLUSTERS, ns, name),
						x->cluster, pr->status);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			return 1;
		}
		eo_log_kv(EO_LOG_INFO, &x->lc, "cluster status changed", "message", pr->message,
			  NULL);
		eo__ctl_emit(c, x->cluster, pr->event_type, pr->event_reason, pr->message);
	} else if (pr->action != EO_PLAN_NONE && pr->action != EO_PLAN_WAIT) {
		eo_log_kv(EO_LOG_INFO, &x->lc, "cluster action done", "message", pr->message, NULL);
	} else {
		eo_log_kv(EO_LOG_DEBUG, &x->lc, "cluster reconciled", "message", pr->message, NULL);
	}
	out->requeue_ms = x->requeue > 0 ? x->requeue : pr->requeue_ms;
	/* A refused NetworkPolicy write comes back like any failed write, with backoff. */
	if (x->np_failed && out->requeue_ms == 0)
		out->error = true;
	return 0;
}

/*
 * The action of the plan carried out. 0 go on to report, 1 the pass is over (out set),
 * -1 failure (a refused write told: cluster_refused).
 */
static int act_and_check(struct eo_controller *c, struct cluster_pass *x,
			 struct eo_reconcile_out *out)
{
	int rc;

	eo_log_ctx_add(&x->lc, "action", eo_plan_action_name(x->pr.action));
	if (x->pr.action == EO_PLAN_CLEAR_FORCE_REQUEST) {
		rc = eo__ctl_act_clear_force_request(c, &x->pass, x->cluster, &x->pr);
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			return 1;
		}
	} else {
		rc = act(c, x);
	}
	if (rc != 0) {
		cluster_refused(c, &x->pass, &x->in, x->cluster);
		return -1;
	}
	return 0;
}

/* The per-cluster gauges from what the pass saw (controller/cluster_metrics.h). */
static void record_metrics(struct eo_controller *c, struct cluster_pass *x, const char *ns,
			   const char *name)
{
	struct eo_ctl_cluster_obs o = {
	    .cluster = x->cluster,
	    .planned_status = x->pr.status,
	    .members = x->om.v,
	    .n_members = x->om.n,
	    .etcd = x->in.etcd,
	    .tls_loaded = x->pass.tls != NULL,
	    .cert_not_after = x->tls.not_after,
	    .now = eo__ctl_now_of(c),
	};

	if (c->metrics == NULL)
		return;
	if (x->raw == NULL)
		eo_cluster_metrics_forget(c->metrics, ns, name);
	else if (x->cluster != NULL)
		eo_ctl_cluster_metrics(c, &o);
}

void eo_cluster_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out)
{
	struct cluster_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.pass.lc = &x.lc;
	eo_log_ctx_init(&x.lc);
	eo_log_ctx_cluster(&x.lc, ns, name);
	rc = observe(c, &x, ns, name, out);
	if (rc == 0)
		rc = plan(c, &x, out);
	if (rc == 0)
		rc = act_and_check(c, &x, out);
	if (rc == 0)
		rc = report(c, &x, ns, name, out);
	if (rc < 0)
		out->error = true;
	record_metrics(c, &x, ns, name);
	cluster_pass_clear(&x);
}
