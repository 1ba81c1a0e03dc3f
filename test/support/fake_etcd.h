/*
 * support/fake_etcd.h - a fake etcd v3 JSON gateway for tests, on the fake HTTP server
 * (support/fake_apiserver.h).
 *
 * It serves the calls the operator makes: cluster/member/list, cluster/member/add (as a
 * learner or not), cluster/member/promote, cluster/member/remove, maintenance/status,
 * maintenance/transfer-leadership (asked of the leader, it makes targetID the leader every
 * Status names) and the auth calls (below),
 * over one shared member list the test seeds. Every request is recorded (which host it was
 * addressed to, the call, the body) in arrival order. A test may script the next answer to a
 * call (HTTP status and body, used once, in the order scripted) to play a refusal or an
 * unreachable member; a host may be marked down (every call to it answers 503).
 *
 * Tests reach it under the members' real client URLs by handing eo_fake_etcd_connect_to()
 * to the etcd client (eo_etcd_config.connect_to, eo_controller.etcd_connect_to): every
 * connection goes to the fake, and the Host header still names the member.
 *
 * Thread-safe: the server answers on its own threads; the accessors lock.
 */
#ifndef EO_TEST_FAKE_ETCD_H
#define EO_TEST_FAKE_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct eo_fake_etcd eo_fake_etcd;

#define EO_FAKE_ETCD_STR 256

/* One request as received. */
struct eo_fake_etcd_request {
	char host[EO_FAKE_ETCD_STR]; /* Host header without the port: the member addressed */
	char call[64];		     /* path after /v3/: "cluster/member/remove", ... */
	char body[EO_FAKE_ETCD_STR]; /* request body (truncated) */
};

/* Starts the fake with an empty member list; NULL on failure. */
eo_fake_etcd *eo_fake_etcd_start(void);
void eo_fake_etcd_stop(eo_fake_etcd *f); /* NULL is fine */

/* "http://127.0.0.1:<port>" and "::127.0.0.1:<port>" (borrowed). */
const char *eo_fake_etcd_url(const eo_fake_etcd *f);
const char *eo_fake_etcd_connect_to(const eo_fake_etcd *f);

/*
 * The cluster ID in every reply's header: EO_FAKE_ETCD_CLUSTER_ID (the status.clusterID
 * "248adce0359142ba" of the unit tests' clusters) unless set to another.
 */
#define EO_FAKE_ETCD_CLUSTER_ID 0x248adce0359142baULL
void eo_fake_etcd_set_cluster_id(eo_fake_etcd *f, uint64_t id);

/* Adds (or replaces, by id) a member of the shared list; peer_url is its one peer URL. */
void eo_fake_etcd_set_member(eo_fake_etcd *f, uint64_t id, const char *name, const char *peer_url,
			     bool learner);
/* Whether id is in the list now / is a learner. */
bool eo_fake_etcd_has_member(eo_fake_etcd *f, uint64_t id);
bool eo_fake_etcd_is_learner(eo_fake_etcd *f, uint64_t id);

/*
 * The member every maintenance/status names as its leader (0, the default: the first member
 * of the list). A member list's header.member_id is the member addressed (the first label of
 * the Host), or 1 when the host names no member.
 */
void eo_fake_etcd_set_leader(eo_fake_etcd *f, uint64_t id);

/* The next request for call (e.g. "cluster/member/promote") gets this answer instead. */
void eo_fake_etcd_script(eo_fake_etcd *f, const char *call, int status, const char *body);

/* Calls to host (a member's DNS name) answer 503 while down. */
void eo_fake_etcd_set_down(eo_fake_etcd *f, const char *host, bool down);

/* Requests recorded so far; copy of entry i (false when out of range). */
size_t eo_fake_etcd_requests(eo_fake_etcd *f);
bool eo_fake_etcd_request(eo_fake_etcd *f, size_t i, struct eo_fake_etcd_request *out);
/* How many requests for call were received; index of the first one (or SIZE_MAX). */
size_t eo_fake_etcd_count(eo_fake_etcd *f, const char *call);
size_t eo_fake_etcd_first(eo_fake_etcd *f, const char *call);

/*
 * etcd auth, as far as the operator uses it: auth/status, auth/authenticate (root and the
 * password; one valid token at a time, "fake.<n>"), auth/user/add (records the password),
 * auth/role/add, auth/user/grant, auth/enable. With auth on every call but Authenticate and
 * maintenance/status needs the current token in the Authorization header: without one it
 * answers "user name is empty", with another "invalid auth token".
 */
void eo_fake_etcd_set_auth(eo_fake_etcd *f, bool on, const char *password);
bool eo_fake_etcd_auth_on(eo_fake_etcd *f);
/* Forgets the valid token (as a member restart or the TTL would). */
void eo_fake_etcd_expire_token(eo_fake_etcd *f);
/* How many Authenticate calls were received. */
unsigned eo_fake_etcd_authenticates(eo_fake_etcd *f);

#endif
