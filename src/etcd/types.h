/*
 * etcd/types.h - the plain data of the etcd client: result codes and their
 * text, the member list and the per-endpoint status. No I/O and no libcurl:
 * the pure planner (src/plan) reads these types without depending on the
 * client (etcd/client.h, which includes this header).
 *
 * Ownership: the structs below are filled by the client and owned by the
 * caller, who releases them with the matching *_clear() function. The clear
 * functions accept zeroed structs and leave the struct zeroed.
 */
#ifndef EO_ETCD_TYPES_H
#define EO_ETCD_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	EO_ETCD_OK = 0,
	EO_ETCD_UNAVAILABLE,	   /* no endpoint reachable, no leader, leader changed, ... */
	EO_ETCD_TIMEOUT,	   /* request or server-side timeout; the outcome is unknown */
	EO_ETCD_NOTFOUND,	   /* member (or lease) not found */
	EO_ETCD_KEY_NOT_FOUND,	   /* eo_etcd_get: the key does not exist */
	EO_ETCD_LEARNER_NOT_READY, /* promote: the learner is not yet in sync with the leader */
	EO_ETCD_NOT_LEARNER,	   /* promote: the member is not a learner */
	EO_ETCD_TOO_MANY_LEARNERS, /* add learner: the cluster already has its maximum */
	EO_ETCD_UNHEALTHY_CLUSTER, /* reconfiguration refused for now ("unhealthy cluster", "not
				    * enough started members"): etcd also answers this for ~5 s
				    * after a member (re)connects; requeue */
	EO_ETCD_PEER_URL_EXISTS,   /* add: a member with these peer URLs (or its id) exists */
	EO_ETCD_LEARNER,	   /* the only endpoints left are learners, which refuse the call */
	EO_ETCD_NOSPACE,	   /* database space exceeded (NOSPACE alarm) */
	EO_ETCD_COMPACTED,	   /* requested revision has been compacted */
	EO_ETCD_AUTH,		   /* authentication or permission failure */
	EO_ETCD_INVALID,	   /* invalid argument (ours or as judged by the server) */
	EO_ETCD_UNSUPPORTED,	   /* no v3 gateway route (gateway disabled, too old etcd) */
	EO_ETCD_INTERNAL,	   /* any other server-side error */
	EO_ETCD_PROTOCOL,	   /* response that is not the JSON we expect */
	EO_ETCD_TOOBIG,		   /* response body larger than the configured cap */
	EO_ETCD_TRANSPORT,	   /* TLS or other transport failure */
	EO_ETCD_NOMEM,
	EO_ETCD_ERR_COUNT_ /* not an error; keeps the strerror table honest */
} eo_etcd_err;

/* A short constant English description; never NULL. */
const char *eo_etcd_strerror(eo_etcd_err err);

/* ---- members ------------------------------------------------------------ */

struct eo_etcd_member {
	uint64_t id;
	char *name; /* "" for a member that was added but has not started yet */
	char **peer_urls;
	size_t n_peer_urls;
	char **client_urls; /* empty for a member that has not started yet */
	size_t n_client_urls;
	bool is_learner;
};

struct eo_etcd_members {
	uint64_t cluster_id;
	uint64_t responder_id; /* header.member_id: the member that answered */
	struct eo_etcd_member *v;
	size_t n;
};

void eo_etcd_member_clear(struct eo_etcd_member *m);
void eo_etcd_members_clear(struct eo_etcd_members *ms);
/* The member with that id, or NULL; borrowed from ms. */
const struct eo_etcd_member *eo_etcd_members_find(const struct eo_etcd_members *ms, uint64_t id);

/* ---- per-endpoint status ------------------------------------------------ */

struct eo_etcd_status {
	char version[32];	  /* server version, e.g. "3.5.35" */
	char storage_version[32]; /* 3.6+, "" before */
	uint64_t cluster_id;
	uint64_t member_id; /* the member that answered */
	int64_t revision;   /* the header's: the store revision the member has applied */
	uint64_t leader;    /* 0 when the member knows no leader */
	uint64_t raft_index;
	uint64_t raft_term;
	uint64_t raft_applied_index;
	int64_t db_size;
	int64_t db_size_in_use;
	int64_t db_size_quota; /* 3.6+, 0 before */
	bool is_learner;
	char **errors; /* e.g. alarm descriptions; owned */
	size_t n_errors;
};

void eo_etcd_status_clear(struct eo_etcd_status *st);

/* ---- alarms ------------------------------------------------------------- */

enum eo_etcd_alarm_type {
	EO_ETCD_ALARM_NONE = 0,
	EO_ETCD_ALARM_NOSPACE = 1, /* the backend passed its quota: writes are refused */
	EO_ETCD_ALARM_CORRUPT = 2, /* the corruption check found a mismatch */
};

struct eo_etcd_alarm {
	uint64_t member_id;
	enum eo_etcd_alarm_type type;
};

struct eo_etcd_alarms {
	struct eo_etcd_alarm *v;
	size_t n;
};

void eo_etcd_alarms_clear(struct eo_etcd_alarms *a);
/* "NONE", "NOSPACE", "CORRUPT" (etcd's names). */
const char *eo_etcd_alarm_name(enum eo_etcd_alarm_type t);

#endif
