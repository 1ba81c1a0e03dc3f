/*
 * controller/defrag.c - the EtcdDefrag reconciler and the NOSPACE alarm recovery of an
 * EtcdCluster: observe, plan/defrag.h and plan/nospace.h decide, act.
 *
 * Observe: the EtcdDefrag, its cluster, the namespace's other EtcdDefrags (caches), then, when
 * the planner asks, the Maintenance Status of every member of the cluster (its EtcdMembers'
 * client URLs) and the cluster's alarms. Act: one Defragment call per pass, bounded by
 * EO_DPLAN_MEMBER_TIMEOUT_MS (a client made for it); for NOSPACE a compaction to the current
 * revision, a Defragment of each member in order and the disarm; status writes (merge patch
 * guarded by resourceVersion) with the Event of the change; the TTL delete (UID precondition).
 * Nothing here changes membership or writes keys.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "api/cluster.h"
#include "api/defrag.h"
#include "api/member.h"
#include "api/names.h"
#include "controller/controller.h"
#include "controller/authload.h"
#include "controller/tlsload.h"
#include "etcd/client.h"
#include "obs/log.h"
#include "plan/defrag.h"
#include "plan/nospace.h"

#define STATUS_TIMEOUT_MS 5000L
#define CONFLICT_MS	  1000L
/* between the two writes of eo_etcd_backend_commit, and after them (two batch intervals) */
#define REFRESH_GAP_MS 200L

static const struct eo_kube_resource RES_DEFRAGS = {EO_API_GROUP_VERSION, EO_PLURAL_DEFRAGS, NULL,
						    NULL};
static const struct eo_kube_resource RES_CLUSTERS = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, NULL,
						     NULL};

static time_t now_of(const struct eo_controller *c)
{
	return c->now != NULL ? c->now() : time(NULL);
}

/* --- the members of a cluster and their status --- */

struct mview {
	struct eo_dplan_member v[EO_PLAN_MAX_ENDPOINTS];
	struct eo_etcd_status st[EO_PLAN_MAX_ENDPOINTS];
	char url[EO_PLAN_MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	char err[EO_PLAN_MAX_ENDPOINTS][128];
	size_t n;
	json_t *keep; /* the EtcdMembers the names borrow from */
	struct eo_tls_material tls;
	bool tls_loaded;
	struct eo_auth_creds auth; /* spec.auth: the root password, cleansed in mview_free */
};

static void mview_clear_status(struct mview *mv)
{
	for (size_t i = 0; i < EO_PLAN_MAX_ENDPOINTS; i++) {
		eo_etcd_status_clear(&mv->st[i]);
		mv->v[i].st = NULL;
		mv->v[i].error = NULL;
	}
}

static void mview_free(struct mview *mv)
{
	mview_clear_status(mv);
	json_decref(mv->keep);
	eo_tls_material_clear(&mv->tls);
	eo_auth_creds_clear(&mv->auth);
	memset(mv, 0, sizeof(*mv));
}

/*
 * The cluster's members (controlled by it, not being deleted) with their client URLs, and the
 * TLS material to reach them. 0, 1 when the TLS material is unusable (logged), -1 failure.
 */
static int mview_build(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *cluster,
		       struct mview *mv)
{
	const char *ns = eo_cluster_namespace(cluster), *cname = eo_meta_name(cluster);
	struct eo_cluster_tls t;
	json_t *m;
	size_t i;

	memset(mv, 0, sizeof(*mv));
	mv->keep = eo_cache_set_by_owner(&c->members, eo_cluster_uid(cluster));
	if (mv->keep == NULL)
		return -1;
	json_array_foreach(mv->keep, i, m)
	{
		const char *mname = eo_meta_name(m);

		if (mname == NULL || !eo_desired_is_controlled_by(m, eo_cluster_uid(cluster)) ||
		    eo_member_is_deleting(m) || mv->n >= EO_PLAN_MAX_ENDPOINTS)
			continue;
		if (eo_desired_member_client_url(mv->url[mv->n], EO_DESIRED_URL_MAX, &c->build,
						 mname, cname, ns,
						 eo_desired_member_client_tls(m)) != 0)
			return -1;
		mv->v[mv->n].name = mname;
		mv->v[mv->n].endpoint = mv->url[mv->n];
		mv->n++;
	}
	eo_cluster_tls(cluster, &t);
	if (t.client != EO_TLS_NONE || t.peer != EO_TLS_NONE) {
		struct eo_tlsload_problem p = {0};
		struct eo_kube_error err = {0};

		/* The cluster controller's verdict cache: the 30 s NOSPACE look re-checks nothing
		 * while the Secrets keep their resourceVersion. */
		switch (eo_tlsload_cached(c->tls_cache, c->kc, cluster, now_of(c), &mv->tls, &p,
					  &err)) {
		case EO_TLSLOAD_OK:
			mv->tls_loaded = true;
			break;
		case EO_TLSLOAD_PROBLEM:
			eo_log_kv(p.repeated ? EO_LOG_DEBUG : EO_LOG_WARN, lc,
				  "TLS material unusable", "reason", p.reason, "secret", p.secret,
				  "message", p.message, NULL);
			return 1;
		default:
			eo_log_kv(EO_LOG_WARN, lc, "reading the TLS Secrets failed", "detail",
				  err.message, NULL);
			return -1;
		}
	}
	if (eo_cluster_auth_enabled(cluster)) {
		struct eo_tlsload_problem p = {0};
		struct eo_kube_error err = {0};

		/* The etcd client authenticates by itself when etcd asks (etcd/client.h). */
		switch (eo_authload(c->kc, cluster, &mv->auth, &p, &err)) {
		case EO_TLSLOAD_OK:
			break;
		case EO_TLSLOAD_PROBLEM:
			eo_log_kv(EO_LOG_WARN, lc, "root credentials unusable", "reason", p.reason,
				  "secret", p.secret, "message", p.message, NULL);
			return 1;
		default:
			eo_log_kv(EO_LOG_WARN, lc, "reading the root credentials Secret failed",
				  "detail", err.message, NULL);
			return -1;
		}
	}
	return 0;
}

static eo_etcd_client *mview_dial(struct eo_controller *c, const struct mview *mv, long timeout_ms)
{
	const char *eps[EO_PLAN_MAX_ENDPOINTS];
	struct eo_controller_routes routes;
	struct eo_etcd_config cfg = {.endpoints = eps,
				     .n_endpoints = mv->n,
				     .timeout_ms = timeout_ms,
				     .connect_to = c->etcd_connect_to,
				     .routes = routes.ptr};
	eo_etcd_client *ec = NULL;

	if (mv->n == 0)
		return NULL;
	for (size_t i = 0; i < mv->n; i++)
		eps[i] = mv->url[i];
	eo_controller_routes(c, eps, mv->n, &routes);
	cfg.n_routes = routes.n;
	if (mv->tls_loaded && mv->tls.client_tls) {
		cfg.ca_pem = mv->tls.ca;
		cfg.ca_pem_len = mv->tls.ca_len;
		if (mv->tls.cert != NULL && mv->tls.key != NULL) {
			cfg.cert_pem = mv->tls.cert;
			cfg.cert_pem_len = mv->tls.cert_len;
			cfg.key_pem = mv->tls.key;
			cfg.key_pem_len = mv->tls.key_len;
		}
	}
	cfg.password = mv->auth.password;
	if (eo_etcd_client_new(&cfg, &ec, NULL) != EO_ETCD_OK)
		return NULL;
	return ec;
}

/* Every member's Maintenance Status into mv (the unanswered ones with why). */
static void mview_query(eo_etcd_client *ec, struct mview *mv)
{
	mview_clear_status(mv);
	for (size_t i = 0; i < mv->n; i++) {
		struct eo_etcd_detail d = {0};
		eo_etcd_err e =
		    ec != NULL ? eo_etcd_status(ec, mv->url[i], &mv->st[i], &d) : EO_ETCD_INVALID;

		if (e == EO_ETCD_OK) {
			mv->v[i].st = &mv->st[i];
		} else {
			snprintf(mv->err[i], sizeof(mv->err[i]), "%s", eo_etcd_strerror(e));
			mv->v[i].error = mv->err[i];
		}
	}
}

static long etcd_status_timeout(const struct eo_controller *c)
{
	return c->etcd_timeout_ms > 0 ? c->etcd_timeout_ms : STATUS_TIMEOUT_MS;
}

/*
 * Writes want as obj's status (resourceVersion precondition) and, on success, replaces *obj
 * with the object the apiserver returned, so that a later write in the same pass carries
 * the new resourceVersion. 0 written, 1 conflict or gone, -1 failure (logged).
 */
static int write_status_fresh(struct eo_controller *c, const struct eo_log_ctx *lc,
			      struct eo_kube_resource r, json_t **obj, const json_t *want,
			      const char *kind)
{
	struct eo_kube_error err = {0};
	json_t *patch = eo_controller_object_status_patch(*obj, want);
	json_t *fresh = NULL, *typed = NULL;
	eo_kube_err e;

	if (patch == NULL)
		return -1;
	e = eo_kube_patch_status(c->kc, &r, patch, &fresh, &err);
	json_decref(patch);
	if (e == EO_KUBE_ECONFLICT || e == EO_KUBE_ENOTFOUND)
		return 1;
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, lc, "status update failed", "error", eo_kube_strerror(e),
			  "detail", err.message, NULL);
		return -1;
	}
	typed = fresh != NULL ? eo_controller_typed_copy(fresh, EO_API_GROUP_VERSION, kind) : NULL;
	json_decref(fresh);
	if (typed == NULL)
		return -1;
	json_decref(*obj);
	*obj = typed;
	return 0;
}

/* --- EtcdDefrag --- */

static int delete_defrag(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			 const json_t *d)
{
	struct eo_kube_delete_opts o = {
	    .propagation_policy = "Background", .uid = eo_meta_uid(d), .grace_period_seconds = -1};
	struct eo_kube_resource r = eo_kube_res_at(RES_DEFRAGS, ns, eo_meta_name(d));
	struct eo_kube_error err = {0};
	eo_kube_err e = eo_kube_delete(c->kc, &r, &o, &err);

	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "deleting a finished EtcdDefrag failed", "error",
		  eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}

/* What one pass of the defrag reconciler observes, plans and acts with. */
struct defrag_pass {
	struct eo_log_ctx lc;
	struct eo_dplan_input in;
	struct eo_dplan_result pr;
	struct eo_dplan_done done;
	struct eo_dplan_moved moved;
	struct eo_etcd_detail dd;
	struct mview *mv;
	json_t *raw, *d, *craw, *cluster, *others;
	eo_etcd_client *ec, *dc;
};

static void defrag_pass_clear(struct defrag_pass *x)
{
	eo_etcd_client_free(x->ec);
	eo_etcd_client_free(x->dc);
	eo_dplan_result_clear(&x->pr);
	if (x->mv != NULL)
		mview_free(x->mv);
	free(x->mv);
	json_decref(x->others);
	json_decref(x->cluster);
	json_decref(x->craw);
	json_decref(x->d);
	json_decref(x->raw);
}

/* The EtcdDefrag, the others of its namespace and its cluster. 0, 1 it is gone, -1 failure. */
static int defrag_observe(struct eo_controller *c, struct defrag_pass *x, const char *ns,
			  const char *name)
{
	const char *cname;

	x->raw = eo_cache_set_get(&c->defrags, ns, name);
	if (x->raw == NULL)
		return 1;
	x->d = eo_controller_typed_copy(x->raw, EO_API_GROUP_VERSION, EO_KIND_DEFRAG);
	x->others = eo_cache_set_list(&c->defrags, ns);
	x->mv = calloc(1, sizeof(*x->mv));
	if (x->d == NULL || x->others == NULL || x->mv == NULL)
		return -1;
	cname = eo_defrag_cluster_name(x->d);
	if (cname != NULL && (x->craw = eo_cache_set_get(&c->clusters, ns, cname)) != NULL &&
	    (x->cluster =
		 eo_controller_typed_copy(x->craw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER)) == NULL)
		return -1;
	x->in = (struct eo_dplan_input){
	    .defrag = x->d, .cluster = x->cluster, .others = x->others, .now = now_of(c)};
	return 0;
}

/* EO_DPLAN_QUERY: the members' sizes (DbSizeInUse refreshed when asked), then plan again. */
static int defrag_query(struct eo_controller *c, struct defrag_pass *x)
{
	int rc = mview_build(c, &x->lc, x->cluster, x->mv);

	if (rc < 0)
		return -1;
	if (rc == 0)
		x->ec = mview_dial(c, x->mv, etcd_status_timeout(c));
	if (x->ec != NULL && x->pr.refresh_in_use) {
		struct eo_etcd_detail rd = {0};
		eo_etcd_err re = eo_etcd_backend_commit(x->ec, REFRESH_GAP_MS, &rd);

		/* Not fatal: the rule then reads what the members last computed. */
		if (re != EO_ETCD_OK)
			eo_log_kv(EO_LOG_WARN, &x->lc, "could not refresh the members' DbSizeInUse",
				  "error", eo_etcd_strerror(re), "detail", rd.message, NULL);
	}
	mview_query(x->ec, x->mv);
	x->in.queried = true;
	x->in.members = x->mv->v;
	x->in.n_members = x->mv->n;
	eo_dplan_result_clear(&x->pr);
	return eo_plan_defrag(&x->in, &x->pr) != 0 ? -1 : 0;
}

/*
 * EO_DPLAN_DEFRAG: Running (and which member) written first, the Defragment of the target,
 * then plan again with its outcome. 0, 1 the status write conflicted (out set), -1 failure.
 */
/* The planned status (Running, and which member) written before a call. 0, 1 conflict, -1. */
static int write_running(struct eo_controller *c, struct defrag_pass *x, const char *ns,
			 const char *name, struct eo_reconcile_out *out)
{
	int rc;

	if (x->pr.status == NULL || !x->pr.status_changed)
		return 0;
	rc = write_status_fresh(c, &x->lc, eo_kube_res_at(RES_DEFRAGS, ns, name), &x->d,
				x->pr.status, EO_KIND_DEFRAG);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		out->requeue_ms = CONFLICT_MS;
		return 1;
	}
	x->in.defrag = x->d;
	return 0;
}

/*
 * EO_DPLAN_MOVE_LEADER: the leader hands its leadership to the planned follower before its
 * own defragment, then plan again with what MoveLeader did. 0, 1 conflict (out set), -1.
 */
static int defrag_move(struct eo_controller *c, struct defrag_pass *x, const char *ns,
		       const char *name, struct eo_reconcile_out *out)
{
	const struct eo_dplan_member *from = &x->mv->v[x->pr.target];
	const struct eo_dplan_member *to = &x->mv->v[x->pr.transferee];
	eo_etcd_client *mc;
	int rc;

	eo_log_kv(EO_LOG_INFO, &x->lc, "moving leadership before the defragment", "member",
		  from->name, "to", to->name, "message", x->pr.message, NULL);
	rc = write_running(c, x, ns, name, out);
	if (rc != 0)
		return rc;
	mc = mview_dial(c, x->mv, EO_DPLAN_MOVE_TIMEOUT_MS);
	x->moved.name = from->name;
	x->moved.to = to->name;
	x->moved.err = mc != NULL && to->st != NULL
			   ? eo_etcd_move_leader(mc, from->endpoint, to->st->member_id, &x->dd)
			   : EO_ETCD_INVALID;
	x->moved.detail = x->dd.message;
	eo_etcd_client_free(mc);
	x->in.moved = &x->moved;
	eo_dplan_result_clear(&x->pr);
	if (eo_plan_defrag(&x->in, &x->pr) != 0)
		return -1;
	eo_log_kv(x->moved.err == EO_ETCD_OK ? EO_LOG_INFO : EO_LOG_WARN, &x->lc,
		  "move leader done", "member", from->name, "to", to->name, "error",
		  eo_etcd_strerror(x->moved.err), "message", x->pr.message, NULL);
	return 0;
}

static int defrag_run(struct eo_controller *c, struct defrag_pass *x, const char *ns,
		      const char *name, struct eo_reconcile_out *out)
{
	const struct eo_dplan_member *t = &x->mv->v[x->pr.target];
	struct eo_etcd_status after = {0};
	int rc;

	eo_log_kv(EO_LOG_INFO, &x->lc, "defragmenting", "member", t->name, "message", x->pr.message,
		  NULL);
	/* Running, and which member, before the call that may take long. */
	rc = write_running(c, x, ns, name, out);
	if (rc != 0)
		return rc;
	x->dc = mview_dial(c, x->mv, EO_DPLAN_MEMBER_TIMEOUT_MS);
	x->done.name = t->name;
	x->done.err =
	    x->dc != NULL ? eo_etcd_defragment(x->dc, t->endpoint, &x->dd) : EO_ETCD_INVALID;
	x->done.detail = x->dd.message;
	x->done.db_size_after = -1;
	if (x->done.err == EO_ETCD_OK &&
	    eo_etcd_status(x->ec, t->endpoint, &after, NULL) == EO_ETCD_OK)
		x->done.db_size_after = after.db_size;
	eo_etcd_status_clear(&after);
	x->in.done = &x->done;
	eo_dplan_result_clear(&x->pr);
	if (eo_plan_defrag(&x->in, &x->pr) != 0)
		return -1;
	eo_log_kv(x->done.err == EO_ETCD_OK ? EO_LOG_INFO : EO_LOG_WARN, &x->lc, "defragment done",
		  "member", x->done.name, "error", eo_etcd_strerror(x->done.err), "message",
		  x->pr.message, NULL);
	return 0;
}

/* The planned status written and its Event; the requeue. 0, 1 conflict (out set), -1. */
static int defrag_report(struct eo_controller *c, struct defrag_pass *x, const char *ns,
			 const char *name, struct eo_reconcile_out *out)
{
	const struct eo_dplan_result *pr = &x->pr;
	int rc;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(c, &x->lc, eo_kube_res_at(RES_DEFRAGS, ns, name),
						x->d, pr->status);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_MS;
			return 1;
		}
		eo_log_kv(EO_LOG_INFO, &x->lc, "defrag status changed", "phase",
			  json_string_value(json_object_get(pr->status, "phase")), "message",
			  pr->message, NULL);
		if (c->rec != NULL && pr->event_type != NULL && pr->event_reason != NULL)
			eo_kube_event(c->rec, x->d, pr->event_type, pr->event_reason, NULL, "%s",
				      pr->message);
	}
	out->requeue_ms = pr->requeue_ms;
	return 0;
}

void eo_defrag_reconcile(struct eo_controller *c, const char *ns, const char *name,
			 struct eo_reconcile_out *out)
{
	struct defrag_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	eo_log_ctx_init(&x.lc);
	eo_log_ctx_add(&x.lc, "defrag", name);
	eo_log_ctx_add(&x.lc, "namespace", ns);
	rc = defrag_observe(c, &x, ns, name);
	if (rc == 0 && eo_plan_defrag(&x.in, &x.pr) != 0)
		rc = -1;
	if (rc == 0 && x.pr.action == EO_DPLAN_QUERY)
		rc = defrag_query(c, &x);
	if (rc == 0) {
		eo_log_ctx_add(&x.lc, "action", eo_dplan_action_name(x.pr.action));
		if (x.pr.action == EO_DPLAN_DEFRAG)
			rc = defrag_run(c, &x, ns, name, out);
		else if (x.pr.action == EO_DPLAN_MOVE_LEADER)
			rc = defrag_move(c, &x, ns, name, out);
	}
	if (rc == 0 && x.pr.action == EO_DPLAN_DELETE) {
		eo_log_kv(EO_LOG_INFO, &x.lc, "deleting a finished EtcdDefrag", "message",
			  x.pr.message, NULL);
		rc = delete_defrag(c, &x.lc, ns, x.d) != 0 ? -1 : 1;
	}
	if (rc == 0)
		rc = defrag_report(c, &x, ns, name, out);
	if (rc < 0)
		out->error = true;
	defrag_pass_clear(&x);
}

/* --- NOSPACE --- */

/* When the last recovery of a cluster ran, by UID (in memory: a restart forgets it, which
 * costs at most one extra recovery). */
#define ATTEMPTS_MAX 256
static struct {
	char uid[64];
	time_t at;
} attempts[ATTEMPTS_MAX];
static pthread_mutex_t attempts_mu = PTHREAD_MUTEX_INITIALIZER;

static time_t attempt_get(const char *uid)
{
	time_t t = 0;

	pthread_mutex_lock(&attempts_mu);
	for (size_t i = 0; i < ATTEMPTS_MAX; i++)
		if (strcmp(attempts[i].uid, uid) == 0)
			t = attempts[i].at;
	pthread_mutex_unlock(&attempts_mu);
	return t;
}

/* Records (at > 0) or forgets (at == 0) the last recovery of uid. */
static void attempt_set(const char *uid, time_t at)
{
	size_t slot = ATTEMPTS_MAX, oldest = 0;

	pthread_mutex_lock(&attempts_mu);
	for (size_t i = 0; i < ATTEMPTS_MAX; i++) {
		if (strcmp(attempts[i].uid, uid) == 0)
			slot = i;
		if (attempts[i].at < attempts[oldest].at)
			oldest = i;
	}
	if (slot == ATTEMPTS_MAX && at != 0)
		slot = oldest;
	if (slot < ATTEMPTS_MAX) {
		snprintf(attempts[slot].uid, sizeof(attempts[slot].uid), "%s", at ? uid : "");
		attempts[slot].at = at;
	}
	pthread_mutex_unlock(&attempts_mu);
}

/* Compaction to the current revision, then a Defragment of each member in order. */
static void recover(struct eo_controller *c, const struct eo_log_ctx *lc, eo_etcd_client *ec,
		    struct mview *mv, const struct eo_nplan_result *pr, char *why, size_t cap)
{
	struct eo_etcd_detail d = {0};
	eo_etcd_client *dc = mview_dial(c, mv, EO_DPLAN_MEMBER_TIMEOUT_MS);
	int64_t rev = 0;
	eo_etcd_err e;

	why[0] = '\0';
	e = eo_etcd_revision(ec, &rev, &d);
	if (e == EO_ETCD_OK)
		e = eo_etcd_compact(ec, rev, true, &d);
	if (e == EO_ETCD_COMPACTED)
		e = EO_ETCD_OK; /* already compacted to that revision */
	if (e != EO_ETCD_OK) {
		snprintf(why, cap, "compaction failed: %s", eo_etcd_strerror(e));
		eo_log_kv(EO_LOG_WARN, lc, "NOSPACE recovery: compaction failed", "error",
			  eo_etcd_strerror(e), "detail", d.message, NULL);
	} else {
		char r[24];

		snprintf(r, sizeof(r), "%lld", (long long)rev);
		eo_log_kv(EO_LOG_INFO, lc, "NOSPACE recovery: compacted", "revision", r, NULL);
	}
	for (size_t k = 0; k < pr->n_order; k++) {
		const struct eo_dplan_member *m = &mv->v[pr->order[k]];

		e = dc != NULL ? eo_etcd_defragment(dc, m->endpoint, &d) : EO_ETCD_INVALID;
		eo_log_kv(e == EO_ETCD_OK ? EO_LOG_INFO : EO_LOG_WARN, lc,
			  "NOSPACE recovery: defragment", "member", m->name, "error",
			  eo_etcd_strerror(e), "detail", d.message, NULL);
		if (e != EO_ETCD_OK && why[0] == '\0')
			snprintf(why, cap, "defragmenting member %s failed: %s", m->name,
				 eo_etcd_strerror(e));
	}
	eo_etcd_client_free(dc);
}

/* What one pass of the NOSPACE reconciler observes, plans and acts with. */
struct nospace_pass {
	struct eo_log_ctx lc;
	struct eo_nplan_input in;
	struct eo_nplan_result pr;
	struct eo_etcd_alarms alarms;
	struct mview *mv;
	json_t *raw, *cluster, *guard_runs, *pvcs;
	eo_etcd_client *ec;
	char uid[64], why[256];
};

static void nospace_pass_clear(struct nospace_pass *x)
{
	eo_etcd_alarms_clear(&x->alarms);
	eo_etcd_client_free(x->ec);
	eo_nplan_result_clear(&x->pr);
	if (x->mv != NULL)
		mview_free(x->mv);
	free(x->mv);
	json_decref(x->guard_runs);
	json_decref(x->pvcs);
	json_decref(x->cluster);
	json_decref(x->raw);
}

/* The EtcdDefrags the quota guard made for the cluster (label EO_LABEL_QUOTA_GUARD). */
static json_t *guard_runs_of(struct eo_controller *c, const char *ns, const char *name)
{
	json_t *all = eo_cache_set_list(&c->defrags, ns), *runs = json_array(), *d;
	size_t i;

	if (all == NULL || runs == NULL) {
		json_decref(all);
		json_decref(runs);
		return NULL;
	}
	json_array_foreach(all, i, d)
	{
		const char *l = eo_meta_label(d, EO_LABEL_QUOTA_GUARD);

		if (l != NULL && strcmp(l, name) == 0 && json_array_append(runs, d) != 0) {
			json_decref(runs);
			runs = NULL;
			break;
		}
	}
	json_decref(all);
	return runs;
}

/*
 * The cluster, and whether there is anything to look at: 0 plan, 1 the pass is over (out
 * set), -1 failure.
 */
static int nospace_observe(struct eo_controller *c, struct nospace_pass *x, const char *ns,
			   const char *name, struct eo_reconcile_out *out)
{
	const json_t *cluster;

	x->raw = eo_cache_set_get(&c->clusters, ns, name);
	if (x->raw == NULL)
		return 1;
	x->cluster = eo_controller_typed_copy(x->raw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
	if ((cluster = x->cluster) == NULL)
		return -1;
	/* a copy: cluster is replaced by the object a status write returns */
	snprintf(x->uid, sizeof(x->uid), "%s",
		 eo_cluster_uid(cluster) ? eo_cluster_uid(cluster) : "");
	if (eo_cluster_is_deleting(cluster) || eo_cluster_cluster_id(cluster) == NULL ||
	    eo_cluster_replicas(cluster) == 0 || x->uid[0] == '\0') {
		/*
		 * Nothing to look at until the cluster changes: a paused cluster, one that has
		 * not formed, one being deleted. Every change of the EtcdCluster (replicas, the
		 * clusterID written into its status) queues this controller again, so no
		 * timer: a thousand paused clusters cost nothing here.
		 */
		out->requeue_ms = 0;
		return 1;
	}
	x->mv = calloc(1, sizeof(*x->mv));
	if (x->mv == NULL)
		return -1;
	x->guard_runs = guard_runs_of(c, ns, name);
	if (x->guard_runs == NULL)
		return -1;
	x->in = (struct eo_nplan_input){.cluster = cluster,
					.last_attempt = attempt_get(x->uid),
					.guard_runs = x->guard_runs,
					.now = now_of(c)};
	return 0;
}

/*
 * The members' PVCs as cached (spec.quotaGuard.autoRaise reads their capacity); a member
 * without one is left out. New reference, NULL on failure.
 */
static json_t *member_pvcs(struct eo_controller *c, const struct mview *mv, const char *ns)
{
	json_t *out = json_array();

	for (size_t i = 0; out != NULL && i < mv->n; i++) {
		char name[EO_NAME_MAX];
		json_t *p;

		if (eo_name_member_pvc(name, sizeof(name), mv->v[i].name) != 0)
			continue;
		p = eo_cache_set_get(&c->pvcs, ns, name);
		if (p != NULL && json_array_append_new(out, p) != 0) {
			json_decref(out);
			out = NULL;
		}
	}
	return out;
}

/*
 * EO_NPLAN_QUERY: the alarms (and, under a NOSPACE alarm, the members' sizes), then plan
 * again. 0, 1 no member to ask (out set), -1 failure.
 */
static int nospace_query(struct eo_controller *c, struct nospace_pass *x,
			 struct eo_reconcile_out *out)
{
	int rc = mview_build(c, &x->lc, x->cluster, x->mv);
	struct eo_quota_guard guard;
	bool nospace = false;

	if (rc < 0)
		return -1;
	if (rc > 0 || x->mv->n == 0) {
		out->requeue_ms = EO_NPLAN_INTERVAL_MS;
		return 1;
	}
	x->ec = mview_dial(c, x->mv, etcd_status_timeout(c));
	if (x->ec == NULL)
		return -1;
	x->in.alarms =
	    eo_etcd_alarm_list(x->ec, &x->alarms, NULL) == EO_ETCD_OK ? &x->alarms : NULL;
	x->in.queried = true;
	x->in.members = x->mv->v;
	x->in.n_members = x->mv->n;
	for (size_t i = 0; x->in.alarms != NULL && i < x->alarms.n; i++)
		nospace |= x->alarms.v[i].type == EO_ETCD_ALARM_NOSPACE;
	eo_cluster_quota_guard(x->cluster, &guard);
	/* The members' sizes: under the alarm, and for the quota guard unless it is off. */
	if (nospace || (guard.enabled && x->in.alarms != NULL))
		mview_query(x->ec, x->mv);
	if (guard.enabled && guard.auto_raise) {
		x->pvcs = member_pvcs(c, x->mv, eo_cluster_namespace(x->cluster));
		if (x->pvcs == NULL)
			return -1;
		x->in.pvcs = x->pvcs;
	}
	if (!nospace && x->in.alarms != NULL && x->in.last_attempt != 0) {
		attempt_set(x->uid, 0); /* the alarm is gone: a new one starts over */
		x->in.last_attempt = 0;
	}
	eo_nplan_result_clear(&x->pr);
	return eo_plan_nospace(&x->in, &x->pr) != 0 ? -1 : 0;
}

/*
 * EO_NPLAN_RECOVER: the status says so first, then compaction and a Defragment of each
 * member, then plan again. 0, 1 the status write conflicted (out set), -1 failure.
 */
static int nospace_recover(struct eo_controller *c, struct nospace_pass *x, const char *ns,
			   const char *name, struct eo_reconcile_out *out)
{
	const struct eo_nplan_result *pr = &x->pr;
	int rc;

	eo_log_kv(EO_LOG_WARN, &x->lc, "NOSPACE alarm: recovering", "message", pr->message, NULL);
	if (pr->status != NULL) { /* say so before the long part */
		rc = write_status_fresh(c, &x->lc, eo_kube_res_at(RES_CLUSTERS, ns, name),
					&x->cluster, pr->status, EO_KIND_CLUSTER);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_MS;
			return 1;
		}
		x->in.cluster = x->cluster;
		if (c->rec != NULL && pr->event_type != NULL)
			eo_kube_event(c->rec, x->cluster, pr->event_type, pr->event_reason, NULL,
				      "%s", pr->message);
	}
	recover(c, &x->lc, x->ec, x->mv, pr, x->why, sizeof(x->why));
	attempt_set(x->uid, now_of(c));
	x->in.last_attempt = now_of(c);
	mview_query(x->ec, x->mv);
	x->in.recovered = true;
	x->in.recover_error = x->why[0] ? x->why : NULL;
	eo_nplan_result_clear(&x->pr);
	return eo_plan_nospace(&x->in, &x->pr) != 0 ? -1 : 0;
}

/* EO_NPLAN_DISARM: every NOSPACE alarm disarmed, then plan again. 0, or -1. */
static int nospace_disarm(struct nospace_pass *x)
{
	bool ok = true;

	for (size_t i = 0; x->in.alarms != NULL && i < x->alarms.n; i++) {
		struct eo_etcd_detail d = {0};
		eo_etcd_err e;

		if (x->alarms.v[i].type != EO_ETCD_ALARM_NOSPACE)
			continue;
		e = eo_etcd_alarm_disarm(x->ec, &x->alarms.v[i], &d);
		if (e != EO_ETCD_OK) {
			ok = false;
			eo_log_kv(EO_LOG_WARN, &x->lc, "disarming the NOSPACE alarm failed",
				  "error", eo_etcd_strerror(e), "detail", d.message, NULL);
		}
	}
	if (!ok)
		return -1;
	eo_log_kv(EO_LOG_INFO, &x->lc, "NOSPACE alarm disarmed", NULL);
	attempt_set(x->uid, 0);
	x->in.disarmed = true;
	eo_nplan_result_clear(&x->pr);
	return eo_plan_nospace(&x->in, &x->pr) != 0 ? -1 : 0;
}

/*
 * EO_NPLAN_GUARD: compaction to the current revision, then the planned EtcdDefrag created
 * (AlreadyExists: made by an earlier pass), with the Event and a log line. A failure is
 * logged with a Warning Event; the next pass tries again. 0, or -1.
 */
static int quota_guard(struct eo_controller *c, struct nospace_pass *x, const char *ns)
{
	const struct eo_nplan_result *pr = &x->pr;
	struct eo_kube_resource r = RES_DEFRAGS;
	struct eo_kube_error kerr = {0};
	struct eo_etcd_detail d = {0};
	eo_etcd_client *cc = mview_dial(c, x->mv, EO_DPLAN_MEMBER_TIMEOUT_MS);
	int64_t rev = 0;
	eo_etcd_err e = cc != NULL ? eo_etcd_revision(cc, &rev, &d) : EO_ETCD_INVALID;
	eo_kube_err ke;
	char revs[24];

	eo_log_kv(EO_LOG_WARN, &x->lc, "quota threshold passed", "message", pr->message, NULL);
	if (e == EO_ETCD_OK)
		e = eo_etcd_compact(cc, rev, true, &d);
	if (e == EO_ETCD_COMPACTED)
		e = EO_ETCD_OK; /* already compacted to that revision */
	eo_etcd_client_free(cc);
	if (e != EO_ETCD_OK) {
		eo_log_kv(EO_LOG_WARN, &x->lc, "quota guard: compaction failed", "error",
			  eo_etcd_strerror(e), "detail", d.message, NULL);
		if (c->rec != NULL)
			eo_kube_event(c->rec, x->cluster, "Warning", EO_REASON_QUOTA_GUARD_FAILED,
				      NULL,
				      "quota guard: compacting to the current revision failed: "
				      "%s; tried again in %lds",
				      eo_etcd_strerror(e), EO_NPLAN_INTERVAL_MS / 1000);
		return 0;
	}
	snprintf(revs, sizeof(revs), "%lld", (long long)rev);
	r.ns = ns;
	ke = eo_kube_create(c->kc, &r, pr->create, NULL, &kerr);
	if (ke != EO_KUBE_OK && ke != EO_KUBE_EEXISTS) {
		eo_log_kv(EO_LOG_WARN, &x->lc, "quota guard: creating the EtcdDefrag failed",
			  "defrag", eo_meta_name(pr->create), "error", eo_kube_strerror(ke),
			  "detail", kerr.message, NULL);
		if (c->rec != NULL)
			eo_kube_event(c->rec, x->cluster, "Warning", EO_REASON_QUOTA_GUARD_FAILED,
				      NULL,
				      "quota guard: compacted to revision %s; creating EtcdDefrag "
				      "%s failed: %s",
				      revs, eo_meta_name(pr->create), kerr.message);
		return 0;
	}
	eo_log_kv(EO_LOG_INFO, &x->lc, "quota guard: compacted, EtcdDefrag created", "revision",
		  revs, "defrag", eo_meta_name(pr->create), NULL);
	if (c->rec != NULL && pr->event_type != NULL)
		eo_kube_event(c->rec, x->cluster, pr->event_type, pr->event_reason, NULL,
			      "%s; compacted to revision %s", pr->message, revs);
	return 0;
}

/* The planned NoSpace condition written and its Event; the requeue. 0, 1 conflict, -1. */
static int nospace_report(struct eo_controller *c, struct nospace_pass *x, const char *ns,
			  const char *name, struct eo_reconcile_out *out)
{
	const struct eo_nplan_result *pr = &x->pr;
	int rc;

	if (pr->status != NULL) {
		rc = eo_controller_write_status(c, &x->lc, eo_kube_res_at(RES_CLUSTERS, ns, name),
						x->in.cluster, pr->status);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			out->requeue_ms = CONFLICT_MS;
			return 1;
		}
		eo_log_kv(pr->note == EO_NPLAN_NOTE_WARN ? EO_LOG_WARN : EO_LOG_INFO, &x->lc,
			  pr->action == EO_NPLAN_RAISE ? "quota auto-raise"
						       : "NoSpace condition changed",
			  "message", pr->message, NULL);
		if (c->rec != NULL && pr->event_type != NULL && pr->event_reason != NULL)
			eo_kube_event(c->rec, x->in.cluster, pr->event_type, pr->event_reason, NULL,
				      "%s", pr->message);
	}
	out->requeue_ms = pr->requeue_ms > 0 ? pr->requeue_ms : EO_NPLAN_INTERVAL_MS;
	return 0;
}

/* observe -> plan, then the query, recovery and disarm rounds, each planning again. */
void eo_nospace_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out)
{
	struct nospace_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	eo_log_ctx_init(&x.lc);
	eo_log_ctx_cluster(&x.lc, ns, name);
	rc = nospace_observe(c, &x, ns, name, out);
	if (rc == 0 && eo_plan_nospace(&x.in, &x.pr) != 0)
		rc = -1;
	if (rc == 0 && x.pr.action == EO_NPLAN_QUERY)
		rc = nospace_query(c, &x, out);
	if (rc == 0 && x.pr.action == EO_NPLAN_RECOVER)
		rc = nospace_recover(c, &x, ns, name, out);
	if (rc == 0 && x.pr.action == EO_NPLAN_DISARM)
		rc = nospace_disarm(&x);
	if (rc == 0 && x.pr.action == EO_NPLAN_GUARD)
		rc = quota_guard(c, &x, ns);
	/* EO_NPLAN_RAISE: only the status (nospace_report), the members roll onto it */
	if (rc == 0 && x.pr.note != EO_NPLAN_NOTE_NONE && x.pr.status == NULL)
		eo_log_kv(x.pr.note == EO_NPLAN_NOTE_WARN ? EO_LOG_WARN : EO_LOG_DEBUG, &x.lc,
			  "quota guard", "message", x.pr.message, NULL);
	if (rc == 0)
		rc = nospace_report(c, &x, ns, name, out);
	if (rc < 0)
		out->error = true;
	nospace_pass_clear(&x);
}
