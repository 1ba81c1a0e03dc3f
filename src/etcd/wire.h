/*
 * etcd/wire.h - the parts of etcd's v3 JSON gateway format (wire.c) that other modules use
 * directly: the kubectl plugin (src/plugin) reaches a member's gateway through the
 * apiserver's Pod proxy, not through the etcd client, and builds and reads its bodies with
 * these. Pure: no I/O. The client's own internals are in etcd/internal.h.
 */
#ifndef EO_ETCD_WIRE_H
#define EO_ETCD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd/client.h"

/*
 * Reads an unsigned 64-bit value as the gateway encodes it: a JSON string of
 * decimal digits (or, leniently, a non-negative JSON integer). A NULL v
 * (field omitted because it was zero) yields 0. Returns false on anything else.
 */
bool eo_etcd_wire_json_u64(const json_t *v, uint64_t *out);

/*
 * Maps a non-200 gateway answer (status and body) to an error, filling
 * d->grpc_code and d->message from the body when it is the gateway's error
 * JSON ({"error","code","message"} in 3.4/3.5, {"code","message"} in 3.6).
 * The HTTP status is stored by the caller. d may be NULL.
 */
eo_etcd_err eo_etcd_wire_map_error(long http_status, const char *body, size_t len,
				   struct eo_etcd_detail *d);

/* ---- response parsing ---------------------------------------------------- */
/* Each parser takes the raw 200 body, fills *out and returns OK or PROTOCOL
 * (or NOMEM). On failure *out is left cleared. */

eo_etcd_err eo_etcd_wire_parse_members(const char *body, size_t len, struct eo_etcd_members *out);
eo_etcd_err eo_etcd_wire_parse_status(const char *body, size_t len, struct eo_etcd_status *out);
eo_etcd_err eo_etcd_wire_parse_range(const char *body, size_t len, struct eo_etcd_range *out);

/* ---- request bodies ------------------------------------------------------ */
/* Each returns a malloc'd compact JSON string, or NULL on allocation failure. */

char *eo_etcd_wire_req_move_leader(uint64_t target_id); /* {"targetID":"<id>"} */
char *eo_etcd_wire_req_range(const void *key, size_t key_len,
			     const struct eo_etcd_range_opts *opts);
/* {"action"} when a is NULL (a GET), else {"action","memberID","alarm":<its name>}. */
char *eo_etcd_wire_req_alarm(const char *action, const struct eo_etcd_alarm *a);
/* {"action","memberID","alarm"} with the alarm as named (an answer's name, kept as is;
 * NULL: "NONE"). */
char *eo_etcd_wire_req_alarm_name(const char *action, uint64_t member_id, const char *alarm);
char *eo_etcd_wire_req_compact(int64_t revision, bool physical);

/*
 * {"name":..,"password":..} for Authenticate and UserAdd (with_options adds the
 * "options" object old gateways need on UserAdd). The temporary JSON tree is
 * cleansed; the returned string holds the password: the caller cleanses it
 * (explicit_bzero) before free. NULL on allocation failure or invalid UTF-8.
 */
char *eo_etcd_wire_req_name_password(const char *name, const char *password, bool with_options);

#endif
