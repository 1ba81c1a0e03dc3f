/*
 * plan/member.c - the member controller's decisions. See member.h.
 */
#include "plan/member.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/strbuf.h"
#include "core/util.h"
#include "desired/restore.h"
#include "plan/failure.h"
#include "plan/plan.h"
#include "plan/podissue.h"
#include "plan/retain.h"
#include "plan/storage.h"
#include "plan/volref.h"

static const char *const names[EO_MPLAN_ACTION_COUNT_] = {
    [EO_MPLAN_NONE] = "none",
    [EO_MPLAN_WAIT] = "wait",
    [EO_MPLAN_ADD_FINALIZER] = "add-finalizer",
    [EO_MPLAN_REMOVE_MEMBER] = "remove-member",
    [EO_MPLAN_DROP_FINALIZER] = "drop-finalizer",
    [EO_MPLAN_CREATE_PVC] = "create-pvc",
    [EO_MPLAN_CREATE_POD] = "create-pod",
    [EO_MPLAN_DELETE_POD] = "delete-pod",
    [EO_MPLAN_PATCH_POD] = "patch-pod",
    [EO_MPLAN_REFUSE] = "refuse",
    [EO_MPLAN_READ_VOLUME] = "read-volume",
    [EO_MPLAN_READ_CLASS] = "read-class",
    [EO_MPLAN_PATCH_PVC] = "patch-pvc",
    [EO_MPLAN_QUERY_ETCD] = "query-etcd",
};

const char *eo_mplan_action_name(enum eo_mplan_action a)
{
	return EO_ENUM_NAME(names, a, "unknown");
}

void eo_member_plan_clear(struct eo_mplan_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->object);
	json_decref(r->status);
	memset(r, 0, sizeof(*r));
}

struct mctx {
	const struct eo_mplan_input *in;
	struct eo_mplan_result *out;
	json_t *st;
	bool ok;
};

#define msgf(x, ...) EO_FMT((x)->out->message, __VA_ARGS__)

static void cond(struct mctx *x, const char *type, const char *status, const char *reason,
		 const char *msg)
{
	struct eo_condition c = {type, status, reason, msg, eo_member_generation(x->in->member)};

	if (eo_condition_set(x->st, &c, x->in->now) < 0)
		x->ok = false;
}

static void set_status(struct mctx *x, const char *key, json_t *v)
{
	if (v == NULL || json_object_set_new(x->st, key, v) != 0)
		x->ok = false;
}

static const char *pod_phase(const json_t *pod)
{
	const char *p = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));

	return p != NULL ? p : "Unknown";
}

/* True for a Pod in a phase it never leaves, that is not already going away. */
static bool pod_terminal(const json_t *pod)
{
	return pod != NULL && !eo_meta_is_deleting(pod) && !eo_plan_pod_running(pod);
}

static const char *pod_label(const json_t *pod, const char *key)
{
	return eo_meta_label(pod, key);
}

static void refuse(struct mctx *x, const char *kind, const char *name)
{
	msgf(x, "%s %s exists but is not controlled by this EtcdMember; not touching it", kind,
	     name);
	cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, x->out->message);
	x->out->action = EO_MPLAN_REFUSE;
	x->out->event_type = "Warning";
	x->out->event_reason = "ForeignObject";
}

/* An etcd error that only a serving etcd answers with (not a timeout or a transport failure). */
static bool etcd_refusal(eo_etcd_err e)
{
	switch (e) {
	case EO_ETCD_LEARNER:
	case EO_ETCD_AUTH:
	case EO_ETCD_NOTFOUND:
	case EO_ETCD_NOSPACE:
	case EO_ETCD_UNSUPPORTED:
	case EO_ETCD_INTERNAL:
		return true;
	default:
		return false;
	}
}

/* A controlled Pod that is not ready: what the user has to fix, or its phase. */
static void pod_not_ready(struct mctx *x)
{
	const struct eo_mplan_input *in = x->in;
	const json_t *m = in->member;
	struct eo_pod_issue is;

	if (eo_plan_pod_issue(m, in->pod, in->pvc, in->now, &is)) {
		/* Something the user has to fix: say what (plan/podissue.h). */
		msgf(x, "%s", is.message);
		cond(x, EO_COND_READY, EO_COND_FALSE, is.reason, x->out->message);
	} else {
		msgf(x, "pod phase: %s", pod_phase(in->pod));
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, x->out->message);
		/* Some issues only show after a grace (podissue.h): look again. */
		x->out->requeue_ms = EO_PLAN_REQUEUE_ETCD_MS;
	}
	x->out->action = EO_MPLAN_NONE;
}

/* The member ID and version etcd gave (from this cluster only) go to the status. */
static void record_etcd_ids(struct mctx *x, bool own_list, bool own_status)
{
	const struct eo_mplan_input *in = x->in;
	const json_t *m = in->member;
	const char *mname = eo_member_name(m);
	char peer[EO_DESIRED_URL_MAX], buf[64];

	if (own_list && eo_desired_member_peer_url(peer, sizeof(peer), in->build, mname,
						   eo_member_service(m), eo_member_namespace(m),
						   eo_desired_member_peer_tls(m)) == 0) {
		const struct eo_etcd_member *em = eo_plan_find_etcd_member(in->list, mname, peer);

		if (em != NULL) {
			eo_plan_format_id(em->id, buf, sizeof(buf));
			set_status(x, "memberID", json_string(buf));
		}
	}
	if (own_status && eo_present(in->status->version))
		set_status(x, "version", json_string(in->status->version));

	/*
	 * A learner refuses the member list (EO_ETCD_LEARNER) but answers its status, whose
	 * header names the member that answered: the member's own ID, asked at its own address.
	 */
	if (!eo_present(json_string_value(json_object_get(x->st, "memberID"))) && own_status &&
	    in->status->member_id != 0) {
		eo_plan_format_id(in->status->member_id, buf, sizeof(buf));
		set_status(x, "memberID", json_string(buf));
	}
}

/* Ready: True only after an answer from the member's own client URL and a known member ID. */
static void ready_of(struct mctx *x, bool was_ready, bool answered, bool foreign, const char *mid)
{
	const struct eo_mplan_input *in = x->in;

	if (!was_ready && !answered) {
		msgf(x, "pod is ready; etcd does not answer on its client port yet (%s)",
		     !in->etcd_queried		    ? "not asked"
		     : in->status_err != EO_ETCD_OK ? eo_etcd_strerror(in->status_err)
						    : "another etcd cluster answered");
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_NOT_SERVING, x->out->message);
		x->out->requeue_ms = EO_PLAN_REQUEUE_PENDING_MS;
	} else if (!eo_present(mid)) {
		msgf(x, "pod is ready; discovering the etcd member ID (%s)",
		     in->etcd_queried && in->list_err != EO_ETCD_OK ? eo_etcd_strerror(in->list_err)
		     : foreign
			 ? "the member list came from another etcd cluster than status.clusterID"
			 : "not in the member list");
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_DISCOVERING_MEMBER_ID,
		     x->out->message);
		x->out->requeue_ms =
		    answered ? EO_PLAN_REQUEUE_ETCD_MS : EO_PLAN_REQUEUE_PENDING_MS;
	} else {
		cond(x, EO_COND_READY, EO_COND_TRUE, EO_REASON_POD_READY, "");
	}
}

/* VersionDrifted: the version etcd reported against spec.version. */
static void version_of(struct mctx *x, const char *ver)
{
	const struct eo_mplan_input *in = x->in;
	const json_t *m = in->member;

	if (eo_present(ver)) {
		const char *want = eo_member_version(m);

		if (want != NULL && strcmp(want, ver) == 0) {
			cond(x, EO_COND_VERSION_DRIFTED, EO_COND_FALSE, EO_REASON_VERSION_MATCHED,
			     "");
		} else {
			msgf(x, "running etcd %s, spec.version is %s", ver, want ? want : "");
			cond(x, EO_COND_VERSION_DRIFTED, EO_COND_TRUE, EO_REASON_VERSION_MISMATCH,
			     x->out->message);
		}
	} else if (in->etcd_queried && x->out->requeue_ms == 0) {
		x->out->requeue_ms = EO_PLAN_REQUEUE_ETCD_MS;
	}
}

/* Status of a member with a controlled Pod. */
static void pod_status(struct mctx *x, const char *pvc_name, bool memory)
{
	const struct eo_mplan_input *in = x->in;
	const json_t *m = in->member;
	const char *mname = eo_member_name(m);
	const char *pod_uid = eo_meta_uid(in->pod);
	const char *old_uid = json_string_value(json_object_get(x->st, "podUID"));
	const char *mid = json_string_value(json_object_get(x->st, "memberID"));
	const char *ver = json_string_value(json_object_get(x->st, "version"));
	bool ready = eo_plan_pod_ready(in->pod);
	/* A member list or status from another etcd cluster (a reused address) records nothing. */
	bool foreign = in->etcd_queried && in->list != NULL &&
		       !eo_plan_same_cluster(in->cluster, in->list->cluster_id);
	bool own_list =
	    in->etcd_queried && in->list_err == EO_ETCD_OK && in->list != NULL && !foreign;
	bool own_status = in->etcd_queried && in->status_err == EO_ETCD_OK && in->status != NULL &&
			  eo_plan_same_cluster(in->cluster, in->status->cluster_id);
	const char *want_ver = eo_member_version(m);
	/*
	 * Ask etcd again when the Pod is another one, and while the version etcd reported
	 * differs from spec.version: the Pod's UID is recorded while it is not ready yet, so
	 * after a rolling update the new Pod's UID is already known when it becomes ready.
	 *
	 * Ready=True says more than the Pod's probe: etcd answers on its client port. The probe
	 * (/health on the metrics port) passes before etcd serves clients: a member that joined
	 * through the leader's snapshot can wait up to its request timeout (about 7 s) to publish
	 * itself, and its client port serves nothing until then. So each turn to True follows an
	 * answer from the member's own client URL in the same pass.
	 */
	bool was_ready = eo_condition_is_true(x->st, EO_COND_READY);
	bool need = !was_ready || !eo_present(mid) || !eo_present(ver) || !eo_present(old_uid) ||
		    pod_uid == NULL || strcmp(old_uid, pod_uid) != 0 ||
		    (want_ver != NULL && strcmp(ver, want_ver) != 0);
	bool answered;

	set_status(x, "podName", json_string(mname));
	if (pod_uid != NULL)
		set_status(x, "podUID", json_string(pod_uid));
	if (!memory)
		set_status(x, "pvcName", json_string(pvc_name));
	set_status(x, "replicas", json_integer(ready ? 1 : 0));
	if (!ready) {
		pod_not_ready(x);
		return;
	}
	if (need && !in->etcd_queried) {
		if (eo_desired_member_client_url(x->out->endpoint, sizeof(x->out->endpoint),
						 in->build, mname, eo_member_service(m),
						 eo_member_namespace(m),
						 eo_desired_member_client_tls(m)) != 0)
			x->ok = false;
		x->out->action = EO_MPLAN_QUERY_ETCD;
		msgf(x, "reading the member ID and version from etcd");
		return;
	}
	record_etcd_ids(x, own_list, own_status);

	/*
	 * etcd answered at the member's own client URL: a reply of this cluster, or a refusal
	 * only a serving etcd gives (a learner's "not supported", an auth error: a learner
	 * cannot hand out a token).
	 */
	answered =
	    own_list || own_status ||
	    (in->etcd_queried && (etcd_refusal(in->list_err) || etcd_refusal(in->status_err)));
	mid = json_string_value(json_object_get(x->st, "memberID"));
	ver = json_string_value(json_object_get(x->st, "version"));
	ready_of(x, was_ready, answered, foreign, mid);
	version_of(x, ver);
	x->out->action = EO_MPLAN_NONE;
}

/*
 * The Pod about to be created (out->object) mounts a restore source PVC: it is created only
 * once a live read found that PVC the user's own (plan/volref.h). True when the Pod waits (the
 * object dropped, the action and status set).
 */
static bool restore_volume_held(struct mctx *x)
{
	const char *claim = eo_desired_restore_claim(x->out->object);
	char why[EO_MPLAN_MSG_MAX - 64];
	enum eo_volref_verdict v;

	if (claim == NULL)
		return false;
	if (!x->in->volume_read) {
		snprintf(x->out->volume, sizeof(x->out->volume), "%s", claim);
		msgf(x, "reading restore source PVC %s before the Pod mounts it", claim);
		json_decref(x->out->object);
		x->out->object = NULL;
		x->out->action = EO_MPLAN_READ_VOLUME;
		json_decref(x->st); /* the status comes from the plan after the read */
		x->st = NULL;
		return true;
	}
	v = eo_plan_volref_check(x->in->volume, claim, NULL, eo_member_cluster_name(x->in->member),
				 why, sizeof(why));
	if (v == EO_VOLREF_USABLE)
		return false;
	json_decref(x->out->object);
	x->out->object = NULL;
	x->out->action = EO_MPLAN_WAIT;
	x->out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
	x->out->event_type = "Warning";
	x->out->event_reason =
	    v == EO_VOLREF_MISSING ? EO_REASON_VOLUME_NOT_FOUND : EO_REASON_FOREIGN_VOLUME;
	if (v == EO_VOLREF_MISSING)
		msgf(x, "restore source %s", why);
	else
		msgf(x, "restore source refused: %s", why);
	cond(x, EO_COND_READY, EO_COND_FALSE, x->out->event_reason, x->out->message);
	set_status(x, "replicas", json_integer(0));
	return true;
}

/* Before any status: a member being deleted, held by a migration, or not set up yet. */
static bool plan_early(struct mctx *x, const char *pvc_name)
{
	const struct eo_mplan_input *in = x->in;
	struct eo_mplan_result *out = x->out;
	const json_t *m = in->member;
	const char *cname = eo_member_cluster_name(m);

	if (eo_member_is_deleting(m)) {
		if (!eo_member_has_finalizer(m)) {
			out->action = EO_MPLAN_NONE;
		} else if (eo_plan_retain_holds_member(in->cluster, m, in->pvc)) {
			msgf(
			    x,
			    "cluster %s is being deleted with deletionPolicy Retain; the finalizer "
			    "waits until PVC %s no longer names this member as its owner",
			    cname, pvc_name);
			out->action = EO_MPLAN_WAIT;
			out->requeue_ms = EO_PLAN_REQUEUE_PENDING_MS;
		} else if (in->cluster == NULL || eo_cluster_is_deleting(in->cluster)) {
			msgf(x, "cluster %s is gone or being deleted; skipping etcd member removal",
			     cname);
			out->action = EO_MPLAN_DROP_FINALIZER;
		} else {
			msgf(x, "removing the member from etcd before deletion");
			out->action = EO_MPLAN_REMOVE_MEMBER;
		}
		return true;
	}
	if (in->cluster != NULL && eo_cluster_migrating(in->cluster)) {
		/* `kubectl etcd migrate` is adopting the member's Pod and PVC: hands off. */
		msgf(x, "held by kubectl etcd migrate; waiting");
		out->action = EO_MPLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return true;
	}
	if (!eo_member_has_finalizer(m)) {
		out->action = EO_MPLAN_ADD_FINALIZER;
		return true;
	}
	if (eo_member_is_pending(m)) {
		msgf(x, "waiting for spec.initialCluster");
		out->action = EO_MPLAN_WAIT;
		out->requeue_ms = EO_PLAN_REQUEUE_PENDING_MS;
		return true;
	}
	return false;
}

/* A dormant member, or one whose data is gone (its Pod, its volume, its data directory). */
static bool member_lost(struct mctx *x, const char *pvc_name)
{
	const struct eo_mplan_input *in = x->in;
	struct eo_mplan_result *out = x->out;
	const json_t *m = in->member;
	const char *uid = eo_member_uid(m);
	char why[512];

	if (eo_member_dormant(m)) {
		if (in->pod != NULL && eo_desired_is_controlled_by(in->pod, uid) &&
		    !eo_meta_is_deleting(in->pod)) {
			out->action = EO_MPLAN_DELETE_POD;
		} else {
			out->action = EO_MPLAN_NONE;
		}
		msgf(x, "member is dormant (cluster paused); data is preserved on PVC %s",
		     pvc_name);
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_PAUSED, out->message);
		set_status(x, "replicas", json_integer(0));
		json_object_del(x->st, "podUID");
		return true;
	}
	if (eo_plan_memory_member_lost(m, in->pod)) {
		/* Never a second Pod on an empty tmpfs: the cluster controller replaces it. */
		msgf(x, "memory member lost its Pod and its data; waiting to be replaced");
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, out->message);
		set_status(x, "replicas", json_integer(0));
		out->action = EO_MPLAN_WAIT;
		return true;
	}
	if (eo_plan_data_volume_lost(m, in->pvc)) {
		/*
		 * Never an empty PVC under a member ID: the member's raft log and vote went
		 * with its volume. The cluster controller removes it and adds a new member.
		 */
		msgf(x,
		     "data volume %s was %s after the member ran on it; it never starts again "
		     "under its member ID: waiting to be replaced",
		     pvc_name, in->pvc == NULL ? "lost" : "replaced");
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_DATA_VOLUME_LOST, out->message);
		set_status(x, "replicas", json_integer(0));
		out->action = EO_MPLAN_WAIT;
		return true;
	}
	if (eo_plan_data_dir_lost(m, in->pod, why, sizeof(why))) {
		/*
		 * The PVC is there but its data is not: the data guard kept etcd from starting
		 * under the member ID. The cluster controller removes it and adds a new member.
		 */
		msgf(x, "%s; waiting to be replaced", why);
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_DATA_DIR_LOST, out->message);
		set_status(x, "replicas", json_integer(0));
		out->action = EO_MPLAN_WAIT;
		return true;
	}
	return false;
}

/* A PVC member's volume: created when missing, refused when foreign, its identity recorded. */
static bool volume_held(struct mctx *x, const char *pvc_name, bool memory)
{
	const struct eo_mplan_input *in = x->in;
	struct eo_mplan_result *out = x->out;
	const json_t *m = in->member;
	const char *uid = eo_member_uid(m);
	const char *pvc_uid = NULL;

	if (!memory) {
		if (in->pvc == NULL) {
			out->action = EO_MPLAN_CREATE_PVC;
			out->object = eo_desired_member_pvc(m);
			if (out->object == NULL)
				x->ok = false;
			msgf(x, "PVC %s is missing; creating it", pvc_name);
			cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY,
			     out->message);
			set_status(x, "replicas", json_integer(0));
			return true;
		}
		if (!eo_desired_is_controlled_by(in->pvc, uid)) {
			refuse(x, "PVC", pvc_name);
			return true;
		}
		/* The identity of the volume the Pod runs on, to notice it being replaced. */
		pvc_uid = eo_meta_uid(in->pvc);
		if (!eo_present(json_string_value(json_object_get(x->st, "dataVolumeUID"))) &&
		    eo_present(pvc_uid))
			set_status(x, "dataVolumeUID", json_string(pvc_uid));
	}
	return false;
}

/*
 * Before the Pod is created: a PVC not bound yet whose StorageClass binds immediately. The
 * scheduler can see such a Pod before its claim, fail it with "unbound immediate
 * PersistentVolumeClaims" and leave it Pending for minutes after the claim binds
 * (kubernetes/kubernetes#125762), so the Pod waits for the binding instead; the PVC's
 * update wakes the member. A class that waits for the first consumer (the Pod is what
 * binds the claim), no class named, or a class that cannot be read: the Pod is created as
 * before. True when the Pod waits or the class is to be read (out set).
 */
static bool claim_binding_held(struct mctx *x)
{
	const struct eo_mplan_input *in = x->in;
	const json_t *pvc = in->pvc;
	const char *phase =
	    json_string_value(json_object_get(json_object_get(pvc, "status"), "phase"));
	const char *cls =
	    json_string_value(json_object_get(json_object_get(pvc, "spec"), "storageClassName"));
	const char *mode;

	if (pvc == NULL || (phase != NULL && strcmp(phase, "Bound") == 0) || !eo_present(cls))
		return false;
	if (!in->class_read) {
		snprintf(x->out->storage_class, sizeof(x->out->storage_class), "%s", cls);
		msgf(x, "reading StorageClass %s of PVC %s before the Pod is created", cls,
		     eo_meta_name(pvc));
		x->out->action = EO_MPLAN_READ_CLASS;
		json_decref(x->st); /* the status comes from the plan after the read */
		x->st = NULL;
		return true;
	}
	mode = json_string_value(json_object_get(in->storage_class, "volumeBindingMode"));
	if (in->storage_class == NULL || (mode != NULL && strcmp(mode, "Immediate") != 0))
		return false;
	x->out->action = EO_MPLAN_WAIT;
	x->out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
	msgf(x,
	     "PVC %s is not bound yet (StorageClass %s binds immediately); the Pod is created once "
	     "it is",
	     eo_meta_name(pvc), cls);
	cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, x->out->message);
	set_status(x, "replicas", json_integer(0));
	return true;
}

/*
 * The member asks for more storage than its PVC requests (the cluster controller raised its
 * spec.storage.size for an in-place growth, plan/storage.h): the PVC's request follows. The
 * Pod keeps running; the cluster controller waits for the capacity.
 */
static bool pvc_grow(struct mctx *x, bool memory)
{
	json_t *patch = NULL;
	struct eo_storage st;

	if (memory || eo_member_is_deleting(x->in->member) ||
	    (patch = eo_plan_pvc_grow_patch(x->in->member, x->in->pvc)) == NULL)
		return false;
	x->out->action = EO_MPLAN_PATCH_PVC;
	x->out->object = patch;
	eo_member_storage(x->in->member, &st);
	msgf(x, "growing PVC %s to %s in place", eo_meta_name(x->in->pvc), st.size);
	x->out->event_type = "Normal";
	x->out->event_reason = EO_PLAN_REASON_STORAGE_CHANGING;
	json_decref(x->st); /* the status comes from the pass after the patch */
	x->st = NULL;
	return true;
}

/* The member's Pod: created when missing, refused when foreign, deleted once ended, labelled. */
static bool pod_held(struct mctx *x, bool bootstrapped)
{
	const struct eo_mplan_input *in = x->in;
	struct eo_mplan_result *out = x->out;
	const json_t *m = in->member;
	const char *mname = eo_member_name(m), *uid = eo_member_uid(m);
	bool voter, labelled;

	if (in->pod == NULL) {
		if (claim_binding_held(x))
			return true;
		out->action = EO_MPLAN_CREATE_POD;
		struct eo_desired_opts o =
		    in->build != NULL ? *in->build : (struct eo_desired_opts){0};

		/* The CA bundles as the cluster last recorded them (plan.c rolls on a change). */
		o.ca_bundle_digest = eo_cluster_ca_bundle_digest(in->cluster);
		out->object = eo_desired_member_pod(m, &o, bootstrapped);
		if (out->object == NULL)
			x->ok = false;
		else if (restore_volume_held(x))
			return true;
		msgf(x, "Pod %s is missing; creating it", mname);
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, out->message);
		set_status(x, "replicas", json_integer(0));
		return true;
	}
	if (!eo_desired_is_controlled_by(in->pod, uid)) {
		refuse(x, "Pod", mname);
		return true;
	}
	if (pod_terminal(in->pod)) {
		/*
		 * A Pod that ended (Failed or Succeeded, e.g. after a node shutdown)
		 * never runs again. Delete it: a PVC member comes back on its data
		 * with the same member ID; a memory member is then lost and replaced.
		 */
		out->action = EO_MPLAN_DELETE_POD;
		msgf(x, "Pod %s ended in phase %s; deleting it so the member starts again", mname,
		     pod_phase(in->pod));
		cond(x, EO_COND_READY, EO_COND_FALSE, EO_REASON_POD_NOT_READY, out->message);
		return true;
	}
	voter = eo_member_is_voter(m);
	labelled = pod_label(in->pod, EO_LABEL_ROLE) != NULL &&
		   strcmp(pod_label(in->pod, EO_LABEL_ROLE), EO_LABEL_ROLE_VOTER) == 0;
	if (voter != labelled) {
		out->action = EO_MPLAN_PATCH_POD;
		out->object = voter
				  ? json_pack("{s:{s:{s:s}}}", "metadata", "labels", EO_LABEL_ROLE,
					      EO_LABEL_ROLE_VOTER)
				  : json_pack("{s:{s:{s:n}}}", "metadata", "labels", EO_LABEL_ROLE);
		if (out->object == NULL)
			x->ok = false;
		msgf(x, "%s the voter label on Pod %s", voter ? "adding" : "removing", mname);
		json_decref(x->st);
		x->st = NULL;
		return true;
	}
	return false;
}

static int plan_member(const struct eo_mplan_input *in, struct eo_mplan_result *out)
{
	const json_t *m = in->member;
	const char *mname = eo_member_name(m), *cname = eo_member_cluster_name(m);
	const char *uid = eo_member_uid(m);
	json_t *cur = json_object_get(m, "status");
	struct mctx x = {.in = in, .out = out, .ok = true};
	char pvc_name[EO_NAME_MAX], selector[2 * EO_NAME_MAX + 64];
	struct eo_storage storage;
	json_t *empty = NULL;
	bool bootstrapped;

	memset(out, 0, sizeof(*out));
	if (!eo_present(mname) || !eo_present(uid) || !eo_present(cname) ||
	    eo_name_member_pvc(pvc_name, sizeof(pvc_name), mname) != 0)
		return -1;

	if (plan_early(&x, pvc_name))
		return 0;

	x.st = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (x.st == NULL)
		return -1;
	snprintf(selector, sizeof(selector), "%s=%s,%s=%s", EO_LABEL_CLUSTER, cname,
		 EO_LABEL_COMPONENT, mname);
	set_status(&x, "selector", json_string(selector));
	eo_member_storage(m, &storage);
	bootstrapped = in->cluster != NULL && eo_present(eo_cluster_cluster_id(in->cluster));

	if (member_lost(&x, pvc_name) || volume_held(&x, pvc_name, storage.memory) ||
	    pvc_grow(&x, storage.memory) || pod_held(&x, bootstrapped))
		goto done;
	pod_status(&x, pvc_name, storage.memory);
	if (out->action == EO_MPLAN_QUERY_ETCD) {
		json_decref(x.st);
		x.st = NULL;
	}
done:
	if (!x.ok) {
		json_decref(x.st);
		eo_member_plan_clear(out);
		return -1;
	}
	out->status = x.st;
	empty = json_object();
	out->status_changed =
	    out->status != NULL && !json_equal(json_is_object(cur) ? cur : empty, out->status);
	json_decref(empty);
	return 0;
}

/*
 * A refused write (in->failure) becomes Ready=False with the failure's reason and message, on
 * the status this pass would write or, when it writes none, on the current one. Not for a
 * member being deleted: it has no Ready to tell any more.
 */
int eo_member_plan(const struct eo_mplan_input *in, struct eo_mplan_result *out)
{
	const json_t *cur = json_object_get(in->member, "status");
	json_t *empty = NULL;

	if (plan_member(in, out) != 0)
		return -1;
	if (in->failure == NULL || eo_member_is_deleting(in->member))
		return 0;
	if (out->status == NULL)
		out->status = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	empty = json_object();
	if (out->status == NULL || empty == NULL ||
	    eo_plan_failure_apply(out->status, in->failure, EO_COND_READY, EO_COND_FALSE,
				  eo_member_generation(in->member), in->now) != 0) {
		json_decref(empty);
		eo_member_plan_clear(out);
		return -1;
	}
	eo_plan_failure_message(in->failure, out->message, sizeof(out->message));
	out->status_changed = !json_equal(json_is_object(cur) ? cur : empty, out->status);
	json_decref(empty);
	return 0;
}
