/*
 * What the agents trust (pure decisions, no I/O).
 *
 * The snapshot agent streams from a member only when its copy is current. It reads the
 * Status of every endpoint it was given, takes the leader's answer (the member that names
 * itself leader, the highest term when an old leader has not stepped down yet), then asks
 * the candidates again in order and streams from the first that passes:
 *
 *   candidate                                               decision
 *   a learner                                               refuse
 *   knows no leader (leader 0)                              refuse
 *   no leader among the answers                             refuse: freshness unknown
 *   another cluster ID than the leader's                    refuse
 *   the leader itself                                       accept
 *   follows another leader than the one that answered       refuse
 *   reports no applied index (0)                            refuse: only the leader is used
 *   applied index < the leader's commit index (read first)  refuse: lagging
 *   applied index >= the leader's commit index              accept
 *
 * The leader's answer is read before the candidate's, so an accepted follower holds every
 * write the leader had committed when the agent started.
 *
 * The restore agent compares the SHA-256 of the snapshot file with the checksum the user
 * expects (spec.bootstrap.restore.source.expectedChecksum, written as
 * EtcdSnapshot.status.artifact.checksum writes it: "sha256:" and 64 lower-case hex digits).
 */
#ifndef EO_SNAPSHOT_TRUST_H
#define EO_SNAPSHOT_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One member's Status answer, as far as the choice needs it. */
struct eo_snap_member {
	bool answered; /* false: the fields below mean nothing */
	bool is_learner;
	uint64_t cluster_id;
	uint64_t member_id;
	uint64_t leader; /* 0: the member knows no leader */
	uint64_t raft_term;
	uint64_t raft_index;	     /* the member's commit index */
	uint64_t raft_applied_index; /* 0 when not reported (etcd before 3.4) */
};

/*
 * The index of the leader's answer among m[n]: an answer whose member ID is its own leader
 * field; with several, the one of the highest term. -1 when none.
 */
int eo_snap_find_leader(const struct eo_snap_member *m, size_t n);

/*
 * Whether the candidate c may be streamed from, leader being the leader's answer read
 * before c's (NULL when no leader answered). false with the reason in why[cap].
 */
bool eo_snap_member_fresh(const struct eo_snap_member *c, const struct eo_snap_member *leader,
			  char *why, size_t cap);

/*
 * The expected checksum against the SHA-256 (lower-case hex) of the file: 0 when they are
 * the same, or when expected is NULL or "" (nothing expected); -1 with why[cap] otherwise
 * (a differing checksum, or an expected checksum that is not well formed:
 * eo_snapshot_checksum_well_formed).
 */
int eo_checksum_check(const char *expected, const char *sha_hex, char *why, size_t cap);

#endif
