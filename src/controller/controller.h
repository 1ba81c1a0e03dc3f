/*
 * controller/controller.h - the act part: cluster and member reconcilers.
 *
 * A reconcile reads the object and what it owns from the informer caches, asks plan/ for the
 * one next action, performs it through the Kubernetes client (create, merge patch of the
 * fields we own, status merge patch only when the status differs, guarded by the object's
 * resourceVersion) or the etcd client, emits an Event for changes, logs one line per action
 * (cluster=ns/name ...), and tells the caller when to come back.
 *
 * Ownership: struct eo_controller borrows everything it points to (client, recorder, caches);
 * the manager (controller/manager.h) owns them. Reconcilers are thread-safe as long as one
 * key is handled by one worker at a time (the work queue guarantees it).
 */
#ifndef EO_CONTROLLER_CONTROLLER_H
#define EO_CONTROLLER_CONTROLLER_H

#include <stddef.h>
#include <time.h>

#include "controller/fence.h"
#include "desired/desired.h"
#include "desired/netpol.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/events.h"
#include "obs/log.h"

#define EO_CTRL_MAX_CACHES 64 /* one per watched namespace */

/* The caches of one kind, one per watched namespace (or a single all-namespaces one). */
struct eo_cache_set {
	eo_kube_cache *c[EO_CTRL_MAX_CACHES];
	size_t n;
};

/* New reference to ns/name from whichever cache holds it, or NULL. */
json_t *eo_cache_set_get(const struct eo_cache_set *s, const char *ns, const char *name);
/* New array of the objects owned by uid, over every cache. NULL on OOM. */
json_t *eo_cache_set_by_owner(const struct eo_cache_set *s, const char *uid);
/* New array of the objects in namespace ns, over every cache. NULL on OOM. */
json_t *eo_cache_set_list(const struct eo_cache_set *s, const char *ns);

struct eo_tls_cache;	   /* controller/tlsload.h */
struct eo_cluster_metrics; /* obs/metrics.h */

struct eo_controller {
	eo_kube_client *kc;    /* borrowed */
	eo_kube_recorder *rec; /* borrowed; NULL: no Events */
	struct eo_cache_set clusters, members, pods, pvcs, services, pdbs;
	struct eo_cache_set snapshots, jobs;  /* EtcdSnapshots; Jobs labelled managed-by */
	struct eo_cache_set schedules;	      /* EtcdSnapshotSchedules */
	struct eo_cache_set defrags;	      /* EtcdDefrags */
	struct eo_cache_set defrag_schedules; /* EtcdDefragSchedules */
	struct eo_cache_set archives;	      /* EtcdArchives */
	struct eo_cache_set netpols;	      /* NetworkPolicies labelled managed-by */
	const struct eo_netpol_opts *netpol;  /* NULL: NetworkPolicies are never made */
	bool peer_netpol; /* every cluster gets its peer-only NetworkPolicy <cluster>.peer */
	/* snapshot schedules (plan/schedule.h): runs closer than this are refused (0: none) */
	long schedule_min_interval_s;
	int schedule_default_keep_last; /* retention when a schedule sets none (0: keep all) */
	const char *operator_image;	/* runs snapshot Jobs; borrowed */
	struct eo_desired_opts build;	/* strings borrowed */
	long etcd_timeout_ms;		/* per etcd attempt; 0 = 5000 */
	time_t (*now)(void);		/* NULL = time(NULL) */
	struct eo_fence fence;		/* leader lease check before membership changes */
	const char *etcd_connect_to;	/* test seam: eo_etcd_config.connect_to; NULL normally */
	struct eo_tls_cache *tls_cache; /* checked TLS material by cluster; NULL: none */
	/* per-cluster gauges, set by the cluster reconciler (borrowed; NULL: none) */
	struct eo_cluster_metrics *metrics;

	/*
	 * Nodes (one cluster-wide cache, synced before any reconcile): n == 0 means nodes are
	 * not watched, and a Pod's node is then never looked up (plan/nodeloss.h).
	 */
	struct eo_cache_set nodes;
};

/* Up to this many endpoints get a route (etcd clients take at most 16). */
#define EO_CONTROLLER_ROUTES_MAX 16
#define EO_CONTROLLER_ROUTE_LEN	 (EO_DESIRED_URL_MAX + 64)

/*
 * Where to connect for the member endpoints of one etcd client (eo_etcd_config.routes): the
 * member's Pod IP from the Pod cache, for each endpoint whose member has a usable Pod
 * (eo_desired_member_route). Endpoints without one are reached by DNS as before.
 */
struct eo_controller_routes {
	char entry[EO_CONTROLLER_ROUTES_MAX][EO_CONTROLLER_ROUTE_LEN];
	const char *ptr[EO_CONTROLLER_ROUTES_MAX];
	size_t n;
};
void eo_controller_routes(const struct eo_controller *c, const char *const *endpoints, size_t n,
			  struct eo_controller_routes *out);

/* Outcome of one reconcile. */
struct eo_reconcile_out {
	long requeue_ms; /* > 0: come back after this long */
	bool error;	 /* failed: retry with backoff */
};

/* Reconciles the EtcdCluster ns/name (which may be gone: then nothing happens). */
void eo_cluster_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out);

/* Reconciles the EtcdMember ns/name. */
void eo_member_reconcile(struct eo_controller *c, const char *ns, const char *name,
			 struct eo_reconcile_out *out);

/* Reconciles the EtcdSnapshot ns/name (controller/snapshot.c). */
void eo_snapshot_reconcile(struct eo_controller *c, const char *ns, const char *name,
			   struct eo_reconcile_out *out);

/* Reconciles the EtcdSnapshotSchedule ns/name (controller/schedule.c). */
void eo_schedule_reconcile(struct eo_controller *c, const char *ns, const char *name,
			   struct eo_reconcile_out *out);

/* Reconciles the EtcdDefrag ns/name (controller/defrag.c). */
void eo_defrag_reconcile(struct eo_controller *c, const char *ns, const char *name,
			 struct eo_reconcile_out *out);

/* Reconciles the EtcdDefragSchedule ns/name (controller/defrag_schedule.c). */
void eo_defrag_schedule_reconcile(struct eo_controller *c, const char *ns, const char *name,
				  struct eo_reconcile_out *out);

/* Reconciles the EtcdArchive ns/name (controller/archive.c). */
void eo_archive_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out);

/* Reads the alarms of the EtcdCluster ns/name and recovers from NOSPACE (controller/defrag.c). */
void eo_nospace_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out);

/*
 * Merge patch that turns status cur into want at the top level (changed keys set, removed
 * keys null) plus metadata.resourceVersion = rv as a precondition. New reference; NULL on
 * OOM.
 */
json_t *eo_controller_status_patch(const json_t *cur, const json_t *want, const char *rv);

/*
 * The status patch of obj towards want (eo_controller_status_patch against obj's status and
 * resourceVersion) with status.observedGeneration set to obj's metadata.generation, so that
 * Argo CD, Flux (kstatus) and kubectl wait can tell the status describes the current spec.
 * want is not changed. New reference; NULL on OOM.
 */
json_t *eo_controller_object_status_patch(const json_t *obj, const json_t *want);

/*
 * Writes the desired status of obj at r (namespace and name filled in) when it differs, with the
 * object's resourceVersion as the precondition. 0 written or nothing to write, 1 a conflict or
 * the object is gone (stale cache: come back soon), -1 failure (logged).
 */
int eo_controller_write_status(struct eo_controller *c, const struct eo_log_ctx *lc,
			       struct eo_kube_resource r, const json_t *obj, const json_t *want);

/*
 * Deep copy of a cached object with apiVersion/kind filled in where missing (list items lack
 * them). New reference; NULL when obj is NULL or on OOM.
 */
json_t *eo_controller_typed_copy(json_t *obj, const char *api_version, const char *kind);

/* The reconcilers' clock: c->now, or time(NULL) when it is not set. */
time_t eo_controller_now(const struct eo_controller *c);

#endif
