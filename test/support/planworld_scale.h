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

#endif
