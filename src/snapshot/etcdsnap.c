/* Reading a snapshot from one etcd member over gRPC (etcdsnap.h). */
#include "snapshot/etcdsnap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

/* ---- decoding -------------------------------------------------------------- */

static bool parse_u64_field(const json_t *v, uint64_t *out)
{
	const char *s, *end;
	char *e = NULL;
	unsigned long long x;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	end = s + json_string_length(v);
	if (s == end || *s < '0' || *s > '9')
		return false;
	x = strtoull(s, &e, 10);
	if (e != end)
		return false;
	*out = x;
	return true;
}

static int b64_decode(const char *in, size_t len, unsigned char *out, size_t outcap, size_t *outlen)
{
	int n, pad = 0;

	*outlen = 0;
	if (len == 0)
		return 0;
	if (len % 4 != 0 || len / 4 * 3 > outcap || len > (size_t)INT32_MAX)
		return -1;
	n = EVP_DecodeBlock(out, (const unsigned char *)in, (int)len);
	if (n < 0)
		return -1;
	if (in[len - 1] == '=')
		pad++;
	if (in[len - 2] == '=')
		pad++;
	*outlen = (size_t)n - (size_t)pad;
	return 0;
}

int eo_snapstream_decode_line(const char *line, size_t len, unsigned char *out, size_t outcap,
			      size_t *outlen, uint64_t *remaining, bool *has_remaining,
			      char *version, size_t versioncap, char *err, size_t errcap)
{
	json_t *root, *res, *blob, *rem, *ver, *e, *msg;
	json_error_t je;
	int rc = -1;

	*outlen = 0;
	*has_remaining = false;
	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return 0;
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(root)) {
		snprintf(err, errcap, "snapshot stream: malformed message: %s",
			 root ? "not an object" : je.text);
		goto out;
	}
	e = json_object_get(root, "error");
	if (e) {
		msg = json_object_get(e, "message");
		snprintf(err, errcap, "etcd aborted the snapshot stream: %s",
			 json_is_string(msg) ? json_string_value(msg) : "(no message)");
		goto out;
	}
	res = json_object_get(root, "result");
	if (!json_is_object(res)) {
		snprintf(err, errcap, "snapshot stream: message without result");
		goto out;
	}
	blob = json_object_get(res, "blob");
	if (blob && !json_is_string(blob)) {
		snprintf(err, errcap, "snapshot stream: blob is not a string");
		goto out;
	}
	if (blob && b64_decode(json_string_value(blob), json_string_length(blob), out, outcap,
			       outlen) != 0) {
		snprintf(err, errcap,
			 "snapshot stream: blob is not valid base64 of at most %zu bytes", outcap);
		goto out;
	}
	rem = json_object_get(res, "remaining_bytes");
	if (!rem)
		rem = json_object_get(res, "remainingBytes");
	*remaining = 0;
	if (rem) {
		if (!parse_u64_field(rem, remaining)) {
			snprintf(err, errcap, "snapshot stream: remaining_bytes is not a number");
			goto out;
		}
		*has_remaining = true;
	}
	ver = json_object_get(res, "version");
	if (version && versioncap > 0 && json_is_string(ver))
		snprintf(version, versioncap, "%s", json_string_value(ver));
	rc = 1;
out:
	json_decref(root);
	return rc;
}

/* A protobuf varint at *p (before end); 0, or -1 when cut or longer than 10 bytes. */
static int pb_varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		v |= (uint64_t)(**p & 0x7f) << shift;
		if ((*(*p)++ & 0x80) == 0) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

int eo_snapstream_decode_pb(const unsigned char *p, size_t n, const unsigned char **blob,
			    size_t *bloblen, uint64_t *remaining, bool *has_remaining,
			    char *version, size_t versioncap, char *err, size_t errcap)
{
	const unsigned char *end = p + n;
	uint64_t tag, v;

	*blob = NULL;
	*bloblen = 0;
	*remaining = 0;
	*has_remaining = false;
	while (p < end) {
		if (pb_varint(&p, end, &tag) != 0)
			goto bad;
		switch (tag & 7) {
		case 0: /* varint */
			if (pb_varint(&p, end, &v) != 0)
				goto bad;
			if (tag >> 3 == 2) {
				*remaining = v;
				*has_remaining = true;
			}
			break;
		case 2: /* length-delimited */
			if (pb_varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
				goto bad;
			if (tag >> 3 == 3) {
				*blob = p;
				*bloblen = (size_t)v;
			} else if (tag >> 3 == 4 && version != NULL && versioncap > 0) {
				snprintf(version, versioncap, "%.*s",
					 (int)(v < versioncap ? v : versioncap - 1),
					 (const char *)p);
			}
			p += v;
			break;
		case 1: /* 64-bit */
			if (end - p < 8)
				goto bad;
			p += 8;
			break;
		case 5: /* 32-bit */
			if (end - p < 4)
				goto bad;
			p += 4;
			break;
		default:
			goto bad;
		}
	}
	return 1;
bad:
	snprintf(err, errcap, "snapshot stream: malformed SnapshotResponse message");
	return -1;
}

/* The gRPC decoder points into its frame buffer and needs no blob buffer of its own. */
static int snapstream_init(struct eo_snapstream *s, eo_snap_sink_fn sink, void *ud, bool grpc)
{
	memset(s, 0, sizeof(*s));
	s->grpc = grpc;
	s->cap = EO_SNAPSTREAM_LINE_MAX;
	s->line = malloc(s->cap);
	if (!grpc) {
		s->blob_cap = EO_SNAPSTREAM_LINE_MAX / 4 * 3;
		s->blob = malloc(s->blob_cap);
	}
	s->sink = sink;
	s->ud = ud;
	if (!s->line || (!grpc && !s->blob)) {
		eo_snapstream_free(s);
		return -1;
	}
	return 0;
}

int eo_snapstream_init_grpc(struct eo_snapstream *s, eo_snap_sink_fn sink, void *ud)
{
	return snapstream_init(s, sink, ud, true);
}

int eo_snapstream_init(struct eo_snapstream *s, eo_snap_sink_fn sink, void *ud)
{
	return snapstream_init(s, sink, ud, false);
}

void eo_snapstream_free(struct eo_snapstream *s)
{
	free(s->line);
	free(s->blob);
	s->line = NULL;
	s->blob = NULL;
}

/* One message's bytes: the announced size is checked, then the sink gets them. */
static int handle_data(struct eo_snapstream *s, const unsigned char *blob, size_t n,
		       uint64_t remaining)
{
	if (s->messages++ == 0) {
		/* The first message announces the database size. */
		if (remaining > UINT64_MAX - n) {
			snprintf(s->err, sizeof(s->err), "snapshot stream: absurd remaining_bytes");
			return -1;
		}
		s->expected = n + remaining;
		s->have_expected = true;
	}
	if (s->bytes + n > s->expected + EO_SNAP_HASH_LEN) {
		snprintf(s->err, sizeof(s->err),
			 "snapshot stream: more bytes than announced (%llu announced)",
			 (unsigned long long)s->expected);
		return -1;
	}
	s->bytes += n;
	if (n > 0 && s->sink(s->ud, blob, n, s->err, sizeof(s->err)) != 0)
		return -1;
	return 0;
}

static int handle_line(struct eo_snapstream *s, const char *line, size_t len)
{
	uint64_t remaining;
	bool has_rem;
	size_t n;
	int r;

	r = eo_snapstream_decode_line(line, len, s->blob, s->blob_cap, &n, &remaining, &has_rem,
				      s->storage_version, sizeof(s->storage_version), s->err,
				      sizeof(s->err));
	if (r <= 0)
		return r;
	return handle_data(s, s->blob, n, remaining);
}

static int handle_frame(struct eo_snapstream *s, const unsigned char *p, size_t n)
{
	const unsigned char *blob;
	uint64_t remaining;
	bool has_rem;
	size_t len;

	if (eo_snapstream_decode_pb(p, n, &blob, &len, &remaining, &has_rem, s->storage_version,
				    sizeof(s->storage_version), s->err, sizeof(s->err)) != 1)
		return -1;
	return handle_data(s, blob, len, remaining);
}

/* gRPC: 1 byte compressed flag, 4 bytes big-endian length, the message. */
static int feed_grpc(struct eo_snapstream *s, const unsigned char *p, size_t n)
{
	const unsigned char *h = (const unsigned char *)s->line;
	size_t take;

	while (n > 0) {
		if (s->len < 5) {
			take = 5 - s->len < n ? 5 - s->len : n;
			memcpy(s->line + s->len, p, take);
			s->len += take;
			p += take;
			n -= take;
			if (s->len < 5)
				break;
			if (h[0] != 0) {
				snprintf(
				    s->err, sizeof(s->err),
				    "snapshot stream: compressed gRPC message (not asked for)");
				return -1;
			}
			s->frame = (uint32_t)h[1] << 24 | (uint32_t)h[2] << 16 |
				   (uint32_t)h[3] << 8 | (uint32_t)h[4];
			if (s->frame > s->cap - 5) {
				snprintf(s->err, sizeof(s->err),
					 "snapshot stream: message longer than %d bytes",
					 EO_SNAPSTREAM_LINE_MAX - 5);
				return -1;
			}
			if (n >= s->frame) {
				/* The whole message is in the input: no copy. */
				if (handle_frame(s, p, s->frame) != 0)
					return -1;
				p += s->frame;
				n -= s->frame;
				s->len = 0;
				continue;
			}
		}
		take = 5 + (size_t)s->frame - s->len;
		take = take < n ? take : n;
		memcpy(s->line + s->len, p, take);
		s->len += take;
		p += take;
		n -= take;
		if (s->len == 5 + (size_t)s->frame) {
			if (handle_frame(s, h + 5, s->frame) != 0)
				return -1;
			s->len = 0;
		}
	}
	return 0;
}

int eo_snapstream_feed(struct eo_snapstream *s, const char *p, size_t n)
{
	const char *nl;
	size_t take;

	if (s->failed)
		return -1;
	if (s->grpc) {
		if (feed_grpc(s, (const unsigned char *)p, n) != 0)
			goto fail;
		return 0;
	}
	while (n > 0) {
		nl = memchr(p, '\n', n);
		take = nl ? (size_t)(nl - p) : n;
		if (s->len == 0 && nl) {
			/* A whole line in the input: no copy. */
			if (handle_line(s, p, take) != 0)
				goto fail;
		} else {
			if (take > s->cap - s->len) {
				snprintf(s->err, sizeof(s->err),
					 "snapshot stream: message longer than %d bytes",
					 EO_SNAPSTREAM_LINE_MAX);
				goto fail;
			}
			memcpy(s->line + s->len, p, take);
			s->len += take;
			if (nl) {
				if (handle_line(s, s->line, s->len) != 0)
					goto fail;
				s->len = 0;
			}
		}
		if (!nl)
			break;
		p = nl + 1;
		n -= take + 1;
	}
	return 0;
fail:
	s->failed = true;
	return -1;
}

int eo_snapstream_finish(struct eo_snapstream *s)
{
	if (s->failed)
		return -1;
	if (s->grpc && s->len > 0) {
		snprintf(s->err, sizeof(s->err),
			 "snapshot stream: cut off inside a message (%zu bytes of it)", s->len);
		s->failed = true;
		return -1;
	}
	if (s->len > 0 && handle_line(s, s->line, s->len) != 0) {
		/* A last line without its newline that does not parse: cut off. */
		s->failed = true;
		return -1;
	}
	s->len = 0;
	if (s->messages == 0) {
		snprintf(s->err, sizeof(s->err), "snapshot stream: empty response");
		return -1;
	}
	if (s->bytes != s->expected + EO_SNAP_HASH_LEN) {
		snprintf(s->err, sizeof(s->err),
			 "snapshot stream ended after %llu of %llu bytes (database plus 32-byte "
			 "integrity hash): truncated",
			 (unsigned long long)s->bytes,
			 (unsigned long long)(s->expected + EO_SNAP_HASH_LEN));
		return -1;
	}
	return 0;
}

/* ---- fetching --------------------------------------------------------------- */

#define GRPC_PATH "/etcdserverpb.Maintenance/Snapshot"
#define FETCH_BUF (256 * 1024)

struct fetch {
	CURL *h;
	struct eo_snapstream ss;
	struct eo_snapcheck check;
	eo_snap_sink_fn sink;
	void *ud;
	long status;
	char body[1024]; /* start of a non-200 answer */
	size_t body_len;
	int grpc_status; /* -1 until the grpc-status header or trailer arrives */
	char grpc_message[512];
};

static int check_then_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct fetch *f = ud;

	eo_snapcheck_feed(&f->check, p, n);
	return f->sink(f->ud, p, n, err, errcap);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
	struct fetch *f = ud;
	size_t n = size * nmemb, take;

	if (f->status == 0)
		curl_easy_getinfo(f->h, CURLINFO_RESPONSE_CODE, &f->status);
	if (f->status != 200) {
		take =
		    n < sizeof(f->body) - 1 - f->body_len ? n : sizeof(f->body) - 1 - f->body_len;
		memcpy(f->body + f->body_len, p, take);
		f->body_len += take;
		f->body[f->body_len] = '\0';
		return n;
	}
	return eo_snapstream_feed(&f->ss, p, n) == 0 ? n : 0;
}

/* The value of header line p[n] when it is "<name>: value", trimmed, into out[cap]. */
static bool header_value(const char *p, size_t n, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(p, name, k) != 0 || p[k] != ':')
		return false;
	p += k + 1;
	n -= k + 1;
	while (n > 0 && (*p == ' ' || *p == '\t')) {
		p++;
		n--;
	}
	while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
	return true;
}

/* Headers and, after the body, the trailers (libcurl passes both here). */
static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
	struct fetch *f = ud;
	size_t n = size * nmemb;
	char v[sizeof(f->grpc_message)];
	char *un;
	int len = 0;

	if (header_value(p, n, "grpc-status", v, sizeof(v))) {
		f->grpc_status = atoi(v);
	} else if (header_value(p, n, "grpc-message", v, sizeof(v))) {
		/* Percent-encoded (gRPC's rule). */
		un = curl_easy_unescape(f->h, v, 0, &len);
		snprintf(f->grpc_message, sizeof(f->grpc_message), "%s", un ? un : v);
		curl_free(un);
	}
	return n;
}

int eo_snapshot_fetch(const struct eo_snapfetch_opts *o, eo_snap_sink_fn sink, void *ud,
		      struct eo_snapfetch_result *res, char *err, size_t errcap)
{
	/* An empty SnapshotRequest: not compressed, length 0. */
	static const char request[5] = {0, 0, 0, 0, 0};
	struct fetch f = {.sink = sink, .ud = ud, .grpc_status = -1};
	struct curl_slist *hdr = NULL, *nh;
	char url[1024], auth[4096], curl_err[CURL_ERROR_SIZE] = "";
	const char *headers[] = {"Content-Type: application/grpc", "TE: trailers", "Expect:"};
	enum eo_snapcheck_result verdict;
	CURLcode cc;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	if (snprintf(url, sizeof(url), "%s" GRPC_PATH, o->endpoint) >= (int)sizeof(url)) {
		snprintf(err, errcap, "endpoint too long");
		return -1;
	}
	if (eo_snapstream_init_grpc(&f.ss, check_then_sink, &f) != 0) {
		snprintf(err, errcap, "out of memory");
		return -1;
	}
	if (eo_snapcheck_init(&f.check) != 0) {
		snprintf(err, errcap, "cannot set up SHA-256");
		eo_snapstream_free(&f.ss);
		return -1;
	}
	f.h = curl_easy_init();
	if (!f.h) {
		snprintf(err, errcap, "curl_easy_init failed");
		goto out;
	}
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		nh = curl_slist_append(hdr, headers[i]);
		if (!nh) {
			snprintf(err, errcap, "out of memory");
			goto out;
		}
		hdr = nh;
	}
	if (o->auth_token && o->auth_token[0]) {
		/* etcd reads the token from the gRPC metadata "token". */
		snprintf(auth, sizeof(auth), "token: %s", o->auth_token);
		nh = curl_slist_append(hdr, auth);
		if (nh)
			hdr = nh;
	}
	curl_easy_setopt(f.h, CURLOPT_URL, url);
	curl_easy_setopt(f.h, CURLOPT_HTTP_VERSION,
			 strncmp(o->endpoint, "https://", 8) == 0
			     ? (long)CURL_HTTP_VERSION_2TLS
			     : (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
	curl_easy_setopt(f.h, CURLOPT_POST, 1L);
	curl_easy_setopt(f.h, CURLOPT_POSTFIELDS, request);
	curl_easy_setopt(f.h, CURLOPT_POSTFIELDSIZE, (long)sizeof(request));
	curl_easy_setopt(f.h, CURLOPT_HTTPHEADER, hdr);
	/*
	 * A receive buffer larger than libcurl's HTTP/2 input buffer (32 KiB). With the 16 KiB
	 * default, 7.88 pauses the HTTP/2 session when a read holds more than the buffer takes
	 * and keeps the rest in its own input buffer; on the stream's last frames, with
	 * nothing more to come on the socket, the transfer then sat idle until curl's next
	 * timer (the 5 s connect timeout): many snapshots ended at exactly 5.000 s of
	 * streaming (docs/benchmarks.md, session 6).
	 */
	curl_easy_setopt(f.h, CURLOPT_BUFFERSIZE, (long)FETCH_BUF);
	curl_easy_setopt(f.h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(f.h, CURLOPT_WRITEDATA, &f);
	curl_easy_setopt(f.h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(f.h, CURLOPT_HEADERDATA, &f);
	curl_easy_setopt(f.h, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(f.h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(f.h, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(f.h, CURLOPT_CONNECTTIMEOUT_MS,
			 o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000L);
	/* No overall timeout: a large snapshot takes long. A stall aborts. */
	curl_easy_setopt(f.h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(f.h, CURLOPT_LOW_SPEED_TIME,
			 o->stall_timeout_s > 0 ? o->stall_timeout_s : 60L);
	if (o->ca_file && o->ca_file[0])
		curl_easy_setopt(f.h, CURLOPT_CAINFO, o->ca_file);
	if (o->cert_file && o->cert_file[0])
		curl_easy_setopt(f.h, CURLOPT_SSLCERT, o->cert_file);
	if (o->key_file && o->key_file[0])
		curl_easy_setopt(f.h, CURLOPT_SSLKEY, o->key_file);

	cc = curl_easy_perform(f.h);
	curl_easy_getinfo(f.h, CURLINFO_RESPONSE_CODE, &f.status);
	res->http_status = f.status;
	if (f.ss.failed) {
		snprintf(err, errcap, "%s: %s", o->endpoint, f.ss.err);
		goto out;
	}
	if (cc != CURLE_OK) {
		snprintf(err, errcap, "%s: snapshot transfer failed: %s", o->endpoint,
			 curl_err[0] ? curl_err : curl_easy_strerror(cc));
		goto out;
	}
	if (f.status != 200) {
		snprintf(err, errcap, "%s: snapshot refused: HTTP %ld: %.300s", o->endpoint,
			 f.status, f.body);
		goto out;
	}
	if (f.grpc_status < 0) {
		snprintf(err, errcap, "%s: snapshot stream ended without a grpc-status: cut off",
			 o->endpoint);
		goto out;
	}
	if (f.grpc_status != 0) {
		snprintf(err, errcap, "%s: etcd aborted the snapshot stream: %s (gRPC status %d)",
			 o->endpoint, f.grpc_message[0] ? f.grpc_message : "(no message)",
			 f.grpc_status);
		goto out;
	}
	if (eo_snapstream_finish(&f.ss) != 0) {
		snprintf(err, errcap, "%s: %s", o->endpoint, f.ss.err);
		goto out;
	}
	verdict = eo_snapcheck_finish(&f.check, res->sha256);
	res->size = f.check.total;
	snprintf(res->storage_version, sizeof(res->storage_version), "%s", f.ss.storage_version);
	if (verdict != EO_SNAPCHECK_OK) {
		snprintf(err, errcap, "%s: %s", o->endpoint, eo_snapcheck_strerror(verdict));
		goto out;
	}
	rc = 0;
out:
	/* The token travelled in a header: wipe both copies. */
	for (struct curl_slist *i = hdr; i != NULL; i = i->next)
		if (i->data != NULL && strncmp(i->data, "token:", 6) == 0)
			explicit_bzero(i->data, strlen(i->data));
	explicit_bzero(auth, sizeof(auth));
	curl_slist_free_all(hdr);
	if (f.h)
		curl_easy_cleanup(f.h);
	eo_snapcheck_free(&f.check);
	eo_snapstream_free(&f.ss);
	return rc;
}
