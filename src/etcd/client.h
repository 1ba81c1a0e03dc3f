/*
 * etcd client over the v3 gRPC-gateway JSON API (etcd 3.4, 3.5, 3.6 and 3.7).
 *
 * Every call is a blocking HTTP/1.1 POST (libcurl) with a JSON body (jansson)
 * to `<endpoint>/v3/...`, bounded by a per-attempt timeout and a cap on the
 * response body. The client holds a list of endpoints and remembers, per
 * endpoint, whether it is known to be a learner and when it last failed:
 *
 *   - cluster-wide calls (member list/add/promote/remove, put, linearizable
 *     reads) are sent only to endpoints not known to be learners, in the
 *     configured order, with recently failed endpoints moved to the back;
 *   - an endpoint that answers "rpc not supported for learner" is marked as a
 *     learner and the call moves on to the next endpoint;
 *   - idempotent calls fail over on any transport error or timeout; calls that
 *     change state (member add/promote/remove, put) fail over only when the
 *     request certainly never reached the server (connection refused, learner
 *     refusal, ...), so a timed-out member add is never sent twice.
 *
 * Each attempt is bounded by timeout_ms, so a call over n endpoints returns
 * within about n * timeout_ms; an endpoint that failed is tried last for
 * fail_backoff_ms, so later calls go straight to a working one.
 *
 * Learner marks are refreshed from every member list the client sees (the
 * members' clientURLs are matched against the endpoints) and from status
 * calls, so a promoted learner becomes usable again.
 *
 * A client is not thread-safe: use one per thread (or per reconcile). The
 * program must call curl_global_init() once before creating clients.
 *
 * Nothing here logs. Every call returns an eo_etcd_err and, when the caller
 * passes a detail struct, the gRPC code, HTTP status and message of the last
 * failure.
 *
 * Ownership: output structs are filled by the callee and owned by the caller,
 * who releases them with the matching *_clear() function. The clear
 * functions accept zeroed structs and leave the struct zeroed, so an output
 * struct may be initialised with `= {0}` and cleared unconditionally on every
 * path. Input strings are borrowed for the duration of the call only.
 */
#ifndef EO_ETCD_CLIENT_H
#define EO_ETCD_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etcd/types.h"

#define EO_ETCD_MSG_MAX 256
#define EO_ETCD_URL_MAX 512

/*
 * What went wrong in the last failed attempt of a call. All fields are reset
 * at the start of every call; on success they describe the endpoint that
 * answered (grpc_code -1, message empty).
 */
struct eo_etcd_detail {
	int grpc_code;			/* gRPC status code from the error body, -1 if none */
	long http_status;		/* HTTP status, 0 if no response was received */
	int curl_code;			/* CURLcode of the transfer, 0 if it completed */
	char endpoint[EO_ETCD_URL_MAX]; /* endpoint of that attempt, "" if none */
	char message[EO_ETCD_MSG_MAX];	/* server or transport message, truncated */
};

/*
 * Client configuration. Everything is copied by eo_etcd_client_new(); the
 * caller may free its buffers right after the call.
 *
 * For TLS, each of CA, client certificate and key can be given either as a
 * file path or as PEM bytes in memory (the memory form wins when both are
 * set). Server certificates are always verified.
 */
struct eo_etcd_config {
	const char *const *endpoints; /* "http(s)://host:port", at least one */
	size_t n_endpoints;

	const char *ca_file;
	const char *cert_file;
	const char *key_file;
	const void *ca_pem;
	size_t ca_pem_len;
	const void *cert_pem;
	size_t cert_pem_len;
	const void *key_pem;
	size_t key_pem_len;

	const char *auth_token; /* sent as "Authorization: <token>"; NULL for none */
	/*
	 * etcd user and password (NUL-terminated, copied and cleansed on free). With them the
	 * client authenticates by itself: when a request is refused for want of a token ("user
	 * name is empty", "invalid auth token", "revision of auth store is old", a permission
	 * error before the client holds a token for that endpoint, or the empty reply of etcd
	 * 3.4.23's gateway), it calls Authenticate at that endpoint, keeps the token in the
	 * Authorization header and sends the request once more. A cluster without auth answers
	 * every request without a token, so nothing is sent then. NULL password: never.
	 */
	const char *username; /* default "root" when password is set */
	const char *password;

	long timeout_ms;	 /* whole attempt against one endpoint; default 5000 */
	long connect_timeout_ms; /* TCP+TLS connect; default min(timeout, 2000) */
	long fail_backoff_ms;	 /* how long a failed endpoint goes to the back; default 10000 */
	size_t max_body;	 /* response body cap in bytes; default 4 MiB */

	/*
	 * Test seam: one curl CONNECT_TO entry ("HOST:PORT:CONNECT-HOST:CONNECT-PORT", empty
	 * HOST/PORT match any) so that tests reach a fake etcd under the members' real URLs
	 * (the Host header keeps the member's name). NULL (always, in the operator): connect
	 * to the endpoint's own host.
	 */
	const char *connect_to;
	/*
	 * Where to connect for each endpoint host, as curl CONNECT_TO entries
	 * ("HOST:PORT:CONNECT-HOST:CONNECT-PORT"), used after connect_to. The operator
	 * passes each member's Pod IP here, so that reaching a member does not wait for
	 * its DNS record (the Service's EndpointSlice can lag by tens of seconds while the
	 * control plane is busy). The request keeps the endpoint's host name: TLS still
	 * checks the certificate against it. NULL/0: resolve every host by DNS.
	 */
	const char *const *routes;
	size_t n_routes;
};

typedef struct eo_etcd_client eo_etcd_client;

/* Creates a client; *out is owned by the caller (eo_etcd_client_free). */
eo_etcd_err eo_etcd_client_new(const struct eo_etcd_config *cfg, eo_etcd_client **out,
			       struct eo_etcd_detail *detail);
void eo_etcd_client_free(eo_etcd_client *c);

/* Replaces the auth token (copied); NULL removes the header. */
eo_etcd_err eo_etcd_client_set_token(eo_etcd_client *c, const char *token);

/* ---- authentication ------------------------------------------------------ */

/*
 * Authenticate with the configured user and password at endpoint (NULL: the first usable
 * one), keeping the token for later calls. AUTH with detail "etcdserver: authentication
 * failed" for a wrong password; INVALID with "authentication is not enabled" when etcd has no
 * auth on; INVALID when the client has no password.
 */
eo_etcd_err eo_etcd_authenticate(eo_etcd_client *c, const char *endpoint,
				 struct eo_etcd_detail *detail);

/* The token the client holds (borrowed, valid until the next call), NULL when none. */
const char *eo_etcd_client_token(const eo_etcd_client *c);

/* AuthStatus (etcd 3.5+; UNSUPPORTED on 3.4): whether authentication is on. */
eo_etcd_err eo_etcd_auth_status(eo_etcd_client *c, bool *enabled, struct eo_etcd_detail *detail);

/*
 * Turns authentication on with root as the only user: UserAdd root (with password), RoleAdd
 * root, UserGrantRole root root, AuthEnable. Each step accepts "already exists" / "already
 * granted", so a run cut short is finished by the next one. A root user that exists with
 * another password is not changed: the next Authenticate then fails.
 */
eo_etcd_err eo_etcd_auth_enable_root(eo_etcd_client *c, const char *password,
				     struct eo_etcd_detail *detail);

/* Endpoints as normalised by the client (no trailing '/'); borrowed. */
size_t eo_etcd_client_endpoint_count(const eo_etcd_client *c);
const char *eo_etcd_client_endpoint(const eo_etcd_client *c, size_t i);
/* Whether the client currently believes endpoint i is a learner. */
bool eo_etcd_client_endpoint_is_learner(const eo_etcd_client *c, size_t i);

/* ---- members (struct eo_etcd_member[s]: etcd/types.h) ------------------- */

/* Lists the members (linearizable where the server supports it). */
eo_etcd_err eo_etcd_member_list(eo_etcd_client *c, struct eo_etcd_members *out,
				struct eo_etcd_detail *detail);

/*
 * Adds a member with the given peer URLs, as a learner when as_learner.
 * `added` receives the new member (id, peer URLs, learner flag); `members`,
 * when not NULL, receives the member list returned with it.
 */
eo_etcd_err eo_etcd_member_add(eo_etcd_client *c, const char *const *peer_urls, size_t n_peer_urls,
			       bool as_learner, struct eo_etcd_member *added,
			       struct eo_etcd_members *members, struct eo_etcd_detail *detail);

/* Promotes a learner; LEARNER_NOT_READY means "retry later". members may be NULL. */
eo_etcd_err eo_etcd_member_promote(eo_etcd_client *c, uint64_t id, struct eo_etcd_members *members,
				   struct eo_etcd_detail *detail);

/* Removes a member; members may be NULL. */
eo_etcd_err eo_etcd_member_remove(eo_etcd_client *c, uint64_t id, struct eo_etcd_members *members,
				  struct eo_etcd_detail *detail);

/* ---- per-endpoint status and health ----------------------------------- */

/*
 * Status of one endpoint (any URL; it need not be one of the client's
 * endpoints, but if it is, its learner mark is updated). Never fails over:
 * the answer is about that member.
 */
eo_etcd_err eo_etcd_status(eo_etcd_client *c, const char *endpoint, struct eo_etcd_status *out,
			   struct eo_etcd_detail *detail);

/*
 * MoveLeader: asks the member at leader_endpoint (it must be the leader, etcd refuses
 * otherwise) to hand leadership to the voter target_id, through the gateway's
 * /v3/maintenance/transfer-leadership. Never fails over: only the leader can do it. etcd
 * returns once the transfer is done or has failed.
 */
eo_etcd_err eo_etcd_move_leader(eo_etcd_client *c, const char *leader_endpoint, uint64_t target_id,
				struct eo_etcd_detail *detail);

/*
 * Health of one endpoint: a read of the key "health", linearizable (it needs
 * a leader and a quorum) unless the endpoint is a learner, where only a
 * serializable read is possible. A permission error counts as healthy: the
 * member answered.
 */
eo_etcd_err eo_etcd_health(eo_etcd_client *c, const char *endpoint, struct eo_etcd_detail *detail);

/* ---- maintenance: defragment, alarms, compaction ------------------------ */

/*
 * Defragment of one member (the gateway's /v3/maintenance/defragment). Never fails over: it
 * is about that member. The member blocks reads and writes while it rewrites its backend, so
 * the call may take long: the client's timeout_ms bounds it (use a client made for it).
 */
eo_etcd_err eo_etcd_defragment(eo_etcd_client *c, const char *endpoint,
			       struct eo_etcd_detail *detail);

/* The active alarms of the cluster (any member answers; fails over). */
eo_etcd_err eo_etcd_alarm_list(eo_etcd_client *c, struct eo_etcd_alarms *out,
			       struct eo_etcd_detail *detail);

/* Deactivates one alarm (member id and type, as listed); idempotent, fails over. */
eo_etcd_err eo_etcd_alarm_disarm(eo_etcd_client *c, const struct eo_etcd_alarm *a,
				 struct eo_etcd_detail *detail);

/*
 * Compacts the keyspace up to revision (physical: waits until the compaction is applied to
 * the backend, so a defragment right after gives the space back). A revision already
 * compacted answers COMPACTED.
 */
eo_etcd_err eo_etcd_compact(eo_etcd_client *c, int64_t revision, bool physical,
			    struct eo_etcd_detail *detail);

/*
 * A lease of ttl_s seconds (etcd may raise a short TTL to its minimum) and its revocation.
 * Neither changes a key or the revision; both go through raft, so every member writes its
 * backend. Grant is not retried on another endpoint once delivered (a retry could leave a
 * second lease, which expires by itself); revoke is idempotent (NOT_FOUND once gone).
 */
eo_etcd_err eo_etcd_lease_grant(eo_etcd_client *c, int64_t ttl_s, int64_t *id,
				struct eo_etcd_detail *detail);
eo_etcd_err eo_etcd_lease_revoke(eo_etcd_client *c, int64_t id, struct eo_etcd_detail *detail);

/*
 * Makes every member's figures of free pages current without changing a key: a lease granted,
 * gap_ms later revoked, and gap_ms more waited. etcd (bbolt) counts pages freed by a backend
 * transaction as free only once a later write transaction has started with no reader older
 * than it, and recomputes DbSizeInUse at each commit; so on an idle cluster the figure a
 * Status reports after a compaction stays stale (on followers, and on 3.4 on every member)
 * until two more backend commits. Writes within one backend batch interval (100 ms by
 * default) share one commit: gap_ms should be a few intervals (200). Blocks 2 * gap_ms.
 */
eo_etcd_err eo_etcd_backend_commit(eo_etcd_client *c, long gap_ms, struct eo_etcd_detail *detail);

/* The cluster's current revision (header of a linearizable count-only range). */
eo_etcd_err eo_etcd_revision(eo_etcd_client *c, int64_t *revision, struct eo_etcd_detail *detail);

/* ---- keys ---------------------------------------------------------------- */

struct eo_etcd_kv {
	unsigned char *key; /* NUL-terminated for convenience; key_len excludes it */
	size_t key_len;
	unsigned char *value; /* NUL-terminated for convenience; value_len excludes it */
	size_t value_len;
	int64_t create_revision;
	int64_t mod_revision;
	int64_t version;
	int64_t lease;
};

struct eo_etcd_range {
	int64_t revision; /* header.revision */
	struct eo_etcd_kv *kvs;
	size_t n;
	bool more;
	int64_t count;
};

struct eo_etcd_range_opts {
	const void *range_end; /* NULL: single key, unless prefix */
	size_t range_end_len;
	bool prefix;	   /* every key starting with key (range_end computed) */
	int64_t limit;	   /* 0: no limit */
	int64_t revision;  /* read the keyspace as of this revision; 0: the newest */
	bool serializable; /* local read; the only kind a learner serves */
	bool keys_only;
	bool count_only;
};

void eo_etcd_kv_clear(struct eo_etcd_kv *kv);
void eo_etcd_range_clear(struct eo_etcd_range *r);

/* Puts key=value; *revision (may be NULL) receives the new revision. */
eo_etcd_err eo_etcd_put(eo_etcd_client *c, const void *key, size_t key_len, const void *value,
			size_t value_len, int64_t *revision, struct eo_etcd_detail *detail);

/* One operation of an unconditional txn (eo_etcd_txn_apply). */
struct eo_etcd_txn_op {
	bool del; /* delete the single key; else put key=value */
	const void *key;
	size_t key_len;
	const void *value; /* put */
	size_t value_len;
	int64_t lease; /* put: attach to this lease; 0: none */
};

/*
 * Applies ops as one txn with no compare (etcd makes one revision of it when it changes
 * anything); *revision (may be NULL) receives the header revision. A put naming a lease etcd
 * does not know fails with the mapped error and etcd's message ("requested lease not
 * found"). etcd refuses more ops than its --max-txn-ops (128 by default); this call takes up
 * to EO_ETCD_TXN_MAX_OPS, for an etcd started with a higher limit (the archive replay's).
 */
#define EO_ETCD_TXN_MAX_OPS 100000
eo_etcd_err eo_etcd_txn_apply(eo_etcd_client *c, const struct eo_etcd_txn_op *ops, size_t n,
			      int64_t *revision, struct eo_etcd_detail *detail);

/*
 * HashKV at revision (0: the newest): etcd's hash of every key revision it keeps up to
 * there, the check etcd itself makes between members. Two stores with the same history
 * since the same compaction answer the same hash.
 */
eo_etcd_err eo_etcd_hash_kv(eo_etcd_client *c, int64_t revision, uint32_t *hash,
			    int64_t *compact_revision, struct eo_etcd_detail *detail);

/* LeaseGrant with a chosen ID (a replay re-creating a lease under its original ID). */
eo_etcd_err eo_etcd_lease_grant_id(eo_etcd_client *c, int64_t id, int64_t ttl_s,
				   struct eo_etcd_detail *detail);

/* Linearizable read of one key; KEY_NOT_FOUND when absent. */
eo_etcd_err eo_etcd_get(eo_etcd_client *c, const void *key, size_t key_len, struct eo_etcd_kv *out,
			struct eo_etcd_detail *detail);

/* Range read; opts may be NULL (single key, linearizable). */
eo_etcd_err eo_etcd_range(eo_etcd_client *c, const void *key, size_t key_len,
			  const struct eo_etcd_range_opts *opts, struct eo_etcd_range *out,
			  struct eo_etcd_detail *detail);

#endif
