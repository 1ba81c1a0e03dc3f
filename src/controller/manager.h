/*
 * controller/manager.h - wires informers, work queues, workers and leader election.
 *
 *   informers  EtcdCluster, EtcdMember, EtcdSnapshot (all), Pod, PVC, Service, PDB, Job
 *              (label app.kubernetes.io/managed-by=etcd-operator), one per watched namespace
 *   handlers   an object change enqueues its cluster (and member) at once
 *   workers    cfg->workers threads per controller (cluster, member, snapshot), started when the
 *              caches have synced and - with leader election - only while leading
 *   metrics    reconcile totals / errors / durations, queue depth, leader status
 *
 * Lifecycle: eo_manager_new() -> eo_manager_start() -> ... -> eo_manager_stop() ->
 * eo_manager_free(). stop() shuts the queues, joins the workers (running reconciles finish
 * within their request timeouts), releases the Lease and stops the informers.
 * Losing the Lease while running ends the process with exit code 1 (no two leaders act).
 * While leading, the controller's fence (controller/fence.h) is the Lease: with less than
 * 5 s of it left, no etcd membership change is sent and no new reconcile starts.
 */
#ifndef EO_CONTROLLER_MANAGER_H
#define EO_CONTROLLER_MANAGER_H

#include "controller/config.h"
#include "obs/metrics.h"
#include "obs/ready.h"

typedef struct eo_manager eo_manager;

/* cfg, om and ready are borrowed and must outlive the manager. NULL on failure (logged). */
eo_manager *eo_manager_new(const struct eo_config *cfg, struct eo_operator_metrics *om,
			   struct eo_ready *ready);

/*
 * Starts informers, waits for their first sync (up to sync_timeout_ms), marks ready, then
 * starts leader election (or the workers directly). Returns 0, or -1 (logged).
 */
int eo_manager_start(eo_manager *m, long sync_timeout_ms);

void eo_manager_stop(eo_manager *m);
void eo_manager_free(eo_manager *m);

#endif
