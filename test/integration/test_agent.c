/*
 * Integration tests of the snapshot agent (src/agent) against a real etcd
 * (started by test/integration/run.sh) and a real MinIO on loopback (started
 * here from EO_ITEST_MINIO in a scratch directory).
 *
 * The agent subcommands run in this process through eo_agent_main(), so the
 * valgrind pass of run.sh covers them; etcdutl and etcd run as children.
 *
 * Environment (run.sh): EO_ITEST_ETCD, EO_ITEST_VERSION, EO_ITEST_ENDPOINT,
 * EO_ITEST_WORKDIR, EO_ITEST_MINIO (the minio binary), EO_ITEST_ETCDUTL_LATEST
 * (etcdutl of the newest etcd covered; the etcdutl beside EO_ITEST_ETCD is used
 * as well when there is one).
 *
 * One shared cluster: 1,000 keys written once, then snapshots to a directory
 * and to S3 (single PUT and multipart), the overwrite guard, restores with each
 * etcdutl started as a real member that must serve every key, and a corrupted
 * object refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/cli.h"
#include "snapshot/integrity.h"
#include "snapshot/s3.h"
#include "api/restorefail.h"
#include "etcd/client.h"
#include "support/itest.h"

extern char **environ;

#define NKEYS	  1000
#define VALUE_LEN 6000 /* 1,000 x 6 KB: a ~7 MB database, two 5 MiB parts */
#define AK	  "eo-itest-ak"
#define SK	  "eo-itest-secret-key"
#define BUCKET	  "snaps"

static struct {
	const char *etcd, *version, *endpoint, *workdir, *minio, *etcdutl_latest;
	char etcdutl_own[512];
	char s3[64];
	pid_t minio_pid;
	eo_s3 *client;
} E;

static pid_t spawn_logged(const char *const *argv, const char *logname)
{
	char logpath[600];

	snprintf(logpath, sizeof(logpath), "%s/%s", E.workdir, logname);
	return itest_spawn_logged(argv, logpath);
}

static void stop(pid_t *pid)
{
	int st, i;

	if (*pid <= 0)
		return;
	kill(*pid, SIGTERM);
	for (i = 0; i < 100; i++) {
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

static size_t discard(char *p, size_t s, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return s * n;
}

/* A signed request outside the agent's API (CreateBucket, a foreign object). */
static long raw_s3(const char *method, const char *path)
{
	char url[256];
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	long status = 0;

	snprintf(url, sizeof(url), "http://%s%s", E.s3, path);
	h = curl_slist_append(h,
			      "x-amz-content-sha256: "
			      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
	curl_easy_setopt(c, CURLOPT_USERPWD, AK ":" SK);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

/*
 * PUT of body[n] to path as the agent sends object data over plain HTTP (UNSIGNED-PAYLOAD,
 * a signed x-amz-checksum-crc32 of crc_of[n]), so a test can send a body that differs from
 * the one its checksum was computed on, as a part damaged on the way would. HTTP status.
 */
static long put_with_crc(const char *path, const char *body, const char *crc_of, size_t n)
{
	char url[1600], line[64], crc[EO_S3_CRC32_LEN + 1];
	struct curl_slist *h = NULL;
	CURL *c = curl_easy_init();
	long status = 0;

	assert_int_equal(eo_s3_checksum_crc32(crc_of, n, crc, sizeof(crc)), 0);
	snprintf(url, sizeof(url), "http://%s%s", E.s3, path);
	snprintf(line, sizeof(line), "x-amz-checksum-crc32: %s", crc);
	h = curl_slist_append(h, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	h = curl_slist_append(h, line);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
	curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
	curl_easy_setopt(c, CURLOPT_USERPWD, AK ":" SK);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return status;
}

static eo_etcd_client *etcd_client(const char *endpoint)
{
	const char *eps[1] = {endpoint};
	struct eo_etcd_config cfg = {.endpoints = eps, .n_endpoints = 1, .timeout_ms = 10000};
	struct eo_etcd_detail d;
	eo_etcd_client *c = NULL;

	if (eo_etcd_client_new(&cfg, &c, &d) != EO_ETCD_OK)
		fail_msg("etcd client: %s", d.message);
	return c;
}

static void value_of(int i, char *buf)
{
	int k;

	for (k = 0; k < VALUE_LEN; k++)
		buf[k] = (char)('a' + (i * 7 + k * 13) % 26);
	snprintf(buf, 16, "v%06d-", i);
	buf[8] = '-';
}

static int setup(void **state)
{
	const char *argv[16];
	char dir[600], addr[64], console[64], cmd[700], *val;
	struct eo_s3_config cfg = {0};
	eo_etcd_client *c;
	struct eo_etcd_detail d;
	int i, port;
	long st = 0;

	(void)state;
	E.etcd = itest_need_env("EO_ITEST_ETCD");
	E.version = itest_need_env("EO_ITEST_VERSION");
	E.endpoint = itest_need_env("EO_ITEST_ENDPOINT");
	E.workdir = itest_need_env("EO_ITEST_WORKDIR");
	E.minio = itest_need_env("EO_ITEST_MINIO");
	E.etcdutl_latest = itest_need_env("EO_ITEST_ETCDUTL_LATEST");
	snprintf(E.etcdutl_own, sizeof(E.etcdutl_own), "%s", E.etcd);
	snprintf(strrchr(E.etcdutl_own, '/') + 1, 16, "etcdutl");
	if (access(E.etcdutl_own, X_OK) != 0)
		E.etcdutl_own[0] = '\0';
	curl_global_init(CURL_GLOBAL_DEFAULT);

	/* MinIO on loopback in a scratch directory. */
	port = itest_free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(console, sizeof(console), "127.0.0.1:%d", itest_free_port());
	snprintf(E.s3, sizeof(E.s3), "%s", addr);
	snprintf(dir, sizeof(dir), "%s/minio", E.workdir);
	mkdir(dir, 0700);
	setenv("MINIO_ROOT_USER", AK, 1);
	setenv("MINIO_ROOT_PASSWORD", SK, 1);
	setenv("MINIO_BROWSER", "off", 1);
	argv[0] = E.minio;
	argv[1] = "server";
	argv[2] = "--quiet";
	argv[3] = "--address";
	argv[4] = addr;
	argv[5] = "--console-address";
	argv[6] = console;
	argv[7] = dir;
	argv[8] = NULL;
	E.minio_pid = spawn_logged(argv, "minio.log");
	assert_true(E.minio_pid > 0);
	for (i = 0; i < 300 && st != 200; i++) {
		itest_sleep_ms(100);
		st = raw_s3("PUT", "/" BUCKET);
	}
	if (st != 200)
		fail_msg("MinIO at %s did not come up (last status %ld)", addr, st);

	/* The agent reads its credentials from the environment. */
	setenv("AWS_ACCESS_KEY_ID", AK, 1);
	setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
	snprintf(cmd, sizeof(cmd), "http://%s", addr);
	cfg.endpoint = cmd;
	cfg.bucket = BUCKET;
	cfg.path_style = true;
	cfg.insecure = true; /* the test's MinIO speaks plain HTTP */
	cfg.access_key = AK;
	cfg.secret_key = SK;
	assert_int_equal(eo_s3_new(&cfg, &E.client, cmd, sizeof(cmd)), 0);

	/* 1,000 keys. */
	c = etcd_client(E.endpoint);
	val = malloc(VALUE_LEN);
	assert_non_null(val);
	for (i = 0; i < NKEYS; i++) {
		char key[32];

		snprintf(key, sizeof(key), "/itest/k%04d", i);
		value_of(i, val);
		if (eo_etcd_put(c, key, strlen(key), val, VALUE_LEN, NULL, &d) != EO_ETCD_OK)
			fail_msg("put %s: %s", key, d.message);
	}
	free(val);
	eo_etcd_client_free(c);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	eo_s3_free(E.client);
	stop(&E.minio_pid);
	curl_global_cleanup();
	return 0;
}

/* Runs an agent subcommand in this process; the result line is read from the termination log. */
static int agent(json_t **result, const char *first, ...)
{
	const char *argv[48];
	char termlog[600];
	json_error_t je;
	va_list ap;
	int argc = 0, rc;

	snprintf(termlog, sizeof(termlog), "%s/termination-log", E.workdir);
	unlink(termlog);
	argv[argc++] = "etcd-operator";
	argv[argc++] = first;
	va_start(ap, first);
	while (argc < 44 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc++] = "--termination-log";
	argv[argc++] = termlog;
	argv[argc] = NULL;
	rc = eo_agent_main(argc, (char **)argv);
	if (result) {
		*result = rc == 0 ? json_load_file(termlog, 0, &je) : NULL;
		if (rc == 0 && !*result)
			fail_msg("no result line: %s", je.text);
	}
	return rc;
}

/* The reason a failed restore step left in its termination log (api/restorefail.h). */
static void expect_reason(const char *want, const char *contains)
{
	char termlog[600], text[EO_RESTORE_FAILURE_MAX + 1], msg[EO_RESTORE_MESSAGE_MAX];
	const char *reason = NULL;
	size_t n;
	FILE *f;

	snprintf(termlog, sizeof(termlog), "%s/termination-log", E.workdir);
	f = fopen(termlog, "r");
	if (f == NULL)
		fail_msg("no termination log (want %s)", want);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!eo_restore_failure_parse(text, &reason, msg, sizeof(msg)))
		fail_msg("termination log is not a restore failure: %s", text);
	if (strcmp(reason, want) != 0 || strstr(msg, contains) == NULL)
		fail_msg("reason %s (want %s), message %s (want ...%s...)", reason, want, msg,
			 contains);
}

static void s3_endpoint(char *buf, size_t cap)
{
	snprintf(buf, cap, "http://%s", E.s3);
}

static int hash_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	(void)err;
	(void)errcap;
	eo_snapcheck_feed(ud, p, n);
	return 0;
}

/* Downloads an object and checks its integrity hash; returns its sha256 hex. */
static void object_sha(const char *key, char *hex)
{
	struct eo_snapcheck c;
	char err[512];
	uint64_t n;

	assert_int_equal(eo_snapcheck_init(&c), 0);
	if (eo_s3_get(E.client, key, hash_sink, &c, &n, err, sizeof(err)) != 0)
		fail_msg("get %s: %s", key, err);
	assert_int_equal(eo_snapcheck_finish(&c, hex), EO_SNAPCHECK_OK);
	eo_snapcheck_free(&c);
}

static void expect_artifact(json_t *r, const char *uri, const char *sha)
{
	char want[80];

	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "uri")), uri);
	assert_true(json_integer_value(json_object_get(r, "sizeBytes")) > NKEYS * VALUE_LEN);
	snprintf(want, sizeof(want), "sha256:%s", sha);
	assert_string_equal(json_string_value(json_object_get(r, "checksum")), want);
	/* The revision the member reported before the stream: every key written is in it. */
	assert_true(json_integer_value(json_object_get(r, "revision")) >= NKEYS);
}

static void test_snapshot_to_dir(void **state)
{
	char dir[600], path[700], uri[800], hex[65], err[512], stamp[64] = "";
	uint64_t size;
	json_t *r = NULL;
	FILE *f;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/pvc", E.workdir);
	mkdir(dir, 0700);
	assert_int_equal(agent(&r, "snapshot-agent", "--snapshot-name", "dir1", "--snapshot-uid",
			       "uid-dir1", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 0);
	snprintf(path, sizeof(path), "%s/dir1.db", dir);
	snprintf(uri, sizeof(uri), "file://%s", path);
	assert_int_equal(eo_snapcheck_file(path, &size, hex, err, sizeof(err)), EO_SNAPCHECK_OK);
	expect_artifact(r, uri, hex);
	assert_int_equal(json_integer_value(json_object_get(r, "sizeBytes")), (json_int_t)size);
	json_decref(r);
	snprintf(path, sizeof(path), "%s/dir1.db.uid", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(stamp, sizeof(stamp), f));
	fclose(f);
	assert_string_equal(stamp, "uid-dir1\n");
	/* A retry of the same snapshot is fine; another snapshot of that name is not. */
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "dir1", "--snapshot-uid",
			       "uid-dir1", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 0);
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "dir1", "--snapshot-uid",
			       "uid-other", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 1);
}

static void test_snapshot_to_s3(void **state)
{
	char ep[128], hex[65], err[512];
	struct eo_s3_head h;
	json_t *r = NULL;

	(void)state;
	s3_endpoint(ep, sizeof(ep));
	/* A part size (64 MiB) larger than the database: one PutObject. */
	assert_int_equal(agent(&r, "snapshot-agent", "--snapshot-name", "s3one", "--snapshot-uid",
			       "uid-s3one", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-key", "my-etcd",
			       "--s3-force-path-style", "--s3-insecure", "--s3-part-size",
			       "67108864", NULL),
			 0);
	object_sha("my-etcd/s3one.db", hex);
	expect_artifact(r, "s3://" BUCKET "/my-etcd/s3one.db", hex);
	json_decref(r);
	assert_int_equal(eo_s3_head(E.client, "my-etcd/s3one.db", &h, err, sizeof(err)), 0);
	assert_true(h.exists);
	assert_string_equal(h.uid, "uid-s3one");
	assert_null(strchr(h.etag, '-')); /* not a multipart ETag */
}

static void test_multipart(void **state)
{
	char ep[128], hex[65], err[512];
	struct eo_s3_head h;
	json_t *r = NULL;

	(void)state;
	s3_endpoint(ep, sizeof(ep));
	assert_int_equal(agent(&r, "snapshot-agent", "--snapshot-name", "multi", "--snapshot-uid",
			       "uid-multi", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-key", "mp/", "--s3-force-path-style",
			       "--s3-insecure", "--s3-part-size", "5242880", NULL),
			 0);
	object_sha("mp/multi.db", hex);
	expect_artifact(r, "s3://" BUCKET "/mp/multi.db", hex);
	json_decref(r);
	assert_int_equal(eo_s3_head(E.client, "mp/multi.db", &h, err, sizeof(err)), 0);
	assert_string_equal(h.uid, "uid-multi");
	/* S3 marks a multipart object's ETag with its part count: ~7 MB in 5 MiB parts. */
	assert_non_null(strstr(h.etag, "-2\""));
	/*
	 * A retry of the same snapshot through multipart replaces it in place; this time the
	 * parts upload one at a time (the first run had both in flight at once).
	 */
	assert_int_equal(agent(&r, "snapshot-agent", "--snapshot-name", "multi", "--snapshot-uid",
			       "uid-multi", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-key", "mp", "--s3-force-path-style",
			       "--s3-insecure", "--s3-part-size", "5242880", "--s3-parallel", "1",
			       NULL),
			 0);
	object_sha("mp/multi.db", hex);
	expect_artifact(r, "s3://" BUCKET "/mp/multi.db", hex);
	json_decref(r);
}

/*
 * Over plain HTTP the body is protected by its signed CRC-32: MinIO refuses a single PUT
 * and a part whose bytes differ from the checksum (one byte changed), stores nothing for
 * them, refuses a part without a checksum in an upload created for CRC-32, and takes the
 * intact ones.
 */
static void test_damaged_part_refused(void **state)
{
	char err[512], path[1600], etag[256], crc[EO_S3_CRC32_LEN + 1];
	struct eo_s3_head h;
	struct eo_s3_mpu m;
	size_t n = 6 * 1024 * 1024, num = 0, i;
	char *good = malloc(n), *bad = malloc(n);

	(void)state;
	assert_non_null(good);
	assert_non_null(bad);
	for (i = 0; i < n; i++)
		good[i] = (char)('a' + i % 26);
	memcpy(bad, good, n);
	bad[n / 2] ^= 0x01;

	assert_int_equal(put_with_crc("/" BUCKET "/crc/one.db", bad, good, n), 400);
	assert_int_equal(eo_s3_head(E.client, "crc/one.db", &h, err, sizeof(err)), 0);
	assert_false(h.exists);
	assert_int_equal(put_with_crc("/" BUCKET "/crc/one.db", good, good, n), 200);
	assert_int_equal(eo_s3_head(E.client, "crc/one.db", &h, err, sizeof(err)), 0);
	assert_true(h.exists);

	assert_int_equal(eo_s3_mpu_begin(E.client, "crc/multi.db", NULL, &m, err, sizeof(err)), 0);
	assert_true(m.crc32); /* plain HTTP: created with x-amz-checksum-algorithm */
	snprintf(path, sizeof(path), "/" BUCKET "/crc/multi.db?partNumber=1&uploadId=%s",
		 m.upload_id);
	assert_int_equal(put_with_crc(path, bad, good, n), 400);
	assert_int_equal(raw_s3("PUT", path), 400); /* no checksum at all */
	assert_int_equal(eo_s3_mpu_reserve(&m, &num, err, sizeof(err)), 0);
	assert_int_equal(
	    eo_s3_mpu_part(E.client, &m, num, good, n, etag, sizeof(etag), crc, err, sizeof(err)),
	    0);
	assert_int_equal(eo_s3_mpu_set_etag(&m, num, etag, crc, err, sizeof(err)), 0);
	assert_int_equal(eo_s3_mpu_complete(E.client, &m, err, sizeof(err)), 0);
	eo_s3_mpu_clear(&m);
	assert_int_equal(eo_s3_head(E.client, "crc/multi.db", &h, err, sizeof(err)), 0);
	assert_true(h.exists);
	assert_int_equal((long long)h.size, (long long)n);
	free(good);
	free(bad);
}

static void test_overwrite_guard(void **state)
{
	char ep[128], err[512];
	struct eo_s3_head h;

	(void)state;
	s3_endpoint(ep, sizeof(ep));
	/* A foreign object (no UID stamp) at the target key is never replaced. */
	assert_int_equal(eo_s3_put(E.client, "guard/g1.db", "foreign", 7, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "g1", "--snapshot-uid",
			       "uid-g1", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-key", "guard", "--s3-force-path-style",
			       "--s3-insecure", NULL),
			 1);
	assert_int_equal(eo_s3_head(E.client, "guard/g1.db", &h, err, sizeof(err)), 0);
	assert_int_equal(h.size, 7);
	/* Another snapshot's object neither. */
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "s3one", "--snapshot-uid",
			       "uid-intruder", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-key", "my-etcd",
			       "--s3-force-path-style", "--s3-insecure", NULL),
			 1);
	assert_int_equal(eo_s3_head(E.client, "my-etcd/s3one.db", &h, err, sizeof(err)), 0);
	assert_string_equal(h.uid, "uid-s3one");
	/* Wrong credentials: the HEAD fails (403) and the agent fails closed. */
	setenv("AWS_SECRET_ACCESS_KEY", "wrong", 1);
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "g2", "--snapshot-uid",
			       "uid-g2", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-force-path-style", "--s3-insecure",
			       NULL),
			 1);
	setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
	assert_int_equal(eo_s3_head(E.client, "g2.db", &h, err, sizeof(err)), 0);
	assert_false(h.exists);
	/* A plain-HTTP store without --s3-insecure: refused before anything is read. */
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "g4", "--snapshot-uid",
			       "uid-g4", "--endpoint", E.endpoint, "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-force-path-style", NULL),
			 1);
	assert_int_equal(eo_s3_head(E.client, "g4.db", &h, err, sizeof(err)), 0);
	assert_false(h.exists);
	/* An unreachable member: nothing stored. */
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "g3", "--snapshot-uid",
			       "uid-g3", "--endpoint", "http://127.0.0.1:1", "--s3-endpoint", ep,
			       "--s3-bucket", BUCKET, "--s3-force-path-style", "--s3-insecure",
			       NULL),
			 1);
	assert_int_equal(eo_s3_head(E.client, "g3.db", &h, err, sizeof(err)), 0);
	assert_false(h.exists);
}

/* Starts etcd on a restored data dir and checks that it serves all 1,000 keys. */
static void serve_and_count(const char *data_dir, const char *peer, const char *client)
{
	const char *argv[24];
	struct eo_etcd_range_opts ro = {.prefix = true, .count_only = true};
	struct eo_etcd_range rg = {0};
	struct eo_etcd_detail d;
	eo_etcd_client *c;
	eo_etcd_err e = EO_ETCD_UNAVAILABLE;
	pid_t pid;
	int i, n = 0;

	argv[n++] = E.etcd;
	argv[n++] = "--name";
	argv[n++] = "m0";
	argv[n++] = "--data-dir";
	argv[n++] = data_dir;
	argv[n++] = "--listen-client-urls";
	argv[n++] = client;
	argv[n++] = "--advertise-client-urls";
	argv[n++] = client;
	argv[n++] = "--listen-peer-urls";
	argv[n++] = peer;
	argv[n] = NULL;
	pid = spawn_logged(argv, "restored-etcd.log");
	assert_true(pid > 0);
	c = etcd_client(client);
	for (i = 0; i < 100; i++) {
		e = eo_etcd_range(c, "/itest/", 7, &ro, &rg, &d);
		if (e == EO_ETCD_OK)
			break;
		itest_sleep_ms(200);
	}
	stop(&pid);
	eo_etcd_client_free(c);
	if (e != EO_ETCD_OK)
		fail_msg("restored etcd does not serve: %s", d.message);
	assert_int_equal(rg.count, NKEYS);
	eo_etcd_range_clear(&rg);
}

static void restore_with(const char *etcdutl, const char *key, const char *tag)
{
	char ep[128], data[600], staging[700], peer[64], client[64], cluster[96], path[800];
	char hex[65], sum[80];
	json_t *r = NULL;
	struct stat st;

	s3_endpoint(ep, sizeof(ep));
	object_sha(key, hex);
	snprintf(sum, sizeof(sum), "sha256:%s", hex);
	snprintf(data, sizeof(data), "%s/restore-%s", E.workdir, tag);
	snprintf(staging, sizeof(staging), "%s/.restore", data);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", itest_free_port());
	snprintf(client, sizeof(client), "http://127.0.0.1:%d", itest_free_port());
	snprintf(cluster, sizeof(cluster), "m0=%s", peer);
	assert_int_equal(agent(&r, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key", key,
			       "--s3-force-path-style", "--s3-insecure", "--expected-checksum", sum,
			       NULL),
			 0);
	assert_string_equal(json_string_value(json_object_get(r, "checksum")), sum);
	snprintf(path, sizeof(path), "%s/snapshot.db", staging);
	assert_string_equal(json_string_value(json_object_get(r, "staged")), path);
	json_decref(r);
	assert_int_equal(agent(NULL, "restore-rebuild", "--data-dir", data, "--staging-dir",
			       staging, "--etcdutl", etcdutl, "--name", "m0", "--initial-cluster",
			       cluster, "--initial-cluster-token", "itest-restored",
			       "--initial-advertise-peer-urls", peer, NULL),
			 0);
	/* The staging area is gone; the data dir has its member directory. */
	assert_int_not_equal(stat(staging, &st), 0);
	snprintf(path, sizeof(path), "%s/member/snap/db", data);
	assert_int_equal(stat(path, &st), 0);
	/* Both steps are no-ops on an initialised data dir (a Pod restart). */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key", "missing.db",
			       "--s3-force-path-style", "--s3-insecure", NULL),
			 0);
	assert_int_equal(agent(NULL, "restore-rebuild", "--data-dir", data, "--staging-dir",
			       staging, "--etcdutl", "/nonexistent", "--name", "m0",
			       "--initial-cluster", cluster, "--initial-cluster-token", "t",
			       "--initial-advertise-peer-urls", peer, NULL),
			 0);
	serve_and_count(data, peer, client);
}

static void test_restore(void **state)
{
	(void)state;
	/* With this version's own etcdutl (3.4 has none), and with the newest one. */
	if (E.etcdutl_own[0])
		restore_with(E.etcdutl_own, "mp/multi.db", "own");
	restore_with(E.etcdutl_latest, "my-etcd/s3one.db", "latest");
}

/* Copies the first n bytes of src to dst. 0, or -1. */
static int copy_prefix(const char *src, const char *dst, size_t n)
{
	char buf[4096];
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	size_t got;
	int rc = -1;

	if (in != NULL && out != NULL && n <= sizeof(buf) && (got = fread(buf, 1, n, in)) == n &&
	    fwrite(buf, 1, got, out) == got)
		rc = 0;
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		rc = -1;
	return rc;
}

#define WRONG_SUM "sha256:00000000000000000000000000000000000000000000000000000000000000ff"

static void test_restore_refuses_bad_objects(void **state)
{
	char ep[128], data[600], staging[700], path[800], err[512], cut[700];
	unsigned char *buf;
	size_t cap = 64 << 20, n = 0;
	struct stat st;
	FILE *f;

	(void)state;
	s3_endpoint(ep, sizeof(ep));
	snprintf(path, sizeof(path), "%s/pvc/dir1.db", E.workdir);
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(cap);
	assert_non_null(buf);
	n = fread(buf, 1, cap, f);
	fclose(f);
	assert_true(n > 4096);
	/* One flipped byte in the middle, and a copy cut short. */
	buf[n / 2] ^= 0x01;
	assert_int_equal(eo_s3_put(E.client, "bad/corrupt.db", buf, n, NULL, err, sizeof(err)), 0);
	buf[n / 2] ^= 0x01;
	assert_int_equal(eo_s3_put(E.client, "bad/short.db", buf, n - 1000, NULL, err, sizeof(err)),
			 0);
	free(buf);
	snprintf(data, sizeof(data), "%s/restore-bad", E.workdir);
	snprintf(staging, sizeof(staging), "%s/.restore", data);
	snprintf(path, sizeof(path), "%s/snapshot.db", staging);
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "bad/corrupt.db", "--s3-force-path-style", "--s3-insecure", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_SNAPSHOT_CORRUPT, "s3://" BUCKET "/bad/corrupt.db");
	assert_int_not_equal(stat(path, &st), 0); /* nothing staged */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "bad/short.db", "--s3-force-path-style", "--s3-insecure", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_SNAPSHOT_CORRUPT, "bad/short.db");
	assert_int_not_equal(stat(path, &st), 0);
	/* A missing object fails on the HeadObject. */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "bad/missing.db", "--s3-force-path-style", "--s3-insecure", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_OBJECT_MISSING, "HeadObject answered 404");
	/* Wrong credentials: S3 answers 403. */
	setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret", 1);
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "bad/corrupt.db", "--s3-force-path-style", "--s3-insecure", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_ACCESS_DENIED, "403");
	setenv("AWS_SECRET_ACCESS_KEY", SK, 1);
	/* Nobody listens there. */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", "http://127.0.0.1:1", "--s3-bucket", BUCKET,
			       "--s3-key", "bad/corrupt.db", "--s3-force-path-style",
			       "--s3-insecure", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_SOURCE_UNREACHABLE, "cannot look up the snapshot");
	/* An intact snapshot, but not the expected one: refused, nothing staged. */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "my-etcd/s3one.db", "--s3-force-path-style", "--s3-insecure",
			       "--expected-checksum", WRONG_SUM, NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_CHECKSUM_MISMATCH, WRONG_SUM);
	assert_int_not_equal(stat(path, &st), 0);
	/* A plain-HTTP store without --s3-insecure. */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--s3-endpoint", ep, "--s3-bucket", BUCKET, "--s3-key",
			       "my-etcd/s3one.db", "--s3-force-path-style", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_FAILED, "insecure: true");
	assert_int_not_equal(stat(path, &st), 0);
	/* The rebuild step has nothing to work on and says so. */
	assert_int_equal(agent(NULL, "restore-rebuild", "--data-dir", data, "--staging-dir",
			       staging, "--etcdutl", E.etcdutl_latest, "--name", "m0",
			       "--initial-cluster", "m0=http://127.0.0.1:1",
			       "--initial-cluster-token", "t", "--initial-advertise-peer-urls",
			       "http://127.0.0.1:1", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_FAILED, "no snapshot to restore");
	snprintf(path, sizeof(path), "%s/member", data);
	assert_int_not_equal(stat(path, &st), 0);
	/* No source: refused, unless it only installs itself (an archive restore's first step). */
	assert_int_equal(
	    agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging, NULL), 1);
	expect_reason(EO_REASON_RESTORE_FAILED, "exactly one source");
	snprintf(cut, sizeof(cut), "%s/install-only", E.workdir);
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--install-self", cut, NULL),
			 0);
	snprintf(path, sizeof(path), "%s/bin/etcd-operator", cut);
	assert_int_equal(stat(path, &st), 0);
	snprintf(path, sizeof(path), "%s/snapshot.db", staging);
	assert_int_not_equal(stat(path, &st), 0); /* nothing staged */
	/* A PVC source: a missing file, and a cut one. */
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--file", "/nonexistent/snap.db", NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_OBJECT_MISSING, "/nonexistent/snap.db does not exist");
	snprintf(path, sizeof(path), "%s/pvc/dir1.db", E.workdir);
	snprintf(cut, sizeof(cut), "%s/cut.db", E.workdir);
	assert_int_equal(copy_prefix(path, cut, 4096), 0);
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--file", cut, NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_SNAPSHOT_CORRUPT, "cut.db");
	/* A PVC source is verified in place, against the expected checksum too. */
	snprintf(path, sizeof(path), "%s/pvc/dir1.db", E.workdir);
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--file", path, "--expected-checksum", WRONG_SUM, NULL),
			 1);
	expect_reason(EO_REASON_RESTORE_CHECKSUM_MISMATCH, "dir1.db");
	assert_int_equal(agent(NULL, "restore-agent", "--data-dir", data, "--staging-dir", staging,
			       "--file", path, NULL),
			 0);
}

/*
 * A cluster with auth on (last: it turns auth on for good): the agent without the password is
 * refused the snapshot, with a wrong one too, with root's password (from the environment, as
 * the Job's secretKeyRef gives it) it authenticates and stores a complete snapshot; the
 * environment's copy of the password is wiped.
 */
static void test_snapshot_with_auth(void **state)
{
	char dir[600], path[700], hex[65], err[512];
	eo_etcd_client *c = NULL;
	struct eo_etcd_detail d;
	uint64_t size;
	json_t *r = NULL;
	const char *left;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/pvc-auth", E.workdir);
	mkdir(dir, 0700);
	{
		const char *eps[1] = {E.endpoint};
		struct eo_etcd_config cfg = {.endpoints = eps,
					     .n_endpoints = 1,
					     .timeout_ms = 10000,
					     .password = "agent-pw"};

		assert_int_equal(eo_etcd_client_new(&cfg, &c, &d), EO_ETCD_OK);
	}
	if (eo_etcd_auth_enable_root(c, "agent-pw", &d) != EO_ETCD_OK)
		fail_msg("enabling auth: %s", d.message);
	eo_etcd_client_free(c);

	unsetenv("EO_ETCD_ROOT_PASSWORD");
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "auth0", "--snapshot-uid",
			       "uid-auth0", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 1);
	setenv("EO_ETCD_ROOT_PASSWORD", "not-it", 1);
	assert_int_equal(agent(NULL, "snapshot-agent", "--snapshot-name", "auth1", "--snapshot-uid",
			       "uid-auth1", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 1);
	setenv("EO_ETCD_ROOT_PASSWORD", "agent-pw", 1);
	assert_int_equal(agent(&r, "snapshot-agent", "--snapshot-name", "auth2", "--snapshot-uid",
			       "uid-auth2", "--endpoint", E.endpoint, "--pvc-dir", dir, NULL),
			 0);
	left = getenv("EO_ETCD_ROOT_PASSWORD");
	assert_true(left == NULL || left[0] == '\0');
	snprintf(path, sizeof(path), "%s/auth2.db", dir);
	assert_int_equal(eo_snapcheck_file(path, &size, hex, err, sizeof(err)), EO_SNAPCHECK_OK);
	assert_int_equal(json_integer_value(json_object_get(r, "sizeBytes")), (json_int_t)size);
	json_decref(r);
	unsetenv("EO_ETCD_ROOT_PASSWORD");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_snapshot_to_dir),
	    cmocka_unit_test(test_snapshot_to_s3),
	    cmocka_unit_test(test_multipart),
	    cmocka_unit_test(test_damaged_part_refused),
	    cmocka_unit_test(test_overwrite_guard),
	    cmocka_unit_test(test_restore),
	    cmocka_unit_test(test_restore_refuses_bad_objects),
	    cmocka_unit_test(test_snapshot_with_auth),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
