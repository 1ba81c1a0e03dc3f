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
#include "plan/forcenew.h"
#include "plan/roll.h"
#include "support/planworld_scale.h"
#include "support/planworld_scale_rows.h"
#include "support/testutil.h"

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
	w->in = pws_running_input(w->cluster, w->pm, w->n, w->hsvc, w->csvc, w->pdb, &w->etcd);
}

struct eo_plan_input pws_running_input(const json_t *cluster, const struct eo_plan_member *pm,
				       size_t n, const json_t *hsvc, const json_t *csvc,
				       const json_t *pdb, const struct eo_etcd_members *etcd)
{
	return (struct eo_plan_input){.cluster = cluster,
				      .members = pm,
				      .n_members = n,
				      .headless_svc = hsvc,
				      .client_svc = csvc,
				      .pdb = pdb,
				      .build = &OPTS,
				      .etcd_queried = true,
				      .etcd_err = EO_ETCD_OK,
				      .etcd = etcd,
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

/* Condition type's reason and message in a status, for the pause checks. */
void pws_want_cond(const json_t *st, const char *type, const char *status, const char *reason,
		   const char *msg_part)
{
	json_t *c = NULL;
	size_t i;

	json_array_foreach(json_object_get(st, "conditions"), i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t == NULL || strcmp(t, type) != 0)
			continue;
		assert_string_equal(json_string_value(json_object_get(c, "status")), status);
		assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
		if (msg_part != NULL &&
		    strstr(json_string_value(json_object_get(c, "message")), msg_part) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", type,
				 json_string_value(json_object_get(c, "message")), msg_part);
		return;
	}
	fail_msg("no %s condition", type);
}

void pws_want_paused(const json_t *st, const char *msg_part)
{
	pws_want_cond(st, EO_COND_AVAILABLE, "False", EO_REASON_PAUSED, msg_part);
	pws_want_cond(st, EO_COND_PROGRESSING, "False", EO_REASON_PAUSED, msg_part);
	pws_want_cond(st, EO_COND_DEGRADED, "False", EO_REASON_PAUSED, msg_part);
}

const char *pws_name_of(const json_t *member)
{
	return json_string_value(json_object_get(json_object_get(member, "metadata"), "name"));
}

/* Makes a row's member memory-backed with a Pod that ran (status.podUID). */
void pws_make_memory(struct pws_world *w, size_t i, bool lose_pod)
{
	json_t *m = (json_t *)w->pm[i].member;

	json_object_set_new(json_object_get(m, "spec"), "storage",
			    json_pack("{s:s, s:s}", "size", "256Mi", "medium", "Memory"));
	json_object_set_new(json_object_get(m, "status"), "podUID", json_string("old-pod-uid"));
	if (lose_pod) {
		json_decref((json_t *)w->pm[i].pod);
		w->pm[i].pod = NULL;
	}
}

/*
 * Makes a row's member one that ran on a PVC (status.memberID, status.dataVolumeUID "pvc-1")
 * and gives it the PVC with UID pvc_uid, none (NULL), or its PVC being deleted ("deleting").
 */
void pws_make_ran_on_pvc(struct pws_world *w, size_t i, const char *pvc_uid)
{
	json_t *st = json_object_get((json_t *)w->pm[i].member, "status");
	char name[64];

	json_object_set_new(st, "memberID", json_string("8e9e05c52164694d"));
	json_object_set_new(st, "dataVolumeUID", json_string("pvc-1"));
	json_decref((json_t *)w->pm[i].pvc);
	w->pm[i].pvc = NULL;
	if (pvc_uid == NULL)
		return;
	snprintf(name, sizeof(name), "data-%s", pws_name_of(w->pm[i].member));
	w->pm[i].pvc = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", name, "namespace",
				 "default", "uid", "pvc-1");
	if (strcmp(pvc_uid, "deleting") == 0)
		json_object_set_new(json_object_get((json_t *)w->pm[i].pvc, "metadata"),
				    "deletionTimestamp", json_string("2026-06-02T10:00:00Z"));
	else
		json_object_set_new(json_object_get((json_t *)w->pm[i].pvc, "metadata"), "uid",
				    json_string(pvc_uid));
}

/* Gives a member's Pod an etcd container status: restarts, waiting reason, last exit. */
void pws_crash(struct pws_world *w, size_t i, int restarts, const char *waiting,
	       const char *last_reason)
{
	json_t *st = json_object_get((json_t *)w->pm[i].pod, "status");

	json_object_set_new(st, "containerStatuses",
			    json_pack("[{s:s, s:i, s:b, s:{s:{s:s}}, s:{s:{s:i, s:s}}}]", "name",
				      "etcd", "restartCount", restarts, "ready", 0, "state",
				      "waiting", "reason", waiting, "lastState", "terminated",
				      "exitCode", 2, "reason", last_reason));
}

/* Gives a member's Pod a data-guard init container that ended with `code` once (no restart). */
void pws_guard_ended(struct pws_world *w, size_t i, int code)
{
	json_t *st = json_object_get((json_t *)w->pm[i].pod, "status");

	json_object_set_new(st, "initContainerStatuses",
			    json_pack("[{s:s, s:i, s:b, s:{s:{s:i, s:s, s:s}}}]", "name",
				      EO_DESIRED_DATA_GUARD_CONTAINER, "restartCount", 0, "ready",
				      0, "state", "terminated", "exitCode", code, "reason", "Error",
				      "message", "data directory has no WAL"));
}

/* Every member answers its status; leader is the etcd id of the leader. */
void pws_world_statuses(struct pws_world *w, struct eo_etcd_status *st, uint64_t leader)
{
	for (size_t i = 0; i < w->etcd.n; i++)
		st[i] = (struct eo_etcd_status){.member_id = w->ev[i].id,
						.leader = leader,
						.raft_index = 500,
						.raft_applied_index = 500};
	w->in.statuses = st;
	w->in.n_statuses = w->etcd.n;
}

void pws_set_version(json_t *obj, const char *key, const char *v)
{
	json_object_set_new(json_object_get(obj, key), "version", json_string(v));
}

/* The member's Pod as the member controller rebuilds it from its (new) spec. */
void pws_rebuild_pod(struct pws_world *w, size_t i, bool ready)
{
	json_decref((json_t *)w->pm[i].pod);
	w->pm[i].pod =
	    pws_stamped(w->pm[i].member, pws_pod(eo_member_name(w->pm[i].member), ready));
}

/* Member i mounts a peer TLS Secret; its Pod is built with the CA bundles' digest ca. */
void pws_tls_member(struct pws_world *w, size_t i, const char *ca, bool ready)
{
	struct eo_desired_opts o = OPTS;
	char h[EO_DESIRED_HASH_MAX];
	json_t *m = (json_t *)w->pm[i].member, *p = pws_pod(eo_member_name(m), ready);

	json_object_set_new(json_object_get(m, "spec"), "tls",
			    json_pack("{s:{s:s}}", "peerSecretRef", "name", "demo-peer-tls"));
	eo_desired_member_peer_url(w->peer[i], sizeof(w->peer[i]), &OPTS, eo_member_name(m), "demo",
				   "default", true);
	o.ca_bundle_digest = ca;
	if (eo_desired_member_pod_hash(m, &o, h, sizeof(h)) != 0)
		fail();
	json_object_set_new(json_object_get(p, "metadata"), "annotations",
			    json_pack("{s:s}", EO_ANNOTATION_POD_HASH, h));
	json_decref((json_t *)w->pm[i].pod);
	w->pm[i].pod = p;
}

/* Sets (value) or removes (NULL) an annotation on an object of the world. */
void pws_annotate(json_t *obj, const char *key, const char *value)
{
	json_t *md = json_object_get(obj, "metadata"), *ann = json_object_get(md, "annotations");

	if (ann == NULL) {
		ann = json_object();
		json_object_set_new(md, "annotations", ann);
	}
	if (value != NULL)
		json_object_set_new(ann, key, json_string(value));
	else
		json_object_del(ann, key);
}

/* Member i's Pod as the member controller builds it from its member now, ready or not. */
void pws_pod_from_member(struct pws_world *w, size_t i, bool ready)
{
	json_t *p = eo_desired_member_pod(w->pm[i].member, &OPTS, true);

	assert_non_null(p);
	json_object_set_new(json_object_get(p, "metadata"), "uid", json_string("pod-uid-2"));
	json_object_set_new(p, "status",
			    json_pack("{s:s, s:[{s:s, s:s}]}", "phase", "Running", "conditions",
				      "type", "Ready", "status", ready ? "True" : "False"));
	json_decref((json_t *)w->pm[i].pod);
	w->pm[i].pod = p;
}

/* The status the plan computed becomes the cluster's. */
void pws_adopt_status(struct pws_world *w, struct eo_plan_result *res)
{
	if (res->status != NULL)
		json_object_set(w->cluster, "status", res->status);
	eo_plan_result_clear(res);
}

void pws_want_patch(const json_t *patch, const char *key, const char *value)
{
	json_t *want = value != NULL
			   ? json_pack("{s:{s:{s:s}}}", "metadata", "annotations", key, value)
			   : json_pack("{s:{s:{s:n}}}", "metadata", "annotations", key);

	tu_assert_json_equal(patch, want, "annotation patch");
	json_decref(want);
}

/* Held past the deadline: the pass's action and that the conditions still say so. */
void pws_want_held(struct pws_world *w, const char *what, enum eo_plan_action a, const char *member)
{
	struct eo_plan_result res;

	w->in.now = PWS_T0 + 601; /* status.progressDeadline is PWS_T0 + 600 */
	assert_int_equal(eo_plan_cluster(&w->in, &res), 0);
	if (res.action != a)
		fail_msg("%s: action %s, want %s (%s)", what, eo_plan_action_name(res.action),
			 eo_plan_action_name(a), res.message);
	if (member != NULL)
		assert_string_equal(pws_name_of(res.member), member);
	pws_want_cond(res.status, EO_COND_PROGRESSING, "False", EO_REASON_DEADLINE_EXCEEDED, NULL);
	pws_want_cond(res.status, EO_COND_AVAILABLE, "False", EO_REASON_DEADLINE_EXCEEDED, NULL);
	eo_plan_result_clear(&res);
}

/* Puts member i's Pod on node (spec.nodeName). */
void pws_on_node(struct pws_world *w, size_t i, const char *node)
{
	json_t *p = (json_t *)w->pm[i].pod;

	if (json_object_get(p, "spec") == NULL)
		json_object_set_new(p, "spec", json_object());
	json_object_set_new(json_object_get(p, "spec"), "nodeName", json_string(node));
}

/* Client URL of member name (as the controller records where a Status answer came from). */
const char *pws_client_url(const char *name, char *buf)
{
	assert_int_equal(eo_desired_member_client_url(buf, EO_DESIRED_URL_MAX, &OPTS, name, "demo",
						      "default", false),
			 0);
	return buf;
}

/* Three ready voters demo-a, demo-b, demo-c of a 3-member target, all listed by etcd. */
const struct pws_row pws_rolled3 = {"",
				    3,
				    {V("demo-a", A), V("demo-b", B), V("demo-c", C)},
				    {EV("demo-a"), EV("demo-b"), EV("demo-c")},
				    0,
				    NULL,
				    0};

void pws_done(struct pws_world *w, struct eo_plan_result *r)
{
	eo_plan_result_clear(r);
	pws_world_free(w);
}
