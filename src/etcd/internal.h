/*
 * Internals of the etcd client shared between its files and its unit tests:
 * the pure parts (JSON encoding and decoding, error mapping, endpoint
 * selection), and the transport set-up of a curl handle that the client and
 * the watch (watch.c) share. Names use the eo__etcd_ prefix and are not part of
 * the public API; what other modules use of the wire format is in etcd/wire.h.
 */
#ifndef EO_ETCD_INTERNAL_H
#define EO_ETCD_INTERNAL_H

#include <curl/curl.h>
#include <jansson.h>

#include "etcd/client.h"
#include "etcd/wire.h" /* the gateway format other modules use (eo_etcd_wire_*) */

/* ---- scalar helpers (wire.c) ------------------------------------------ */

/* The signed twin of eo_etcd_wire_json_u64 (etcd/wire.h). */
bool eo__etcd_json_i64(const json_t *v, int64_t *out);
/* A JSON boolean; NULL (omitted because false) yields false. False on anything else. */
bool eo__etcd_json_bool(const json_t *v, bool *out);
/* Parses exactly [s, s+len) as a decimal uint64 with no sign or spaces. */
bool eo__etcd_parse_u64(const char *s, size_t len, uint64_t *out);

/*
 * range_end for "every key with this prefix": the prefix with its last byte
 * that is not 0xff incremented and the rest dropped; a prefix of only 0xff
 * bytes (or empty) gives "\0", meaning "to the end of the keyspace".
 * Result malloc'd; caller frees.
 */
bool eo__etcd_prefix_end(const void *key, size_t len, unsigned char **out, size_t *out_len);

/* Copies src into dst[cap] with truncation, always NUL-terminating. */
void eo__etcd_copy(char *dst, size_t cap, const char *src);

/* ---- error mapping (wire.c) -------------------------------------------- */

/* Maps a gRPC code plus message (either may be absent: -1 / NULL). */
eo_etcd_err eo__etcd_map_grpc(int code, const char *message);

/* True for the "rpc not supported for learner" refusal. */
bool eo__etcd_is_learner_refusal(const char *message);

/* ---- response parsing (wire.c) ----------------------------------------- */
/* Each parser takes the raw 200 body, fills *out and returns OK or PROTOCOL
 * (or NOMEM). On failure *out is left cleared. */

/* One mvccpb.KeyValue object (a range's kvs[], a watch event's kv and prev_kv): key and
 * value base64-decoded (absent: empty), the revisions, version and lease. On failure *kv
 * may be partly filled (eo_etcd_kv_clear frees it). */
eo_etcd_err eo__etcd_parse_kv(const json_t *o, struct eo_etcd_kv *kv);
/* Member add: the new member plus the list. members may be NULL. */
eo_etcd_err eo__etcd_parse_member_add(const char *body, size_t len, struct eo_etcd_member *added,
				      struct eo_etcd_members *members);
/* Alarm list: {"alarms":[{"memberID","alarm"}]}; the alarm as its name or its number. */
eo_etcd_err eo__etcd_parse_alarms(const char *body, size_t len, struct eo_etcd_alarms *out);
/* Put: header.revision. */
eo_etcd_err eo__etcd_parse_put(const char *body, size_t len, int64_t *revision);
/* LeaseGrant: a positive ID, no "error". */
/* {"hash":<u32>,"compact_revision":"<n>"} of maintenance/hash_kv. */
eo_etcd_err eo__etcd_parse_hash_kv(const char *body, size_t len, uint32_t *hash,
				   int64_t *compact_revision);
eo_etcd_err eo__etcd_parse_lease_grant(const char *body, size_t len, int64_t *id);

/* ---- request bodies (wire.c) ------------------------------------------- */
/* Each returns a malloc'd compact JSON string, or NULL on allocation failure. */

char *eo__etcd_req_member_add(const char *const *peer_urls, size_t n, bool as_learner);
char *eo__etcd_req_member_id(uint64_t id);
char *eo__etcd_req_put(const void *key, size_t key_len, const void *value, size_t value_len);
char *eo__etcd_req_lease_grant(int64_t ttl_s); /* {"TTL":"<s>"} */
char *eo__etcd_req_lease_id(int64_t id);
char *eo__etcd_req_txn(const struct eo_etcd_txn_op *ops, size_t n);		 /* unconditional */
char *eo__etcd_req_lease_grant_id(int64_t id, int64_t ttl_s); /* {"ID","TTL"} */ /* {"ID":"<id>"} */

/* ---- auth (wire.c) -------------------------------------------------------- */

/* Authenticate's token into out[cap]; PROTOCOL when absent, empty or too long. */
eo_etcd_err eo__etcd_parse_token(const char *body, size_t len, char *out, size_t cap);
/* AuthStatus' "enabled" (absent: false). */
eo_etcd_err eo__etcd_parse_auth_status(const char *body, size_t len, bool *enabled);

/* ---- transport (client.c) ------------------------------------------------ */

/*
 * Sets what every request to etcd has on the easy handle h: HTTP/1.1, http(s) only, no
 * signals, no proxy, the two timeouts (ms; 0: none), peer and host verification, the
 * routes (cfg->connect_to, then cfg->routes, appended to *routes, which must outlive the
 * transfers: the caller frees it after the handle) and the TLS material of cfg. URL,
 * body, headers and callbacks are the caller's. EO_ETCD_TRANSPORT when curl refuses one.
 */
eo_etcd_err eo__etcd_curl_setup(CURL *h, const struct eo_etcd_config *cfg, long timeout_ms,
				long connect_timeout_ms, struct curl_slist **routes);

/*
 * The request headers: the JSON content type, no "Expect: 100-continue", and with a token
 * (NULL: none) its Authorization line. INVALID for an empty or overlong token or one with
 * CR/LF, NOMEM. Free *out with eo__etcd_free_headers.
 */
eo_etcd_err eo__etcd_headers(const char *token, struct curl_slist **out);

/* Frees a header list, wiping the Authorization line it holds first. */
void eo__etcd_free_headers(struct curl_slist *h);

/* ---- endpoints (select.c) ---------------------------------------------- */

/*
 * Normalises an endpoint URL: must start with http:// or https://, have a
 * host, and fit EO_ETCD_URL_MAX; trailing slashes are dropped and the scheme
 * lower-cased. Returns false when it is not acceptable.
 */
bool eo__etcd_url_normalise(const char *in, char *out, size_t cap);

enum eo__etcd_role { EO__ETCD_ROLE_UNKNOWN = 0, EO__ETCD_ROLE_VOTER, EO__ETCD_ROLE_LEARNER };

struct eo__etcd_ep {
	char url[EO_ETCD_URL_MAX];
	enum eo__etcd_role role;
	int64_t failed_at_ms; /* monotonic time of the last failure; 0 = none since last success */
};

/*
 * Order in which to try the endpoints for one call. need_voter excludes
 * endpoints known to be learners. Endpoints that failed less than backoff_ms
 * before now_ms go after the others (oldest failure first). Writes up to n
 * indexes into order and returns how many.
 */
size_t eo__etcd_select(const struct eo__etcd_ep *eps, size_t n, bool need_voter, int64_t now_ms,
		       int64_t backoff_ms, size_t *order);

/* Updates learner marks from a member list (matching clientURLs). */
void eo__etcd_learn_roles(struct eo__etcd_ep *eps, size_t n, const struct eo_etcd_members *ms);

/* Index of the endpoint equal to url (normalised), or n when none. */
size_t eo__etcd_find_ep(const struct eo__etcd_ep *eps, size_t n, const char *url);

#endif
