/*
 * etcd/watch.h - a watch over etcd's v3 JSON gateway (POST /v3/watch), for the archiver of
 * issue 20 (continuous archiving). Not used by the operator yet.
 *
 * The request is one WatchCreateRequest; the gateway answers 200 with a stream of
 * newline-delimited JSON messages, one per WatchResponse:
 *
 *   {"result":{"header":{"revision":"<n>",...},"created":true}}
 *   {"result":{"header":{...},"events":[{"type":"DELETE","kv":{...}},{"kv":{...}}]}}
 *   {"result":{"header":{...},"compact_revision":"<n>","canceled":true}}
 *
 * (a PUT event has no "type": the enum's zero value is omitted). etcd never splits one
 * revision's events over two responses (the watch is created without fragment), so every
 * revision a response carries is whole. A watch whose start revision was compacted away is
 * answered with compact_revision and cancelled: eo_etcd_watch returns EO_ETCD_COMPACTED and
 * the compact revision, the oldest revision a new watch can start from.
 *
 * The stream is read line by line with a line buffer capped at opts.line_max (default
 * EO_ETCD_WATCH_LINE_MAX): a longer message stops the watch with EO_ETCD_TOOBIG. Memory is
 * one line plus the decoded events of one response, whatever the write rate.
 *
 * Transport: the same configuration as the client (struct eo_etcd_config: TLS from files or
 * PEM in memory, connect_to/routes, connect timeout, proxies never used). With a password in
 * the configuration and no auth_token, the watch authenticates at its endpoint first through a
 * client of its own (eo_etcd_authenticate) and sends that token. Nothing is logged; the token
 * is cleansed after use.
 */
#ifndef EO_ETCD_WATCH_H
#define EO_ETCD_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd/client.h"

/* Longest response line accepted: 16 MiB (a revision holding a large txn, base64 inflated). */
#define EO_ETCD_WATCH_LINE_MAX ((size_t)16 << 20)

enum eo_etcd_event_type { EO_ETCD_EVENT_PUT = 0, EO_ETCD_EVENT_DELETE = 1 };

struct eo_etcd_watch_event {
	enum eo_etcd_event_type type;
	/* key, value (PUT), create/mod revision, version, lease. A DELETE carries the key and
	 * its mod_revision (the deleting revision) only. */
	struct eo_etcd_kv kv;
	bool has_prev;
	struct eo_etcd_kv prev; /* with opts.prev_kv, when etcd sent one */
};

/* One WatchResponse. */
struct eo_etcd_watch_resp {
	int64_t revision; /* header.revision: the store revision when it was sent */
	uint64_t cluster_id;
	bool created;
	bool canceled;
	int64_t compact_revision; /* > 0: the start revision was compacted away */
	char cancel_reason[EO_ETCD_MSG_MAX];
	struct eo_etcd_watch_event *events; /* in revision order */
	size_t n;
};

void eo_etcd_watch_resp_clear(struct eo_etcd_watch_resp *r);

/*
 * Decodes one message line (no newline) into *out (cleared first; cleared again on
 * failure). OK; PROTOCOL for malformed JSON, a bad field or bad base64 (d->message says
 * which); NOMEM; for an {"error":{...}} line, the gateway error mapped as for any call
 * (eo_etcd_wire_map_error), detail in d. An empty line answers OK with nothing set and
 * *empty true. d may be NULL.
 */
eo_etcd_err eo_etcd_watch_parse_line(const char *line, size_t len, struct eo_etcd_watch_resp *out,
				     bool *empty, struct eo_etcd_detail *d);

/* The request body: a create_request over the whole keyspace ("\0" to "\0"). malloc'd. */
char *eo_etcd_watch_req_create(int64_t start_revision, bool prev_kv, bool progress_notify);

/*
 * Called once per response (the "created" one and progress notifications included, with
 * n == 0). Returns 0 to go on, 1 to end the watch (eo_etcd_watch then returns OK), -1 to
 * abort it (eo_etcd_watch returns INTERNAL with the callback's message, written into the
 * err[errcap] it is given). r and its events are valid during the call only.
 */
typedef int (*eo_etcd_watch_fn)(void *ud, const struct eo_etcd_watch_resp *r, char *err,
				size_t errcap);

struct eo_etcd_watch_opts {
	const struct eo_etcd_config *cfg; /* transport and credentials (see above) */
	const char *endpoint;		  /* NULL: cfg->endpoints[0] */
	int64_t start_revision;		  /* first revision to receive; 0: from now */
	bool prev_kv;
	bool progress_notify; /* ask for progress notifications (empty responses) */
	size_t line_max;      /* 0: EO_ETCD_WATCH_LINE_MAX */
	long idle_timeout_ms; /* abort when nothing arrived for this long (TIMEOUT); 0: never */
	long max_duration_ms; /* end the whole watch after this long (TIMEOUT); 0: never */
};

struct eo_etcd_watch_result {
	uint64_t responses;	  /* responses passed to the callback */
	int64_t last_revision;	  /* header revision of the last one */
	int64_t compact_revision; /* with EO_ETCD_COMPACTED */
	long http_status;
};

/*
 * Watches until the callback ends it, the stream fails or a timeout passes. OK only when
 * the callback returned 1. COMPACTED when etcd cancelled the watch for compaction
 * (res->compact_revision); UNAVAILABLE when the stream ended or the connection dropped;
 * TOOBIG for a line over the cap; the mapped gateway error for a non-200 answer or an
 * error line. res and d may be NULL. curl_global_init must have been called.
 */
eo_etcd_err eo_etcd_watch(const struct eo_etcd_watch_opts *o, eo_etcd_watch_fn fn, void *ud,
			  struct eo_etcd_watch_result *res, struct eo_etcd_detail *d);

#endif
