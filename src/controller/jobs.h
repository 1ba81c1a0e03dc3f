/*
 * controller/jobs.h - what the EtcdSnapshot and EtcdSnapshotSchedule reconcilers share:
 * the resources they write and the creation of an agent Job.
 */
#ifndef EO_CONTROLLER_JOBS_H
#define EO_CONTROLLER_JOBS_H

#include <jansson.h>

#include "controller/controller.h"
#include "kube/client.h"
#include "obs/log.h"

extern const struct eo_kube_resource EO_RES_SNAPSHOTS; /* EtcdSnapshots */
extern const struct eo_kube_resource EO_RES_JOBS;      /* batch/v1 Jobs */

/*
 * Creates job in ns. 0 created or already there (an AlreadyExists is a cache lag: the Job
 * of that name is the one the plan saw or will see), -1 failure, logged as "creating the
 * <what> failed".
 */
int eo_controller_create_job(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			     json_t *job, const char *what);

#endif
