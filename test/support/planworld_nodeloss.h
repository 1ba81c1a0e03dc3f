/*
 * support/planworld_nodeloss.h - the world of the node-loss tests (moved from
 * test_plan_nodeloss.c): a bootstrapped cluster (pws_cluster) of 1 to 3 members demo-a, demo-b,
 * demo-c, all ready voters on Ready nodes n0, n1, n2, listed by etcd (the leader's list), with
 * Services and the PDB.
 *
 * Test code only. Names use the pwn_ prefix.
 */
#ifndef EO_TEST_PLANWORLD_NODELOSS_H
#define EO_TEST_PLANWORLD_NODELOSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "desired/desired.h"
#include "plan/plan.h"

#define PWN_MAXM 4 /* three members and a joining replacement */

/* The names of the members, demo-a, demo-b, demo-c (and demo-d, a replacement). */
extern const char *const PWN_NAMES[PWN_MAXM];

struct pwn_world {
	json_t *cluster, *hsvc, *csvc, *pdb;
	json_t *nodes[PWN_MAXM];
	struct eo_plan_member pm[PWN_MAXM];
	struct eo_plan_node nd[PWN_MAXM];
	size_t n;
	struct eo_etcd_member ev[PWN_MAXM];
	char peer[PWN_MAXM][EO_DESIRED_URL_MAX];
	char *peer_p[PWN_MAXM];
	struct eo_etcd_members etcd;
	struct eo_plan_input in;
};

json_t *pwn_member(const char *name);
/* A Running Pod on node, ready or not, stamped with its member's Pod hash (no roll due). */
json_t *pwn_pod(const json_t *m, const char *node, bool ready);
/* A Node whose Ready condition is ready ("True", "False", "Unknown") since since. */
json_t *pwn_node(const char *name, const char *ready, time_t since);
/* n members, all ready voters on Ready nodes, all listed by etcd (the leader's list). */
void pwn_world_init(struct pwn_world *w, size_t n);
void pwn_world_free(struct pwn_world *w);
/* The end of a test on w: clears the result r (eo_plan_result_clear) and frees the world. */
void pwn_done(struct pwn_world *w, struct eo_plan_result *r);

#endif
