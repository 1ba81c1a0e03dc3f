/*
 * plan/bootstrap.c - a cluster without a clusterID: the seed member is created, given its
 * initial cluster, started, and its one-member etcd cluster gives the cluster its ID. Part of
 * the cluster planner (plan/plan.h, plan/internal.h).
 */
#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "plan/internal.h"
#include "plan/podissue.h"

/* Nothing to do, members being deleted, or no seed member to go on with yet. */
static bool bootstrap_no_seed(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			      int32_t desired, const char *seed)
{
	struct eo_plan_result *out = x->out;

	if (desired == 0) {
		eo__plan_msgf(x,
			      "no data has been written (cluster never bootstrapped); scale up to "
			      "bootstrap it");
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_PAUSED, out->message);
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_PAUSED,
			      out->message);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_FALSE, EO_REASON_PAUSED, out->message);
		out->action = EO_PLAN_NONE;
		return true;
	}
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE,
		      seed != NULL && c->seed->pod != NULL ? EO_REASON_INITIAL_SNAPSHOT
							   : EO_REASON_WAITING_FOR_SEED,
		      "bootstrapping the cluster from a single seed member");
	if (c->deleting > 0) {
		eo__plan_msgf(x, "waiting for %zu member(s) being deleted", c->deleting);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_WAITING_FOR_SEED,
			      out->message);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return true;
	}
	if (c->n == 0) {
		eo__plan_msgf(x, "bootstrapping single-node cluster: creating the seed member");
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_WAITING_FOR_SEED,
			      out->message);
		eo__plan_create_named(x, EO_PLAN_CREATE_SEED);
		return true;
	}
	if (c->seed == NULL) {
		/* Members without a seed and no clusterID: nothing safe to do. */
		eo__plan_msgf(x, "%zu member(s) exist but none is the bootstrap seed", c->n);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_WAITING_FOR_SEED,
			      out->message);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return true;
	}
	return false;
}

/* The seed member is set up and started: its initial cluster, a failed restore, its Pod. */
static bool bootstrap_seed_start(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
				 const char *seed)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;
	const char *ns = eo_cluster_namespace(in->cluster);
	struct eo_pod_issue issue;

	if (eo_member_is_pending(c->seed->member)) {
		eo__plan_msgf(x, "seed member %s: setting its initial cluster", seed);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_WAITING_FOR_SEED,
			      out->message);
		out->action = EO_PLAN_COMPLETE_SEED;
		out->member = c->seed->member;
		if (eo_desired_seed_initial_cluster(
			out->initial_cluster, sizeof(out->initial_cluster), in->build, seed,
			eo_member_service(c->seed->member), ns,
			eo_desired_member_peer_tls(c->seed->member)) != 0)
			x->ok = false;
		return true;
	}
	if (c->seed->pod != NULL && !eo_plan_pod_ready(c->seed->pod) &&
	    eo_plan_pod_issue(c->seed->member, c->seed->pod, c->seed->pvc, in->now, &issue) &&
	    issue.kind == EO_POD_ISSUE_RESTORE_FAILED) {
		/*
		 * The restore init container refused the snapshot (or could not get it): etcd
		 * is not started. The kubelet retries it with back-off, so a fixed source heals.
		 */
		eo__plan_msgf(x, "seed member %s: %s", seed, issue.message);
		x->issues[0] = '\0'; /* the message already says it */
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, issue.reason, out->message);
		eo__plan_event(x, "Warning", issue.reason);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_ETCD_MS;
		return true;
	}
	if (c->seed->pod == NULL || !eo_plan_pod_ready(c->seed->pod)) {
		eo__plan_msgf(
		    x,
		    "waiting for bootstrap member to form cluster: the Pod of seed member %s "
		    "is not ready yet",
		    seed);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_WAITING_FOR_SEED,
			      out->message);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return true;
	}
	return false;
}

/*
 * The seed restored an archive (its restore-replay init container succeeded): the point is
 * recorded in status.restoredFromArchive, said in the message, and told by a Normal Event
 * RestoredFromArchive. Read once, at the discovery: the Pod's init container statuses are
 * gone when it is replaced.
 */
static void restored_from_archive(struct eo__plan_ctx *x, const json_t *pod, const char *id,
				  const char *seed)
{
	char when[EO_ARCHIVE_TIME_MAX];
	int64_t rev = 0;
	json_t *st;

	if (!eo_plan_archive_restored(pod, &rev, when, sizeof(when)))
		return;
	st = json_pack("{s:I}", "revision", (json_int_t)rev);
	if (st != NULL && when[0] != '\0')
		json_object_set_new(st, "time", json_string(when));
	if (st == NULL)
		x->ok = false;
	else
		eo__plan_set_status(x, "restoredFromArchive", st);
	eo__plan_msgf(x,
		      "etcd cluster %s formed by seed member %s, restored from archive to "
		      "revision %lld%s%s%s",
		      id, seed, (long long)rev, when[0] ? " (time " : "", when, when[0] ? ")" : "");
	eo__plan_event(x, "Normal", EO_REASON_RESTORED_FROM_ARCHIVE);
}

/* The seed's Pod is ready: its member list gives the cluster its ID. */
static void bootstrap_discover(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			       const char *seed, const char *peer)
{
	const struct eo_plan_input *in = x->in;
	struct eo_plan_result *out = x->out;
	const char *ns = eo_cluster_namespace(in->cluster);
	char id[24];
	const struct eo_etcd_member *em = NULL;

	if (!in->etcd_queried) {
		out->action = EO_PLAN_QUERY_MEMBERS;
		if (eo_desired_member_client_url(
			out->endpoints[0], sizeof(out->endpoints[0]), in->build, seed,
			eo_member_service(c->seed->member), ns,
			eo_desired_member_client_tls(c->seed->member)) != 0)
			x->ok = false;
		out->n_endpoints = 1;
		eo__plan_msgf(x, "listing the members of seed %s", seed);
		return;
	}
	if (in->etcd_err != EO_ETCD_OK || in->etcd == NULL) {
		eo__plan_msgf(x, "cannot list the members of seed %s: %s", seed,
			      eo__plan_etcd_err_text(in));
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, eo__plan_unreachable_reason(in),
			      out->message);
		eo__plan_event(x, "Warning", eo__plan_unreachable_reason(in));
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_ETCD_MS;
		return;
	}
	em = eo_plan_find_etcd_member(in->etcd, seed, peer);
	if (em == NULL || in->etcd->n != 1 || in->etcd->cluster_id == 0) {
		eo__plan_msgf(x, "the member list of seed %s does not show it as the only member",
			      seed);
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_CLUSTER_UNREACHABLE,
			      out->message);
		eo__plan_event(x, "Warning", EO_REASON_CLUSTER_UNREACHABLE);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_ETCD_MS;
		return;
	}
	eo_plan_format_id(in->etcd->cluster_id, id, sizeof(id));
	eo__plan_set_status(x, "clusterID", json_string(id));
	eo__plan_msgf(x, "etcd cluster %s formed by seed member %s", id, seed);
	restored_from_archive(x, c->seed->pod, id, seed);
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_CLUSTER_DISCOVERED,
		      out->message);
	if (out->event_reason == NULL)
		eo__plan_event(x, "Normal", EO_REASON_CLUSTER_DISCOVERED);
	out->action = EO_PLAN_WRITE_STATUS;
}

/* Before the cluster has an ID: bootstrap through the seed. */
void eo__plan_step_bootstrap(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			     int32_t desired)
{
	const struct eo_plan_input *in = x->in;
	const char *ns = eo_cluster_namespace(in->cluster);
	const char *seed = c->seed ? eo_member_name(c->seed->member) : NULL;
	char peer[EO_DESIRED_URL_MAX];

	if (bootstrap_no_seed(x, c, desired, seed))
		return;
	if (eo_desired_member_peer_url(peer, sizeof(peer), in->build, seed,
				       eo_member_service(c->seed->member), ns,
				       eo_desired_member_peer_tls(c->seed->member)) != 0) {
		x->ok = false;
		return;
	}
	if (bootstrap_seed_start(x, c, seed))
		return;
	bootstrap_discover(x, c, seed, peer);
}
