/*
 * controller/member.c - the member reconciler (eo_member_reconcile, controller.h): one
 * EtcdMember's Pod, PVC and status from its plan (plan/member.h), and its finalizer, which
 * takes it out of etcd through the other members (plan/removal.h) and lets go of a lost node's
 * volume. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"

/*
 * The finalizer's plan with what etcd says: the member list when asked for, confirmed with
 * the leader when the plan is about to act on the member's absence, or always (relist: after
 * a MemberRemove answered NOTFOUND). 0, or -1 on failure.
 */
static int plan_removal(struct eo_controller *c, struct eo_pass *pass, struct eo_rplan_input *in,
			struct eo_rplan_result *rr, const struct observed_members *om,
			struct eo_etcd_members *list, bool relist, char *why, size_t cap)
{
	char answered[EO_ETCD_URL_MAX] = "";

	if (eo_plan_member_removal(in, rr) != 0)
		return -1;
	if (rr->action != EO_RPLAN_QUERY_MEMBERS && !(relist && in->etcd_queried))
		return 0;
	eo_etcd_members_clear(list);
	in->etcd_queried = true;
	in->etcd_leader_checked = false;
	in->etcd_from_leader = false;
	eo__ctl_dial_remove(c, pass, rr, list, &in->etcd_err, true, answered);
	in->etcd = in->etcd_err == EO_ETCD_OK ? list : NULL;
	eo_plan_removal_clear(rr);
	if (eo_plan_member_removal(in, rr) != 0)
		return -1;
	if (in->etcd == NULL ||
	    !(relist || (rr->action == EO_RPLAN_QUERY_MEMBERS && rr->want_leader)))
		return 0;
	in->etcd_leader_checked = true;
	in->etcd_from_leader =
	    eo__ctl_confirm_leader(c, pass, in->cluster, om->v, om->n, answered, list, why, cap);
	in->etcd_leader_why = why;
	eo_log_kv(in->etcd_from_leader ? EO_LOG_DEBUG : EO_LOG_WARN, pass->lc,
		  in->etcd_from_leader ? "member list confirmed with the leader"
				       : "member list not confirmed by the leader",
		  "message", rr->message, "check", why, NULL);
	eo_plan_removal_clear(rr);
	return eo_plan_member_removal(in, rr);
}

/*
 * Once member is out of etcd: a Pod of it left on a lost node (plan/nodeloss.h: the Node
 * NotReady or gone, read live) is deleted with gracePeriodSeconds 0 (UID precondition): no
 * kubelet is there to confirm a graceful delete, and the Pod would stay Terminating and keep
 * its PVC in use. The PVC, bound to that node's disk, then goes by garbage collection with
 * the EtcdMember that owns it (the operator never deletes a PVC itself); it is never used
 * again, the replacement has a new name and a new PVC. A Pod on a live node goes the usual
 * way. 0, or -1 when a read or the delete failed (the finalizer stays, the pass comes back).
 */
static int release_lost_node(struct eo_controller *c, const struct eo_log_ctx *lc,
			     const json_t *member)
{
	const char *ns = eo_member_namespace(member), *mname = eo_member_name(member);
	struct eo_kube_delete_opts d = {.grace_period_seconds = 0};
	struct eo_kube_error err = {0};
	struct eo_kube_resource r;
	json_t *pod = NULL, *node = NULL;
	const char *nn = NULL;
	eo_kube_err e;
	int rc = -1;

	if (eo__ctl_get_live(c, lc, eo_kube_res_at(RES_PODS, ns, mname), &pod) != 0)
		goto out;
	if (pod == NULL || !eo_desired_is_controlled_by(pod, eo_member_uid(member)) ||
	    (nn = eo__ctl_pod_node_name(pod)) == NULL) {
		rc = 0;
		goto out;
	}
	if (eo__ctl_get_live(c, lc, eo_kube_res_at(RES_NODES, NULL, nn), &node) != 0)
		goto out;
	if (!eo_plan_node_lost(node, node == NULL)) {
		rc = 0;
		goto out;
	}
	d.uid = eo_kube_obj_uid(pod);
	r = eo_kube_res_at(RES_PODS, ns, mname);
	e = eo_kube_delete(c->kc, &r, &d, &err);
	if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND && e != EO_KUBE_ECONFLICT) {
		eo_log_kv(EO_LOG_WARN, lc, "force-deleting the Pod on a lost node failed", "member",
			  mname, "node", nn, "error", eo_kube_strerror(e), "detail", err.message,
			  NULL);
		goto out;
	}
	eo_log_kv(EO_LOG_INFO, lc, "Pod on a lost node force-deleted (member out of etcd)",
		  "member", mname, "node", nn, NULL);
	rc = 0;
out:
	json_decref(pod);
	json_decref(node);
	return rc;
}

/*
 * The finalizer of a member being deleted, as eo_plan_member_removal() decides: MemberRemove
 * through the other members, then the finalizer goes; or the finalizer stays (status and a
 * Warning Event say why) and the pass comes back. 0 done, 1 come back in *requeue, -1 failure.
 */
static int finalize_member(struct eo_controller *c, struct eo_pass *pass, json_t *member,
			   const json_t *cluster, long *requeue)
{
	const char *ns = eo_member_namespace(member), *mname = eo_member_name(member);
	struct eo_rplan_input in = {
	    .member = member, .cluster = cluster, .build = &c->build, .now = eo__ctl_now_of(c)};
	struct eo_rplan_result rr = {0};
	struct observed_members om = {0};
	struct eo_etcd_members list = {0};
	char msg[EO_NAME_MAX + 64], why[EO_PLAN_MSG_MAX / 2] = "";
	eo_etcd_err e = EO_ETCD_OK;
	int rc = -1;

	if (cluster != NULL && eo__ctl_observe_members(c, cluster, &om) != 0)
		return -1;
	in.members = om.v;
	in.n_members = om.n;
	if (plan_removal(c, pass, &in, &rr, &om, &list, false, why, sizeof(why)) != 0)
		goto out;
	if (rr.action == EO_RPLAN_MEMBER_REMOVE &&
	    eo__ctl_dial_remove(c, pass, &rr, NULL, &e, false, NULL) != 0 &&
	    e == EO_ETCD_NOTFOUND) {
		/*
		 * NOTFOUND proves nothing by itself (the address may be another cluster's, the
		 * list a stale one): list again, confirm with the leader, and plan again; the
		 * finalizer goes only when the leader's list does not name the member.
		 */
		eo_log_kv(EO_LOG_WARN, pass->lc,
			  "MemberRemove answered NOTFOUND; listing again at the leader", "message",
			  rr.message, NULL);
		eo_plan_removal_clear(&rr);
		if (plan_removal(c, pass, &in, &rr, &om, &list, true, why, sizeof(why)) != 0)
			goto out;
		if (rr.action == EO_RPLAN_MEMBER_REMOVE) {
			eo_log_kv(EO_LOG_WARN, pass->lc,
				  "etcd still lists the member after NOTFOUND; retrying", "message",
				  rr.message, NULL);
			*requeue = EO_PLAN_REQUEUE_SHORT_MS;
			rc = 1;
			goto out;
		}
	} else if (rr.action == EO_RPLAN_MEMBER_REMOVE && e != EO_ETCD_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "removing the member from etcd failed", "error",
			  eo_etcd_strerror(e), NULL);
		*requeue = EO_PLAN_REQUEUE_SHORT_MS;
		rc = 1;
		goto out;
	}
	switch (rr.action) {
	case EO_RPLAN_MEMBER_REMOVE:
		eo_log_kv(EO_LOG_INFO, pass->lc, "member removed from etcd", "message", rr.message,
			  NULL);
		snprintf(msg, sizeof(msg), "removed member %s from etcd", mname);
		eo__ctl_emit(c, member, "Normal", "MemberRemoved", msg);
		if (cluster != NULL)
			eo__ctl_emit(c, cluster, "Normal", "MemberRemoved", msg);
		/* the finalizer goes */
		/* fall through */
	case EO_RPLAN_DROP_FINALIZER:
		/* Out of etcd (removed now, or not in the leader's list): free a lost node. */
		if ((rr.action == EO_RPLAN_MEMBER_REMOVE ||
		     (in.etcd_leader_checked && in.etcd_from_leader)) &&
		    release_lost_node(c, pass->lc, member) != 0) {
			*requeue = EO_PLAN_REQUEUE_SHORT_MS;
			rc = 1;
			break;
		}
		rc = eo__ctl_patch_finalizers(c, pass, member, false);
		if (rc > 0)
			*requeue = CONFLICT_REQUEUE_MS;
		else if (rc == 0)
			eo_log_kv(EO_LOG_INFO, pass->lc, "finalizer dropped", "message", rr.message,
				  NULL);
		break;
	case EO_RPLAN_WAIT:
		eo_log_kv(EO_LOG_WARN, pass->lc, "member removal blocked; finalizer kept",
			  "message", rr.message, NULL);
		if (rr.status != NULL && rr.status_changed &&
		    eo_controller_write_status(c, pass->lc, eo_kube_res_at(RES_MEMBERS, ns, mname),
					       member, rr.status) < 0)
			goto out;
		eo__ctl_emit(c, member, rr.event_type, rr.event_reason, rr.message);
		*requeue = rr.requeue_ms;
		rc = 1;
		break;
	default:
		break;
	}
out:
	eo_etcd_members_clear(&list);
	eo_plan_removal_clear(&rr);
	eo__ctl_observed_members_free(&om);
	return rc;
}

/*
 * As cluster_refused(), for the member controller: the Warning Event on the EtcdMember and on
 * its EtcdCluster (where users look), and Ready=False/CreateFailed, ... on the member, which
 * the cluster's conditions then quote (plan/podissue.h).
 */
static void member_refused(struct eo_controller *c, struct eo_pass *pass, struct eo_mplan_input *in,
			   json_t *member, const json_t *cluster)
{
	struct eo_plan_failure f;
	struct eo_mplan_result pr = {0};
	char msg[EO_PLAN_FAILURE_MSG_MAX];

	if (!eo__ctl_take_refusal(pass, &f))
		return;
	eo_plan_failure_message(&f, msg, sizeof(msg));
	eo__ctl_emit(c, member, "Warning", eo_plan_failure_reason(&f), msg);
	if (cluster != NULL)
		eo__ctl_emit(c, cluster, "Warning", eo_plan_failure_reason(&f), msg);
	in->failure = &f;
	if (eo_member_plan(in, &pr) == 0 && pr.status != NULL && pr.status_changed &&
	    eo_controller_write_status(
		c, pass->lc,
		eo_kube_res_at(RES_MEMBERS, eo_member_namespace(member), eo_member_name(member)),
		member, pr.status) == 0)
		eo_log_kv(EO_LOG_INFO, pass->lc, "member status changed", "message", msg, NULL);
	in->failure = NULL;
	eo_member_plan_clear(&pr);
}

void eo_member_reconcile(struct eo_controller *c, const char *ns, const char *name,
			 struct eo_reconcile_out *out)
{
	struct eo_mplan_result pr = {0};
	struct eo_mplan_input in = {0};
	struct eo_etcd_members list = {0};
	struct eo_etcd_status est = {0};
	struct eo_kube_error err = {0};
	struct eo_tls_material tls = {0};
	struct eo_tlsload_problem tp = {0};
	struct eo_auth_creds creds = {0};
	struct eo_tlsload_problem ap = {0};
	struct eo_log_ctx lc;
	struct eo_pass pass = {.lc = &lc};
	json_t *raw = NULL, *member = NULL, *craw = NULL, *cluster = NULL, *pod = NULL, *pvc = NULL;
	json_t *volume = NULL;
	char pvc_name[EO_NAME_MAX];
	eo_kube_err e;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	eo_log_ctx_init(&lc);
	raw = eo_cache_set_get(&c->members, ns, name);
	if (raw == NULL)
		goto out;
	member = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_MEMBER);
	if (member == NULL)
		goto fail;
	eo_log_ctx_cluster(&lc, ns, eo_member_cluster_name(member));
	eo_log_ctx_add(&lc, "member", name);
	craw = eo_cache_set_get(&c->clusters, ns, eo_member_cluster_name(member));
	if (craw != NULL && (cluster = eo_controller_typed_copy(craw, EO_API_GROUP_VERSION,
								EO_KIND_CLUSTER)) == NULL)
		goto fail;
	pod = eo_cache_set_get(&c->pods, ns, name);
	if (eo_name_member_pvc(pvc_name, sizeof(pvc_name), name) == 0)
		pvc = eo_cache_set_get(&c->pvcs, ns, pvc_name);
	in = (struct eo_mplan_input){.member = member,
				     .cluster = cluster,
				     .pod = pod,
				     .pvc = pvc,
				     .build = &c->build,
				     .now = eo__ctl_now_of(c)};
	if (eo_member_plan(&in, &pr) != 0)
		goto fail;
	/* etcd is reached only with the cluster's TLS material, read now. */
	if ((pr.action == EO_MPLAN_QUERY_ETCD || pr.action == EO_MPLAN_REMOVE_MEMBER) &&
	    cluster != NULL && !eo_cluster_is_deleting(cluster) &&
	    (eo__ctl_load_tls(c, &pass, cluster, &tls, &tp) < 0 ||
	     eo__ctl_load_auth(c, &pass, cluster, &creds, &ap) < 0))
		goto fail;
	if (pr.action == EO_MPLAN_QUERY_ETCD) {
		const char *ep = pr.endpoint;
		bool unusable = tp.reason != NULL;
		eo_etcd_client *ec = unusable ? NULL : eo__ctl_etcd_dial(c, &pass, &ep, 1);

		in.etcd_queried = true;
		in.list_err = ec	 ? eo_etcd_member_list(ec, &list, NULL)
			      : unusable ? EO_ETCD_TRANSPORT
					 : EO_ETCD_INVALID;
		in.status_err = ec	   ? eo_etcd_status(ec, ep, &est, NULL)
				: unusable ? EO_ETCD_TRANSPORT
					   : EO_ETCD_INVALID;
		in.list = in.list_err == EO_ETCD_OK ? &list : NULL;
		in.status = in.status_err == EO_ETCD_OK ? &est : NULL;
		eo_etcd_client_free(ec);
		eo_member_plan_clear(&pr);
		if (eo_member_plan(&in, &pr) != 0)
			goto fail;
	}
	if (pr.action == EO_MPLAN_CREATE_PVC ||
	    (pr.action == EO_MPLAN_WAIT && eo_plan_data_volume_lost(member, pvc))) {
		/* Never a PVC created, nor a volume called lost, on the cache alone. */
		json_t *live = NULL;

		if (eo__ctl_get_live(c, &lc, eo_kube_res_at(RES_PVCS, ns, pvc_name), &live) != 0)
			goto fail;
		if (eo_plan_observed_differs(pvc, live)) {
			eo_log_kv(EO_LOG_INFO, &lc,
				  "the PVC cache lags behind the apiserver; planning again", "pvc",
				  pvc_name, NULL);
			json_decref(pvc);
			pvc = live;
			in.pvc = pvc;
			eo_member_plan_clear(&pr);
			if (eo_member_plan(&in, &pr) != 0)
				goto fail;
		} else {
			json_decref(live);
		}
	}
	if (pr.action == EO_MPLAN_READ_VOLUME) {
		/* A restore source PVC is mounted only after a live read (plan/volref.h). */
		if (eo__ctl_get_live(c, &lc, eo_kube_res_at(RES_PVCS, ns, pr.volume), &volume) != 0)
			goto fail;
		in.volume_read = true;
		in.volume = volume;
		eo_member_plan_clear(&pr);
		if (eo_member_plan(&in, &pr) != 0 || pr.action == EO_MPLAN_READ_VOLUME)
			goto fail;
	}
	if (pr.action == EO_MPLAN_PATCH_POD && !eo_member_is_voter(member)) {
		/*
		 * Never the voter label taken off on the cache alone: the cluster controller
		 * labels the Pod right after it marks the member a voter, and the Pod's event
		 * may come in before the member's. Rare (a voter is unmarked only when etcd
		 * lost it), so the read costs nothing on the usual path.
		 */
		json_t *live = NULL;

		if (eo__ctl_get_live(c, &lc, eo_kube_res_at(RES_MEMBERS, ns, name), &live) != 0)
			goto fail;
		if (live != NULL && eo_member_is_voter(live)) {
			eo_log_kv(
			    EO_LOG_INFO, &lc,
			    "the member cache lags behind the apiserver (voter mark); planning "
			    "again",
			    NULL);
			json_decref(member);
			member =
			    eo_controller_typed_copy(live, EO_API_GROUP_VERSION, EO_KIND_MEMBER);
			json_decref(live);
			if (member == NULL)
				goto fail;
			in.member = member;
			eo_member_plan_clear(&pr);
			if (eo_member_plan(&in, &pr) != 0)
				goto fail;
			if (pr.action == EO_MPLAN_QUERY_ETCD) {
				/* Nothing to undo; the next pass asks etcd with a fresh cache. */
				out->requeue_ms = CONFLICT_REQUEUE_MS;
				goto out;
			}
		} else {
			json_decref(live);
		}
	}
	eo_log_ctx_add(&lc, "action", eo_mplan_action_name(pr.action));

	switch (pr.action) {
	case EO_MPLAN_ADD_FINALIZER:
	case EO_MPLAN_DROP_FINALIZER:
		rc =
		    eo__ctl_patch_finalizers(c, &pass, member, pr.action == EO_MPLAN_ADD_FINALIZER);
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			goto out;
		}
		if (rc == 0)
			eo_log_kv(EO_LOG_INFO, &lc,
				  pr.action == EO_MPLAN_ADD_FINALIZER ? "finalizer added"
								      : "finalizer dropped",
				  "message", pr.message, NULL);
		break;
	case EO_MPLAN_REMOVE_MEMBER:
		rc = finalize_member(c, &pass, member, cluster, &out->requeue_ms);
		if (rc > 0)
			goto out;
		break;
	case EO_MPLAN_CREATE_PVC:
		rc = eo__ctl_create_owned(c, &pass, member, eo_kube_res_at(RES_PVCS, ns, NULL),
					  pr.object, "PVC");
		break;
	case EO_MPLAN_CREATE_POD:
		rc = eo__ctl_create_owned(c, &pass, member, eo_kube_res_at(RES_PODS, ns, NULL),
					  pr.object, "Pod");
		break;
	case EO_MPLAN_DELETE_POD: {
		struct eo_kube_resource r = eo_kube_res_at(RES_PODS, ns, name);
		struct eo_kube_delete_opts d = {.uid = eo_kube_obj_uid(pod),
						.grace_period_seconds = -1};

		e = eo_kube_delete(c->kc, &r, &d, &err);
		rc = e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT ? 0 : -1;
		eo__ctl_note_refusal(&pass, EO_PLAN_VERB_DELETE, "Pod", name, e, &err);
		eo_log_kv(rc ? EO_LOG_WARN : EO_LOG_INFO, &lc, "pod deleted", "message", pr.message,
			  "result", eo_kube_strerror(e), NULL);
		break;
	}
	case EO_MPLAN_PATCH_POD: {
		struct eo_kube_resource r = eo_kube_res_at(RES_PODS, ns, name);

		e = eo_kube_patch(c->kc, &r, pr.object, NULL, &err);
		rc = e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND ? 0 : -1;
		eo__ctl_note_refusal(&pass, EO_PLAN_VERB_PATCH, "Pod", name, e, &err);
		eo_log_kv(rc ? EO_LOG_WARN : EO_LOG_INFO, &lc, "pod labels synced", "message",
			  pr.message, "result", eo_kube_strerror(e), NULL);
		break;
	}
	default:
		break;
	}
	if (rc < 0) {
		member_refused(c, &pass, &in, member, cluster);
		goto fail;
	}
	if (pr.status != NULL && pr.status_changed) {
		rc = eo_controller_write_status(c, &lc, eo_kube_res_at(RES_MEMBERS, ns, name),
						member, pr.status);
		if (rc < 0)
			goto fail;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			goto out;
		}
		eo_log_kv(
		    pr.event_type != NULL && strcmp(pr.event_type, "Warning") == 0 ? EO_LOG_WARN
										   : EO_LOG_INFO,
		    &lc, "member status changed", "reason",
		    pr.event_reason != NULL ? pr.event_reason : "", "message", pr.message, NULL);
		eo__ctl_emit(c, member, pr.event_type, pr.event_reason, pr.message);
		/* A refused restore source is told where users look, too. */
		if (cluster != NULL && in.volume_read && pr.event_type != NULL &&
		    strcmp(pr.event_type, "Warning") == 0)
			eo__ctl_emit(c, cluster, pr.event_type, pr.event_reason, pr.message);
	}
	out->requeue_ms = pr.requeue_ms;
	goto out;
fail:
	out->error = true;
out:
	eo_tls_material_clear(&tls);
	eo_auth_creds_clear(&creds);
	eo_etcd_members_clear(&list);
	eo_etcd_status_clear(&est);
	eo_member_plan_clear(&pr);
	json_decref(raw);
	json_decref(member);
	json_decref(craw);
	json_decref(cluster);
	json_decref(pod);
	json_decref(pvc);
	json_decref(volume);
}
