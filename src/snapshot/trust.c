/* What the agents trust (trust.h). */
#include "snapshot/trust.h"

#include <stdio.h>
#include <string.h>

#include "api/snapshot.h"

#define SHA_PREFIX "sha256:"

int eo_snap_find_leader(const struct eo_snap_member *m, size_t n)
{
	int best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!m[i].answered || m[i].leader == 0 || m[i].leader != m[i].member_id)
			continue;
		if (best < 0 || m[i].raft_term > m[best].raft_term)
			best = (int)i;
	}
	return best;
}

bool eo_snap_member_fresh(const struct eo_snap_member *c, const struct eo_snap_member *leader,
			  char *why, size_t cap)
{
	if (!c->answered) {
		snprintf(why, cap, "did not answer Status");
		return false;
	}
	if (c->is_learner) {
		snprintf(why, cap, "is a learner");
		return false;
	}
	if (c->leader == 0) {
		snprintf(why, cap, "knows no leader: it may be cut off from the quorum");
		return false;
	}
	if (leader == NULL || !leader->answered) {
		snprintf(why, cap,
			 "the leader (%llx) is not among the endpoints that answered: whether "
			 "this member is current cannot be checked",
			 (unsigned long long)c->leader);
		return false;
	}
	if (c->cluster_id != leader->cluster_id) {
		snprintf(why, cap, "belongs to cluster %llx, the leader to %llx",
			 (unsigned long long)c->cluster_id, (unsigned long long)leader->cluster_id);
		return false;
	}
	if (c->member_id == leader->member_id)
		return true;
	if (c->leader != leader->member_id) {
		snprintf(why, cap, "follows leader %llx, not %llx that answered as the leader",
			 (unsigned long long)c->leader, (unsigned long long)leader->member_id);
		return false;
	}
	if (c->raft_applied_index == 0) {
		snprintf(why, cap,
			 "reports no applied index: only the leader is streamed from then");
		return false;
	}
	if (c->raft_applied_index < leader->raft_index) {
		snprintf(why, cap,
			 "is lagging: it has applied index %llu, the leader had committed %llu",
			 (unsigned long long)c->raft_applied_index,
			 (unsigned long long)leader->raft_index);
		return false;
	}
	return true;
}

int eo_checksum_check(const char *expected, const char *sha_hex, char *why, size_t cap)
{
	if (expected == NULL || expected[0] == '\0')
		return 0;
	if (!eo_snapshot_checksum_well_formed(expected)) {
		snprintf(
		    why, cap,
		    "the expected checksum '%.80s' is not sha256: and 64 lower-case hex digits",
		    expected);
		return -1;
	}
	if (sha_hex == NULL || strcmp(expected + strlen(SHA_PREFIX), sha_hex) != 0) {
		snprintf(why, cap, "the snapshot's checksum is sha256:%s, the expected one %s",
			 sha_hex != NULL ? sha_hex : "(none)", expected);
		return -1;
	}
	return 0;
}
