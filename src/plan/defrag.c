/*
 * plan/defrag.c - the next step of an EtcdDefrag. See defrag.h.
 */
#include "plan/defrag.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/defrag.h"
#include "api/timeutil.h"
#include "api/meta.h"

const char *eo_dplan_action_name(enum eo_dplan_action a)
{
	switch (a) {
	case EO_DPLAN_WAIT:
		return "wait";
	case EO_DPLAN_QUERY:
		return "query";
	case EO_DPLAN_DEFRAG:
		return "defragment";
	case EO_DPLAN_DELETE:
		return "delete";
	case EO_DPLAN_MOVE_LEADER:
		return "move-leader";
	case EO_DPLAN_NONE:
	default:
		return "none";
	}
}

void eo_dplan_result_clear(struct eo_dplan_result *r)
{
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

static void msgf(struct eo_dplan_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void msgf(struct eo_dplan_result *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
}

/* "12.3 MiB" style, for messages. */
static const char *human(int64_t b, char *buf, size_t n)
{
	if (b >= (1LL << 30))
		snprintf(buf, n, "%.1f GiB", (double)b / (double)(1LL << 30));
	else if (b >= (1LL << 20))
		snprintf(buf, n, "%.1f MiB", (double)b / (double)(1LL << 20));
	else if (b >= 1024)
		snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
	else
		snprintf(buf, n, "%" PRId64 " B", b);
	return buf;
}

uint64_t eo_dplan_healthy(const struct eo_dplan_member *members, size_t n, bool ignore_alarms,
			  char *buf, size_t cap)
{
	uint64_t leader = 0;
	bool leader_is_member = false;

	if (n == 0) {
		snprintf(buf, cap, "the cluster has no member to reach");
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct eo_dplan_member *m = &members[i];

		if (m->st == NULL) {
			snprintf(buf, cap, "member %s does not answer (%s)", m->name,
				 m->error != NULL ? m->error : "no status");
			return 0;
		}
		if (m->st->is_learner) {
			snprintf(buf, cap, "member %s is a learner", m->name);
			return 0;
		}
		if (!ignore_alarms && m->st->n_errors > 0) {
			snprintf(buf, cap, "member %s reports: %s", m->name, m->st->errors[0]);
			return 0;
		}
		if (m->st->leader == 0) {
			snprintf(buf, cap, "member %s knows no leader", m->name);
			return 0;
		}
		if (leader != 0 && m->st->leader != leader) {
			snprintf(buf, cap,
				 "the members disagree on the leader (member %s names another)",
				 m->name);
			return 0;
		}
		leader = m->st->leader;
		if (m->st->raft_index > m->st->raft_applied_index &&
		    m->st->raft_index - m->st->raft_applied_index > EO_DPLAN_MAX_APPLY_LAG) {
			snprintf(buf, cap, "member %s is %" PRIu64 " raft entries behind", m->name,
				 m->st->raft_index - m->st->raft_applied_index);
			return 0;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (members[i].st->member_id == leader)
			leader_is_member = true;
	if (!leader_is_member) {
		snprintf(buf, cap, "the leader is not one of the members the operator reaches");
		return 0;
	}
	buf[0] = '\0';
	return leader;
}

bool eo_dplan_foreign(const json_t *cluster, const struct eo_dplan_member *members, size_t n,
		      char *buf, size_t cap)
{
	for (size_t i = 0; i < n; i++) {
		char got[EO_PLAN_ID_MAX];

		if (members[i].st == NULL ||
		    eo_plan_same_cluster(cluster, members[i].st->cluster_id))
			continue;
		eo_plan_format_id(members[i].st->cluster_id, got, sizeof(got));
		snprintf(buf, cap,
			 "member %s answers for etcd cluster %s, not %s (status.clusterID): "
			 "another etcd cluster answers at its address",
			 members[i].name, got, eo_cluster_cluster_id(cluster));
		return true;
	}
	return false;
}

int64_t eo_dplan_quota(const json_t *cluster, const struct eo_dplan_member *members, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (members[i].st != NULL && members[i].st->db_size_quota > 0)
			return members[i].st->db_size_quota;
	/* spec.options.quotaBackendBytes or etcd's default, or the quota autoRaise set */
	return eo_cluster_effective_quota(cluster);
}

static const char *created_at(const json_t *obj)
{
	return json_string_value(eo_meta_get(obj, "creationTimestamp"));
}

/* --- status --- */

struct work {
	const struct eo_dplan_input *in;
	struct eo_dplan_result *out;
	json_t *st;
	int64_t generation;
};

static int set_phase(struct work *w, enum eo_defrag_phase phase)
{
	char ts[EO_TIME_BUF];

	if (json_object_set_new(w->st, "phase", json_string(eo_defrag_phase_str(phase))) != 0)
		return -1;
	if (eo_time_format(w->in->now, ts, sizeof(ts)) != 0)
		return -1;
	if ((phase == EO_DEFRAG_PHASE_RUNNING || eo_defrag_phase_is_terminal(phase)) &&
	    json_object_get(w->st, "startTime") == NULL &&
	    json_object_set_new(w->st, "startTime", json_string(ts)) != 0)
		return -1;
	if (eo_defrag_phase_is_terminal(phase) &&
	    json_object_set_new(w->st, "completionTime", json_string(ts)) != 0)
		return -1;
	return 0;
}

/* Finishes the result: phase, the Ready condition, the Event. */
static int finish(struct work *w, enum eo_dplan_action action, enum eo_defrag_phase phase,
		  const char *cond_status, const char *reason, const char *event_type)
{
	struct eo_condition c = {.type = EO_COND_DEFRAG_READY,
				 .status = cond_status,
				 .reason = reason,
				 .message = w->out->message,
				 .observed_generation = w->generation};
	const json_t *cur = json_object_get(w->in->defrag, "status");

	if (set_phase(w, phase) != 0 || eo_condition_set(w->st, &c, w->in->now) < 0)
		return -1;
	w->out->action = action;
	w->out->event_type = event_type;
	w->out->event_reason = reason;
	w->out->status = w->st;
	w->st = NULL;
	w->out->status_changed = !json_equal(w->out->status, cur);
	if (!w->out->status_changed)
		w->out->event_type = NULL; /* the Event goes with the change only */
	return 0;
}

static int pending(struct work *w, const char *reason, const char *event_type)
{
	enum eo_defrag_phase p = eo_defrag_phase(w->in->defrag);

	w->out->requeue_ms = EO_DPLAN_RETRY_MS;
	return finish(w, EO_DPLAN_WAIT,
		      p == EO_DEFRAG_PHASE_RUNNING ? EO_DEFRAG_PHASE_RUNNING
						   : EO_DEFRAG_PHASE_PENDING,
		      EO_COND_FALSE, reason, event_type);
}

static int failed(struct work *w, const char *reason)
{
	return finish(w, EO_DPLAN_NONE, EO_DEFRAG_PHASE_FAILED, EO_COND_FALSE, reason, "Warning");
}

static json_t *member_entry(json_t *st, const char *name, bool create)
{
	json_t *a = json_object_get(st, "members"), *e;
	size_t i;

	json_array_foreach(a, i, e)
	{
		const char *n = json_string_value(json_object_get(e, "name"));

		if (n != NULL && strcmp(n, name) == 0)
			return e;
	}
	if (!create)
		return NULL;
	if (!json_is_array(a)) {
		a = json_array();
		if (a == NULL || json_object_set_new(st, "members", a) != 0)
			return NULL;
	}
	e = json_pack("{s:s}", "name", name);
	if (e == NULL || json_array_append_new(a, e) != 0)
		return NULL;
	return e;
}

static bool entry_final(const json_t *e)
{
	return json_string_value(json_object_get(e, "outcome")) != NULL;
}

static int64_t int_of(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static int add_int(json_t *o, const char *key, int64_t delta)
{
	return json_object_set_new(o, key, json_integer(int_of(o, key) + delta));
}

/* --- the order and the rule --- */

static int cmp_name(const void *a, const void *b)
{
	const struct eo_dplan_member *x = *(const struct eo_dplan_member *const *)a;
	const struct eo_dplan_member *y = *(const struct eo_dplan_member *const *)b;

	return strcmp(x->name, y->name);
}

/* Reclaimable bytes of m and whether the rule asks for its defragment (why in buf when not). */
static bool wants_defrag(const struct eo_defrag_rule *r, int64_t quota,
			 const struct eo_dplan_member *m, char *buf, size_t cap)
{
	int64_t reclaim = m->st->db_size - m->st->db_size_in_use, floor = r->free_space_above;
	char a[32], b[32];

	if (r->all)
		return true;
	if (reclaim < 0)
		reclaim = 0;
	if (r->quota_usage_above > 0 && quota > 0 &&
	    (double)m->st->db_size * 100.0 > (double)quota * r->quota_usage_above)
		floor = r->min_reclaim;
	if (reclaim > floor)
		return true;
	snprintf(buf, cap, "reclaimable %s is not above %s", human(reclaim, a, sizeof(a)),
		 human(floor, b, sizeof(b)));
	return false;
}

/*
 * Walks the members in order (followers by name, then the leader), marking Skipped those the
 * rule leaves alone; *target gets the first member to defragment. 1 found, 0 all done, -1 OOM.
 */
static int walk(struct work *w, uint64_t leader, size_t *target)
{
	const struct eo_dplan_input *in = w->in;
	const struct eo_dplan_member **order = calloc(in->n_members + 1, sizeof(*order));
	struct eo_defrag_rule rule;
	int64_t quota = eo_dplan_quota(in->cluster, in->members, in->n_members);
	size_t n = 0;
	int rc = 0;

	if (order == NULL)
		return -1;
	(void)eo_defrag_rule(in->defrag, &rule);
	for (size_t i = 0; i < in->n_members; i++)
		if (in->members[i].st->member_id != leader)
			order[n++] = &in->members[i];
	qsort(order, n, sizeof(*order), cmp_name);
	for (size_t i = 0; i < in->n_members; i++)
		if (in->members[i].st->member_id == leader)
			order[n++] = &in->members[i];
	for (size_t k = 0; k < n && rc == 0; k++) {
		const struct eo_dplan_member *m = order[k];
		json_t *e = member_entry(w->st, m->name, false);
		char why[160];

		if (e != NULL && entry_final(e))
			continue;
		if ((e != NULL && int_of(e, "attempts") > 0) ||
		    wants_defrag(&rule, quota, m, why, sizeof(why))) {
			*target = (size_t)(m - in->members);
			rc = 1;
			break;
		}
		e = member_entry(w->st, m->name, true);
		if (e == NULL ||
		    json_object_set_new(
			e, "role",
			json_string(m->st->member_id == leader ? "Leader" : "Follower")) != 0 ||
		    json_object_set_new(e, "outcome", json_string(EO_DEFRAG_OUTCOME_SKIPPED)) !=
			0 ||
		    json_object_set_new(e, "dbSizeBefore", json_integer(m->st->db_size)) != 0 ||
		    json_object_set_new(e, "dbSizeAfter", json_integer(m->st->db_size)) != 0 ||
		    json_object_set_new(e, "reclaimedBytes", json_integer(0)) != 0 ||
		    json_object_set_new(e, "message", json_string(why)) != 0)
			rc = -1;
	}
	free(order);
	return rc;
}

/* Records what the Defragment call of this pass did on m. 1: the run failed. -1: OOM. */
static int record(struct work *w, const struct eo_dplan_member *m, uint64_t leader)
{
	const struct eo_dplan_done *d = w->in->done;
	json_t *e = member_entry(w->st, m->name, true);
	int64_t before = m->st->db_size, after = d->db_size_after, attempts;
	char a[32], b[32], r[32];

	/* A leader whose leadership moved away for its turn is still recorded as the Leader. */
	if (e == NULL ||
	    json_object_set_new(
		e, "role",
		json_string(m->st->member_id == leader || int_of(e, "leaderMoves") > 0
				? "Leader"
				: "Follower")) != 0 ||
	    add_int(e, "attempts", 1) != 0 ||
	    (json_object_get(e, "dbSizeBefore") == NULL &&
	     json_object_set_new(e, "dbSizeBefore", json_integer(before)) != 0))
		return -1;
	before = int_of(e, "dbSizeBefore");
	attempts = int_of(e, "attempts");
	if (d->err == EO_ETCD_OK) {
		int64_t reclaimed = after >= 0 && before > after ? before - after : 0;

		if (json_object_set_new(e, "outcome",
					json_string(EO_DEFRAG_OUTCOME_DEFRAGMENTED)) != 0 ||
		    (after >= 0 &&
		     json_object_set_new(e, "dbSizeAfter", json_integer(after)) != 0) ||
		    json_object_set_new(e, "reclaimedBytes", json_integer(reclaimed)) != 0 ||
		    add_int(w->st, "defragmented", 1) != 0 ||
		    add_int(w->st, "reclaimedBytes", reclaimed) != 0)
			return -1;
		if (after >= 0)
			snprintf(a, sizeof(a), "%s", human(after, b, sizeof(b)));
		else
			snprintf(a, sizeof(a), "unknown");
		msgf(w->out, "member %s defragmented: DbSize %s -> %s, %s reclaimed", m->name,
		     human(before, r, sizeof(r)), a, human(reclaimed, b, sizeof(b)));
		return json_object_set_new(e, "message", json_string(w->out->message)) == 0 ? 0
											    : -1;
	}
	if (d->err == EO_ETCD_TIMEOUT)
		msgf(w->out,
		     "member %s: Defragment did not answer within %lds (attempt %" PRId64
		     " of %d); etcd may still be rewriting its backend%s",
		     m->name, EO_DPLAN_MEMBER_TIMEOUT_MS / 1000, attempts, EO_DPLAN_MAX_ATTEMPTS,
		     attempts >= EO_DPLAN_MAX_ATTEMPTS
			 ? ": the run stops; check the member with etcdctl endpoint status and "
			   "create a new EtcdDefrag"
			 : "; retried once the cluster is healthy again");
	else
		msgf(w->out, "member %s: Defragment failed: %s%s%s (attempt %" PRId64 " of %d)%s",
		     m->name, eo_etcd_strerror(d->err), d->detail && d->detail[0] ? ": " : "",
		     d->detail ? d->detail : "", attempts, EO_DPLAN_MAX_ATTEMPTS,
		     attempts >= EO_DPLAN_MAX_ATTEMPTS ? "; the run stops" : "; retrying");
	if (json_object_set_new(e, "message", json_string(w->out->message)) != 0)
		return -1;
	if (attempts < EO_DPLAN_MAX_ATTEMPTS)
		return 0;
	if (json_object_set_new(e, "outcome", json_string(EO_DEFRAG_OUTCOME_FAILED)) != 0)
		return -1;
	return 1;
}

/* The member that leads (the health gate found it among members). */
static const struct eo_dplan_member *leader_member(const struct eo_dplan_input *in, uint64_t leader)
{
	for (size_t i = 0; i < in->n_members; i++)
		if (in->members[i].st->member_id == leader)
			return &in->members[i];
	return NULL;
}

/* How far m's applied index is behind the leader's raft index (0 when not behind). */
static uint64_t lag_of(const struct eo_dplan_member *m, const struct eo_dplan_member *l)
{
	return l->st->raft_index > m->st->raft_applied_index
		   ? l->st->raft_index - m->st->raft_applied_index
		   : 0;
}

/* Whether a member has not caught up with the leader yet; which, in buf. */
static bool behind(const struct eo_dplan_input *in, uint64_t leader, char *buf, size_t cap)
{
	const struct eo_dplan_member *l = leader_member(in, leader);

	for (size_t i = 0; l != NULL && i < in->n_members; i++) {
		const struct eo_dplan_member *m = &in->members[i];

		if (lag_of(m, l) > EO_DPLAN_CATCHUP_LAG) {
			snprintf(buf, cap,
				 "member %s has applied raft index %" PRIu64
				 ", the leader %s is at %" PRIu64 " (more than %d behind)",
				 m->name, m->st->raft_applied_index, l->name, l->st->raft_index,
				 EO_DPLAN_CATCHUP_LAG);
			return true;
		}
	}
	return false;
}

/* The follower to take the leadership over: the closest to the leader's index, then by
 * name. Its index, or n_members when there is none. */
static size_t pick_transferee(const struct eo_dplan_input *in, uint64_t leader)
{
	const struct eo_dplan_member *l = leader_member(in, leader);
	size_t best = in->n_members;

	for (size_t i = 0; l != NULL && i < in->n_members; i++) {
		const struct eo_dplan_member *m = &in->members[i];

		if (m == l || m->st->is_learner)
			continue;
		if (best == in->n_members || lag_of(m, l) < lag_of(&in->members[best], l) ||
		    (lag_of(m, l) == lag_of(&in->members[best], l) &&
		     strcmp(m->name, in->members[best].name) < 0))
			best = i;
	}
	return best;
}

/* Records what the MoveLeader of this pass did on m (the leader then); plans the wait. */
static int record_move(struct work *w, const struct eo_dplan_member *m)
{
	const struct eo_dplan_moved *mv = w->in->moved;
	json_t *e = member_entry(w->st, m->name, true);
	int64_t moves;

	if (e == NULL || json_object_set_new(e, "role", json_string("Leader")) != 0 ||
	    add_int(e, "leaderMoves", 1) != 0)
		return -1;
	moves = int_of(e, "leaderMoves");
	if (mv->err == EO_ETCD_OK) {
		msgf(w->out,
		     "leadership moved from member %s to %s; %s is defragmented next, as a "
		     "follower",
		     m->name, mv->to != NULL ? mv->to : "another member", m->name);
		w->out->requeue_ms = EO_DPLAN_NEXT_MS;
		if (json_object_set_new(e, "message", json_string(w->out->message)) != 0)
			return -1;
		return finish(w, EO_DPLAN_WAIT, EO_DEFRAG_PHASE_RUNNING, EO_COND_FALSE,
			      EO_REASON_DEFRAG_RUNNING, "Normal");
	}
	msgf(w->out,
	     "member %s: moving the leadership to %s failed: %s%s%s (attempt %" PRId64 " of %d)%s",
	     m->name, mv->to != NULL ? mv->to : "another member", eo_etcd_strerror(mv->err),
	     mv->detail && mv->detail[0] ? ": " : "", mv->detail ? mv->detail : "", moves,
	     EO_DPLAN_MAX_ATTEMPTS,
	     moves >= EO_DPLAN_MAX_ATTEMPTS
		 ? "; the member is defragmented in place, as the leader, once the cluster "
		   "is healthy"
		 : "; retried once the cluster is healthy");
	w->out->requeue_ms = EO_DPLAN_RETRY_MS;
	if (json_object_set_new(e, "message", json_string(w->out->message)) != 0)
		return -1;
	return finish(w, EO_DPLAN_WAIT, EO_DEFRAG_PHASE_RUNNING, EO_COND_FALSE,
		      EO_REASON_DEFRAG_MOVE_FAILED, "Warning");
}

/* Whether another run holds the cluster before this one; its name in *who. */
static bool other_first(const struct eo_dplan_input *in, const char **who)
{
	const char *cname = eo_defrag_cluster_name(in->defrag), *uid = eo_meta_uid(in->defrag);
	const char *mine_ts = created_at(in->defrag);
	const char *mine = eo_meta_name(in->defrag);
	bool running = eo_defrag_phase(in->defrag) == EO_DEFRAG_PHASE_RUNNING;
	const json_t *o;
	size_t i;

	json_array_foreach(in->others, i, o)
	{
		const char *oc = eo_defrag_cluster_name(o), *ouid = eo_meta_uid(o);
		const char *ots = created_at(o), *on = eo_meta_name(o);
		enum eo_defrag_phase op = eo_defrag_phase(o);
		int c;

		if (oc == NULL || strcmp(oc, cname) != 0 || on == NULL ||
		    (ouid != NULL && uid != NULL && strcmp(ouid, uid) == 0) ||
		    eo_defrag_phase_is_terminal(op) || eo_meta_is_deleting(o))
			continue;
		/* RFC 3339 UTC timestamps of one format compare as strings. */
		c = strcmp(ots != NULL ? ots : "", mine_ts != NULL ? mine_ts : "");
		if (c == 0)
			c = strcmp(on, mine);
		if ((op == EO_DEFRAG_PHASE_RUNNING && (!running || c < 0)) || (!running && c < 0)) {
			*who = on;
			return true;
		}
	}
	return false;
}

/* Why the EtcdCluster is not settled, or NULL. */
static const char *unsettled(const json_t *cluster, char *buf, size_t cap)
{
	const json_t *st = json_object_get(cluster, "status");
	const json_t *prog = eo_condition_find(st, EO_COND_PROGRESSING);
	int64_t gen = eo_cluster_generation(cluster);
	const char *r = eo_condition_reason(st, EO_COND_AVAILABLE);

	if (!eo_condition_matches(st, EO_COND_AVAILABLE, EO_COND_TRUE, EO_REASON_QUORUM_HEALTHY)) {
		snprintf(buf, cap, "its members are not all ready (Available: %s)",
			 r != NULL ? r : "not reported yet");
		return buf;
	}
	if (prog == NULL || !eo_condition_matches(st, EO_COND_PROGRESSING, EO_COND_FALSE, NULL)) {
		r = eo_condition_reason(st, EO_COND_PROGRESSING);
		snprintf(buf, cap, "a membership change or roll is in flight (Progressing: %s)",
			 r != NULL ? r : "not reported yet");
		return buf;
	}
	if (gen > 0 && json_integer_value(json_object_get(prog, "observedGeneration")) < gen) {
		snprintf(buf, cap, "the operator has not acted on its latest spec yet");
		return buf;
	}
	return NULL;
}

static int plan_ttl(const struct eo_dplan_input *in, struct eo_dplan_result *out)
{
	int64_t ttl = eo_defrag_ttl_seconds(in->defrag);
	const char *ts = json_string_value(
	    json_object_get(json_object_get(in->defrag, "status"), "completionTime"));
	time_t done;

	if (ttl < 0 || ts == NULL || eo_time_parse(ts, &done) != 0)
		return 0;
	if (in->now - done >= ttl) {
		out->action = EO_DPLAN_DELETE;
		msgf(out, "finished %" PRId64 "s ago (ttlSecondsAfterFinished %" PRId64 ")",
		     (int64_t)(in->now - done), ttl);
		return 0;
	}
	out->action = EO_DPLAN_WAIT;
	out->requeue_ms = (long)(ttl - (in->now - done)) * 1000L + 1000L;
	return 0;
}

/* Every member is done: the totals go to the status, and the defragmentation completes. */
static int defrag_complete(struct work *w)
{
	const struct eo_dplan_input *in = w->in;
	struct eo_dplan_result *out = w->out;
	char s[32];
	int64_t n = int_of(w->st, "defragmented");

	if (json_object_get(w->st, "defragmented") == NULL &&
	    json_object_set_new(w->st, "defragmented", json_integer(0)) != 0)
		return -1;
	if (json_object_get(w->st, "reclaimedBytes") == NULL &&
	    json_object_set_new(w->st, "reclaimedBytes", json_integer(0)) != 0)
		return -1;
	msgf(out, "%" PRId64 " of %zu member(s) defragmented, %s reclaimed", n, in->n_members,
	     human(int_of(w->st, "reclaimedBytes"), s, sizeof(s)));
	return finish(w, EO_DPLAN_NONE, EO_DEFRAG_PHASE_COMPLETE, EO_COND_TRUE,
		      EO_REASON_DEFRAG_DONE, "Normal");
}

/*
 * The call for members[target], once every member has caught up with the leader: MoveLeader
 * when it leads and has a follower to hand over to (up to EO_DPLAN_MAX_ATTEMPTS times), else
 * its Defragment.
 */
static int next_call(struct work *w, uint64_t leader, size_t target)
{
	const struct eo_dplan_input *in = w->in;
	struct eo_dplan_result *out = w->out;
	const struct eo_dplan_member *t = &in->members[target];
	const json_t *e = member_entry(w->st, t->name, false);
	int64_t moves = e != NULL ? int_of(e, "leaderMoves") : 0;
	char why[256], s[32];
	int rc;

	if (behind(in, leader, why, sizeof(why))) {
		msgf(out, "waiting for the members to catch up with the leader: %s", why);
		rc = pending(w, EO_REASON_DEFRAG_CATCHUP, NULL);
		out->requeue_ms = EO_DPLAN_NEXT_MS;
		return rc;
	}
	out->target = target;
	if (t->st->member_id == leader && moves < EO_DPLAN_MAX_ATTEMPTS) {
		size_t to = pick_transferee(in, leader);

		if (to < in->n_members) {
			out->transferee = to;
			msgf(out,
			     "moving the leadership from member %s to %s before %s is "
			     "defragmented",
			     t->name, in->members[to].name, t->name);
			return finish(w, EO_DPLAN_MOVE_LEADER, EO_DEFRAG_PHASE_RUNNING,
				      EO_COND_FALSE, EO_REASON_DEFRAG_RUNNING, NULL);
		}
	}
	msgf(
	    out, "defragmenting member %s (%s, DbSize %s)%s", t->name,
	    t->st->member_id == leader ? "leader" : "follower", human(t->st->db_size, s, sizeof(s)),
	    t->st->member_id != leader ? ""
	    : in->n_members < 2	       ? ": the only member, its clients wait while it runs"
				: ": the leadership could not be moved; writes wait while it runs");
	return finish(w, EO_DPLAN_DEFRAG, EO_DEFRAG_PHASE_RUNNING, EO_COND_FALSE,
		      EO_REASON_DEFRAG_RUNNING, NULL);
}

/* The cluster is healthy under leader: record the member just done, then the next one. */
static int defrag_step(struct work *w, uint64_t leader)
{
	const struct eo_dplan_input *in = w->in;
	struct eo_dplan_result *out = w->out;
	size_t target = 0;
	int rc;

	rc = walk(w, leader, &target);
	if (rc < 0)
		return -1;
	if (rc == 1 && in->moved != NULL && strcmp(in->moved->name, in->members[target].name) == 0)
		return record_move(w, &in->members[target]);
	if (rc == 1 && in->done != NULL && strcmp(in->done->name, in->members[target].name) == 0) {
		const char *reason;

		rc = record(w, &in->members[target], leader);
		if (rc < 0)
			return -1;
		reason = in->done->err == EO_ETCD_OK	    ? EO_REASON_DEFRAG_RUNNING
			 : in->done->err == EO_ETCD_TIMEOUT ? EO_REASON_DEFRAG_TIMEOUT
							    : EO_REASON_DEFRAG_FAILED;
		if (rc == 1)
			return failed(w, reason);
		if (in->done->err != EO_ETCD_OK) {
			out->requeue_ms = EO_DPLAN_RETRY_MS;
			return finish(w, EO_DPLAN_WAIT, EO_DEFRAG_PHASE_RUNNING, EO_COND_FALSE,
				      reason, "Warning");
		}
		/* The next member, if any, after a fresh look at the cluster's health. */
		rc = walk(w, leader, &target);
		if (rc < 0)
			return -1;
		if (rc == 1) {
			out->requeue_ms = EO_DPLAN_NEXT_MS;
			return finish(w, EO_DPLAN_WAIT, EO_DEFRAG_PHASE_RUNNING, EO_COND_FALSE,
				      EO_REASON_DEFRAG_RUNNING, "Normal");
		}
	}
	if (rc == 1)
		return next_call(w, leader, target);
	return defrag_complete(w);
}

static int plan(struct work *w)
{
	const struct eo_dplan_input *in = w->in;
	struct eo_dplan_result *out = w->out;
	const char *cname = eo_defrag_cluster_name(in->defrag), *who = NULL, *why;
	char buf[512];
	time_t created;
	uint64_t leader;

	if (eo_defrag_validate(in->defrag, NULL, buf, sizeof(buf)) != 0) {
		msgf(out, "invalid spec: %s", buf);
		return failed(w, EO_REASON_DEFRAG_INVALID);
	}
	if (eo_time_parse(created_at(in->defrag), &created) == 0 &&
	    in->now - created >= EO_DPLAN_DEADLINE_S) {
		msgf(out,
		     "not finished within %ds of its creation (waiting included); create a new "
		     "EtcdDefrag once the cluster is healthy",
		     EO_DPLAN_DEADLINE_S);
		return failed(w, EO_REASON_DEFRAG_DEADLINE);
	}
	if (in->cluster == NULL || eo_cluster_is_deleting(in->cluster)) {
		msgf(out, "EtcdCluster %s %s; the defragmentation waits for it", cname,
		     in->cluster == NULL ? "does not exist" : "is being deleted");
		return pending(w, EO_REASON_DEFRAG_NO_CLUSTER, "Warning");
	}
	if (eo_cluster_replicas(in->cluster) == 0) {
		msgf(out, "EtcdCluster %s is paused (replicas 0); the defragmentation waits",
		     cname);
		return pending(w, EO_REASON_DEFRAG_PAUSED, NULL);
	}
	if (other_first(in, &who)) {
		msgf(out, "EtcdDefrag %s runs first on EtcdCluster %s; this one waits", who, cname);
		return pending(w, EO_REASON_DEFRAG_WAITING, NULL);
	}
	if ((why = unsettled(in->cluster, buf, sizeof(buf))) != NULL) {
		msgf(out, "EtcdCluster %s is not settled: %s; the defragmentation waits", cname,
		     why);
		return pending(w, EO_REASON_DEFRAG_NOT_READY, NULL);
	}
	if (!in->queried) {
		struct eo_defrag_rule rule;

		out->action = EO_DPLAN_QUERY;
		out->refresh_in_use = eo_defrag_rule(in->defrag, &rule) != 0 || !rule.all;
		msgf(out, "reading the members' status");
		return 0;
	}
	if (eo_dplan_foreign(in->cluster, in->members, in->n_members, buf, sizeof(buf))) {
		msgf(out, "EtcdCluster %s: %s; nothing is defragmented", cname, buf);
		return pending(w, EO_REASON_DEFRAG_CLUSTER_ID, "Warning");
	}
	leader = eo_dplan_healthy(in->members, in->n_members, false, buf, sizeof(buf));
	if (leader == 0) {
		msgf(out, "EtcdCluster %s is not healthy: %s; the defragmentation waits", cname,
		     buf);
		return pending(w, EO_REASON_DEFRAG_UNHEALTHY, NULL);
	}
	return defrag_step(w, leader);
}

int eo_plan_defrag(const struct eo_dplan_input *in, struct eo_dplan_result *out)
{
	const json_t *cur;
	struct work w = {.in = in, .out = out};
	int rc;

	memset(out, 0, sizeof(*out));
	if (in->defrag == NULL || eo_meta_name(in->defrag) == NULL ||
	    eo_meta_namespace(in->defrag) == NULL)
		return -1;
	if (eo_defrag_phase_is_terminal(eo_defrag_phase(in->defrag)))
		return plan_ttl(in, out);
	cur = json_object_get(in->defrag, "status");
	w.st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	w.generation = eo_meta_generation(in->defrag, 0);
	if (w.generation <= 0)
		w.generation = -1;
	if (w.st == NULL)
		return -1;
	rc = plan(&w);
	json_decref(w.st);
	if (rc != 0)
		eo_dplan_result_clear(out);
	return rc;
}
