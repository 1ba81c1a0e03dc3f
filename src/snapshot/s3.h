/*
 * A small S3 client for the snapshot agent: HeadObject, PutObject, GetObject
 * (streamed), DeleteObject and multipart upload, signed by libcurl's built-in
 * AWS SigV4 (CURLOPT_AWS_SIGV4), never by hand.
 *
 * libcurl 7.88 (Debian bookworm) signs what it is given and no more, so the
 * requests here are shaped for it:
 *   - every request carries x-amz-content-sha256 (the SHA-256 of the body, or
 *     of the empty string), which 7.88 neither adds nor computes for uploads;
 *     object data carries UNSIGNED-PAYLOAD instead, which spares a second
 *     SHA-256 pass over every byte on both ends: over HTTPS TLS protects it (the
 *     AWS SDKs do the same), over plain HTTP a signed x-amz-checksum-crc32 does
 *     (the server refuses a damaged part; see struct eo_s3 in s3.c for why a CRC);
 *   - the query is written already canonical: keys sorted, values
 *     percent-encoded with upper-case hex, valueless keys as "uploads=";
 *   - the object key is percent-encoded per path segment here, since 7.88
 *     signs the path as sent;
 *   - region and service are always passed ("aws:amz:<region>:s3"): curl would
 *     otherwise guess them from the host name.
 *
 * Addressing: path-style "<endpoint>/<bucket>/<key>" (forcePathStyle, what
 * MinIO and Ceph usually need) or virtual-hosted "<scheme>://<bucket>.<host>/<key>".
 * HTTPS verifies the server against the system CA store, or ca_file.
 *
 * The object written by the agent carries its snapshot's UID as user metadata
 * (x-amz-meta-etcd-snapshot-uid); HeadObject returns it for the overwrite guard.
 *
 * Not thread-safe: one client per thread (eo_s3_clone makes another).
 * curl_global_init must have been called.
 */
#ifndef EO_SNAPSHOT_S3_H
#define EO_SNAPSHOT_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/etcdsnap.h"

#define EO_S3_MIN_PART	(5ull * 1024 * 1024)	    /* S3's minimum for all parts but the last */
#define EO_S3_MAX_PART	(5ull * 1024 * 1024 * 1024) /* and its maximum */
#define EO_S3_MAX_PARTS 10000
/*
 * 6 MiB: the store keeps (parallel + 1) part buffers, three by default (one filling while
 * two upload), so the agent's memory stays near 3x this whatever the snapshot size (under
 * 32 MiB resident).
 */
#define EO_S3_DEFAULT_PART   (6ull * 1024 * 1024)
#define EO_S3_UID_META	     "x-amz-meta-etcd-snapshot-uid"
#define EO_S3_UID_MAX	     128
#define EO_S3_CRED_MAX	     1024
#define EO_S3_DEFAULT_REGION "us-east-1"

struct eo_s3_config {
	const char *endpoint; /* "https://host[:port][/base]" */
	const char *bucket;
	const char *region; /* NULL or "": us-east-1 */
	bool path_style;
	const char *access_key;
	const char *secret_key;
	const char *session_token; /* NULL or "": none */
	const char *ca_file;	   /* NULL: the system CA store */
	long connect_timeout_ms;   /* default 10000 */
	long stall_timeout_s;	   /* abort a request idle this long; default 60 */
	bool insecure;		   /* accept a plain http:// endpoint (eo_s3_endpoint_allowed) */
};

/* ---- pure helpers ------------------------------------------------------------ */

/*
 * Whether the agent may talk to endpoint: https:// always; plain http:// (requests,
 * credentials' signatures and the snapshot itself unencrypted, answers unauthenticated)
 * only when insecure is set (insecure: true on the S3 source or destination). 0, or -1
 * with err saying what to do. Other schemes are left to eo_s3_object_url.
 */
int eo_s3_endpoint_allowed(const char *endpoint, bool insecure, char *err, size_t errcap);

/*
 * URL of an object (key may be "" for the bucket itself) with an optional
 * canonical query (without '?'). 0, or -1 with err (bad endpoint, bucket or
 * key, or the URL does not fit).
 */
int eo_s3_object_url(char *buf, size_t cap, const char *endpoint, const char *bucket,
		     bool path_style, const char *key, const char *query, char *err, size_t errcap);

/*
 * Part size for a multipart upload of about `expected` bytes (0: unknown):
 * `requested` (0: the default) clamped to [5 MiB, 5 GiB] and raised, in whole
 * MiB, until the object fits in 10,000 parts.
 */
uint64_t eo_s3_part_size(uint64_t expected, uint64_t requested);

/*
 * The text of the first <tag>...</tag> in an XML body, entities decoded, into
 * out[cap]. 0, or -1 when absent or too long.
 */
int eo_s3_xml_value(const char *body, size_t len, const char *tag, char *out, size_t cap);

/*
 * The x-amz-checksum-crc32 header's value for p[n]: base64 of its CRC-32 (zlib's, the
 * IEEE polynomial S3 names CRC32) in big-endian order, 8 characters, into out.
 */
#define EO_S3_CRC32_LEN 8
int eo_s3_checksum_crc32(const void *p, size_t n, char *out, size_t cap);

/*
 * The CompleteMultipartUpload body for nparts parts: etags[i] and, when crcs is not NULL,
 * crcs[i] (each part's x-amz-checksum-crc32, as ChecksumCRC32) of part i+1. 0 with *len,
 * or -1 with err (a part without its ETag or checksum, or the list too long for cap).
 */
int eo_s3_complete_xml(char *buf, size_t cap, size_t *len, size_t nparts, char *const *etags,
		       char *const *crcs, char *err, size_t errcap);

/*
 * Credentials: from files AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * (optional) AWS_SESSION_TOKEN in dir (a mounted Secret), or with dir NULL
 * from the environment variables of the same names. Trailing newlines are
 * dropped. 0, or -1 with err naming what is missing (never the values).
 */
int eo_s3_load_credentials(const char *dir, char *access_key, char *secret_key, char *session_token,
			   char *err, size_t errcap);

/* ---- requests ------------------------------------------------------------------ */

typedef struct eo_s3 eo_s3;

int eo_s3_new(const struct eo_s3_config *cfg, eo_s3 **out, char *err, size_t errcap);
void eo_s3_free(eo_s3 *s);
/* A second client with the same settings and its own connection (one per thread). */
int eo_s3_clone(const eo_s3 *s, eo_s3 **out, char *err, size_t errcap);
/* "s3://<bucket>/<key>" */
int eo_s3_uri(const eo_s3 *s, const char *key, char *buf, size_t cap);

struct eo_s3_head {
	long status; /* HTTP status; 0 without a response */
	bool exists; /* 200 */
	uint64_t size;
	char uid[EO_S3_UID_MAX]; /* the etcd-snapshot-uid metadata, "" if none */
	char etag[256];		 /* as sent, quotes included; "<md5>-<parts>" after multipart */
};

/* HEAD: 0 for 200 (exists) or 404 (not), -1 with err for anything else (403 included). */
int eo_s3_head(eo_s3 *s, const char *key, struct eo_s3_head *out, char *err, size_t errcap);
/* PUT of a whole object from memory, stamped with uid (may be NULL). */
int eo_s3_put(eo_s3 *s, const char *key, const void *p, size_t n, const char *uid, char *err,
	      size_t errcap);
/* GET streamed into sink (2xx only); *size receives the bytes passed. */
int eo_s3_get(eo_s3 *s, const char *key, eo_snap_sink_fn sink, void *ud, uint64_t *size, char *err,
	      size_t errcap);
/* DELETE; a missing object is success (S3 answers 204 either way). */
int eo_s3_delete(eo_s3 *s, const char *key, char *err, size_t errcap);

struct eo_s3_mpu {
	char *key;
	char upload_id[1024];
	char **etags; /* etags[i] of part i+1; NULL while it uploads */
	char **crcs;  /* crcs[i]: its x-amz-checksum-crc32 (plain HTTP only, else NULL) */
	bool crc32;   /* parts carry a CRC-32 (created with x-amz-checksum-algorithm) */
	size_t nparts, cap;
};

int eo_s3_mpu_begin(eo_s3 *s, const char *key, const char *uid, struct eo_s3_mpu *m, char *err,
		    size_t errcap);
/*
 * Parts may upload in parallel, each through its own client (eo_s3_clone):
 *   eo_s3_mpu_reserve   numbers the next part (from 1); caller's thread
 *   eo_s3_mpu_part      uploads it; reads m, writes only etag and crc: any thread
 *   eo_s3_mpu_set_etag  records its ETag (and CRC-32, "" when none) once uploaded;
 *                       caller's thread
 * Complete refuses a reserved part without an ETag (or without its CRC-32 when m->crc32).
 */
int eo_s3_mpu_reserve(struct eo_s3_mpu *m, size_t *number, char *err, size_t errcap);
int eo_s3_mpu_part(eo_s3 *s, const struct eo_s3_mpu *m, size_t number, const void *p, size_t n,
		   char *etag, size_t etagcap, char crc[EO_S3_CRC32_LEN + 1], char *err,
		   size_t errcap);
int eo_s3_mpu_set_etag(struct eo_s3_mpu *m, size_t number, const char *etag, const char *crc,
		       char *err, size_t errcap);
/* CompleteMultipartUpload; a 200 whose body is an <Error> is a failure. */
int eo_s3_mpu_complete(eo_s3 *s, struct eo_s3_mpu *m, char *err, size_t errcap);
/* AbortMultipartUpload (best effort; 0 or -1 with err). */
int eo_s3_mpu_abort(eo_s3 *s, struct eo_s3_mpu *m, char *err, size_t errcap);
void eo_s3_mpu_clear(struct eo_s3_mpu *m);

#endif
