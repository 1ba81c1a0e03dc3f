/*
 * controller/cluster.c - the cluster reconciler (eo_cluster_reconcile, controller.h): observe
 * (controller/observe.c), plan (plan/plan.h), plan again with what the plan asked to be read,
 * carry out the one action (controller/act_etcd.c, act_kube.c, netpol.c, retain.c), write the
 * status. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"

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

void eo_cluster_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out)
{
	struct eo_plan_result pr = {0};
	struct eo_plan_input in = {0};
	struct observed_members om = {0};
	struct eo_etcd_members list = {0};
	struct eo_etcd_status statuses[EO_PLAN_MAX_ENDPOINTS] = {0};
	char status_from[EO_PLAN_MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	const char *status_from_p[EO_PLAN_MAX_ENDPOINTS];
	size_t n_statuses = 0;
	struct eo_tls_material tls = {0};
	struct eo_tlsload_problem tp = {0};
	struct eo_certs_seen certs = {0};
	struct eo_auth_creds creds = {0};
	struct eo_tlsload_problem ap = {0};
	char login_msg[EO_ETCD_MSG_MAX] = "";
	char answered[EO_ETCD_URL_MAX] = "", leader_why[EO_PLAN_MSG_MAX / 2] = "";
	struct eo_log_ctx lc;
	struct eo_pass pass = {.lc = &lc};
	json_t *raw = NULL, *cluster = NULL, *hh = NULL, *hc = NULL, *pdb = NULL, *np = NULL;
	char client[EO_NAME_MAX], headless[EO_NAME_MAX];
	long requeue = 0;
	bool np_failed = false;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	eo_log_ctx_init(&lc);
	eo_log_ctx_cluster(&lc, ns, name);
	raw = eo_cache_set_get(&c->clusters, ns, name);
	if (raw == NULL)
		goto out; /* deleted: owner references take the children */
	cluster = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
	if (cluster == NULL || eo__ctl_observe_members(c, cluster, &om) != 0)
		goto fail;
	rc = eo__ctl_act_retain(c, &pass, cluster, &om, &out->requeue_ms);
	if (rc < 0)
		goto fail;
	if (rc > 0)
		goto out;
	if (eo_cluster_uses_cert_manager(cluster) && !eo_cluster_is_deleting(cluster)) {
		if (eo_certs_observe(c, &lc, cluster, &certs) != 0)
			goto fail;
	}
	if (!eo_cluster_is_deleting(cluster) && !eo__ctl_certs_pending(cluster, &certs) &&
	    (rc = eo__ctl_load_tls(c, &pass, cluster, &tls, &tp)) < 0)
		goto fail;
	if (!eo_cluster_is_deleting(cluster) &&
	    eo__ctl_load_auth(c, &pass, cluster, &creds, &ap) < 0)
		goto fail;
	if (tp.reason == NULL && creds.password != NULL)
		eo__ctl_check_auth_client_cert(&pass, cluster, &tls, &tp);
	rc = 0;
	if (eo_cluster_headless_service(cluster, headless, sizeof(headless)) == 0)
		hh = eo__ctl_observe_service(c, cluster, headless);
	if (eo_name_client_service(client, sizeof(client), name) == 0)
		hc = eo__ctl_observe_service(c, cluster, client);
	/* Whoever holds them: the plan stops with ForeignObject on one that is not ours. */
	pdb = eo_cache_set_get(&c->pdbs, ns, name);
	if (c->netpol != NULL && eo_desired_network_policy_enabled(cluster, c->netpol))
		np = eo_cache_set_get(&c->netpols, ns, name);
	if (eo__ctl_sync_network_policies(c, &lc, cluster) != 0)
		np_failed = true;
	in = (struct eo_plan_input){
	    .cluster = cluster,
	    .members = om.v,
	    .n_members = om.n,
	    .nodes = om.nodes,
	    .headless_svc = hh,
	    .client_svc = hc,
	    .pdb = pdb,
	    .netpol = np,
	    .build = &c->build,
	    .tls_reason = tp.reason,
	    .tls_message = tp.message,
	    .auth_reason = ap.reason,
	    .auth_message = ap.message,
	    .auth_unverified = creds.password != NULL &&
			       !eo_authload_verified(eo_cluster_uid(cluster), creds.password),
	    .ca_bundle_digest =
		pass.tls != NULL && tls.ca_bundle_digest[0] ? tls.ca_bundle_digest : NULL,
	    .now = eo__ctl_now_of(c)};
	if (eo_cluster_uses_cert_manager(cluster) && !eo_cluster_is_deleting(cluster))
		in.certs = &certs.plan;
	if (eo_plan_cluster(&in, &pr) != 0)
		goto fail;
	if (pr.action == EO_PLAN_QUERY_MEMBERS) {
		if (pr.want_live && eo__ctl_read_members_live(c, &lc, &om) != 0)
			goto fail;
		if (pr.want_nodes && eo__ctl_read_nodes_live(c, &lc, &om) != 0)
			goto fail;
		in.nodes_live = pr.want_nodes;
		in.etcd_queried = true;
		eo__ctl_query_members(c, &pass, &pr, &list, &in.etcd_err, statuses, status_from,
				      &n_statuses, &in, login_msg, sizeof(login_msg), answered,
				      sizeof(answered));
		in.etcd = in.etcd_err == EO_ETCD_OK ? &list : NULL;
		in.statuses = statuses;
		in.n_statuses = n_statuses;
		for (size_t i = 0; i < n_statuses; i++)
			status_from_p[i] = status_from[i];
		in.live_checked = pr.want_live;
		in.status_from = pr.want_live ? status_from_p : NULL;
		eo_plan_result_clear(&pr);
		if (eo_plan_cluster(&in, &pr) != 0)
			goto fail;
	}
	/* A step is about to act on a member's absence: only on the leader's own list. */
	if (pr.action == EO_PLAN_QUERY_MEMBERS && pr.want_leader && in.etcd != NULL &&
	    !in.etcd_leader_checked) {
		in.etcd_leader_checked = true;
		in.etcd_from_leader = eo__ctl_confirm_leader(
		    c, &pass, cluster, om.v, om.n, answered, &list, leader_why, sizeof(leader_why));
		in.etcd_leader_why = leader_why;
		eo_log_kv(in.etcd_from_leader ? EO_LOG_DEBUG : EO_LOG_WARN, &lc,
			  in.etcd_from_leader ? "member list confirmed with the leader"
					      : "member list not confirmed by the leader",
			  "message", pr.message, "check", leader_why, NULL);
		eo_plan_result_clear(&pr);
		if (eo_plan_cluster(&in, &pr) != 0)
			goto fail;
	}
	/* A member is removed only on what the apiserver says now, not on the cache alone. */
	for (int tries = 0; pr.action == EO_PLAN_REMOVE_MEMBER; tries++) {
		struct eo_plan_member *pm = NULL;
		int changed;

		for (size_t i = 0; i < om.n && pm == NULL; i++)
			if (om.v[i].member == pr.member)
				pm = &om.v[i];
		if (pm == NULL || (changed = eo__ctl_confirm_live(c, &lc, &om, pm)) == 0)
			break;
		if (changed < 0)
			goto fail;
		eo_log_kv(EO_LOG_INFO, &lc, "the cache lags behind the apiserver; planning again",
			  "member", eo_member_name(pm->member), "message", pr.message, NULL);
		eo_plan_result_clear(&pr);
		if (tries == 2) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			goto out;
		}
		if (eo_plan_cluster(&in, &pr) != 0)
			goto fail;
	}
	eo_log_ctx_add(&lc, "action", eo_plan_action_name(pr.action));

	switch (pr.action) {
	case EO_PLAN_ENSURE_SERVICES:
		rc = eo__ctl_act_services(c, &pass, cluster);
		break;
	case EO_PLAN_CREATE_SEED:
	case EO_PLAN_CREATE_MEMBER:
		rc = eo__ctl_act_create_named(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_COMPLETE_SEED:
		rc = eo__ctl_act_complete_seed(c, &pass, &pr);
		break;
	case EO_PLAN_ADD_LEARNER:
		rc = eo__ctl_act_add_learner(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_SET_INITIAL_CLUSTER:
		rc = eo__ctl_act_set_initial_cluster(c, &pass, &pr);
		break;
	case EO_PLAN_PROMOTE_LEARNER:
		rc = eo__ctl_act_promote(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_REMOVE_MEMBER:
		rc = eo__ctl_act_remove_member(c, &pass, cluster, &pr);
		break;
	case EO_PLAN_REMOVE_STRAY:
		rc = eo__ctl_act_remove_stray(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_SET_VOTER:
		rc = eo__ctl_patch_member(c, &pass, pr.member,
					  json_pack("{s:{s:b}}", "status", "isVoter", pr.voter),
					  true);
		if (rc == 0)
			eo__ctl_label_member_pod(c, &pass, &pr, pr.voter);
		break;
	case EO_PLAN_ENSURE_PDB:
	case EO_PLAN_DELETE_PDB:
		rc = eo__ctl_act_pdb(c, &pass, cluster, &pr);
		break;
	case EO_PLAN_SET_DORMANT:
	case EO_PLAN_WAKE_DORMANT:
		rc = eo__ctl_act_dormant(c, &pass, cluster, &pr);
		break;
	case EO_PLAN_UPDATE_MEMBER:
		rc = eo__ctl_act_update_member(c, &pass, cluster, &pr);
		break;
	case EO_PLAN_RESTART_MEMBER:
		rc = eo__ctl_act_restart_member(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_MOVE_LEADER:
		rc = eo__ctl_act_move_leader(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_MARK_MEMBER:
		rc = eo__ctl_act_mark_member(c, &pass, cluster, &pr);
		break;
	case EO_PLAN_CLEAR_FORCE_REQUEST:
		rc = eo__ctl_act_clear_force_request(c, &pass, cluster, &pr);
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			goto out;
		}
		break;
	case EO_PLAN_ENABLE_AUTH:
		rc = eo__ctl_act_enable_auth(c, &pass, cluster, &pr, &requeue);
		break;
	case EO_PLAN_ENSURE_CERTIFICATES: {
		struct eo_certs_refusal cr;

		rc = eo_certs_ensure(c, &lc, cluster, &certs, &cr);
		if (rc != 0 && cr.set)
			eo__ctl_note_refusal(&pass,
					     cr.create ? EO_PLAN_VERB_CREATE : EO_PLAN_VERB_PATCH,
					     "Certificate", cr.name, EO_KUBE_EHTTP, &cr.err);
		break;
	}
	default:
		break;
	}
	if (rc != 0) {
		cluster_refused(c, &pass, &in, cluster);
		goto fail;
	}
	if (pr.status != NULL && pr.status_changed) {
		rc = eo_controller_write_status(c, &lc, eo_kube_res_at(RES_CLUSTERS, ns, name),
						cluster, pr.status);
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			goto out;
		}
		eo_log_kv(EO_LOG_INFO, &lc, "cluster status changed", "message", pr.message, NULL);
		eo__ctl_emit(c, cluster, pr.event_type, pr.event_reason, pr.message);
	} else if (pr.action != EO_PLAN_NONE && pr.action != EO_PLAN_WAIT) {
		eo_log_kv(EO_LOG_INFO, &lc, "cluster action done", "message", pr.message, NULL);
	} else {
		eo_log_kv(EO_LOG_DEBUG, &lc, "cluster reconciled", "message", pr.message, NULL);
	}
	out->requeue_ms = requeue > 0 ? requeue : pr.requeue_ms;
	/* A refused NetworkPolicy write comes back like any failed write, with backoff. */
	if (np_failed && out->requeue_ms == 0)
		out->error = true;
	goto out;
fail:
	out->error = true;
out:
	eo_tls_material_clear(&tls);
	eo_auth_creds_clear(&creds);
	eo_etcd_members_clear(&list);
	for (size_t i = 0; i < EO_PLAN_MAX_ENDPOINTS; i++)
		eo_etcd_status_clear(&statuses[i]);
	eo_plan_result_clear(&pr);
	eo_certs_seen_clear(&certs);
	eo__ctl_observed_members_free(&om);
	json_decref(pdb);
	json_decref(np);
	json_decref(hh);
	json_decref(hc);
	json_decref(cluster);
	json_decref(raw);
}
