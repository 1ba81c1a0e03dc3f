/*
 * Integration: the keyspace watch (etcd/watch.h) into archive segments (archive/segment.h)
 * against a real etcd, then a replay compared, revision by revision, with etcd's own range
 * at that revision; and a watch whose start was compacted away.
 *
 * The writes cover what a replay must reproduce: puts of new and existing keys (versions),
 * a binary key, a key under a lease, a single delete, a range delete of several keys (one
 * revision, several events) and a txn of two puts and a delete (one revision, three events).
 * Segments are closed every 300 bytes of records, so the replay crosses several of them.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive/fromwatch.h"
#include "archive/segment.h"
#include "core/base64.h"
#include "etcd/client.h"
#include "etcd/watch.h"
#include "etcd/wire.h"

static const char *endpoint;
static char segdir[512];
static eo_etcd_client *cli;
static int64_t base_rev, final_rev;

/* ---- small gateway helpers (requests the client has no call for) --------------------- */

struct buf {
	char *p;
	size_t n;
};

static size_t on_buf(char *p, size_t size, size_t nmemb, void *ud)
{
	struct buf *b = ud;
	size_t n = size * nmemb;
	char *q = realloc(b->p, b->n + n + 1);

	assert_non_null(q);
	memcpy(q + b->n, p, n);
	b->p = q;
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

/* POSTs body to endpoint+path; the 200 answer (malloc'd). */
static char *post(const char *path, const char *body, size_t *len)
{
	CURL *h = curl_easy_init();
	struct buf b = {0};
	char url[512];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", endpoint, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_buf);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 10000L);
	assert_int_equal(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	if (status != 200)
		fail_msg("%s: HTTP %ld: %s", path, status, b.p ? b.p : "");
	if (len != NULL)
		*len = b.n;
	return b.p;
}

static char *b64(const char *s)
{
	char *e = eo_base64_encode(s, strlen(s));

	assert_non_null(e);
	return e;
}

static void put_lease(const char *k, const char *v, int64_t lease)
{
	char *bk = b64(k), *bv = b64(v), body[512];

	snprintf(body, sizeof(body), "{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%" PRId64 "\"}",
		 bk, bv, lease);
	free(post("/v3/kv/put", body, NULL));
	free(bk);
	free(bv);
}

static void put(const char *k, const char *v)
{
	assert_int_equal(eo_etcd_put(cli, k, strlen(k), v, strlen(v), NULL, NULL), EO_ETCD_OK);
}

static void delete_range(const char *k, const char *end)
{
	char *bk = b64(k), *be = end ? b64(end) : NULL, body[512];

	snprintf(body, sizeof(body), "{\"key\":\"%s\"%s%s%s}", bk, be ? ",\"range_end\":\"" : "",
		 be ? be : "", be ? "\"" : "");
	free(post("/v3/kv/deleterange", body, NULL));
	free(bk);
	free(be);
}

static void txn(void)
{
	char *t1 = b64("t1"), *t2 = b64("t2"), *v = b64("txn"), *k1 = b64("k1"), body[1024];

	snprintf(body, sizeof(body),
		 "{\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}},"
		 "{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}},"
		 "{\"request_delete_range\":{\"key\":\"%s\"}}]}",
		 t1, v, t2, v, k1);
	free(post("/v3/kv/txn", body, NULL));
	free(t1);
	free(t2);
	free(v);
	free(k1);
}

/* etcd's whole keyspace at revision rev. */
static void range_at(int64_t rev, struct eo_etcd_range *out)
{
	char body[128], *ans;
	size_t len;

	snprintf(body, sizeof(body),
		 "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"revision\":\"%" PRId64 "\"}", rev);
	ans = post("/v3/kv/range", body, &len);
	assert_int_equal(eo_etcd_wire_parse_range(ans, len, out), EO_ETCD_OK);
	free(ans);
}

/* ---- the model a replay builds ---------------------------------------------------------- */

struct mkv {
	unsigned char *key, *value;
	size_t key_len, value_len;
	int64_t create, mod, version, lease;
};

static struct mkv model[256];
static size_t n_model;

static int keycmp(const void *a, size_t al, const void *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c != 0 ? c : (al > bl) - (al < bl);
}

static size_t model_find(const unsigned char *k, size_t kl)
{
	for (size_t i = 0; i < n_model; i++)
		if (keycmp(model[i].key, model[i].key_len, k, kl) == 0)
			return i;
	return n_model;
}

static unsigned char *dup_bytes(const unsigned char *p, size_t n)
{
	unsigned char *q = malloc(n + 1);

	assert_non_null(q);
	if (n > 0)
		memcpy(q, p, n);
	q[n] = '\0';
	return q;
}

static void model_clear(void)
{
	for (size_t i = 0; i < n_model; i++) {
		free(model[i].key);
		free(model[i].value);
	}
	n_model = 0;
}

static void model_set(const unsigned char *k, size_t kl, const unsigned char *v, size_t vl,
		      int64_t create, int64_t mod, int64_t version, int64_t lease)
{
	size_t i = model_find(k, kl);

	if (i == n_model) {
		assert_true(n_model < 256);
		n_model++;
		model[i].key = dup_bytes(k, kl);
		model[i].key_len = kl;
	} else {
		free(model[i].value);
	}
	model[i].value = dup_bytes(v, vl);
	model[i].value_len = vl;
	model[i].create = create;
	model[i].mod = mod;
	model[i].version = version;
	model[i].lease = lease;
}

static void model_apply(const struct eo_archive_rev *rev)
{
	for (size_t e = 0; e < rev->n; e++) {
		const struct eo_archive_event *ev = &rev->events[e];
		size_t i;

		assert_int_equal(ev->mod_revision, rev->revision);
		if (ev->type == EO_ARCHIVE_PUT) {
			model_set(ev->key, ev->key_len, ev->value, ev->value_len,
				  ev->create_revision, ev->mod_revision, ev->version, ev->lease);
			continue;
		}
		i = model_find(ev->key, ev->key_len);
		assert_true(i < n_model); /* a delete of a key the model holds */
		free(model[i].key);
		free(model[i].value);
		model[i] = model[--n_model];
	}
}

/* The model equals etcd's keyspace at rev: every key, value and field. */
static void model_check(int64_t rev)
{
	struct eo_etcd_range r = {0};

	range_at(rev, &r);
	if (r.n != n_model)
		fail_msg("revision %" PRId64 ": etcd has %zu keys, the replay %zu", rev, r.n,
			 n_model);
	for (size_t i = 0; i < r.n; i++) {
		const struct eo_etcd_kv *kv = &r.kvs[i];
		size_t j = model_find(kv->key, kv->key_len);

		if (j == n_model)
			fail_msg("revision %" PRId64 ": key %s missing from the replay", rev,
				 (const char *)kv->key);
		assert_int_equal(model[j].value_len, kv->value_len);
		assert_memory_equal(model[j].value, kv->value, kv->value_len);
		assert_int_equal(model[j].create, kv->create_revision);
		assert_int_equal(model[j].mod, kv->mod_revision);
		assert_int_equal(model[j].version, kv->version);
		assert_int_equal(model[j].lease, kv->lease);
	}
	eo_etcd_range_clear(&r);
}

static void model_load(int64_t rev)
{
	struct eo_etcd_range r = {0};

	model_clear();
	range_at(rev, &r);
	for (size_t i = 0; i < r.n; i++)
		model_set(r.kvs[i].key, r.kvs[i].key_len, r.kvs[i].value, r.kvs[i].value_len,
			  r.kvs[i].create_revision, r.kvs[i].mod_revision, r.kvs[i].version,
			  r.kvs[i].lease);
	eo_etcd_range_clear(&r);
}

/* ---- watch into segments ---------------------------------------------------------------- */

struct arch {
	struct eo_archive_writer *w;
	char paths[64][1024];
	size_t n_paths;
	int64_t last;
	uint64_t events;
};

static int on_closed(void *ud, const struct eo_archive_seg_info *info, char *err, size_t cap)
{
	struct arch *a = ud;

	(void)err, (void)cap;
	assert_true(a->n_paths < 64);
	snprintf(a->paths[a->n_paths++], sizeof(a->paths[0]), "%s/%s", segdir, info->name);
	return 0;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int add_rev(void *ud, const struct eo_archive_rev *rev, char *err, size_t cap)
{
	struct arch *a = ud;

	a->events += rev->n;
	return eo_archive_writer_add(a->w, rev, err, cap);
}

/* Each run of events of one mod_revision is one archived revision (archive/fromwatch.h). */
static int on_watch(void *ud, const struct eo_etcd_watch_resp *r, char *err, size_t cap)
{
	struct arch *a = ud;

	if (eo_archive_from_watch(r, wall_ms(), add_rev, a, &a->last, err, cap) != 0)
		return -1;
	return a->last >= final_rev ? 1 : 0;
}

static void write_keyspace(void)
{
	int64_t lease = 0;

	put("pre", "before the base");
	assert_int_equal(eo_etcd_revision(cli, &base_rev, NULL), EO_ETCD_OK);
	for (int i = 0; i < 10; i++) {
		char k[8], v[16];

		snprintf(k, sizeof(k), "k%d", i);
		snprintf(v, sizeof(v), "value-%d", i);
		put(k, v);
	}
	put("k2", "second version");
	put("pre", "changed after the base");
	assert_int_equal(eo_etcd_put(cli, "bin\0\xff", 5, "\x00\x01", 2, NULL, NULL), EO_ETCD_OK);
	assert_int_equal(eo_etcd_lease_grant(cli, 600, &lease, NULL), EO_ETCD_OK);
	put_lease("leased", "with a lease", lease);
	delete_range("k3", NULL);
	delete_range("k7", "k:"); /* k7, k8, k9: one revision, three events */
	txn();			  /* t1, t2 put and k1 deleted: one revision */
	put("last", "the end");
	assert_int_equal(eo_etcd_revision(cli, &final_rev, NULL), EO_ETCD_OK);
}

static void watch_into_segments(struct arch *a)
{
	struct eo_etcd_config cfg = {.endpoints = &endpoint, .n_endpoints = 1};
	struct eo_etcd_watch_opts o = {.cfg = &cfg,
				       .start_revision = base_rev + 1,
				       .max_duration_ms = 20000,
				       .line_max = 64 * 1024};
	struct eo_archive_writer_opts wo = {
	    .dir = segdir, .max_bytes = 300, .codec = EO_ARCHIVE_CODEC_ZLIB};
	struct eo_etcd_watch_result res;
	struct eo_etcd_detail d;
	char err[256];
	eo_etcd_err rc;

	assert_int_equal(eo_archive_writer_new(&wo, on_closed, a, &a->w, err, sizeof(err)), 0);
	rc = eo_etcd_watch(&o, on_watch, a, &res, &d);
	if (rc != EO_ETCD_OK)
		fail_msg("watch: %s: %s", eo_etcd_strerror(rc), d.message);
	assert_int_equal(res.http_status, 200);
	assert_int_equal(eo_archive_writer_flush(a->w, err, sizeof(err)), 0);
	eo_archive_writer_free(a->w);
	assert_int_equal(a->last, final_rev);
	assert_true(a->n_paths >= 2);
}

struct check {
	int64_t prev;
	size_t multi;
};

static int on_replay(void *ud, const struct eo_archive_rev *rev, char *err, size_t cap)
{
	struct check *c = ud;

	(void)err, (void)cap;
	assert_int_equal(rev->revision, c->prev + 1);
	c->prev = rev->revision;
	if (rev->n > 1)
		c->multi++;
	model_apply(rev);
	model_check(rev->revision);
	return 0;
}

static void test_watch_archive_replay(void **state)
{
	struct arch a = {0};
	struct check c;
	const char *paths[64];
	char err[256];
	int64_t last, mid;

	(void)state;
	write_keyspace();
	watch_into_segments(&a);
	for (size_t i = 0; i < a.n_paths; i++)
		paths[i] = a.paths[i];

	/* Every revision after the base, each compared with etcd at that revision. */
	model_load(base_rev);
	c = (struct check){.prev = base_rev};
	if (eo_archive_replay(paths, a.n_paths, base_rev, true, NULL, on_replay, &c, &last, err,
			      sizeof(err)) != 0)
		fail_msg("replay: %s", err);
	assert_int_equal(last, final_rev);
	assert_int_equal(c.multi, 2); /* the range delete and the txn */

	/* To a target revision in the middle: the state is etcd's at it. */
	mid = base_rev + (final_rev - base_rev) / 2;
	model_load(base_rev);
	c = (struct check){.prev = base_rev};
	struct eo_archive_target t = {.revision = mid};
	assert_int_equal(eo_archive_replay(paths, a.n_paths, base_rev, true, &t, on_replay, &c,
					   &last, err, sizeof(err)),
			 0);
	assert_int_equal(last, mid);
	model_check(mid);
	model_clear();
}

static int never(void *ud, const struct eo_etcd_watch_resp *r, char *err, size_t cap)
{
	(void)ud, (void)err, (void)cap;
	/* The created response may come first; events must not. */
	assert_int_equal(r->n, 0);
	return 0;
}

static void test_watch_compacted(void **state)
{
	struct eo_etcd_config cfg = {.endpoints = &endpoint, .n_endpoints = 1};
	struct eo_etcd_watch_opts o = {.cfg = &cfg, .start_revision = 2, .max_duration_ms = 10000};
	struct eo_etcd_watch_result res;
	struct eo_etcd_detail d;
	int64_t rev;

	(void)state;
	put("compact-me", "x");
	assert_int_equal(eo_etcd_revision(cli, &rev, NULL), EO_ETCD_OK);
	assert_int_equal(eo_etcd_compact(cli, rev - 1, true, NULL), EO_ETCD_OK);
	assert_int_equal(eo_etcd_watch(&o, never, NULL, &res, &d), EO_ETCD_COMPACTED);
	assert_int_equal(res.compact_revision, rev - 1);
	assert_non_null(strstr(d.message, "compacted"));
	/* From after the compact revision the watch runs (until its max duration). */
	o.start_revision = rev + 1;
	o.max_duration_ms = 1500;
	assert_int_equal(eo_etcd_watch(&o, never, NULL, &res, &d), EO_ETCD_TIMEOUT);
	assert_int_equal(res.compact_revision, 0);
}

int main(void)
{
	struct eo_etcd_config cfg = {0};
	const char *work = getenv("EO_ITEST_WORKDIR");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_watch_archive_replay),
	    cmocka_unit_test(test_watch_compacted),
	};
	int rc;

	endpoint = getenv("EO_ITEST_ENDPOINT");
	if (endpoint == NULL || work == NULL) {
		fprintf(stderr, "run through test/integration/run.sh\n");
		return 2;
	}
	snprintf(segdir, sizeof(segdir), "%s/segments", work);
	mkdir(segdir, 0700);
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
