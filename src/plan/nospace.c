/*
 * plan/nospace.c - NOSPACE alarm recovery. See nospace.h.
 */
#include "plan/nospace.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/defrag.h"
#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/names.h"
#include "api/quantity.h"
#include "api/schedule.h"
#include "api/timeutil.h"
#include "desired/desired.h"

const char *eo_nplan_action_name(enum eo_nplan_action a)
{
	switch (a) {
	case EO_NPLAN_QUERY:
		return "query";
	case EO_NPLAN_RECOVER:
		return "recover";
	case EO_NPLAN_DISARM:
		return "disarm";
	case EO_NPLAN_GUARD:
		return "quota-guard";
	case EO_NPLAN_RAISE:
		return "quota-raise";
	case EO_NPLAN_NONE:
	default:
		return "none";
	}
}

void eo_nplan_result_clear(struct eo_nplan_result *r)
{
	json_decref(r->status);
	json_decref(r->create);
	memset(r, 0, sizeof(*r));
}

static void msgf(struct eo_nplan_result *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void msgf(struct eo_nplan_result *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->message, sizeof(out->message), fmt, ap);
	va_end(ap);
}

/* Sets the NoSpace condition; out->status only when the cluster's status changes. */
static int cond(const struct eo_nplan_input *in, struct eo_nplan_result *out, const char *status,
		const char *reason, const char *event_type)
{
	const json_t *cur = json_object_get(in->cluster, "status");
	json_t *st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	struct eo_condition c = {.type = EO_COND_NOSPACE,
				 .status = status,
				 .reason = reason,
				 .message = out->message,
				 .observed_generation = eo_cluster_generation(in->cluster)};
	int rc;

	if (st == NULL)
		return -1;
	rc = eo_condition_set(st, &c, in->now);
	if (rc < 0) {
		json_decref(st);
		return -1;
	}
	if (rc == 0) {
		json_decref(st);
		return 0;
	}
	out->status = st;
	out->event_type = event_type;
	out->event_reason = reason;
	return 0;
}

static bool has_nospace(const struct eo_etcd_alarms *a)
{
	for (size_t i = 0; a != NULL && i < a->n; i++)
		if (a->v[i].type == EO_ETCD_ALARM_NOSPACE)
			return true;
	return false;
}

static int cmp_idx_name(const void *a, const void *b, void *ud)
{
	const struct eo_dplan_member *m = ud;

	return strcmp(m[*(const size_t *)a].name, m[*(const size_t *)b].name);
}

/* The order: followers by name, then the leader. */
static void order(const struct eo_nplan_input *in, uint64_t leader, struct eo_nplan_result *out)
{
	size_t n = 0, lead = in->n_members;

	for (size_t i = 0; i < in->n_members && n < EO_PLAN_MAX_ENDPOINTS; i++) {
		if (in->members[i].st->member_id == leader)
			lead = i;
		else
			out->order[n++] = i;
	}
	qsort_r(out->order, n, sizeof(out->order[0]), cmp_idx_name, (void *)in->members);
	if (lead < in->n_members && n < EO_PLAN_MAX_ENDPOINTS)
		out->order[n++] = lead;
	out->n_order = n;
}

/* The cluster is healthy under leader: disarm, say the data is too big, or recover. */
static int recover(const struct eo_nplan_input *in, struct eo_nplan_result *out, uint64_t leader)
{
	int64_t quota, biggest = 0;
	const char *big = NULL;

	quota = eo_dplan_quota(in->cluster, in->members, in->n_members);
	for (size_t i = 0; i < in->n_members; i++)
		if (in->members[i].st->db_size >= biggest) {
			biggest = in->members[i].st->db_size;
			big = in->members[i].name;
		}
	if (biggest < quota && (in->recovered || in->last_attempt != 0)) {
		out->action = EO_NPLAN_DISARM;
		msgf(out,
		     "every member's database is under the quota (largest %" PRId64 " of %" PRId64
		     " bytes, member %s); disarming the NOSPACE alarm",
		     biggest, quota, big != NULL ? big : "-");
		return cond(in, out, EO_COND_TRUE, EO_REASON_NOSPACE_RECOVERING, NULL);
	}
	if (in->recovered ||
	    (in->last_attempt != 0 && in->now - in->last_attempt < EO_NPLAN_RETRY_S)) {
		out->requeue_ms = EO_NPLAN_INTERVAL_MS;
		msgf(out,
		     "etcd's NOSPACE alarm stays: after compaction and defragmentation member %s "
		     "still holds %" PRId64 " bytes, over the quota of %" PRId64
		     " bytes%s%s; the live data itself is too big: delete keys (deletes are "
		     "allowed) or raise spec.options.quotaBackendBytes; tried again every %ds",
		     big != NULL ? big : "-", biggest, quota, in->recover_error != NULL ? "; " : "",
		     in->recover_error != NULL ? in->recover_error : "", EO_NPLAN_RETRY_S);
		return cond(in, out, EO_COND_TRUE, EO_REASON_NOSPACE_NOT_RECLAIM, "Warning");
	}
	order(in, leader, out);
	out->action = EO_NPLAN_RECOVER;
	msgf(out,
	     "etcd raised the NOSPACE alarm (member %s: %" PRId64 " bytes, quota %" PRId64
	     "); recovering: compacting to the current revision, then defragmenting %zu "
	     "member(s), leader last",
	     big != NULL ? big : "-", biggest, quota, out->n_order);
	return cond(in, out, EO_COND_TRUE, EO_REASON_NOSPACE_ALARM, "Warning");
}

/* --- the quota guard --- */

/*
 * The guard's EtcdDefrag for now: "<cluster>-quota-YYYYMMDDHHMM", defragmenting every member
 * with more than floor bytes to give back. New reference or NULL.
 */
static json_t *guard_run(const json_t *cluster, int64_t floor, time_t now)
{
	const char *cname = eo_meta_name(cluster);
	char prefix[EO_NAME_MAX], name[EO_NAME_MAX];
	json_t *ref = eo_desired_owner_ref(cluster);

	if (ref == NULL || cname == NULL ||
	    snprintf(prefix, sizeof(prefix), "%s-quota", cname) >= (int)sizeof(prefix) ||
	    eo_name_scheduled_snapshot(name, sizeof(name), prefix, now) != 0) {
		json_decref(ref);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:[o]}, "
			 "s:{s:{s:s}, s:{s:I}, s:i}}",
			 "apiVersion", EO_API_GROUP_VERSION, "kind", EO_KIND_DEFRAG, "metadata",
			 "name", name, "namespace", eo_meta_namespace(cluster), "labels",
			 EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE, EO_LABEL_CLUSTER, cname,
			 EO_LABEL_QUOTA_GUARD, cname, "ownerReferences", ref, "spec", "clusterRef",
			 "name", cname, "rule", "freeSpaceAbove", (json_int_t)floor,
			 "ttlSecondsAfterFinished", EO_NPLAN_GUARD_TTL_S);
}

/* The guard run's floor: EO_NPLAN_GUARD_FLOOR_PCT of the quota, at least 1 MiB. */
static int64_t guard_floor(int64_t quota)
{
	int64_t f = quota / 100 * EO_NPLAN_GUARD_FLOOR_PCT;

	return f > EO_NPLAN_GUARD_FLOOR_MIN ? f : EO_NPLAN_GUARD_FLOOR_MIN;
}

enum guard_seen {
	GUARD_NONE = 0, /* no run in flight nor made within the spacing */
	GUARD_BUSY,	/* a run has not finished */
	GUARD_RECENT,	/* a run was made within the spacing */
};

/*
 * Why the guard waits for its own runs (one in flight, or one made within the spacing).
 * *done: the newest run made within the spacing that reached Complete, NULL when none.
 */
static enum guard_seen guard_ran(const struct eo_nplan_input *in, struct eo_nplan_result *out,
				 const json_t **done, time_t *done_at)
{
	enum guard_seen seen = GUARD_NONE;
	const json_t *r;
	size_t i;

	*done = NULL;
	*done_at = 0;
	json_array_foreach(in->guard_runs, i, r)
	{
		const char *ts = json_string_value(eo_meta_get(r, "creationTimestamp"));
		enum eo_defrag_phase ph = eo_defrag_phase(r);
		time_t made;

		if (!eo_defrag_phase_is_terminal(ph) && !eo_meta_is_deleting(r)) {
			msgf(out, "quota guard: EtcdDefrag %s has not finished", eo_meta_name(r));
			*done = NULL;
			return GUARD_BUSY;
		}
		if (ts == NULL || eo_time_parse(ts, &made) != 0 ||
		    in->now - made >= EO_NPLAN_GUARD_SPACING_S)
			continue;
		if (seen == GUARD_NONE)
			msgf(out,
			     "quota guard: EtcdDefrag %s ran %lds ago; at most one run every %ds",
			     eo_meta_name(r), (long)(in->now - made), EO_NPLAN_GUARD_SPACING_S);
		seen = GUARD_RECENT;
		if (ph == EO_DEFRAG_PHASE_COMPLETE && (*done == NULL || made > *done_at)) {
			*done = r;
			*done_at = made;
		}
	}
	return seen;
}

/* --- spec.quotaGuard.autoRaise --- */

/*
 * The QuotaAutoRaise condition (and, raised > 0, status.quotaBackendBytes and
 * status.quotaRaisedTime); out->status only when the status changes.
 */
static int raise_status(const struct eo_nplan_input *in, struct eo_nplan_result *out,
			const char *status, const char *reason, const char *event_type,
			int64_t raised)
{
	const json_t *cur = json_object_get(in->cluster, "status");
	json_t *st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	struct eo_condition c = {.type = EO_COND_QUOTA_RAISE,
				 .status = status,
				 .reason = reason,
				 .message = out->message,
				 .observed_generation = eo_cluster_generation(in->cluster)};
	char ts[EO_TIME_BUF];
	int rc;

	if (st == NULL || eo_time_format(in->now, ts, sizeof(ts)) != 0) {
		json_decref(st);
		return -1;
	}
	if (raised > 0 &&
	    (json_object_set_new(st, "quotaBackendBytes", json_integer((json_int_t)raised)) != 0 ||
	     json_object_set_new(st, "quotaRaisedTime", json_string(ts)) != 0)) {
		json_decref(st);
		return -1;
	}
	rc = eo_condition_set(st, &c, in->now);
	if (rc < 0 || (rc == 0 && raised == 0)) {
		json_decref(st);
		return rc < 0 ? -1 : 0;
	}
	out->status = st;
	out->event_type = event_type;
	out->event_reason = reason;
	return 0;
}

/* A refusal: the condition, and the Warning Event when its message is new; else a debug note. */
static int refuse(const struct eo_nplan_input *in, struct eo_nplan_result *out)
{
	out->action = EO_NPLAN_RAISE;
	if (raise_status(in, out, EO_COND_FALSE, EO_REASON_QUOTA_RAISE_REFUSED, "Warning", 0) != 0)
		return -1;
	out->note = out->status != NULL ? EO_NPLAN_NOTE_WARN : EO_NPLAN_NOTE_DEBUG;
	if (out->status == NULL)
		out->action = EO_NPLAN_NONE;
	return 0;
}

/* status.capacity.storage of a Bound PVC in bytes, 0 when it has none. */
static int64_t pvc_capacity(const json_t *pvc)
{
	const json_t *st = json_object_get(pvc, "status");
	const char *phase = json_string_value(json_object_get(st, "phase"));
	struct eo_quantity q;

	if (phase == NULL || strcmp(phase, "Bound") != 0 ||
	    eo_quantity_from_json(json_object_get(json_object_get(st, "capacity"), "storage"),
				  &q) != 0 ||
	    eo_quantity_sign(&q) <= 0)
		return 0;
	return eo_quantity_value(&q);
}

/*
 * The smallest capacity of the members' PVCs (*who: its member); 0 with why set when a
 * member's PVC is missing, not Bound or reports no capacity.
 */
static int64_t smallest_volume(const struct eo_nplan_input *in, const char **who, char *why,
			       size_t n)
{
	int64_t min = 0;

	for (size_t i = 0; i < in->n_members; i++) {
		char name[EO_NAME_MAX];
		const json_t *p, *found = NULL;
		size_t k;
		int64_t cap;

		if (eo_name_member_pvc(name, sizeof(name), in->members[i].name) != 0) {
			snprintf(why, n, "member %s: no PVC name", in->members[i].name);
			return 0;
		}
		json_array_foreach(in->pvcs, k, p)
		{
			const char *pn = eo_meta_name(p);

			if (pn != NULL && strcmp(pn, name) == 0)
				found = p;
		}
		cap = pvc_capacity(found);
		if (cap <= 0) {
			snprintf(why, n, "member %s: PVC %s %s, so its volume cannot be checked",
				 in->members[i].name, name,
				 found == NULL ? "is not observed"
					       : "is not Bound with a capacity");
			return 0;
		}
		if (min == 0 || cap < min) {
			min = cap;
			*who = in->members[i].name;
		}
	}
	if (min == 0)
		snprintf(why, n, "no member to check");
	return min;
}

/* The quota now: the effective one, or what a member reports when larger. */
static int64_t current_quota(const struct eo_nplan_input *in, const char **lagging,
			     int64_t *lag_quota)
{
	int64_t cur = eo_cluster_effective_quota(in->cluster), high = cur;

	*lagging = NULL;
	for (size_t i = 0; i < in->n_members; i++) {
		int64_t q = in->members[i].st != NULL ? in->members[i].st->db_size_quota : 0;

		if (q > 0 && q < cur && *lagging == NULL) {
			*lagging = in->members[i].name;
			*lag_quota = q;
		}
		if (q > high)
			high = q;
	}
	return high;
}

/* Whether an earlier raise holds this one back (note set). */
static bool raised_lately(const struct eo_nplan_input *in, struct eo_nplan_result *out,
			  time_t run_made)
{
	const char *ts = eo__json_str_at(in->cluster, "status.quotaRaisedTime");
	time_t at;

	if (ts == NULL || eo_time_parse(ts, &at) != 0)
		return false;
	if (in->now - at < EO_NPLAN_RAISE_SPACING_S) {
		msgf(out, "quota raised %lds ago; at most one raise every %ds",
		     (long)(in->now - at), EO_NPLAN_RAISE_SPACING_S);
		return true;
	}
	if (run_made <= at) {
		msgf(out, "quota raised at %s; waiting for a quota guard run made since", ts);
		return true;
	}
	return false;
}

struct raise_ctx {
	const struct eo_quota_guard *g;
	int64_t biggest;
	const char *big;
	const json_t *run; /* the Complete guard run */
	time_t run_made;
};

/* The cap of the new quota (*what: which one it is) from the smallest volume vol. */
static int64_t raise_cap(const struct raise_ctx *r, int64_t vol, const char **what)
{
	int64_t cap = vol / 100 * EO_QUOTA_RAISE_VOLUME_PCT;

	*what = "the volume";
	if (EO_QUOTA_RAISE_ETCD_MAX < cap) {
		cap = EO_QUOTA_RAISE_ETCD_MAX;
		*what = "etcd's 8 GiB maximum";
	}
	if (r->g->raise_max_bytes > 0 && r->g->raise_max_bytes < cap) {
		cap = r->g->raise_max_bytes;
		*what = "spec.quotaGuard.autoRaise.maxBytes";
	}
	return cap;
}

/* A guard run compacted and defragmented and the database is still over the threshold. */
static int auto_raise(const struct eo_nplan_input *in, struct eo_nplan_result *out,
		      const struct raise_ctx *r)
{
	const char *lagging = NULL, *who = NULL, *what = NULL;
	int64_t lag_quota = 0, cur, vol, cap, want;
	struct eo_storage storage;
	char why[768];

	if (raised_lately(in, out, r->run_made)) {
		out->note = EO_NPLAN_NOTE_DEBUG;
		return 0;
	}
	cur = current_quota(in, &lagging, &lag_quota);
	if (lagging != NULL) {
		msgf(out,
		     "quota raise waits: member %s still runs with a quota of %" PRId64
		     " bytes, not the raised %" PRId64 " (the roll has not reached it)",
		     lagging, lag_quota, cur);
		out->note = EO_NPLAN_NOTE_DEBUG;
		return 0;
	}
	if (r->g->raise_max_invalid) {
		msgf(out,
		     "quota not raised from %" PRId64 " bytes: spec.quotaGuard.autoRaise.maxBytes "
		     "is not a quantity of 0 or more",
		     cur);
		return refuse(in, out);
	}
	eo_cluster_storage(in->cluster, &storage);
	if (storage.memory) {
		msgf(out,
		     "quota not raised from %" PRId64 " bytes: the cluster is memory-backed "
		     "(spec.storage.medium Memory); raise spec.options.quotaBackendBytes and "
		     "spec.storage.size yourself",
		     cur);
		return refuse(in, out);
	}
	vol = smallest_volume(in, &who, why, sizeof(why));
	if (vol == 0) {
		msgf(out, "quota not raised from %" PRId64 " bytes: %s", cur, why);
		return refuse(in, out);
	}
	cap = raise_cap(r, vol, &what);
	want = cur * 2 < cap ? cur * 2 : cap;
	if (want <= cur) {
		msgf(out,
		     "quota not raised: member %s's database stays over %d%% of the quota of "
		     "%" PRId64 " bytes after EtcdDefrag %s, and %s leaves no room above it (limit "
		     "%" PRId64 " bytes; %d%% of member %s's volume of %" PRId64
		     " bytes); delete keys, grow spec.storage.size or raise the cap",
		     r->big, r->g->threshold_percent, cur, eo_meta_name(r->run), what, cap,
		     EO_QUOTA_RAISE_VOLUME_PCT, who, vol);
		return refuse(in, out);
	}
	out->action = EO_NPLAN_RAISE;
	msgf(out,
	     "quota raised from %" PRId64 " to %" PRId64 " bytes: member %s's database still "
	     "holds %" PRId64 " bytes (%.1f%%, threshold %d%%) after EtcdDefrag %s; limit %" PRId64
	     " bytes (%s; %d%% of member %s's volume of %" PRId64 " bytes); the members roll "
	     "onto it one at a time",
	     cur, want, r->big, r->biggest, (double)r->biggest * 100.0 / (double)cur,
	     r->g->threshold_percent, eo_meta_name(r->run), cap, what, EO_QUOTA_RAISE_VOLUME_PCT,
	     who, vol);
	return raise_status(in, out, EO_COND_TRUE, EO_REASON_QUOTA_RAISED, "Normal", want);
}

/* No NOSPACE alarm: compaction and an EtcdDefrag once a member passes the threshold. */
static int guard(const struct eo_nplan_input *in, struct eo_nplan_result *out)
{
	struct eo_quota_guard g;
	int64_t quota, biggest = -1;
	const char *big = NULL;
	const json_t *done;
	time_t done_at;
	enum guard_seen seen;
	char why[512];

	eo_cluster_quota_guard(in->cluster, &g);
	if (!g.enabled)
		return 0;
	quota = eo_dplan_quota(in->cluster, in->members, in->n_members);
	for (size_t i = 0; i < in->n_members; i++)
		if (in->members[i].st != NULL && in->members[i].st->db_size > biggest) {
			biggest = in->members[i].st->db_size;
			big = in->members[i].name;
		}
	if (big == NULL || quota <= 0 ||
	    (double)biggest * 100.0 <= (double)quota * g.threshold_percent)
		return 0;
	seen = guard_ran(in, out, &done, &done_at);
	if (seen != GUARD_NONE && !(done != NULL && g.auto_raise)) {
		out->note = EO_NPLAN_NOTE_DEBUG;
		return 0;
	}
	if (eo_dplan_foreign(in->cluster, in->members, in->n_members, why, sizeof(why))) {
		msgf(out, "quota guard refused: %s; nothing is compacted, defragmented or raised",
		     why);
		out->note = EO_NPLAN_NOTE_WARN;
		return 0;
	}
	if (seen != GUARD_NONE) {
		struct raise_ctx r = {
		    .g = &g, .biggest = biggest, .big = big, .run = done, .run_made = done_at};

		return auto_raise(in, out, &r);
	}
	if (eo_dplan_healthy(in->members, in->n_members, false, why, sizeof(why)) == 0) {
		msgf(out,
		     "quota guard waits: member %s holds %.1f%% of the quota; the cluster is not "
		     "healthy: %s",
		     big, (double)biggest * 100.0 / (double)quota, why);
		out->note = EO_NPLAN_NOTE_WARN;
		return 0;
	}
	out->create = guard_run(in->cluster, guard_floor(quota), in->now);
	if (out->create == NULL)
		return -1;
	out->action = EO_NPLAN_GUARD;
	out->event_type = "Warning";
	out->event_reason = EO_REASON_QUOTA_GUARD;
	msgf(out,
	     "member %s's database holds %" PRId64 " bytes, %.1f%% of the quota of %" PRId64
	     " bytes (threshold %d%%): compacting to the current revision, then EtcdDefrag %s "
	     "defragments the members one at a time, the leader last after its leadership "
	     "moved; at most once every %ds (spec.quotaGuard)",
	     big, biggest, (double)biggest * 100.0 / (double)quota, quota, g.threshold_percent,
	     eo_meta_name(out->create), EO_NPLAN_GUARD_SPACING_S);
	return 0;
}

int eo_plan_nospace(const struct eo_nplan_input *in, struct eo_nplan_result *out)
{
	const json_t *st = json_object_get(in->cluster, "status");
	bool was_true = eo_condition_is_true(st, EO_COND_NOSPACE);
	char why[512];
	uint64_t leader;

	memset(out, 0, sizeof(*out));
	if (in->cluster == NULL)
		return -1;
	out->requeue_ms = EO_NPLAN_INTERVAL_MS;
	if (in->disarmed) {
		msgf(out,
		     "the NOSPACE alarm is disarmed: the keyspace was compacted and every member "
		     "defragmented; etcd accepts writes again");
		return cond(in, out, EO_COND_FALSE, EO_REASON_NOSPACE_RECOVERED, "Normal");
	}
	if (!in->queried) {
		out->action = EO_NPLAN_QUERY;
		msgf(out, "reading the alarms");
		return 0;
	}
	if (in->alarms == NULL)
		return 0; /* unreadable now; looked at again in a while */
	if (!has_nospace(in->alarms)) {
		if (!was_true)
			return guard(in, out);
		msgf(out, "no NOSPACE alarm is active any more");
		return cond(in, out, EO_COND_FALSE, EO_REASON_NOSPACE_RECOVERED, "Normal");
	}
	out->requeue_ms = EO_DPLAN_RETRY_MS;
	if (eo_dplan_foreign(in->cluster, in->members, in->n_members, why, sizeof(why))) {
		/* Never compact "the current revision" of another cluster's etcd. */
		msgf(out,
		     "etcd raised the NOSPACE alarm; recovery refused: %s; nothing is compacted "
		     "or defragmented",
		     why);
		return cond(in, out, EO_COND_TRUE, EO_REASON_NOSPACE_CLUSTER_ID, "Warning");
	}
	leader = eo_dplan_healthy(in->members, in->n_members, true, why, sizeof(why));
	if (leader == 0) {
		msgf(out,
		     "etcd raised the NOSPACE alarm (the database passed its quota; writes are "
		     "refused); recovery waits: %s",
		     why);
		return cond(in, out, EO_COND_TRUE, EO_REASON_NOSPACE_ALARM, "Warning");
	}
	return recover(in, out, leader);
}
