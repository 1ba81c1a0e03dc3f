/*
 * controller/jobs.c - shared by the snapshot and schedule reconcilers. See jobs.h.
 */
#include "controller/jobs.h"

#include <stdio.h>

#include "api/names.h"

const struct eo_kube_resource EO_RES_SNAPSHOTS = {EO_API_GROUP_VERSION, EO_PLURAL_SNAPSHOTS, NULL,
						  NULL};
const struct eo_kube_resource EO_RES_JOBS = {"batch/v1", "jobs", NULL, NULL};

int eo_controller_create_job(struct eo_controller *c, const struct eo_log_ctx *lc, const char *ns,
			     json_t *job, const char *what)
{
	struct eo_kube_resource r = EO_RES_JOBS;
	struct eo_kube_error err = {0};
	char msg[128];
	eo_kube_err e;

	r.ns = ns;
	e = eo_kube_create(c->kc, &r, job, NULL, &err);
	if (e == EO_KUBE_OK || e == EO_KUBE_EEXISTS)
		return 0;
	snprintf(msg, sizeof(msg), "creating the %s failed", what);
	eo_log_kv(EO_LOG_WARN, lc, msg, "error", eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}
