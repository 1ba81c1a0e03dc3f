/*
 * controller/netpol.c - the cluster's NetworkPolicies (desired/netpol.h): the client policy when
 * the operator is configured for one, and the always-on peer-only policy; created, patched or
 * deleted, never touching one this cluster does not control. Part of the cluster reconciler
 * (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "desired/desired.h"
#include "desired/netpol.h"

/*
 * A NetworkPolicy create answered AlreadyExists for a name the cache does not hold under our
 * labels, and the live object is not ours (a user's; holder controls it): a log line and a
 * Warning Event ForeignObject (rate-limited by the recorder) say it is left alone.
 */
static void foreign_network_policy(struct eo_controller *c, const struct eo_log_ctx *lc,
				   const json_t *cluster, struct eo_kube_resource r,
				   const char *holder)
{
	char msg[3 * EO_NAME_MAX + 160];

	snprintf(msg, sizeof(msg),
		 "NetworkPolicy %s is not controlled by this EtcdCluster (its controller: %s): it "
		 "is left as it is and the cluster runs without its own policy; delete or rename "
		 "it",
		 r.name, holder);
	eo_log_kv(EO_LOG_WARN, lc, "network policy held by another owner; left alone",
		  "networkpolicy", r.name, "holder", holder, NULL);
	eo__ctl_emit(c, (json_t *)cluster, "Warning", EO_REASON_FOREIGN_OBJECT, msg);
}

/*
 * Deletes have (an object this cluster controls) at r with its UID as precondition; gone
 * already, or replaced by another object under the name, counts as done.
 */
static eo_kube_err delete_owned(struct eo_controller *c, const struct eo_kube_resource *r,
				const json_t *have, struct eo_kube_error *err)
{
	struct eo_kube_delete_opts d = {.uid = eo_meta_uid(have), .grace_period_seconds = -1};
	eo_kube_err e = eo_kube_delete(c->kc, r, &d, err);

	return e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT ? EO_KUBE_OK : e;
}

/*
 * want created at r, or have (ours) patched back when it drifted (eo__ctl_ensure_owned, into
 * *o): *what "creating", "patching" or NULL, *in_place whether the policy now stands as wanted.
 * A create answered AlreadyExists is no failure: the cache lags, or the name is someone
 * else's (o->taken, o->holder), which the caller tells.
 */
static eo_kube_err ensure_policy(struct eo_controller *c, const json_t *cluster,
				 struct eo_kube_resource r, json_t *want, const json_t *have,
				 struct eo__ctl_owned *o, const char **what, bool *in_place)
{
	eo_kube_err e;

	*o = (struct eo__ctl_owned){.r = r,
				    .kind = "NetworkPolicy",
				    .owner = "this EtcdCluster",
				    .owner_uid = eo_cluster_uid(cluster),
				    .want = want,
				    .have = have,
				    .patch_of = eo_desired_network_policy_patch};
	e = eo__ctl_ensure_owned(c, NULL, o);
	*what = o->step == EO__CTL_OWNED_CREATE	 ? "creating"
		: o->step == EO__CTL_OWNED_PATCH ? "patching"
						 : NULL;
	*in_place = o->step != EO__CTL_OWNED_FOREIGN && o->answer == EO_KUBE_OK;
	if (o->step == EO__CTL_OWNED_CREATE && o->answer == EO_KUBE_EEXISTS)
		e = EO_KUBE_OK; /* the cache lags, or it is someone else's */
	return e;
}

/*
 * The cluster's NetworkPolicy in line with spec.networkPolicy and the operator's default:
 * created, patched back when it drifted, deleted (ours only) when turned off. Not a plan
 * step: it neither waits for nor blocks the members. 0 in sync, -1 a write failed (logged,
 * and a Warning Event with the apiserver's answer).
 */
static int sync_network_policy(struct eo_controller *c, const struct eo_log_ctx *lc,
			       const json_t *cluster, bool *in_place)
{
	const char *ns = eo_cluster_namespace(cluster), *name = eo_cluster_name(cluster);
	struct eo_kube_resource r = eo_kube_res_at(RES_NETPOLS, ns, name);
	struct eo_kube_error err = {0};
	struct eo__ctl_owned o;
	json_t *have = NULL, *want = NULL;
	const char *what = NULL;
	eo_kube_err e = EO_KUBE_OK;
	int rc = 0;

	*in_place = false;
	if (c->netpol == NULL)
		return 0;
	have = eo_cache_set_get(&c->netpols, ns, name);
	if (have != NULL && !eo_desired_is_controlled_by(have, eo_cluster_uid(cluster))) {
		/* Not ours: never patched or deleted (the plan says ForeignObject when wanted). */
		char holder[HOLDER_MAX];

		eo_desired_controller_of(have, holder, sizeof(holder));
		if (eo_desired_network_policy_enabled(cluster, c->netpol))
			eo_log_kv(EO_LOG_WARN, lc,
				  "network policy held by another owner; left alone",
				  "networkpolicy", name, "holder", holder, NULL);
		json_decref(have);
		return 0;
	}
	if (!eo_desired_network_policy_enabled(cluster, c->netpol)) {
		if (have != NULL) {
			what = "deleting";
			e = delete_owned(c, &r, have, &err);
		}
		goto out;
	}
	want = eo_desired_network_policy(cluster, c->netpol);
	if (want == NULL) {
		rc = -1;
		eo_log_kv(EO_LOG_WARN, lc, "building the network policy failed", NULL);
		goto out;
	}
	e = ensure_policy(c, cluster, r, want, have, &o, &what, in_place);
	err = o.err;
	if (o.taken) /* someone else's: left alone */
		foreign_network_policy(c, lc, cluster, r, o.holder);
out:
	if (e != EO_KUBE_OK) {
		char msg[EO_NAME_MAX + 400];

		rc = -1;
		snprintf(msg, sizeof(msg), "%s NetworkPolicy %s failed: %s", what, name,
			 err.message[0] ? err.message : eo_kube_strerror(e));
		eo_log_kv(EO_LOG_WARN, lc, "network policy sync failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		eo__ctl_emit(c, cluster, "Warning", "NetworkPolicyFailed", msg);
	} else if (what != NULL) {
		eo_log_kv(EO_LOG_INFO, lc, "network policy synced", "action", what, NULL);
	}
	json_decref(want);
	json_decref(have);
	return rc;
}

/*
 * The cluster's peer-only NetworkPolicy <cluster>.peer (desired/netpol.h): created, patched
 * back when it drifted, open (client and metrics ports from anywhere) unless the cluster's own
 * policy is in place (full_in_place); deleted (ours only) when the operator runs without it
 * (--peer-network-policy=false). One held by anything else is left alone: a log line and a
 * Warning Event ForeignObject. 0 in sync, -1 a write failed (logged, and a Warning Event).
 */
static int sync_peer_network_policy(struct eo_controller *c, const struct eo_log_ctx *lc,
				    const json_t *cluster, bool full_in_place)
{
	const char *ns = eo_cluster_namespace(cluster);
	char name[EO_NAME_MAX], msg[3 * EO_NAME_MAX + 200];
	struct eo_kube_resource r;
	struct eo_kube_error err = {0};
	struct eo__ctl_owned o;
	json_t *have = NULL, *want = NULL;
	const char *what = NULL;
	eo_kube_err e = EO_KUBE_OK;
	bool in_place;

	if (eo_name_peer_network_policy(name, sizeof(name), eo_cluster_name(cluster)) != 0)
		return -1;
	r = eo_kube_res_at(RES_NETPOLS, ns, name);
	have = eo_cache_set_get(&c->netpols, ns, name);
	if (have != NULL && !eo_desired_is_controlled_by(have, eo_cluster_uid(cluster))) {
		json_decref(have);
		return 0; /* not ours (it carries our labels): never patched or deleted */
	}
	if (!c->peer_netpol) {
		if (have != NULL) {
			what = "deleting";
			e = delete_owned(c, &r, have, &err);
		}
		goto out;
	}
	want = eo_desired_peer_network_policy(cluster, !full_in_place);
	if (want == NULL) {
		json_decref(have);
		eo_log_kv(EO_LOG_WARN, lc, "building the peer network policy failed", NULL);
		return -1;
	}
	e = ensure_policy(c, cluster, r, want, have, &o, &what, &in_place);
	err = o.err;
	if (o.taken) { /* someone else's: left alone */
		snprintf(
		    msg, sizeof(msg),
		    "NetworkPolicy %s is not controlled by this EtcdCluster (its controller: "
		    "%s): it is left as it is and the peer port is not limited to the members; "
		    "delete or rename it",
		    name, o.holder);
		eo_log_kv(EO_LOG_WARN, lc, "peer network policy held by another owner; left alone",
			  "networkpolicy", name, "holder", o.holder, NULL);
		eo__ctl_emit(c, (json_t *)cluster, "Warning", EO_REASON_FOREIGN_OBJECT, msg);
	}
out:
	json_decref(want);
	json_decref(have);
	if (e != EO_KUBE_OK) {
		snprintf(msg, sizeof(msg), "%s NetworkPolicy %s failed: %s", what, name,
			 err.message[0] ? err.message : eo_kube_strerror(e));
		eo_log_kv(EO_LOG_WARN, lc, "peer network policy sync failed", "networkpolicy", name,
			  "error", eo_kube_strerror(e), "detail", err.message, NULL);
		eo__ctl_emit(c, (json_t *)cluster, "Warning", "NetworkPolicyFailed", msg);
		return -1;
	}
	if (what != NULL)
		eo_log_kv(EO_LOG_INFO, lc, "peer network policy synced", "networkpolicy", name,
			  "action", what, "open", full_in_place ? "false" : "true", NULL);
	return 0;
}

/*
 * Both NetworkPolicies, in the order that never closes the client port on its way: turned on,
 * the cluster's own policy is put in place before the peer policy drops its open rules;
 * turned off, the peer policy opens before the cluster's own policy goes (and that one stays
 * while the peer policy cannot be opened). Deleting and migrating clusters keep the peer
 * policy they have (none, for a cluster being adopted). 0 or -1.
 */
int eo__ctl_sync_network_policies(struct eo_controller *c, const struct eo_log_ctx *lc,
				  const json_t *cluster)
{
	bool full = c->netpol != NULL && eo_desired_network_policy_enabled(cluster, c->netpol);
	bool in_place = false;
	int rc = 0;

	/*
	 * Migrating: the legacy members get their labels one by one, and a peer policy would
	 * cut a labelled member off from those not labelled yet; it comes after the migration.
	 */
	if (eo_cluster_is_deleting(cluster) || eo_cluster_migrating(cluster))
		return sync_network_policy(c, lc, cluster, &in_place);
	if (!full && sync_peer_network_policy(c, lc, cluster, false) != 0)
		return -1;
	if (sync_network_policy(c, lc, cluster, &in_place) != 0)
		rc = -1;
	if (full && sync_peer_network_policy(c, lc, cluster, in_place) != 0)
		rc = -1;
	return rc;
}
