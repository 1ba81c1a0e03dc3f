/*
 * Unit tests for plan/defrag.c (the EtcdDefrag planner and its health gate) and
 * plan/nospace.c (NOSPACE alarm recovery): one table row per situation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/meta.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/defrag.h"
#include "kube/client.h"
#include "plan/defrag.h"
#include "plan/defrag_schedule.h"
#include "plan/nospace.h"

#define NOW 1780000000 /* 2026-05-28T20:26:40Z */
#define MiB (1LL << 20)

/* --- fixtures --- */

static json_t *defrag(const char *name, const char *created, const char *rule, const char *status)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdDefrag',"
		 "'metadata':{'name':'%s','namespace':'ns','uid':'uid-%s','generation':1,"
		 "'creationTimestamp':'%s'},'spec':{'clusterRef':{'name':'demo'}%s%s},"
		 "'status':%s}",
		 name, name, created, rule[0] ? ",'rule':" : "", rule, status);
	return tu_jsonq(buf);
}

#define SETTLED                                                                                    \
	"[{'type':'Available','status':'True','reason':'QuorumHealthy','message':'',"              \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1},"                     \
	"{'type':'Progressing','status':'False','reason':'Reconciled','message':'',"               \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1}]"
#define ROLLING                                                                                    \
	"[{'type':'Available','status':'True','reason':'QuorumHealthy','message':'',"              \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1},"                     \
	"{'type':'Progressing','status':'True','reason':'SpecChanged','message':'',"               \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1}]"
#define DEGRADED                                                                                   \
	"[{'type':'Available','status':'True','reason':'QuorumAvailable','message':'',"            \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1},"                     \
	"{'type':'Progressing','status':'False','reason':'Reconciled','message':'',"               \
	"'lastTransitionTime':'2026-05-28T20:00:00Z','observedGeneration':1}]"

static json_t *cluster(int replicas, const char *conds, int64_t quota)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'ns','uid':'c-uid','generation':1},"
		 "'spec':{'replicas':%d,'options':{'quotaBackendBytes':%lld}},"
		 "'status':{'clusterID':'abc','conditions':%s}}",
		 replicas, (long long)quota, conds);
	return tu_jsonq(buf);
}

/* Three members a, b, c with ids 1, 2, 3; b leads unless a row says otherwise. */
struct mem {
	int64_t size, in_use;
	bool down, learner;
	uint64_t leader; /* 0 = 2 */
	const char *err; /* an error (alarm) reported */
	uint64_t behind; /* raft entries behind the leader's index (1000) */
};

struct fleet {
	struct eo_dplan_member v[3];
	struct eo_etcd_status st[3];
	char *errs[3][1];
};

static void fleet_make(struct fleet *f, const struct mem m[3])
{
	static const char *names[] = {"demo-a", "demo-b", "demo-c"};

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 3; i++) {
		f->v[i].name = names[i];
		f->v[i].endpoint = "http://x:2379";
		if (m[i].down) {
			f->v[i].error = "unreachable";
			continue;
		}
		f->st[i] = (struct eo_etcd_status){.member_id = (uint64_t)i + 1,
						   .leader = m[i].leader ? m[i].leader : 2,
						   .raft_index = 1000 - m[i].behind,
						   .raft_applied_index = 1000 - m[i].behind,
						   .db_size = m[i].size,
						   .db_size_in_use = m[i].in_use,
						   .is_learner = m[i].learner};
		snprintf(f->st[i].version, sizeof(f->st[i].version), "3.6.11");
		if (m[i].err != NULL) {
			f->errs[i][0] = (char *)m[i].err;
			f->st[i].errors = f->errs[i];
			f->st[i].n_errors = 1;
		}
		f->v[i].st = &f->st[i];
	}
}

/* Fragmented: 500 MiB of which 100 in use (400 reclaimable); tidy: 50 of which 45 in use. */
#define FRAG                                                                                       \
	{                                                                                          \
		500 * MiB, 100 * MiB, false, false, 0, NULL, 0                                     \
	}
#define TIDY                                                                                       \
	{                                                                                          \
		50 * MiB, 45 * MiB, false, false, 0, NULL, 0                                       \
	}
#define SMALL                                                                                      \
	{                                                                                          \
		300 * MiB, 250 * MiB, false, false, 0, NULL, 0                                     \
	} /* 50 MiB reclaimable */

#define T_CREATED "2026-05-28T20:20:00Z"
#define T_OLD	  "2026-05-28T19:00:00Z" /* more than the deadline before NOW */

struct row {
	const char *name;
	const char *rule;    /* NULL: "" (no rule) */
	const char *status;  /* NULL: ST_NONE */
	int replicas;	     /* -1: no cluster */
	const char *conds;   /* NULL: SETTLED */
	const char *others;  /* JSON array or NULL */
	const char *created; /* NULL: T_CREATED */
	bool queried;
	struct mem m[3];
	const char *done_member;
	eo_etcd_err done_err;
	int64_t done_after;
	const char *moved_member; /* a MoveLeader from it this pass */
	eo_etcd_err moved_err;
	const char *want_transferee;
	enum eo_dplan_action want_action;
	const char *want_phase; /* NULL: no status expected */
	const char *want_reason;
	const char *want_target;
	const char *want_event;
	const char *want_msg;
	const char *want_outcomes; /* "a=Skipped,b=,c=Defragmented" style; NULL: not checked */
};

#define ST_NONE	   "{}"
#define ST_RUNNING "{'phase':'Running','startTime':'2026-05-28T20:21:00Z'}"

static const struct row rows[] = {
    {.name = "not queried: asks for the members' status",
     .replicas = 3,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_QUERY},
    {.name = "followers first: demo-a before the leader demo-b",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-a",
     .want_msg = "defragmenting member demo-a (follower"},
    {.name = "a tidy follower is skipped, the next follower is defragmented",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, FRAG},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-c",
     .want_outcomes = "demo-a=Skipped"},
    {.name = "the leader comes last: its leadership moves first, to the closest follower",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'},{'name':'demo-c','outcome':'Defragmented'}]}",
     .replicas = 3,
     .queried = true,
     .m = {{50 * MiB, 45 * MiB, false, false, 0, NULL, 3}, FRAG, TIDY},
     .want_action = EO_DPLAN_MOVE_LEADER,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-b",
     .want_transferee = "demo-c",
     .want_msg = "moving the leadership from member demo-b to demo-c"},
    {.name = "the leadership moved: recorded, the former leader next after a fresh look",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'},{'name':'demo-c','outcome':'Defragmented'}]}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, TIDY},
     .moved_member = "demo-b",
     .moved_err = EO_ETCD_OK,
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_event = "Normal",
     .want_msg = "leadership moved from member demo-b to demo-a; demo-b is defragmented next",
     .want_outcomes = "demo-b="},
    {.name = "the former leader, now a follower, is defragmented",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'},{'name':'demo-c','outcome':'Defragmented'},{'name':'demo-b',"
	       "'leaderMoves':1}]}",
     .replicas = 3,
     .queried = true,
     .m = {{50 * MiB, 45 * MiB, false, false, 1, NULL, 0},
	   {500 * MiB, 100 * MiB, false, false, 1, NULL, 0},
	   {50 * MiB, 45 * MiB, false, false, 1, NULL, 0}},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-b",
     .want_msg = "(follower"},
    {.name = "a failed MoveLeader: LeaderMoveFailed, retried",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'},{'name':'demo-c','outcome':'Defragmented'}]}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, TIDY},
     .moved_member = "demo-b",
     .moved_err = EO_ETCD_UNAVAILABLE,
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "LeaderMoveFailed",
     .want_event = "Warning",
     .want_msg = "(attempt 1 of 3); retried"},
    {.name = "three failed moves: the leader is defragmented in place",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'},{'name':'demo-c','outcome':'Defragmented'},{'name':'demo-b',"
	       "'leaderMoves':3}]}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, TIDY},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-b",
     .want_msg = "(leader, DbSize 500.0 MiB): the leadership could not be moved"},
    {.name = "a member not caught up with the leader: the next one waits",
     .status = "{'phase':'Running','members':[{'name':'demo-a','outcome':"
	       "'Defragmented'}]}",
     .replicas = 3,
     .queried = true,
     .m = {{500 * MiB, 100 * MiB, false, false, 0, NULL, 500}, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "WaitingForCatchUp",
     .want_msg = "member demo-a has applied raft index"},
    {.name = "nothing worth reclaiming anywhere: Complete, every member Skipped",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, TIDY, TIDY},
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Complete",
     .want_reason = "Defragmented",
     .want_event = "Normal",
     .want_msg = "0 of 3 member(s) defragmented",
     .want_outcomes = "demo-a=Skipped,demo-b=Skipped,demo-c=Skipped"},
    {.name = "rule.all defragments a tidy member",
     .rule = "{'all':true}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, TIDY, TIDY},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-a"},
    {.name = "freeSpaceAbove lowered to 10Mi takes 50 MiB",
     .rule = "{'freeSpaceAbove':'10Mi'}",
     .replicas = 3,
     .queried = true,
     .m = {SMALL, SMALL, SMALL},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-a"},
    {.name = "under quota pressure (300Mi > 10% of 2Gi) the floor drops to minReclaim",
     .rule = "{'quotaUsageAbove':10}",
     .replicas = 3,
     .queried = true,
     .m = {SMALL, SMALL, SMALL},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-a"},
    {.name = "without pressure 50 MiB is skipped",
     .rule = "{'quotaUsageAbove':90}",
     .replicas = 3,
     .queried = true,
     .m = {SMALL, SMALL, SMALL},
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Complete",
     .want_reason = "Defragmented",
     .want_event = "Normal",
     .want_outcomes = "demo-a=Skipped"},
    {.name = "done OK: recorded, the next member after a fresh look",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .done_member = "demo-a",
     .done_err = EO_ETCD_OK,
     .done_after = 120 * MiB,
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_event = "Normal",
     .want_msg = "DbSize 500.0 MiB -> 120.0 MiB, 380.0 MiB reclaimed",
     .want_outcomes = "demo-a=Defragmented"},
    {.name = "done OK on the leader, the last one: Complete",
     .status =
	 "{'phase':'Running','defragmented':2,'reclaimedBytes':10,'members':[{'name':'demo-a',"
	 "'outcome':'Defragmented'},{'name':'demo-c','outcome':'Defragmented'}]}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, TIDY},
     .done_member = "demo-b",
     .done_err = EO_ETCD_OK,
     .done_after = 100 * MiB,
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Complete",
     .want_reason = "Defragmented",
     .want_event = "Normal",
     .want_msg = "3 of 3 member(s) defragmented",
     .want_outcomes = "demo-b=Defragmented"},
    {.name = "a timeout is retried with a Warning",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .done_member = "demo-a",
     .done_err = EO_ETCD_TIMEOUT,
     .done_after = -1,
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "DefragTimeout",
     .want_event = "Warning",
     .want_msg = "did not answer within 120s (attempt 1 of 3)",
     .want_outcomes = "demo-a="},
    {.name = "the third timeout fails the run",
     .status = "{'phase':'Running','members':[{'name':'demo-a','attempts':2}]}",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .done_member = "demo-a",
     .done_err = EO_ETCD_TIMEOUT,
     .done_after = -1,
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Failed",
     .want_reason = "DefragTimeout",
     .want_event = "Warning",
     .want_msg = "the run stops",
     .want_outcomes = "demo-a=Failed"},
    {.name = "a member retried after a timeout is defragmented again even if tidy now",
     .status = "{'phase':'Running','members':[{'name':'demo-a','attempts':1}]}",
     .replicas = 3,
     .queried = true,
     .m = {TIDY, FRAG, FRAG},
     .want_action = EO_DPLAN_DEFRAG,
     .want_phase = "Running",
     .want_reason = "Defragmenting",
     .want_target = "demo-a"},
    {.name = "an error other than a timeout says DefragFailed",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .done_member = "demo-a",
     .done_err = EO_ETCD_UNAVAILABLE,
     .done_after = -1,
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "DefragFailed",
     .want_event = "Warning",
     .want_msg = "Defragment failed"},
    {.name = "no cluster: Pending",
     .replicas = -1,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterNotFound",
     .want_event = "Warning",
     .want_msg = "does not exist"},
    {.name = "paused cluster: Pending",
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterPaused"},
    {.name = "a roll in flight: Pending, never queried",
     .replicas = 3,
     .conds = ROLLING,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterNotReady",
     .want_msg = "a membership change or roll is in flight (Progressing: SpecChanged)"},
    {.name = "a member not ready: Pending",
     .replicas = 3,
     .conds = DEGRADED,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterNotReady",
     .want_msg = "QuorumAvailable"},
    {.name = "a member does not answer: Pending/ClusterUnhealthy",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, {0, 0, true, false, 0, NULL, 0}, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterUnhealthy",
     .want_msg = "member demo-b does not answer"},
    {.name = "an alarm on a member: unhealthy",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, {500 * MiB, 100 * MiB, false, false, 0, "memberID:2 alarm:NOSPACE ", 0}},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterUnhealthy",
     .want_msg = "reports: memberID:2"},
    {.name = "members disagree on the leader: unhealthy",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, {500 * MiB, 100 * MiB, false, false, 3, NULL, 0}},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterUnhealthy",
     .want_msg = "disagree on the leader"},
    {.name = "a learner: unhealthy",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, {500 * MiB, 100 * MiB, false, true, 0, NULL, 0}},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "ClusterUnhealthy",
     .want_msg = "is a learner"},
    {.name = "unhealthy while Running stays Running",
     .status = ST_RUNNING,
     .replicas = 3,
     .queried = true,
     .m = {FRAG, {0, 0, true, false, 0, NULL, 0}, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Running",
     .want_reason = "ClusterUnhealthy"},
    {.name = "another run holds the cluster: Pending",
     .replicas = 3,
     .others = "[{'metadata':{'name':'zz','namespace':'ns','uid':'uid-zz','creationTimestamp':"
	       "'2026-05-28T20:25:00Z'},'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':"
	       "'Running'}}]",
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "WaitingForOtherDefrag",
     .want_msg = "EtcdDefrag zz runs first"},
    {.name = "an older pending one goes first",
     .replicas = 3,
     .others = "[{'metadata':{'name':'old','namespace':'ns','uid':'uid-old','creationTimestamp':"
	       "'2026-05-28T20:10:00Z'},'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':"
	       "'Pending'}}]",
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_WAIT,
     .want_phase = "Pending",
     .want_reason = "WaitingForOtherDefrag",
     .want_msg = "EtcdDefrag old runs first"},
    {.name = "finished or other-cluster runs do not hold it",
     .replicas = 3,
     .others =
	 "[{'metadata':{'name':'old','namespace':'ns','uid':'uid-old','creationTimestamp':"
	 "'2026-05-28T20:10:00Z'},'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':"
	 "'Complete'}},{'metadata':{'name':'x','namespace':'ns','uid':'uid-x','creationTimestamp':"
	 "'2026-05-28T20:10:00Z'},'spec':{'clusterRef':{'name':'other'}},'status':{'phase':"
	 "'Running'}}]",
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_QUERY},
    {.name = "a newer pending one waits for us, we run",
     .replicas = 3,
     .others = "[{'metadata':{'name':'new','namespace':'ns','uid':'uid-new','creationTimestamp':"
	       "'2026-05-28T20:25:00Z'},'spec':{'clusterRef':{'name':'demo'}},'status':{}}]",
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_QUERY},
    {.name = "past the deadline: Failed",
     .replicas = 3,
     .conds = ROLLING,
     .created = T_OLD,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Failed",
     .want_reason = "DeadlineExceeded",
     .want_event = "Warning",
     .want_msg = "3600s"},
    {.name = "rule.all with a floor: InvalidSpec",
     .rule = "{'all':true,'minReclaim':'1Mi'}",
     .replicas = 3,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Failed",
     .want_reason = "InvalidSpec",
     .want_event = "Warning",
     .want_msg = EO_MSG_DEFRAG_ALL_EXCLUSIVE},
    {.name = "minReclaim above freeSpaceAbove: InvalidSpec",
     .rule = "{'freeSpaceAbove':'10Mi','minReclaim':'20Mi'}",
     .replicas = 3,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_NONE,
     .want_phase = "Failed",
     .want_reason = "InvalidSpec",
     .want_event = "Warning",
     .want_msg = EO_MSG_DEFRAG_MIN_RECLAIM},
    {.name = "Complete is final",
     .status = "{'phase':'Complete'}",
     .replicas = 3,
     .queried = true,
     .m = {FRAG, FRAG, FRAG},
     .want_action = EO_DPLAN_NONE},
};

static void check_outcomes(const json_t *st, const char *want, const char *row)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", want);
	for (char *tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		const json_t *e = NULL, *m;
		size_t i;

		*eq = '\0';
		json_array_foreach(json_object_get(st, "members"), i, m)
		{
			if (strcmp(json_string_value(json_object_get(m, "name")), tok) == 0)
				e = m;
		}
		if (e == NULL)
			fail_msg("%s: no member entry %s", row, tok);
		if (eq[1] == '\0') {
			if (json_object_get(e, "outcome") != NULL)
				fail_msg("%s: %s has an outcome", row, tok);
		} else if (json_string_value(json_object_get(e, "outcome")) == NULL ||
			   strcmp(json_string_value(json_object_get(e, "outcome")), eq + 1) != 0) {
			fail_msg("%s: %s outcome %s, want %s", row, tok,
				 json_string_value(json_object_get(e, "outcome")), eq + 1);
		}
	}
}

static void test_defrag_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *r = &rows[k];
		json_t *d = defrag("run", r->created ? r->created : T_CREATED,
				   r->rule ? r->rule : "", r->status ? r->status : ST_NONE);
		json_t *c = r->replicas >= 0
				? cluster(r->replicas, r->conds ? r->conds : SETTLED, 0)
				: NULL;
		json_t *others = r->others != NULL ? tu_jsonq(r->others) : NULL;
		struct fleet f;
		struct eo_dplan_done done = {r->done_member, r->done_err, "boom", r->done_after};
		struct eo_dplan_moved moved = {r->moved_member, "demo-a", r->moved_err, "boom"};
		struct eo_dplan_input in = {.defrag = d,
					    .cluster = c,
					    .others = others,
					    .queried = r->queried,
					    .done = r->done_member != NULL ? &done : NULL,
					    .moved = r->moved_member != NULL ? &moved : NULL,
					    .now = NOW};
		struct eo_dplan_result out = {0};

		fleet_make(&f, r->m);
		in.members = f.v;
		in.n_members = 3;
		print_message("row: %s\n", r->name);
		assert_int_equal(eo_plan_defrag(&in, &out), 0);
		if (out.action != r->want_action)
			fail_msg("%s: action %s, want %s (%s)", r->name,
				 eo_dplan_action_name(out.action),
				 eo_dplan_action_name(r->want_action), out.message);
		if (r->want_phase == NULL) {
			assert_null(out.status);
		} else {
			const json_t *cond;

			assert_non_null(out.status);
			assert_string_equal(json_string_value(json_object_get(out.status, "phase")),
					    r->want_phase);
			cond = eo_condition_find(out.status, "Ready");
			assert_non_null(cond);
			assert_string_equal(json_string_value(json_object_get(cond, "reason")),
					    r->want_reason);
			assert_true(out.status_changed);
		}
		if (r->want_target != NULL)
			assert_string_equal(f.v[out.target].name, r->want_target);
		if (r->want_transferee != NULL)
			assert_string_equal(f.v[out.transferee].name, r->want_transferee);
		if (r->want_event != NULL) {
			assert_non_null(out.event_type);
			assert_string_equal(out.event_type, r->want_event);
		} else {
			assert_null(out.event_type);
		}
		if (r->want_msg != NULL && strstr(out.message, r->want_msg) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out.message,
				 r->want_msg);
		if (r->want_outcomes != NULL)
			check_outcomes(out.status, r->want_outcomes, r->name);
		eo_dplan_result_clear(&out);
		json_decref(d);
		json_decref(c);
		json_decref(others);
	}
}

/*
 * A QUERY asks for fresh DbSizeInUse figures unless rule.all (which reads none): after a
 * compaction an idle member keeps reporting the old figure until its backend commits again.
 */
static void test_defrag_query_refresh(void **state)
{
	static const struct {
		const char *rule;
		bool want;
	} v[] = {
	    {"", true},
	    {"{'freeSpaceAbove':'1Mi'}", true},
	    {"{'quotaUsageAbove':80,'minReclaim':'1Mi'}", true},
	    {"{'all':true}", false},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		json_t *d = defrag("run", T_CREATED, v[i].rule, "{}");
		json_t *c = cluster(3, SETTLED, 0);
		struct eo_dplan_input in = {.defrag = d, .cluster = c, .now = NOW};
		struct eo_dplan_result out = {0};

		assert_int_equal(eo_plan_defrag(&in, &out), 0);
		assert_int_equal(out.action, EO_DPLAN_QUERY);
		if (out.refresh_in_use != v[i].want)
			fail_msg("rule '%s': refresh_in_use %d, want %d", v[i].rule,
				 out.refresh_in_use, v[i].want);
		eo_dplan_result_clear(&out);
		json_decref(d);
		json_decref(c);
	}
}

/* The byte counts of a recorded defragment, and the totals. */
static void test_defrag_record_bytes(void **state)
{
	json_t *d = defrag("run", T_CREATED, "", "{}");
	json_t *c = cluster(3, SETTLED, 0);
	const struct mem m[3] = {FRAG, FRAG, FRAG};
	struct fleet f;
	struct eo_dplan_done done = {"demo-a", EO_ETCD_OK, NULL, 120 * MiB};
	struct eo_dplan_input in = {
	    .defrag = d, .cluster = c, .queried = true, .done = &done, .now = NOW};
	struct eo_dplan_result out = {0};
	const json_t *e;

	(void)state;
	fleet_make(&f, m);
	in.members = f.v;
	in.n_members = 3;
	assert_int_equal(eo_plan_defrag(&in, &out), 0);
	e = json_array_get(json_object_get(out.status, "members"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "role")), "Follower");
	assert_int_equal(json_integer_value(json_object_get(e, "dbSizeBefore")), 500 * MiB);
	assert_int_equal(json_integer_value(json_object_get(e, "dbSizeAfter")), 120 * MiB);
	assert_int_equal(json_integer_value(json_object_get(e, "reclaimedBytes")), 380 * MiB);
	assert_int_equal(json_integer_value(json_object_get(e, "attempts")), 1);
	assert_int_equal(json_integer_value(json_object_get(out.status, "defragmented")), 1);
	assert_int_equal(json_integer_value(json_object_get(out.status, "reclaimedBytes")),
			 380 * MiB);
	assert_non_null(json_object_get(out.status, "startTime"));
	assert_null(json_object_get(out.status, "completionTime"));
	eo_dplan_result_clear(&out);
	json_decref(d);
	json_decref(c);
}

static void test_defrag_ttl(void **state)
{
	json_t *d = defrag("run", T_CREATED, "",
			   "{'phase':'Complete','completionTime':"
			   "'2026-05-28T20:26:00Z'}");
	struct eo_dplan_input in = {.defrag = d, .now = NOW};
	struct eo_dplan_result out = {0};

	(void)state;
	/* No TTL: kept, nothing to do. */
	assert_int_equal(eo_plan_defrag(&in, &out), 0);
	assert_int_equal(out.action, EO_DPLAN_NONE);
	json_object_set_new(json_object_get(d, "spec"), "ttlSecondsAfterFinished",
			    json_integer(100));
	assert_int_equal(eo_plan_defrag(&in, &out), 0);
	assert_int_equal(out.action, EO_DPLAN_WAIT);
	assert_true(out.requeue_ms > 50000 && out.requeue_ms <= 61000);
	json_object_set_new(json_object_get(d, "spec"), "ttlSecondsAfterFinished",
			    json_integer(40));
	assert_int_equal(eo_plan_defrag(&in, &out), 0);
	assert_int_equal(out.action, EO_DPLAN_DELETE);
	json_decref(d);
}

static void test_defrag_validate(void **state)
{
	static const struct {
		const char *rule;
		bool ok;
	} v[] = {
	    {"{}", true},
	    {"{'all':false,'freeSpaceAbove':'1Gi'}", true},
	    {"{'all':true}", true},
	    {"{'all':true,'freeSpaceAbove':'1Gi'}", false},
	    {"{'quotaUsageAbove':0}", false},
	    {"{'quotaUsageAbove':101}", false},
	    {"{'quotaUsageAbove':80,'minReclaim':'200Mi'}", true},
	    {"{'minReclaim':'201Mi'}", false}, /* above the 200Mi default floor */
	    {"{'freeSpaceAbove':'not a quantity'}", false},
	    {"{'freeSpaceAbove':1048576,'minReclaim':1048576}", true},
	};
	char msg[256];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		json_t *d = defrag("run", T_CREATED, v[i].rule, "{}");

		if ((eo_defrag_validate(d, NULL, msg, sizeof(msg)) == 0) != v[i].ok)
			fail_msg("rule %s: want %s, got \"%s\"", v[i].rule,
				 v[i].ok ? "ok" : "error", msg);
		json_decref(d);
	}
}

/* --- NOSPACE --- */

struct nrow {
	const char *name;
	const char *conds;
	bool queried;
	bool alarms_readable;
	bool nospace;
	struct mem m[3];
	bool recovered, disarmed;
	time_t last_attempt;
	enum eo_nplan_action want_action;
	const char *want_status; /* condition status, NULL: no status write */
	const char *want_reason;
	const char *want_msg;
};

#define NS_TRUE                                                                                    \
	"[{'type':'NoSpace','status':'True','reason':'NoSpaceAlarm','message':'x',"                \
	"'lastTransitionTime':'2026-05-28T20:00:00Z'}]"
#define BIG                                                                                        \
	{                                                                                          \
		120 * MiB, 20 * MiB, false, false, 0, NULL, 0                                      \
	}
#define FIXED                                                                                      \
	{                                                                                          \
		30 * MiB, 20 * MiB, false, false, 0, NULL, 0                                       \
	}

static const struct nrow nrows[] = {
    {.name = "first pass queries",
     .conds = "[]",
     .alarms_readable = true,
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_QUERY},
    {.name = "no alarm, never had one: nothing written",
     .conds = "[]",
     .queried = true,
     .alarms_readable = true,
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_NONE},
    {.name = "alarms unreadable: nothing",
     .conds = NS_TRUE,
     .queried = true,
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_NONE},
    {.name = "NOSPACE over quota: recover, leader last",
     .conds = "[]",
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {BIG, BIG, BIG},
     .want_action = EO_NPLAN_RECOVER,
     .want_status = "True",
     .want_reason = "NoSpaceAlarm",
     .want_msg = "recovering: compacting"},
    {.name = "NOSPACE, a member down: waits",
     .conds = "[]",
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {BIG, {0, 0, true, false, 0, NULL, 0}, BIG},
     .want_action = EO_NPLAN_NONE,
     .want_status = "True",
     .want_reason = "NoSpaceAlarm",
     .want_msg = "recovery waits: member demo-b does not answer"},
    {.name = "NOSPACE, under quota only before any recovery: recover anyway",
     .conds = "[]",
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_RECOVER,
     .want_status = "True",
     .want_reason = "NoSpaceAlarm"},
    {.name = "after the recovery, under quota: disarm",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {FIXED, FIXED, FIXED},
     .recovered = true,
     .last_attempt = NOW,
     .want_action = EO_NPLAN_DISARM,
     .want_status = "True",
     .want_reason = "Recovering",
     .want_msg = "disarming"},
    {.name = "after the recovery, still over: NoSpaceNotReclaimed",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {BIG, BIG, BIG},
     .recovered = true,
     .last_attempt = NOW,
     .want_action = EO_NPLAN_NONE,
     .want_status = "True",
     .want_reason = "NoSpaceNotReclaimed",
     .want_msg = "delete keys"},
    {.name = "recently tried and still over: no new recovery",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {BIG, BIG, BIG},
     .last_attempt = NOW - 10,
     .want_action = EO_NPLAN_NONE,
     .want_status = "True",
     .want_reason = "NoSpaceNotReclaimed"},
    {.name = "tried long ago and still over: recover again",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {BIG, BIG, BIG},
     .last_attempt = NOW - 1000,
     .want_action = EO_NPLAN_RECOVER},
    {.name = "disarmed: Recovered",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .nospace = true,
     .m = {FIXED, FIXED, FIXED},
     .recovered = true,
     .disarmed = true,
     .last_attempt = NOW,
     .want_action = EO_NPLAN_NONE,
     .want_status = "False",
     .want_reason = "Recovered",
     .want_msg = "disarmed"},
    {.name = "the alarm went away by itself: Recovered",
     .conds = NS_TRUE,
     .queried = true,
     .alarms_readable = true,
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_NONE,
     .want_status = "False",
     .want_reason = "Recovered"},
};

static void test_nospace_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(nrows) / sizeof(nrows[0]); k++) {
		const struct nrow *r = &nrows[k];
		json_t *c = cluster(3, r->conds, 100 * MiB);
		struct eo_etcd_alarm al = {2, EO_ETCD_ALARM_NOSPACE};
		struct eo_etcd_alarms alarms = {r->nospace ? &al : NULL, r->nospace ? 1 : 0};
		struct fleet f;
		struct eo_nplan_input in = {.cluster = c,
					    .queried = r->queried,
					    .alarms = r->alarms_readable ? &alarms : NULL,
					    .recovered = r->recovered,
					    .disarmed = r->disarmed,
					    .last_attempt = r->last_attempt,
					    .now = NOW};
		struct eo_nplan_result out = {0};

		fleet_make(&f, r->m);
		in.members = f.v;
		in.n_members = 3;
		print_message("row: %s\n", r->name);
		assert_int_equal(eo_plan_nospace(&in, &out), 0);
		if (out.action != r->want_action)
			fail_msg("%s: action %s, want %s (%s)", r->name,
				 eo_nplan_action_name(out.action),
				 eo_nplan_action_name(r->want_action), out.message);
		if (r->want_status != NULL) {
			assert_non_null(out.status);
			assert_string_equal(eo_condition_status(out.status, "NoSpace"),
					    r->want_status);
			assert_string_equal(eo_condition_reason(out.status, "NoSpace"),
					    r->want_reason);
			/* The cluster's own conditions are kept. */
			assert_int_equal(json_array_size(json_object_get(out.status, "conditions")),
					 json_array_size(json_object_get(
					     json_object_get(c, "status"), "conditions")) +
					     (eo_condition_find(json_object_get(c, "status"),
								"NoSpace") == NULL));
		} else if (r->want_action != EO_NPLAN_RECOVER) {
			assert_null(out.status);
		}
		if (r->want_msg != NULL && strstr(out.message, r->want_msg) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out.message,
				 r->want_msg);
		if (out.action == EO_NPLAN_RECOVER) {
			assert_int_equal(out.n_order, 3);
			assert_string_equal(f.v[out.order[0]].name, "demo-a");
			assert_string_equal(f.v[out.order[1]].name, "demo-c");
			assert_string_equal(f.v[out.order[2]].name, "demo-b"); /* the leader */
		}
		eo_nplan_result_clear(&out);
		json_decref(c);
	}
}

/* --- the quota guard (no alarm; quota 100 MiB) --- */

static json_t *guard_cluster(const char *guard)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'ns','uid':'c-uid','generation':1},"
		 "'spec':{'replicas':3,'options':{'quotaBackendBytes':%lld}%s%s},"
		 "'status':{'clusterID':'abc','conditions':[]}}",
		 (long long)(100 * MiB), guard[0] ? ",'quotaGuard':" : "", guard);
	return tu_jsonq(buf);
}

#define NEAR                                                                                       \
	{                                                                                          \
		85 * MiB, 40 * MiB, false, false, 0, NULL, 0                                       \
	} /* 85 % of the quota */

struct grow {
	const char *name;
	const char *guard; /* spec.quotaGuard, "" absent */
	const char *runs;  /* JSON array of the guard's EtcdDefrags, NULL none */
	struct mem m[3];
	enum eo_nplan_action want_action;
	enum eo_nplan_note want_note;
	const char *want_msg;
};

#define GUARD_RUN(created, phase)                                                                  \
	"[{'metadata':{'name':'demo-quota-x','namespace':'ns','creationTimestamp':'" created       \
	"'},'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':'" phase "'}}]"

static const struct grow grows[] = {
    {.name = "a member at 85 %: compaction and an EtcdDefrag",
     .guard = "",
     .m = {FIXED, NEAR, FIXED},
     .want_action = EO_NPLAN_GUARD,
     .want_msg = "member demo-b's database holds 89128960 bytes, 85.0% of the quota"},
    {.name = "every member under 80 %: nothing",
     .guard = "",
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_NONE},
    {.name = "the guard turned off",
     .guard = "{'enabled':false}",
     .m = {NEAR, NEAR, NEAR},
     .want_action = EO_NPLAN_NONE},
    {.name = "a threshold of 90 % is not passed",
     .guard = "{'thresholdPercent':90}",
     .m = {NEAR, NEAR, NEAR},
     .want_action = EO_NPLAN_NONE},
    {.name = "a threshold of 20 % is passed by 30 MiB",
     .guard = "{'thresholdPercent':20}",
     .m = {FIXED, FIXED, FIXED},
     .want_action = EO_NPLAN_GUARD,
     .want_msg = "(threshold 20%)"},
    {.name = "a guard run 10 minutes ago: at most hourly",
     .guard = "",
     .runs = GUARD_RUN("2026-05-28T20:16:40Z", "Complete"),
     .m = {NEAR, NEAR, NEAR},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "ran 600s ago; at most one run every 3600s"},
    {.name = "a guard run two hours ago: again",
     .guard = "",
     .runs = GUARD_RUN("2026-05-28T18:26:40Z", "Complete"),
     .m = {NEAR, NEAR, NEAR},
     .want_action = EO_NPLAN_GUARD},
    {.name = "a guard run still going: nothing new",
     .guard = "",
     .runs = GUARD_RUN("2026-05-28T18:26:40Z", "Running"),
     .m = {NEAR, NEAR, NEAR},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "has not finished"},
    {.name = "a member down: the guard waits and says why",
     .guard = "",
     .m = {NEAR, {0, 0, true, false, 0, NULL, 0}, NEAR},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_msg = "quota guard waits: member demo-a holds 85.0% of the quota; the cluster is "
		 "not healthy: member demo-b does not answer"},
};

static void test_quota_guard_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(grows) / sizeof(grows[0]); k++) {
		const struct grow *r = &grows[k];
		json_t *c = guard_cluster(r->guard);
		json_t *runs = r->runs != NULL ? tu_jsonq(r->runs) : NULL;
		struct eo_etcd_alarms none = {NULL, 0};
		struct fleet f;
		struct eo_nplan_input in = {
		    .cluster = c, .queried = true, .alarms = &none, .guard_runs = runs, .now = NOW};
		struct eo_nplan_result out = {0};

		fleet_make(&f, r->m);
		in.members = f.v;
		in.n_members = 3;
		print_message("row: %s\n", r->name);
		assert_int_equal(eo_plan_nospace(&in, &out), 0);
		if (out.action != r->want_action)
			fail_msg("%s: action %s, want %s (%s)", r->name,
				 eo_nplan_action_name(out.action),
				 eo_nplan_action_name(r->want_action), out.message);
		assert_int_equal(out.note, r->want_note);
		assert_null(out.status); /* the guard writes no condition */
		if (r->want_msg != NULL && strstr(out.message, r->want_msg) == NULL)
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out.message,
				 r->want_msg);
		if (out.action == EO_NPLAN_GUARD) {
			const json_t *spec = json_object_get(out.create, "spec");

			assert_non_null(out.create);
			assert_string_equal(eo_meta_name(out.create), "demo-quota-202605282026");
			assert_string_equal(
			    eo_meta_label(out.create, "etcd-operator.cozystack.io/quota-guard"),
			    "demo");
			assert_string_equal(eo_defrag_cluster_name(out.create), "demo");
			/* every member with more than 5 % of the 100 MiB quota to give back */
			assert_int_equal(json_integer_value(json_object_get(
					     json_object_get(spec, "rule"), "freeSpaceAbove")),
					 5 * MiB);
			assert_int_equal(
			    json_integer_value(json_object_get(spec, "ttlSecondsAfterFinished")),
			    3600);
			assert_int_equal(eo_defrag_validate(out.create, NULL, NULL, 0), 0);
			assert_string_equal(out.event_type, "Warning");
			assert_string_equal(out.event_reason, "QuotaThresholdPassed");
		} else {
			assert_null(out.create);
		}
		eo_nplan_result_clear(&out);
		json_decref(runs);
		json_decref(c);
	}
}

/* --- spec.quotaGuard.autoRaise (quota 100 MiB, a member at 85 %) --- */

static json_t *raise_cluster(const char *guard, bool memory, const char *status_extra)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'ns','uid':'c-uid','generation':1},"
		 "'spec':{'replicas':3,'options':{'quotaBackendBytes':%lld},"
		 "'storage':{'size':'1Gi'%s},'quotaGuard':%s},"
		 "'status':{'clusterID':'abc','conditions':[]%s}}",
		 (long long)(100 * MiB), memory ? ",'medium':'Memory'" : "", guard, status_extra);
	return tu_jsonq(buf);
}

/* The members' PVCs data-demo-{a,b,c}, Bound with these capacities ("" not Bound). */
static json_t *raise_pvcs(const char *a, const char *b, const char *c)
{
	const char *caps[3] = {a, b, c}, *names[3] = {"demo-a", "demo-b", "demo-c"};
	json_t *arr = json_array();

	for (int i = 0; i < 3; i++) {
		char buf[512];

		if (caps[i][0] == '\0')
			snprintf(buf, sizeof(buf),
				 "{'metadata':{'name':'data-%s','namespace':'ns'},"
				 "'status':{'phase':'Pending'}}",
				 names[i]);
		else
			snprintf(buf, sizeof(buf),
				 "{'metadata':{'name':'data-%s','namespace':'ns'},"
				 "'status':{'phase':'Bound','capacity':{'storage':'%s'}}}",
				 names[i], caps[i]);
		json_array_append_new(arr, tu_jsonq(buf));
	}
	return arr;
}

#define RAISE_ON	 "{'autoRaise':{'enabled':true}}"
#define RUN_DONE	 GUARD_RUN("2026-05-28T20:16:40Z", "Complete") /* 10 min before NOW */
#define RAISED_2H_AGO(q) ",'quotaBackendBytes':" q ",'quotaRaisedTime':'2026-05-28T18:26:40Z'"

struct raise_row {
	const char *name;
	const char *guard;
	const char *runs;   /* NULL none */
	const char *status; /* extra status fields, "" none */
	bool memory;
	const char *pvc[3]; /* capacities, "" not Bound */
	bool fixed;	    /* every member under the threshold */
	int64_t reported;   /* the quota the members report (etcd 3.6), 0 none */
	int64_t big;	    /* demo-b's DbSize when not 0 (else 85 MiB) */
	enum eo_nplan_action want_action;
	enum eo_nplan_note want_note;
	int64_t want_quota;	 /* status.quotaBackendBytes written, 0 none */
	const char *want_reason; /* QuotaAutoRaise reason written, NULL no status */
	const char *want_msg;
};

static const struct raise_row raises[] = {
    {.name = "raised: doubled after the guard's defragmentation",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_quota = 200 * MiB,
     .want_reason = "QuotaRaised",
     .want_msg = "quota raised from 104857600 to 209715200 bytes: member demo-b's database "
		 "still holds 89128960 bytes (85.0%, threshold 80%) after EtcdDefrag demo-quota-x"},
    {.name = "under the threshold: nothing",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .fixed = true,
     .want_action = EO_NPLAN_NONE},
    {.name = "the guard has not run yet: it compacts and defragments first",
     .guard = RAISE_ON,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_GUARD},
    {.name = "the guard run is still going",
     .guard = RAISE_ON,
     .runs = GUARD_RUN("2026-05-28T20:16:40Z", "Running"),
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "has not finished"},
    {.name = "the guard run failed: no raise on an unfinished defragmentation",
     .guard = RAISE_ON,
     .runs = GUARD_RUN("2026-05-28T20:16:40Z", "Failed"),
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "at most one run every 3600s"},
    {.name = "autoRaise off (the default): the guard waits",
     .guard = "{}",
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "at most one run every 3600s"},
    {.name = "capped by maxBytes",
     .guard = "{'autoRaise':{'enabled':true,'maxBytes':'150Mi'}}",
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_quota = 150 * MiB,
     .want_reason = "QuotaRaised",
     .want_msg = "(spec.quotaGuard.autoRaise.maxBytes;"},
    {.name = "capped by the smallest volume: 45 % of demo-c's 300Mi",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "300Mi"},
     .want_action = EO_NPLAN_RAISE,
     .want_quota = 300 * MiB / 100 * 45,
     .want_reason = "QuotaRaised",
     .want_msg = "(the volume; 45% of member demo-c's volume of 314572800 bytes)"},
    {.name = "refused: maxBytes leaves no room",
     .guard = "{'autoRaise':{'enabled':true,'maxBytes':104857600}}",
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_reason = "QuotaRaiseRefused",
     .want_msg = "quota not raised: member demo-b's database stays over 80% of the quota of "
		 "104857600 bytes after EtcdDefrag demo-quota-x, and "
		 "spec.quotaGuard.autoRaise.maxBytes leaves no room above it (limit 104857600"},
    {.name = "refused: the volume leaves no room",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"200Mi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_reason = "QuotaRaiseRefused",
     .want_msg = "the volume leaves no room above it (limit 94371840 bytes; 45% of member "
		 "demo-a's volume of 209715200 bytes)"},
    {.name = "refused: memory-backed",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .memory = true,
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_reason = "QuotaRaiseRefused",
     .want_msg = "the cluster is memory-backed"},
    {.name = "refused: a PVC not Bound, its volume cannot be checked",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = "",
     .pvc = {"1Gi", "", "1Gi"},
     .want_action = EO_NPLAN_RAISE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_reason = "QuotaRaiseRefused",
     .want_msg = "member demo-b: PVC data-demo-b is not Bound with a capacity"},
    {.name = "never lowers: a raised quota above the volume's limit stays",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = RAISED_2H_AGO("524288000"),
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .big = 450 * MiB,
     .want_action = EO_NPLAN_RAISE,
     .want_note = EO_NPLAN_NOTE_WARN,
     .want_reason = "QuotaRaiseRefused",
     .want_msg = "quota of 524288000 bytes"},
    {.name = "a raise two hours ago: doubled from the raised quota, up to the volume",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = RAISED_2H_AGO("209715200"),
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .big = 180 * MiB,
     .want_action = EO_NPLAN_RAISE,
     .want_quota = 400 * MiB,
     .want_reason = "QuotaRaised",
     .want_msg = "quota raised from 209715200 to 419430400 bytes"},
    {.name = "a raise 30 minutes ago: at most hourly",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = ",'quotaBackendBytes':209715200,'quotaRaisedTime':'2026-05-28T19:56:40Z'",
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .big = 180 * MiB,
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "quota raised 1800s ago"},
    {.name = "the members still report the old quota: the roll has not reached them",
     .guard = RAISE_ON,
     .runs = RUN_DONE,
     .status = RAISED_2H_AGO("209715200"),
     .pvc = {"1Gi", "1Gi", "1Gi"},
     .reported = 100 * MiB,
     .want_action = EO_NPLAN_NONE,
     .want_note = EO_NPLAN_NOTE_DEBUG,
     .want_msg = "member demo-a still runs with a quota of 104857600 bytes, not the raised "
		 "209715200"},
};

static void raise_check(const struct raise_row *r, const struct eo_nplan_result *out,
			const json_t *cluster)
{
	if (out->action != r->want_action)
		fail_msg("%s: action %s, want %s (%s)", r->name, eo_nplan_action_name(out->action),
			 eo_nplan_action_name(r->want_action), out->message);
	assert_int_equal(out->note, r->want_note);
	if (r->want_msg != NULL && strstr(out->message, r->want_msg) == NULL)
		fail_msg("%s: message \"%s\" lacks \"%s\"", r->name, out->message, r->want_msg);
	if (r->want_reason == NULL) {
		if (r->want_action != EO_NPLAN_GUARD)
			assert_null(out->status);
		return;
	}
	assert_non_null(out->status);
	assert_string_equal(eo_condition_reason(out->status, "QuotaAutoRaise"), r->want_reason);
	assert_string_equal(out->event_reason, r->want_reason);
	assert_string_equal(out->event_type, r->want_quota ? "Normal" : "Warning");
	assert_string_equal(eo_condition_status(out->status, "QuotaAutoRaise"),
			    r->want_quota ? "True" : "False");
	if (r->want_quota) {
		assert_int_equal(
		    json_integer_value(json_object_get(out->status, "quotaBackendBytes")),
		    r->want_quota);
		assert_string_equal(
		    json_string_value(json_object_get(out->status, "quotaRaisedTime")),
		    "2026-05-28T20:26:40Z");
	} else {
		/* a refusal leaves the quota as it was */
		assert_int_equal(
		    eo_cluster_raised_quota(cluster),
		    json_integer_value(json_object_get(out->status, "quotaBackendBytes")));
	}
}

static void test_quota_auto_raise_table(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(raises) / sizeof(raises[0]); k++) {
		const struct raise_row *r = &raises[k];
		json_t *c = raise_cluster(r->guard, r->memory, r->status);
		json_t *runs = r->runs != NULL ? tu_jsonq(r->runs) : NULL;
		json_t *pvcs = raise_pvcs(r->pvc[0], r->pvc[1], r->pvc[2]);
		struct eo_etcd_alarms none = {NULL, 0};
		struct mem near[3] = {NEAR, NEAR, NEAR}, fixed[3] = {FIXED, FIXED, FIXED};
		struct fleet f;
		struct eo_nplan_input in = {.cluster = c,
					    .queried = true,
					    .alarms = &none,
					    .guard_runs = runs,
					    .pvcs = pvcs,
					    .now = NOW};
		struct eo_nplan_result out = {0};

		near[0].size = 80 * MiB; /* demo-b is the biggest */
		if (r->big)
			near[1].size = r->big;
		fleet_make(&f, r->fixed ? fixed : near);
		for (int i = 0; i < 3; i++)
			f.st[i].db_size_quota = r->reported;
		in.members = f.v;
		in.n_members = 3;
		print_message("row: %s\n", r->name);
		assert_int_equal(eo_plan_nospace(&in, &out), 0);
		raise_check(r, &out, c);
		if (r->want_reason != NULL && r->want_quota == 0) {
			/* the same refusal again: no status write, no second Event */
			json_t *again = json_deep_copy(c);

			json_object_set(again, "status", out.status);
			in.cluster = again;
			eo_nplan_result_clear(&out);
			assert_int_equal(eo_plan_nospace(&in, &out), 0);
			assert_int_equal(out.action, EO_NPLAN_NONE);
			assert_int_equal(out.note, EO_NPLAN_NOTE_DEBUG);
			assert_null(out.status);
			json_decref(again);
		}
		eo_nplan_result_clear(&out);
		json_decref(pvcs);
		json_decref(runs);
		json_decref(c);
	}
}

/* The quota the planners use follows the raised one once members do not report theirs. */
static void test_quota_effective(void **state)
{
	json_t *c = raise_cluster("{}", false, "");

	(void)state;
	assert_int_equal(eo_dplan_quota(c, NULL, 0), 100 * MiB);
	json_object_set_new(json_object_get(c, "status"), "quotaBackendBytes",
			    json_integer(200 * MiB));
	assert_int_equal(eo_dplan_quota(c, NULL, 0), 200 * MiB);
	assert_int_equal(eo_cluster_raised_quota(c), 200 * MiB);
	/* a spec above it wins */
	json_object_set_new(json_object_get(json_object_get(c, "spec"), "options"),
			    "quotaBackendBytes", json_integer(300 * MiB));
	assert_int_equal(eo_cluster_effective_quota(c), 300 * MiB);
	json_decref(c);
}

/* --- EtcdDefragSchedule --- */

static json_t *dschedule(const char *cron, const char *extra, const char *status)
{
	char buf[2048];

	snprintf(
	    buf, sizeof(buf),
	    "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdDefragSchedule',"
	    "'metadata':{'name':'nightly','namespace':'ns','uid':'s-uid','generation':1,"
	    "'creationTimestamp':'2026-05-28T00:00:00Z'},'spec':{'clusterRef':{'name':'demo'},"
	    "'schedule':'%s','rule':{'freeSpaceAbove':'500Mi'},'ttlSecondsAfterFinished':600%s},"
	    "'status':%s}",
	    cron, extra, status);
	return tu_jsonq(buf);
}

static json_t *run(const char *name, const char *created, const char *phase)
{
	char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{'metadata':{'name':'%s','namespace':'ns','uid':'u-%s','creationTimestamp':'%s',"
		 "'labels':{'etcd-operator.cozystack.io/defrag-schedule':'nightly'}},"
		 "'spec':{'clusterRef':{'name':'demo'}},'status':{'phase':'%s'}}",
		 name, name, created, phase);
	return tu_jsonq(buf);
}

/* NOW is 2026-05-28T20:26:40Z: the hourly slot is 20:00, the daily one 00:00. */
/*
 * Another etcd cluster answers at a member's address (a reused Pod IP): its Status carries
 * another cluster ID than status.clusterID ('abc'). Nothing is defragmented, nothing is
 * compacted ("the current revision" would be the other cluster's), and the refusal is named.
 */
static void test_foreign_cluster_refused(void **state)
{
	const struct mem frag[3] = {FRAG, FRAG, FRAG}, big[3] = {BIG, BIG, BIG};
	json_t *d = defrag("run", T_CREATED, "", ST_NONE);
	json_t *c = cluster(3, SETTLED, 100 * MiB);
	struct eo_etcd_alarm al = {2, EO_ETCD_ALARM_NOSPACE};
	struct eo_etcd_alarms alarms = {&al, 1};
	struct fleet f;
	struct eo_dplan_input din = {.defrag = d, .cluster = c, .queried = true, .now = NOW};
	struct eo_nplan_input nin = {.cluster = c, .queried = true, .alarms = &alarms, .now = NOW};
	struct eo_dplan_result dout = {0};
	struct eo_nplan_result nout = {0};

	(void)state;
	/* The same members with this cluster's ID defragment and recover. */
	fleet_make(&f, frag);
	for (int i = 0; i < 3; i++)
		f.st[i].cluster_id = 0xabc;
	din.members = f.v;
	din.n_members = 3;
	assert_int_equal(eo_plan_defrag(&din, &dout), 0);
	assert_int_equal(dout.action, EO_DPLAN_DEFRAG);
	eo_dplan_result_clear(&dout);
	f.st[1].cluster_id = 0x999;
	assert_int_equal(eo_plan_defrag(&din, &dout), 0);
	assert_int_equal(dout.action, EO_DPLAN_WAIT);
	assert_string_equal(json_string_value(json_object_get(dout.status, "phase")), "Pending");
	assert_string_equal(eo_condition_reason(dout.status, "Ready"), "ClusterIDMismatch");
	assert_string_equal(dout.event_type, "Warning");
	assert_non_null(
	    strstr(dout.message, "member demo-b answers for etcd cluster 999, not abc"));
	eo_dplan_result_clear(&dout);

	fleet_make(&f, big);
	for (int i = 0; i < 3; i++)
		f.st[i].cluster_id = 0xabc;
	nin.members = f.v;
	nin.n_members = 3;
	assert_int_equal(eo_plan_nospace(&nin, &nout), 0);
	assert_int_equal(nout.action, EO_NPLAN_RECOVER);
	eo_nplan_result_clear(&nout);
	f.st[2].cluster_id = 0x999;
	assert_int_equal(eo_plan_nospace(&nin, &nout), 0);
	assert_int_equal(nout.action, EO_NPLAN_NONE);
	assert_non_null(nout.status);
	assert_string_equal(eo_condition_status(nout.status, "NoSpace"), "True");
	assert_string_equal(eo_condition_reason(nout.status, "NoSpace"), "ClusterIDMismatch");
	assert_non_null(strstr(nout.message, "nothing is compacted or defragmented"));
	eo_nplan_result_clear(&nout);
	json_decref(d);
	json_decref(c);
}

static void test_defrag_schedule(void **state)
{
	struct eo_dsplan_result out = {0};
	json_t *s, *runs;
	const json_t *cr;

	(void)state;
	/* First slot after creation: a run named after it, with the rule and the TTL. */
	s = dschedule("0 * * * *", "", "{}");
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, NULL, NOW}, &out), 0);
	assert_non_null(out.create);
	cr = out.create;
	assert_string_equal(eo_meta_name(cr), "nightly-202605282000");
	assert_string_equal(eo_defrag_cluster_name(cr), "demo");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(json_object_get(cr, "spec"), "rule"),
					      "freeSpaceAbove")),
	    "500Mi");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(cr, "spec"),
							    "ttlSecondsAfterFinished")),
			 600);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(cr, "metadata"), "ownerReferences"),
			       0),
		"uid")),
	    "s-uid");
	assert_string_equal(eo_meta_label(cr, "etcd-operator.cozystack.io/defrag-schedule"),
			    "nightly");
	assert_string_equal(json_string_value(json_object_get(out.status, "lastScheduleTime")),
			    "2026-05-28T20:00:00Z");
	assert_string_equal(out.event_reason, "DefragCreated");
	eo_dsplan_result_clear(&out);
	json_decref(s);

	/* Already run this slot: nothing. */
	s = dschedule("0 * * * *", "", "{'lastScheduleTime':'2026-05-28T20:00:00Z'}");
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, NULL, NOW}, &out), 0);
	assert_null(out.create);
	assert_true(out.requeue_ms > 0 && out.requeue_ms <= 34 * 60 * 1000);
	eo_dsplan_result_clear(&out);
	json_decref(s);

	/* Due, but a run is still going: it waits. */
	s = dschedule("0 * * * *", "", "{'lastScheduleTime':'2026-05-28T19:00:00Z'}");
	runs = json_array();
	json_array_append_new(runs, run("nightly-202605281900", "2026-05-28T19:00:01Z", "Running"));
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, runs, NOW}, &out), 0);
	assert_null(out.create);
	assert_string_equal(json_string_value(json_object_get(out.status, "active")),
			    "nightly-202605281900");
	assert_non_null(strstr(out.message, "waits"));
	eo_dsplan_result_clear(&out);
	json_decref(runs);

	/* The slot's run exists (its status write was lost): recorded, not made again. */
	runs = json_array();
	json_array_append_new(runs,
			      run("nightly-202605282000", "2026-05-28T20:00:01Z", "Complete"));
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, runs, NOW}, &out), 0);
	assert_null(out.create);
	assert_string_equal(json_string_value(json_object_get(out.status, "lastScheduleTime")),
			    "2026-05-28T20:00:00Z");
	eo_dsplan_result_clear(&out);
	json_decref(runs);
	json_decref(s);

	/* Suspended: nothing. */
	s = dschedule("0 * * * *", ",'suspend':true", "{}");
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, NULL, NOW}, &out), 0);
	assert_null(out.create);
	assert_string_equal(eo_condition_reason(out.status, "Ready"), "Suspended");
	eo_dsplan_result_clear(&out);
	json_decref(s);

	/* A cron expression that does not parse. */
	s = dschedule("61 * * * *", "", "{}");
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, NULL, NOW}, &out), 0);
	assert_null(out.create);
	assert_string_equal(eo_condition_reason(out.status, "Ready"), "InvalidSchedule");
	assert_string_equal(out.event_type, "Warning");
	eo_dsplan_result_clear(&out);
	json_decref(s);
}

/* The history: 3 Complete and 1 Failed by default, newest first; running runs are kept. */
static void test_defrag_schedule_history(void **state)
{
	struct eo_dsplan_result out = {0};
	json_t *s = dschedule("0 0 * * *", "", "{'lastScheduleTime':'2026-05-28T00:00:00Z'}");
	json_t *runs = json_array();
	char names[256] = "";

	(void)state;
	json_array_append_new(runs, run("c1", "2026-05-21T00:00:00Z", "Complete"));
	json_array_append_new(runs, run("c2", "2026-05-22T00:00:00Z", "Complete"));
	json_array_append_new(runs, run("f1", "2026-05-23T00:00:00Z", "Failed"));
	json_array_append_new(runs, run("c3", "2026-05-24T00:00:00Z", "Complete"));
	json_array_append_new(runs, run("f2", "2026-05-25T00:00:00Z", "Failed"));
	json_array_append_new(runs, run("c4", "2026-05-26T00:00:00Z", "Complete"));
	json_array_append_new(runs, run("c5", "2026-05-27T00:00:00Z", "Complete"));
	json_array_append_new(runs, run("r1", "2026-05-20T00:00:00Z", "Running"));
	assert_int_equal(eo_plan_defrag_schedule(&(struct eo_dsplan_input){s, runs, NOW}, &out), 0);
	for (size_t i = 0; i < out.n_del; i++) {
		strcat(names, eo_meta_name(out.del[i]));
		strcat(names, " ");
	}
	assert_string_equal(names, "f1 c2 c1 ");
	eo_dsplan_result_clear(&out);
	json_decref(runs);
	json_decref(s);
}

TU_MAIN(test_defrag_table, test_defrag_query_refresh, test_defrag_record_bytes, test_defrag_ttl,
	test_defrag_validate, test_nospace_table, test_foreign_cluster_refused,
	test_quota_guard_table, test_quota_auto_raise_table, test_quota_effective,
	test_defrag_schedule, test_defrag_schedule_history)
