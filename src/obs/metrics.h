/*
 * obs/metrics.h - a small Prometheus registry: counters, gauges and fixed-bucket histograms
 * with a few labels each, rendered in the text exposition format 0.0.4.
 *
 * Model: a registry (struct eo_metrics) owns metric families; a family owns its series, one
 * per distinct tuple of label values. Families and series are created on demand and freed
 * with the registry (or, for a series, by eo_metrics_remove()).
 *
 * Ownership: every pointer returned here is borrowed from the registry and stays valid until
 * eo_metrics_free(), except a series pointer, which also dies when eo_metrics_remove() removes
 * that series. Cache series pointers only for label sets that are never removed (controller,
 * result); for per-cluster series, call the family-level helpers each time. Strings passed in
 * are copied.
 *
 * Thread safety: all functions are safe to call concurrently; each family has a mutex. Mutators
 * take a NULL series or family as a no-op, so instrumentation never needs an error path.
 *
 * Limits: EO_METRICS_MAX_LABELS label names per family, EO_METRICS_MAX_SERIES series per family
 * (further label tuples are refused), label values up to EO_METRICS_LABEL_VALUE_MAX bytes,
 * EO_METRICS_MAX_BUCKETS histogram buckets, and a rendered page of EO_METRICS_RENDER_MAX bytes.
 */
#ifndef EO_OBS_METRICS_H
#define EO_OBS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EO_METRICS_MAX_FAMILIES	   64
#define EO_METRICS_MAX_LABELS	   3
#define EO_METRICS_MAX_SERIES	   4096
#define EO_METRICS_MAX_BUCKETS	   40
#define EO_METRICS_LABEL_VALUE_MAX 256
#define EO_METRICS_NAME_MAX	   128
#define EO_METRICS_HELP_MAX	   512
#define EO_METRICS_RENDER_MAX	   (8u * 1024u * 1024u)
#define EO_METRICS_MAX_HOOKS	   8

/* The content type of eo_metrics_render() output. */
#define EO_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

enum eo_metric_type {
	EO_METRIC_COUNTER,
	EO_METRIC_GAUGE,
	EO_METRIC_HISTOGRAM,
};

struct eo_metrics;	 /* registry */
struct eo_metric_family; /* one metric name, its help, type and label names */
struct eo_metric;	 /* one series: a family plus label values */

struct eo_metrics *eo_metrics_new(void); /* NULL on allocation failure */
void eo_metrics_free(struct eo_metrics *reg);

/*
 * Registers a family. `labels` is a NULL-terminated list of label names (NULL for none).
 * Returns NULL if the name or a label name is invalid, the name is already registered, a
 * limit is exceeded, or memory runs out. Histogram buckets are the finite, strictly increasing
 * upper bounds; the +Inf bucket is implicit.
 */
struct eo_metric_family *eo_metrics_counter(struct eo_metrics *reg, const char *name,
					    const char *help, const char *const *labels);
struct eo_metric_family *eo_metrics_gauge(struct eo_metrics *reg, const char *name,
					  const char *help, const char *const *labels);
struct eo_metric_family *eo_metrics_histogram(struct eo_metrics *reg, const char *name,
					      const char *help, const char *const *labels,
					      const double *buckets, size_t nbuckets);

/*
 * The series for these label values (one per label name of the family, in order; NULL for a
 * family without labels), created at zero on first use. NULL if a value is NULL or too long,
 * the family is full, or memory runs out.
 */
struct eo_metric *eo_metrics_series(struct eo_metric_family *fam, const char *const *values);
/* Deletes a series (e.g. of a deleted cluster). Returns 0 if removed, -1 if absent. */
int eo_metrics_remove(struct eo_metric_family *fam, const char *const *values);
/* Deletes every series of the family whose label `label` equals `value`. Returns the count. */
size_t eo_metrics_remove_matching(struct eo_metric_family *fam, const char *label,
				  const char *value);
/*
 * Deletes every series whose labels equal all the given pairs (labels and values: n each; a
 * label the family lacks matches nothing). Returns the count.
 */
size_t eo_metrics_remove_where(struct eo_metric_family *fam, const char *const *labels,
			       const char *const *values, size_t n);

/* Counters: inc/add (negative or NaN deltas are ignored). Gauges: inc/add/set. */
void eo_metric_inc(struct eo_metric *m);
void eo_metric_add(struct eo_metric *m, double delta);
void eo_metric_set(struct eo_metric *m, double v);
/* Histograms: one observation. */
void eo_metric_observe(struct eo_metric *m, double v);

/* Family-level shorthands: series lookup plus the operation. */
void eo_metrics_inc(struct eo_metric_family *fam, const char *const *values);
void eo_metrics_add(struct eo_metric_family *fam, const char *const *values, double delta);
void eo_metrics_set(struct eo_metric_family *fam, const char *const *values, double v);
void eo_metrics_observe(struct eo_metric_family *fam, const char *const *values, double v);

/* Current value of a counter or gauge; a histogram's observation count; NaN for NULL. */
double eo_metric_value(struct eo_metric *m);
/*
 * A histogram's state: cumulative counts per bucket (nbuckets finite bounds, then +Inf) copied
 * into `cumulative` (room for cap entries), the sum and count. Returns the number of entries
 * written, or 0 if m is not a histogram.
 */
size_t eo_metric_histogram(struct eo_metric *m, uint64_t *cumulative, size_t cap, double *sum,
			   uint64_t *count);

/*
 * Hooks run at the start of every eo_metrics_render(), before any lock is taken, to refresh
 * values that are sampled rather than counted (memory, queue depth). `ud` is borrowed.
 * Returns 0, or -1 if EO_METRICS_MAX_HOOKS are already installed.
 */
typedef void (*eo_metrics_collect_fn)(void *ud);
int eo_metrics_on_collect(struct eo_metrics *reg, eo_metrics_collect_fn fn, void *ud);

/*
 * Renders every family in registration order, series sorted by label values, as Prometheus
 * text 0.0.4. On success returns 0 and stores a malloc'd NUL-terminated page in *out (the
 * caller frees it with free()) and its length in *len. Returns -1 on allocation failure or if
 * the page would exceed EO_METRICS_RENDER_MAX.
 */
int eo_metrics_render(struct eo_metrics *reg, char **out, size_t *len);

/*
 * Shortest decimal form of v that reads back exactly ("0.1", "3", "1e+06"), or "+Inf", "-Inf",
 * "NaN", as Prometheus expects. buf needs at least 32 bytes. Returns buf.
 */
char *eo_metrics_format_double(char *buf, size_t cap, double v);

/* ------------------------------------------------------------------------------------------ */
/* Per-cluster metrics (docs/monitoring.md)                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * Gauges per EtcdCluster, labels {namespace, cluster} only: one series per cluster and family,
 * so the cardinality is (EtcdClusters) x (families), at most EO_CLUSTER_METRIC_COUNT series a
 * cluster, and fewer for a cluster the operator knows less about (a paused cluster has the two
 * member counts only). Set by the cluster reconciler at the end of each pass from what that pass
 * observed; a value the pass did not learn keeps its last value, a value that no longer exists
 * (no TLS, no schedule) is removed, and a deleted cluster's series all go.
 *
 *   etcd_operator_cluster_desired_members                 spec.replicas
 *   etcd_operator_cluster_ready_members                   status.readyMembers
 *   etcd_operator_cluster_voters                          members marked voters (status.isVoter),
 *                                                         not deleted or dormant
 *   etcd_operator_cluster_healthy_voters                  those of them whose Pod is Ready
 *   etcd_operator_cluster_learners                        learners in etcd's member list, as
 *                                                         last read
 *   etcd_operator_cluster_nospace_alarm                   1 while the NoSpace condition is True
 *   etcd_operator_cluster_certificate_expiry_timestamp_seconds   earliest notAfter of the
 *                                                         server, operator client and peer
 *                                                         leaf certificates
 *   etcd_operator_cluster_last_snapshot_timestamp_seconds  when the newest Complete snapshot
 *                                                         finished (of the snapshots labelled
 *                                                         with the cluster: a schedule's)
 *   etcd_operator_cluster_last_snapshot_size_bytes        its size
 *   etcd_operator_cluster_last_snapshot_failed            1 when the newest finished snapshot
 *                                                         Failed, else 0
 *
 * And one gauge per EtcdSnapshotSchedule, labels {namespace, cluster, schedule}, set by the
 * schedule reconciler (removed while the schedule is suspended, and when it is deleted):
 *
 *   etcd_operator_snapshot_schedule_last_slot_timestamp_seconds   the schedule's latest run
 *                                                         time at or before now, not before
 *                                                         the schedule was created
 */
enum eo_cluster_metric {
	EO_CM_DESIRED_MEMBERS,
	EO_CM_READY_MEMBERS,
	EO_CM_VOTERS,
	EO_CM_LEARNERS,
	EO_CM_HEALTHY_VOTERS,
	EO_CM_NOSPACE_ALARM,
	EO_CM_CERT_EXPIRY,
	EO_CM_LAST_SNAPSHOT_TIME,
	EO_CM_LAST_SNAPSHOT_SIZE,
	EO_CM_LAST_SNAPSHOT_FAILED,
	EO_CLUSTER_METRIC_COUNT
};

/* What a pass learned: for each metric, keep its last value, set it, or remove it. */
enum eo_cluster_sample_op { EO_CS_KEEP = 0, EO_CS_SET, EO_CS_REMOVE };

struct eo_cluster_sample {
	enum eo_cluster_sample_op op[EO_CLUSTER_METRIC_COUNT];
	double v[EO_CLUSTER_METRIC_COUNT];
};

/* Marks metric k to be set to v. */
void eo_cluster_sample_set(struct eo_cluster_sample *s, enum eo_cluster_metric k, double v);

struct eo_cluster_metrics {
	struct eo_metric_family *fam[EO_CLUSTER_METRIC_COUNT];
	struct eo_metric_family *schedule_slot; /* {namespace, cluster, schedule} */
};

/* Registers the families into reg. 0, or -1 (e.g. called twice on one registry). */
int eo_cluster_metrics_init(struct eo_cluster_metrics *cm, struct eo_metrics *reg);
/* The metric's name (without labels), for tests and docs. */
const char *eo_cluster_metric_name(enum eo_cluster_metric k);
/* Applies a pass's sample to the cluster ns/name. cm NULL: nothing. */
void eo_cluster_metrics_record(struct eo_cluster_metrics *cm, const char *ns, const char *name,
			       const struct eo_cluster_sample *s);
/* Removes every series of the cluster ns/name (deleted), its schedules' too. */
void eo_cluster_metrics_forget(struct eo_cluster_metrics *cm, const char *ns, const char *name);
/* The schedule ns/name of cluster: its latest slot (Unix seconds), or slot 0: no series. */
void eo_cluster_metrics_schedule(struct eo_cluster_metrics *cm, const char *ns, const char *name,
				 const char *cluster, double slot);
/* Removes the series of the schedule ns/name, whatever its cluster (deleted). */
void eo_cluster_metrics_schedule_forget(struct eo_cluster_metrics *cm, const char *ns,
					const char *name);

/* ------------------------------------------------------------------------------------------ */
/* The operator's own metrics                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Names follow controller-runtime and client-go where an equivalent exists, so dashboards and
 * alerts written for Go operators keep working:
 *
 *   controller_runtime_reconcile_total{controller,result}   counter  result: success, error,
 *                                                                     requeue, requeue_after
 *   controller_runtime_reconcile_errors_total{controller}   counter
 *   controller_runtime_reconcile_time_seconds{controller}   histogram 5ms .. 60s
 *   workqueue_depth{name}                                   gauge     name = controller
 *   leader_election_master_status{name}                     gauge     1 while leading
 *   etcd_operator_watch_restarts_total{kind}                counter
 *   etcd_operator_build_info{version}                       gauge     always 1
 *   process_resident_memory_bytes, process_cpu_seconds_total, process_start_time_seconds
 */
enum eo_reconcile_result {
	EO_RECONCILE_SUCCESS,
	EO_RECONCILE_ERROR,
	EO_RECONCILE_REQUEUE,
	EO_RECONCILE_REQUEUE_AFTER,
};

struct eo_operator_metrics {
	struct eo_metrics *reg; /* borrowed */
	struct eo_metric_family *reconcile_total;
	struct eo_metric_family *reconcile_errors;
	struct eo_metric_family *reconcile_time;
	struct eo_metric_family *workqueue_depth;
	struct eo_metric_family *leader_status;
	struct eo_metric_family *watch_restarts;
	struct eo_metric_family *build_info;
	struct eo_metric_family *resident_memory;
	struct eo_metric_family *cpu_seconds;
	struct eo_metric_family *start_time;
	/* the per-cluster gauges (above), registered by eo_operator_metrics_init too */
	struct eo_cluster_metrics cluster;
};

/*
 * Registers the families above into reg (which must outlive om) and installs the process
 * collector hook. Returns 0, or -1 if registration failed (e.g. called twice on one registry).
 */
int eo_operator_metrics_init(struct eo_operator_metrics *om, struct eo_metrics *reg,
			     const char *version);
const char *eo_reconcile_result_name(enum eo_reconcile_result r);
/* Records one finished reconcile: total{controller,result}, errors on EO_RECONCILE_ERROR and
 * the duration histogram. */
void eo_operator_metrics_reconcile(struct eo_operator_metrics *om, const char *controller,
				   enum eo_reconcile_result r, double seconds);
void eo_operator_metrics_queue_depth(struct eo_operator_metrics *om, const char *controller,
				     size_t depth);
void eo_operator_metrics_leader(struct eo_operator_metrics *om, const char *lease, bool leading);
void eo_operator_metrics_watch_restart(struct eo_operator_metrics *om, const char *kind);

/* Reads the resident set size from a statm-format file (/proc/self/statm in production).
 * Returns bytes, or -1 on error. */
long long eo_metrics_read_rss(const char *statm_path);

#endif /* EO_OBS_METRICS_H */
