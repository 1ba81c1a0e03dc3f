/*
 * controller/cluster_metrics.h - the per-cluster gauges (obs/metrics.h, docs/monitoring.md)
 * from what one pass of the cluster reconciler observed.
 *
 * eo_ctl_cluster_sample is pure (the caches' objects and the pass's reads in, a sample out) so
 * that the unit tests pin what each gauge says; eo_ctl_cluster_metrics adds the one cache read
 * it needs (the EtcdSnapshots labelled with the cluster's name, through the cache's label
 * index, so the cost does not grow with the namespace's other snapshots) and records. The
 * schedule reconciler records each EtcdSnapshotSchedule's last slot (eo_ctl_schedule_metrics).
 */
#ifndef EO_CONTROLLER_CLUSTER_METRICS_H
#define EO_CONTROLLER_CLUSTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "controller/controller.h"
#include "etcd/types.h"
#include "obs/metrics.h"
#include "plan/plan.h"

struct eo_ctl_cluster_obs {
	const json_t *cluster;		      /* the EtcdCluster as cached (spec, status) */
	const json_t *planned_status;	      /* the pass's planned status, NULL: none */
	const struct eo_plan_member *members; /* its EtcdMembers with their Pods */
	size_t n_members;
	const struct eo_etcd_members *etcd; /* etcd's member list when this pass read it */
	bool tls_loaded;		    /* the pass read the cluster's TLS Secrets */
	time_t cert_not_after;		    /* their earliest leaf notAfter, 0 unknown */
	const json_t *snapshots; /* EtcdSnapshots (any cluster's: filtered), NULL: none */
	time_t now;
};

/* What the pass learned, per gauge (set, keep, remove). */
void eo_ctl_cluster_sample(const struct eo_ctl_cluster_obs *o, struct eo_cluster_sample *s);

/* Reads the cluster's labelled snapshots from the caches, samples and records into
 * c->metrics (NULL: nothing). */
void eo_ctl_cluster_metrics(struct eo_controller *c, struct eo_ctl_cluster_obs *o);

/*
 * The schedule's latest run time at or before now, not before it was created; 0 when it has
 * none (suspended, being deleted, an unusable cron expression, no run yet).
 */
time_t eo_ctl_schedule_last_slot(const json_t *sch, time_t now);
/* Records it for the schedule ns/name (sch NULL: deleted, its series go). */
void eo_ctl_schedule_metrics(struct eo_controller *c, const char *ns, const char *name,
			     const json_t *sch, time_t now);

#endif
