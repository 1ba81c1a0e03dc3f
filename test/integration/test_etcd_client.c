/*
 * Integration tests of src/etcd against real etcd processes.
 *
 * test/integration/run.sh starts a fresh single-member etcd and passes it in:
 *   EO_ITEST_ETCD        path of the etcd binary (used to start a second member)
 *   EO_ITEST_VERSION     expected server version, e.g. "3.4.23"
 *   EO_ITEST_ENDPOINT    client URL of the running member
 *   EO_ITEST_PEER_URL    its peer URL
 *   EO_ITEST_NAME        its name
 *   EO_ITEST_WORKDIR     a scratch directory for the second member
 *   EO_ITEST_ETCD_FLAGS  extra flags for etcd (space separated), may be empty
 *   EO_ITEST_TLS_DIR     ca.crt, server.{crt,key}, client.{crt,key}, other-ca.crt
 *                        (optional; without it the TLS test is skipped)
 *
 * The tests run in order and share the cluster: single member checks, then
 * growing it with a learner that is promoted, then removing it again, then
 * failover across dead and hung endpoints. The TLS test runs a separate
 * single-member cluster with client certificate authentication.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
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

#include "etcd/client.h"
#include "support/itest.h"

extern char **environ;

struct env {
	const char *etcd;
	const char *version;
	const char *endpoint;
	const char *peer_url;
	const char *name;
	const char *workdir;
	const char *flags;

	uint64_t a_id; /* the member run.sh started */
	pid_t b_pid;   /* second member, 0 when not running */
	uint64_t b_id; /* its member id once added */
	char b_client[64];
	char b_peer[64];
	pid_t t_pid; /* TLS member of its own cluster, 0 when not running */
	pid_t u_pid; /* auth member of its own cluster, 0 when not running */
	pid_t q_pid; /* small-quota member of its own cluster, 0 when not running */
};

/* A listening socket that never accepts: connects succeed, nothing answers. */
static int hung_listener(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/*
 * err = call, repeated while etcd answers busy (a state an operator requeues on) for up to ms
 * milliseconds, pause_ms between the tries.
 */
#define RETRY_WHILE(err, busy, ms, pause_ms, call)                                                 \
	do {                                                                                       \
		int64_t until_ = itest_mono_ms() + (ms);                                           \
                                                                                                   \
		while (((err) = (call)) == (busy) && itest_mono_ms() <= until_)                    \
			itest_sleep_ms(pause_ms);                                                  \
	} while (0)

static eo_etcd_client *client_for(const char *const *eps, size_t n, long timeout_ms)
{
	struct eo_etcd_config cfg = {
	    .endpoints = eps,
	    .n_endpoints = n,
	    .timeout_ms = timeout_ms,
	    .connect_timeout_ms = 1000,
	};
	struct eo_etcd_detail d;
	eo_etcd_client *c = NULL;
	eo_etcd_err err = eo_etcd_client_new(&cfg, &c, &d);

	if (err != EO_ETCD_OK)
		fail_msg("client_new: %s (%s)", eo_etcd_strerror(err), d.message);
	return c;
}

static void expect_err_at(int line, eo_etcd_err got, eo_etcd_err want,
			  const struct eo_etcd_detail *d)
{
	if (got != want)
		fail_msg("line %d: got %s, want %s (grpc %d http %ld curl %d at %s: %s)", line,
			 eo_etcd_strerror(got), eo_etcd_strerror(want), d->grpc_code,
			 d->http_status, d->curl_code, d->endpoint, d->message);
}
#define expect_err(got, want, d) expect_err_at(__LINE__, (got), (want), (d))

/* ---- the second member --------------------------------------------------- */

/*
 * Starts an etcd member in the background with its output in
 * <workdir>/<name>.log. argv_extra: NULL-terminated flags after the common
 * ones; EO_ITEST_ETCD_FLAGS come last. Returns the pid, or -1.
 */
static pid_t spawn_etcd(const struct env *e, const char *name, const char *const *argv_extra)
{
	char datadir[512], logpath[512], namearg[64];
	char *flags = NULL, *save = NULL, *tok;
	const char *argv[64];
	size_t n = 0;
	pid_t pid = -1;

	snprintf(datadir, sizeof(datadir), "%s/%s.etcd", e->workdir, name);
	snprintf(logpath, sizeof(logpath), "%s/%s.log", e->workdir, name);
	snprintf(namearg, sizeof(namearg), "--name=%s", name);
	argv[n++] = e->etcd;
	argv[n++] = namearg;
	argv[n++] = "--data-dir";
	argv[n++] = datadir;
	for (size_t i = 0; argv_extra[i] != NULL && n < 40; i++)
		argv[n++] = argv_extra[i];
	flags = strdup(e->flags);
	if (flags == NULL)
		return -1;
	for (tok = strtok_r(flags, " ", &save); tok != NULL && n < 62;
	     tok = strtok_r(NULL, " ", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	pid = itest_spawn_logged(argv, logpath);
	free(flags);
	return pid;
}

/* Waits up to ms for *pid to exit by itself, then terminates it. */
static void reap(pid_t *pid, long ms)
{
	int64_t until = itest_mono_ms() + ms;
	int st;

	if (*pid <= 0)
		return;
	while (itest_mono_ms() < until) {
		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			*pid = 0;
			return;
		}
		itest_sleep_ms(50);
	}
	kill(*pid, SIGTERM);
	until = itest_mono_ms() + 5000;
	while (itest_mono_ms() < until) {
		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			*pid = 0;
			return;
		}
		itest_sleep_ms(50);
	}
	kill(*pid, SIGKILL);
	waitpid(*pid, &st, 0);
	*pid = 0;
}

/* The second member "b" joins the cluster described by the member list. */
static int start_b(struct env *e, const struct eo_etcd_members *ms)
{
	char initial[1024] = "";
	size_t used = 0;

	/* --initial-cluster comes from the member list, as an operator does it. */
	for (size_t i = 0; i < ms->n; i++) {
		const struct eo_etcd_member *m = &ms->v[i];
		const char *name = m->id == e->b_id ? "b" : m->name;

		for (size_t u = 0; u < m->n_peer_urls; u++) {
			int w = snprintf(initial + used, sizeof(initial) - used, "%s%s=%s",
					 used ? "," : "", name, m->peer_urls[u]);

			if (w < 0 || (size_t)w >= sizeof(initial) - used)
				return -1;
			used += (size_t)w;
		}
	}
	const char *args[] = {
	    "--listen-client-urls", e->b_client, "--advertise-client-urls",	     e->b_client,
	    "--listen-peer-urls",   e->b_peer,	 "--initial-advertise-peer-urls",    e->b_peer,
	    "--initial-cluster",    initial,	 "--initial-cluster-state=existing", NULL};
	e->b_pid = spawn_etcd(e, "b", args);
	return e->b_pid > 0 ? 0 : -1;
}

static void stop_b(struct env *e, long ms)
{
	reap(&e->b_pid, ms);
}

static int setup(void **state)
{
	static struct env e;
	int cp, pp;

	e.etcd = itest_need_env("EO_ITEST_ETCD");
	e.version = itest_need_env("EO_ITEST_VERSION");
	e.endpoint = itest_need_env("EO_ITEST_ENDPOINT");
	e.peer_url = itest_need_env("EO_ITEST_PEER_URL");
	e.name = itest_need_env("EO_ITEST_NAME");
	e.workdir = itest_need_env("EO_ITEST_WORKDIR");
	e.flags = getenv("EO_ITEST_ETCD_FLAGS") ? getenv("EO_ITEST_ETCD_FLAGS") : "";
	cp = itest_free_port();
	pp = itest_free_port();
	if (cp <= 0 || pp <= 0 || cp == pp)
		return -1;
	snprintf(e.b_client, sizeof(e.b_client), "http://127.0.0.1:%d", cp);
	snprintf(e.b_peer, sizeof(e.b_peer), "http://127.0.0.1:%d", pp);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -1;
	*state = &e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	stop_b(e, 0);
	reap(&e->t_pid, 0);
	reap(&e->u_pid, 0);
	reap(&e->q_pid, 0);
	curl_global_cleanup();
	return 0;
}

/* ---- single member ------------------------------------------------------- */

static void test_single_member(void **state)
{
	struct env *e = *state;
	const char *eps[] = {e->endpoint};
	eo_etcd_client *c = client_for(eps, 1, 3000);
	struct eo_etcd_members ms = {0};
	struct eo_etcd_status st = {0};
	struct eo_etcd_detail d;
	eo_etcd_err err;

	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 1);
	assert_string_equal(ms.v[0].name, e->name);
	assert_int_equal(ms.v[0].n_peer_urls, 1);
	assert_string_equal(ms.v[0].peer_urls[0], e->peer_url);
	assert_int_equal(ms.v[0].n_client_urls, 1);
	assert_string_equal(ms.v[0].client_urls[0], e->endpoint);
	assert_false(ms.v[0].is_learner);
	assert_true(ms.v[0].id != 0);
	assert_true(ms.cluster_id != 0);
	assert_true(ms.responder_id == ms.v[0].id);
	e->a_id = ms.v[0].id;

	err = eo_etcd_status(c, e->endpoint, &st, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_string_equal(st.version, e->version);
	assert_true(st.member_id == e->a_id);
	assert_true(st.leader == e->a_id);
	assert_true(st.cluster_id == ms.cluster_id);
	assert_true(st.raft_term >= 1);
	assert_true(st.raft_index >= 1);
	assert_true(st.db_size > 0);
	assert_true(st.db_size_in_use > 0);
	assert_false(st.is_learner);
	assert_int_equal(st.n_errors, 0);
	/* 3.6 and later report the storage version and the quota. */
	if (strncmp(e->version, "3.4.", 4) != 0 && strncmp(e->version, "3.5.", 4) != 0) {
		assert_true(st.storage_version[0] != '\0');
		assert_true(st.db_size_quota > 0);
	}

	err = eo_etcd_health(c, e->endpoint, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_false(eo_etcd_client_endpoint_is_learner(c, 0));

	eo_etcd_status_clear(&st);
	eo_etcd_members_clear(&ms);
	eo_etcd_client_free(c);
}

static void test_keys(void **state)
{
	struct env *e = *state;
	const char *eps[] = {e->endpoint};
	eo_etcd_client *c = client_for(eps, 1, 3000);
	static const unsigned char binval[] = {'v', 0, 0xff, '\n', '"', 0x80};
	struct eo_etcd_kv kv = {0};
	struct eo_etcd_range r = {0};
	struct eo_etcd_range_opts opts = {.prefix = true};
	struct eo_etcd_detail d;
	int64_t rev1 = 0, rev2 = 0;
	eo_etcd_err err;

	err = eo_etcd_put(c, "itest/a", 7, binval, sizeof(binval), &rev1, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(rev1 > 1);
	err = eo_etcd_put(c, "itest/b", 7, "", 0, &rev2, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(rev2 == rev1 + 1);
	err = eo_etcd_put(c, "itest/c", 7, "third", 5, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_put(c, "itest0", 6, "outside", 7, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);

	err = eo_etcd_get(c, "itest/a", 7, &kv, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(kv.key_len, 7);
	assert_memory_equal(kv.key, "itest/a", 7);
	assert_int_equal(kv.value_len, sizeof(binval));
	assert_memory_equal(kv.value, binval, sizeof(binval));
	assert_true(kv.create_revision == rev1);
	assert_true(kv.mod_revision == rev1);
	assert_true(kv.version == 1);
	eo_etcd_kv_clear(&kv);

	/* An empty value is omitted by the gateway; it must read back as "". */
	err = eo_etcd_get(c, "itest/b", 7, &kv, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(kv.value_len, 0);
	assert_string_equal((char *)kv.value, "");
	eo_etcd_kv_clear(&kv);

	err = eo_etcd_get(c, "itest/missing", 13, &kv, &d);
	expect_err(err, EO_ETCD_KEY_NOT_FOUND, &d);

	err = eo_etcd_range(c, "itest/", 6, &opts, &r, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(r.n, 3);
	assert_true(r.count == 3);
	assert_false(r.more);
	assert_true(r.revision >= rev2);
	assert_memory_equal(r.kvs[2].key, "itest/c", 7);
	assert_string_equal((char *)r.kvs[2].value, "third");
	eo_etcd_range_clear(&r);

	opts.limit = 2;
	opts.keys_only = true;
	opts.serializable = true;
	err = eo_etcd_range(c, "itest/", 6, &opts, &r, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(r.n, 2);
	assert_true(r.more);
	assert_true(r.count == 3);
	assert_int_equal(r.kvs[0].value_len, 0);
	eo_etcd_range_clear(&r);

	opts = (struct eo_etcd_range_opts){.prefix = true, .count_only = true};
	err = eo_etcd_range(c, "itest", 5, &opts, &r, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(r.n, 0);
	assert_true(r.count == 4);
	eo_etcd_range_clear(&r);

	eo_etcd_client_free(c);
}

/* ---- growing: learner, promote ------------------------------------------ */

static void test_add_learner_and_promote(void **state)
{
	struct env *e = *state;
	const char *eps[] = {e->endpoint};
	const char *b_only[] = {e->b_client};
	const char *b_first[] = {e->b_client, e->endpoint};
	const char *peers[] = {e->b_peer};
	char other_peer[64];
	const char *others[] = {other_peer};
	eo_etcd_client *c = client_for(eps, 1, 3000);
	eo_etcd_client *cb = NULL, *cba = NULL;
	struct eo_etcd_member added = {0}, extra = {0};
	struct eo_etcd_members ms = {0};
	struct eo_etcd_status st = {0};
	struct eo_etcd_range r = {0};
	struct eo_etcd_range_opts ser = {.prefix = true, .serializable = true};
	struct eo_etcd_detail d;
	const struct eo_etcd_member *m;
	int64_t t0, until;
	eo_etcd_err err;

	err = eo_etcd_member_add(c, peers, 1, true, &added, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(added.is_learner);
	assert_true(added.id != 0);
	assert_string_equal(added.name, "");
	assert_int_equal(added.n_peer_urls, 1);
	assert_string_equal(added.peer_urls[0], e->b_peer);
	assert_int_equal(ms.n, 2);
	m = eo_etcd_members_find(&ms, added.id);
	assert_non_null(m);
	assert_true(m->is_learner);
	assert_int_equal(m->n_client_urls, 0);
	e->b_id = added.id;
	eo_etcd_members_clear(&ms);

	/* The cluster allows one learner at a time. */
	snprintf(other_peer, sizeof(other_peer), "http://127.0.0.1:%d", itest_free_port());
	err = eo_etcd_member_add(c, others, 1, true, &extra, NULL, &d);
	expect_err(err, EO_ETCD_TOO_MANY_LEARNERS, &d);
	/* FailedPrecondition: 412 from 3.4's older gateway, 400 from 3.5 on. */
	assert_true(d.http_status == 400 || d.http_status == 412);
	assert_int_equal(d.grpc_code, 9);
	/* Same peer URLs again. */
	err = eo_etcd_member_add(c, peers, 1, false, &extra, NULL, &d);
	expect_err(err, EO_ETCD_PEER_URL_EXISTS, &d);

	/* Not started yet, so certainly not in sync with the leader. */
	err = eo_etcd_member_promote(c, e->b_id, NULL, &d);
	expect_err(err, EO_ETCD_LEARNER_NOT_READY, &d);

	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(start_b(e, &ms), 0);
	eo_etcd_members_clear(&ms);

	/* Wait until the learner answers status. */
	cb = client_for(b_only, 1, 3000);
	until = itest_mono_ms() + 20000;
	do {
		eo_etcd_status_clear(&st);
		err = eo_etcd_status(cb, e->b_client, &st, &d);
		if (err == EO_ETCD_OK && st.leader != 0)
			break;
		itest_sleep_ms(100);
	} while (itest_mono_ms() < until);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(st.is_learner);
	assert_true(st.member_id == e->b_id);
	assert_true(st.leader == e->a_id);
	assert_true(eo_etcd_client_endpoint_is_learner(cb, 0));
	eo_etcd_status_clear(&st);

	/* Learner refusals come back as errors at once, not as hangs. The
	 * first client already knows its only endpoint is a learner. */
	t0 = itest_mono_ms();
	err = eo_etcd_member_list(cb, &ms, &d);
	expect_err(err, EO_ETCD_LEARNER, &d);
	err = eo_etcd_put(cb, "itest/x", 7, "x", 1, NULL, &d);
	expect_err(err, EO_ETCD_LEARNER, &d);
	assert_true(itest_mono_ms() - t0 < 2000);
	eo_etcd_client_free(cb);
	/* A fresh client learns it from the server's refusal. */
	cb = client_for(b_only, 1, 3000);
	t0 = itest_mono_ms();
	err = eo_etcd_member_remove(cb, e->a_id, NULL, &d);
	expect_err(err, EO_ETCD_LEARNER, &d);
	assert_true(strstr(d.message, "learner") != NULL);
	assert_true(eo_etcd_client_endpoint_is_learner(cb, 0));
	assert_true(itest_mono_ms() - t0 < 2000);
	/* What a learner does serve: serializable reads and health. */
	err = eo_etcd_range(cb, "itest/", 6, &ser, &r, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_range_clear(&r);
	err = eo_etcd_health(cb, e->b_client, &d);
	expect_err(err, EO_ETCD_OK, &d);

	/* With the learner listed first, member calls skip to the voter. */
	cba = client_for(b_first, 2, 3000);
	err = eo_etcd_member_list(cba, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_string_equal(d.endpoint, e->endpoint);
	assert_true(eo_etcd_client_endpoint_is_learner(cba, 0));
	assert_false(eo_etcd_client_endpoint_is_learner(cba, 1));
	eo_etcd_members_clear(&ms);

	/* Promote, retrying while the learner catches up. */
	RETRY_WHILE(err, EO_ETCD_LEARNER_NOT_READY, 30000, 200,
		    eo_etcd_member_promote(cba, e->b_id, &ms, &d));
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 2);
	for (size_t i = 0; i < ms.n; i++)
		assert_false(ms.v[i].is_learner);
	eo_etcd_members_clear(&ms);
	/* The promote response refreshed the learner mark. */
	assert_false(eo_etcd_client_endpoint_is_learner(cba, 0));

	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 2);
	m = eo_etcd_members_find(&ms, e->b_id);
	assert_non_null(m);
	assert_false(m->is_learner);
	assert_string_equal(m->name, "b");
	assert_int_equal(m->n_client_urls, 1);
	assert_string_equal(m->client_urls[0], e->b_client);
	eo_etcd_members_clear(&ms);

	/* The client that only knew B as a learner re-checks and uses it. */
	until = itest_mono_ms() + 10000;
	do {
		err = eo_etcd_member_list(cb, &ms, &d);
		eo_etcd_members_clear(&ms);
		if (err == EO_ETCD_OK)
			break;
		itest_sleep_ms(200);
	} while (itest_mono_ms() < until);
	expect_err(err, EO_ETCD_OK, &d);
	assert_false(eo_etcd_client_endpoint_is_learner(cb, 0));
	err = eo_etcd_status(c, e->b_client, &st, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_false(st.is_learner);
	/*
	 * What the operator relies on to confirm a member list with the leader (controller.c,
	 * confirm_leader), on every version (3.4's gateway included): a list answered by B
	 * carries B's member ID in its header and names the endpoint that answered; B's Status
	 * names the leader; a list read at the leader's client URL carries the leader's ID.
	 */
	err = eo_etcd_member_list(cb, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(ms.responder_id == e->b_id);
	assert_string_equal(d.endpoint, e->b_client);
	assert_true(st.member_id == e->b_id);
	assert_true(st.leader == e->a_id || st.leader == e->b_id);
	eo_etcd_members_clear(&ms);
	err = eo_etcd_member_list(st.leader == e->a_id ? c : cb, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(ms.responder_id == st.leader);
	eo_etcd_members_clear(&ms);
	eo_etcd_status_clear(&st);
	err = eo_etcd_health(cb, e->b_client, &d);
	expect_err(err, EO_ETCD_OK, &d);

	eo_etcd_member_clear(&added);
	eo_etcd_member_clear(&extra);
	eo_etcd_client_free(cba);
	eo_etcd_client_free(cb);
	eo_etcd_client_free(c);
}

/*
 * Lease grant and revoke change no key, and a grant-revoke pair makes every member's
 * DbSizeInUse current after a compaction (before it, on an idle cluster, followers and
 * every 3.4 member keep the figure from before the compaction).
 */
static void test_backend_commit(void **state)
{
	struct env *e = *state;
	const char *eps[] = {e->endpoint, e->b_client};
	const char *urls[] = {e->endpoint, e->b_client};
	eo_etcd_client *c = client_for(eps, 2, 10000);
	size_t vlen = 256 * 1024;
	char *v = malloc(vlen);
	struct eo_etcd_detail d;
	int64_t rev = 0, rev2 = 0, id = 0;
	eo_etcd_err err;

	assert_non_null(v);
	for (int i = 0; i < 16; i++) {
		memset(v, 'a' + i, vlen);
		err = eo_etcd_put(c, "bc-churn", 8, v, vlen, &rev, &d);
		expect_err(err, EO_ETCD_OK, &d);
	}
	free(v);
	err = eo_etcd_compact(c, rev, true, &d);
	expect_err(err, EO_ETCD_OK, &d);

	err = eo_etcd_lease_grant(c, 5, &id, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(id > 0);
	err = eo_etcd_lease_revoke(c, id, &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_lease_revoke(c, id, &d); /* idempotent */
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_lease_revoke(c, 0, &d);
	expect_err(err, EO_ETCD_INVALID, &d);
	err = eo_etcd_revision(c, &rev2, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(rev2, rev); /* no key changed */

	err = eo_etcd_backend_commit(c, 200, &d);
	expect_err(err, EO_ETCD_OK, &d);
	for (size_t i = 0; i < 2; i++) {
		struct eo_etcd_status st = {0};

		err = eo_etcd_status(c, urls[i], &st, &d);
		expect_err(err, EO_ETCD_OK, &d);
		print_message("%s: DbSize %" PRId64 ", DbSizeInUse %" PRId64 "\n", urls[i],
			      st.db_size, st.db_size_in_use);
		/* 15 of the 16 values (3.75 MiB) were compacted away on every member */
		assert_true(st.db_size - st.db_size_in_use > 3 * 1024 * 1024);
		eo_etcd_status_clear(&st);
	}
	eo_etcd_client_free(c);
}

/* ---- shrinking ----------------------------------------------------------- */

static void test_remove_member(void **state)
{
	struct env *e = *state;
	const char *eps[] = {e->endpoint, e->b_client};
	eo_etcd_client *c = client_for(eps, 2, 3000);
	char c_peer[64];
	const char *c_peers[] = {c_peer};
	struct eo_etcd_member added = {0};
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	eo_etcd_err err;

	assert_true(e->b_id != 0);
	err = eo_etcd_member_promote(c, e->a_id, NULL, &d);
	expect_err(err, EO_ETCD_NOT_LEARNER, &d);

	/* A voter that never starts: with two of three up the cluster keeps
	 * its quorum, and a member that never started may be removed at once.
	 * Voter changes wait until the members have been connected for etcd's
	 * health interval (5 s); before that they are "unhealthy cluster",
	 * which an operator requeues, as does this test. */
	snprintf(c_peer, sizeof(c_peer), "http://127.0.0.1:%d", itest_free_port());
	RETRY_WHILE(err, EO_ETCD_UNHEALTHY_CLUSTER, 20000, 250,
		    eo_etcd_member_add(c, c_peers, 1, false, &added, &ms, &d));
	expect_err(err, EO_ETCD_OK, &d);
	assert_false(added.is_learner);
	assert_int_equal(ms.n, 3);
	eo_etcd_members_clear(&ms);
	RETRY_WHILE(err, EO_ETCD_UNHEALTHY_CLUSTER, 20000, 250,
		    eo_etcd_member_remove(c, added.id, NULL, &d));
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_member_clear(&added);

	/* etcd refuses to remove a voter while the others have been connected
	 * for less than its health interval (5 s): "unhealthy cluster". An
	 * operator requeues on that; so does this test. */
	RETRY_WHILE(err, EO_ETCD_UNHEALTHY_CLUSTER, 20000, 250,
		    eo_etcd_member_remove(c, e->b_id, &ms, &d));
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 1);
	assert_true(ms.v[0].id == e->a_id);
	eo_etcd_members_clear(&ms);

	err = eo_etcd_member_remove(c, e->b_id, NULL, &d);
	expect_err(err, EO_ETCD_NOTFOUND, &d);
	assert_int_equal(d.grpc_code, 5);
	assert_int_equal(d.http_status, 404);
	err = eo_etcd_member_promote(c, e->b_id, NULL, &d);
	expect_err(err, EO_ETCD_NOTFOUND, &d);

	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 1);
	eo_etcd_members_clear(&ms);

	/* A removed member shuts itself down. */
	stop_b(e, 10000);
	eo_etcd_client_free(c);
}

/* ---- failover ------------------------------------------------------------ */

static void test_failover(void **state)
{
	struct env *e = *state;
	char hung[64];
	int hport = 0, hfd = hung_listener(&hport);
	/* b_client: the removed (stopped) member, connection refused. */
	const char *dead_first[] = {e->b_client, e->endpoint};
	const char *hung_first[] = {hung, e->endpoint};
	eo_etcd_client *c = NULL;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	int64_t t0;
	eo_etcd_err err;

	assert_true(hfd >= 0);
	snprintf(hung, sizeof(hung), "http://127.0.0.1:%d", hport);

	/* Stopped endpoint: refused at once, the next one answers. */
	c = client_for(dead_first, 2, 1500);
	t0 = itest_mono_ms();
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(itest_mono_ms() - t0 < 1500);
	assert_string_equal(d.endpoint, e->endpoint);
	eo_etcd_members_clear(&ms);
	/* Writes fail over too: nothing reached the dead endpoint. */
	err = eo_etcd_put(c, "itest/failover", 14, "1", 1, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_client_free(c);

	/* Hung endpoint: a read gives up on it after the timeout and moves on. */
	c = client_for(hung_first, 2, 1500);
	t0 = itest_mono_ms();
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(itest_mono_ms() - t0 < 1500 + 1500);
	assert_string_equal(d.endpoint, e->endpoint);
	eo_etcd_members_clear(&ms);
	/* The hung endpoint is remembered as failed: the next call is quick. */
	t0 = itest_mono_ms();
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(itest_mono_ms() - t0 < 1500); /* did not wait for the hung one */
	eo_etcd_members_clear(&ms);
	eo_etcd_client_free(c);

	/* A write whose request may have reached a hung server is not resent
	 * elsewhere: the caller gets TIMEOUT and must look before retrying. */
	c = client_for(hung_first, 2, 1000);
	t0 = itest_mono_ms();
	err = eo_etcd_put(c, "itest/hung", 10, "1", 1, NULL, &d);
	expect_err(err, EO_ETCD_TIMEOUT, &d);
	assert_true(itest_mono_ms() - t0 < 2500);
	assert_int_equal(d.http_status, 0);
	eo_etcd_client_free(c);

	close(hfd);
}

/* ---- TLS ------------------------------------------------------------------- */

/* The test PKI's files in EO_ITEST_TLS_DIR (run.sh): CA, server and client pairs, another CA. */
struct tls_files {
	char ca[512], crt[512], key[512], ccrt[512], ckey[512], other[512];
};

static void tls_files(struct tls_files *f)
{
	const char *dir = getenv("EO_ITEST_TLS_DIR");

	if (dir == NULL || dir[0] == '\0')
		fail_msg(
		    "EO_ITEST_TLS_DIR is not set; run this test through test/integration/run.sh");
	snprintf(f->ca, sizeof(f->ca), "%s/ca.crt", dir);
	snprintf(f->crt, sizeof(f->crt), "%s/server.crt", dir);
	snprintf(f->key, sizeof(f->key), "%s/server.key", dir);
	snprintf(f->ccrt, sizeof(f->ccrt), "%s/client.crt", dir);
	snprintf(f->ckey, sizeof(f->ckey), "%s/client.key", dir);
	snprintf(f->other, sizeof(f->other), "%s/other-ca.crt", dir);
}

/*
 * Starts member name alone in a new cluster, its clients served on url (set by the caller),
 * its peers on a free port; extra: NULL-terminated flags after those. Returns the pid, or -1.
 */
static pid_t spawn_alone(const struct env *e, const char *name, const char *url,
			 const char *const *extra)
{
	char peer[64], initial[96];
	const char *args[40] = {
	    "--listen-client-urls", url,     "--advertise-client-urls",	      url,
	    "--listen-peer-urls",   peer,    "--initial-advertise-peer-urls", peer,
	    "--initial-cluster",    initial, "--initial-cluster-state=new"};
	size_t n = 11;

	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", itest_free_port());
	snprintf(initial, sizeof(initial), "%s=%s", name, peer);
	for (size_t i = 0; extra[i] != NULL && n < 39; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	return spawn_etcd(e, name, args);
}

/*
 * Starts member name alone in a new cluster, its clients served over TLS on a free port
 * (url, 64 bytes, receives its address) with client certificates required. Returns the pid.
 */
static pid_t spawn_tls_member(const struct env *e, const char *name, const struct tls_files *f,
			      char *url)
{
	const char *tls[] = {"--cert-file",	  f->crt, "--key-file",		f->key,
			     "--trusted-ca-file", f->ca,  "--client-cert-auth", NULL};

	snprintf(url, 64, "https://127.0.0.1:%d", itest_free_port());
	return spawn_alone(e, name, url, tls);
}

/* Reads a small file into memory; caller frees. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;

	if (f == NULL)
		return NULL;
	buf = malloc(65536);
	if (buf != NULL)
		*len = fread(buf, 1, 65536, f);
	fclose(f);
	return buf;
}

static void test_tls(void **state)
{
	struct env *e = *state;
	struct tls_files f;
	const char *ca = f.ca, *ccrt = f.ccrt, *ckey = f.ckey, *other = f.other;
	char url[64];
	const char *eps[] = {url};
	struct eo_etcd_config cfg = {.endpoints = eps, .n_endpoints = 1, .timeout_ms = 3000};
	eo_etcd_client *c = NULL;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_status st = {0};
	struct eo_etcd_kv kv = {0};
	struct eo_etcd_detail d;
	char *ca_pem = NULL, *crt_pem = NULL, *key_pem = NULL;
	size_t ca_len = 0, crt_len = 0, key_len = 0;
	int64_t until, t0;
	eo_etcd_err err;

	tls_files(&f);
	e->t_pid = spawn_tls_member(e, "t", &f, url);
	assert_true(e->t_pid > 0);

	/* CA, certificate and key as files. */
	cfg.ca_file = ca;
	cfg.cert_file = ccrt;
	cfg.key_file = ckey;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	until = itest_mono_ms() + 20000;
	do {
		eo_etcd_status_clear(&st);
		err = eo_etcd_status(c, url, &st, &d);
		if (err == EO_ETCD_OK && st.leader != 0)
			break;
		itest_sleep_ms(100);
	} while (itest_mono_ms() < until);
	expect_err(err, EO_ETCD_OK, &d);
	assert_string_equal(st.version, e->version);
	eo_etcd_status_clear(&st);
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 1);
	assert_string_equal(ms.v[0].client_urls[0], url);
	eo_etcd_members_clear(&ms);
	err = eo_etcd_put(c, "tls/k", 5, "v", 1, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_client_free(c);
	c = NULL;

	/* The same from memory. */
	ca_pem = slurp(ca, &ca_len);
	crt_pem = slurp(ccrt, &crt_len);
	key_pem = slurp(ckey, &key_len);
	assert_non_null(ca_pem);
	assert_non_null(crt_pem);
	assert_non_null(key_pem);
	cfg = (struct eo_etcd_config){.endpoints = eps,
				      .n_endpoints = 1,
				      .timeout_ms = 3000,
				      .ca_pem = ca_pem,
				      .ca_pem_len = ca_len,
				      .cert_pem = crt_pem,
				      .cert_pem_len = crt_len,
				      .key_pem = key_pem,
				      .key_pem_len = key_len};
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	/* The client copied them. */
	memset(key_pem, 0, key_len);
	free(key_pem);
	key_pem = NULL;
	err = eo_etcd_get(c, "tls/k", 5, &kv, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_string_equal((char *)kv.value, "v");
	eo_etcd_kv_clear(&kv);
	err = eo_etcd_health(c, url, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_client_free(c);
	c = NULL;

	/*
	 * No client certificate: refused, quickly, and as a TLS failure (with TLS 1.3 the
	 * refusal is an alert read after the handshake; the client classes it as transport).
	 */
	cfg.cert_pem = NULL;
	cfg.key_pem = NULL;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	t0 = itest_mono_ms();
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_TRANSPORT, &d);
	assert_true(itest_mono_ms() - t0 < 3000);
	eo_etcd_client_free(c);
	c = NULL;

	/* A server certificate from another CA is not trusted. */
	cfg = (struct eo_etcd_config){.endpoints = eps,
				      .n_endpoints = 1,
				      .timeout_ms = 3000,
				      .ca_file = other,
				      .cert_file = ccrt,
				      .key_file = ckey};
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	err = eo_etcd_status(c, url, &st, &d);
	expect_err(err, EO_ETCD_TRANSPORT, &d);
	assert_int_equal(d.curl_code, CURLE_PEER_FAILED_VERIFICATION);
	eo_etcd_client_free(c);

	free(ca_pem);
	free(crt_pem);
	reap(&e->t_pid, 0);
}

/*
 * Authentication over mTLS (the operator's setup): root user and role, auth enable, token
 * authentication done by the client itself, re-authentication after a bad token, a wrong
 * password refused as such, and the calls the operator makes working with the token.
 */
static void test_auth(void **state)
{
	struct env *e = *state;
	struct tls_files f;
	const char *ca = f.ca, *crt = f.crt, *key = f.key, *ccrt = f.ccrt, *ckey = f.ckey;
	char url[64], fake_peer[64];
	const char *eps[] = {url};
	const char *fake[] = {fake_peer};
	struct eo_etcd_config cfg = {0};
	eo_etcd_client *c = NULL;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_member added = {0};
	struct eo_etcd_status st = {0};
	struct eo_etcd_kv kv = {0};
	struct eo_etcd_detail d;
	bool enabled = true, v34 = strncmp(e->version, "3.4.", 4) == 0;
	int64_t until;
	eo_etcd_err err;

	tls_files(&f);
	snprintf(fake_peer, sizeof(fake_peer), "http://127.0.0.1:%d", itest_free_port());
	e->u_pid = spawn_tls_member(e, "u", &f, url);
	assert_true(e->u_pid > 0);

	cfg = (struct eo_etcd_config){.endpoints = eps,
				      .n_endpoints = 1,
				      .timeout_ms = 5000,
				      .ca_file = ca,
				      .cert_file = ccrt,
				      .key_file = ckey,
				      .password = "s3cret"};
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	until = itest_mono_ms() + 20000;
	do {
		eo_etcd_status_clear(&st);
		err = eo_etcd_status(c, url, &st, &d);
		if (err == EO_ETCD_OK && st.leader != 0)
			break;
		itest_sleep_ms(100);
	} while (itest_mono_ms() < until);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_status_clear(&st);

	/* Auth off: nothing is authenticated, AuthStatus says off (3.5+). */
	err = eo_etcd_auth_status(c, &enabled, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_false(enabled);
	err = eo_etcd_put(c, "auth/k", 6, "v", 1, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_null(eo_etcd_client_token(c));
	err = eo_etcd_authenticate(c, NULL, &d);
	assert_int_not_equal(err, EO_ETCD_OK);
	assert_non_null(strstr(d.message, "authentication is not enabled"));

	/* Provision root and enable; a second run is a no-op that succeeds. */
	err = eo_etcd_auth_enable_root(c, "s3cret", &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_auth_enable_root(c, "s3cret", &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_non_null(eo_etcd_client_token(c));
	err = eo_etcd_auth_status(c, &enabled, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(enabled);
	/* Every call the operator makes works with the token. */
	err = eo_etcd_member_list(c, &ms, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(ms.n, 1);
	eo_etcd_members_clear(&ms);
	err = eo_etcd_member_add(c, fake, 1, true, &added, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_member_remove(c, added.id, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_member_clear(&added);
	err = eo_etcd_status(c, url, &st, &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_status_clear(&st);
	err = eo_etcd_get(c, "auth/k", 6, &kv, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_string_equal((char *)kv.value, "v");
	eo_etcd_kv_clear(&kv);
	eo_etcd_client_free(c);
	c = NULL;

	/*
	 * A client certificate with a CommonName (the server's, CN=etcd): once auth is on, the
	 * gateway refuses it whatever the token (the operator's certificate must have none).
	 */
	if (!v34) {
		cfg.cert_file = crt;
		cfg.key_file = key;
		assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
		err = eo_etcd_member_list(c, &ms, &d);
		assert_int_not_equal(err, EO_ETCD_OK);
		assert_int_equal(d.http_status, 400);
		eo_etcd_members_clear(&ms);
		eo_etcd_client_free(c);
		c = NULL;
		cfg.cert_file = ccrt;
		cfg.key_file = ckey;
	}

	/* Without credentials: refused. */
	cfg.password = NULL;
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	err = eo_etcd_put(c, "auth/k", 6, "w", 1, NULL, &d);
	if (err != EO_ETCD_AUTH && !(v34 && err == EO_ETCD_UNAVAILABLE))
		expect_err(err, EO_ETCD_AUTH, &d);
	err = eo_etcd_member_add(c, fake, 1, true, &added, NULL, &d);
	assert_int_not_equal(err, EO_ETCD_OK);
	eo_etcd_member_clear(&added);
	/* Without credentials the refusal itself tells that auth is on. */
	enabled = false;
	err = eo_etcd_auth_status(c, &enabled, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(enabled);
	eo_etcd_client_free(c);
	c = NULL;

	/* A stale token is replaced: the client authenticates again by itself. */
	cfg.password = "s3cret";
	cfg.auth_token = "stale.1";
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	err = eo_etcd_put(c, "auth/k", 6, "x", 1, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_non_null(eo_etcd_client_token(c));
	assert_string_not_equal(eo_etcd_client_token(c), "stale.1");
	eo_etcd_client_free(c);
	c = NULL;

	/* A wrong password is told as such, not as an unreachable member. */
	cfg.auth_token = NULL;
	cfg.password = "wrong";
	assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	err = eo_etcd_put(c, "auth/k", 6, "y", 1, NULL, &d);
	expect_err(err, EO_ETCD_AUTH, &d);
	assert_non_null(strstr(d.message, "authentication failed"));
	err = eo_etcd_authenticate(c, url, &d);
	expect_err(err, EO_ETCD_AUTH, &d);
	assert_null(eo_etcd_client_token(c));
	eo_etcd_client_free(c);

	reap(&e->u_pid, 0);
}

/*
 * NOSPACE and its recovery, as the operator does it (controller/defrag.c): a member of its
 * own cluster with an 8 MiB quota is filled by overwriting one key until etcd refuses the
 * write with NOSPACE; the alarm is listed; a compaction to the current revision and a
 * Defragment bring DbSize down; the alarm is disarmed and writes are accepted again.
 */
static void test_nospace_recovery(void **state)
{
	struct env *e = *state;
	char url[64];
	const char *eps[] = {url};
	const char *quota[] = {"--quota-backend-bytes=8388608", NULL};
	eo_etcd_client *c = NULL;
	struct eo_etcd_alarms al = {0};
	struct eo_etcd_status before = {0}, after = {0};
	struct eo_etcd_detail d;
	size_t vlen = 256 * 1024;
	char *value = malloc(vlen);
	int64_t rev = 0, until;
	eo_etcd_err err = EO_ETCD_OK;
	int puts = 0;

	assert_non_null(value);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", itest_free_port());
	e->q_pid = spawn_alone(e, "q", url, quota);
	assert_true(e->q_pid > 0);
	c = client_for(eps, 1, 10000);
	until = itest_mono_ms() + 20000;
	while (eo_etcd_status(c, url, &before, &d) != EO_ETCD_OK && itest_mono_ms() < until) {
		eo_etcd_status_clear(&before);
		itest_sleep_ms(100);
	}
	eo_etcd_status_clear(&before);

	/* Fill: the same key over and over, so that compaction frees everything. */
	for (puts = 0; puts < 400; puts++) {
		memset(value, 'a' + puts % 26, vlen);
		err = eo_etcd_put(c, "fill", 4, value, vlen, NULL, &d);
		if (err != EO_ETCD_OK)
			break;
	}
	expect_err(err, EO_ETCD_NOSPACE, &d);
	err = eo_etcd_alarm_list(c, &al, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(al.n, 1);
	assert_int_equal(al.v[0].type, EO_ETCD_ALARM_NOSPACE);
	assert_true(al.v[0].member_id != 0);

	err = eo_etcd_status(c, url, &before, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(before.n_errors > 0); /* the alarm shows in the status too */
	err = eo_etcd_revision(c, &rev, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_true(rev > puts / 2);
	err = eo_etcd_compact(c, rev, true, &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_compact(c, rev, true, &d); /* twice: etcd says so */
	expect_err(err, EO_ETCD_COMPACTED, &d);
	err = eo_etcd_defragment(c, url, &d);
	expect_err(err, EO_ETCD_OK, &d);
	err = eo_etcd_status(c, url, &after, &d);
	expect_err(err, EO_ETCD_OK, &d);
	print_message("NOSPACE after %d puts; DbSize %" PRId64 " -> %" PRId64 "\n", puts,
		      before.db_size, after.db_size);
	assert_true(after.db_size < before.db_size / 2);
	assert_true(after.db_size < 8388608);

	err = eo_etcd_alarm_disarm(c, &al.v[0], &d);
	expect_err(err, EO_ETCD_OK, &d);
	eo_etcd_alarms_clear(&al);
	err = eo_etcd_alarm_list(c, &al, &d);
	expect_err(err, EO_ETCD_OK, &d);
	assert_int_equal(al.n, 0);
	err = eo_etcd_put(c, "after", 5, "ok", 2, NULL, &d);
	expect_err(err, EO_ETCD_OK, &d);

	eo_etcd_alarms_clear(&al);
	eo_etcd_status_clear(&before);
	eo_etcd_status_clear(&after);
	eo_etcd_client_free(c);
	free(value);
	reap(&e->q_pid, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_member),
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_add_learner_and_promote),
	    cmocka_unit_test(test_backend_commit),
	    cmocka_unit_test(test_remove_member),
	    cmocka_unit_test(test_failover),
	    cmocka_unit_test(test_tls),
	    cmocka_unit_test(test_auth),
	    cmocka_unit_test(test_nospace_recovery),
	};

	return cmocka_run_group_tests_name("etcd_client", tests, setup, teardown);
}
