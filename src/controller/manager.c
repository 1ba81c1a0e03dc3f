/*
 * controller/manager.c - informers, queues, workers, leader election. See manager.h.
 */
#include "controller/manager.h"
#include "controller/tlsload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/meta.h"
#include "api/names.h"
#include "desired/netpol.h"
#include "controller/controller.h"
#include "controller/informers.h"
#include "kube/config.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "kube/lease.h"
#include "kube/queue.h"
#include "obs/log.h"

#define MANAGED_SELECTOR EO_LABEL_MANAGED_BY "=" EO_LABEL_MANAGED_BY_VALUE
#define LEASE_TIMEOUT_MS 2000L
#define QUEUE_WAIT_MS	 1000L
/* Least lease time left for an etcd membership change: the controller's etcd request
 * timeout (controller.c ETCD_TIMEOUT_MS). Renewals every 2 s keep 8-10 s left. */
#define ETCD_FENCE_MARGIN_MS 5000L
#define FENCE_RETRY_MS	     1000L /* a reconcile held back by the fence comes back after */

/* --pod-run-as-user goes to the desired objects as it is parsed. */
_Static_assert(EO_CFG_POD_UID_AUTO == EO_DESIRED_POD_UID_AUTO &&
		   EO_DEFAULT_POD_UID == EO_DESIRED_POD_UID_DEFAULT,
	       "config and desired agree on the Pod user");

enum kind {
	K_CLUSTER,
	K_MEMBER,
	K_POD,
	K_PVC,
	K_SERVICE,
	K_PDB,
	K_SNAPSHOT,
	K_JOB,
	K_SCHEDULE,
	K_NETPOL,
	K_DEFRAG,
	K_DEFRAG_SCHEDULE,
	K_ARCHIVE,
	K_COUNT
};

/* cluster, member, snapshot, schedule, defrag, nospace, defrag schedule, archive */
#define NCTL 8

static const struct {
	const char *gv, *plural, *name, *selector;
} kinds[K_COUNT] = {
    [K_CLUSTER] = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, "EtcdCluster", NULL},
    [K_MEMBER] = {EO_API_GROUP_VERSION, EO_PLURAL_MEMBERS, "EtcdMember", NULL},
    [K_POD] = {"v1", "pods", "Pod", MANAGED_SELECTOR},
    [K_PVC] = {"v1", "persistentvolumeclaims", "PersistentVolumeClaim", MANAGED_SELECTOR},
    [K_SERVICE] = {"v1", "services", "Service", MANAGED_SELECTOR},
    [K_PDB] = {"policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", MANAGED_SELECTOR},
    [K_SNAPSHOT] = {EO_API_GROUP_VERSION, EO_PLURAL_SNAPSHOTS, "EtcdSnapshot", NULL},
    [K_JOB] = {"batch/v1", "jobs", "Job", MANAGED_SELECTOR},
    [K_SCHEDULE] = {EO_API_GROUP_VERSION, EO_PLURAL_SCHEDULES, "EtcdSnapshotSchedule", NULL},
    [K_NETPOL] = {"networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", MANAGED_SELECTOR},
    [K_DEFRAG] = {EO_API_GROUP_VERSION, EO_PLURAL_DEFRAGS, "EtcdDefrag", NULL},
    [K_DEFRAG_SCHEDULE] = {EO_API_GROUP_VERSION, EO_PLURAL_DEFRAG_SCHEDULES, "EtcdDefragSchedule",
			   NULL},
    [K_ARCHIVE] = {EO_API_GROUP_VERSION, EO_PLURAL_ARCHIVES, "EtcdArchive", NULL},
};

struct ctl {
	const char *name; /* metrics label */
	eo_kube_queue *q;
	void (*reconcile)(struct eo_controller *, const char *, const char *,
			  struct eo_reconcile_out *);
};

struct handler_ud {
	struct eo_manager *m;
	enum kind kind;
	struct eo_informer_source src; /* for skip and health reports */
};

struct eo_manager {
	const struct eo_config *cfg;
	struct eo_operator_metrics *om;
	struct eo_ready *ready;
	eo_kube_client *kc;
	eo_kube_client *lease_kc;
	eo_kube_recorder *rec;
	struct eo_informer_reporter *rep;
	eo_kube_lease *lease;
	eo_kube_informer *inf[K_COUNT][EO_CTRL_MAX_CACHES];
	size_t ninf;
	struct handler_ud hud[K_COUNT];
	/*
	 * Nodes (cluster-scoped, one informer whatever the watched namespaces): the cluster
	 * controller reads the node of each member's Pod from it (plan/nodeloss.h). A change
	 * that matters (Ready, cordon, taints, the evacuate annotation, deletion) enqueues the
	 * clusters with a member on the node (controller/informers.h); heartbeats do not.
	 */
	eo_kube_informer *node_inf;
	struct handler_ud node_hud;
	struct eo_controller ctrl;
	struct ctl ctls[NCTL];
	pthread_t *threads;
	size_t nthreads;
	pthread_mutex_t mu;
	bool workers_started;
	atomic_bool stopping;
	struct eo_netpol_opts netpol; /* operator_labels owned */
};

/* --- event handlers: map an object to the keys to enqueue --- */

static void enqueue(eo_kube_queue *q, const char *ns, const char *name)
{
	char key[EO_KUBE_QUEUE_KEY_MAX];

	if (ns == NULL || name == NULL)
		return;
	if (snprintf(key, sizeof(key), "%s/%s", ns, name) < (int)sizeof(key))
		eo_kube_queue_add(q, key);
}

static const char *member_owner(const json_t *obj)
{
	json_t *refs = eo_meta_get(obj, "ownerReferences");
	json_t *ref = NULL;
	size_t i;

	json_array_foreach(refs, i, ref)
	{
		const char *kind = json_string_value(json_object_get(ref, "kind"));

		if (kind != NULL && strcmp(kind, EO_KIND_MEMBER) == 0)
			return json_string_value(json_object_get(ref, "name"));
	}
	return NULL;
}

static void on_object(struct handler_ud *h, const json_t *obj)
{
	struct eo_manager *m = h->m;
	const char *ns = eo_meta_namespace(obj), *name = eo_meta_name(obj);
	eo_kube_queue *cq = m->ctls[0].q, *mq = m->ctls[1].q, *sq = m->ctls[2].q;
	eo_kube_queue *schq = m->ctls[3].q, *dq = m->ctls[4].q, *nq = m->ctls[5].q;
	eo_kube_queue *dsq = m->ctls[6].q, *aq = m->ctls[7].q;

	switch (h->kind) {
	case K_CLUSTER:
		enqueue(cq, ns, name);
		enqueue(nq, ns, name);
		break;
	case K_DEFRAG:
		enqueue(dq, ns, name);
		enqueue(dsq, ns, eo_meta_label(obj, EO_LABEL_DEFRAG_SCHEDULE));
		break;
	case K_DEFRAG_SCHEDULE:
		enqueue(dsq, ns, name);
		break;
	case K_ARCHIVE:
		enqueue(aq, ns, name);
		break;
	case K_MEMBER:
		enqueue(mq, ns, name);
		enqueue(cq, ns,
			json_string_value(
			    json_object_get(json_object_get(obj, "spec"), "clusterName")));
		break;
	case K_SNAPSHOT:
		enqueue(sq, ns, name);
		enqueue(schq, ns, eo_meta_label(obj, EO_LABEL_SCHEDULE));
		break;
	case K_SCHEDULE:
		enqueue(schq, ns, name);
		break;
	case K_JOB:
		enqueue(sq, ns, eo_meta_label(obj, EO_LABEL_SNAPSHOT));
		enqueue(schq, ns, eo_meta_label(obj, EO_LABEL_SCHEDULE));
		break;
	case K_POD:
		enqueue(sq, ns, eo_meta_label(obj, EO_LABEL_SNAPSHOT));
		enqueue(schq, ns, eo_meta_label(obj, EO_LABEL_SCHEDULE));
		enqueue(aq, ns, eo_meta_label(obj, EO_LABEL_ARCHIVE));
		/* fallthrough */
	case K_PVC:
		enqueue(mq, ns, member_owner(obj));
		enqueue(cq, ns, eo_meta_label(obj, EO_LABEL_CLUSTER));
		break;
	case K_SERVICE:
	default:
		enqueue(cq, ns, eo_meta_label(obj, EO_LABEL_CLUSTER));
		break;
	}
}

static void h_add(void *ud, json_t *obj)
{
	on_object(ud, obj);
}

static void h_update(void *ud, json_t *old_obj, json_t *new_obj)
{
	const char *a = eo_meta_resource_version(old_obj);
	const char *b = eo_meta_resource_version(new_obj);

	if (a != NULL && b != NULL && strcmp(a, b) == 0)
		return; /* a relist saw the same object */
	on_object(ud, new_obj);
}

static void h_delete(void *ud, json_t *obj)
{
	on_object(ud, obj);
}

static void h_skip(void *ud, const struct eo_kube_informer_skip *sk)
{
	eo_informer_report_skip(&((struct handler_ud *)ud)->src, sk);
}

static void h_failure(void *ud, const struct eo_kube_informer_failure *f)
{
	eo_informer_report_failure(&((struct handler_ud *)ud)->src, f);
}

static void h_recover(void *ud, const char *ns, unsigned long failures, long long failing_ms)
{
	eo_informer_report_recover(&((struct handler_ud *)ud)->src, ns, failures, failing_ms);
}

static void enqueue_cluster_key(void *ud, const char *key)
{
	eo_kube_queue_add(ud, key);
}

static void node_changed(struct handler_ud *h, const json_t *old_obj, const json_t *new_obj)
{
	struct eo_manager *m = h->m;

	(void)eo_informer_node_changed(&m->ctrl.pods, &m->ctrl.pvcs, old_obj, new_obj,
				       enqueue_cluster_key, m->ctls[0].q);
}

static void h_node_add(void *ud, json_t *obj)
{
	node_changed(ud, NULL, obj);
}

static void h_node_update(void *ud, json_t *old_obj, json_t *new_obj)
{
	node_changed(ud, old_obj, new_obj);
}

static void h_node_delete(void *ud, json_t *obj)
{
	node_changed(ud, obj, NULL);
}

/* The Node informer (see struct eo_manager); its cache becomes ctrl.nodes. 0, or -1. */
static int start_node_informer(struct eo_manager *m)
{
	/* A Node lists every image it holds: room for large ones (a skipped one reads as gone). */
	struct eo_kube_informer_opts io = {.res = {"v1", "nodes", NULL, NULL},
					   .max_object = 2u << 20};
	struct eo_kube_informer_handlers h = {.on_add = h_node_add,
					      .on_update = h_node_update,
					      .on_delete = h_node_delete,
					      .on_skip = h_skip,
					      .on_failure = h_failure,
					      .on_recover = h_recover,
					      .ud = &m->node_hud};

	m->node_hud = (struct handler_ud){m, K_COUNT, {m->rep, "Node", "v1"}};
	m->node_inf = eo_kube_informer_new(m->kc, &io, &h);
	if (m->node_inf == NULL)
		return -1;
	m->ctrl.nodes.c[0] = eo_kube_informer_cache(m->node_inf);
	m->ctrl.nodes.n = 1;
	return 0;
}

/* --- workers --- */

struct worker_arg {
	struct eo_manager *m;
	struct ctl *ctl;
};

static void *worker(void *p)
{
	struct worker_arg *wa = p;
	struct eo_manager *m = wa->m;
	struct ctl *ctl = wa->ctl;
	char *key = NULL;

	free(wa);
	for (;;) {
		enum eo_kube_queue_rc rc = eo_kube_queue_get(ctl->q, QUEUE_WAIT_MS, &key);
		struct eo_reconcile_out out;
		struct timespec t0, t1;
		enum eo_reconcile_result res;
		char *slash = NULL;

		eo_operator_metrics_queue_depth(m->om, ctl->name, eo_kube_queue_len(ctl->q));
		if (rc == EO_KUBE_QUEUE_SHUTDOWN)
			break;
		if (rc != EO_KUBE_QUEUE_ITEM)
			continue;
		if (!eo_fence_allows(&m->ctrl.fence, NULL, 0)) {
			/* Renewals are failing: start nothing new until the lease is renewed
			 * (or lost, which ends the process). */
			eo_log_kv(EO_LOG_DEBUG, NULL, "reconcile held back: leader lease not held",
				  "key", key, NULL);
			eo_kube_queue_add_after(ctl->q, key, FENCE_RETRY_MS);
			eo_kube_queue_done(ctl->q, key);
			free(key);
			key = NULL;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		slash = strchr(key, '/');
		if (slash != NULL) {
			char ns[EO_KUBE_QUEUE_KEY_MAX];
			size_t n = (size_t)(slash - key);

			memcpy(ns, key, n);
			ns[n] = '\0';
			ctl->reconcile(&m->ctrl, ns, slash + 1, &out);
		} else {
			memset(&out, 0, sizeof(out));
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (out.error) {
			res = EO_RECONCILE_ERROR;
			eo_kube_queue_add_rate_limited(ctl->q, key);
		} else {
			eo_kube_queue_forget(ctl->q, key);
			res =
			    out.requeue_ms > 0 ? EO_RECONCILE_REQUEUE_AFTER : EO_RECONCILE_SUCCESS;
			if (out.requeue_ms > 0)
				eo_kube_queue_add_after(ctl->q, key, out.requeue_ms);
		}
		eo_operator_metrics_reconcile(m->om, ctl->name, res,
					      (double)(t1.tv_sec - t0.tv_sec) +
						  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		eo_kube_queue_done(ctl->q, key);
		free(key);
		key = NULL;
	}
	return NULL;
}

/*
 * Starts cfg->workers threads per controller. -1 (logged) when any of them
 * could not be started (out of memory, thread limit): the caller fails
 * rather than run with fewer workers than asked, or none.
 */
/* Every object the caches of s hold, queued on q. */
static void enqueue_all(const struct eo_cache_set *s, eo_kube_queue *q)
{
	for (size_t i = 0; i < s->n; i++) {
		json_t *all = eo_kube_cache_list(s->c[i], NULL), *o = NULL;
		size_t j;

		json_array_foreach(all, j, o) enqueue(q, eo_meta_namespace(o), eo_meta_name(o));
		json_decref(all);
	}
}

static int start_workers(struct eo_manager *m)
{
	size_t per = (size_t)(m->cfg->workers > 0 ? m->cfg->workers : 1), started;
	char want[24], got[24];

	pthread_mutex_lock(&m->mu);
	if (m->workers_started || atomic_load(&m->stopping)) {
		pthread_mutex_unlock(&m->mu);
		return 0;
	}
	m->threads = calloc(per * NCTL, sizeof(*m->threads));
	for (size_t c = 0; m->threads != NULL && c < NCTL; c++) {
		for (size_t i = 0; i < per; i++) {
			struct worker_arg *wa = malloc(sizeof(*wa));

			if (wa == NULL)
				continue;
			*wa = (struct worker_arg){m, &m->ctls[c]};
			if (pthread_create(&m->threads[m->nthreads], NULL, worker, wa) == 0)
				m->nthreads++;
			else
				free(wa);
		}
	}
	m->workers_started = true;
	started = m->nthreads;
	pthread_mutex_unlock(&m->mu);
	if (started != per * NCTL) {
		snprintf(want, sizeof(want), "%zu", per * NCTL);
		snprintf(got, sizeof(got), "%zu", started);
		eo_log_kv(EO_LOG_ERROR, NULL, "starting reconcile workers failed", "error",
			  "out of memory or thread limit", "wanted", want, "started", got, NULL);
		return -1;
	}
	snprintf(want, sizeof(want), "%zu", per);
	eo_log_kv(EO_LOG_INFO, NULL, "reconcile workers started", "per_controller", want, NULL);
	/* Start from a full picture: every known object of each controller's kind. */
	enqueue_all(&m->ctrl.clusters, m->ctls[0].q);
	enqueue_all(&m->ctrl.members, m->ctls[1].q);
	enqueue_all(&m->ctrl.snapshots, m->ctls[2].q);
	enqueue_all(&m->ctrl.schedules, m->ctls[3].q);
	enqueue_all(&m->ctrl.defrags, m->ctls[4].q);
	enqueue_all(&m->ctrl.clusters, m->ctls[5].q);
	enqueue_all(&m->ctrl.defrag_schedules, m->ctls[6].q);
	enqueue_all(&m->ctrl.archives, m->ctls[7].q);
	return 0;
}

static void on_started_leading(void *ud)
{
	struct eo_manager *m = ud;

	eo_log_kv(EO_LOG_INFO, NULL, "became leader", "lease", m->cfg->leader_election_id, NULL);
	eo_operator_metrics_leader(m->om, m->cfg->leader_election_id, true);
	if (start_workers(m) != 0) {
		/* A leader without workers would hold the lease and do nothing. */
		eo_log_kv(EO_LOG_ERROR, NULL, "leader cannot reconcile; exiting", NULL);
		_exit(1);
	}
}

static void on_stopped_leading(void *ud)
{
	struct eo_manager *m = ud;
	char why[256];

	eo_operator_metrics_leader(m->om, m->cfg->leader_election_id, false);
	if (atomic_load(&m->stopping))
		return;
	eo_kube_lease_stop_reason(m->lease, why, sizeof(why));
	eo_log_kv(EO_LOG_ERROR, NULL, "lost the leader lease; exiting", "lease",
		  m->cfg->leader_election_id, "reason", why, NULL);
	_exit(1);
}

/* The fence's view of the lease (controller/fence.h): how long we surely still lead. */
static long lease_held_for_ms(void *ud)
{
	struct eo_manager *m = ud;

	return m->lease != NULL ? eo_kube_lease_held_for_ms(m->lease) : 0;
}

/* --- lifecycle --- */

/* The transport risks already warned about: each is logged once per process. */
static atomic_uint transport_warned;

static void warn_transport(const eo_kube_config *kcfg)
{
	unsigned risks = eo_kube_config_risks_once(kcfg, &transport_warned);

	for (unsigned bit = 1; risks != 0; bit <<= 1) {
		if ((risks & bit) == 0)
			continue;
		risks &= ~bit;
		eo_log_kv(EO_LOG_WARN, NULL, "insecure connection to the Kubernetes API server",
			  "server", eo_kube_config_server(kcfg), "detail", eo_kube_risk_text(bit),
			  NULL);
	}
}

static eo_kube_client *new_client(const struct eo_config *cfg, long timeout_ms)
{
	struct eo_kube_client_opts o = {.timeout_ms = timeout_ms, .user_agent = "etcd-operator"};
	struct eo_kube_error err = {0};
	eo_kube_config *kcfg = NULL;
	eo_kube_client *c = NULL;
	eo_kube_err e;

	e = eo_kube_config_load(cfg->kubeconfig[0] ? cfg->kubeconfig : NULL, NULL, &kcfg, &err);
	if (e == EO_KUBE_OK) {
		warn_transport(kcfg);
		e = eo_kube_client_new(kcfg, &o, &c, &err);
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_ERROR, NULL, "kubernetes client setup failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return NULL;
	}
	return c;
}

/* One work queue and reconciler per controller. */
static void init_ctls(struct eo_manager *m)
{
	m->ctls[0] = (struct ctl){"etcdcluster", eo_kube_queue_new(NULL), eo_cluster_reconcile};
	m->ctls[1] = (struct ctl){"etcdmember", eo_kube_queue_new(NULL), eo_member_reconcile};
	m->ctls[2] = (struct ctl){"etcdsnapshot", eo_kube_queue_new(NULL), eo_snapshot_reconcile};
	m->ctls[3] =
	    (struct ctl){"etcdsnapshotschedule", eo_kube_queue_new(NULL), eo_schedule_reconcile};
	m->ctls[4] = (struct ctl){"etcddefrag", eo_kube_queue_new(NULL), eo_defrag_reconcile};
	m->ctls[5] = (struct ctl){"etcdnospace", eo_kube_queue_new(NULL), eo_nospace_reconcile};
	m->ctls[6] = (struct ctl){"etcddefragschedule", eo_kube_queue_new(NULL),
				  eo_defrag_schedule_reconcile};
	m->ctls[7] = (struct ctl){"etcdarchive", eo_kube_queue_new(NULL), eo_archive_reconcile};
}

/* The controller's cache set of kind k. */
static struct eo_cache_set *cache_set_of(struct eo_manager *m, int k)
{
	return k == K_CLUSTER		? &m->ctrl.clusters
	       : k == K_MEMBER		? &m->ctrl.members
	       : k == K_POD		? &m->ctrl.pods
	       : k == K_PVC		? &m->ctrl.pvcs
	       : k == K_PDB		? &m->ctrl.pdbs
	       : k == K_SNAPSHOT	? &m->ctrl.snapshots
	       : k == K_JOB		? &m->ctrl.jobs
	       : k == K_SCHEDULE	? &m->ctrl.schedules
	       : k == K_NETPOL		? &m->ctrl.netpols
	       : k == K_DEFRAG		? &m->ctrl.defrags
	       : k == K_DEFRAG_SCHEDULE ? &m->ctrl.defrag_schedules
	       : k == K_ARCHIVE		? &m->ctrl.archives
					: &m->ctrl.services;
}

/* One informer per kind and watched namespace (nns of them), its cache in the kind's set. */
static int new_informers(struct eo_manager *m, const struct eo_config *cfg, size_t nns)
{
	for (int k = 0; k < K_COUNT; k++) {
		struct eo_cache_set *set = cache_set_of(m, k);

		m->hud[k] =
		    (struct handler_ud){m, (enum kind)k, {m->rep, kinds[k].name, kinds[k].gv}};
		for (size_t i = 0; i < nns; i++) {
			struct eo_kube_informer_opts io = {
			    .res = {kinds[k].gv, kinds[k].plural,
				    cfg->nwatch_namespaces ? cfg->watch_namespaces[i] : NULL, NULL},
			    .label_selector = kinds[k].selector,
			    .index_label = EO_LABEL_CLUSTER,
			};
			struct eo_kube_informer_handlers h = {.on_add = h_add,
							      .on_update = h_update,
							      .on_delete = h_delete,
							      .on_skip = h_skip,
							      .on_failure = h_failure,
							      .on_recover = h_recover,
							      .ud = &m->hud[k]};

			m->inf[k][i] = eo_kube_informer_new(m->kc, &io, &h);
			if (m->inf[k][i] == NULL)
				return -1;
			set->c[set->n++] = eo_kube_informer_cache(m->inf[k][i]);
		}
	}
	return 0;
}

eo_manager *eo_manager_new(const struct eo_config *cfg, struct eo_operator_metrics *om,
			   struct eo_ready *ready)
{
	struct eo_manager *m = calloc(1, sizeof(*m));
	size_t nns = cfg->nwatch_namespaces ? cfg->nwatch_namespaces : 1;

	if (m == NULL)
		return NULL;
	m->cfg = cfg;
	m->om = om;
	m->ready = ready;
	pthread_mutex_init(&m->mu, NULL);
	atomic_init(&m->stopping, false);
	init_ctls(m);
	m->kc = new_client(cfg, 0);
	m->netpol = (struct eo_netpol_opts){
	    .default_enabled = cfg->network_policy,
	    .operator_namespace = getenv("POD_NAMESPACE"),
	    .operator_labels = eo_desired_parse_labels(cfg->operator_pod_labels),
	};
	if (m->kc != NULL &&
	    (m->netpol.operator_namespace == NULL || m->netpol.operator_namespace[0] == '\0'))
		m->netpol.operator_namespace =
		    eo_kube_config_namespace(eo_kube_client_config(m->kc));
	if (m->netpol.operator_labels == NULL) {
		eo_log_kv(EO_LOG_ERROR, NULL, "invalid --operator-pod-labels", "value",
			  cfg->operator_pod_labels, NULL);
		goto fail;
	}
	if (m->kc == NULL || m->ctls[0].q == NULL || m->ctls[1].q == NULL || m->ctls[2].q == NULL ||
	    m->ctls[3].q == NULL || m->ctls[4].q == NULL || m->ctls[5].q == NULL ||
	    m->ctls[6].q == NULL || m->ctls[7].q == NULL || nns > EO_CTRL_MAX_CACHES)
		goto fail;
	m->rec = eo_kube_recorder_new(m->kc, &(struct eo_kube_recorder_opts){
						 .component = "etcd-operator",
						 .instance = getenv("POD_NAME"),
					     });
	m->rep = eo_informer_reporter_new(
	    &(struct eo_informer_reporter_opts){.rec = m->rec, .om = om, .ready = ready});
	if (m->rep == NULL)
		goto fail;
	m->ctrl = (struct eo_controller){
	    .kc = m->kc,
	    .rec = m->rec,
	    .build = {.etcd_image_repository = cfg->etcd_image_repository,
		      .cluster_domain = cfg->cluster_domain,
		      .operator_image = cfg->operator_image,
		      .pod_run_as_user = cfg->pod_run_as_user},
	    .operator_image = cfg->operator_image,
	    .netpol = &m->netpol,
	    .peer_netpol = cfg->peer_network_policy,
	    .schedule_min_interval_s = cfg->schedule_min_interval_s,
	    .schedule_default_keep_last = cfg->schedule_default_keep_last,
	    .tls_cache = eo_tls_cache_new(EO_TLS_CACHE_CAP),
	    .metrics = om != NULL ? &om->cluster : NULL,
	};
	if (m->ctrl.tls_cache == NULL)
		goto fail;
	m->ninf = nns;
	if (new_informers(m, cfg, nns) != 0 || start_node_informer(m) != 0)
		goto fail;
	return m;
fail:
	eo_log_kv(EO_LOG_ERROR, NULL, "manager setup failed", NULL);
	eo_manager_free(m);
	return NULL;
}

int eo_manager_start(eo_manager *m, long sync_timeout_ms)
{
	struct eo_kube_error err = {0};
	char *identity = NULL;
	const char *lease_ns = NULL;

	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < m->ninf; i++)
			if (eo_kube_informer_start(m->inf[k][i], &err) != EO_KUBE_OK) {
				eo_log_kv(EO_LOG_ERROR, NULL, "starting informer failed", "kind",
					  kinds[k].name, "detail", err.message, NULL);
				return -1;
			}
	if (eo_kube_informer_start(m->node_inf, &err) != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_ERROR, NULL, "starting informer failed", "kind", "Node", "detail",
			  err.message, NULL);
		return -1;
	}
	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < m->ninf; i++)
			if (!eo_kube_informer_wait_synced(m->inf[k][i], sync_timeout_ms)) {
				eo_log_kv(EO_LOG_ERROR, NULL, "informer cache did not sync", "kind",
					  kinds[k].name, NULL);
				return -1;
			}
	/* A node missing from an unsynced cache would read as deleted. */
	if (!eo_kube_informer_wait_synced(m->node_inf, sync_timeout_ms)) {
		eo_log_kv(
		    EO_LOG_ERROR, NULL,
		    "informer cache did not sync (the operator needs get/list/watch on nodes)",
		    "kind", "Node", NULL);
		return -1;
	}
	eo_ready_set(m->ready, true, NULL);
	eo_log_kv(EO_LOG_INFO, NULL, "informer caches synced", NULL);

	if (!m->cfg->leader_elect)
		return start_workers(m);
	m->lease_kc = new_client(m->cfg, LEASE_TIMEOUT_MS);
	if (m->lease_kc == NULL)
		return -1;
	lease_ns = m->cfg->leader_election_namespace[0] ? m->cfg->leader_election_namespace
							: getenv("POD_NAMESPACE");
	if (lease_ns == NULL || lease_ns[0] == '\0')
		lease_ns = eo_kube_config_namespace(eo_kube_client_config(m->lease_kc));
	identity = eo_kube_lease_identity(NULL);
	if (identity == NULL)
		return -1;
	m->lease = eo_kube_lease_new(m->lease_kc, &(struct eo_kube_lease_opts){
						      .ns = lease_ns,
						      .name = m->cfg->leader_election_id,
						      .identity = identity,
						      .request_timeout_ms = LEASE_TIMEOUT_MS,
						      .on_started = on_started_leading,
						      .on_stopped = on_stopped_leading,
						      .ud = m,
						  });
	/* Workers start only once we lead; from then on every etcd membership change first
	 * checks that the lease is held for at least one etcd call's timeout. */
	m->ctrl.fence = (struct eo_fence){lease_held_for_ms, m, ETCD_FENCE_MARGIN_MS};
	eo_log_kv(EO_LOG_INFO, NULL, "waiting for leadership", "lease", m->cfg->leader_election_id,
		  "namespace", lease_ns, "identity", identity, NULL);
	free(identity);
	if (m->lease == NULL || eo_kube_lease_start(m->lease, &err) != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_ERROR, NULL, "starting leader election failed", "detail",
			  err.message, NULL);
		return -1;
	}
	eo_operator_metrics_leader(m->om, m->cfg->leader_election_id, false);
	return 0;
}

void eo_manager_stop(eo_manager *m)
{
	if (m == NULL || atomic_exchange(&m->stopping, true))
		return; /* already stopped (stop, then free) */
	for (int c = 0; c < NCTL; c++)
		if (m->ctls[c].q != NULL)
			eo_kube_queue_shutdown(m->ctls[c].q);
	pthread_mutex_lock(&m->mu);
	for (size_t i = 0; i < m->nthreads; i++)
		pthread_join(m->threads[i], NULL);
	m->nthreads = 0;
	pthread_mutex_unlock(&m->mu);
	if (m->lease != NULL) {
		bool leader = eo_kube_lease_is_leader(m->lease);

		eo_kube_lease_stop(m->lease); /* releases the Lease if we hold it */
		eo_log_kv(EO_LOG_INFO, NULL,
			  leader ? "leader lease released" : "leader election stopped (standby)",
			  NULL);
	}
	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < m->ninf; i++)
			if (m->inf[k][i] != NULL)
				eo_kube_informer_stop(m->inf[k][i]);
	if (m->node_inf != NULL)
		eo_kube_informer_stop(m->node_inf);
}

void eo_manager_free(eo_manager *m)
{
	if (m == NULL)
		return;
	eo_manager_stop(m);
	eo_kube_lease_free(m->lease);
	for (int k = 0; k < K_COUNT; k++)
		for (size_t i = 0; i < EO_CTRL_MAX_CACHES; i++)
			eo_kube_informer_free(m->inf[k][i]);
	eo_kube_informer_free(m->node_inf);
	for (int c = 0; c < NCTL; c++)
		eo_kube_queue_free(m->ctls[c].q);
	eo_kube_recorder_free(m->rec);
	eo_informer_reporter_free(m->rep);
	eo_tls_cache_free(m->ctrl.tls_cache);
	eo_kube_client_free(m->lease_kc);
	eo_kube_client_free(m->kc);
	json_decref((json_t *)m->netpol.operator_labels);
	free(m->threads);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
