/*
 * Integration: `etcd-operator archive-agent` (agent/archive.h) against a real etcd, run in
 * this process through eo_agent_main().
 *
 *   1. a first run takes a base snapshot from the leader and lists it in the manifest;
 *   2. a second run resumes right after the base (no second base), archives every later
 *      revision (new keys and new versions of old ones) into several segments, and the
 *      manifest's newest window reaches the last revision; the segments replay, in order
 *      and without a hole, from the state etcd had at the base to the state it has at the
 *      end (deletes and txns are replayed by test_archive_watch);
 *   3. `archive-replay` to a revision in the middle of the window: a snapshot file at exactly
 *      that revision whose HashKV (etcd's hash of the key history, the check etcd makes
 *      between members) equals the source's HashKV at that revision, and which etcdutl
 *      reports at that revision; a revision outside the window is refused;
 *   4. history compacted past the archive's end: the next run records a gap after the last
 *      archived revision and takes a new base at or above the compaction;
 *   5. --status-addr: while it runs, GET /status answers the document the operator parses
 *      (plan/archive.h eo_aplan_parse_status) with a window whose end reaches a revision
 *      written during the run once its segment closed, and anything else is 404.
 *
 * Run through test/integration/run.sh (EO_ITEST_ENDPOINT, EO_ITEST_WORKDIR).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cli.h"
#include "archive/manifest.h"
#include "archive/segment.h"
#include "core/sleep.h"
#include "etcd/client.h"
#include "plan/archive.h"

static const char *endpoint, *etcd_bin, *etcdutl, *workdir;
static char dir[600];
static eo_etcd_client *cli;

static void put(const char *k, const char *v)
{
	assert_int_equal(eo_etcd_put(cli, k, strlen(k), v, strlen(v), NULL, NULL), EO_ETCD_OK);
}

static int64_t revision(void)
{
	int64_t rev = 0;

	assert_int_equal(eo_etcd_revision(cli, &rev, NULL), EO_ETCD_OK);
	return rev;
}

static int agent(const char *until, const char *max_s)
{
	const char *argv[16];
	int argc = 0;

	argv[argc++] = "etcd-operator";
	argv[argc++] = "archive-agent";
	argv[argc++] = "--endpoint";
	argv[argc++] = endpoint;
	argv[argc++] = "--dir";
	argv[argc++] = dir;
	argv[argc++] = "--segment-bytes";
	argv[argc++] = "4096";
	if (until) {
		argv[argc++] = "--until-revision";
		argv[argc++] = until;
	}
	if (max_s) {
		argv[argc++] = "--max-seconds";
		argv[argc++] = max_s;
	}
	argv[argc] = NULL;
	return eo_agent_main(argc, (char **)argv);
}

static void load(struct eo_archive_manifest *m)
{
	char path[700], err[256], *buf;
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	assert_true(len > 0);
	rewind(f);
	buf = malloc((size_t)len);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	if (eo_archive_manifest_parse(buf, (size_t)len, m, err, sizeof(err)) != 0)
		fail_msg("manifest: %s", err);
	free(buf);
}

/* The replayed state: key -> value, deleted keys dropped (small: a few dozen keys). */
struct kv {
	char key[64], value[64];
};
static struct kv state[128];
static size_t n_state;

static void set_key(const unsigned char *k, size_t kl, const unsigned char *v, size_t vl)
{
	size_t i;

	assert_true(kl < 64 && vl < 64);
	for (i = 0; i < n_state; i++)
		if (strlen(state[i].key) == kl && memcmp(state[i].key, k, kl) == 0)
			break;
	if (v == NULL) {
		if (i < n_state)
			state[i] = state[--n_state];
		return;
	}
	if (i == n_state) {
		assert_true(n_state < 128);
		n_state++;
	}
	memcpy(state[i].key, k, kl);
	state[i].key[kl] = '\0';
	memcpy(state[i].value, v, vl);
	state[i].value[vl] = '\0';
}

static int64_t prev_rev;

static int on_rev(void *ud, const struct eo_archive_rev *rev, char *err, size_t cap)
{
	(void)ud, (void)err, (void)cap;
	assert_int_equal(rev->revision, prev_rev + 1);
	prev_rev = rev->revision;
	for (size_t i = 0; i < rev->n; i++) {
		const struct eo_archive_event *e = &rev->events[i];

		set_key(e->key, e->key_len, e->type == EO_ARCHIVE_PUT ? e->value : NULL,
			e->value_len);
	}
	return 0;
}

/* etcd's keyspace now (only the keys these tests write: prefix "a/"), as state[]. */
static void etcd_state(void)
{
	struct eo_etcd_range_opts ro = {.prefix = true};
	struct eo_etcd_range r = {0};

	n_state = 0;
	assert_int_equal(eo_etcd_range(cli, "a/", 2, &ro, &r, NULL), EO_ETCD_OK);
	for (size_t i = 0; i < r.n; i++)
		set_key(r.kvs[i].key, r.kvs[i].key_len, r.kvs[i].value, r.kvs[i].value_len);
	eo_etcd_range_clear(&r);
}

static int kvcmp(const void *a, const void *b)
{
	return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static void test_base_resume_replay(void **state_)
{
	struct eo_archive_manifest m = {0};
	struct eo_archive_window w;
	struct kv want[128], at_base[128];
	size_t n_want, n_base;
	const char *paths[256];
	char pathbuf[256][800], until[32], err[256];
	int64_t base, last, final;

	(void)state_;
	for (int i = 0; i < 20; i++) {
		char k[16];

		snprintf(k, sizeof(k), "a/%02d", i);
		put(k, "before the base");
	}
	etcd_state();
	n_base = n_state;
	memcpy(at_base, state, sizeof(state));
	/* 1: the base, no revision after it yet. */
	assert_int_equal(agent(NULL, "2"), 0);
	load(&m);
	assert_int_equal(m.n_bases, 1);
	assert_int_equal(m.n_segs, 0);
	base = m.bases[0].revision;
	assert_true(base >= revision() - 1);
	eo_archive_manifest_clear(&m);

	/* 2: more revisions, archived from right after the base. */
	for (int i = 0; i < 200; i++) {
		char k[16], v[64];

		snprintf(k, sizeof(k), "a/%02d", i % 40);
		snprintf(v, sizeof(v), "value %d, a few bytes to fill segments", i);
		put(k, v);
	}
	put("a/last", "the end");
	final = revision();
	snprintf(until, sizeof(until), "%" PRId64, final);
	assert_int_equal(agent(until, "20"), 0);
	load(&m);
	assert_int_equal(m.n_bases, 1); /* resumed: no second base */
	assert_true(m.n_segs >= 2);
	assert_true(eo_archive_window_latest(&m, &w));
	assert_int_equal(w.from_revision, base);
	assert_int_equal(w.to_revision, final);
	assert_true(m.n_segs <= 256);
	for (size_t i = 0; i < m.n_segs; i++) {
		snprintf(pathbuf[i], sizeof(pathbuf[i]), "%s/segments/%s", dir, m.segs[i].name);
		paths[i] = pathbuf[i];
	}

	/* The replay from the base's state reaches etcd's state at the final revision. */
	n_state = n_base;
	memcpy(state, at_base, sizeof(state));
	prev_rev = base;
	if (eo_archive_replay(paths, m.n_segs, base, true, NULL, on_rev, NULL, &last, err,
			      sizeof(err)) != 0)
		fail_msg("replay: %s", err);
	assert_int_equal(last, final);
	n_want = n_state;
	memcpy(want, state, sizeof(state));
	etcd_state();
	assert_int_equal(n_state, n_want);
	qsort(want, n_want, sizeof(want[0]), kvcmp);
	qsort(state, n_state, sizeof(state[0]), kvcmp);
	for (size_t i = 0; i < n_state; i++) {
		assert_string_equal(want[i].key, state[i].key);
		assert_string_equal(want[i].value, state[i].value);
	}
	eo_archive_manifest_clear(&m);
}

/* Runs archive-replay; its result line (stdout) is parsed into *out when it succeeds. */
static int replay(const char *target, json_t **out)
{
	char outfile[700], work[700], result[700];
	const char *argv[] = {"etcd-operator",
			      "archive-replay",
			      "--archive-dir",
			      dir,
			      "--out",
			      outfile,
			      "--work-dir",
			      work,
			      "--etcd",
			      etcd_bin,
			      "--etcdutl",
			      etcdutl,
			      "--target-revision",
			      target,
			      NULL};
	int fd, saved, rc;
	json_error_t je;

	snprintf(outfile, sizeof(outfile), "%s/point.db", workdir);
	snprintf(work, sizeof(work), "%s/replay", workdir);
	snprintf(result, sizeof(result), "%s/replay-result", workdir);
	mkdir(work, 0700);
	fflush(stdout);
	fd = open(result, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	saved = dup(1);
	dup2(fd, 1);
	close(fd);
	rc = eo_agent_main(14, (char **)argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	*out = rc == 0 ? json_load_file(result, 0, &je) : NULL;
	if (rc == 0 && *out == NULL)
		fail_msg("no result line: %s", je.text);
	return rc;
}

static void test_replay_to_revision(void **state_)
{
	struct eo_archive_manifest m = {0};
	struct eo_archive_window w;
	char target[32];
	json_t *res = NULL;
	uint32_t want = 0;
	int64_t mid;

	(void)state_;
	load(&m);
	assert_true(eo_archive_window_latest(&m, &w));
	eo_archive_manifest_clear(&m);
	mid = w.from_revision + (w.to_revision - w.from_revision) / 2;
	snprintf(target, sizeof(target), "%" PRId64, mid);
	assert_int_equal(replay(target, &res), 0);
	assert_int_equal(json_integer_value(json_object_get(res, "revision")), mid);
	assert_true(json_integer_value(json_object_get(res, "replayed")) > 0);
	if (strncmp(getenv("EO_ITEST_VERSION"), "3.4.", 4) == 0) {
		/* 3.4's gateway has no HashKV: no hash to compare, and none reported. */
		assert_null(json_object_get(res, "hashKV"));
	} else {
		assert_int_equal(eo_etcd_hash_kv(cli, mid, &want, NULL, NULL), EO_ETCD_OK);
		assert_int_equal((uint32_t)json_integer_value(json_object_get(res, "hashKV")),
				 want);
	}
	json_decref(res);

	/* Past the newest archived revision: refused, nothing written. */
	snprintf(target, sizeof(target), "%" PRId64, w.to_revision + 1000);
	assert_int_not_equal(replay(target, &res), 0);
	assert_null(res);
}

/* archive-replay as the seed's restore step (desired/restore.h), into a scratch data dir. */
static int replay_step(const char *target, const char *etcd, const char *data)
{
	char outfile[700], work[700], tlog[700];
	const char *argv[] = {"etcd-operator",
			      "archive-replay",
			      "--archive-dir",
			      dir,
			      "--out",
			      outfile,
			      "--work-dir",
			      work,
			      "--etcd",
			      etcd,
			      "--etcdutl",
			      etcdutl,
			      "--target-revision",
			      target,
			      "--data-dir",
			      data,
			      "--termination-log",
			      tlog,
			      NULL};

	snprintf(outfile, sizeof(outfile), "%s/.restore/snapshot.db", data);
	snprintf(work, sizeof(work), "%s/.restore/replay", data);
	snprintf(tlog, sizeof(tlog), "%s/termination-log", workdir);
	unlink(tlog);
	return eo_agent_main(18, (char **)argv);
}

/* The termination log of the last replay_step, parsed. */
static json_t *termination_log(void)
{
	char tlog[700];

	snprintf(tlog, sizeof(tlog), "%s/termination-log", workdir);
	return json_load_file(tlog, 0, NULL);
}

/*
 * As a restore step: the result goes to the termination log (the operator reads the point
 * from it); a restart of the step after it finished reports it again without replaying (no
 * etcd is started: a missing etcd binary does not matter), and once the data dir holds
 * member/ it does nothing; a target outside the archive leaves its reason.
 */
static void test_replay_restore_step(void **state_)
{
	struct eo_archive_manifest m = {0};
	struct eo_archive_window w;
	char target[32], data[700], member[760];
	json_t *tl;
	int64_t mid;

	(void)state_;
	load(&m);
	assert_true(eo_archive_window_latest(&m, &w));
	eo_archive_manifest_clear(&m);
	mid = w.from_revision + (w.to_revision - w.from_revision) / 2;
	snprintf(target, sizeof(target), "%" PRId64, mid);
	snprintf(data, sizeof(data), "%s/step-data", workdir);
	mkdir(data, 0700);

	assert_int_equal(replay_step(target, etcd_bin, data), 0);
	tl = termination_log();
	assert_non_null(tl);
	assert_int_equal(json_integer_value(json_object_get(tl, "revision")), mid);
	assert_non_null(json_string_value(json_object_get(tl, "time")));
	json_decref(tl);

	/* Restarted after it finished: the same result, no replay (no etcd to start). */
	assert_int_equal(replay_step(target, "/nonexistent/etcd", data), 0);
	tl = termination_log();
	assert_non_null(tl);
	assert_int_equal(json_integer_value(json_object_get(tl, "revision")), mid);
	json_decref(tl);

	/* Another target is not the finished one: replayed again (and fails without etcd). */
	snprintf(target, sizeof(target), "%" PRId64, mid + 1);
	assert_int_not_equal(replay_step(target, "/nonexistent/etcd", data), 0);
	tl = termination_log();
	assert_string_equal(json_string_value(json_object_get(tl, "reason")),
			    "RestoreReplayFailed");
	json_decref(tl);

	/* The data dir rebuilt: nothing to do. */
	snprintf(member, sizeof(member), "%s/member", data);
	assert_int_equal(mkdir(member, 0700), 0);
	assert_int_equal(replay_step(target, "/nonexistent/etcd", data), 0);
	rmdir(member);

	/* Outside the archive: its own reason, for the EtcdCluster's condition. */
	snprintf(target, sizeof(target), "%" PRId64, w.to_revision + 1000);
	assert_int_not_equal(replay_step(target, etcd_bin, data), 0);
	tl = termination_log();
	assert_non_null(tl);
	assert_string_equal(json_string_value(json_object_get(tl, "reason")),
			    "RestoreTargetOutsideArchive");
	json_decref(tl);
}

static void test_compaction_gap(void **state_)
{
	struct eo_archive_manifest m = {0};
	int64_t archived, compact;

	(void)state_;
	load(&m);
	assert_true(m.n_segs > 0);
	archived = m.segs[m.n_segs - 1].last_revision;
	eo_archive_manifest_clear(&m);
	for (int i = 0; i < 5; i++)
		put("a/gap", "written while the archiver was away");
	compact = revision();
	assert_int_equal(eo_etcd_compact(cli, compact, true, NULL), EO_ETCD_OK);

	assert_int_equal(agent(NULL, "3"), 0);
	load(&m);
	assert_int_equal(m.n_bases, 2);
	assert_int_equal(m.n_gaps, 1);
	assert_int_equal(m.gaps[0].after_revision, archived);
	assert_true(m.gaps[0].resumed_revision >= compact);
	assert_int_equal(m.bases[1].revision, m.gaps[0].resumed_revision);
	eo_archive_manifest_clear(&m);
}

/* ---- 5: the status server ------------------------------------------------------------ */

static char status_dir[700], status_addr[32];
static int status_rc = -1;

static void *status_agent(void *ud)
{
	const char *argv[] = {"etcd-operator",
			      "archive-agent",
			      "--endpoint",
			      endpoint,
			      "--dir",
			      status_dir,
			      "--segment-seconds",
			      "1",
			      "--status-addr",
			      status_addr,
			      "--max-seconds",
			      "6",
			      NULL};

	(void)ud;
	status_rc = eo_agent_main(12, (char **)argv);
	return NULL;
}

/* A port the kernel just gave out and took back. */
static int free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

struct got {
	char buf[8192];
	size_t len;
};

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
	struct got *g = ud;
	size_t k = size * n;

	if (g->len + k >= sizeof(g->buf))
		return 0;
	memcpy(g->buf + g->len, p, k);
	g->len += k;
	return k;
}

/* GET path on the status port: the HTTP code (0: no answer), the body in g. */
static long get(int port, const char *path, struct got *g)
{
	char url[128];
	CURL *h = curl_easy_init();
	long code = 0;

	g->len = 0;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, g);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	g->buf[g->len] = '\0';
	return code;
}

static void test_status_served(void **state_)
{
	struct eo_aplan_agent a;
	struct got g;
	pthread_t t;
	char err[256];
	int port = free_port();
	int64_t written;
	long code = 0;

	(void)state_;
	snprintf(status_dir, sizeof(status_dir), "%s/archive-status", workdir);
	snprintf(status_addr, sizeof(status_addr), ":%d", port);
	assert_int_equal(pthread_create(&t, NULL, status_agent, NULL), 0);
	for (int i = 0; i < 50 && code != 200; i++) { /* the base first, then the server */
		eo_sleep_ms(100);
		code = get(port, "/status", &g);
	}
	assert_int_equal(code, 200);
	put("a/status", "one");
	written = revision();
	code = 0;
	for (int i = 0; i < 40; i++) { /* the segment closes after 1 s */
		eo_sleep_ms(100);
		code = get(port, "/status", &g);
		assert_int_equal(code, 200);
		if (eo_aplan_parse_status(g.buf, g.len, &a, err, sizeof(err)) != 0)
			fail_msg("/status: %s: %s", err, g.buf);
		if (a.has_window && a.to_revision >= written)
			break;
	}
	assert_true(a.has_window);
	assert_true(a.to_revision >= written);
	assert_true(a.from_revision <= a.to_revision);
	assert_true(a.last_upload_ms > 0);
	assert_string_equal(a.error, "");
	assert_int_equal(get(port, "/other", &g), 404);
	pthread_join(t, NULL);
	assert_int_equal(status_rc, 0);
}

int main(void)
{
	struct eo_etcd_config cfg = {0};
	const char *work = getenv("EO_ITEST_WORKDIR");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_base_resume_replay),	cmocka_unit_test(test_replay_to_revision),
	    cmocka_unit_test(test_replay_restore_step), cmocka_unit_test(test_compaction_gap),
	    cmocka_unit_test(test_status_served),
	};
	int rc;

	static char utl[600];

	endpoint = getenv("EO_ITEST_ENDPOINT");
	etcd_bin = getenv("EO_ITEST_ETCD");
	workdir = work;
	if (endpoint == NULL || work == NULL || etcd_bin == NULL || !getenv("EO_ITEST_VERSION") ||
	    getenv("EO_ITEST_ETCDUTL_LATEST") == NULL) {
		fprintf(stderr, "run through test/integration/run.sh\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/archive", work);
	/* This version's own etcdutl (3.4 has none: then the newest one). */
	snprintf(utl, sizeof(utl), "%s", etcd_bin);
	snprintf(strrchr(utl, '/') + 1, 16, "etcdutl");
	etcdutl = access(utl, X_OK) == 0 ? utl : getenv("EO_ITEST_ETCDUTL_LATEST");
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cfg.endpoints = &endpoint;
	cfg.n_endpoints = 1;
	if (eo_etcd_client_new(&cfg, &cli, NULL) != EO_ETCD_OK)
		return 2;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	eo_etcd_client_free(cli);
	curl_global_cleanup();
	return rc;
}
