/*
 * EtcdDefrag: typed read access and validation (the CRD's rules again, in C).
 *
 * A one-shot, run-to-completion record: Pending -> Running -> Complete | Failed. The shape is
 * the one the seed operator's upstream published (docs/api.md), so manifests move between the
 * two operators unchanged. The defaults of spec.rule are applied here, not by the schema:
 * rule.all excludes the other fields, which a schema default would always set.
 *
 * Strings returned are borrowed from the object; nothing here takes or drops references.
 */
#ifndef EO_API_DEFRAG_H
#define EO_API_DEFRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Validation messages (also the CRD's x-kubernetes-validations messages). */
#define EO_MSG_DEFRAG_IMMUTABLE "spec is immutable; create a new EtcdDefrag instead"
#define EO_MSG_DEFRAG_ALL_EXCLUSIVE                                                                \
	"rule.all excludes freeSpaceAbove, quotaUsageAbove and minReclaim"
#define EO_MSG_DEFRAG_MIN_RECLAIM "rule.minReclaim must not be above rule.freeSpaceAbove"

/* Defaults of spec.rule. */
#define EO_DEFRAG_FREE_SPACE_ABOVE_DEFAULT (200LL << 20) /* 200Mi */
#define EO_DEFRAG_MIN_RECLAIM_DEFAULT	   (32LL << 20)	 /* 32Mi */

enum eo_defrag_phase {
	EO_DEFRAG_PHASE_NONE = 0, /* status.phase not set yet */
	EO_DEFRAG_PHASE_PENDING,
	EO_DEFRAG_PHASE_RUNNING,
	EO_DEFRAG_PHASE_COMPLETE,
	EO_DEFRAG_PHASE_FAILED,
	EO_DEFRAG_PHASE_UNKNOWN,
};

/* Outcome of one member in status.members[]. */
#define EO_DEFRAG_OUTCOME_SKIPPED      "Skipped"
#define EO_DEFRAG_OUTCOME_DEFRAGMENTED "Defragmented"
#define EO_DEFRAG_OUTCOME_FAILED       "Failed"

/* spec.rule with the defaults applied. */
struct eo_defrag_rule {
	bool all;
	int64_t free_space_above; /* bytes */
	int quota_usage_above;	  /* percent 1..100, 0 = unset */
	int64_t min_reclaim;	  /* bytes; the default is capped at free_space_above */
};

const char *eo_defrag_cluster_name(const json_t *d);
/* spec.ttlSecondsAfterFinished, -1 when unset. */
int64_t eo_defrag_ttl_seconds(const json_t *d);
/* spec.rule with defaults; 0, or -1 when a quantity does not parse (defaults then). */
int eo_defrag_rule(const json_t *d, struct eo_defrag_rule *out);

enum eo_defrag_phase eo_defrag_phase(const json_t *d);
const char *eo_defrag_phase_str(enum eo_defrag_phase p); /* NULL for NONE/UNKNOWN */
bool eo_defrag_phase_is_terminal(enum eo_defrag_phase p);

/*
 * Re-check the CRD rules: spec and clusterRef.name present, ttl >= 0, rule.all exclusive,
 * quantities that parse and are >= 0, quotaUsageAbove in 1..100, minReclaim <= freeSpaceAbove
 * (with the defaults), and with old != NULL spec immutability. 0, or -1 with msg.
 */
int eo_defrag_validate(const json_t *d, const json_t *old, char *msg, size_t n);

/* --- EtcdDefragSchedule (extension: upstream has announced a policy kind, no shape) --- */

#define EO_MSG_DEFRAG_SCHEDULE_NAME                                                                \
	"metadata.name must be at most 240 characters long (its runs are named "                   \
	"<schedule>-YYYYMMDDHHMM)"
#define EO_DEFRAG_SCHEDULE_NAME_MAX		 240
#define EO_DEFRAG_SCHEDULE_KEEP_COMPLETE_DEFAULT 3
#define EO_DEFRAG_SCHEDULE_KEEP_FAILED_DEFAULT	 1

const char *eo_defrag_schedule_cron(const json_t *s);
bool eo_defrag_schedule_suspended(const json_t *s);
/* spec.successfulRunsHistoryLimit / failedRunsHistoryLimit with their defaults. */
int64_t eo_defrag_schedule_keep_complete(const json_t *s);
int64_t eo_defrag_schedule_keep_failed(const json_t *s);

/*
 * Re-check the CRD rules of an EtcdDefragSchedule: the name length, spec.clusterRef.name and
 * spec.schedule present, history limits >= 0, spec.rule as an EtcdDefrag's, ttl >= 0. The
 * cron expression itself is parsed by api/cron.h. 0, or -1 with msg.
 */
int eo_defrag_schedule_validate(const json_t *s, char *msg, size_t n);

/* --- the quota guard of an EtcdCluster (spec.quotaGuard, optional) --- */

/*
 * Once a member's DbSize passes thresholdPercent of the backend quota the operator compacts
 * the keyspace to the current revision and makes an EtcdDefrag for the cluster
 * (plan/nospace.h). On unless spec.quotaGuard.enabled is false.
 */
#define EO_QUOTA_GUARD_PERCENT_DEFAULT 80
#define EO_QUOTA_GUARD_PERCENT_MIN     1
#define EO_QUOTA_GUARD_PERCENT_MAX     99
/* On the EtcdDefrags the guard makes: = <cluster>. */
#define EO_LABEL_QUOTA_GUARD "etcd-operator.cozystack.io/quota-guard"

/*
 * spec.quotaGuard.autoRaise (opt-in): once a guard run has compacted and defragmented and a
 * member's DbSize is still over the threshold, the quota is doubled, capped by maxBytes, by
 * EO_QUOTA_RAISE_VOLUME_PCT of the smallest member volume and by EO_QUOTA_RAISE_ETCD_MAX
 * (plan/nospace.h). The raised quota lives in status.quotaBackendBytes (the spec is the
 * user's); the members run max(spec.options.quotaBackendBytes or etcd's default, it).
 */
#define EO_QUOTA_DEFAULT_BYTES	  (2LL << 30) /* etcd's default (--quota-backend-bytes 0) */
#define EO_QUOTA_RAISE_VOLUME_PCT 45	      /* of the smallest member volume */
#define EO_QUOTA_RAISE_ETCD_MAX	  (8LL << 30) /* etcd's suggested maximum quota */

struct eo_quota_guard {
	bool enabled;
	int threshold_percent;
	bool auto_raise;	 /* autoRaise.enabled (default false) */
	int64_t raise_max_bytes; /* autoRaise.maxBytes, 0 when absent */
	bool raise_max_invalid;	 /* autoRaise.maxBytes set but not a quantity >= 0 */
};

/* spec.quotaGuard of an EtcdCluster with its defaults (a value out of range: the default). */
void eo_cluster_quota_guard(const json_t *cluster, struct eo_quota_guard *out);

/* status.quotaBackendBytes: the quota autoRaise set, 0 when none. */
int64_t eo_cluster_raised_quota(const json_t *cluster);

/*
 * The quota the members are meant to run: spec.options.quotaBackendBytes (etcd's default when
 * 0 or absent), or status.quotaBackendBytes when that is larger.
 */
int64_t eo_cluster_effective_quota(const json_t *cluster);

#endif
