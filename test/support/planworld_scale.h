/*
 * support/planworld_scale.h - the world of the planner tests of a running cluster (moved from
 * test_plan_scale.c): a bootstrapped EtcdCluster (generation 2, clusterID, latched target,
 * progress deadline, next member name), its EtcdMembers and Pods, etcd's member list, the
 * Services and the PodDisruptionBudget, written as a table row (struct pws_row).
 *
 * Test code only. Names use the pws_ prefix.
 */
#ifndef EO_TEST_PLANWORLD_SCALE_H
#define EO_TEST_PLANWORLD_SCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "desired/desired.h"
#include "plan/plan.h"

#define PWS_T0	 1780394400 /* 2026-06-02T10:00:00Z: the world's now */
#define PWS_MAXM 8

/* One EtcdMember of a row. */
struct pws_m {
	const char *name;    /* demo-<x> */
	const char *created; /* creationTimestamp */
	bool voter;	     /* status.isVoter */
	bool pending;	     /* initialCluster empty */
	int pod;	     /* 0 none, 1 not ready, 2 ready, 3 ready but the member says
			      * Ready=False/NotServing (etcd not answering clients yet), 4 ready
			      * but the member still says PodNotReady, 5 ready and the member
			      * says DiscoveringMemberID (a learner that answered) */
	bool deleting;
	bool dormant; /* spec.dormant */
};

/* One entry of etcd's member list. */
struct pws_e {
	const char *peer_of; /* peer URL of this member name */
	bool started;	     /* has a name (else "" as for a member that never started) */
	bool learner;
	uint64_t id;
};

struct pws_row {
	const char *what;
	int target; /* observed.replicas (and spec.replicas) */
	struct pws_m members[PWS_MAXM];
	struct pws_e etcd[PWS_MAXM];
	enum eo_plan_action want;
	const char *want_member; /* result->member's name, or NULL */
	uint64_t want_id;	 /* result->etcd_id, or 0 */
};

struct pws_world {
	json_t *cluster, *hsvc, *csvc, *pdb;
	struct eo_plan_member pm[PWS_MAXM];
	size_t n;
	struct eo_etcd_member ev[PWS_MAXM];
	char peer[PWS_MAXM][EO_DESIRED_URL_MAX];
	char *peer_p[PWS_MAXM];
	struct eo_etcd_members etcd;
	struct eo_plan_input in;
};

/* A bootstrapped cluster of target members (spec and status.observed). */
json_t *pws_cluster(int target);
/* The EtcdMember of d. */
json_t *pws_member(const struct pws_m *d);
/* A Pod named name, ready or pending. */
json_t *pws_pod(const char *name, bool ready);
/* p stamped with the Pod hash of member m (NULL stays NULL). */
json_t *pws_stamped(const json_t *m, json_t *p);
/* Builds the world of a row; voters counted for the PDB, which is observed as desired. */
void pws_world_init(struct pws_world *w, const struct pws_row *r);
void pws_world_free(struct pws_world *w);
/* The end of a test on w: clears the result r (eo_plan_result_clear) and frees the world. */
void pws_done(struct pws_world *w, struct eo_plan_result *r);
/*
 * The planner's input for a running cluster as after the controller's reads (etcd's list, from
 * the leader, and the live reads made) at PWS_T0; what it does not name stays zero.
 */
struct eo_plan_input pws_running_input(const json_t *cluster, const struct eo_plan_member *pm,
				       size_t n, const json_t *hsvc, const json_t *csvc,
				       const json_t *pdb, const struct eo_etcd_members *etcd);

/* Condition type's reason and message in a status, for the pause checks. */
void pws_want_cond(const json_t *st, const char *type, const char *status, const char *reason,
		   const char *msg_part);
void pws_want_paused(const json_t *st, const char *msg_part);
const char *pws_name_of(const json_t *member);
/* Makes a row's member memory-backed with a Pod that ran (status.podUID). */
void pws_make_memory(struct pws_world *w, size_t i, bool lose_pod);
/*
 * Makes a row's member one that ran on a PVC (status.memberID, status.dataVolumeUID "pvc-1")
 * and gives it the PVC with UID pvc_uid, none (NULL), or its PVC being deleted ("deleting").
 */
void pws_make_ran_on_pvc(struct pws_world *w, size_t i, const char *pvc_uid);
/* Gives a member's Pod an etcd container status: restarts, waiting reason, last exit. */
void pws_crash(struct pws_world *w, size_t i, int restarts, const char *waiting,
	       const char *last_reason);
/* Gives a member's Pod a data-guard init container that ended with `code` once (no restart). */
void pws_guard_ended(struct pws_world *w, size_t i, int code);
/* Every member answers its status; leader is the etcd id of the leader. */
void pws_world_statuses(struct pws_world *w, struct eo_etcd_status *st, uint64_t leader);
void pws_set_version(json_t *obj, const char *key, const char *v);
/* The member's Pod as the member controller rebuilds it from its (new) spec. */
void pws_rebuild_pod(struct pws_world *w, size_t i, bool ready);
/* Member i mounts a peer TLS Secret; its Pod is built with the CA bundles' digest ca. */
void pws_tls_member(struct pws_world *w, size_t i, const char *ca, bool ready);
/* Sets (value) or removes (NULL) an annotation on an object of the world. */
void pws_annotate(json_t *obj, const char *key, const char *value);
/* Member i's Pod as the member controller builds it from its member now, ready or not. */
void pws_pod_from_member(struct pws_world *w, size_t i, bool ready);
/* The status the plan computed becomes the cluster's. */
void pws_adopt_status(struct pws_world *w, struct eo_plan_result *res);
void pws_want_patch(const json_t *patch, const char *key, const char *value);
/* Held past the deadline: the pass's action and that the conditions still say so. */
void pws_want_held(struct pws_world *w, const char *what, enum eo_plan_action a,
		   const char *member);
/* Puts member i's Pod on node (spec.nodeName). */
void pws_on_node(struct pws_world *w, size_t i, const char *node);
/* Client URL of member name (as the controller records where a Status answer came from). */
const char *pws_client_url(const char *name, char *buf);

/* Three ready voters demo-a, demo-b, demo-c of a 3-member target, all listed by etcd. */
extern const struct pws_row pws_rolled3;

#endif
