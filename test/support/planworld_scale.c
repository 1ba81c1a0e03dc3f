/*
 * support/planworld_scale.c - the world of the planner tests of a running cluster (see
 * planworld_scale.h). Moved verbatim from test_plan_scale.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "support/planworld_scale.h"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

json_t *pws_cluster(int target)
{
	json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}, s:i}, "
			      "s:{s:s, s:s, s:s, s:i, s:i, s:{s:i, s:s, s:{s:s, s:s}}}}",
			      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata",
			      "name", "demo", "namespace", "default", "uid", "c-uid", "generation",
			      2, "spec", "replicas", target, "version", "3.6.11", "storage", "size",
			      "1Gi", "medium", "", "progressDeadlineSeconds", 600, "status",
			      "clusterToken", "default-demo-c-uid", "clusterID", "248adce0359142ba",
			      "selector", "etcd-operator.cozystack.io/cluster=demo", "readyMembers",
			      0, "brokenMembers", 0, "observed", "replicas", target, "version",
			      "3.6.11", "storage", "size", "1Gi", "medium", "");

	assert_non_null(c);
	json_object_set_new(json_object_get(c, "status"), "progressDeadline",
			    json_string("2026-06-02T10:10:00Z"));
	/* The next member's name is recorded (creates use it; see eo_plan_next_member_name). */
	{
		char next[EO_PLAN_NAME_MAX];

		assert_int_equal(
		    eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)), 0);
		json_object_set_new(json_object_get(c, "status"), "nextMemberName",
				    json_string(next));
	}
	return c;
}

json_t *pws_member(const struct pws_m *d)
{
	char ic[EO_DESIRED_URL_MAX];
	json_t *m = NULL;

	eo_desired_seed_initial_cluster(ic, sizeof(ic), &OPTS, d->name, "demo", "default", false);
	m = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[s], s:[{s:s, s:s, s:s, s:s, s:b}]}, "
		      "s:{s:s, s:s, s:b, s:s, s:s}, s:{s:b}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name",
		      d->name, "namespace", "default", "uid", d->name, "creationTimestamp",
		      d->created ? d->created : "2026-06-02T09:00:00Z", "finalizers",
		      EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences", "apiVersion",
		      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo", "uid", "c-uid",
		      "controller", 1, "spec", "clusterName", "demo", "version", "3.6.11",
		      "bootstrap", 0, "initialCluster", d->pending ? "" : ic, "clusterToken",
		      "default-demo-c-uid", "status", "isVoter", d->voter);
	assert_non_null(m);
	if (d->deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	if (d->dormant)
		json_object_set_new(json_object_get(m, "spec"), "dormant", json_true());
	return m;
}

json_t *pws_pod(const char *name, bool ready)
{
	return json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name", name,
			 "namespace", "default", "uid", "pod-uid", "status", "phase",
			 ready ? "Running" : "Pending", "conditions", "type", "Ready", "status",
			 ready ? "True" : "False");
}

/* A Pod stands for the one built from its member: it carries that member's Pod hash. */
json_t *pws_stamped(const json_t *m, json_t *p)
{
	char h[EO_DESIRED_HASH_MAX];

	if (p == NULL)
		return NULL;
	if (eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)) != 0)
		fail();
	json_object_set_new(json_object_get(p, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_POD_HASH, h));
	return p;
}

/* Builds the world of a row; voters counted for the PDB, which is observed as desired. */
void pws_world_init(struct pws_world *w, const struct pws_row *r)
{
	size_t voters = 0;

	memset(w, 0, sizeof(*w));
	w->cluster = pws_cluster(r->target);
	w->hsvc = eo_desired_headless_service(w->cluster);
	w->csvc = eo_desired_client_service(w->cluster);
	for (size_t i = 0; i < PWS_MAXM && r->members[i].name != NULL; i++) {
		const struct pws_m *d = &r->members[i];

		w->pm[i].member = pws_member(d);
		w->pm[i].pod =
		    d->pod ? pws_stamped(w->pm[i].member, pws_pod(d->name, d->pod >= 2)) : NULL;
		if (d->pod >= 3) {
			struct eo_condition ns = {EO_COND_READY, EO_COND_FALSE,
						  d->pod == 3	? EO_REASON_NOT_SERVING
						  : d->pod == 4 ? EO_REASON_POD_NOT_READY
								: EO_REASON_DISCOVERING_MEMBER_ID,
						  "", 1};

			assert_true(eo_condition_set(json_object_get(w->pm[i].member, "status"),
						     &ns, PWS_T0) > 0);
		}
		w->n++;
		if (d->voter && !d->deleting)
			voters++;
	}
	for (size_t i = 0; i < PWS_MAXM && r->etcd[i].peer_of != NULL; i++) {
		const struct pws_e *d = &r->etcd[i];

		eo_desired_member_peer_url(w->peer[i], sizeof(w->peer[i]), &OPTS, d->peer_of,
					   "demo", "default", false);
		w->peer_p[i] = w->peer[i];
		w->ev[i] = (struct eo_etcd_member){.id = d->id ? d->id : 0x100 + i,
						   .name = (char *)(d->started ? d->peer_of : ""),
						   .peer_urls = &w->peer_p[i],
						   .n_peer_urls = 1,
						   .is_learner = d->learner};
		w->etcd.n++;
	}
	w->etcd.v = w->ev;
	w->etcd.cluster_id = 0x248adce0359142baULL;
	if (voters > 0) {
		int min = eo_desired_pdb_min_available((int)voters, r->target);

		w->pdb = eo_desired_pdb(w->cluster, min);
		/* As the disruption controller fills it in for the spec it has seen. */
		json_object_set_new(w->pdb, "status",
				    json_pack("{s:i, s:i}", "observedGeneration", 0,
					      "disruptionsAllowed",
					      (int)voters > min ? (int)voters - min : 0));
	}
	w->in = (struct eo_plan_input){.cluster = w->cluster,
				       .members = w->pm,
				       .n_members = w->n,
				       .headless_svc = w->hsvc,
				       .client_svc = w->csvc,
				       .pdb = w->pdb,
				       .build = &OPTS,
				       .etcd_queried = true,
				       .etcd_err = EO_ETCD_OK,
				       .etcd = &w->etcd,
				       /* as after the controller's live reads (want_live) */
				       .live_checked = true,
				       /* the leader's own list unless a test says otherwise */
				       .etcd_leader_checked = true,
				       .etcd_from_leader = true,
				       .now = PWS_T0};
}

void pws_world_free(struct pws_world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->pm[i].member);
		json_decref((json_t *)w->pm[i].pod);
		json_decref((json_t *)w->pm[i].pvc);
	}
	json_decref(w->cluster);
	json_decref(w->hsvc);
	json_decref(w->csvc);
	json_decref(w->pdb);
}
