/*
 * support/rig.h - one test rig for the act layer: the stateful fake apiserver
 * (support/fake_store.h), the fake etcd (support/fake_etcd.h), a kube client and an Event
 * recorder on the fake apiserver, one informer cache per kind, and a filled
 * struct eo_controller whose etcd connections all go to the fake etcd. Names use the rig_
 * prefix.
 *
 *	struct rig r;
 *
 *	rig_start(&r, T0);
 *	rig_put(&r, RIG_CLUSTERS, cluster);		// cache and apiserver
 *	eo_cluster_reconcile(&r.ctl, "default", "demo", &out);
 *	assert_int_equal(fs_count(r.api, "PATCH", EO_PLURAL_CLUSTERS, "demo", "status", NULL), 1);
 *	rig_stop(&r);
 *
 * test_controller_act.c's test_pause_marks_the_last_member_dormant is the model of a new act
 * rule's test (about twenty lines). The caches are filled by the test only (they lag behind the
 *store as a real informer's can); rig_sync plays the informer. Every log entry carries "removes",
 *the number of etcd MemberRemove calls received by then (to check what came after etcd's answer).
 */
#ifndef EO_TEST_RIG_H
#define EO_TEST_RIG_H

#include <time.h>

#include <jansson.h>

#include "controller/controller.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "support/fake_etcd.h"
#include "support/fake_store.h"

enum rig_kind {
	RIG_CLUSTERS,
	RIG_MEMBERS,
	RIG_PODS,
	RIG_PVCS,
	RIG_SERVICES,
	RIG_PDBS,
	RIG_NODES, /* wired into ctl by rig_watch_nodes only (n == 0: nodes not watched) */
	RIG_NETPOLS,
	RIG_SNAPSHOTS,
	RIG_JOBS,
	RIG_SCHEDULES,
	RIG_DEFRAGS,
	RIG_DEFRAG_SCHEDULES,
	RIG_KINDS
};

struct rig {
	fs_store *api;
	eo_fake_etcd *etcd;
	eo_kube_config *cfg;
	eo_kube_client *kc;
	eo_kube_recorder *rec;
	eo_kube_cache *caches[RIG_KINDS];
	struct eo_controller ctl; /* build.cluster_domain "cluster.local"; etcd timeout 2 s */
};

/* The plural of kind ("etcdclusters", "pods", ...). */
const char *rig_plural(enum rig_kind kind);

/* Starts everything; the reconcilers' clock and the recorder's stand at t0 (0: the wall
 * clock). Fails the test when something cannot start. */
void rig_start(struct rig *r, time_t t0);
void rig_stop(struct rig *r);
/* Wires the Node cache into ctl (the node-loss checks run). */
void rig_watch_nodes(struct rig *r);

/* o (stolen) into kind's cache and the apiserver / the apiserver only / the cache only. */
void rig_put(struct rig *r, enum rig_kind kind, json_t *o);
void rig_store_put(struct rig *r, enum rig_kind kind, json_t *o);
void rig_cache_put(struct rig *r, enum rig_kind kind, json_t *o);
/* A copy of what the apiserver holds / the cache holds, or NULL (caller decrefs). */
json_t *rig_stored(struct rig *r, enum rig_kind kind, const char *name);
json_t *rig_cached(struct rig *r, enum rig_kind kind, const char *name);
/* The informer's job for kind: the cache takes what the apiserver holds now. */
void rig_sync(struct rig *r, enum rig_kind kind);
/* The same for the clusters, the members and the defrags (what a defrag pass reads). */
void rig_sync_defrag(struct rig *r);

/* status.conditions of a settled EtcdCluster (tu_jsonq quotes), set at 2026-06-02T09:00:00Z. */
#define RIG_SETTLED                                                                                \
	"[{'type':'Available','status':'True','reason':'QuorumHealthy','message':'',"              \
	"'lastTransitionTime':'2026-06-02T09:00:00Z','observedGeneration':1},"                     \
	"{'type':'Progressing','status':'False','reason':'Reconciled','message':'',"               \
	"'lastTransitionTime':'2026-06-02T09:00:00Z','observedGeneration':1}]"

#endif
