/*
 * plan/common.c - what the files of the cluster planner share (plan/internal.h): the member
 * counts, the conditions, status fields, message and event of the pass, the etcd view of the
 * members (their entries in etcd's list, the endpoints to reach it through, whether an
 * absence is the leader's word), and the names of the members to create.
 */
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "plan/internal.h"
#include "plan/nodeloss.h"

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

void eo__plan_event(struct eo__plan_ctx *x, const char *type, const char *reason)
{
	x->out->event_type = type;
	x->out->event_reason = reason;
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

	if (eo_present(cur) && !member_named(x->in, cur))
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

	if (eo_present(stored) && want != NULL && strcmp(stored, want) == 0) {
		snprintf(x->out->member_name, sizeof(x->out->member_name), "%s", stored);
		x->out->action = a;
		return;
	}
	eo__plan_msgf(x, "recording the name of the next member (%s) before creating it",
		      want != NULL ? want : "");
	x->out->action = EO_PLAN_WRITE_STATUS;
}

static const char *creation_timestamp(const json_t *obj)
{
	const char *t = json_string_value(eo_meta_get(obj, "creationTimestamp"));

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

/* Whether a and b (b may be NULL) are the same EtcdMember (by name). */
static bool same_member(const json_t *a, const json_t *b)
{
	const char *na = eo_member_name(a), *nb = b != NULL ? eo_member_name(b) : NULL;

	return na != NULL && nb != NULL && strcmp(na, nb) == 0;
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
	    eo_present(in->etcd_leader_why) ? in->etcd_leader_why : "no leader answered");
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
	const char *uid = eo_meta_uid(pm->pod);

	x->out->label_pod = false;
	x->out->pod_uid[0] = '\0';
	if (pm->pod == NULL || !eo_present(uid) || eo_plan_pod_voter_labelled(pm->pod) == voter)
		return;
	if (snprintf(x->out->pod_uid, sizeof(x->out->pod_uid), "%s", uid) >=
	    (int)sizeof(x->out->pod_uid)) {
		x->out->pod_uid[0] = '\0';
		return;
	}
	x->out->label_pod = true;
}
