/*
 * Integration: the EtcdDefrag reconciler and the NOSPACE recovery (controller/defrag.c)
 * driven against a real etcd (its own single member with an 8 MiB quota, started here)
 * and the fake apiserver. The member's DNS name is routed to the local etcd through the
 * client's connect_to seam, so every request the operator would make reaches real etcd:
 * a defragmentation that really shrinks the database, and a real NOSPACE alarm compacted,
 * defragmented and disarmed, after which writes are accepted again.
 *
 * Run through test/integration/run.sh (EO_ITEST_ETCD, EO_ITEST_WORKDIR).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/conditions.h"
#include "api/names.h"
#include "controller/controller.h"
#include "etcd/client.h"
#include "plan/plan.h"
#include "support/rig.h"
#include "support/testutil.h"
#include "support/itest.h"

extern char **environ;

/* The rig with every etcd connection routed to the real etcd at etcd_port, the wall clock. */
static void start(struct rig *r, int etcd_port)
{
	static char connect_to[128];

	rig_start(r, 0);
	snprintf(connect_to, sizeof(connect_to), "::127.0.0.1:%d", etcd_port);
	r->ctl.etcd_connect_to = connect_to;
	r->ctl.etcd_timeout_ms = 5000;
}

static int free_port(void)
{
	int port = itest_free_port();

	assert_true(port > 0);
	return port;
}

static pid_t etcd_pid;

/* A single-member etcd with an 8 MiB quota on a free port; its client port. */
static int start_etcd(void)
{
	const char *bin = getenv("EO_ITEST_ETCD"), *work = getenv("EO_ITEST_WORKDIR");
	char url[64], peer[64], initial[96], dir[512], log[512];
	int cport = free_port(), pport = free_port();

	if (bin == NULL || work == NULL)
		fail_msg("run through test/integration/run.sh (EO_ITEST_ETCD, EO_ITEST_WORKDIR)");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", cport);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", pport);
	snprintf(initial, sizeof(initial), "demo-a=%s", peer);
	snprintf(dir, sizeof(dir), "%s/defrag.etcd", work);
	snprintf(log, sizeof(log), "%s/defrag.log", work);
	const char *argv[] = {bin,
			      "--name=demo-a",
			      "--data-dir",
			      dir,
			      "--listen-client-urls",
			      url,
			      "--advertise-client-urls",
			      url,
			      "--listen-peer-urls",
			      peer,
			      "--initial-advertise-peer-urls",
			      peer,
			      "--initial-cluster",
			      initial,
			      "--quota-backend-bytes=8388608",
			      NULL};
	etcd_pid = itest_spawn_logged(argv, log);
	assert_true(etcd_pid > 0);
	return cport;
}

static void stop_etcd(void)
{
	if (etcd_pid > 0) {
		kill(etcd_pid, SIGTERM);
		waitpid(etcd_pid, NULL, 0);
		etcd_pid = 0;
	}
}

static eo_etcd_client *direct(int port)
{
	char url[64];
	const char *eps[] = {url};
	struct eo_etcd_config cfg = {.endpoints = eps, .n_endpoints = 1, .timeout_ms = 10000};
	eo_etcd_client *c = NULL;
	struct eo_etcd_status st = {0};

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(eo_etcd_client_new(&cfg, &c, NULL), EO_ETCD_OK);
	for (int i = 0; i < 200 && eo_etcd_status(c, url, &st, NULL) != EO_ETCD_OK; i++) {
		eo_etcd_status_clear(&st);
		usleep(100000);
	}
	eo_etcd_status_clear(&st);
	return c;
}

static int64_t db_size(eo_etcd_client *c, int port)
{
	char url[64];
	struct eo_etcd_status st = {0};
	int64_t n;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(eo_etcd_status(c, url, &st, NULL), EO_ETCD_OK);
	n = st.db_size;
	eo_etcd_status_clear(&st);
	return n;
}

/* Overwrites one key with 256 KiB values n times (or until refused); the error. */
static eo_etcd_err overwrite(eo_etcd_client *c, int n)
{
	size_t vlen = 256 * 1024;
	char *v = malloc(vlen);
	eo_etcd_err e = EO_ETCD_OK;

	assert_non_null(v);
	for (int i = 0; i < n && e == EO_ETCD_OK; i++) {
		memset(v, 'a' + i % 26, vlen);
		e = eo_etcd_put(c, "churn", 5, v, vlen, NULL, NULL);
	}
	free(v);
	return e;
}

/* The cluster and its member; status.clusterID is the real etcd's (the planners refuse others). */
static void world(struct rig *r, eo_etcd_client *ec, int port)
{
	char url[64], id[24];
	struct eo_etcd_status st = {0};
	json_t *cl = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(eo_etcd_status(ec, url, &st, NULL), EO_ETCD_OK);
	eo_plan_format_id(st.cluster_id, id, sizeof(id));
	eo_etcd_status_clear(&st);
	cl =
	    tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		     "'metadata':{'name':'demo','namespace':'default','uid':'c-uid','generation':1,"
		     "'resourceVersion':'10'},'spec':{'replicas':1,'options':{'quotaBackendBytes':"
		     "8388608}},'status':{'conditions':" RIG_SETTLED "}}");
	json_object_set_new(json_object_get(cl, "status"), "clusterID", json_string(id));
	rig_put(r, RIG_CLUSTERS, cl);
	rig_put(r, RIG_MEMBERS,
		tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdMember',"
			 "'metadata':{'name':'demo-a','namespace':'default','uid':'uid-a',"
			 "'resourceVersion':'20','labels':{'" EO_LABEL_CLUSTER "':'demo'},"
			 "'ownerReferences':[{'apiVersion':'etcd-operator.cozystack.io/v1alpha2',"
			 "'kind':'EtcdCluster','name':'demo','uid':'c-uid','controller':true}]},"
			 "'spec':{'clusterName':'demo'},'status':{'isVoter':true}}"));
}

static void test_defrag_and_nospace_on_real_etcd(void **state)
{
	struct rig r;
	struct eo_reconcile_out out;
	int port = start_etcd();
	eo_etcd_client *ec = direct(port);
	struct eo_etcd_alarms al = {0};
	int64_t before, after, rev = 0;
	json_t *d, *c, *m;
	char ts[32];
	time_t now = time(NULL);

	(void)state;
	start(&r, port);
	world(&r, ec, port);

	/* 1. An EtcdDefrag shrinks the database: 16 overwrites of 256 KiB, compacted. */
	assert_int_equal(overwrite(ec, 16), EO_ETCD_OK);
	assert_int_equal(eo_etcd_revision(ec, &rev, NULL), EO_ETCD_OK);
	assert_int_equal(eo_etcd_compact(ec, rev, true, NULL), EO_ETCD_OK);
	/*
	 * No waiting for DbSizeInUse to drop: on an idle member it does not until the next
	 * backend commit (never, here, on 3.4), and the reconciler must make that commit itself
	 * before it applies the rule below (freeSpaceAbove 1Mi).
	 */
	before = db_size(ec, port);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	{
		char buf[1024];

		snprintf(buf, sizeof(buf),
			 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdDefrag',"
			 "'metadata':{'name':'run','namespace':'default','uid':'d-uid',"
			 "'generation':1,'resourceVersion':'30','creationTimestamp':'%s'},"
			 "'spec':{'clusterRef':{'name':'demo'},'rule':{'freeSpaceAbove':'1Mi'}}}",
			 ts);
		rig_put(&r, RIG_DEFRAGS, tu_jsonq(buf));
	}
	for (int pass = 0; pass < 3; pass++) {
		eo_defrag_reconcile(&r.ctl, "default", "run", &out);
		assert_false(out.error);
		rig_sync_defrag(&r);
	}
	after = db_size(ec, port);
	d = rig_stored(&r, RIG_DEFRAGS, "run");
	print_message("EtcdDefrag: phase %s, DbSize %" PRId64 " -> %" PRId64 "\n",
		      json_string_value(json_object_get(json_object_get(d, "status"), "phase")),
		      before, after);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(d, "status"), "phase")), "Complete");
	m = json_array_get(json_object_get(json_object_get(d, "status"), "members"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "outcome")), "Defragmented");
	assert_string_equal(json_string_value(json_object_get(m, "role")), "Leader");
	assert_int_equal(json_integer_value(json_object_get(m, "dbSizeBefore")), before);
	assert_int_equal(json_integer_value(json_object_get(m, "dbSizeAfter")), after);
	assert_true(after * 2 < before);
	json_decref(d);

	/* 2. NOSPACE: overwrite until refused, then one pass of the NOSPACE reconciler. */
	assert_int_equal(overwrite(ec, 200), EO_ETCD_NOSPACE);
	assert_int_equal(eo_etcd_alarm_list(ec, &al, NULL), EO_ETCD_OK);
	assert_int_equal(al.n, 1);
	eo_etcd_alarms_clear(&al);
	eo_nospace_reconcile(&r.ctl, "default", "demo", &out);
	assert_false(out.error);
	c = rig_stored(&r, RIG_CLUSTERS, "demo");
	print_message("NoSpace: %s\n",
		      json_string_value(json_object_get(
			  eo_condition_find(json_object_get(c, "status"), "NoSpace"), "message")));
	assert_string_equal(eo_condition_reason(json_object_get(c, "status"), "NoSpace"),
			    "Recovered");
	json_decref(c);
	assert_int_equal(eo_etcd_alarm_list(ec, &al, NULL), EO_ETCD_OK);
	assert_int_equal(al.n, 0);
	assert_true(db_size(ec, port) < 8388608);
	assert_int_equal(eo_etcd_put(ec, "after", 5, "ok", 2, NULL, NULL), EO_ETCD_OK);

	eo_etcd_alarms_clear(&al);
	eo_etcd_client_free(ec);
	rig_stop(&r);
	stop_etcd();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defrag_and_nospace_on_real_etcd),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	stop_etcd();
	curl_global_cleanup();
	return rc;
}
