/*
 * support/planworld_scale_down.h - a set of EtcdMembers and their Pods (moved from
 * test_plan_scale_down.c): name, creationTimestamp, voter mark, pending, Pod state, written
 * with the row macros below, for the victim choice and the quorum of a removal.
 *
 * Test code only. Names use the pwd_ prefix.
 */
#ifndef EO_TEST_PLANWORLD_SCALE_DOWN_H
#define EO_TEST_PLANWORLD_SCALE_DOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "desired/desired.h"
#include "plan/plan.h"

#define PWD_MAXM 8

/* Creation times of the rows, oldest first. */
#define A "2026-06-02T09:00:00Z"
#define B "2026-06-02T09:01:00Z"
#define C "2026-06-02T09:02:00Z"
#define D "2026-06-02T09:03:00Z"
#define E "2026-06-02T09:04:00Z"

enum pwd_pod { PWD_NO_POD, PWD_NOT_READY, PWD_READY };

struct pwd_m {
	const char *name;
	const char *created;
	bool voter;
	bool pending;
	enum pwd_pod pod;
	bool deleting;
};

#define PWD_V(n, t)                                                                                \
	{                                                                                          \
		n, t, true, false, PWD_READY, false                                                \
	} /* ready voter */

#define PWD_VNR(n, t)                                                                              \
	{                                                                                          \
		n, t, true, false, PWD_NOT_READY, false                                            \
	} /* voter whose Pod is not ready */

#define PWD_VNP(n, t)                                                                              \
	{                                                                                          \
		n, t, true, false, PWD_NO_POD, false                                               \
	} /* voter without a Pod */

#define PWD_L(n, t)                                                                                \
	{                                                                                          \
		n, t, false, false, PWD_READY, false                                               \
	} /* learner (not marked a voter) */

#define PWD_P(n, t)                                                                                \
	{                                                                                          \
		n, t, false, true, PWD_NO_POD, false                                               \
	} /* pending: never joined */

#define PWD_DEL(n, t)                                                                              \
	{                                                                                          \
		n, t, true, false, PWD_READY, true                                                 \
	} /* being deleted */

struct pwd_set {
	struct eo_plan_member pm[PWD_MAXM];
	size_t n;
};

json_t *pwd_member(const struct pwd_m *d);
json_t *pwd_pod(const struct pwd_m *d);
void pwd_set_init(struct pwd_set *s, const struct pwd_m *ms);
void pwd_set_free(struct pwd_set *s);

#endif
