/*
 * support/planworld_cluster.c - see planworld_cluster.h. Moved verbatim from test_plan_cluster.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "support/planworld_cluster.h"
#include "support/testutil.h"
#include "plan/auth.h"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

json_t *pwc_cluster(int replicas, const char *status_json)
{
	json_t *c = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}, s:i}}",
			      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata",
			      "name", "demo", "namespace", "default", "uid", "c-uid", "generation",
			      1, "spec", "replicas", replicas, "version", "3.6.11", "storage",
			      "size", "1Gi", "medium", "", "progressDeadlineSeconds", 600);
	json_error_t e;

	if (status_json != NULL) {
		json_t *st = json_loads(status_json, 0, &e);

		if (st == NULL)
			fail_msg("bad status JSON: %s", e.text);
		json_object_set_new(c, "status", st);
	}
	return c;
}

/* status after the latch pass for replicas r at PWC_T0 */
char *pwc_latched_status(int r, const char *extra)
{
	char *s = NULL, next[EO_PLAN_NAME_MAX];

	/* The first member's name, recorded with the latch (see eo_plan_next_member_name). */
	if (eo_plan_next_member_name("demo", "c-uid", NULL, 0, next, sizeof(next)) != 0)
		fail();
	if (asprintf(
		&s,
		"{\"nextMemberName\":\"%s\",\"clusterToken\":\"default-demo-c-uid\",\"selector\":"
		"\"etcd-operator.cozystack.io/cluster=demo\",\"readyMembers\":0,"
		"\"brokenMembers\":0,\"progressDeadline\":\"2026-06-02T10:10:00Z\","
		"\"observed\":{\"replicas\":%d,\"version\":\"3.6.11\",\"storage\":{\"size\":"
		"\"1Gi\",\"medium\":\"\"}}%s%s}",
		next, r, extra ? "," : "", extra ? extra : "") < 0)
		fail();
	return s;
}

json_t *pwc_member(const char *name, bool seed, bool pending, const char *extra_status)
{
	char ic[EO_DESIRED_URL_MAX];
	json_t *m = NULL;

	eo_desired_seed_initial_cluster(ic, sizeof(ic), &OPTS, name, "demo", "default", false);
	m = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:[s], s:[{s:s, s:s, s:s, s:s, s:b}]}, "
		      "s:{s:s, s:s, s:b, s:s, s:s}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name",
		      name, "namespace", "default", "uid", name, "finalizers",
		      EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences", "apiVersion",
		      EO_API_GROUP_VERSION, "kind", "EtcdCluster", "name", "demo", "uid", "c-uid",
		      "controller", 1, "spec", "clusterName", "demo", "version", "3.6.11",
		      "bootstrap", seed, "initialCluster", pending ? "" : ic, "clusterToken",
		      "default-demo-c-uid");
	if (extra_status != NULL)
		json_object_set_new(m, "status", json_loads(extra_status, 0, NULL));
	return m;
}

json_t *pwc_pod(const char *name, bool ready)
{
	return json_pack("{s:{s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name", name,
			 "namespace", "default", "uid", "pod-uid", "status", "phase",
			 ready ? "Running" : "Pending", "conditions", "type", "Ready", "status",
			 ready ? "True" : "False");
}

/* The observed PDB: as built with minAvailable min. */
void pwc_world_pdb(struct pwc_world *w, int min)
{
	json_decref(w->pdb);
	w->pdb = eo_desired_pdb(w->cluster, min);
	w->in.pdb = w->pdb;
}

void pwc_world_init(struct pwc_world *w, json_t *c, bool services)
{
	memset(w, 0, sizeof(*w));
	w->cluster = c;
	if (services) {
		w->hsvc = eo_desired_headless_service(c);
		w->csvc = eo_desired_client_service(c);
	}
	w->in = (struct eo_plan_input){.cluster = c,
				       .members = w->members,
				       .headless_svc = w->hsvc,
				       .client_svc = w->csvc,
				       .build = &OPTS,
				       .now = PWC_T0};
}

/*
 * A Pod stands for the one the member controller built from its member: it carries that
 * member's Pod hash unless the test gave it another.
 */
void pwc_stamp_pod_hash(json_t *m, json_t *p)
{
	char h[EO_DESIRED_HASH_MAX];
	json_t *md = json_object_get(p, "metadata");

	if (p == NULL || json_object_get(md, "annotations") != NULL)
		return;
	if (eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)) != 0)
		fail();
	json_object_set_new(md, "annotations", json_pack("{s:s}", EO_ANNOTATION_POD_HASH, h));
}

void pwc_world_add(struct pwc_world *w, json_t *m, json_t *p)
{
	pwc_stamp_pod_hash(m, p);
	w->members[w->n].member = m;
	w->members[w->n].pod = p;
	w->n++;
	w->in.n_members = w->n;
}

void pwc_formed_world(struct pwc_world *w, int replicas, bool pod_ready, int pdb_min)
{
	char *st = pwc_latched_status(1, "\"clusterID\":\"248adce0359142ba\"");

	pwc_world_init(w, pwc_cluster(replicas, st), true);
	free(st);
	pwc_world_add(w, pwc_member("demo-aaaaa", true, false, VOTER),
		      pwc_pod("demo-aaaaa", pod_ready));
	if (pdb_min > 0)
		pwc_world_pdb(w, pdb_min);
}

/* etcd answers: one member named name (peer URL of name) in cluster cid. */
void pwc_world_etcd(struct pwc_world *w, eo_etcd_err err, const char *name, uint64_t cid, size_t n)
{
	static char peer[EO_DESIRED_URL_MAX];
	static char *peers[1];

	eo_desired_member_peer_url(peer, sizeof(peer), &OPTS, name, "demo", "default", false);
	peers[0] = peer;
	w->etcd_v[0] = (struct eo_etcd_member){.id = 0x96e78c8d1de8ec76ULL,
					       .name = (char *)name,
					       .peer_urls = peers,
					       .n_peer_urls = 1};
	w->etcd_v[1] = (struct eo_etcd_member){.id = 2, .name = (char *)"other"};
	w->etcd = (struct eo_etcd_members){.cluster_id = cid, .v = w->etcd_v, .n = n};
	w->in.etcd_queried = true;
	w->in.etcd_err = err;
	w->in.etcd = err == EO_ETCD_OK ? &w->etcd : NULL;
}

void pwc_world_free(struct pwc_world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->members[i].member);
		json_decref((json_t *)w->members[i].pod);
	}
	json_decref(w->hsvc);
	json_decref(w->csvc);
	json_decref(w->pdb);
	json_decref(w->cluster);
}

const char *pwc_cond_reason(const json_t *st, const char *type)
{
	return eo_condition_reason(st, type);
}

void pwc_assert_cond(const json_t *st, const char *type, const char *status, const char *reason)
{
	if (!eo_condition_matches(st, type, status, reason))
		fail_msg("%s: want %s/%s, have %s/%s", type, status, reason,
			 eo_condition_status(st, type) ? eo_condition_status(st, type) : "-",
			 pwc_cond_reason(st, type) ? pwc_cond_reason(st, type) : "-");
}

/* Plans, then replays the result's status onto the cluster and plans again later: an
 * unchanged world must give the same status and no write. */
void pwc_assert_stable(struct pwc_world *w, const struct eo_plan_result *r)
{
	struct eo_plan_result again = {0};

	if (r->status == NULL)
		return;
	json_object_set(w->cluster, "status", r->status);
	w->in.now += 300;
	assert_int_equal(eo_plan_cluster(&w->in, &again), 0);
	if (again.action != EO_PLAN_QUERY_MEMBERS) {
		assert_non_null(again.status);
		assert_false(again.status_changed);
		assert_true(json_equal(again.status, r->status));
	}
	eo_plan_result_clear(&again);
	w->in.now -= 300;
}

/* RFC 7386 applied the way the apiserver applies our application/merge-patch+json. */
void pwc_merge_patch(json_t *target, const json_t *patch)
{
	const char *key = NULL;
	json_t *v = NULL;

	json_object_foreach((json_t *)patch, key, v)
	{
		json_t *t = json_object_get(target, key);

		if (json_is_null(v))
			json_object_del(target, key);
		else if (json_is_object(v) && json_is_object(t))
			pwc_merge_patch(t, v);
		else if (json_is_object(v)) {
			json_t *fresh = json_object();

			pwc_merge_patch(fresh, v);
			json_object_set_new(target, key, fresh);
		} else
			json_object_set_new(target, key, json_deep_copy(v));
	}
}

/* A steady one-member mTLS cluster with spec.auth (latched when latched). */
void pwc_auth_world(struct pwc_world *w, bool with_auth, bool latched)
{
	char *st = pwc_latched_status(1, latched ? "\"clusterID\":\"248adce0359142ba\","
						   "\"authEnabled\":true"
						 : "\"clusterID\":\"248adce0359142ba\"");
	json_t *c = pwc_cluster(1, st);

	free(st);
	json_object_set_new(json_object_get(c, "spec"), "tls",
			    json_pack("{s:{s:{s:s}, s:{s:s}}}", "client", "serverSecretRef", "name",
				      "srv", "operatorClientSecretRef", "name", "cli"));
	if (with_auth)
		json_object_set_new(json_object_get(c, "spec"), "auth",
				    json_pack("{s:b, s:{s:s}}", "enabled", 1,
					      "rootCredentialsSecretRef", "name", "root"));
	json_object_del(json_object_get(c, "status"), "progressDeadline");
	pwc_world_init(w, c, true);
	pwc_world_add(w, pwc_member("demo-aaaaa", true, false, VOTER), pwc_pod("demo-aaaaa", true));
	pwc_world_pdb(w, 1);
}

/* cluster(1, status) renamed: another EtcdCluster of the same namespace. */
json_t *pwc_cluster_named(const char *name, const char *uid, const char *status_json)
{
	json_t *c = pwc_cluster(1, status_json);
	json_t *md = json_object_get(c, "metadata");

	json_object_set_new(md, "name", json_string(name));
	json_object_set_new(md, "uid", json_string(uid));
	return c;
}

/* The condition's message contains want. */
void pwc_assert_cond_says(const json_t *st, const char *type, const char *want)
{
	const json_t *cs = json_object_get(st, "conditions");
	const json_t *c = NULL;
	size_t i;

	json_array_foreach(cs, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		const char *m = json_string_value(json_object_get(c, "message"));

		if (t != NULL && strcmp(t, type) == 0) {
			if (m == NULL || strstr(m, want) == NULL)
				fail_msg("%s: message '%s' lacks '%s'", type, m ? m : "-", want);
			return;
		}
	}
	fail_msg("no %s condition", type);
}

void pwc_done(struct pwc_world *w, struct eo_plan_result *r)
{
	eo_plan_result_clear(r);
	pwc_world_free(w);
}
