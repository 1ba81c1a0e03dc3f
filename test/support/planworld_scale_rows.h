/*
 * support/planworld_scale_rows.h - the short macros the rows of struct pws_row are written
 * with (moved from test_plan_scale.c): creation times A-D, members (V, VNR, L, P, DEL, DORM),
 * etcd entries (EV, EL, ELNEW), and two CA bundle digests. Include it only from test files.
 */
#ifndef EO_TEST_PLANWORLD_SCALE_ROWS_H
#define EO_TEST_PLANWORLD_SCALE_ROWS_H

#define A "2026-06-02T09:00:00Z"
#define B "2026-06-02T09:01:00Z"
#define C "2026-06-02T09:02:00Z"
#define D "2026-06-02T09:03:00Z"

/* members: struct pws_m {name, created, voter, pending, pod, deleting, dormant} */
#define PWS_M_(n, t, voter, pending, pod, deleting, dormant)                                       \
	{                                                                                          \
		n, t, voter, pending, pod, deleting, dormant                                       \
	}
#define V(n, t)	   PWS_M_(n, t, true, false, 2, false, false)  /* ready voter */
#define VNR(n, t)  PWS_M_(n, t, true, false, 1, false, false)  /* voter, Pod not ready */
#define L(n, t, p) PWS_M_(n, t, false, false, p, false, false) /* joined, not (yet) a voter */
#define P(n, t)	   PWS_M_(n, t, false, true, 0, false, false)  /* pending: no initialCluster */
#define DEL(n, t)  PWS_M_(n, t, true, false, 2, true, false)   /* being deleted */
#define DORM(n, t) PWS_M_(n, t, true, false, 0, false, true)   /* dormant voter: no Pod */
/* etcd entries: struct pws_e {peer_of, started, learner, id} */
#define PWS_E_(n, started, learner, id)                                                            \
	{                                                                                          \
		n, started, learner, id                                                            \
	}
#define EV(n)	     PWS_E_(n, true, false, 0)
#define EL(n, id)    PWS_E_(n, true, true, id)	/* started learner */
#define ELNEW(n, id) PWS_E_(n, false, true, id) /* learner that never started */

#define CA1 "1111111111111111111111111111111111111111111111111111111111111111"
#define CA2 "2222222222222222222222222222222222222222222222222222222222222222"

#endif
