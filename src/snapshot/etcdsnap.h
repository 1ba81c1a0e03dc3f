/*
 * Reading a snapshot from one etcd member.
 *
 * The agent speaks gRPC to etcd's client port, as etcdctl does: libcurl's
 * HTTP/2 (prior knowledge on http://, ALPN on https://) carries
 * POST /etcdserverpb.Maintenance/Snapshot, and the answer is a stream of
 * length-prefixed protobuf SnapshotResponse messages (remaining_bytes = 2,
 * blob = 3, version = 4), then the grpc-status trailer. The blob bytes go to
 * the sink straight from the frame, without a copy when a frame arrives whole.
 *
 * The v3 gRPC gateway (the JSON form below) is still decoded by
 * eo_snapstream_decode_line; it costs etcd a JSON encoding and the agent a
 * base64 decoding of every chunk, which made a snapshot several times slower
 * than etcdctl's, so the fetch no longer uses it:
 *
 * POST <endpoint>/v3/maintenance/snapshot answers 200 with a stream of
 * newline-delimited JSON messages, one per 32 KiB of database:
 *
 *   {"result":{"remaining_bytes":"<n>","blob":"<base64>"[,"version":"3.6.0"]}}
 *
 * followed by one message whose blob is the 32-byte integrity hash
 * (integrity.h). An error after the 200 arrives as a last
 * {"error":{...,"message":"..."}} line. The stream is decoded message by
 * message into a sink with a bounded line buffer, so memory stays flat
 * whatever the database size.
 *
 * A snapshot is complete only when the stream ended cleanly, the number of
 * bytes matches what the first message announced (its blob plus its
 * remaining_bytes, plus the 32-byte trailer), and the trailer verifies.
 */
#ifndef EO_SNAPSHOT_ETCDSNAP_H
#define EO_SNAPSHOT_ETCDSNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot/integrity.h"

/* A message line is ~44 KB (base64 of 32 KiB); anything past this is refused. */
#define EO_SNAPSTREAM_LINE_MAX (256 * 1024)

/* Receives decoded snapshot bytes in order; 0, or -1 with err filled to stop. */
typedef int (*eo_snap_sink_fn)(void *ud, const void *p, size_t n, char *err, size_t errcap);

/* ---- the stream decoder (no I/O) ------------------------------------------ */

struct eo_snapstream {
	bool grpc;  /* gRPC frames of protobuf messages; else gateway JSON lines */
	char *line; /* partial line (or gRPC frame, 5-byte prefix included) carried between feeds */
	uint32_t frame; /* gRPC: payload length of the frame in line, once its prefix is in */
	size_t len, cap;
	unsigned char *blob; /* decode buffer */
	size_t blob_cap;
	eo_snap_sink_fn sink;
	void *ud;
	uint64_t messages;
	uint64_t bytes;	   /* decoded bytes passed to the sink */
	uint64_t expected; /* database bytes announced by the first message */
	bool have_expected;
	char storage_version[32]; /* "version" of 3.6 messages, "" before */
	bool failed;
	char err[512];
};

/* 0, or -1 (out of memory). */
int eo_snapstream_init(struct eo_snapstream *s, eo_snap_sink_fn sink, void *ud);
/* The same for a gRPC response body (frames of SnapshotResponse). */
int eo_snapstream_init_grpc(struct eo_snapstream *s, eo_snap_sink_fn sink, void *ud);
void eo_snapstream_free(struct eo_snapstream *s);
/* Raw response bytes in any split. 0, or -1 with s->err (and every later call fails). */
int eo_snapstream_feed(struct eo_snapstream *s, const char *p, size_t n);
/* End of the response: no partial line, at least one message, the announced size. */
int eo_snapstream_finish(struct eo_snapstream *s);

/*
 * Decodes one message line (without its newline) into out[outcap]. Returns 1
 * for a data message (*outlen bytes, *remaining / *has_remaining from
 * remaining_bytes, version copied into version[versioncap] when present),
 * 0 for an empty line, -1 with err for an error message or malformed input.
 */
int eo_snapstream_decode_line(const char *line, size_t len, unsigned char *out, size_t outcap,
			      size_t *outlen, uint64_t *remaining, bool *has_remaining,
			      char *version, size_t versioncap, char *err, size_t errcap);

/*
 * Decodes one protobuf SnapshotResponse (a gRPC frame's payload). Returns 1
 * with *blob pointing into p (*bloblen bytes; NULL and 0 when absent),
 * remaining_bytes and version as above; -1 with err for malformed input.
 */
int eo_snapstream_decode_pb(const unsigned char *p, size_t n, const unsigned char **blob,
			    size_t *bloblen, uint64_t *remaining, bool *has_remaining,
			    char *version, size_t versioncap, char *err, size_t errcap);

/* ---- fetching ---------------------------------------------------------------- */

struct eo_snapfetch_opts {
	const char *endpoint;  /* "http(s)://host:port" of a voter */
	const char *ca_file;   /* TLS: CA of the server certificate; NULL: system store */
	const char *cert_file; /* client certificate and key for mTLS; NULL: none */
	const char *key_file;
	const char *auth_token;	 /* gRPC "token" metadata value; NULL: none */
	long connect_timeout_ms; /* default 5000 */
	long stall_timeout_s;	 /* abort when no byte arrived for this long; default 60 */
};

struct eo_snapfetch_result {
	uint64_t size;			      /* bytes written to the sink, trailer included */
	char sha256[EO_SNAP_SHA_HEX_LEN + 1]; /* of those bytes */
	char storage_version[32];	      /* 3.6+, "" before */
	long http_status;
};

/*
 * Streams the snapshot of the member at o->endpoint into sink. Returns 0 only
 * when the snapshot is complete and its integrity hash verified; -1 with err
 * otherwise (the sink may have received bytes: the caller discards them).
 * curl_global_init must have been called.
 */
int eo_snapshot_fetch(const struct eo_snapfetch_opts *o, eo_snap_sink_fn sink, void *ud,
		      struct eo_snapfetch_result *res, char *err, size_t errcap);

#endif
