/*
 * support/planworld_cluster.h - the world of the whole-planner table (moved from
 * test_plan_cluster.c): a fresh EtcdCluster (generation 1; each test gives its status), members,
 * Pods, etcd answers, Services and the PDB, and the assertions on conditions and on a stable
 * status.
 *
 * Test code only. Names use the pwc_ prefix.
 */
#ifndef EO_TEST_PLANWORLD_CLUSTER_H
#define EO_TEST_PLANWORLD_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "desired/desired.h"
#include "plan/plan.h"

#define PWC_T0 1780394400	    /* 2026-06-02T10:00:00Z: the world's now */
#define VOTER  "{\"isVoter\":true}" /* a member status: marked a voter */

struct pwc_world {
	json_t *cluster;
	json_t *hsvc, *csvc;
	json_t *pdb;
	struct eo_plan_member members[8];
	size_t n;
	struct eo_etcd_members etcd;
	struct eo_etcd_member etcd_v[8];
	char etcd_peer[8][EO_DESIRED_URL_MAX];
	char *etcd_peer_p[8];
	struct eo_plan_input in;
};

json_t *pwc_cluster(int replicas, const char *status_json);
/* status after the latch pass for replicas r at T0 */
char *pwc_latched_status(int r, const char *extra);
json_t *pwc_member(const char *name, bool seed, bool pending, const char *extra_status);
json_t *pwc_pod(const char *name, bool ready);
/* The observed PDB: as built with minAvailable min. */
void pwc_world_pdb(struct pwc_world *w, int min);
void pwc_world_init(struct pwc_world *w, json_t *c, bool services);
/*
 * A Pod stands for the one the member controller built from its member: it carries that
 * member's Pod hash unless the test gave it another.
 */
void pwc_stamp_pod_hash(json_t *m, json_t *p);
void pwc_world_add(struct pwc_world *w, json_t *m, json_t *p);
/*
 * A formed cluster with the Services (spec.replicas replicas; status latched for one member with
 * clusterID 248adce0359142ba): its seed demo-aaaaa, a voter, and that member's Pod, ready or
 * not; with pdb_min > 0 the PDB (minAvailable pdb_min).
 */
void pwc_formed_world(struct pwc_world *w, int replicas, bool pod_ready, int pdb_min);
/* etcd answers: one member named name (peer URL of name) in cluster cid. */
void pwc_world_etcd(struct pwc_world *w, eo_etcd_err err, const char *name, uint64_t cid, size_t n);
void pwc_world_free(struct pwc_world *w);
/* The end of a test on w: clears the result r (eo_plan_result_clear) and frees the world. */
void pwc_done(struct pwc_world *w, struct eo_plan_result *r);
const char *pwc_cond_reason(const json_t *st, const char *type);
void pwc_assert_cond(const json_t *st, const char *type, const char *status, const char *reason);
/* Plans, then replays the result's status onto the cluster and plans again later: an
 * unchanged world must give the same status and no write. */
void pwc_assert_stable(struct pwc_world *w, const struct eo_plan_result *r);

/* RFC 7386 applied the way the apiserver applies our application/merge-patch+json. */
void pwc_merge_patch(json_t *target, const json_t *patch);
/* A steady one-member mTLS cluster with spec.auth (latched when latched). */
void pwc_auth_world(struct pwc_world *w, bool with_auth, bool latched);
/* cluster(1, status) renamed: another EtcdCluster of the same namespace. */
json_t *pwc_cluster_named(const char *name, const char *uid, const char *status_json);
/* The condition's message contains want. */
void pwc_assert_cond_says(const json_t *st, const char *type, const char *want);

#endif
