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
#include <pthread.h>
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
#include "desired/desired.h"
#include "etcd/client.h"
#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/events.h"
#include "plan/plan.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"

extern char **environ;

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

enum { CL, MEM, DF, N_CACHES };
static const char *const PLURALS[N_CACHES] = {EO_PLURAL_CLUSTERS, EO_PLURAL_MEMBERS,
					      EO_PLURAL_DEFRAGS};

struct api {
	pthread_mutex_t mu;
	json_t *store; /* "plural/name" -> object */
	json_t *events;
	int rv;
};

struct rig {
	struct api api;
	char connect_to[128];
	eo_kube_fake *fake;
	eo_kube_config *cfg;
	eo_kube_client *kc;
	eo_kube_recorder *rec;
	eo_kube_cache *caches[N_CACHES];
	struct eo_controller ctl;
};

static void reply(struct eo_kube_fake_response *rs, int status, const json_t *o)
{
	rs->status = status;
	rs->body = json_dumps(o, JSON_COMPACT);
}

/* RFC 7386 merge of patch into target (in place). */
static void merge(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)patch, k, v)
	{
		if (json_is_null(v))
			json_object_del(target, k);
		else if (json_is_object(v) && json_is_object(json_object_get(target, k)))
			merge(json_object_get(target, k), v);
		else
			json_object_set(target, k, v);
	}
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct api *a = ud;
	char path[1024], *seg[16], *save = NULL, key[512];
	size_t n = 0, ns_at = SIZE_MAX;
	const char *plural = "", *name = "";
	json_t *body = json_loads(rq->body, 0, NULL), *have;

	snprintf(path, sizeof(path), "%s", rq->path);
	for (char *t = strtok_r(path, "/", &save); t != NULL && n < 16;
	     t = strtok_r(NULL, "/", &save))
		seg[n++] = t;
	for (size_t i = 0; i < n; i++)
		if (strcmp(seg[i], "namespaces") == 0 && ns_at == SIZE_MAX)
			ns_at = i;
	if (ns_at != SIZE_MAX && ns_at + 2 < n)
		plural = seg[ns_at + 2];
	if (ns_at != SIZE_MAX && ns_at + 3 < n)
		name = seg[ns_at + 3];
	snprintf(key, sizeof(key), "%s/%s", plural, name);
	pthread_mutex_lock(&a->mu);
	have = json_object_get(a->store, key);
	if (strcmp(plural, "events") == 0) {
		json_array_append(a->events, body);
		reply(rs, 201, body ? body : json_object());
	} else if (have == NULL) {
		rs->status = 404, rs->body = tu_status_body(404, "NotFound", "not found");
	} else if (strcmp(rq->method, "PATCH") == 0) {
		const char *want = json_string_value(
		    json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
		const char *rv = json_string_value(
		    json_object_get(json_object_get(have, "metadata"), "resourceVersion"));
		char nrv[16];

		if (want != NULL && rv != NULL && strcmp(want, rv) != 0) {
			rs->status = 409, rs->body = tu_status_body(409, "Conflict", "conflict");
		} else {
			json_t *st = json_object_get(have, "status");

			if (st == NULL)
				json_object_set_new(have, "status", st = json_object());
			merge(st, json_object_get(body, "status"));
			snprintf(nrv, sizeof(nrv), "%d", ++a->rv);
			json_object_set_new(json_object_get(have, "metadata"), "resourceVersion",
					    json_string(nrv));
			reply(rs, 200, have);
		}
	} else if (strcmp(rq->method, "DELETE") == 0) {
		json_object_del(a->store, key);
		rs->body = strdup("{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else {
		reply(rs, 200, have);
	}
	pthread_mutex_unlock(&a->mu);
	json_decref(body);
}

static time_t wall_now(void)
{
	return time(NULL);
}

static int64_t frozen_ms(void *ud)
{
	(void)ud;
	return (int64_t)T0 * 1000;
}

static void rig_start(struct rig *r, int etcd_port)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->connect_to, sizeof(r->connect_to), "::127.0.0.1:%d", etcd_port);
	pthread_mutex_init(&r->api.mu, NULL);
	r->api.store = json_object();
	r->api.events = json_array();
	r->api.rv = 100;
	r->fake = eo_kube_fake_start(handler, &r->api);
	assert_non_null(r->fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(r->fake), NULL, NULL, &r->cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
	r->rec = eo_kube_recorder_new(r->kc, &(struct eo_kube_recorder_opts){.now_ms = frozen_ms});
	for (size_t i = 0; i < N_CACHES; i++)
		r->caches[i] = eo_kube_cache_new(EO_LABEL_CLUSTER);
	r->ctl = (struct eo_controller){
	    .kc = r->kc,
	    .rec = r->rec,
	    .clusters = {{r->caches[CL]}, 1},
	    .members = {{r->caches[MEM]}, 1},
	    .defrags = {{r->caches[DF]}, 1},
	    .build = OPTS,
	    .etcd_timeout_ms = 5000,
	    .now = wall_now,
	    .etcd_connect_to = r->connect_to,
	};
}

static void rig_stop(struct rig *r)
{
	eo_kube_recorder_free(r->rec);
	eo_kube_client_free(r->kc);
	eo_kube_fake_stop(r->fake);
	for (size_t i = 0; i < N_CACHES; i++)
		eo_kube_cache_free(r->caches[i]);
	json_decref(r->api.store);
	json_decref(r->api.events);
	pthread_mutex_destroy(&r->api.mu);
}

/* Puts o (stolen) into the store and its cache. */
static void put(struct rig *r, int which, json_t *o)
{
	char key[512];

	assert_non_null(o);
	snprintf(key, sizeof(key), "%s/%s", PLURALS[which],
		 json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
	pthread_mutex_lock(&r->api.mu);
	json_object_set(r->api.store, key, o);
	pthread_mutex_unlock(&r->api.mu);
	assert_int_equal(eo_kube_cache_upsert(r->caches[which], o, NULL), EO_KUBE_OK);
	json_decref(o);
}

/* The informer's job: the caches take what the store holds now. */
static void sync_caches(struct rig *r)
{
	const char *k;
	json_t *v;

	pthread_mutex_lock(&r->api.mu);
	json_object_foreach(r->api.store, k, v)
	{
		for (int w = 0; w < N_CACHES; w++) {
			size_t l = strlen(PLURALS[w]);

			if (strncmp(k, PLURALS[w], l) == 0 && k[l] == '/')
				eo_kube_cache_upsert(r->caches[w], v, NULL);
		}
	}
	pthread_mutex_unlock(&r->api.mu);
	/* a deleted object leaves the cache too */
	{
		json_t *df = eo_kube_cache_get(r->caches[DF], "default", "run");
		char key[128];

		snprintf(key, sizeof(key), "%s/run", EO_PLURAL_DEFRAGS);
		pthread_mutex_lock(&r->api.mu);
		if (df != NULL && json_object_get(r->api.store, key) == NULL)
			eo_kube_cache_remove(r->caches[DF], "default", "run", NULL);
		pthread_mutex_unlock(&r->api.mu);
		json_decref(df);
	}
}

static json_t *stored(struct rig *r, int which, const char *name)
{
	char key[512];
	json_t *o;

	snprintf(key, sizeof(key), "%s/%s", PLURALS[which], name);
	pthread_mutex_lock(&r->api.mu);
	o = json_deep_copy(json_object_get(r->api.store, key));
	pthread_mutex_unlock(&r->api.mu);
	return o;
}

#define SETTLED                                                                                    \
	"[{'type':'Available','status':'True','reason':'QuorumHealthy','message':'',"              \
	"'lastTransitionTime':'2026-06-02T09:00:00Z','observedGeneration':1},"                     \
	"{'type':'Progressing','status':'False','reason':'Reconciled','message':'',"               \
	"'lastTransitionTime':'2026-06-02T09:00:00Z','observedGeneration':1}]"

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static pid_t etcd_pid;

/* A single-member etcd with an 8 MiB quota on a free port; its client port. */
static int start_etcd(void)
{
	const char *bin = getenv("EO_ITEST_ETCD"), *work = getenv("EO_ITEST_WORKDIR");
	char url[64], peer[64], initial[96], dir[512], log[512];
	int cport = free_port(), pport = free_port();
	posix_spawn_file_actions_t fa;

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
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	assert_int_equal(posix_spawn(&etcd_pid, bin, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
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
		     "8388608}},'status':{'conditions':" SETTLED "}}");
	json_object_set_new(json_object_get(cl, "status"), "clusterID", json_string(id));
	put(r, CL, cl);
	put(r, MEM,
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
	rig_start(&r, port);
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
		put(&r, DF, tu_jsonq(buf));
	}
	for (int pass = 0; pass < 3; pass++) {
		eo_defrag_reconcile(&r.ctl, "default", "run", &out);
		assert_false(out.error);
		sync_caches(&r);
	}
	after = db_size(ec, port);
	d = stored(&r, DF, "run");
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
	c = stored(&r, CL, "demo");
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
