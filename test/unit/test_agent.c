/*
 * Unit tests of the snapshot agent's pure parts (src/agent): the integrity
 * trailer check on good, truncated and corrupted data in every split, the
 * gateway stream decoder (3.5 and 3.6 message shapes, errors mid-stream,
 * truncation, over-long lines), S3 URL construction for both addressing
 * styles, multipart part sizing, XML answers, the overwrite-guard decision
 * table, credentials, and the file store's temporary-file discipline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "agent/dataguard.h"
#include "snapshot/etcdsnap.h"
#include "snapshot/filestore.h"
#include "snapshot/guard.h"
#include "snapshot/integrity.h"
#include "snapshot/s3.h"
#include "support/fake_apiserver.h"
#include "snapshot/trust.h"
#include "support/testutil.h"
#include "support/tu_main.h"

/* A fake snapshot: `pages` 4 KiB pages of pseudo-random bytes plus the trailer. */
static unsigned char *fake_snapshot(size_t pages, size_t *len)
{
	size_t n = pages * 4096, i;
	unsigned char *b = malloc(n + 32);
	unsigned int dl = 0;
	uint32_t x = 12345;

	assert_non_null(b);
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (unsigned char)(x >> 16);
	}
	assert_int_equal(EVP_Digest(b, n, b + n, &dl, EVP_sha256(), NULL), 1);
	assert_int_equal(dl, 32);
	*len = n + 32;
	return b;
}

static enum eo_snapcheck_result check_split(const unsigned char *b, size_t n, size_t chunk,
					    char *hex)
{
	struct eo_snapcheck c;
	enum eo_snapcheck_result r;
	size_t off, take;

	assert_int_equal(eo_snapcheck_init(&c), 0);
	for (off = 0; off < n; off += take) {
		take = n - off < chunk ? n - off : chunk;
		eo_snapcheck_feed(&c, b + off, take);
	}
	r = eo_snapcheck_finish(&c, hex);
	eo_snapcheck_free(&c);
	return r;
}

static void test_integrity(void **state)
{
	static const size_t chunks[] = {1, 7, 31, 32, 33, 511, 4096, 32768, 1 << 20};
	char hex[65], want[65];
	unsigned char d[32];
	unsigned int dl;
	size_t n, i, k;
	unsigned char *b;

	(void)state;
	b = fake_snapshot(9, &n);
	EVP_Digest(b, n, d, &dl, EVP_sha256(), NULL);
	for (k = 0; k < 32; k++)
		snprintf(want + 2 * k, 3, "%02x", d[k]);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		/* Good, in every split; the checksum covers every byte, trailer included. */
		assert_int_equal(check_split(b, n, chunks[i], hex), EO_SNAPCHECK_OK);
		assert_string_equal(hex, want);
		/* Truncated by one byte, by the trailer, by a page. */
		assert_int_equal(check_split(b, n - 1, chunks[i], hex), EO_SNAPCHECK_NO_TRAILER);
		assert_int_equal(check_split(b, n - 32, chunks[i], hex), EO_SNAPCHECK_NO_TRAILER);
		/* A page short still has the trailer's size: its last 32 bytes do not match. */
		assert_int_equal(check_split(b, n - 4096, chunks[i], hex), EO_SNAPCHECK_MISMATCH);
		/* One flipped bit in the body, or in the trailer. */
		b[4000] ^= 1;
		assert_int_equal(check_split(b, n, chunks[i], hex), EO_SNAPCHECK_MISMATCH);
		b[4000] ^= 1;
		b[n - 1] ^= 0x80;
		assert_int_equal(check_split(b, n, chunks[i], hex), EO_SNAPCHECK_MISMATCH);
		b[n - 1] ^= 0x80;
	}
	/* Nothing, or only a trailer-sized blob. */
	assert_int_equal(check_split(b, 0, 1, hex), EO_SNAPCHECK_NO_TRAILER);
	assert_int_equal(check_split(b, 32, 32, hex), EO_SNAPCHECK_MISMATCH);
	free(b);
}

static void test_integrity_file(void **state)
{
	char path[] = "/tmp/eo-agent-test-XXXXXX", err[256], hex[65];
	uint64_t size = 0;
	unsigned char *b;
	size_t n;
	int fd;

	(void)state;
	b = fake_snapshot(300, &n); /* larger than the 1 MiB read chunk */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(eo_write_all(fd, b, n), 0);
	assert_int_equal(eo_snapcheck_file(path, &size, hex, err, sizeof(err)), EO_SNAPCHECK_OK);
	assert_int_equal(size, n);
	assert_int_equal(ftruncate(fd, (off_t)n - 100), 0);
	assert_int_equal(eo_snapcheck_file(path, &size, hex, err, sizeof(err)),
			 EO_SNAPCHECK_NO_TRAILER);
	assert_non_null(strstr(err, "truncated"));
	close(fd);
	unlink(path);
	assert_int_equal(eo_snapcheck_file(path, &size, hex, err, sizeof(err)), EO_SNAPCHECK_ERROR);
	free(b);
}

/* ---- the stream decoder --------------------------------------------------------- */

struct collect {
	unsigned char *buf;
	size_t len, cap;
	int fail_after; /* fail the sink call with this index (0: never) */
	int calls;
};

static int collect_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct collect *c = ud;

	if (c->fail_after && ++c->calls >= c->fail_after) {
		snprintf(err, errcap, "sink full");
		return -1;
	}
	assert_true(c->len + n <= c->cap);
	memcpy(c->buf + c->len, p, n);
	c->len += n;
	return 0;
}

/* Encodes a snapshot as the gateway does: 32 KiB blobs, then the trailer. */
static char *gateway_stream(const unsigned char *b, size_t n, bool v36, size_t *outlen)
{
	size_t db = n - 32, off = 0, cap = n * 2 + 4096, len = 0, take;
	char *out = malloc(cap), *enc = malloc(45000);

	assert_non_null(out);
	assert_non_null(enc);
	while (off < n) {
		take = off < db ? (db - off < 32768 ? db - off : 32768) : 32;
		EVP_EncodeBlock((unsigned char *)enc, b + off, (int)take);
		off += take;
		if (off < db)
			len += (size_t)snprintf(out + len, cap - len,
						"{\"result\":{\"remaining_bytes\":\"%zu\",\"blob\":"
						"\"%s\"%s}}\n",
						db - off, enc, v36 ? ",\"version\":\"3.6.0\"" : "");
		else
			len += (size_t)snprintf(out + len, cap - len,
						"{\"result\":{\"blob\":\"%s\"%s}}\n", enc,
						v36 ? ",\"version\":\"3.6.0\"" : "");
	}
	free(enc);
	*outlen = len;
	return out;
}

static int decode_all(const char *s, size_t n, size_t chunk, struct collect *c,
		      struct eo_snapstream *ss)
{
	size_t off, take;

	assert_int_equal(eo_snapstream_init(ss, collect_sink, c), 0);
	for (off = 0; off < n; off += take) {
		take = n - off < chunk ? n - off : chunk;
		if (eo_snapstream_feed(ss, s + off, take) != 0)
			return -1;
	}
	return eo_snapstream_finish(ss);
}

static void test_stream_roundtrip(void **state)
{
	static const size_t chunks[] = {1, 100, 16384, 1 << 20};
	struct eo_snapstream ss;
	struct collect c = {0};
	unsigned char *b;
	size_t n, sn, i;
	char *s, *last;
	int v;

	(void)state;
	b = fake_snapshot(20, &n); /* 80 KiB: three data messages and the trailer */
	c.cap = n;
	c.buf = malloc(n);
	for (v = 0; v < 2; v++) {
		s = gateway_stream(b, n, v == 1, &sn);
		for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			c.len = 0;
			assert_int_equal(decode_all(s, sn, chunks[i], &c, &ss), 0);
			assert_int_equal(c.len, n);
			assert_memory_equal(c.buf, b, n);
			assert_int_equal(ss.messages, 4);
			assert_int_equal(ss.expected, n - 32);
			assert_string_equal(ss.storage_version, v ? "3.6.0" : "");
			eo_snapstream_free(&ss);
		}
		/* Cut after the last data message: the trailer never came. */
		c.len = 0;
		s[sn - 1] = '\0';
		last = strrchr(s, '\n');
		s[sn - 1] = '\n';
		assert_non_null(last);
		assert_int_not_equal(decode_all(s, (size_t)(last - s) + 1, 4096, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "truncated"));
		eo_snapstream_free(&ss);
		/* Cut in the middle of a line. */
		c.len = 0;
		assert_int_not_equal(decode_all(s, sn / 2, 4096, &c, &ss), 0);
		eo_snapstream_free(&ss);
		free(s);
	}
	/* The sink refuses: the decoder stops and reports the sink's words. */
	s = gateway_stream(b, n, false, &sn);
	c.len = 0;
	c.fail_after = 2;
	assert_int_not_equal(decode_all(s, sn, 4096, &c, &ss), 0);
	assert_string_equal(ss.err, "sink full");
	assert_int_not_equal(eo_snapstream_feed(&ss, "{}", 2), 0);
	eo_snapstream_free(&ss);
	free(s);
	free(c.buf);
	free(b);
}

/* A protobuf varint into out; the bytes written. */
static size_t put_varint(unsigned char *out, uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v > 0);
	return n;
}

/*
 * Encodes a snapshot as etcd's gRPC server does: frames of SnapshotResponse with a header
 * (field 1, skipped by the decoder), remaining_bytes, blob and (3.6) version.
 */
static unsigned char *grpc_stream(const unsigned char *b, size_t n, bool v36, size_t *outlen)
{
	static const unsigned char header[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x02};
	size_t db = n - 32, off = 0, cap = n + 4096, len = 0, take, m;
	unsigned char *out = malloc(cap), msg[64];

	assert_non_null(out);
	while (off < n) {
		take = off < db ? (db - off < 32768 ? db - off : 32768) : 32;
		m = 0;
		memcpy(msg, header, sizeof(header));
		m += sizeof(header);
		msg[m++] = 0x10; /* remaining_bytes = 2, varint */
		m += put_varint(msg + m, off + take < db ? db - off - take : 0);
		msg[m++] = 0x1a; /* blob = 3, bytes */
		m += put_varint(msg + m, take);
		/* frame: flag, length, message head, blob, version */
		out[len] = 0;
		len += 5;
		memcpy(out + len, msg, m);
		len += m;
		memcpy(out + len, b + off, take);
		len += take;
		m += take;
		if (v36) {
			memcpy(out + len,
			       "\x22\x05"
			       "3.6.0",
			       7);
			len += 7;
			m += 7;
		}
		out[len - m - 5 + 1] = (unsigned char)(m >> 24);
		out[len - m - 5 + 2] = (unsigned char)(m >> 16);
		out[len - m - 5 + 3] = (unsigned char)(m >> 8);
		out[len - m - 5 + 4] = (unsigned char)m;
		off += take;
	}
	*outlen = len;
	return out;
}

static int decode_all_grpc(const unsigned char *s, size_t n, size_t chunk, struct collect *c,
			   struct eo_snapstream *ss)
{
	size_t off, take;

	assert_int_equal(eo_snapstream_init_grpc(ss, collect_sink, c), 0);
	for (off = 0; off < n; off += take) {
		take = n - off < chunk ? n - off : chunk;
		if (eo_snapstream_feed(ss, (const char *)s + off, take) != 0)
			return -1;
	}
	return eo_snapstream_finish(ss);
}

static void test_stream_grpc(void **state)
{
	static const size_t chunks[] = {1, 5, 100, 16384, 1 << 20};
	struct eo_snapstream ss;
	struct collect c = {0};
	unsigned char *b, *s;
	size_t n, sn, i;
	int v;

	(void)state;
	b = fake_snapshot(20, &n);
	c.cap = n;
	c.buf = malloc(n);
	for (v = 0; v < 2; v++) {
		s = grpc_stream(b, n, v == 1, &sn);
		for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
			c.len = 0;
			if (decode_all_grpc(s, sn, chunks[i], &c, &ss) != 0)
				fail_msg("chunk %zu: %s", chunks[i], ss.err);
			assert_int_equal(c.len, n);
			assert_memory_equal(c.buf, b, n);
			assert_int_equal(ss.messages, 4);
			assert_int_equal(ss.expected, n - 32);
			assert_string_equal(ss.storage_version, v ? "3.6.0" : "");
			eo_snapstream_free(&ss);
		}
		/* Cut inside the last frame, and cut before the trailer's frame. */
		c.len = 0;
		assert_int_not_equal(decode_all_grpc(s, sn - 10, 4096, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "cut off inside a message"));
		eo_snapstream_free(&ss);
		c.len = 0;
		assert_int_not_equal(decode_all_grpc(s, sn - (v ? 54 : 47), 4096, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "truncated"));
		eo_snapstream_free(&ss);
		free(s);
	}
	/* A compressed frame, an oversized frame, a malformed message. */
	{
		unsigned char z[8] = {1, 0, 0, 0, 1, 0};
		unsigned char big[5] = {0, 0, 0x10, 0, 0};
		unsigned char bad[7] = {0, 0, 0, 0, 2, 0x1a, 0x09}; /* blob longer than the rest */

		c.len = 0;
		assert_int_not_equal(decode_all_grpc(z, 6, 6, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "compressed"));
		eo_snapstream_free(&ss);
		assert_int_not_equal(decode_all_grpc(big, 5, 5, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "longer than"));
		eo_snapstream_free(&ss);
		assert_int_not_equal(decode_all_grpc(bad, 7, 7, &c, &ss), 0);
		assert_non_null(strstr(ss.err, "malformed"));
		eo_snapstream_free(&ss);
	}
	free(c.buf);
	free(b);
}

static void test_stream_lines(void **state)
{
	static const struct {
		const char *line;
		int want; /* 1 data, 0 empty, -1 error */
		size_t outlen;
		uint64_t remaining;
		bool has_remaining;
		const char *err; /* substring */
	} cases[] = {
	    {"{\"result\":{\"remaining_bytes\":\"5\",\"blob\":\"aGVsbG8=\"}}", 1, 5, 5, true, NULL},
	    {"{\"result\":{\"remainingBytes\":\"7\",\"blob\":\"aGk=\"}}", 1, 2, 7, true, NULL},
	    {"{\"result\":{\"blob\":\"aGVsbG8h\",\"version\":\"3.6.0\"}}\r", 1, 6, 0, false, NULL},
	    {"{\"result\":{\"remaining_bytes\":12}}", 1, 0, 12, true, NULL},
	    {"", 0, 0, 0, false, NULL},
	    {"  ", 0, 0, 0, false, NULL},
	    /* 3.4/3.5 (grpc-gateway v1) and 3.6 (v2) stream errors. */
	    {"{\"error\":{\"grpc_code\":14,\"http_code\":503,\"message\":\"etcdserver: no "
	     "leader\",\"http_status\":\"Service Unavailable\"}}",
	     -1, 0, 0, false, "etcdserver: no leader"},
	    {"{\"error\":{\"code\":2,\"message\":\"snapshot failed\",\"details\":[]}}", -1, 0, 0,
	     false, "snapshot failed"},
	    {"{\"result\":{\"blob\":\"a\"}}", -1, 0, 0, false, "base64"},
	    {"{\"result\":{\"blob\":\"!!!!\"}}", -1, 0, 0, false, "base64"},
	    {"{\"result\":{\"blob\":5}}", -1, 0, 0, false, "not a string"},
	    {"{\"result\":{\"remaining_bytes\":\"-1\"}}", -1, 0, 0, false, "remaining_bytes"},
	    {"{\"result\":{\"remaining_bytes\":\"1x\"}}", -1, 0, 0, false, "remaining_bytes"},
	    {"{\"result\":{}", -1, 0, 0, false, "malformed"},
	    {"[1]", -1, 0, 0, false, "not an object"},
	    {"{\"other\":1}", -1, 0, 0, false, "without result"},
	};
	unsigned char out[64];
	char err[256], ver[32];
	uint64_t rem;
	size_t i, n;
	bool has;
	int r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = ver[0] = '\0';
		r = eo_snapstream_decode_line(cases[i].line, strlen(cases[i].line), out,
					      sizeof(out), &n, &rem, &has, ver, sizeof(ver), err,
					      sizeof(err));
		if (r != cases[i].want)
			fail_msg("case %zu (%s): got %d, want %d (%s)", i, cases[i].line, r,
				 cases[i].want, err);
		if (r == 1) {
			assert_int_equal(n, cases[i].outlen);
			assert_int_equal(rem, cases[i].remaining);
			assert_int_equal(has, cases[i].has_remaining);
		}
		if (cases[i].err && !strstr(err, cases[i].err))
			fail_msg("case %zu: error '%s' lacks '%s'", i, err, cases[i].err);
	}
	/* The blob must fit the caller's buffer. */
	assert_int_equal(eo_snapstream_decode_line("{\"result\":{\"blob\":\"aGVsbG8=\"}}", 30, out,
						   3, &n, &rem, &has, NULL, 0, err, sizeof(err)),
			 -1);
}

static void test_stream_limits(void **state)
{
	struct collect c = {.cap = 1 << 20};
	struct eo_snapstream ss;
	char *big;

	(void)state;
	c.buf = malloc(c.cap);
	/* A line longer than the cap is refused, whatever the split. */
	big = malloc(EO_SNAPSTREAM_LINE_MAX + 10);
	memset(big, 'x', EO_SNAPSTREAM_LINE_MAX + 10);
	assert_int_equal(eo_snapstream_init(&ss, collect_sink, &c), 0);
	assert_int_equal(eo_snapstream_feed(&ss, big, 1000), 0);
	assert_int_not_equal(eo_snapstream_feed(&ss, big, EO_SNAPSTREAM_LINE_MAX), 0);
	assert_non_null(strstr(ss.err, "longer than"));
	eo_snapstream_free(&ss);
	/* More bytes than the first message announced. */
	assert_int_equal(eo_snapstream_init(&ss, collect_sink, &c), 0);
	assert_int_not_equal(
	    eo_snapstream_feed(&ss,
			       "{\"result\":{\"remaining_bytes\":\"0\",\"blob\":\"aGVsbG8=\"}}\n"
			       "{\"result\":{\"blob\":\"" /* 40 bytes: more than 32 */
			       "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\"}}\n",
			       140),
	    0);
	assert_non_null(strstr(ss.err, "more bytes than announced"));
	eo_snapstream_free(&ss);
	/* An empty answer. */
	assert_int_equal(eo_snapstream_init(&ss, collect_sink, &c), 0);
	assert_int_not_equal(eo_snapstream_finish(&ss), 0);
	assert_non_null(strstr(ss.err, "empty"));
	eo_snapstream_free(&ss);
	free(big);
	free(c.buf);
}

/* ---- S3 ---------------------------------------------------------------------- */

static void test_s3_url(void **state)
{
	static const struct {
		const char *endpoint, *bucket;
		bool path_style;
		const char *key, *query, *want; /* want NULL: an error */
	} cases[] = {
	    {"http://127.0.0.1:9000", "snaps", true, "my-etcd/s1.db", NULL,
	     "http://127.0.0.1:9000/snaps/my-etcd/s1.db"},
	    {"http://127.0.0.1:9000/", "snaps", true, "s1.db",
	     "uploads=", "http://127.0.0.1:9000/snaps/s1.db?uploads="},
	    {"https://s3.us-east-1.amazonaws.com", "snaps", false, "p/s1.db", NULL,
	     "https://snaps.s3.us-east-1.amazonaws.com/p/s1.db"},
	    {"https://s3.example.com:8443/gw/", "etcd-snapshots", false, "a b+c.db",
	     "partNumber=2&uploadId=x",
	     "https://etcd-snapshots.s3.example.com:8443/gw/a%20b%2Bc.db?partNumber=2&uploadId=x"},
	    {"https://minio.example.com/base", "b.with.dots", true, "k~_.-/x.db", NULL,
	     "https://minio.example.com/base/b.with.dots/k~_.-/x.db"},
	    {"http://[::1]:9000", "snaps", true, "", NULL, "http://[::1]:9000/snaps"},
	    {"https://s3.example.com", "snaps", true, "ü.db", NULL,
	     "https://s3.example.com/snaps/%C3%BC.db"},
	    {"ftp://s3.example.com", "snaps", true, "k", NULL, NULL},
	    {"not a url", "snaps", true, "k", NULL, NULL},
	    {"https://s3.example.com?x=1", "snaps", true, "k", NULL, NULL},
	    {"https://s3.example.com", "Bad_Bucket", true, "k", NULL, NULL},
	    {"https://s3.example.com", "ab", true, "k", NULL, NULL},
	    {"https://s3.example.com", "snaps", true, "/abs", NULL, NULL},
	};
	char url[512], err[256];
	size_t i;
	int r;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		r = eo_s3_object_url(url, sizeof(url), cases[i].endpoint, cases[i].bucket,
				     cases[i].path_style, cases[i].key, cases[i].query, err,
				     sizeof(err));
		if (!cases[i].want) {
			if (r == 0)
				fail_msg("case %zu: accepted as %s", i, url);
			assert_true(err[0] != '\0');
			continue;
		}
		if (r != 0)
			fail_msg("case %zu: %s", i, err);
		assert_string_equal(url, cases[i].want);
	}
	/* Too long for the buffer. */
	assert_int_equal(eo_s3_object_url(url, 20, "http://127.0.0.1:9000", "snaps", true, "k",
					  NULL, err, sizeof(err)),
			 -1);
}

/*
 * Parts numbered in the caller's thread, ETags recorded as uploads finish, in any order: a
 * number not reserved, or recorded twice, is refused.
 */
static void test_s3_mpu_bookkeeping(void **state)
{
	struct eo_s3_mpu m = {0};
	char err[256];
	size_t a = 0, b = 0, i;

	(void)state;
	m.key = strdup("k.db");
	assert_non_null(m.key);
	assert_int_equal(eo_s3_mpu_reserve(&m, &a, err, sizeof(err)), 0);
	assert_int_equal(eo_s3_mpu_reserve(&m, &b, err, sizeof(err)), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 2, "\"e2\"", NULL, err, sizeof(err)), 0);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 2, "\"again\"", NULL, err, sizeof(err)), -1);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 0, "\"x\"", NULL, err, sizeof(err)), -1);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 3, "\"x\"", NULL, err, sizeof(err)), -1);
	assert_null(m.etags[0]); /* part 1 still uploading */
	assert_int_equal(eo_s3_mpu_set_etag(&m, 1, "\"e1\"", NULL, err, sizeof(err)), 0);
	assert_string_equal(m.etags[0], "\"e1\"");
	assert_string_equal(m.etags[1], "\"e2\"");
	/* The etag array grows past its first allocation. */
	for (i = 3; i <= 200; i++) {
		assert_int_equal(eo_s3_mpu_reserve(&m, &a, err, sizeof(err)), 0);
		assert_int_equal(a, i);
	}
	assert_string_equal(m.etags[1], "\"e2\"");
	eo_s3_mpu_clear(&m);
	assert_null(m.key);
}

/* x-amz-checksum-crc32 values: base64 of the big-endian IEEE CRC-32, as S3 computes it. */
static void test_s3_checksum_crc32(void **state)
{
	static const struct {
		const char *body, *want;
	} cases[] = {
	    {"", "AAAAAA=="},
	    {"a", "6Le+Qw=="},
	    {"123456789", "y/Q5Jg=="}, /* the CRC-32 check value 0xCBF43926 */
	    {"The quick brown fox jumps over the lazy dog", "QU+jOQ=="},
	};
	char out[EO_S3_CRC32_LEN + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(out, 'x', sizeof(out));
		assert_int_equal(
		    eo_s3_checksum_crc32(cases[i].body, strlen(cases[i].body), out, sizeof(out)),
		    0);
		assert_string_equal(out, cases[i].want);
	}
	/* One changed byte changes the value. */
	assert_int_equal(eo_s3_checksum_crc32("123456780", 9, out, sizeof(out)), 0);
	assert_string_not_equal(out, "y/Q5Jg==");
	/* No room for the 8 characters and the NUL. */
	assert_int_equal(eo_s3_checksum_crc32("abc", 3, out, EO_S3_CRC32_LEN), -1);
}

/* The CompleteMultipartUpload body, with and without each part's CRC-32. */
static void test_s3_complete_xml(void **state)
{
	char *etags[] = {"\"e1\"", "\"e2\""}, *crcs[] = {"AAAAAA==", "y/Q5Jg=="};
	char *missing_etag[] = {"\"e1\"", NULL}, *missing_crc[] = {"AAAAAA==", NULL};
	static const char plain[] = "<CompleteMultipartUpload>"
				    "<Part><ETag>\"e1\"</ETag><PartNumber>1</PartNumber></Part>"
				    "<Part><ETag>\"e2\"</ETag><PartNumber>2</PartNumber></Part>"
				    "</CompleteMultipartUpload>";
	static const char crc[] = "<CompleteMultipartUpload>"
				  "<Part><ChecksumCRC32>AAAAAA==</ChecksumCRC32><ETag>\"e1\"</ETag>"
				  "<PartNumber>1</PartNumber></Part>"
				  "<Part><ChecksumCRC32>y/Q5Jg==</ChecksumCRC32><ETag>\"e2\"</ETag>"
				  "<PartNumber>2</PartNumber></Part>"
				  "</CompleteMultipartUpload>";
	const struct {
		size_t nparts, cap;
		char *const *etags, *const *crcs;
		const char *want; /* NULL: refused */
	} cases[] = {
	    {2, 1024, etags, NULL, plain},
	    {2, 1024, etags, crcs, crc},
	    {0, 1024, etags, crcs, "<CompleteMultipartUpload></CompleteMultipartUpload>"},
	    {2, 1024, missing_etag, NULL, NULL},     /* part 2 still uploading */
	    {2, 1024, etags, missing_crc, NULL},     /* part 2 without its checksum */
	    {2, sizeof(crc) - 1, etags, crcs, NULL}, /* one byte short for the NUL */
	    {2, sizeof(crc), etags, crcs, crc},	     /* exactly enough */
	};
	char buf[1024], err[128];
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = eo_s3_complete_xml(buf, cases[i].cap, &len, cases[i].nparts,
					    cases[i].etags, cases[i].crcs, err, sizeof(err));

		if (!cases[i].want) {
			assert_int_equal(rc, -1);
			assert_true(err[0] != '\0');
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(buf, cases[i].want);
		assert_int_equal(len, strlen(cases[i].want));
	}
}

/* With CRC-32 parts, a part is only recorded with its checksum, and kept beside its ETag. */
static void test_s3_mpu_crc_bookkeeping(void **state)
{
	struct eo_s3_mpu m = {0};
	char err[256];
	size_t a = 0;

	(void)state;
	m.key = strdup("k.db");
	assert_non_null(m.key);
	m.crc32 = true;
	assert_int_equal(eo_s3_mpu_reserve(&m, &a, err, sizeof(err)), 0);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 1, "\"e1\"", NULL, err, sizeof(err)), -1);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 1, "\"e1\"", "", err, sizeof(err)), -1);
	assert_null(m.etags[0]);
	assert_int_equal(eo_s3_mpu_set_etag(&m, 1, "\"e1\"", "y/Q5Jg==", err, sizeof(err)), 0);
	assert_string_equal(m.etags[0], "\"e1\"");
	assert_string_equal(m.crcs[0], "y/Q5Jg==");
	eo_s3_mpu_clear(&m);
	assert_null(m.key);
}

static void test_s3_part_size(void **state)
{
	const uint64_t mib = 1024 * 1024, gib = 1024 * mib;
	static const struct {
		uint64_t expected, requested, want;
	} cases[] = {
	    {0, 0, 6 * 1024 * 1024},		     /* unknown size: the default */
	    {100 * 1024 * 1024, 0, 6 * 1024 * 1024}, /* fits */
	    {100 * 1024 * 1024, 1, 5 * 1024 * 1024}, /* raised to S3's minimum */
	    {0, 6ull << 30, 5ull << 30},	     /* lowered to S3's maximum */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(eo_s3_part_size(cases[i].expected, cases[i].requested),
				 cases[i].want);
	/* 200 GiB in 6 MiB parts would need 34,134: raised to whole MiB within 10,000. */
	assert_true(eo_s3_part_size(200 * gib, 0) * EO_S3_MAX_PARTS >= 200 * gib);
	assert_int_equal(eo_s3_part_size(200 * gib, 0) % mib, 0);
	assert_int_equal(eo_s3_part_size(200 * gib, 0), 21 * mib);
	/* Exactly 10,000 parts of the requested size still fits... */
	assert_int_equal(eo_s3_part_size(10000 * 5 * mib, 5 * mib), 5 * mib);
	/* ...one byte more does not. */
	assert_int_equal(eo_s3_part_size(10000 * 5 * mib + 1, 5 * mib), 6 * mib);
	/* 8 GiB (etcd's largest quota) in 5 MiB parts: 1,639 parts, no change. */
	assert_int_equal(eo_s3_part_size(8 * gib, 5 * mib), 5 * mib);
	/* Beyond 50 TB the part size caps at 5 GiB. */
	assert_int_equal(eo_s3_part_size(UINT64_MAX / 2, 0), 5 * gib);
}

static void test_s3_xml(void **state)
{
	static const char init[] =
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult "
	    "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>b</Bucket><Key>k</Key>"
	    "<UploadId>YjQ1&amp;Zm==</UploadId></InitiateMultipartUploadResult>";
	static const char error[] =
	    "<Error><Code>AccessDenied</Code><Message>Access &quot;denied&quot; &lt;x&gt;</Message>"
	    "</Error>";
	char out[64];

	(void)state;
	assert_int_equal(eo_s3_xml_value(init, strlen(init), "UploadId", out, sizeof(out)), 0);
	assert_string_equal(out, "YjQ1&Zm==");
	assert_int_equal(eo_s3_xml_value(error, strlen(error), "Code", out, sizeof(out)), 0);
	assert_string_equal(out, "AccessDenied");
	assert_int_equal(eo_s3_xml_value(error, strlen(error), "Message", out, sizeof(out)), 0);
	assert_string_equal(out, "Access \"denied\" <x>");
	assert_int_equal(eo_s3_xml_value(error, strlen(error), "UploadId", out, sizeof(out)), -1);
	assert_int_equal(eo_s3_xml_value(error, strlen(error), "Code", out, 5), -1);
	assert_int_equal(eo_s3_xml_value("<Code>open", 10, "Code", out, sizeof(out)), -1);
}

static void test_s3_credentials(void **state)
{
	char dir[] = "/tmp/eo-creds-XXXXXX", path[256], ak[EO_S3_CRED_MAX], sk[EO_S3_CRED_MAX],
	     tok[EO_S3_CRED_MAX], err[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* A mounted Secret: values with the trailing newline kubectl often leaves. */
	tu_write_file(dir, "AWS_ACCESS_KEY_ID", "AKIDEXAMPLE\n");
	assert_int_equal(eo_s3_load_credentials(dir, ak, sk, tok, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "AWS_SECRET_ACCESS_KEY"));
	tu_write_file(dir, "AWS_SECRET_ACCESS_KEY", "s3cr3t");
	assert_int_equal(eo_s3_load_credentials(dir, ak, sk, tok, err, sizeof(err)), 0);
	assert_string_equal(ak, "AKIDEXAMPLE");
	assert_string_equal(sk, "s3cr3t");
	assert_string_equal(tok, "");
	/* An empty value is an error that names the file, not the value. */
	tu_write_file(dir, "AWS_SECRET_ACCESS_KEY", "\n");
	assert_int_equal(eo_s3_load_credentials(dir, ak, sk, tok, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));
	snprintf(path, sizeof(path), "%s/AWS_SECRET_ACCESS_KEY", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/AWS_ACCESS_KEY_ID", dir);
	unlink(path);
	rmdir(dir);
	/* The environment. */
	unsetenv("AWS_SECRET_ACCESS_KEY");
	setenv("AWS_ACCESS_KEY_ID", "envak", 1);
	assert_int_equal(eo_s3_load_credentials(NULL, ak, sk, tok, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "AWS_SECRET_ACCESS_KEY"));
	setenv("AWS_SECRET_ACCESS_KEY", "envsk", 1);
	setenv("AWS_SESSION_TOKEN", "tok", 1);
	assert_int_equal(eo_s3_load_credentials(NULL, ak, sk, tok, err, sizeof(err)), 0);
	assert_string_equal(ak, "envak");
	assert_string_equal(sk, "envsk");
	assert_string_equal(tok, "tok");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SESSION_TOKEN");
}

/* ---- the overwrite guard -------------------------------------------------------- */

struct s3_seen {
	char uri[512];
	int requests;
};

static void s3_handler(void *ud, const struct eo_kube_fake_request *rq,
		       struct eo_kube_fake_response *rs)
{
	struct s3_seen *seen = ud;

	snprintf(seen->uri, sizeof(seen->uri), "%s", rq->raw_uri);
	seen->requests++;
	rs->status = 404;
}

/*
 * An S3 request goes to the store as written: the key's dot segments are not squashed
 * (CURLOPT_PATH_AS_IS: "../" would otherwise move it to another prefix or bucket), and no
 * proxy from the environment is used (the one named here listens nowhere).
 */
static void test_s3_path_as_is_no_proxy(void **state)
{
	struct s3_seen seen = {0};
	eo_kube_fake *f = eo_kube_fake_start(s3_handler, &seen);
	struct eo_s3_config c = {.bucket = "snaps",
				 .path_style = true,
				 .access_key = "AK",
				 .secret_key = "SK",
				 .insecure = true,
				 .connect_timeout_ms = 2000,
				 .stall_timeout_s = 3};
	struct eo_s3_head h;
	eo_s3 *s = NULL;
	char err[256];

	(void)state;
	assert_non_null(f);
	c.endpoint = eo_kube_fake_url(f);
	if (eo_s3_new(&c, &s, err, sizeof(err)) != 0)
		fail_msg("eo_s3_new: %s", err);
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	setenv("ALL_PROXY", "http://127.0.0.1:1", 1);
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	assert_int_equal(eo_s3_head(s, "team/./x.db", &h, err, sizeof(err)), 0);
	unsetenv("http_proxy");
	unsetenv("ALL_PROXY");
	assert_int_equal(seen.requests, 1);
	assert_string_equal(seen.uri, "/snaps/team/./x.db");
	assert_false(h.exists);
	eo_s3_free(s);
	eo_kube_fake_stop(f);
}

static void test_guard_table(void **state)
{
	static const struct {
		enum eo_guard_target target;
		const char *existing, *ours;
		enum eo_guard_decision want;
		const char *msg; /* substring of the refusal */
	} cases[] = {
	    {EO_TARGET_ABSENT, NULL, "u1", EO_GUARD_WRITE_NEW, NULL},
	    {EO_TARGET_PRESENT, "u1", "u1", EO_GUARD_OVERWRITE_OWN, NULL},
	    {EO_TARGET_PRESENT, "u2", "u1", EO_GUARD_REFUSE, "another snapshot (UID u2)"},
	    {EO_TARGET_PRESENT, "", "u1", EO_GUARD_REFUSE, "no UID stamp"},
	    {EO_TARGET_PRESENT, NULL, "u1", EO_GUARD_REFUSE, "no UID stamp"},
	    {EO_TARGET_PRESENT, "u1-suffix", "u1", EO_GUARD_REFUSE, "another snapshot"},
	    {EO_TARGET_FORBIDDEN, NULL, "u1", EO_GUARD_REFUSE, "s3:ListBucket"},
	    {EO_TARGET_ERROR, NULL, "u1", EO_GUARD_REFUSE, "cannot tell"},
	    {EO_TARGET_ABSENT, NULL, "", EO_GUARD_REFUSE, "no snapshot UID"},
	    {EO_TARGET_PRESENT, "", NULL, EO_GUARD_REFUSE, "no snapshot UID"},
	};
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		msg[0] = '\0';
		assert_int_equal(eo_guard_decide(cases[i].target, cases[i].existing, cases[i].ours,
						 "s3://b/k.db", msg, sizeof(msg)),
				 cases[i].want);
		if (cases[i].msg && !strstr(msg, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, msg, cases[i].msg);
		if (cases[i].want == EO_GUARD_REFUSE)
			assert_non_null(strstr(msg, "s3://b/k.db"));
	}
}

/* ---- which member the snapshot agent streams from ---------------------------------- */

#define LID 0xaull /* the leader's member ID */
#define CID 0xc1ull

static struct eo_snap_member answer(uint64_t id, uint64_t leader, uint64_t applied)
{
	return (struct eo_snap_member){.answered = true,
				       .cluster_id = CID,
				       .member_id = id,
				       .leader = leader,
				       .raft_term = 3,
				       .raft_index = applied,
				       .raft_applied_index = applied};
}

static void test_member_choice(void **state)
{
	struct eo_snap_member leader = answer(LID, LID, 100), old_leader = answer(0xb, 0xb, 90);
	struct eo_snap_member m[3];
	struct {
		struct eo_snap_member c;
		const struct eo_snap_member *leader;
		bool want;
		const char *why;
	} T[] = {
	    {answer(LID, LID, 100), &leader, true, NULL},      /* the leader itself */
	    {answer(0xb, LID, 100), &leader, true, NULL},      /* caught up */
	    {answer(0xb, LID, 150), &leader, true, NULL},      /* ahead of the first read */
	    {answer(0xb, LID, 99), &leader, false, "lagging"}, /* one entry behind */
	    {answer(0xb, 0, 100), &leader, false, "knows no leader"},
	    {answer(0xb, 0xd, 100), &leader, false, "follows leader d"},
	    {answer(0xb, LID, 0), &leader, false, "no applied index"}, /* none reported */
	    {answer(0xb, LID, 100), NULL, false, "not among the endpoints"},
	    {answer(LID, LID, 100), NULL, false, "not among the endpoints"},
	    {{.answered = false}, &leader, false, "did not answer"},
	};
	char why[512];
	size_t i;

	(void)state;
	T[9].c.member_id = 0xb;
	for (i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
		why[0] = '\0';
		if (eo_snap_member_fresh(&T[i].c, T[i].leader, why, sizeof(why)) != T[i].want)
			fail_msg("row %zu: want %d (%s)", i, T[i].want, why);
		if (T[i].why != NULL && strstr(why, T[i].why) == NULL)
			fail_msg("row %zu: '%s' lacks '%s'", i, why, T[i].why);
	}
	/* A learner, and a member of another cluster, are refused even when current. */
	m[0] = answer(0xb, LID, 100);
	m[0].is_learner = true;
	assert_false(eo_snap_member_fresh(&m[0], &leader, why, sizeof(why)));
	assert_non_null(strstr(why, "learner"));
	m[0] = answer(0xb, LID, 100);
	m[0].cluster_id = 0xf0;
	assert_false(eo_snap_member_fresh(&m[0], &leader, why, sizeof(why)));
	assert_non_null(strstr(why, "cluster f0"));

	/* The leader is the member that names itself; an old leader of a lower term loses. */
	m[0] = answer(0xb, LID, 100);
	m[1] = old_leader;
	m[1].raft_term = 2;
	m[2] = leader;
	assert_int_equal(eo_snap_find_leader(m, 3), 2);
	m[2].answered = false;
	assert_int_equal(eo_snap_find_leader(m, 3), 1);
	m[1].answered = false;
	assert_int_equal(eo_snap_find_leader(m, 3), -1);
	m[0].leader = 0;
	assert_int_equal(eo_snap_find_leader(m, 1), -1);
}

/* ---- the restore's expected checksum ------------------------------------------------ */

#define SHA_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SHA_B "f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_checksum_check(void **state)
{
	char why[512];

	(void)state;
	assert_int_equal(eo_checksum_check(NULL, SHA_A, why, sizeof(why)), 0);
	assert_int_equal(eo_checksum_check("", SHA_A, why, sizeof(why)), 0);
	assert_int_equal(eo_checksum_check("sha256:" SHA_A, SHA_A, why, sizeof(why)), 0);
	why[0] = '\0';
	assert_int_equal(eo_checksum_check("sha256:" SHA_B, SHA_A, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "sha256:" SHA_A));
	assert_non_null(strstr(why, "sha256:" SHA_B));
	/* Not the form status.artifact.checksum has: refused, never "close enough". */
	assert_int_equal(eo_checksum_check(SHA_A, SHA_A, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not sha256:"));
	assert_int_equal(eo_checksum_check("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef"
					   "0123456789abcdef",
					   "0123456789abcdef0123456789abcdef0123456789abcdef"
					   "0123456789abcdef",
					   why, sizeof(why)),
			 -1);
	assert_int_equal(eo_checksum_check("sha256:" SHA_A "0", SHA_A, why, sizeof(why)), -1);
}

/* ---- plain-HTTP S3 endpoints ------------------------------------------------------- */

static void test_s3_endpoint_allowed(void **state)
{
	char err[512];

	(void)state;
	assert_int_equal(eo_s3_endpoint_allowed("https://s3.example.com", false, err, sizeof(err)),
			 0);
	assert_int_equal(eo_s3_endpoint_allowed("http://minio:9000", true, err, sizeof(err)), 0);
	err[0] = '\0';
	assert_int_equal(eo_s3_endpoint_allowed("http://minio:9000", false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "http://minio:9000"));
	assert_non_null(strstr(err, "insecure: true"));
	assert_int_equal(eo_s3_endpoint_allowed("HTTP://minio:9000", false, err, sizeof(err)), -1);
}

/* ---- the file store ------------------------------------------------------------- */

static int count_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_filestore(void **state)
{
	char dir[] = "/tmp/eo-fs-XXXXXX", err[512], uid[64], path[256];
	struct eo_filestore_writer w;
	struct stat st;
	uint64_t free_bytes = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(eo_filestore_probe(dir, "s.db", uid, sizeof(uid), err, sizeof(err)),
			 EO_TARGET_ABSENT);
	/* While writing only a hidden temporary file exists. */
	assert_int_equal(eo_filestore_begin(&w, dir, "s.db", err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_write(&w, "hello", 5, err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_probe(dir, "s.db", uid, sizeof(uid), err, sizeof(err)),
			 EO_TARGET_ABSENT);
	assert_int_equal(count_entries(dir), 1);
	eo_filestore_abort(&w);
	assert_int_equal(count_entries(dir), 0);
	/* A commit makes it visible with its stamp. */
	assert_int_equal(eo_filestore_begin(&w, dir, "s.db", err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_write(&w, "hello", 5, err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_commit(&w, "uid-1", false, err, sizeof(err)), 0);
	eo_filestore_abort(&w); /* harmless after a commit */
	assert_int_equal(eo_filestore_probe(dir, "s.db", uid, sizeof(uid), err, sizeof(err)),
			 EO_TARGET_PRESENT);
	assert_string_equal(uid, "uid-1");
	snprintf(path, sizeof(path), "%s/s.db", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 5);
	/* Without replace an existing file is never clobbered. */
	assert_int_equal(eo_filestore_begin(&w, dir, "s.db", err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_write(&w, "other!", 6, err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_commit(&w, NULL, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "appeared meanwhile"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 5);
	assert_int_equal(count_entries(dir), 2); /* s.db and s.db.uid, no temporary file */
	/* With replace (our own retry) it is. */
	assert_int_equal(eo_filestore_begin(&w, dir, "s.db", err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_write(&w, "again!!", 7, err, sizeof(err)), 0);
	assert_int_equal(eo_filestore_commit(&w, "uid-1", true, err, sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 7);
	/* A file without a stamp is present with no UID. */
	tu_write_file(dir, "foreign.db", "x");
	snprintf(path, sizeof(path), "%s/foreign.db", dir);
	assert_int_equal(eo_filestore_probe(dir, "foreign.db", uid, sizeof(uid), err, sizeof(err)),
			 EO_TARGET_PRESENT);
	assert_string_equal(uid, "");
	/* Names with a '/' are refused; a missing directory is an error. */
	assert_int_equal(eo_filestore_begin(&w, dir, "../x", err, sizeof(err)), -1);
	assert_int_equal(eo_filestore_begin(&w, "/nonexistent/eo", "x", err, sizeof(err)), -1);
	assert_int_equal(eo_fs_free_bytes(dir, &free_bytes, err, sizeof(err)), 0);
	assert_true(free_bytes > 0);
	unlink(path);
	snprintf(path, sizeof(path), "%s/s.db", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/s.db.uid", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

/*
 * The data guard (agent/dataguard.h): the decision table, then the probe on real directories:
 * a data dir with a member/wal/ segment (*.wal) starts, one without refuses when a member ID is
 * given and starts when none is (a member that never joined may start empty).
 */
static void test_data_guard_decision(void **state)
{
	static const struct {
		const char *id;
		enum eo_data_wal wal;
		enum eo_data_guard_decision want;
	} cases[] = {
	    {"8e9e05c52164694d", EO_DATA_WAL_PRESENT, EO_DATA_GUARD_START},
	    {"8e9e05c52164694d", EO_DATA_WAL_ABSENT, EO_DATA_GUARD_REFUSE_NO_WAL},
	    {"8e9e05c52164694d", EO_DATA_WAL_UNKNOWN, EO_DATA_GUARD_REFUSE_UNKNOWN},
	    {NULL, EO_DATA_WAL_ABSENT, EO_DATA_GUARD_START},
	    {"", EO_DATA_WAL_ABSENT, EO_DATA_GUARD_START},
	    {NULL, EO_DATA_WAL_PRESENT, EO_DATA_GUARD_START},
	    {NULL, EO_DATA_WAL_UNKNOWN, EO_DATA_GUARD_START},
	};
	char msg[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(eo_data_guard_decide("demo-abcde", cases[i].id, "/var/lib/etcd",
						      cases[i].wal, "EACCES", msg, sizeof(msg)),
				 cases[i].want);
		if (cases[i].want == EO_DATA_GUARD_START)
			assert_string_equal(msg, "");
	}
	assert_int_equal(eo_data_guard_decide("demo-abcde", "8e9e05c52164694d", "/var/lib/etcd",
					      EO_DATA_WAL_ABSENT, NULL, msg, sizeof(msg)),
			 EO_DATA_GUARD_REFUSE_NO_WAL);
	assert_non_null(strstr(msg, "data directory has no WAL"));
	assert_non_null(strstr(msg, "demo-abcde"));
	assert_non_null(strstr(msg, "8e9e05c52164694d"));
	assert_int_equal(EO_DATA_GUARD_EXIT_NO_WAL, 3);
}

static void test_data_guard_probe(void **state)
{
	char root[64], p[256], err[256];
	FILE *f = NULL;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/eo-guard-XXXXXX");
	assert_non_null(mkdtemp(root));
	/* empty (a wiped volume) */
	assert_int_equal(eo_data_guard_probe(root, err, sizeof(err)), EO_DATA_WAL_ABSENT);
	snprintf(p, sizeof(p), "%s/missing", root);
	assert_int_equal(eo_data_guard_probe(p, err, sizeof(err)), EO_DATA_WAL_ABSENT);
	/* member/ and an empty member/wal: etcd would start a new member there */
	snprintf(p, sizeof(p), "%s/member", root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(eo_data_guard_probe(root, err, sizeof(err)), EO_DATA_WAL_ABSENT);
	snprintf(p, sizeof(p), "%s/member/wal", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/member/wal/0.tmp", root);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_int_equal(eo_data_guard_probe(root, err, sizeof(err)), EO_DATA_WAL_ABSENT);
	/* a segment */
	snprintf(p, sizeof(p), "%s/member/wal/0000000000000000-0000000000000000.wal", root);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	assert_int_equal(eo_data_guard_probe(root, err, sizeof(err)), EO_DATA_WAL_PRESENT);
	/* member/wal a file, not a directory */
	snprintf(p, sizeof(p), "rm -rf %s/member/wal && touch %s/member/wal", root, root);
	assert_int_equal(system(p), 0);
	assert_int_equal(eo_data_guard_probe(root, err, sizeof(err)), EO_DATA_WAL_ABSENT);
	snprintf(p, sizeof(p), "rm -rf %s", root);
	assert_int_equal(system(p), 0);
}

TU_MAIN(test_integrity, test_integrity_file, test_stream_roundtrip, test_stream_grpc,
	test_stream_lines, test_stream_limits, test_s3_url, test_s3_part_size,
	test_s3_mpu_bookkeeping, test_s3_checksum_crc32, test_s3_complete_xml,
	test_s3_mpu_crc_bookkeeping, test_s3_xml, test_s3_credentials, test_guard_table,
	test_s3_path_as_is_no_proxy, test_data_guard_decision, test_data_guard_probe,
	test_member_choice, test_checksum_check, test_s3_endpoint_allowed, test_filestore)
