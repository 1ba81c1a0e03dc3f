/*
 * controller/cluster_metrics.c - the per-cluster gauges of a cluster pass
 * (controller/cluster_metrics.h).
 */
#include "controller/cluster_metrics.h"

#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/cron.h"
#include "api/meta.h"
#include "api/schedule.h"
#include "api/snapshot.h"
#include "api/timeutil.h"
#include "kube/cache.h"
#include "plan/nospace.h"

/* status.readyMembers of the planned status, else of the cached one. */
static double ready_members(const struct eo_ctl_cluster_obs *o)
{
	const json_t *r = json_object_get(o->planned_status, "readyMembers");

	return json_is_integer(r) ? (double)json_integer_value(r)
				  : (double)eo_cluster_ready_members(o->cluster);
}

static void sample_members(const struct eo_ctl_cluster_obs *o, struct eo_cluster_sample *s)
{
	size_t ready = 0, voters = 0, learners = 0;
	int32_t desired = eo_cluster_replicas(o->cluster);

	eo_cluster_sample_set(s, EO_CM_DESIRED_MEMBERS, desired);
	eo_cluster_sample_set(s, EO_CM_READY_MEMBERS, ready_members(o));
	/* The voters the removal gate counts: marked, not deleted, not dormant; ready Pods. */
	eo_plan_removal_keeps_quorum(o->members, o->n_members, NULL, &ready, &voters);
	if (desired > 0 || voters > 0) {
		eo_cluster_sample_set(s, EO_CM_VOTERS, (double)voters);
		eo_cluster_sample_set(s, EO_CM_HEALTHY_VOTERS, (double)ready);
	} else {
		s->op[EO_CM_VOTERS] = s->op[EO_CM_HEALTHY_VOTERS] = EO_CS_REMOVE;
	}
	if (o->etcd != NULL) {
		for (size_t i = 0; i < o->etcd->n; i++)
			learners += o->etcd->v[i].is_learner;
		eo_cluster_sample_set(s, EO_CM_LEARNERS, (double)learners);
	} else if (desired == 0 && voters == 0) {
		s->op[EO_CM_LEARNERS] = EO_CS_REMOVE;
	}
}

static void sample_conditions(const struct eo_ctl_cluster_obs *o, struct eo_cluster_sample *s)
{
	const json_t *st = json_object_get(o->cluster, "status");
	const char *nospace = eo_condition_status(st, EO_COND_NOSPACE);
	struct eo_cluster_tls t;

	if (nospace != NULL)
		eo_cluster_sample_set(s, EO_CM_NOSPACE_ALARM, strcmp(nospace, "True") == 0);
	else
		s->op[EO_CM_NOSPACE_ALARM] = EO_CS_REMOVE;
	eo_cluster_tls(o->cluster, &t);
	if (o->tls_loaded && o->cert_not_after > 0)
		eo_cluster_sample_set(s, EO_CM_CERT_EXPIRY, (double)o->cert_not_after);
	else if (t.client == EO_TLS_NONE && t.peer == EO_TLS_NONE)
		s->op[EO_CM_CERT_EXPIRY] = EO_CS_REMOVE;
}

/*
 * The time the snapshot finished: its Ready condition's last transition; 0 unknown. Exact for a
 * Complete snapshot (Ready turns True); a Failed one's Ready was already False while it ran,
 * so its time is when it started, which still orders it after the schedule's previous
 * snapshot (a schedule runs one at a time).
 */
static time_t finished_at(const json_t *snap)
{
	const json_t *c = eo_condition_find(json_object_get(snap, "status"), EO_COND_READY);
	const char *t = json_string_value(json_object_get(c, "lastTransitionTime"));
	time_t out = 0;

	if (t == NULL || eo_time_parse(t, &out) != 0)
		return 0;
	return out;
}

static void sample_snapshots(const struct eo_ctl_cluster_obs *o, struct eo_cluster_sample *s)
{
	const char *name = eo_meta_name(o->cluster);
	time_t done_at = 0, finished = 0;
	int64_t size = -1;
	bool failed = false;
	const json_t *snap;
	size_t i;

	json_array_foreach(o->snapshots, i, snap)
	{
		const char *of = eo_snapshot_cluster_name(snap);
		enum eo_snapshot_phase ph = eo_snapshot_phase(snap);
		time_t t;

		if (of == NULL || name == NULL || strcmp(of, name) != 0 ||
		    !eo_snapshot_phase_is_terminal(ph) || (t = finished_at(snap)) == 0)
			continue;
		if (t >= finished) {
			finished = t;
			failed = ph == EO_SNAPSHOT_PHASE_FAILED;
		}
		if (ph == EO_SNAPSHOT_PHASE_COMPLETE && t >= done_at) {
			done_at = t;
			size = eo_snapshot_artifact_size(snap);
		}
	}
	if (finished > 0)
		eo_cluster_sample_set(s, EO_CM_LAST_SNAPSHOT_FAILED, failed);
	else
		s->op[EO_CM_LAST_SNAPSHOT_FAILED] = EO_CS_REMOVE;
	if (done_at > 0)
		eo_cluster_sample_set(s, EO_CM_LAST_SNAPSHOT_TIME, (double)done_at);
	else
		s->op[EO_CM_LAST_SNAPSHOT_TIME] = EO_CS_REMOVE;
	if (done_at > 0 && size >= 0)
		eo_cluster_sample_set(s, EO_CM_LAST_SNAPSHOT_SIZE, (double)size);
	else
		s->op[EO_CM_LAST_SNAPSHOT_SIZE] = EO_CS_REMOVE;
}

void eo_ctl_cluster_sample(const struct eo_ctl_cluster_obs *o, struct eo_cluster_sample *s)
{
	memset(s, 0, sizeof(*s));
	if (o == NULL || o->cluster == NULL)
		return;
	sample_members(o, s);
	sample_conditions(o, s);
	sample_snapshots(o, s);
}

/* The EtcdSnapshots labelled with the cluster's name (a schedule's), over every cache. */
static json_t *labelled_snapshots(const struct eo_controller *c, const char *name)
{
	json_t *all = json_array(), *part;

	for (size_t i = 0; all != NULL && i < c->snapshots.n; i++) {
		part = eo_kube_cache_by_label(c->snapshots.c[i], name);
		if (part == NULL || json_array_extend(all, part) != 0) {
			json_decref(part);
			json_decref(all);
			return NULL;
		}
		json_decref(part);
	}
	return all;
}

void eo_ctl_cluster_metrics(struct eo_controller *c, struct eo_ctl_cluster_obs *o)
{
	const char *ns = eo_meta_namespace(o->cluster), *name = eo_meta_name(o->cluster);
	struct eo_cluster_sample s;
	json_t *snaps = NULL;

	if (c->metrics == NULL || ns == NULL || name == NULL)
		return;
	/*
	 * Through the cache's label index: only the snapshots labelled with this cluster's name
	 * are decoded, not the namespace's (sample_snapshots checks namespace and clusterRef).
	 */
	snaps = labelled_snapshots(c, name);
	o->snapshots = snaps;
	eo_ctl_cluster_sample(o, &s);
	/* A list that could not be made (out of memory) says nothing: keep what was there. */
	if (snaps == NULL)
		s.op[EO_CM_LAST_SNAPSHOT_TIME] = s.op[EO_CM_LAST_SNAPSHOT_SIZE] =
		    s.op[EO_CM_LAST_SNAPSHOT_FAILED] = EO_CS_KEEP;
	eo_cluster_metrics_record(c->metrics, ns, name, &s);
	o->snapshots = NULL;
	json_decref(snaps);
}

time_t eo_ctl_schedule_last_slot(const json_t *sch, time_t now)
{
	const char *created = json_string_value(eo_meta_get(sch, "creationTimestamp"));
	struct eo_cron cron;
	char err[128];
	time_t born = 0, slot = 0;

	if (sch == NULL || eo_schedule_suspended(sch) || eo_meta_is_deleting(sch) ||
	    eo_schedule_cron(sch) == NULL ||
	    eo_cron_parse(eo_schedule_cron(sch), &cron, err, sizeof(err)) != 0 ||
	    eo_cron_prev(&cron, now, &slot) != 0)
		return 0;
	if (created != NULL && eo_time_parse(created, &born) == 0 && slot < born)
		return 0;
	return slot;
}

void eo_ctl_schedule_metrics(struct eo_controller *c, const char *ns, const char *name,
			     const json_t *sch, time_t now)
{
	const char *cluster = sch != NULL ? eo_schedule_cluster_name(sch) : NULL;

	if (c->metrics == NULL)
		return;
	if (cluster == NULL)
		eo_cluster_metrics_schedule_forget(c->metrics, ns, name);
	else
		eo_cluster_metrics_schedule(c->metrics, ns, name, cluster,
					    (double)eo_ctl_schedule_last_slot(sch, now));
}
