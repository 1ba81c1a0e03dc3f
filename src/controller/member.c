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
#include "plan/needs.h"

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
	d.uid = eo_meta_uid(pod);
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
 * The MemberRemove rr asks for, through the other members. NOTFOUND proves nothing by itself
 * (the address may be another cluster's, the list a stale one): then list again, confirm
 * with the leader, and plan again into rr; the finalizer goes only when the leader's list
 * does not name the member. 0 act on rr, 1 come back in *requeue, -1 failure.
 */
static int remove_from_etcd(struct eo_controller *c, struct eo_pass *pass,
			    struct eo_rplan_input *in, struct eo_rplan_result *rr,
			    const struct observed_members *om, struct eo_etcd_members *list,
			    char *why, size_t cap, long *requeue)
{
	eo_etcd_err e = EO_ETCD_OK;

	if (rr->action != EO_RPLAN_MEMBER_REMOVE ||
	    eo__ctl_dial_remove(c, pass, rr, NULL, &e, false, NULL) == 0)
		return 0;
	if (e != EO_ETCD_NOTFOUND) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "removing the member from etcd failed", "error",
			  eo_etcd_strerror(e), NULL);
		*requeue = EO_PLAN_REQUEUE_SHORT_MS;
		return 1;
	}
	eo_log_kv(EO_LOG_WARN, pass->lc,
		  "MemberRemove answered NOTFOUND; listing again at the leader", "message",
		  rr->message, NULL);
	eo_plan_removal_clear(rr);
	if (plan_removal(c, pass, in, rr, om, list, true, why, cap) != 0)
		return -1;
	if (rr->action != EO_RPLAN_MEMBER_REMOVE)
		return 0;
	eo_log_kv(EO_LOG_WARN, pass->lc, "etcd still lists the member after NOTFOUND; retrying",
		  "message", rr->message, NULL);
	*requeue = EO_PLAN_REQUEUE_SHORT_MS;
	return 1;
}

/*
 * The member is out of etcd (removed now, or not in the leader's list): a lost node's Pod
 * freed, then the finalizer dropped. 0 done, 1 come back in *requeue, -1 failure.
 */
static int drop_member_finalizer(struct eo_controller *c, struct eo_pass *pass, json_t *member,
				 const struct eo_rplan_input *in, const struct eo_rplan_result *rr,
				 long *requeue)
{
	int rc;

	if ((rr->action == EO_RPLAN_MEMBER_REMOVE ||
	     (in->etcd_leader_checked && in->etcd_from_leader)) &&
	    release_lost_node(c, pass->lc, member) != 0) {
		*requeue = EO_PLAN_REQUEUE_SHORT_MS;
		return 1;
	}
	rc = eo__ctl_patch_finalizers(c, pass, member, false);
	if (rc > 0)
		*requeue = CONFLICT_REQUEUE_MS;
	else if (rc == 0)
		eo_log_kv(EO_LOG_INFO, pass->lc, "finalizer dropped", "message", rr->message, NULL);
	return rc;
}

/* The removal is blocked: the finalizer stays, the status and an Event say why. 1, or -1. */
static int removal_blocked(struct eo_controller *c, struct eo_pass *pass, json_t *member,
			   const struct eo_rplan_result *rr, long *requeue)
{
	const char *ns = eo_member_namespace(member), *mname = eo_member_name(member);

	eo_log_kv(EO_LOG_WARN, pass->lc, "member removal blocked; finalizer kept", "message",
		  rr->message, NULL);
	if (rr->status != NULL && rr->status_changed &&
	    eo_controller_write_status(c, pass->lc, eo_kube_res_at(RES_MEMBERS, ns, mname), member,
				       rr->status) < 0)
		return -1;
	eo__ctl_emit(c, member, rr->event_type, rr->event_reason, rr->message);
	*requeue = rr->requeue_ms;
	return 1;
}

/*
 * The finalizer of a member being deleted, as eo_plan_member_removal() decides: MemberRemove
 * through the other members, then the finalizer goes; or the finalizer stays (status and a
 * Warning Event say why) and the pass comes back. 0 done, 1 come back in *requeue, -1 failure.
 */
static int finalize_member(struct eo_controller *c, struct eo_pass *pass, json_t *member,
			   const json_t *cluster, long *requeue)
{
	struct eo_rplan_input in = {
	    .member = member, .cluster = cluster, .build = &c->build, .now = eo__ctl_now_of(c)};
	struct eo_rplan_result rr = {0};
	struct observed_members om = {0};
	struct eo_etcd_members list = {0};
	char msg[EO_NAME_MAX + 64], why[EO_PLAN_MSG_MAX / 2] = "";
	int rc = -1;

	if (cluster != NULL && eo__ctl_observe_members(c, cluster, &om) != 0)
		return -1;
	in.members = om.v;
	in.n_members = om.n;
	if (plan_removal(c, pass, &in, &rr, &om, &list, false, why, sizeof(why)) != 0)
		goto out;
	rc = remove_from_etcd(c, pass, &in, &rr, &om, &list, why, sizeof(why), requeue);
	if (rc != 0)
		goto out;
	rc = -1;
	switch (rr.action) {
	case EO_RPLAN_MEMBER_REMOVE:
		eo_log_kv(EO_LOG_INFO, pass->lc, "member removed from etcd", "message", rr.message,
			  NULL);
		snprintf(msg, sizeof(msg), "removed member %s from etcd", eo_member_name(member));
		eo__ctl_emit(c, member, "Normal", "MemberRemoved", msg);
		if (cluster != NULL)
			eo__ctl_emit(c, cluster, "Normal", "MemberRemoved", msg);
		/* the finalizer goes */
		/* fall through */
	case EO_RPLAN_DROP_FINALIZER:
		rc = drop_member_finalizer(c, pass, member, &in, &rr, requeue);
		break;
	case EO_RPLAN_WAIT:
		rc = removal_blocked(c, pass, member, &rr, requeue);
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

/* What one pass of the member reconciler observes, plans and acts with. */
struct member_pass {
	struct eo_log_ctx lc;
	struct eo_pass pass;
	struct eo_mplan_input in;
	struct eo_mplan_result pr;
	struct eo_etcd_members list;
	struct eo_etcd_status est;
	struct eo_tls_material tls;
	struct eo_tlsload_problem tp;
	struct eo_auth_creds creds;
	struct eo_tlsload_problem ap;
	json_t *raw, *member, *craw, *cluster, *pod, *pvc, *volume, *storage_class;
	char pvc_name[EO_NAME_MAX];
};

static void member_pass_clear(struct member_pass *x)
{
	eo_tls_material_clear(&x->tls);
	eo_auth_creds_clear(&x->creds);
	eo_etcd_members_clear(&x->list);
	eo_etcd_status_clear(&x->est);
	eo_member_plan_clear(&x->pr);
	json_decref(x->raw);
	json_decref(x->member);
	json_decref(x->craw);
	json_decref(x->cluster);
	json_decref(x->pod);
	json_decref(x->pvc);
	json_decref(x->volume);
	json_decref(x->storage_class);
}

/*
 * The member, its cluster, Pod and PVC from the caches, and the plan's input. 0 go on to plan,
 * 1 the member is gone, -1 failure.
 */
static int observe(struct eo_controller *c, struct member_pass *x, const char *ns, const char *name)
{
	x->raw = eo_cache_set_get(&c->members, ns, name);
	if (x->raw == NULL)
		return 1;
	x->member = eo_controller_typed_copy(x->raw, EO_API_GROUP_VERSION, EO_KIND_MEMBER);
	if (x->member == NULL)
		return -1;
	eo_log_ctx_cluster(&x->lc, ns, eo_member_cluster_name(x->member));
	eo_log_ctx_add(&x->lc, "member", name);
	x->craw = eo_cache_set_get(&c->clusters, ns, eo_member_cluster_name(x->member));
	if (x->craw != NULL && (x->cluster = eo_controller_typed_copy(x->craw, EO_API_GROUP_VERSION,
								      EO_KIND_CLUSTER)) == NULL)
		return -1;
	x->pod = eo_cache_set_get(&c->pods, ns, name);
	if (eo_name_member_pvc(x->pvc_name, sizeof(x->pvc_name), name) == 0)
		x->pvc = eo_cache_set_get(&c->pvcs, ns, x->pvc_name);
	x->in = (struct eo_mplan_input){.member = x->member,
					.cluster = x->cluster,
					.pod = x->pod,
					.pvc = x->pvc,
					.build = &c->build,
					.now = eo__ctl_now_of(c)};
	return 0;
}

/* EO_MPLAN_NEED_ETCD: the member list and status through the member's endpoint. */
static void observe_etcd(struct eo_controller *c, struct member_pass *x)
{
	const char *ep = x->pr.endpoint;
	bool unusable = x->tp.reason != NULL;
	eo_etcd_client *ec = unusable ? NULL : eo__ctl_etcd_dial(c, &x->pass, &ep, 1);
	struct eo_mplan_input *in = &x->in;

	in->etcd_queried = true;
	in->list_err = ec	  ? eo_etcd_member_list(ec, &x->list, NULL)
		       : unusable ? EO_ETCD_TRANSPORT
				  : EO_ETCD_INVALID;
	in->status_err = ec	    ? eo_etcd_status(ec, ep, &x->est, NULL)
			 : unusable ? EO_ETCD_TRANSPORT
				    : EO_ETCD_INVALID;
	in->list = in->list_err == EO_ETCD_OK ? &x->list : NULL;
	in->status = in->status_err == EO_ETCD_OK ? &x->est : NULL;
	eo_etcd_client_free(ec);
}

/*
 * EO_MPLAN_NEED_PVC: never a PVC created, nor a volume called lost, on the cache alone. 1 the
 * cache lagged (the live PVC replaces it), 0 it did not, -1 failure.
 */
static int observe_pvc(struct eo_controller *c, struct member_pass *x, const char *ns)
{
	json_t *live = NULL;

	if (eo__ctl_get_live(c, &x->lc, eo_kube_res_at(RES_PVCS, ns, x->pvc_name), &live) != 0)
		return -1;
	if (!eo_plan_observed_differs(x->pvc, live)) {
		json_decref(live);
		return 0;
	}
	eo_log_kv(EO_LOG_INFO, &x->lc, "the PVC cache lags behind the apiserver; planning again",
		  "pvc", x->pvc_name, NULL);
	json_decref(x->pvc);
	x->pvc = live;
	x->in.pvc = x->pvc;
	return 1;
}

/*
 * EO_MPLAN_NEED_MEMBER: never the voter label taken off on the cache alone: the cluster
 * controller labels the Pod right after it marks the member a voter, and the Pod's event may
 * come in before the member's. Rare (a voter is unmarked only when etcd lost it), so the read
 * costs nothing on the usual path. 1 the cache lagged (the live member replaces it), 0 it did
 * not, -1 failure.
 */
static int observe_member(struct eo_controller *c, struct member_pass *x, const char *ns,
			  const char *name)
{
	json_t *live = NULL;

	if (eo__ctl_get_live(c, &x->lc, eo_kube_res_at(RES_MEMBERS, ns, name), &live) != 0)
		return -1;
	if (live == NULL || !eo_member_is_voter(live)) {
		json_decref(live);
		return 0;
	}
	eo_log_kv(EO_LOG_INFO, &x->lc,
		  "the member cache lags behind the apiserver (voter mark); planning again", NULL);
	json_decref(x->member);
	x->member = eo_controller_typed_copy(live, EO_API_GROUP_VERSION, EO_KIND_MEMBER);
	json_decref(live);
	if (x->member == NULL)
		return -1;
	x->in.member = x->member;
	return 1;
}

/* What need asks observed. 1 plan again, 0 not needed, -1 failure. */
static int observe_more(struct eo_controller *c, struct member_pass *x, enum eo_mplan_need need,
			const char *ns, const char *name)
{
	switch (need) {
	case EO_MPLAN_NEED_CREDENTIALS:
		/* etcd is reached only with the cluster's TLS material, read now. */
		return eo__ctl_load_tls(c, &x->pass, x->cluster, &x->tls, &x->tp) < 0 ||
			       eo__ctl_load_auth(c, &x->pass, x->cluster, &x->creds, &x->ap) < 0
			   ? -1
			   : 0;
	case EO_MPLAN_NEED_ETCD:
		observe_etcd(c, x);
		return 1;
	case EO_MPLAN_NEED_PVC:
		return observe_pvc(c, x, ns);
	case EO_MPLAN_NEED_CLASS:
		/*
		 * The class of an unbound PVC, read live (cluster-scoped; the chart grants get). A
		 * failed read is logged and planned on as no class: the Pod is created as before.
		 */
		if (eo__ctl_get_live(c, &x->lc,
				     eo_kube_res_at(RES_STORAGECLASSES, NULL, x->pr.storage_class),
				     &x->storage_class) != 0)
			x->storage_class = NULL;
		x->in.class_read = true;
		x->in.storage_class = x->storage_class;
		return 1;
	case EO_MPLAN_NEED_VOLUME:
		/* A restore source PVC is mounted only after a live read (plan/volref.h). */
		if (eo__ctl_get_live(c, &x->lc, eo_kube_res_at(RES_PVCS, ns, x->pr.volume),
				     &x->volume) != 0)
			return -1;
		x->in.volume_read = true;
		x->in.volume = x->volume;
		return 1;
	case EO_MPLAN_NEED_MEMBER:
		return observe_member(c, x, ns, name);
	default:
		return 0;
	}
}

/*
 * Plans, and while the plan needs more observed (plan/needs.h), observes it and plans again,
 * each need at most once. 0 act on x->pr, 1 the pass is over (out set), -1 failure.
 */
static int plan(struct eo_controller *c, struct member_pass *x, const char *ns, const char *name,
		struct eo_reconcile_out *out)
{
	enum eo_mplan_need need = EO_MPLAN_NEED_NONE;
	int rc;

	if (eo_member_plan(&x->in, &x->pr) != 0)
		return -1;
	while ((need = eo_member_plan_needs(&x->pr, &x->in, need)) != EO_MPLAN_NEED_NONE) {
		if ((rc = observe_more(c, x, need, ns, name)) <= 0) {
			if (rc < 0)
				return -1;
			continue;
		}
		eo_member_plan_clear(&x->pr);
		if (eo_member_plan(&x->in, &x->pr) != 0)
			return -1;
		if ((need == EO_MPLAN_NEED_VOLUME && x->pr.action == EO_MPLAN_READ_VOLUME) ||
		    (need == EO_MPLAN_NEED_CLASS && x->pr.action == EO_MPLAN_READ_CLASS))
			return -1;
		if (need == EO_MPLAN_NEED_MEMBER && x->pr.action == EO_MPLAN_QUERY_ETCD) {
			/* Nothing to undo; the next pass asks etcd with a fresh cache. */
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			return 1;
		}
	}
	return 0;
}

/* EO_MPLAN_DELETE_POD (with the Pod's UID as precondition) or EO_MPLAN_PATCH_POD. */
static int act_pod(struct eo_controller *c, struct member_pass *x, const char *ns, const char *name)
{
	struct eo_kube_resource r = eo_kube_res_at(RES_PODS, ns, name);
	struct eo_kube_error err = {0};
	eo_kube_err e;
	int rc;

	if (x->pr.action == EO_MPLAN_DELETE_POD) {
		struct eo_kube_delete_opts d = {.uid = eo_meta_uid(x->pod),
						.grace_period_seconds = -1};

		e = eo_kube_delete(c->kc, &r, &d, &err);
		rc = e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT ? 0 : -1;
		eo__ctl_note_refusal(&x->pass, EO_PLAN_VERB_DELETE, "Pod", name, e, &err);
		eo_log_kv(rc ? EO_LOG_WARN : EO_LOG_INFO, &x->lc, "pod deleted", "message",
			  x->pr.message, "result", eo_kube_strerror(e), NULL);
		return rc;
	}
	e = eo_kube_patch(c->kc, &r, x->pr.object, NULL, &err);
	rc = e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND ? 0 : -1;
	eo__ctl_note_refusal(&x->pass, EO_PLAN_VERB_PATCH, "Pod", name, e, &err);
	eo_log_kv(rc ? EO_LOG_WARN : EO_LOG_INFO, &x->lc, "pod labels synced", "message",
		  x->pr.message, "result", eo_kube_strerror(e), NULL);
	return rc;
}

/* EO_MPLAN_PATCH_PVC: the data PVC's request raised to the member's size (in-place growth). */
static int act_pvc(struct eo_controller *c, struct member_pass *x, const char *ns)
{
	struct eo_kube_resource r = eo_kube_res_at(RES_PVCS, ns, x->pvc_name);
	struct eo_kube_error err = {0};
	eo_kube_err e = eo_kube_patch(c->kc, &r, x->pr.object, NULL, &err);
	int rc = e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND ? 0 : -1;

	eo__ctl_note_refusal(&x->pass, EO_PLAN_VERB_PATCH, "PVC", x->pvc_name, e, &err);
	eo_log_kv(rc ? EO_LOG_WARN : EO_LOG_INFO, &x->lc, "pvc request raised", "message",
		  x->pr.message, "result", eo_kube_strerror(e), "detail", err.message, NULL);
	if (rc == 0 && e == EO_KUBE_OK)
		eo__ctl_emit(c, x->member, x->pr.event_type, x->pr.event_reason, x->pr.message);
	return rc;
}

/* EO_MPLAN_ADD_FINALIZER / DROP_FINALIZER. 0 done, 1 conflict (come back), -1 failure. */
static int act_finalizer(struct eo_controller *c, struct member_pass *x)
{
	bool add = x->pr.action == EO_MPLAN_ADD_FINALIZER;
	int rc = eo__ctl_patch_finalizers(c, &x->pass, x->member, add);

	if (rc == 0)
		eo_log_kv(EO_LOG_INFO, &x->lc, add ? "finalizer added" : "finalizer dropped",
			  "message", x->pr.message, NULL);
	return rc;
}

/*
 * Carries out x->pr's action. 0 go on to report, 1 the pass is over (out set), -1 failure (a
 * refused write told: member_refused).
 */
static int act(struct eo_controller *c, struct member_pass *x, const char *ns, const char *name,
	       struct eo_reconcile_out *out)
{
	int rc = 0;

	eo_log_ctx_add(&x->lc, "action", eo_mplan_action_name(x->pr.action));
	switch (x->pr.action) {
	case EO_MPLAN_ADD_FINALIZER:
	case EO_MPLAN_DROP_FINALIZER:
		rc = act_finalizer(c, x);
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			return 1;
		}
		break;
	case EO_MPLAN_REMOVE_MEMBER:
		rc = finalize_member(c, &x->pass, x->member, x->cluster, &out->requeue_ms);
		if (rc > 0)
			return 1;
		break;
	case EO_MPLAN_CREATE_PVC:
		rc = eo__ctl_create_owned(c, &x->pass, x->member,
					  eo_kube_res_at(RES_PVCS, ns, NULL), x->pr.object, "PVC");
		break;
	case EO_MPLAN_CREATE_POD:
		rc = eo__ctl_create_owned(c, &x->pass, x->member,
					  eo_kube_res_at(RES_PODS, ns, NULL), x->pr.object, "Pod");
		break;
	case EO_MPLAN_DELETE_POD:
	case EO_MPLAN_PATCH_POD:
		rc = act_pod(c, x, ns, name);
		break;
	case EO_MPLAN_PATCH_PVC:
		rc = act_pvc(c, x, ns);
		break;
	default:
		break;
	}
	if (rc < 0) {
		member_refused(c, &x->pass, &x->in, x->member, x->cluster);
		return -1;
	}
	return 0;
}

/*
 * After the action: the planned status written (and told); the pass's requeue. 0, 1 the
 * status write conflicted (out set), -1 failure.
 */
static int report(struct eo_controller *c, struct member_pass *x, const char *ns, const char *name,
		  struct eo_reconcile_out *out)
{
	const struct eo_mplan_result *pr = &x->pr;
	bool warning = pr->event_type != NULL && strcmp(pr->event_type, "Warning") == 0;
	int rc;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(c, &x->lc, eo_kube_res_at(RES_MEMBERS, ns, name),
						x->member, pr->status);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_REQUEUE_MS;
			return 1;
		}
		eo_log_kv(warning ? EO_LOG_WARN : EO_LOG_INFO, &x->lc, "member status changed",
			  "reason", pr->event_reason != NULL ? pr->event_reason : "", "message",
			  pr->message, NULL);
		eo__ctl_emit(c, x->member, pr->event_type, pr->event_reason, pr->message);
		/* A refused restore source is told where users look, too. */
		if (x->cluster != NULL && x->in.volume_read && warning)
			eo__ctl_emit(c, x->cluster, pr->event_type, pr->event_reason, pr->message);
	}
	out->requeue_ms = pr->requeue_ms;
	return 0;
}

void eo_member_reconcile(struct eo_controller *c, const char *ns, const char *name,
			 struct eo_reconcile_out *out)
{
	struct member_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	x.pass.lc = &x.lc;
	eo_log_ctx_init(&x.lc);
	rc = observe(c, &x, ns, name);
	if (rc == 0)
		rc = plan(c, &x, ns, name, out);
	if (rc == 0)
		rc = act(c, &x, ns, name, out);
	if (rc == 0)
		rc = report(c, &x, ns, name, out);
	if (rc < 0)
		out->error = true;
	member_pass_clear(&x);
}
