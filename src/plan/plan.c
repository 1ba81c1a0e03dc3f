/*
 * plan/plan.c - the cluster controller's decisions. See plan.h.
 */
#include "plan/plan.h"
#include "plan/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "plan/certs.h"
#include "plan/auth.h"
#include "plan/failure.h"
#include "plan/podissue.h"
#include "plan/forcenew.h"
#include "plan/nodeloss.h"
#include "plan/roll.h"

static const char *const action_names[EO_PLAN_ACTION_COUNT_] = {
    [EO_PLAN_NONE] = "none",
    [EO_PLAN_WAIT] = "wait",
    [EO_PLAN_ENSURE_SERVICES] = "ensure-services",
    [EO_PLAN_LATCH_TARGET] = "latch-target",
    [EO_PLAN_CREATE_SEED] = "create-seed",
    [EO_PLAN_COMPLETE_SEED] = "complete-seed",
    [EO_PLAN_QUERY_MEMBERS] = "query-members",
    [EO_PLAN_WRITE_STATUS] = "write-status",
    [EO_PLAN_CREATE_MEMBER] = "create-member",
    [EO_PLAN_ADD_LEARNER] = "add-learner",
    [EO_PLAN_SET_INITIAL_CLUSTER] = "set-initial-cluster",
    [EO_PLAN_PROMOTE_LEARNER] = "promote-learner",
    [EO_PLAN_REMOVE_MEMBER] = "remove-member",
    [EO_PLAN_REMOVE_STRAY] = "remove-stray",
    [EO_PLAN_SET_VOTER] = "set-voter",
    [EO_PLAN_ENSURE_PDB] = "ensure-pdb",
    [EO_PLAN_DELETE_PDB] = "delete-pdb",
    [EO_PLAN_SET_DORMANT] = "set-dormant",
    [EO_PLAN_WAKE_DORMANT] = "wake-dormant",
    [EO_PLAN_UPDATE_MEMBER] = "update-member",
    [EO_PLAN_RESTART_MEMBER] = "restart-member",
    [EO_PLAN_MOVE_LEADER] = "move-leader",
    [EO_PLAN_ENSURE_CERTIFICATES] = "ensure-certificates",
    [EO_PLAN_MARK_MEMBER] = "mark-member",
    [EO_PLAN_CLEAR_FORCE_REQUEST] = "clear-force-request",
    [EO_PLAN_ENABLE_AUTH] = "enable-auth",
};

const char *eo_plan_action_name(enum eo_plan_action a)
{
	if ((unsigned)a < EO_PLAN_ACTION_COUNT_ && action_names[a] != NULL)
		return action_names[a];
	return "unknown";
}

void eo_plan_result_clear(struct eo_plan_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->status);
	json_decref(r->object);
	json_decref(r->patch);
	memset(r, 0, sizeof(*r));
}

/* --- the plan --- */

static void append_name(char *buf, size_t cap, const char *name)
{
	size_t len = strlen(buf);

	if (len < cap)
		snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", name ? name : "");
}

/* The Node of pm (one of in->members) as looked up, NULL when nodes are not watched. */
const struct eo_plan_node *eo__plan_node_of(const struct eo_plan_input *in,
					    const struct eo_plan_member *pm)
{
	return in->nodes != NULL ? &in->nodes[pm - in->members] : NULL;
}

/* Whether member pm's node trouble (plan/nodeloss.h) is past the cluster's grace. */
bool eo__plan_node_due(const struct eo_plan_input *in, const struct eo_plan_member *pm)
{
	struct eo_node_verdict v;

	return eo_plan_member_node_trouble(pm, eo__plan_node_of(in, pm),
					   eo_cluster_node_loss_grace_seconds(in->cluster), in->now,
					   &v) &&
	       v.due;
}

void eo__plan_count_members(const struct eo_plan_input *in, struct eo__plan_counts *c)
{
	size_t len = 0;

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < in->n_members; i++) {
		const struct eo_plan_member *pm = &in->members[i];

		if (eo_member_is_deleting(pm->member) || !eo_member_is_voter(pm->member) ||
		    eo_member_dormant(pm->member))
			continue;
		c->voters++;
		if (eo_plan_member_lost_data(pm->member, pm->pod, pm->pvc)) {
			c->voters_lost++;
			append_name(c->voters_lost_names, sizeof(c->voters_lost_names),
				    eo_member_name(pm->member));
		}
		if (eo_plan_member_serving(pm->member, pm->pod))
			c->voters_ready++;
		else
			append_name(c->voters_not_ready, sizeof(c->voters_not_ready),
				    eo_member_name(pm->member));
	}
	for (size_t i = 0; i < in->n_members; i++) {
		const struct eo_plan_member *pm = &in->members[i];

		if (eo_member_is_deleting(pm->member)) {
			c->deleting++;
			continue;
		}
		c->n++;
		if (eo_member_is_pending(pm->member))
			c->pending++;
		if (eo_plan_member_lost_data(pm->member, pm->pod, pm->pvc) ||
		    eo_plan_member_crashlooping(pm->member, pm->pod, NULL, 0))
			c->broken++;
		if (eo__plan_node_due(in, pm))
			c->node_due++;
		if (eo_member_bootstrap(pm->member) && c->seed == NULL)
			c->seed = pm;
		if (eo_member_dormant(pm->member)) {
			c->dormant++;
			if (c->sleeper == NULL)
				c->sleeper = pm;
		}
		if (eo_plan_member_serving(pm->member, pm->pod)) {
			c->ready++;
		} else if (len < sizeof(c->not_ready)) {
			int w = snprintf(c->not_ready + len, sizeof(c->not_ready) - len, "%s%s",
					 len ? ", " : "", eo_member_name(pm->member));
			if (w > 0)
				len += (size_t)w;
		}
	}
}

/*
 * Sets a condition. One that says something is wrong (Available=False, Progressing=True,
 * Degraded=True) also names what keeps members from running, when something does.
 */
void eo__plan_cond(struct eo__plan_ctx *x, const char *type, const char *status, const char *reason,
		   const char *msg)
{
	char full[EO_PLAN_MSG_MAX + EO_PLAN_ISSUES_MAX + 8];
	struct eo_condition c = {type, status, reason, msg, x->gen};
	bool bad = strcmp(status,
			  strcmp(type, EO_COND_AVAILABLE) == 0 ? EO_COND_FALSE : EO_COND_TRUE) == 0;

	if (bad && x->issues[0] != '\0') {
		snprintf(full, sizeof(full), "%s%s%s", msg != NULL ? msg : "",
			 msg != NULL && msg[0] ? "; " : "", x->issues);
		c.message = full;
	}

	if (eo_condition_set(x->st, &c, x->in->now) < 0)
		x->ok = false;
}

void eo__plan_set_status(struct eo__plan_ctx *x, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(x->st, key, v) != 0)
		x->ok = false;
}

void eo__plan_msgf(struct eo__plan_ctx *x, const char *f, ...)
{
	va_list ap;

	va_start(ap, f);
	vsnprintf(x->out->message, sizeof(x->out->message), f, ap);
	va_end(ap);
}

void eo__plan_event(struct eo__plan_ctx *x, const char *type, const char *reason)
{
	x->out->event_type = type;
	x->out->event_reason = reason;
}

static void set_deadline(struct eo__plan_ctx *x)
{
	char ts[EO_TIME_BUF];
	time_t dl = x->in->now + (time_t)eo_cluster_progress_deadline_seconds(x->in->cluster);

	if (eo_time_format(dl, ts, sizeof(ts)) != 0)
		x->ok = false;
	else
		eo__plan_set_status(x, "progressDeadline", json_string(ts));
	/* A new deadline: nothing is held any more. */
	json_object_del(x->st, "membersAtDeadline");
}

static bool services_ok(const struct eo_plan_input *in, bool *ok)
{
	json_t *want_h = eo_desired_headless_service(in->cluster);
	json_t *want_c = eo_desired_client_service(in->cluster);
	json_t *ph = NULL, *pc = NULL;
	bool good = false;

	if (want_h == NULL || want_c == NULL) {
		*ok = false;
		goto out;
	}
	if (in->headless_svc == NULL || in->client_svc == NULL)
		goto out;
	ph = eo_desired_service_patch(want_h, in->headless_svc);
	pc = eo_desired_service_patch(want_c, in->client_svc);
	good = ph == NULL && pc == NULL;
out:
	json_decref(want_h);
	json_decref(want_c);
	json_decref(ph);
	json_decref(pc);
	return good;
}

/* A transport failure (etcd/client.c: TLS errors among them) towards a TLS client API. */
static bool tls_failure(const struct eo_plan_input *in)
{
	struct eo_cluster_tls t;

	eo_cluster_tls(in->cluster, &t);
	return t.client != EO_TLS_NONE && in->etcd_err == EO_ETCD_TRANSPORT;
}

const char *eo__plan_unreachable_reason(const struct eo_plan_input *in)
{
	return tls_failure(in) ? EO_REASON_TLS_HANDSHAKE_FAILED : EO_REASON_CLUSTER_UNREACHABLE;
}

/* The fixed text of a failed member list (no addresses or timings). */
const char *eo__plan_etcd_err_text(const struct eo_plan_input *in)
{
	if (tls_failure(in))
		return "the TLS handshake with etcd failed: etcd's server certificate is not "
		       "signed by ca.crt of the server Secret, or etcd does not accept the "
		       "operator's client certificate";
	return eo_etcd_strerror(in->etcd_err != EO_ETCD_OK ? in->etcd_err : EO_ETCD_PROTOCOL);
}

void eo__plan_etcd_problem(struct eo__plan_ctx *x, const char *reason)
{
	x->etcd_problem = reason;
	snprintf(x->etcd_problem_msg, sizeof(x->etcd_problem_msg), "%s", x->out->message);
}

static void relatch(struct eo__plan_ctx *x, json_t *spec_obs, const char *reason)
{
	eo__plan_set_status(x, "observed", json_incref(spec_obs));
	set_deadline(x);
	eo__plan_msgf(x, "new target latched from the spec (generation %lld)", (long long)x->gen);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, reason, x->out->message);
	eo__plan_event(x, "Normal", reason);
	x->out->action = EO_PLAN_WRITE_STATUS;
}

static bool member_named(const struct eo_plan_input *in, const char *name)
{
	for (size_t i = 0; i < in->n_members; i++) {
		const char *mn = eo_member_name(in->members[i].member);

		if (mn != NULL && strcmp(mn, name) == 0)
			return true;
	}
	return false;
}

/*
 * status.nextMemberName names no EtcdMember yet: the one recorded, or, when none is or an
 * EtcdMember took it, the next one in the chain.
 */
void eo__plan_ensure_next_member_name(struct eo__plan_ctx *x)
{
	const char *cur = json_string_value(json_object_get(x->st, "nextMemberName"));
	char name[EO_PLAN_NAME_MAX], prev[EO_PLAN_NAME_MAX];

	if (eo__plan_present(cur) && !member_named(x->in, cur))
		return;
	snprintf(prev, sizeof(prev), "%s", cur != NULL ? cur : "");
	for (unsigned attempt = 0; attempt < 16; attempt++) {
		if (eo_plan_next_member_name(eo_cluster_name(x->in->cluster),
					     eo_cluster_uid(x->in->cluster), prev, attempt, name,
					     sizeof(name)) != 0)
			break;
		if (!member_named(x->in, name)) {
			eo__plan_set_status(x, "nextMemberName", json_string(name));
			return;
		}
	}
	x->ok = false;
}

/*
 * CREATE_SEED / CREATE_MEMBER under the name the stored status records, so that a retried
 * create collides; when the stored status does not record it yet, write the status first.
 */
void eo__plan_create_named(struct eo__plan_ctx *x, enum eo_plan_action a)
{
	const char *stored = json_string_value(
	    json_object_get(json_object_get(x->in->cluster, "status"), "nextMemberName"));
	const char *want = json_string_value(json_object_get(x->st, "nextMemberName"));

	if (eo__plan_present(stored) && want != NULL && strcmp(stored, want) == 0) {
		snprintf(x->out->member_name, sizeof(x->out->member_name), "%s", stored);
		x->out->action = a;
		return;
	}
	eo__plan_msgf(x, "recording the name of the next member (%s) before creating it",
		      want != NULL ? want : "");
	x->out->action = EO_PLAN_WRITE_STATUS;
}

/* --- membership of a bootstrapped cluster --- */

static const char *creation_timestamp(const json_t *obj)
{
	const char *t = json_string_value(
	    json_object_get(json_object_get(obj, "metadata"), "creationTimestamp"));

	return t != NULL ? t : "";
}

/* > 0 when a is newer than b: creationTimestamp, then name (both descending). */
int eo__plan_newer(const json_t *a, const json_t *b)
{
	int d = strcmp(creation_timestamp(a), creation_timestamp(b));
	const char *na = eo_member_name(a), *nb = eo_member_name(b);

	if (d != 0)
		return d;
	return strcmp(na != NULL ? na : "", nb != NULL ? nb : "");
}

int eo__plan_peer_url_of(struct eo__plan_ctx *x, const json_t *member, char *buf, size_t n)
{
	const struct eo_plan_input *in = x->in;

	if (eo_desired_member_peer_url(buf, n, in->build, eo_member_name(member),
				       eo_member_service(member), eo_cluster_namespace(in->cluster),
				       eo_desired_member_peer_tls(member)) != 0) {
		x->ok = false;
		return -1;
	}
	return 0;
}

/* etcd's entry for an EtcdMember, or NULL. */
const struct eo_etcd_member *eo__plan_etcd_entry(struct eo__plan_ctx *x, const json_t *member)
{
	char peer[EO_DESIRED_URL_MAX];

	if (x->in->etcd == NULL || eo__plan_peer_url_of(x, member, peer, sizeof(peer)) != 0)
		return NULL;
	return eo_plan_find_etcd_member(x->in->etcd, eo_member_name(member), peer);
}

/* The EtcdMember (deleting or not) etcd's entry em stands for, or NULL. */
const struct eo_plan_member *eo__plan_member_of(struct eo__plan_ctx *x,
						const struct eo_etcd_member *em)
{
	for (size_t i = 0; i < x->in->n_members; i++) {
		const struct eo_plan_member *pm = &x->in->members[i];

		if (eo__plan_etcd_entry(x, pm->member) == em)
			return pm;
	}
	return NULL;
}

/*
 * Client URLs to reach etcd through: the voters that have a running Pod (never a learner), or,
 * when no member is marked as a voter, every member with a running Pod; the oldest Pod first.
 *
 * The order matters for membership changes. etcd's strict reconfiguration check runs on the
 * member that receives the request: a member add is refused ("unhealthy cluster") unless that
 * member has been connected, for the last 5 s, to a quorum of the voters plus the newcomer
 * (etcd 3.6), which counts as absent. A voter promoted a moment ago has had its connections
 * only since its Pod started, so asked first it refuses for up to 5 s; the oldest Pod has had
 * them longest, and accepts at once whenever the voters without the newest make that quorum
 * (4 voters -> 5: three connected members suffice).
 */
/* Whether a and b (b may be NULL) are the same EtcdMember (by name). */
static bool same_member(const json_t *a, const json_t *b)
{
	const char *na = eo_member_name(a), *nb = b != NULL ? eo_member_name(b) : NULL;

	return na != NULL && nb != NULL && strcmp(na, nb) == 0;
}

int eo_plan_voter_endpoints(const struct eo_plan_member *members, size_t n_members,
			    const json_t *exclude, const json_t *cluster,
			    const struct eo_desired_opts *build,
			    char endpoints[][EO_DESIRED_URL_MAX], size_t cap)
{
	const char *ns = eo_cluster_namespace(cluster);
	const struct eo_plan_member *pick[EO_PLAN_MAX_ENDPOINTS];
	size_t n = 0;

	if (cap > EO_PLAN_MAX_ENDPOINTS)
		cap = EO_PLAN_MAX_ENDPOINTS;
	for (int pass = 0; pass < 2 && n == 0; pass++) {
		for (size_t i = 0; i < n_members; i++) {
			const struct eo_plan_member *pm = &members[i];
			size_t j;

			if (!eo_plan_pod_running(pm->pod) || eo_member_is_deleting(pm->member) ||
			    same_member(pm->member, exclude) ||
			    (pass == 0 && !eo_member_is_voter(pm->member)))
				continue;
			/* Insertion by Pod age, oldest first; the newest fall off. */
			for (j = n; j > 0 && eo__plan_newer(pick[j - 1]->pod, pm->pod) > 0; j--)
				if (j < cap)
					pick[j] = pick[j - 1];
			if (j < cap)
				pick[j] = pm;
			if (n < cap)
				n++;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (eo_desired_member_client_url(
			endpoints[i], EO_DESIRED_URL_MAX, build, eo_member_name(pick[i]->member),
			eo_member_service(pick[i]->member), ns,
			eo_desired_member_client_tls(pick[i]->member)) != 0)
			return -1;
	return (int)n;
}

void eo__plan_voter_endpoints(struct eo__plan_ctx *x)
{
	int n = eo_plan_voter_endpoints(x->in->members, x->in->n_members, NULL, x->in->cluster,
					x->in->build, x->out->endpoints, EO_PLAN_MAX_ENDPOINTS);

	x->out->n_endpoints = n > 0 ? (size_t)n : 0;
	if (n < 0)
		x->ok = false;
}

void eo__plan_wait_for(struct eo__plan_ctx *x, long requeue_ms)
{
	x->out->action = EO_PLAN_WAIT;
	x->out->requeue_ms = requeue_ms;
}

/*
 * Whether a step may act on member's absence from etcd's list (or on a voter the list shows as
 * a learner): only on the leader's own answer (step_query checked the cluster ID). Before the
 * controller asked the leader, the plan asks for it (QUERY_MEMBERS with want_leader); when the
 * leader could not confirm the list, the step waits and says which check failed. False in both
 * cases: the step has decided.
 */
bool eo__plan_absence_verified(struct eo__plan_ctx *x, const json_t *member, const char *what)
{
	const struct eo_plan_input *in = x->in;

	if (in->etcd_leader_checked && in->etcd_from_leader)
		return true;
	if (!in->etcd_leader_checked) {
		eo__plan_msgf(
		    x,
		    "member %s %s the member list read through the voters; confirming with "
		    "etcd's leader before acting on it",
		    eo_member_name(member), what);
		x->out->action = EO_PLAN_QUERY_MEMBERS;
		x->out->want_leader = true;
		return false;
	}
	eo__plan_msgf(
	    x,
	    "member %s %s the member list read through the voters, but the list could not be "
	    "confirmed as etcd's leader's: %s; nothing is decided from it, retrying",
	    eo_member_name(member), what,
	    eo__plan_present(in->etcd_leader_why) ? in->etcd_leader_why : "no leader answered");
	eo__plan_event(x, "Warning", EO_PLAN_REASON_LIST_UNVERIFIED);
	eo__plan_etcd_problem(x, EO_PLAN_REASON_LIST_UNVERIFIED);
	eo__plan_wait_for(x, EO_PLAN_REQUEUE_ETCD_MS);
	return false;
}

/*
 * With a voter mark (SET_VOTER, PROMOTE_LEARNER): whether the member's Pod must gain or lose
 * the voter label in the same pass, and the Pod's UID for the patch's precondition. The
 * member controller would do it on its next pass too, but that pass may come late (behind
 * other members' etcd queries, or after a leader handover), and meanwhile the client Service
 * and the PDB would miss a voter or count a non-voter.
 */
void eo__plan_relabel_with_mark(struct eo__plan_ctx *x, const struct eo_plan_member *pm, bool voter)
{
	const char *uid =
	    json_string_value(json_object_get(json_object_get(pm->pod, "metadata"), "uid"));

	x->out->label_pod = false;
	x->out->pod_uid[0] = '\0';
	if (pm->pod == NULL || !eo__plan_present(uid) ||
	    eo_plan_pod_voter_labelled(pm->pod) == voter)
		return;
	if (snprintf(x->out->pod_uid, sizeof(x->out->pod_uid), "%s", uid) >=
	    (int)sizeof(x->out->pod_uid)) {
		x->out->pod_uid[0] = '\0';
		return;
	}
	x->out->label_pod = true;
}

static void finish(struct eo__plan_ctx *x, const json_t *cur)
{
	json_t *empty = json_object();

	if ((x->out->action == EO_PLAN_QUERY_MEMBERS || x->out->action == EO_PLAN_ENSURE_SERVICES ||
	     x->out->action == EO_PLAN_ENSURE_CERTIFICATES) &&
	    x->in->failure == NULL) {
		/* No status write on these passes: the next pass computes it. */
		json_decref(x->st);
		x->st = NULL;
	} else if (eo_plan_failure_apply(x->st, x->in->failure, EO_COND_DEGRADED, EO_COND_TRUE,
					 x->gen, x->in->now) != 0) {
		/* A refused write says so in Degraded; a stale one goes once nothing refuses. */
		x->ok = false;
	}
	x->out->status = x->st;
	x->st = NULL;
	x->out->status_changed =
	    x->out->status != NULL && !json_equal(cur != NULL ? cur : empty, x->out->status);
	json_decref(empty);
}

/*
 * The first object under one of the cluster's own names that the cluster does not control:
 * another EtcdCluster's (cluster x's client Service x-client is cluster x-client's headless
 * Service), a user's, or one with no owner. Its kind into *kind; NULL when there is none.
 */
static const json_t *foreign_object(const struct eo_plan_input *in, const char **kind)
{
	const struct {
		const json_t *obj;
		const char *kind;
	} seen[] = {{in->headless_svc, "Service"},
		    {in->client_svc, "Service"},
		    {in->pdb, "PodDisruptionBudget"},
		    {in->netpol, "NetworkPolicy"}};
	const char *uid = eo_cluster_uid(in->cluster);

	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		if (seen[i].obj != NULL && !eo_desired_is_controlled_by(seen[i].obj, uid)) {
			*kind = seen[i].kind;
			return seen[i].obj;
		}
	return NULL;
}

/*
 * A name the cluster needs is held by an object it does not control: that object is never
 * patched or deleted, and nothing else is done (true). Before the cluster formed Available
 * says so and no member is created, so a cluster whose names collide leaves nothing behind;
 * after, the members keep serving, Available tells how they are, Degraded says so and
 * membership changes wait. Looked at again every 30 s: the holder's events do not wake this
 * cluster.
 */
static bool stop_foreign(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running)
{
	const char *kind = NULL;
	const json_t *o = foreign_object(x->in, &kind);
	const char *name =
	    json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
	char holder[2 * EO_NAME_MAX + 64];

	if (o == NULL)
		return false;
	eo_desired_controller_of(o, holder, sizeof(holder));
	eo__plan_msgf(
	    x,
	    "%s %s is not controlled by this EtcdCluster (its controller: %s): it is left as it "
	    "is and nothing else is done for this cluster until the name is free (delete or "
	    "rename the other object, or delete this EtcdCluster)",
	    kind, name != NULL ? name : "?", holder);
	if (running) {
		eo__plan_health_of(x, c, true);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT,
			      x->out->message);
	} else {
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT,
			      x->out->message);
	}
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT,
		      x->out->message);
	eo__plan_event(x, "Warning", EO_REASON_FOREIGN_OBJECT);
	x->out->action = EO_PLAN_NONE;
	x->out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
	return true;
}

/*
 * A terminal or refusing state (message in out->message): Available and Progressing False with
 * reason, Degraded still from the members when the cluster runs, a Warning Event, no action.
 */
void eo__plan_stop_with(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
			const char *reason)
{
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, reason, x->out->message);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, reason, x->out->message);
	if (running)
		eo__plan_health_of(x, c, false);
	eo__plan_event(x, "Warning", reason);
	x->out->action = EO_PLAN_NONE;
}

/*
 * The TLS material is unusable: nothing is touched. Before the cluster formed Available says
 * so; after, Available keeps telling how the members are and Degraded says so.
 */
void eo__plan_stop_tls(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
		       const char *reason)
{
	if (running) {
		eo__plan_health_of(x, c, true);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, reason, x->out->message);
	} else {
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, reason, x->out->message);
	}
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, reason, x->out->message);
	eo__plan_event(x, "Warning", reason);
	x->out->action = EO_PLAN_NONE;
	x->out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
}

/* The message of DeadlineExceeded: what waits and what still runs. */
#define DEADLINE_MSG                                                                               \
	"the target in status.observed was not reached before status.progressDeadline; "           \
	"lost and crash-looping members are still replaced, but nothing grows or rolls "           \
	"further: edit the spec to resume"

/*
 * Past the deadline, spec unchanged: the pass goes on in held mode (struct eo__plan_ctx). The
 * size to heal back to is recorded on the first such pass and kept until a new target is
 * latched.
 */
static void hold(struct eo__plan_ctx *x, const struct eo__plan_counts *c)
{
	const json_t *rec = json_object_get(x->st, "membersAtDeadline");

	x->held = true;
	if (json_is_integer(rec) && json_integer_value(rec) >= 0 &&
	    json_integer_value(rec) <= INT32_MAX) {
		x->held_size = (int32_t)json_integer_value(rec);
		return;
	}
	x->held_size = (int32_t)(c->n + c->deleting);
	eo__plan_set_status(x, "membersAtDeadline", json_integer(x->held_size));
}

/*
 * Held: Available and Progressing say DeadlineExceeded whatever healing step this pass takes
 * (Degraded tells how the members are), unless this pass found the quorum gone for good or
 * the cluster paused, which own all three. The Warning Event is the step's own when it has
 * one.
 */
static void held_conditions(struct eo__plan_ctx *x)
{
	const char *r = eo_condition_reason(x->st, EO_COND_PROGRESSING);

	if (r != NULL &&
	    (strcmp(r, EO_REASON_QUORUM_LOST) == 0 || strcmp(r, EO_REASON_PAUSED) == 0))
		return;
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED,
		      DEADLINE_MSG);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_DEADLINE_EXCEEDED,
		      DEADLINE_MSG);
	if (x->out->event_reason == NULL)
		eo__plan_event(x, "Warning", EO_REASON_DEADLINE_EXCEEDED);
	if (x->out->action == EO_PLAN_NONE && x->out->message[0] == '\0')
		eo__plan_msgf(x, "%s", DEADLINE_MSG);
}

int eo_plan_cluster(const struct eo_plan_input *in, struct eo_plan_result *out)
{
	const json_t *cluster = in->cluster;
	const char *name = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const char *uid = eo_cluster_uid(cluster);
	json_t *cur = json_object_get(cluster, "status");
	json_t *spec_obs = NULL, *observed = NULL;
	struct eo__plan_ctx x = {.in = in, .out = out, .ok = true};
	char buf[EO_PLAN_MSG_MAX], token[EO_NAME_MAX], selector[EO_NAME_MAX];
	char refusal[EO_PLAN_MSG_MAX];
	bool spec_differs = false, refused = false;
	struct eo__plan_counts c;
	int32_t desired;
	time_t dl = 0;
	bool has_dl, complete, running;

	memset(out, 0, sizeof(*out));
	if (!eo__plan_present(name) || !eo__plan_present(ns) || !eo__plan_present(uid))
		return -1;
	if (eo_cluster_is_deleting(cluster)) {
		out->action = EO_PLAN_NONE; /* children go with the owner references */
		return 0;
	}
	if (eo_cluster_migrating(cluster)) {
		/* `kubectl etcd migrate` is adopting a legacy cluster: nothing is touched. */
		snprintf(out->message, sizeof(out->message),
			 "held by kubectl etcd migrate (annotation %s); waiting",
			 EO_ANNOTATION_MIGRATING);
		out->action = EO_PLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return 0;
	}
	x.gen = eo_cluster_generation(cluster);
	x.st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (x.st == NULL)
		return -1;

	/* What the status says about the members holds whatever the spec says. */
	if (eo_name_cluster_selector(selector, sizeof(selector), name) != 0) {
		x.ok = false;
		goto done;
	}
	eo__plan_count_members(in, &c);
	eo__plan_ensure_next_member_name(&x);
	(void)eo_plan_member_issues(in->members, in->n_members, in->now, x.issues,
				    sizeof(x.issues));
	eo__plan_set_status(&x, "selector", json_string(selector));
	eo__plan_set_status(&x, "readyMembers", json_integer((json_int_t)c.ready));
	eo__plan_set_status(&x, "brokenMembers", json_integer((json_int_t)c.broken));
	running = eo__plan_present(eo_cluster_cluster_id(cluster)) && c.dormant == 0 && c.n > 0;

	if (eo_cluster_validate(cluster, NULL, buf, sizeof(buf)) != 0) {
		eo__plan_msgf(&x, "invalid spec: %s", buf);
		eo__plan_stop_with(&x, &c, running, EO_REASON_INVALID_SPEC);
		goto done;
	}
	if (eo_cluster_uses_cert_manager(cluster) && eo__plan_step_certs(&x, &c, running))
		goto done;
	if (eo__plan_present(in->tls_reason)) {
		eo__plan_msgf(&x, "%s", in->tls_message != NULL ? in->tls_message : in->tls_reason);
		eo__plan_stop_tls(&x, &c, running, in->tls_reason);
		goto done;
	}
	if (eo__plan_present(in->ca_bundle_digest) &&
	    (eo_cluster_ca_bundle_digest(cluster) == NULL ||
	     strcmp(in->ca_bundle_digest, eo_cluster_ca_bundle_digest(cluster)) != 0)) {
		/*
		 * A first record (a cluster created before this field, or a new one) rolls the
		 * running Pods too: nothing says which bundle they read; the message says "changed"
		 * only for a real change.
		 */
		x.ca_changed = eo_cluster_ca_bundle_digest(cluster) != NULL;
		eo__plan_set_status(&x, "caBundleDigest", json_string(in->ca_bundle_digest));
	}
	if (stop_foreign(&x, &c, running))
		goto done;
	if (!services_ok(in, &x.ok)) {
		eo__plan_msgf(&x, "ensuring Services %s and %s-client", name, name);
		out->action = EO_PLAN_ENSURE_SERVICES;
		out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		goto done;
	}

	/* The locking pattern: latch token and target on the first pass. */
	desired = eo_cluster_replicas(cluster);
	if (!eo__plan_present(eo_cluster_cluster_token(cluster))) {
		if (eo_name_cluster_token(token, sizeof(token), ns, name, uid) != 0) {
			x.ok = false;
			goto done;
		}
		eo__plan_set_status(&x, "clusterToken", json_string(token));
	}
	spec_obs = eo_desired_observed(cluster);
	if (spec_obs == NULL) {
		x.ok = false;
		goto done;
	}
	observed = json_object_get(x.st, "observed");
	if (!json_is_object(observed)) {
		eo__plan_set_status(&x, "observed", json_incref(spec_obs));
		set_deadline(&x);
		eo__plan_msgf(&x, "latched the initial target: %d member(s) of etcd %s", desired,
			      eo_cluster_version(cluster));
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_REASON_INITIAL_SNAPSHOT,
			      desired > 0 ? "bootstrapping the cluster from a single seed member"
					  : out->message);
		out->action = EO_PLAN_LATCH_TARGET;
		goto done;
	}
	if (!eo__plan_present(eo_cluster_cluster_token(cluster))) {
		out->action = EO_PLAN_LATCH_TARGET;
		eo__plan_msgf(&x, "latched the cluster token");
		goto done;
	}
	desired = (int32_t)json_integer_value(json_object_get(observed, "replicas"));
	has_dl = eo_cluster_progress_deadline(cluster, &dl);
	x.observed = observed;
	eo__plan_fill_roll_view(&x);
	if (!x.ok)
		goto done;
	if (eo__plan_present(eo_cluster_cluster_id(cluster))) {
		eo__plan_set_status(&x, "updatedMembers", json_integer((json_int_t)x.rv.updated));
		if (x.rv.todo == 0)
			json_object_del(x.st, "rollingMember");
	}
	spec_differs = !json_equal(spec_obs, observed);
	if (spec_differs && eo__plan_version_refused(&x, observed, refusal, sizeof(refusal))) {
		spec_differs = false;
		refused = true;
	}
	if (eo__plan_present(eo_cluster_cluster_id(cluster)) && desired == 0)
		complete = c.deleting == 0 && c.n == 1 && c.dormant == 1; /* paused */
	else if (eo__plan_present(eo_cluster_cluster_id(cluster)))
		complete = c.deleting == 0 && c.pending == 0 && c.dormant == 0 &&
			   (int32_t)c.n == desired && (int32_t)c.ready == desired &&
			   c.voters == c.n && x.rv.todo == 0;
	else
		complete = desired == 0 && c.n == 0 && c.deleting == 0;

	if (complete) {
		if (spec_differs) {
			/* Adopt the changed spec as the next target, then act on it. */
			relatch(&x, spec_obs, EO_REASON_SPEC_CHANGED);
			if (eo__plan_present(eo_cluster_cluster_id(cluster)) && c.dormant == 0)
				eo__plan_health(&x, &c);
			goto done;
		}
		if (json_object_get(x.st, "progressDeadline") != NULL)
			json_object_del(x.st, "progressDeadline");
		json_object_del(x.st, "membersAtDeadline");
		has_dl = false;
	} else if (!has_dl && spec_differs) {
		/*
		 * The last target was reached (its deadline dropped) and the cluster drifted since
		 * (a member down): nothing is in flight, so the edit becomes the next target now
		 * rather than waiting for a health that may depend on it.
		 */
		relatch(&x, spec_obs, EO_REASON_SPEC_CHANGED);
		if (running)
			eo__plan_health(&x, &c);
		goto done;
	} else if (!has_dl && running && x.rv.outdated > 0 && !eo__plan_force_active(&x)) {
		/*
		 * The spec did not move but the Pod the members should run did (an operator
		 * upgrade that renders Pods differently): roll them, under a deadline like any
		 * target.
		 */
		set_deadline(&x);
		if (x.ca_changed)
			eo__plan_msgf(
			    &x,
			    "the CA bundle of the TLS Secrets changed (status.caBundleDigest): "
			    "rolling %zu member(s) one at a time so that etcd reads it",
			    x.rv.outdated);
		else
			eo__plan_msgf(
			    &x,
			    "%zu member(s) run a Pod that differs from the desired one; rolling "
			    "them",
			    x.rv.outdated);
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_TRUE, EO_PLAN_REASON_ROLLING,
			      out->message);
		eo__plan_event(&x, "Normal", EO_PLAN_REASON_ROLLING);
		eo__plan_health(&x, &c);
		out->action = EO_PLAN_WRITE_STATUS;
		goto done;
	} else if (has_dl && in->now >= dl && !eo__plan_force_active(&x)) {
		/* (A quorum-loss recovery goes on past the deadline: it is what unsticks it.) */
		if (!eo__plan_present(eo_cluster_cluster_id(cluster))) {
			eo__plan_msgf(
			    &x, "the cluster did not bootstrap before status.progressDeadline; "
				"delete and recreate it");
			eo__plan_stop_with(&x, &c, false, EO_REASON_BOOTSTRAP_FAILED);
			goto done;
		}
		if (spec_differs) {
			relatch(&x, spec_obs, EO_REASON_RETRY_AFTER_DEADLINE);
			eo__plan_health(&x, &c);
			goto done;
		}
		hold(&x, &c);
	}

	if (eo__plan_step_auth(&x, &c, running, running && complete))
		goto done;
	if (!eo__plan_present(eo_cluster_cluster_id(cluster)))
		eo__plan_step_bootstrap(&x, &c, desired);
	else
		eo__plan_step_running(&x, &c, desired, has_dl && !complete);
	if (x.held) {
		held_conditions(&x);
	} else if (refused && (!has_dl || complete || in->now >= dl)) {
		/* The edit would have been latched: say why it was not. */
		eo__plan_cond(&x, EO_COND_PROGRESSING, EO_COND_FALSE,
			      EO_PLAN_REASON_VERSION_REFUSED, refusal);
		if (out->event_reason == NULL) {
			eo__plan_event(&x, "Warning", EO_PLAN_REASON_VERSION_REFUSED);
			if (out->action == EO_PLAN_NONE || out->action == EO_PLAN_WAIT)
				eo__plan_msgf(&x, "%s", refusal);
		}
	}
done:
	json_decref(spec_obs);
	if (x.ok)
		finish(&x, cur);
	json_decref(x.st);
	if (!x.ok) {
		eo_plan_result_clear(out);
		return -1;
	}
	return 0;
}
