/*
 * api/defrag.c - EtcdDefrag read access and validation. See defrag.h.
 */
#include "api/defrag.h"

#include <string.h>

#include "api/cluster.h"
#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/quantity.h"
#include "api/validate.h"

const char *eo_defrag_cluster_name(const json_t *d)
{
	return eo__json_str_at(d, "spec.clusterRef.name");
}

int64_t eo_defrag_ttl_seconds(const json_t *d)
{
	int64_t v;

	return eo__json_int_at(d, "spec.ttlSecondsAfterFinished", &v) && v >= 0 ? v : -1;
}

/* A quantity field of spec.rule in bytes: def when absent, -1 when it does not parse. */
static int64_t rule_bytes(const json_t *rule, const char *key, int64_t def)
{
	const json_t *v = json_object_get(rule, key);
	struct eo_quantity q;

	if (v == NULL || json_is_null(v))
		return def;
	if (eo_quantity_from_json(v, &q) != 0 || eo_quantity_sign(&q) < 0)
		return -1;
	return eo_quantity_value(&q);
}

int eo_defrag_rule(const json_t *d, struct eo_defrag_rule *out)
{
	const json_t *rule = eo__json_object_at(d, "spec.rule");
	int64_t pct = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->all = eo__json_bool_at(rule, "all", false);
	out->free_space_above =
	    rule_bytes(rule, "freeSpaceAbove", EO_DEFRAG_FREE_SPACE_ABOVE_DEFAULT);
	out->min_reclaim = rule_bytes(rule, "minReclaim", EO_DEFRAG_MIN_RECLAIM_DEFAULT);
	if (out->free_space_above < 0) {
		out->free_space_above = EO_DEFRAG_FREE_SPACE_ABOVE_DEFAULT;
		rc = -1;
	}
	if (out->min_reclaim < 0) {
		out->min_reclaim = EO_DEFRAG_MIN_RECLAIM_DEFAULT;
		rc = -1;
	}
	/* The default floor never goes above an explicit freeSpaceAbove. */
	if (json_object_get(rule, "minReclaim") == NULL && out->min_reclaim > out->free_space_above)
		out->min_reclaim = out->free_space_above;
	if (eo__json_int_at(rule, "quotaUsageAbove", &pct)) {
		if (pct >= 1 && pct <= 100)
			out->quota_usage_above = (int)pct;
		else
			rc = -1;
	}
	return rc;
}

static const struct eo__phase_name phases[] = {
    {EO_DEFRAG_PHASE_PENDING, "Pending"},
    {EO_DEFRAG_PHASE_RUNNING, "Running"},
    {EO_DEFRAG_PHASE_COMPLETE, "Complete"},
    {EO_DEFRAG_PHASE_FAILED, "Failed"},
};

enum eo_defrag_phase eo_defrag_phase(const json_t *d)
{
	return (enum eo_defrag_phase)eo__phase_of(d, phases, sizeof(phases) / sizeof(phases[0]),
						  EO_DEFRAG_PHASE_NONE, EO_DEFRAG_PHASE_UNKNOWN);
}

const char *eo_defrag_phase_str(enum eo_defrag_phase p)
{
	return eo__phase_text(phases, sizeof(phases) / sizeof(phases[0]), (int)p);
}

bool eo_defrag_phase_is_terminal(enum eo_defrag_phase p)
{
	return p == EO_DEFRAG_PHASE_COMPLETE || p == EO_DEFRAG_PHASE_FAILED;
}

int eo_defrag_validate(const json_t *d, const json_t *old, char *msg, size_t n)
{
	json_t *spec = eo__json_object_at(d, "spec");
	const json_t *rule = eo__json_object_at(d, "spec.rule");
	const char *cluster = eo_defrag_cluster_name(d);
	const json_t *ttl = eo__json_at(d, "spec.ttlSecondsAfterFinished");
	struct eo_defrag_rule r;

	eo__clear(msg, n);
	if (spec == NULL)
		return eo__fail(msg, n, "spec: Required value");
	if (cluster == NULL || cluster[0] == '\0')
		return eo__fail(msg, n, "spec.clusterRef.name: Required value");
	if (ttl != NULL && (!json_is_integer(ttl) || json_integer_value(ttl) < 0))
		return eo__fail(msg, n, "spec.ttlSecondsAfterFinished: must be an integer >= 0");
	if (rule != NULL && eo__json_bool_at(rule, "all", false) &&
	    (json_object_get(rule, "freeSpaceAbove") != NULL ||
	     json_object_get(rule, "quotaUsageAbove") != NULL ||
	     json_object_get(rule, "minReclaim") != NULL))
		return eo__fail(msg, n, "spec.rule: %s", EO_MSG_DEFRAG_ALL_EXCLUSIVE);
	if (eo_defrag_rule(d, &r) != 0)
		return eo__fail(msg, n,
				"spec.rule: freeSpaceAbove and minReclaim must be quantities >= 0, "
				"quotaUsageAbove an integer from 1 to 100");
	if (r.min_reclaim > r.free_space_above)
		return eo__fail(msg, n, "spec.rule: %s", EO_MSG_DEFRAG_MIN_RECLAIM);
	if (old != NULL) {
		json_t *old_spec = eo__json_object_at(old, "spec");

		if (old_spec != NULL && !json_equal(spec, old_spec))
			return eo__fail(msg, n, "%s", EO_MSG_DEFRAG_IMMUTABLE);
	}
	return 0;
}

/* --- EtcdDefragSchedule --- */

const char *eo_defrag_schedule_cron(const json_t *s)
{
	return eo__json_str_at(s, "spec.schedule");
}

bool eo_defrag_schedule_suspended(const json_t *s)
{
	return eo__json_bool_at(s, "spec.suspend", false);
}

static int64_t int_or(const json_t *s, const char *path, int64_t def)
{
	int64_t v;

	return eo__json_int_at(s, path, &v) && v >= 0 ? v : def;
}

int64_t eo_defrag_schedule_keep_complete(const json_t *s)
{
	return int_or(s, "spec.successfulRunsHistoryLimit",
		      EO_DEFRAG_SCHEDULE_KEEP_COMPLETE_DEFAULT);
}

int64_t eo_defrag_schedule_keep_failed(const json_t *s)
{
	return int_or(s, "spec.failedRunsHistoryLimit", EO_DEFRAG_SCHEDULE_KEEP_FAILED_DEFAULT);
}

int eo_defrag_schedule_validate(const json_t *s, char *msg, size_t n)
{
	const char *name = eo_meta_name(s);
	const char *cron = eo_defrag_schedule_cron(s);
	json_t *spec = eo__json_object_at(s, "spec");
	json_t *as_defrag = NULL;
	int rc;

	eo__clear(msg, n);
	if (name != NULL && strlen(name) > EO_DEFRAG_SCHEDULE_NAME_MAX)
		return eo__fail(msg, n, "%s", EO_MSG_DEFRAG_SCHEDULE_NAME);
	if (spec == NULL)
		return eo__fail(msg, n, "spec: Required value");
	if (cron == NULL || cron[0] == '\0')
		return eo__fail(msg, n, "spec.schedule: Required value");
	for (int i = 0; i < 2; i++) {
		const char *k = i ? "failedRunsHistoryLimit" : "successfulRunsHistoryLimit";
		const json_t *v = json_object_get(spec, k);

		if (v != NULL && (!json_is_integer(v) || json_integer_value(v) < 0))
			return eo__fail(msg, n, "spec.%s: must be an integer >= 0", k);
	}
	/* clusterRef, rule and ttl follow an EtcdDefrag's rules. */
	as_defrag = json_pack("{s:O}", "spec", spec);
	if (as_defrag == NULL)
		return eo__fail(msg, n, "out of memory");
	rc = eo_defrag_validate(as_defrag, NULL, msg, n);
	json_decref(as_defrag);
	return rc;
}

void eo_cluster_quota_guard(const json_t *cluster, struct eo_quota_guard *out)
{
	const json_t *g = json_object_get(json_object_get(cluster, "spec"), "quotaGuard");
	int64_t pct;

	out->enabled = !json_is_false(json_object_get(g, "enabled"));
	out->threshold_percent = EO_QUOTA_GUARD_PERCENT_DEFAULT;
	if (eo__json_int_at(g, "thresholdPercent", &pct) && pct >= EO_QUOTA_GUARD_PERCENT_MIN &&
	    pct <= EO_QUOTA_GUARD_PERCENT_MAX)
		out->threshold_percent = (int)pct;
	out->auto_raise = false;
	out->raise_max_bytes = 0;
	out->raise_max_invalid = false;
	g = json_object_get(g, "autoRaise");
	if (!json_is_object(g))
		return;
	out->auto_raise = json_is_true(json_object_get(g, "enabled"));
	out->raise_max_bytes = rule_bytes(g, "maxBytes", 0);
	if (out->raise_max_bytes < 0) {
		out->raise_max_bytes = 0;
		out->raise_max_invalid = true;
	}
}

int64_t eo_cluster_raised_quota(const json_t *cluster)
{
	int64_t v;

	return eo__json_int_at(cluster, "status.quotaBackendBytes", &v) && v > 0 ? v : 0;
}

int64_t eo_cluster_effective_quota(const json_t *cluster)
{
	struct eo_etcd_options o;
	int64_t raised = eo_cluster_raised_quota(cluster), q;

	eo_cluster_options(cluster, &o);
	q = o.quota_backend_bytes > 0 ? o.quota_backend_bytes : EO_QUOTA_DEFAULT_BYTES;
	return raised > q ? raised : q;
}
