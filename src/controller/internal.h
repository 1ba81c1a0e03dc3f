/*
 * controller/internal.h - what the files of the cluster and member reconcilers share: the
 * resources they address, the observed members of a pass, and the observe and act functions
 * more than one file calls. Not an API: only src/controller and its unit tests include it (the
 * eo__ prefix: shared inside one module).
 */
#ifndef EO_CONTROLLER_INTERNAL_H
#define EO_CONTROLLER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "controller/authload.h"
#include "controller/certs.h"
#include "controller/controller.h"
#include "controller/tlsload.h"
#include "etcd/client.h"
#include "obs/log.h"
#include "plan/auth.h"
#include "plan/failure.h"
#include "plan/member.h"
#include "plan/nodeloss.h"
#include "plan/plan.h"
#include "plan/removal.h"
#include "plan/retain.h"
#include "plan/roll.h"

#define CONFLICT_REQUEUE_MS 1000L

/* "EtcdCluster <name>, uid <uid>" (eo_desired_controller_of), or "none". */
#define HOLDER_MAX (EO_NAME_MAX + 80)

static const struct eo_kube_resource RES_CLUSTERS = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, NULL,
						     NULL};
static const struct eo_kube_resource RES_MEMBERS = {EO_API_GROUP_VERSION, EO_PLURAL_MEMBERS, NULL,
						    NULL};
static const struct eo_kube_resource RES_PODS = {"v1", "pods", NULL, NULL};
static const struct eo_kube_resource RES_PVCS = {"v1", "persistentvolumeclaims", NULL, NULL};
static const struct eo_kube_resource RES_NODES = {"v1", "nodes", NULL, NULL};
static const struct eo_kube_resource RES_STORAGECLASSES = {"storage.k8s.io/v1", "storageclasses",
							   NULL, NULL};
static const struct eo_kube_resource RES_SERVICES = {"v1", "services", NULL, NULL};
static const struct eo_kube_resource RES_PDBS = {"policy/v1", "poddisruptionbudgets", NULL, NULL};
static const struct eo_kube_resource RES_NETPOLS = {"networking.k8s.io/v1", "networkpolicies", NULL,
						    NULL};

struct observed_members {
	struct eo_plan_member *v;
	struct eo_plan_node *nodes; /* nodes[i]: the Node of v[i]; NULL: nodes not watched */
	json_t *members;	    /* the array of typed copies the entries borrow from */
	json_t *owned;		    /* keeps pods/pvcs alive */
	size_t n;
};

/* The last write of a reconcile pass that the apiserver refused (plan/failure.h). */
struct eo__ctl_refusal {
	bool set;
	enum eo_plan_verb verb;
	char kind[32];
	char name[EO_NAME_MAX];
	struct eo_kube_error err;
};

/*
 * One reconcile pass of the cluster or member reconciler, declared by the reconciler and passed
 * to what dials etcd or writes: the TLS material and root password of the cluster (set by
 * eo__ctl_load_tls/eo__ctl_load_auth; NULL for a plaintext cluster, without spec.auth, or when
 * unusable), the last write the apiserver refused (the act functions record into it from their
 * error paths, the reconciler reads it when the action failed), and the log context.
 */
struct eo_pass {
	const struct eo_tls_material *tls;
	const struct eo_auth_creds *auth;
	struct eo__ctl_refusal refusal;
	const struct eo_log_ctx *lc;
};

/* controller/controller.c: the clock and the Events every reconciler shares */
time_t eo__ctl_now_of(const struct eo_controller *c);
void eo__ctl_emit(struct eo_controller *c, const json_t *obj, const char *type, const char *reason,
		  const char *msg);
void eo__ctl_emit_planned(struct eo_controller *c, const json_t *cluster,
			  struct eo_plan_result *pr);

/* controller/netpol.c: the NetworkPolicies */
int eo__ctl_sync_network_policies(struct eo_controller *c, const struct eo_log_ctx *lc,
				  const json_t *cluster);

/* controller/retain.c: deletionPolicy Retain */
int eo__ctl_act_retain(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		       struct observed_members *om, long *requeue);

/* controller/act_etcd.c: the actions through etcd */
eo_etcd_client *eo__ctl_etcd_dial(const struct eo_controller *c, const struct eo_pass *pass,
				  const char *const *endpoints, size_t n);
/* The same over a plan's endpoint URLs (at most EO_PLAN_MAX_ENDPOINTS of them). */
eo_etcd_client *eo__ctl_etcd_dial_urls(const struct eo_controller *c, const struct eo_pass *pass,
				       const char (*urls)[EO_DESIRED_URL_MAX], size_t n);
int eo__ctl_act_add_learner(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    const struct eo_plan_result *pr, long *requeue);
int eo__ctl_act_promote(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			const struct eo_plan_result *pr, long *requeue);
int eo__ctl_act_remove_stray(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     const struct eo_plan_result *pr, long *requeue);
int eo__ctl_act_move_leader(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    struct eo_plan_result *pr, long *requeue);
int eo__ctl_act_enable_auth(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			    struct eo_plan_result *pr, long *requeue);
int eo__ctl_dial_remove(struct eo_controller *c, const struct eo_pass *pass,
			const struct eo_rplan_result *rr, struct eo_etcd_members *list,
			eo_etcd_err *e, bool query, char *answered);

/*
 * An object this cluster owns (a Service, the PodDisruptionBudget, a NetworkPolicy) brought in
 * line by eo__ctl_ensure_owned(): created when missing, patched when it drifted, and never
 * written when another controller holds it.
 */
enum eo__ctl_owned_step {
	EO__CTL_OWNED_IN_SYNC = 0, /* ours and as wanted: nothing written */
	EO__CTL_OWNED_FOREIGN,	   /* have is held by another controller (holder): left alone */
	EO__CTL_OWNED_CREATE,	   /* a create was sent (answer: its answer) */
	EO__CTL_OWNED_PATCH,	   /* a patch was sent (answer: its answer) */
};

struct eo__ctl_owned {
	struct eo_kube_resource r; /* names the object */
	const char *kind;	   /* "Service", "PodDisruptionBudget", "NetworkPolicy" */
	const char *owner;	   /* "this EtcdCluster" (the refusal's wording) */
	const char *owner_uid;	   /* the UID of the object that should control it */
	json_t *want;		   /* the object to create */
	const json_t *have;	   /* the cached object, NULL: none */
	/* a patch the plan made from an object it found ours, or NULL: patch_of(want, have) */
	json_t *patch;
	json_t *(*patch_of)(const json_t *want, const json_t *have); /* NULL: no drift */
	/* out */
	enum eo__ctl_owned_step step;
	eo_kube_err answer; /* the apiserver's answer to the write sent */
	bool taken;	    /* a create answered AlreadyExists for another controller's object */
	char holder[HOLDER_MAX]; /* FOREIGN and taken: who controls it */
	struct eo_kube_error err;
};

/* controller/act_kube.c: the actions through the apiserver */
eo_kube_err eo__ctl_ensure_owned(struct eo_controller *c, struct eo_pass *pass,
				 struct eo__ctl_owned *o);
int eo__ctl_act_services(struct eo_controller *c, struct eo_pass *pass, json_t *cluster);
int eo__ctl_act_create_named(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     const struct eo_plan_result *pr, long *requeue);
int eo__ctl_act_complete_seed(struct eo_controller *c, struct eo_pass *pass,
			      const struct eo_plan_result *pr);
int eo__ctl_patch_member(struct eo_controller *c, struct eo_pass *pass, const json_t *member,
			 json_t *patch, bool status);
void eo__ctl_label_member_pod(struct eo_controller *c, struct eo_pass *pass,
			      const struct eo_plan_result *pr, bool voter);
int eo__ctl_act_set_initial_cluster(struct eo_controller *c, struct eo_pass *pass,
				    const struct eo_plan_result *pr);
int eo__ctl_act_remove_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			      struct eo_plan_result *pr);
int eo__ctl_act_pdb(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
		    const struct eo_plan_result *pr);
int eo__ctl_act_dormant(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			struct eo_plan_result *pr);
int eo__ctl_act_patch_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     struct eo_plan_result *pr, const char *done);
int eo__ctl_act_clear_force_request(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
				    struct eo_plan_result *pr);
int eo__ctl_act_restart_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			       struct eo_plan_result *pr, long *requeue);
int eo__ctl_patch_finalizer(struct eo_controller *c, struct eo_pass *pass,
			    struct eo_kube_resource r, const json_t *obj, const char *kind,
			    const char *fin, bool add);
int eo__ctl_patch_finalizers(struct eo_controller *c, struct eo_pass *pass, const json_t *member,
			     bool add);
int eo__ctl_create_owned(struct eo_controller *c, struct eo_pass *pass, json_t *member,
			 struct eo_kube_resource r, json_t *obj, const char *what);

/* controller/observe.c: what a pass observes */
int eo__ctl_load_tls(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		     struct eo_tls_material *m, struct eo_tlsload_problem *p);
bool eo__ctl_certs_pending(const json_t *cluster, const struct eo_certs_seen *seen);
int eo__ctl_load_auth(struct eo_controller *c, struct eo_pass *pass, const json_t *cluster,
		      struct eo_auth_creds *a, struct eo_tlsload_problem *p);
void eo__ctl_check_auth_client_cert(struct eo_pass *pass, const json_t *cluster,
				    const struct eo_tls_material *tls,
				    struct eo_tlsload_problem *p);
void eo__ctl_observed_members_free(struct observed_members *om);
const char *eo__ctl_pod_node_name(const json_t *pod);
int eo__ctl_observe_members(struct eo_controller *c, const json_t *cluster,
			    struct observed_members *om);
int eo__ctl_get_live(struct eo_controller *c, const struct eo_log_ctx *lc,
		     struct eo_kube_resource r, json_t **out);
int eo__ctl_confirm_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			 struct observed_members *om, struct eo_plan_member *pm);
int eo__ctl_read_members_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			      struct observed_members *om);
int eo__ctl_read_nodes_live(struct eo_controller *c, const struct eo_log_ctx *lc,
			    struct observed_members *om);
bool eo__ctl_confirm_leader(const struct eo_controller *c, const struct eo_pass *pass,
			    const json_t *cluster, const struct eo_plan_member *members,
			    size_t n_members, const char *answered, struct eo_etcd_members *list,
			    char *why, size_t cap);
void eo__ctl_query_members(struct eo_controller *c, const struct eo_pass *pass,
			   const struct eo_plan_result *r, struct eo_etcd_members *list,
			   eo_etcd_err *e, struct eo_etcd_status *st,
			   char from[][EO_DESIRED_URL_MAX], size_t *n_st, struct eo_plan_input *in,
			   char *msg, size_t n, char *answered, size_t cap);
json_t *eo__ctl_observe_service(struct eo_controller *c, const json_t *cluster, const char *name);

/* controller/pass.c: the refused write of the pass (struct eo_pass) */
void eo__ctl_note_refusal(struct eo_pass *pass, enum eo_plan_verb verb, const char *kind,
			  const char *name, eo_kube_err e, const struct eo_kube_error *err);
bool eo__ctl_held_by_other(struct eo_controller *c, struct eo_kube_resource r,
			   const char *owner_uid, char *holder, size_t n);
void eo__ctl_note_taken(struct eo_pass *pass, const struct eo_kube_resource *r, const char *kind,
			const char *owner, const char *holder);
bool eo__ctl_taken_by_other(struct eo_controller *c, struct eo_pass *pass,
			    struct eo_kube_resource r, const char *kind, const char *owner,
			    const char *owner_uid);
bool eo__ctl_take_refusal(const struct eo_pass *pass, struct eo_plan_failure *f);

#endif
