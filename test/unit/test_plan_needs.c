/*
 * Unit tests for plan/needs.c: what the cluster and member plans need observed beyond the
 * caches before their action is carried out, in order, each kind at most once a pass.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "plan/needs.h"
#include "support/testutil.h"
#include "support/tu_main.h"

struct crow {
	const char *name;
	enum eo_plan_action action;
	bool want_leader;
	int member;	     /* r.member: index into the two members, -1: NULL, 2: another's */
	bool etcd_queried;   /* in.etcd_queried */
	bool etcd_listed;    /* in.etcd set (the list answered) */
	bool leader_checked; /* in.etcd_leader_checked */
	enum eo_plan_need after;
	enum eo_plan_need want;
};

static void test_cluster_needs(void **state)
{
	static const struct crow rows[] = {
	    {"nothing to observe", EO_PLAN_WAIT, false, -1, false, false, false, EO_PLAN_NEED_NONE,
	     EO_PLAN_NEED_NONE},
	    {"query: etcd first", EO_PLAN_QUERY_MEMBERS, true, -1, false, false, false,
	     EO_PLAN_NEED_NONE, EO_PLAN_NEED_ETCD},
	    {"etcd asked: the leader next", EO_PLAN_QUERY_MEMBERS, true, -1, true, true, false,
	     EO_PLAN_NEED_ETCD, EO_PLAN_NEED_LEADER},
	    {"no leader wanted: act", EO_PLAN_QUERY_MEMBERS, false, -1, true, true, false,
	     EO_PLAN_NEED_ETCD, EO_PLAN_NEED_NONE},
	    {"etcd did not answer: no leader to ask", EO_PLAN_QUERY_MEMBERS, true, -1, true, false,
	     false, EO_PLAN_NEED_ETCD, EO_PLAN_NEED_NONE},
	    {"leader asked already", EO_PLAN_QUERY_MEMBERS, true, -1, true, true, true,
	     EO_PLAN_NEED_LEADER, EO_PLAN_NEED_NONE},
	    {"etcd never asked again after a confirm", EO_PLAN_QUERY_MEMBERS, true, -1, false,
	     false, false, EO_PLAN_NEED_CONFIRM, EO_PLAN_NEED_NONE},
	    {"nor the leader", EO_PLAN_QUERY_MEMBERS, true, -1, true, true, false,
	     EO_PLAN_NEED_CONFIRM, EO_PLAN_NEED_NONE},
	    {"removal: confirm live", EO_PLAN_REMOVE_MEMBER, false, 1, false, false, false,
	     EO_PLAN_NEED_NONE, EO_PLAN_NEED_CONFIRM},
	    {"removal after the leader: confirm", EO_PLAN_REMOVE_MEMBER, false, 0, true, true, true,
	     EO_PLAN_NEED_LEADER, EO_PLAN_NEED_CONFIRM},
	    {"removal confirmed again", EO_PLAN_REMOVE_MEMBER, false, 0, true, true, true,
	     EO_PLAN_NEED_CONFIRM, EO_PLAN_NEED_CONFIRM},
	    {"removal of no member", EO_PLAN_REMOVE_MEMBER, false, -1, false, false, false,
	     EO_PLAN_NEED_NONE, EO_PLAN_NEED_NONE},
	    {"removal of a member not among the observed", EO_PLAN_REMOVE_MEMBER, false, 2, false,
	     false, false, EO_PLAN_NEED_NONE, EO_PLAN_NEED_NONE},
	    {"another action", EO_PLAN_ADD_LEARNER, false, 0, true, true, false, EO_PLAN_NEED_ETCD,
	     EO_PLAN_NEED_NONE},
	};
	json_t *m[3] = {tu_jsonq("{'metadata':{'name':'demo-a'}}"),
			tu_jsonq("{'metadata':{'name':'demo-b'}}"),
			tu_jsonq("{'metadata':{'name':'other-a'}}")};
	struct eo_plan_member pm[2] = {{.member = m[0]}, {.member = m[1]}};
	struct eo_etcd_members list = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct crow *r = &rows[i];
		struct eo_plan_result pr = {.action = r->action,
					    .want_leader = r->want_leader,
					    .member = r->member >= 0 ? m[r->member] : NULL};
		struct eo_plan_input in = {.members = pm,
					   .n_members = 2,
					   .etcd_queried = r->etcd_queried,
					   .etcd = r->etcd_listed ? &list : NULL,
					   .etcd_leader_checked = r->leader_checked};
		enum eo_plan_need got = eo_plan_cluster_needs(&pr, &in, r->after);

		if (got != r->want)
			fail_msg("%s: need %d, want %d", r->name, got, r->want);
	}
	for (size_t i = 0; i < 3; i++)
		json_decref(m[i]);
}

struct mrow {
	const char *name;
	enum eo_mplan_action action;
	const char *member;  /* the EtcdMember */
	const char *cluster; /* its EtcdCluster, NULL: gone */
	bool pvc;	     /* its PVC cached (uid u1) */
	enum eo_mplan_need after;
	enum eo_mplan_need want;
};

#define MEMBER_PLAIN "{'metadata':{'name':'demo-a'},'spec':{'initialCluster':'x'}}"
#define MEMBER_VOTER                                                                               \
	"{'metadata':{'name':'demo-a'},'spec':{'initialCluster':'x'},'status':{'isVoter':true}}"
#define MEMBER_RAN                                                                                 \
	"{'metadata':{'name':'demo-a'},'spec':{'initialCluster':'x'},"                             \
	"'status':{'memberID':'1a','dataVolumeUID':'u1'}}"
#define CLUSTER	     "{'metadata':{'name':'demo'}}"
#define CLUSTER_GOES "{'metadata':{'name':'demo','deletionTimestamp':'2026-06-02T10:00:00Z'}}"

static void test_member_needs(void **state)
{
	static const struct mrow rows[] = {
	    {"nothing to observe", EO_MPLAN_CREATE_POD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_NONE},
	    {"query: credentials first", EO_MPLAN_QUERY_ETCD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_CREDENTIALS},
	    {"then etcd", EO_MPLAN_QUERY_ETCD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_CREDENTIALS, EO_MPLAN_NEED_ETCD},
	    {"no credentials of a cluster going", EO_MPLAN_QUERY_ETCD, MEMBER_PLAIN, CLUSTER_GOES,
	     true, EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_ETCD},
	    {"nor of a cluster gone", EO_MPLAN_QUERY_ETCD, MEMBER_PLAIN, NULL, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_ETCD},
	    {"removal: credentials", EO_MPLAN_REMOVE_MEMBER, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_CREDENTIALS},
	    {"removal: nothing after them", EO_MPLAN_REMOVE_MEMBER, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_CREDENTIALS, EO_MPLAN_NEED_NONE},
	    {"credentials only right after the first plan", EO_MPLAN_REMOVE_MEMBER, MEMBER_PLAIN,
	     CLUSTER, true, EO_MPLAN_NEED_PVC, EO_MPLAN_NEED_NONE},
	    {"etcd asked once", EO_MPLAN_QUERY_ETCD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_ETCD, EO_MPLAN_NEED_NONE},
	    {"a PVC to create: read live", EO_MPLAN_CREATE_PVC, MEMBER_PLAIN, CLUSTER, false,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_PVC},
	    {"after etcd too", EO_MPLAN_CREATE_PVC, MEMBER_PLAIN, CLUSTER, false,
	     EO_MPLAN_NEED_ETCD, EO_MPLAN_NEED_PVC},
	    {"the data volume lost: read live", EO_MPLAN_WAIT, MEMBER_RAN, CLUSTER, false,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_PVC},
	    {"waiting with the volume there", EO_MPLAN_WAIT, MEMBER_RAN, CLUSTER, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_NONE},
	    {"waiting, never ran: nothing lost", EO_MPLAN_WAIT, MEMBER_PLAIN, CLUSTER, false,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_NONE},
	    {"PVC read once", EO_MPLAN_CREATE_PVC, MEMBER_PLAIN, CLUSTER, false, EO_MPLAN_NEED_PVC,
	     EO_MPLAN_NEED_NONE},
	    {"a restore source: read it", EO_MPLAN_READ_VOLUME, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_PVC, EO_MPLAN_NEED_VOLUME},
	    {"the voter label off: read the member", EO_MPLAN_PATCH_POD, MEMBER_PLAIN, CLUSTER,
	     true, EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_MEMBER},
	    {"after the volume too", EO_MPLAN_PATCH_POD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_VOLUME, EO_MPLAN_NEED_MEMBER},
	    {"a voter's labels: no read", EO_MPLAN_PATCH_POD, MEMBER_VOTER, CLUSTER, true,
	     EO_MPLAN_NEED_NONE, EO_MPLAN_NEED_NONE},
	    {"member read once", EO_MPLAN_PATCH_POD, MEMBER_PLAIN, CLUSTER, true,
	     EO_MPLAN_NEED_MEMBER, EO_MPLAN_NEED_NONE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct mrow *r = &rows[i];
		json_t *member = tu_jsonq(r->member);
		json_t *cluster = r->cluster != NULL ? tu_jsonq(r->cluster) : NULL;
		json_t *pvc =
		    r->pvc ? tu_jsonq("{'metadata':{'name':'data-demo-a','uid':'u1'}}") : NULL;
		struct eo_mplan_result pr = {.action = r->action};
		struct eo_mplan_input in = {.member = member, .cluster = cluster, .pvc = pvc};
		enum eo_mplan_need got = eo_member_plan_needs(&pr, &in, r->after);

		if (got != r->want)
			fail_msg("%s: need %d, want %d", r->name, got, r->want);
		json_decref(member);
		json_decref(cluster);
		json_decref(pvc);
	}
}

TU_MAIN(test_cluster_needs, test_member_needs)
