/*
 * `etcd-operator data-guard`: the first init container of a member Pod built after the
 * member joined (desired/desired.h). A member that etcd knows by an ID must never start on a
 * data directory without its write-ahead log: with --initial-cluster-state=existing etcd would
 * fetch the cluster from its peers and rejoin under the old ID with an empty raft log and
 * vote, which can lose committed writes (etcd's runtime-configuration guide: a member whose
 * data directory is lost must be removed and added again).
 *
 *   --member-id   data dir                      decision
 *   given         member/wal holds a *.wal file  start (exit 0)
 *   given         no member/wal, or no *.wal     refuse: exit EO_DATA_GUARD_EXIT_NO_WAL; the
 *                                                operator reads that exit code and replaces
 *                                                the member (plan.h eo_plan_data_dir_lost)
 *   given         cannot be read (EACCES, EIO)   refuse: exit 1 (fail closed, not "lost")
 *   absent / ""   anything                       start: a member that never joined (a seed of
 *                                                a new cluster, a learner's first start)
 *
 * The refusal is written to --termination-log too, so the Pod's status says why.
 */
#ifndef EO_AGENT_DATAGUARD_H
#define EO_AGENT_DATAGUARD_H

#include <stddef.h>

#include "desired/desired.h"

/* The exit code of a refusal for a missing WAL (read by plan/plan.c eo_plan_data_dir_lost). */
#define EO_DATA_GUARD_EXIT_NO_WAL EO_DESIRED_DATA_GUARD_EXIT_NO_WAL

enum eo_data_wal {
	EO_DATA_WAL_PRESENT, /* <dir>/member/wal holds at least one *.wal file */
	EO_DATA_WAL_ABSENT,  /* <dir>/member/wal (or <dir>/member, or <dir>) does not exist,
				or holds no *.wal file */
	EO_DATA_WAL_UNKNOWN, /* it could not be read */
};

enum eo_data_guard_decision {
	EO_DATA_GUARD_START,
	EO_DATA_GUARD_REFUSE_NO_WAL,
	EO_DATA_GUARD_REFUSE_UNKNOWN,
};

/* What the data directory holds. On UNKNOWN, err receives why (may be NULL). */
enum eo_data_wal eo_data_guard_probe(const char *data_dir, char *err, size_t errcap);

/*
 * The decision (pure). member_id NULL or "": the member never joined. On a refusal msg
 * receives a one-line reason naming member and data_dir (and detail, the probe's error).
 */
enum eo_data_guard_decision eo_data_guard_decide(const char *member, const char *member_id,
						 const char *data_dir, enum eo_data_wal wal,
						 const char *detail, char *msg, size_t cap);

/* argv[0] is "data-guard". Returns the process exit code (2 for usage errors). */
int eo_agent_data_guard_main(int argc, char **argv);

#endif
