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
#include "api/meta.h"
#include "api/names.h"
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

/* Why the guard waits for its own runs (one in flight, or one made within the spacing). */
static bool guard_ran(const struct eo_nplan_input *in, struct eo_nplan_result *out)
{
	const json_t *r;
	size_t i;

	json_array_foreach(in->guard_runs, i, r)
	{
		const char *ts = json_string_value(eo_meta_get(r, "creationTimestamp"));
		time_t made;

		if (!eo_defrag_phase_is_terminal(eo_defrag_phase(r)) && !eo_meta_is_deleting(r)) {
			msgf(out, "quota guard: EtcdDefrag %s has not finished", eo_meta_name(r));
			return true;
		}
		if (ts != NULL && eo_time_parse(ts, &made) == 0 &&
		    in->now - made < EO_NPLAN_GUARD_SPACING_S) {
			msgf(out,
			     "quota guard: EtcdDefrag %s ran %lds ago; at most one run every %ds",
			     eo_meta_name(r), (long)(in->now - made), EO_NPLAN_GUARD_SPACING_S);
			return true;
		}
	}
	return false;
}

/* No NOSPACE alarm: compaction and an EtcdDefrag once a member passes the threshold. */
static int guard(const struct eo_nplan_input *in, struct eo_nplan_result *out)
{
	struct eo_quota_guard g;
	int64_t quota, biggest = -1;
	const char *big = NULL;
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
	if (guard_ran(in, out)) {
		out->note = EO_NPLAN_NOTE_DEBUG;
		return 0;
	}
	if (eo_dplan_foreign(in->cluster, in->members, in->n_members, why, sizeof(why))) {
		msgf(out, "quota guard refused: %s; nothing is compacted or defragmented", why);
		out->note = EO_NPLAN_NOTE_WARN;
		return 0;
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
