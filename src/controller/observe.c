/*
 * controller/observe.c - what a reconcile pass observes beyond the caches: the TLS material and
 * root password of the cluster (the pass's tls and auth, struct eo_pass), the members
 * with their Pods, PVCs and Nodes, live reads when the plan asks for them, and etcd's member
 * list (confirmed with the leader), status and auth. Part of the reconcilers
 * (controller/internal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"

/*
 * Reads the TLS Secrets of cluster for this pass into *m and points pass->tls at it. 0:
 * usable (or plaintext); 1: unusable, *p says why (logged); -1: the apiserver could not be asked.
 */
int eo__ctl_load_tls(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		     struct eo_tls_material *m, struct eo_tlsload_problem *p)
{
	struct eo_kube_error err = {0};
	struct eo_cluster_tls t;

	pass->tls = NULL;
	eo_cluster_tls(cluster, &t);
	if (t.client == EO_TLS_NONE && t.peer == EO_TLS_NONE)
		return 0;
	switch (eo_tlsload_cached(c->tls_cache, c->kc, cluster, eo__ctl_now_of(c), m, p, &err)) {
	case EO_TLSLOAD_OK:
		pass->tls = m;
		return 0;
	case EO_TLSLOAD_PROBLEM:
		/* Told once at WARN (the condition and the Event carry it on). */
		eo_log_kv(p->repeated ? EO_LOG_DEBUG : EO_LOG_WARN, pass->lc,
			  "TLS material unusable", "reason", p->reason, "secret", p->secret,
			  "message", p->message, NULL);
		return 1;
	default:
		eo_log_kv(EO_LOG_WARN, pass->lc, "reading the TLS Secrets failed", "detail",
			  err.message[0] ? err.message : "no answer from the apiserver", NULL);
		return -1;
	}
}

/*
 * cert-manager mode before the cluster formed, with a Certificate not issued yet: the plan
 * waits for the Certificates and does not look at the TLS material, and the Secrets
 * cert-manager fills would only be found missing (a warning on every pass). Not read then.
 */
bool eo__ctl_certs_pending(const json_t *cluster, const struct eo_certs_seen *seen)
{
	if (!eo_cluster_uses_cert_manager(cluster) || eo_cluster_cluster_id(cluster) != NULL)
		return false;
	if (!seen->plan.installed)
		return true;
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++) {
		const json_t *have = seen->plan.role[r].have;

		if (eo_desired_certificate_wanted(cluster, (enum eo_cert_role)r,
						  seen->plan.per_cluster_ca) &&
		    (have == NULL || !eo_plan_cert_ready(have, NULL)))
			return true;
	}
	return false;
}

/*
 * Reads the root password of cluster (spec.auth) for this pass into *a and points pass->auth at
 * it. 0: usable (or no auth asked for); 1: unusable, *p says why (logged, never the password);
 * -1: the apiserver could not be asked.
 */
int eo__ctl_load_auth(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		      struct eo_auth_creds *a, struct eo_tlsload_problem *p)
{
	struct eo_kube_error err = {0};

	pass->auth = NULL;
	if (!eo_cluster_auth_enabled(cluster))
		return 0;
	switch (eo_authload(c->kc, cluster, a, p, &err)) {
	case EO_TLSLOAD_OK:
		pass->auth = a;
		return 0;
	case EO_TLSLOAD_PROBLEM:
		eo_log_kv(EO_LOG_WARN, pass->lc, "root credentials unusable", "reason", p->reason,
			  "secret", p->secret, "message", p->message, NULL);
		return 1;
	default:
		eo_log_kv(EO_LOG_WARN, pass->lc, "reading the root credentials Secret failed",
			  "detail", err.message[0] ? err.message : "no answer from the apiserver",
			  NULL);
		return -1;
	}
}

/*
 * spec.auth with mTLS: etcd's JSON gateway refuses every request whose client certificate has a
 * CommonName once auth is on, so the operator's must have none. Told as the TLS Secret's
 * problem (nothing is touched meanwhile) rather than found out after auth is enabled.
 */
void eo__ctl_check_auth_client_cert(struct eo_pass *pass, const json_t *cluster,
				    const struct eo_tls_material *tls, struct eo_tlsload_problem *p)
{
	char cn[64], name[128];

	if (tls->cert == NULL ||
	    eo_authload_cert_cn(tls->cert, tls->cert_len, cn, sizeof(cn)) != 1 ||
	    eo_cluster_operator_client_secret_name(cluster, name, sizeof(name)) != 0)
		return;
	pass->tls = NULL;
	p->reason = EO_REASON_TLS_SECRET_INVALID;
	snprintf(p->secret, sizeof(p->secret), "%s", name);
	(void)snprintf(
	    p->message, sizeof(p->message),
	    "the operator client Secret %.63s/%.127s: its certificate has the CommonName "
	    "\"%.63s\"; with "
	    "spec.auth etcd's JSON gateway refuses client certificates that have one: issue "
	    "it without a CommonName (for example -subj /O=etcd-operator)",
	    eo_cluster_namespace(cluster), name, cn);
	eo_log_kv(EO_LOG_WARN, pass->lc, "TLS material unusable", "reason", p->reason, "secret",
		  p->secret, "message", p->message, NULL);
}

void eo__ctl_observed_members_free(struct observed_members *om)
{
	free(om->v);
	free(om->nodes);
	json_decref(om->members);
	json_decref(om->owned);
	memset(om, 0, sizeof(*om));
}

/* The spec.nodeName of a Pod, or NULL. */
const char *eo__ctl_pod_node_name(const json_t *pod)
{
	const char *n =
	    json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));

	return n != NULL && n[0] != '\0' ? n : NULL;
}

static const struct eo_kube_resource RES_PVS = {"v1", "persistentvolumes", NULL, NULL};

/*
 * The cached Node a local PV's host names (plan/nodeloss.h, eo_plan_pv_node_name): the one of
 * that name, else the one labelled EO_LABEL_HOSTNAME=host (a hostname label that is not the
 * node's name). New reference, or NULL.
 */
static json_t *cached_node_of_host(struct eo_controller *c, const char *host)
{
	json_t *node = eo_cache_set_get(&c->nodes, NULL, host), *all = NULL, *o = NULL;
	size_t i;

	if (node != NULL)
		return node;
	all = eo_cache_set_list(&c->nodes, NULL);
	json_array_foreach(all, i, o)
	{
		const char *l = eo_meta_label(o, EO_LABEL_HOSTNAME);

		if (l != NULL && strcmp(l, host) == 0) {
			node = json_incref(o);
			break;
		}
	}
	json_decref(all);
	return node;
}

/*
 * When neither member pm's Pod nor its PVC names its node (a statically bound local PV): the
 * PV read live into *pv (kept alive in om->owned) and the node its affinity names (borrowed
 * from *pv), or NULL (no PV to read, not a local PV, or the read failed: the node is unknown).
 */
static const char *node_of_pv(struct eo_controller *c, const struct eo_log_ctx *lc,
			      struct observed_members *om, const struct eo_plan_member *pm,
			      json_t **pv)
{
	const char *vol = eo_plan_member_pv_to_read(pm->pod, pm->pvc);

	*pv = NULL;
	if (vol == NULL || eo__ctl_get_live(c, lc, eo_kube_res_at(RES_PVS, NULL, vol), pv) != 0 ||
	    *pv == NULL)
		return NULL;
	if (json_array_append_new(om->owned, *pv) != 0) {
		*pv = NULL;
		return NULL;
	}
	return eo_plan_pv_node_name(*pv);
}

/*
 * om->nodes[i] from the Node cache (plan/nodeloss.h): the node member i's Pod is bound to (or its
 * PVC was provisioned for, or its local PV lives on), or absent when the synced cache has no
 * such Node. Nothing when nodes are not watched.
 */
static int observe_node(struct eo_controller *c, struct observed_members *om, size_t i)
{
	const char *nn = eo_plan_member_node_name(om->v[i].pod, om->v[i].pvc);
	json_t *node = NULL, *pv = NULL;

	if (om->nodes == NULL)
		return 0;
	if (nn == NULL && (nn = node_of_pv(c, NULL, om, &om->v[i], &pv)) == NULL)
		return 0;
	om->nodes[i].pv = pv;
	node = pv != NULL ? cached_node_of_host(c, nn) : eo_cache_set_get(&c->nodes, NULL, nn);
	if (node == NULL) {
		om->nodes[i].absent = true;
		return 0;
	}
	om->nodes[i].node = node;
	return json_array_append_new(om->owned, node) != 0 ? -1 : 0;
}

int eo__ctl_observe_members(struct eo_controller *c, const json_t *cluster,
			    struct observed_members *om)
{
	const char *ns = eo_cluster_namespace(cluster), *uid = eo_cluster_uid(cluster);
	json_t *raw = eo_cache_set_by_owner(&c->members, uid);
	json_t *m = NULL;
	size_t i;

	memset(om, 0, sizeof(*om));
	om->members = json_array();
	om->owned = json_array();
	if (raw == NULL || om->members == NULL || om->owned == NULL)
		goto fail;
	om->v = calloc(json_array_size(raw) + 1, sizeof(*om->v));
	if (om->v == NULL)
		goto fail;
	if (c->nodes.n > 0 &&
	    (om->nodes = calloc(json_array_size(raw) + 1, sizeof(*om->nodes))) == NULL)
		goto fail;
	json_array_foreach(raw, i, m)
	{
		char pvc[EO_NAME_MAX];
		json_t *copy = NULL, *pod = NULL, *claim = NULL;
		const char *mname = eo_meta_name(m);

		if (!eo_desired_is_controlled_by(m, uid) || mname == NULL)
			continue;
		copy = eo_controller_typed_copy(m, EO_API_GROUP_VERSION, EO_KIND_MEMBER);
		if (copy == NULL || json_array_append_new(om->members, copy) != 0)
			goto fail;
		pod = eo_cache_set_get(&c->pods, ns, mname);
		if (pod != NULL && !eo_desired_is_controlled_by(pod, eo_member_uid(copy))) {
			json_decref(pod);
			pod = NULL;
		}
		if (eo_name_member_pvc(pvc, sizeof(pvc), mname) == 0)
			claim = eo_cache_set_get(&c->pvcs, ns, pvc);
		om->v[om->n].member = copy;
		om->v[om->n].pod = pod;
		om->v[om->n].pvc = claim;
		if ((pod && json_array_append_new(om->owned, pod) != 0) ||
		    (claim && json_array_append_new(om->owned, claim) != 0) ||
		    observe_node(c, om, om->n) != 0)
			goto fail;
		om->n++;
	}
	json_decref(raw);
	return 0;
fail:
	json_decref(raw);
	eo__ctl_observed_members_free(om);
	return -1;
}

/* Live GET of r (not the cache); *out NULL when not found. 0, or -1 on another error. */
int eo__ctl_get_live(struct eo_controller *c, const struct eo_log_ctx *lc,
		     struct eo_kube_resource r, json_t **out)
{
	struct eo_kube_error err = {0};
	eo_kube_err e = eo_kube_get(c->kc, &r, out, &err);

	if (e == EO_KUBE_OK)
		return 0;
	*out = NULL;
	if (e == EO_KUBE_ENOTFOUND)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "reading the live object failed", "resource", r.plural, "name",
		  r.name, "error", eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}

/*
 * Before a destructive step about member pm: its Pod and PVC read from the apiserver, since
 * the cache holds only labelled objects and may lag. When they differ from what the plan saw,
 * pm takes the live objects (om keeps them alive) and 1 is returned: plan again. 0: the cache
 * was right; -1: a read failed (do not act).
 */
int eo__ctl_confirm_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			 struct observed_members *om, struct eo_plan_member *pm)
{
	const char *ns = eo_member_namespace(pm->member), *name = eo_member_name(pm->member);
	char pvc_name[EO_NAME_MAX];
	json_t *pod = NULL, *pvc = NULL;
	int changed = 0;

	if (eo_name_member_pvc(pvc_name, sizeof(pvc_name), name) != 0 ||
	    eo__ctl_get_live(c, lc, eo_kube_res_at(RES_PODS, ns, name), &pod) != 0 ||
	    eo__ctl_get_live(c, lc, eo_kube_res_at(RES_PVCS, ns, pvc_name), &pvc) != 0)
		goto fail;
	if (pod != NULL && !eo_desired_is_controlled_by(pod, eo_member_uid(pm->member))) {
		json_decref(pod); /* as the cache view: a foreign Pod is no Pod of this member */
		pod = NULL;
	}
	if (eo_plan_observed_differs(pm->pod, pod)) {
		if (pod != NULL && json_array_append(om->owned, pod) != 0)
			goto fail;
		pm->pod = pod;
		changed = 1;
	}
	if (eo_plan_observed_differs(pm->pvc, pvc)) {
		if (pvc != NULL && json_array_append(om->owned, pvc) != 0)
			goto fail;
		pm->pvc = pvc;
		changed = 1;
	}
	json_decref(pod);
	json_decref(pvc);
	return changed;
fail:
	json_decref(pod);
	json_decref(pvc);
	return -1;
}

/*
 * Before a quorum-loss decision (the plan's want_live): every member's Pod and PVC read from
 * the apiserver, never only the label-filtered caches (a PVC whose label was removed is not
 * lost). 0, or -1 when a read failed: nothing is decided on a view that could not be checked.
 */
int eo__ctl_read_members_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			      struct observed_members *om)
{
	for (size_t i = 0; i < om->n; i++) {
		int changed = eo__ctl_confirm_live(c, lc, om, &om->v[i]);

		if (changed < 0) {
			eo_log_kv(EO_LOG_WARN, lc,
				  "quorum-loss check waits: the member's Pod or PVC could not be "
				  "read from the apiserver",
				  "member", eo_member_name(om->v[i].member), "check", "live-read",
				  NULL);
			return -1;
		}
		if (changed > 0)
			eo_log_kv(
			    EO_LOG_INFO, lc,
			    "quorum-loss check: the cache differs from the apiserver "
			    "(a label removed, or the cache lags); deciding on the live objects",
			    "member", eo_member_name(om->v[i].member), NULL);
	}
	return 0;
}

/*
 * Before a member is replaced for its node (the plan's want_nodes): every member's Pod and PVC
 * read from the apiserver, then the Node each Pod is bound to (404: absent), or, for a Pod not
 * bound yet, the one its PVC was provisioned for or its static local PV lives on (the PV read
 * live too; when it cannot be read the node is unknown and nothing is decided on it). 0, or -1
 * when a read failed: nothing is decided on a view that could not be checked.
 */
int eo__ctl_read_nodes_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			    struct observed_members *om)
{
	for (size_t i = 0; i < om->n; i++) {
		struct eo_plan_member *pm = &om->v[i];
		const char *nn = NULL;
		json_t *node = NULL, *pv = NULL, *named = NULL;
		bool ok = eo__ctl_confirm_live(c, lc, om, pm) >= 0, absent = false;

		/* A static local PV names the host: its Node by name (a label may differ). */
		if (ok && (nn = eo_plan_member_node_name(pm->pod, pm->pvc)) == NULL &&
		    (nn = node_of_pv(c, lc, om, pm, &pv)) != NULL &&
		    (named = cached_node_of_host(c, nn)) != NULL)
			nn = eo_meta_name(named);
		if (!ok ||
		    (nn != NULL &&
		     eo__ctl_get_live(c, lc, eo_kube_res_at(RES_NODES, NULL, nn), &node) != 0)) {
			json_decref(named);
			eo_log_kv(
			    EO_LOG_WARN, lc,
			    "node-loss check waits: the member's Pod or Node could not be read "
			    "from the apiserver",
			    "member", eo_member_name(pm->member), "check", "live-read", NULL);
			return -1;
		}
		absent = nn != NULL && node == NULL;
		json_decref(named);
		if (om->nodes == NULL) {
			json_decref(node);
			continue; /* nodes not watched: nothing is decided on them */
		}
		om->nodes[i] = (struct eo_plan_node){.node = node, .absent = absent, .pv = pv};
		if (node != NULL && json_array_append_new(om->owned, node) != 0)
			return -1;
	}
	return 0;
}

/*
 * Whether etcd has authentication on (AuthStatus) and, when it has and the pass holds the root
 * password, whether that password works (the client may have authenticated already on the way).
 */
static void query_auth(const struct eo_pass *pass, eo_etcd_client *ec, struct eo_plan_input *in,
		       char *msg, size_t n)
{
	struct eo_etcd_detail d = {0};

	in->auth_status_err = eo_etcd_auth_status(ec, &in->auth_on, &d);
	in->auth_login_err = EO_ETCD_OK;
	if (in->auth_status_err != EO_ETCD_OK || !in->auth_on || pass->auth == NULL ||
	    pass->auth->password == NULL)
		return;
	if (eo_etcd_client_token(ec) == NULL) {
		in->auth_login_err = eo_etcd_authenticate(ec, NULL, &d);
		snprintf(msg, n, "%s", d.message);
		in->auth_login_message = msg;
	}
	if (in->auth_login_err == EO_ETCD_OK) {
		eo_authload_mark_verified(eo_cluster_uid(in->cluster), pass->auth->password);
		in->auth_unverified = false;
	}
}

/* The client URL of the EtcdMember named name (among members), into buf. 0, or -1. */
static int member_client_url(const struct eo_controller *c, const json_t *cluster,
			     const struct eo_plan_member *members, size_t n_members,
			     const char *name, char *buf, size_t cap)
{
	for (size_t i = 0; name != NULL && name[0] != '\0' && i < n_members; i++) {
		const json_t *m = members[i].member;

		if (strcmp(eo_member_name(m), name) == 0)
			return eo_desired_member_client_url(
			    buf, cap, &c->build, name, eo_member_service(m),
			    eo_cluster_namespace(cluster), eo_desired_member_client_tls(m));
	}
	return -1;
}

/*
 * Absence is never decided from one unverified answer (plan.h, etcd_leader_checked): whether
 * *list, answered at endpoint answered, is etcd's leader's own answer. The Maintenance Status
 * of that member names the leader; when the leader is another member, the list is read again
 * at the leader's client URL alone and replaces *list. Each answer must carry this cluster's
 * ID and come from the member expected. Returns true when the list is the leader's; false
 * with why (the check that failed) otherwise. One Status call, plus one member list when a
 * follower answered; made only when a plan is about to act on a member's absence.
 */
/*
 * The Maintenance Status (into *st) of the member at answered, that answered *list: 1 it is
 * the leader, 0 the leader is another member (st->leader), -1 a check failed (why).
 */
static int status_at_answered(const struct eo_controller *c, const struct eo_pass *pass,
			      const json_t *cluster, const char *answered,
			      const struct eo_etcd_members *list, struct eo_etcd_status *st,
			      char *why, size_t cap)
{
	struct eo_etcd_detail d = {0};
	const char *eps[1] = {answered};
	eo_etcd_client *ec = eo__ctl_etcd_dial(c, pass, eps, 1);
	eo_etcd_err e = EO_ETCD_INVALID;
	char id[EO_PLAN_ID_MAX];

	if (ec != NULL)
		e = eo_etcd_status(ec, answered, st, &d);
	eo_etcd_client_free(ec);
	if (e != EO_ETCD_OK) {
		snprintf(why, cap,
			 "the Maintenance Status of the member that answered (%s) failed: %s",
			 answered, eo_etcd_strerror(e));
		return -1;
	}
	if (!eo_plan_same_cluster(cluster, st->cluster_id)) {
		eo_plan_format_id(st->cluster_id, id, sizeof(id));
		snprintf(why, cap, "the member at %s belongs to etcd cluster %s", answered, id);
		return -1;
	}
	if (list->responder_id != 0 && st->member_id != list->responder_id) {
		eo_plan_format_id(st->member_id, id, sizeof(id));
		snprintf(why, cap, "the member at %s is now %s, not the one that answered the list",
			 answered, id);
		return -1;
	}
	if (st->leader == 0) {
		snprintf(why, cap, "the member at %s knows no leader", answered);
		return -1;
	}
	return st->leader == st->member_id ? 1 : 0;
}

/*
 * The member list read again at the client URL of the leader st->leader alone, replacing
 * *list when it carries this cluster's ID and comes from the leader; false with why if not.
 */
static bool list_at_leader(const struct eo_controller *c, const struct eo_pass *pass,
			   const json_t *cluster, const struct eo_plan_member *members,
			   size_t n_members, struct eo_etcd_members *list,
			   const struct eo_etcd_status *st, char *why, size_t cap)
{
	const struct eo_etcd_member *lm = eo_etcd_members_find(list, st->leader);
	struct eo_etcd_members at = {0};
	struct eo_etcd_detail d = {0};
	char url[EO_DESIRED_URL_MAX], id[EO_PLAN_ID_MAX], lid[EO_PLAN_ID_MAX];
	const char *eps[1] = {url};
	eo_etcd_client *ec = NULL;
	eo_etcd_err e;

	eo_plan_format_id(st->leader, lid, sizeof(lid));
	if (lm == NULL ||
	    member_client_url(c, cluster, members, n_members, lm->name, url, sizeof(url)) != 0) {
		snprintf(why, cap, "the leader %s is not a member of this EtcdCluster", lid);
		return false;
	}
	ec = eo__ctl_etcd_dial(c, pass, eps, 1);
	e = ec != NULL ? eo_etcd_member_list(ec, &at, &d) : EO_ETCD_INVALID;
	eo_etcd_client_free(ec);
	if (e != EO_ETCD_OK) {
		snprintf(why, cap, "listing the members at the leader %s (%s) failed: %s", lm->name,
			 lid, eo_etcd_strerror(e));
		eo_etcd_members_clear(&at);
		return false;
	}
	if (!eo_plan_same_cluster(cluster, at.cluster_id) || at.responder_id != st->leader) {
		eo_plan_format_id(at.responder_id, id, sizeof(id));
		snprintf(why, cap,
			 "the answer at the leader's address (%s) came from member %s of another "
			 "cluster or from another member than the leader %s",
			 lm->name, id, lid);
		eo_etcd_members_clear(&at);
		return false;
	}
	eo_etcd_members_clear(list);
	*list = at;
	return true;
}

bool eo__ctl_confirm_leader(const struct eo_controller *c, const struct eo_pass *pass,
			    const json_t *cluster, const struct eo_plan_member *members,
			    size_t n_members, const char *answered, struct eo_etcd_members *list,
			    char *why, size_t cap)
{
	struct eo_etcd_status st = {0};
	bool ok;
	int rc;

	why[0] = '\0';
	if (answered == NULL || answered[0] == '\0') {
		snprintf(why, cap, "no member answered the member list");
		return false;
	}
	rc = status_at_answered(c, pass, cluster, answered, list, &st, why, cap);
	/* a follower answered: the list is read again at the leader */
	ok = rc > 0 ||
	     (rc == 0 && list_at_leader(c, pass, cluster, members, n_members, list, &st, why, cap));
	eo_etcd_status_clear(&st);
	return ok;
}

/*
 * etcd's member list through the plan's endpoints and, when the plan wants it (a roll is due,
 * or a quorum-loss check: then whatever the list answered), the Maintenance Status of each
 * endpoint into st (*n_st of them answered; from[k] the endpoint st[k] came from).
 */
void eo__ctl_query_members(struct eo_controller *c, const struct eo_pass *pass,
			   const struct eo_plan_result *r, struct eo_etcd_members *list,
			   eo_etcd_err *e, struct eo_etcd_status *st,
			   char from[][EO_DESIRED_URL_MAX], size_t *n_st, struct eo_plan_input *in,
			   char *msg, size_t n, char *answered, size_t cap)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *ec = eo__ctl_etcd_dial_urls(c, pass, r->endpoints, r->n_endpoints);

	*n_st = 0;
	*e = ec == NULL ? EO_ETCD_INVALID : eo_etcd_member_list(ec, list, &d);
	snprintf(answered, cap, "%s", *e == EO_ETCD_OK ? d.endpoint : "");
	in->auth_status_err = EO_ETCD_UNAVAILABLE;
	/* A list refused for want of credentials is the first sign of auth. */
	if (ec != NULL && (*e == EO_ETCD_OK || *e == EO_ETCD_AUTH))
		query_auth(pass, ec, in, msg, n);
	for (size_t i = 0; ec != NULL && (*e == EO_ETCD_OK || r->want_live) && r->want_status &&
			   i < r->n_endpoints;
	     i++)
		if (eo_etcd_status(ec, r->endpoints[i], &st[*n_st], NULL) == EO_ETCD_OK)
			snprintf(from[(*n_st)++], EO_DESIRED_URL_MAX, "%s", r->endpoints[i]);
		else
			eo_etcd_status_clear(&st[*n_st]);
	eo_etcd_client_free(ec);
}

/*
 * The Service under one of the cluster's names, any owner: from the cache, or read live when
 * the cache has none (normally only before the first create), so that one the informer does
 * not see (without the operator's labels: a user's) reaches the plan as ForeignObject instead
 * of a create answered 409 on every pass. NULL when there is none or it cannot be read.
 */
json_t *eo__ctl_observe_service(struct eo_controller *c, const json_t *cluster, const char *name)
{
	const char *ns = eo_cluster_namespace(cluster);
	struct eo_kube_resource r = eo_kube_res_at(RES_SERVICES, ns, name);
	struct eo_kube_error err = {0};
	json_t *svc = eo_cache_set_get(&c->services, ns, name);

	if (svc != NULL || eo_cluster_is_deleting(cluster) || eo_cluster_migrating(cluster))
		return svc;
	if (eo_kube_get(c->kc, &r, &svc, &err) != EO_KUBE_OK) {
		json_decref(svc);
		return NULL;
	}
	return svc;
}
