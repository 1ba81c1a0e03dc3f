/*
 * The etcd v3 gateway's JSON: request bodies, response parsing and error
 * mapping. Pure functions, no I/O.
 *
 * Encoding rules the gateway follows in all supported versions: field names
 * are the proto names (`ID`, `peerURLs`, `raft_term`, ...), 64-bit integers
 * are JSON strings, bytes are standard base64, and fields holding their
 * default value (0, false, "", empty list) are omitted altogether. Every
 * accessor below therefore treats a missing field as its zero value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base64.h"
#include "core/json.h"
#include "etcd/internal.h"

/* A duplicate key would make "which value counts" ambiguous: refuse it. */
#define JSON_FLAGS (JSON_REJECT_DUPLICATES)

void eo__etcd_copy(char *dst, size_t cap, const char *src)
{
	size_t n;

	if (cap == 0)
		return;
	if (src == NULL)
		src = "";
	n = strnlen(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

bool eo__etcd_parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool eo_etcd_wire_json_u64(const json_t *v, uint64_t *out)
{
	if (v == NULL) {
		*out = 0;
		return true;
	}
	if (json_is_string(v))
		return eo__etcd_parse_u64(json_string_value(v), json_string_length(v), out);
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	return false;
}

bool eo__etcd_json_i64(const json_t *v, int64_t *out)
{
	uint64_t u;

	if (v == NULL) {
		*out = 0;
		return true;
	}
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		size_t len = json_string_length(v);
		bool neg = len > 0 && s[0] == '-';

		if (!eo__etcd_parse_u64(s + neg, len - neg, &u))
			return false;
		if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
			return false;
		*out = neg ? (int64_t)(0 - u) : (int64_t)u;
		return true;
	}
	return false;
}

bool eo__etcd_json_bool(const json_t *v, bool *out)
{
	if (v == NULL) {
		*out = false;
		return true;
	}
	if (!json_is_boolean(v))
		return false;
	*out = json_is_true(v);
	return true;
}

bool eo__etcd_prefix_end(const void *key, size_t len, unsigned char **out, size_t *out_len)
{
	const unsigned char *k = key;
	unsigned char *end;

	while (len > 0 && k[len - 1] == 0xff)
		len--;
	end = malloc(len > 0 ? len + 1 : 2);
	if (end == NULL)
		return false;
	if (len == 0) {
		end[0] = 0;
		end[1] = 0;
		*out = end;
		*out_len = 1;
		return true;
	}
	memcpy(end, k, len);
	end[len - 1]++;
	end[len] = 0;
	*out = end;
	*out_len = len;
	return true;
}

/* ---- error mapping ------------------------------------------------------ */

/* gRPC status codes, as numbers on the wire. */
enum {
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
};

/*
 * etcd's messages are the stable part: the codes of some errors changed
 * between releases (the learner refusal went from Unavailable to
 * FailedPrecondition in 3.6). So the message decides first, the code second.
 * Order matters where one message is a prefix of another.
 */
static const struct {
	const char *needle;
	eo_etcd_err err;
} message_map[] = {
    {"etcdserver: member not found", EO_ETCD_NOTFOUND},
    {"etcdserver: requested lease not found", EO_ETCD_NOTFOUND},
    {"in sync with leader", EO_ETCD_LEARNER_NOT_READY},
    {"can only promote a learner member", EO_ETCD_NOT_LEARNER},
    {"too many learner members", EO_ETCD_TOO_MANY_LEARNERS},
    {"etcdserver: unhealthy cluster", EO_ETCD_UNHEALTHY_CLUSTER},
    {"not enough started members", EO_ETCD_UNHEALTHY_CLUSTER},
    {"Peer URLs already exists", EO_ETCD_PEER_URL_EXISTS},
    {"member ID already exist", EO_ETCD_PEER_URL_EXISTS},
    {"rpc not supported for learner", EO_ETCD_LEARNER},
    {"database space exceeded", EO_ETCD_NOSPACE},
    {"required revision has been compacted", EO_ETCD_COMPACTED},
    {"etcdserver: request timed out", EO_ETCD_TIMEOUT},
    {"etcdserver: no leader", EO_ETCD_UNAVAILABLE},
    {"etcdserver: leader changed", EO_ETCD_UNAVAILABLE},
    {"etcdserver: not capable", EO_ETCD_UNAVAILABLE},
    {"etcdserver: too many requests", EO_ETCD_UNAVAILABLE},
    {"etcdserver: permission denied", EO_ETCD_AUTH},
    {"etcdserver: invalid auth token", EO_ETCD_AUTH},
    {"etcdserver: authentication failed", EO_ETCD_AUTH},
    {"etcdserver: revision of auth store is old", EO_ETCD_AUTH},
    {"etcdserver: user name is empty", EO_ETCD_AUTH},
};

bool eo__etcd_is_learner_refusal(const char *message)
{
	return message != NULL && strstr(message, "rpc not supported for learner") != NULL;
}

eo_etcd_err eo__etcd_map_grpc(int code, const char *message)
{
	if (message != NULL) {
		for (size_t i = 0; i < sizeof(message_map) / sizeof(message_map[0]); i++)
			if (strstr(message, message_map[i].needle) != NULL)
				return message_map[i].err;
	}
	switch (code) {
	case GRPC_INVALID_ARGUMENT:
	case GRPC_FAILED_PRECONDITION:
	case GRPC_OUT_OF_RANGE:
	case GRPC_ALREADY_EXISTS:
		return EO_ETCD_INVALID;
	case GRPC_UNAUTHENTICATED:
	case GRPC_PERMISSION_DENIED:
		return EO_ETCD_AUTH;
	case GRPC_NOT_FOUND:
		/* Without etcd's "member not found" text this is the router's
		 * "Not Found" (3.6 answers unknown paths with code 5). */
		return EO_ETCD_UNSUPPORTED;
	case GRPC_UNIMPLEMENTED:
		return EO_ETCD_UNSUPPORTED;
	case GRPC_DEADLINE_EXCEEDED:
	case GRPC_CANCELLED:
		return EO_ETCD_TIMEOUT;
	case GRPC_UNAVAILABLE:
	case GRPC_ABORTED:
	case GRPC_RESOURCE_EXHAUSTED:
		return EO_ETCD_UNAVAILABLE;
	case GRPC_UNKNOWN:
	case GRPC_INTERNAL:
	case GRPC_DATA_LOSS:
		return EO_ETCD_INTERNAL;
	default:
		return EO_ETCD_INTERNAL;
	}
}

static eo_etcd_err map_http_status(long status)
{
	switch (status) {
	case 400:
	case 412: /* FailedPrecondition in grpc-gateway before v1.14 (etcd 3.4) */
		return EO_ETCD_INVALID;
	case 401:
	case 403:
		return EO_ETCD_AUTH;
	case 404:
	case 405:
	case 501:
		return EO_ETCD_UNSUPPORTED;
	case 408:
	case 499:
	case 504:
		return EO_ETCD_TIMEOUT;
	case 429:
	case 503:
		return EO_ETCD_UNAVAILABLE;
	default:
		return status >= 500 ? EO_ETCD_INTERNAL : EO_ETCD_PROTOCOL;
	}
}

eo_etcd_err eo_etcd_wire_map_error(long http_status, const char *body, size_t len,
				   struct eo_etcd_detail *d)
{
	json_t *root = NULL;
	const json_t *code, *msg;
	int grpc = -1;
	const char *text = NULL;
	eo_etcd_err err;

	if (body != NULL && len > 0)
		root = json_loadb(body, len, JSON_FLAGS, NULL);
	if (json_is_object(root)) {
		code = json_object_get(root, "code");
		if (json_is_integer(code) && json_integer_value(code) >= 0 &&
		    json_integer_value(code) <= 64)
			grpc = (int)json_integer_value(code);
		/* 3.6 drops "error"; 3.4/3.5 carry the same text in both. */
		msg = json_object_get(root, "message");
		if (!json_is_string(msg))
			msg = json_object_get(root, "error");
		if (json_is_string(msg))
			text = json_string_value(msg);
	}
	if (grpc >= 0 || text != NULL)
		err = eo__etcd_map_grpc(grpc, text);
	else
		err = map_http_status(http_status);
	if (d != NULL) {
		d->grpc_code = grpc;
		d->message[0] = '\0'; /* an empty body leaves no message, not a stale one */
		if (text != NULL) {
			eo__etcd_copy(d->message, sizeof(d->message), text);
		} else if (body != NULL && len > 0) {
			/* Plain-text answers ("Not Found"): keep the first line. */
			size_t n = 0;

			while (n < len && n < sizeof(d->message) - 1 && body[n] != '\n' &&
			       body[n] != '\r' && body[n] != '\0')
				n++;
			memcpy(d->message, body, n);
			d->message[n] = '\0';
		}
	}
	json_decref(root);
	return err;
}

/* ---- parsing ------------------------------------------------------------ */

static json_t *load_object(const char *body, size_t len)
{
	json_t *root = json_loadb(body, len, JSON_FLAGS, NULL);

	if (root != NULL && !json_is_object(root)) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Copies an optional array of strings; absent means empty. */
static eo_etcd_err string_array(const json_t *a, char ***out, size_t *n_out)
{
	char **v = NULL;
	size_t n, i;
	const json_t *e;

	*out = NULL;
	*n_out = 0;
	if (a == NULL)
		return EO_ETCD_OK;
	if (!json_is_array(a))
		return EO_ETCD_PROTOCOL;
	n = json_array_size(a);
	if (n == 0)
		return EO_ETCD_OK;
	v = calloc(n, sizeof(*v));
	if (v == NULL)
		return EO_ETCD_NOMEM;
	json_array_foreach(a, i, e)
	{
		if (!json_is_string(e)) {
			*out = v;
			*n_out = i;
			return EO_ETCD_PROTOCOL;
		}
		v[i] = strdup(json_string_value(e));
		if (v[i] == NULL) {
			*out = v;
			*n_out = i;
			return EO_ETCD_NOMEM;
		}
	}
	*out = v;
	*n_out = n;
	return EO_ETCD_OK;
}

/* Fills *m from one member object; on failure *m may be partly filled. */
static eo_etcd_err parse_member(const json_t *o, struct eo_etcd_member *m)
{
	const json_t *name;
	eo_etcd_err err;

	if (!json_is_object(o))
		return EO_ETCD_PROTOCOL;
	if (!eo_etcd_wire_json_u64(json_object_get(o, "ID"), &m->id) || m->id == 0)
		return EO_ETCD_PROTOCOL;
	name = json_object_get(o, "name");
	if (name != NULL && !json_is_string(name))
		return EO_ETCD_PROTOCOL;
	m->name = strdup(name != NULL ? json_string_value(name) : "");
	if (m->name == NULL)
		return EO_ETCD_NOMEM;
	err = string_array(json_object_get(o, "peerURLs"), &m->peer_urls, &m->n_peer_urls);
	if (err != EO_ETCD_OK)
		return err;
	err = string_array(json_object_get(o, "clientURLs"), &m->client_urls, &m->n_client_urls);
	if (err != EO_ETCD_OK)
		return err;
	if (!eo__etcd_json_bool(json_object_get(o, "isLearner"), &m->is_learner))
		return EO_ETCD_PROTOCOL;
	return EO_ETCD_OK;
}

static bool parse_header(const json_t *root, uint64_t *cluster_id, uint64_t *member_id,
			 int64_t *revision)
{
	const json_t *h = json_object_get(root, "header");
	uint64_t c = 0, m = 0;
	int64_t r = 0;

	if (h != NULL) {
		if (!json_is_object(h))
			return false;
		if (!eo_etcd_wire_json_u64(json_object_get(h, "cluster_id"), &c) ||
		    !eo_etcd_wire_json_u64(json_object_get(h, "member_id"), &m) ||
		    !eo__etcd_json_i64(json_object_get(h, "revision"), &r))
			return false;
	}
	if (cluster_id != NULL)
		*cluster_id = c;
	if (member_id != NULL)
		*member_id = m;
	if (revision != NULL)
		*revision = r;
	return true;
}

static eo_etcd_err members_from(const json_t *root, struct eo_etcd_members *out)
{
	const json_t *a = json_object_get(root, "members");
	size_t i;
	const json_t *e;
	eo_etcd_err err = EO_ETCD_OK;

	memset(out, 0, sizeof(*out));
	if (!parse_header(root, &out->cluster_id, &out->responder_id, NULL))
		return EO_ETCD_PROTOCOL;
	if (a == NULL)
		return EO_ETCD_OK;
	if (!json_is_array(a))
		return EO_ETCD_PROTOCOL;
	if (json_array_size(a) == 0)
		return EO_ETCD_OK;
	out->v = calloc(json_array_size(a), sizeof(*out->v));
	if (out->v == NULL)
		return EO_ETCD_NOMEM;
	json_array_foreach(a, i, e)
	{
		out->n = i + 1; /* so a partial member is freed by clear */
		err = parse_member(e, &out->v[i]);
		if (err != EO_ETCD_OK)
			return err;
	}
	return EO_ETCD_OK;
}

eo_etcd_err eo_etcd_wire_parse_members(const char *body, size_t len, struct eo_etcd_members *out)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err;

	memset(out, 0, sizeof(*out));
	if (root == NULL)
		return EO_ETCD_PROTOCOL;
	err = members_from(root, out);
	if (err != EO_ETCD_OK)
		eo_etcd_members_clear(out);
	json_decref(root);
	return err;
}

eo_etcd_err eo__etcd_parse_member_add(const char *body, size_t len, struct eo_etcd_member *added,
				      struct eo_etcd_members *members)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	memset(added, 0, sizeof(*added));
	if (members != NULL)
		memset(members, 0, sizeof(*members));
	if (root == NULL)
		goto out;
	err = parse_member(json_object_get(root, "member"), added);
	if (err != EO_ETCD_OK)
		goto out;
	if (members != NULL)
		err = members_from(root, members);
out:
	if (err != EO_ETCD_OK) {
		eo_etcd_member_clear(added);
		eo_etcd_members_clear(members);
	}
	json_decref(root);
	return err;
}

static bool opt_string(const json_t *root, const char *key, char *dst, size_t cap)
{
	const json_t *v = json_object_get(root, key);

	if (v == NULL) {
		dst[0] = '\0';
		return true;
	}
	if (!json_is_string(v))
		return false;
	eo__etcd_copy(dst, cap, json_string_value(v));
	return true;
}

eo_etcd_err eo_etcd_wire_parse_status(const char *body, size_t len, struct eo_etcd_status *out)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	memset(out, 0, sizeof(*out));
	if (root == NULL)
		goto out;
	if (!parse_header(root, &out->cluster_id, &out->member_id, &out->revision))
		goto out;
	if (!opt_string(root, "version", out->version, sizeof(out->version)) ||
	    !opt_string(root, "storageVersion", out->storage_version, sizeof(out->storage_version)))
		goto out;
	if (!eo_etcd_wire_json_u64(json_object_get(root, "leader"), &out->leader) ||
	    !eo_etcd_wire_json_u64(json_object_get(root, "raftIndex"), &out->raft_index) ||
	    !eo_etcd_wire_json_u64(json_object_get(root, "raftTerm"), &out->raft_term) ||
	    !eo_etcd_wire_json_u64(json_object_get(root, "raftAppliedIndex"),
				   &out->raft_applied_index) ||
	    !eo__etcd_json_i64(json_object_get(root, "dbSize"), &out->db_size) ||
	    !eo__etcd_json_i64(json_object_get(root, "dbSizeInUse"), &out->db_size_in_use) ||
	    !eo__etcd_json_i64(json_object_get(root, "dbSizeQuota"), &out->db_size_quota) ||
	    !eo__etcd_json_bool(json_object_get(root, "isLearner"), &out->is_learner))
		goto out;
	if (out->version[0] == '\0')
		goto out; /* every etcd reports its version; anything else is not a status */
	err = string_array(json_object_get(root, "errors"), &out->errors, &out->n_errors);
out:
	if (err != EO_ETCD_OK)
		eo_etcd_status_clear(out);
	json_decref(root);
	return err;
}

/* An alarm type as the gateway writes it: its enum name, or (leniently) its number. */
static bool alarm_type(const json_t *v, enum eo_etcd_alarm_type *out)
{
	if (v == NULL) {
		*out = EO_ETCD_ALARM_NONE; /* omitted because it is the zero value */
		return true;
	}
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < 0 || i > EO_ETCD_ALARM_CORRUPT)
			return false;
		*out = (enum eo_etcd_alarm_type)i;
		return true;
	}
	for (int i = 0; json_is_string(v) && i <= EO_ETCD_ALARM_CORRUPT; i++) {
		enum eo_etcd_alarm_type t = (enum eo_etcd_alarm_type)i;

		if (strcmp(json_string_value(v), eo_etcd_alarm_name(t)) == 0) {
			*out = t;
			return true;
		}
	}
	return false;
}

eo_etcd_err eo__etcd_parse_alarms(const char *body, size_t len, struct eo_etcd_alarms *out)
{
	json_t *root = load_object(body, len);
	const json_t *a, *e;
	eo_etcd_err err = EO_ETCD_PROTOCOL;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (root == NULL || !parse_header(root, NULL, NULL, NULL))
		goto out;
	a = json_object_get(root, "alarms");
	if (a == NULL) {
		err = EO_ETCD_OK;
		goto out;
	}
	if (!json_is_array(a))
		goto out;
	if (json_array_size(a) > 0) {
		out->v = calloc(json_array_size(a), sizeof(*out->v));
		if (out->v == NULL) {
			err = EO_ETCD_NOMEM;
			goto out;
		}
	}
	json_array_foreach(a, i, e)
	{
		struct eo_etcd_alarm al = {0};

		if (!json_is_object(e) ||
		    !eo_etcd_wire_json_u64(json_object_get(e, "memberID"), &al.member_id) ||
		    !alarm_type(json_object_get(e, "alarm"), &al.type))
			goto out;
		out->v[out->n++] = al;
	}
	err = EO_ETCD_OK;
out:
	if (err != EO_ETCD_OK)
		eo_etcd_alarms_clear(out);
	json_decref(root);
	return err;
}

void eo_etcd_kv_clear(struct eo_etcd_kv *kv)
{
	if (kv == NULL)
		return;
	free(kv->key);
	free(kv->value);
	memset(kv, 0, sizeof(*kv));
}

void eo_etcd_range_clear(struct eo_etcd_range *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++)
		eo_etcd_kv_clear(&r->kvs[i]);
	free(r->kvs);
	memset(r, 0, sizeof(*r));
}

/* Optional base64 bytes; absent means empty (still a NUL-terminated buffer). */
static eo_etcd_err opt_bytes(const json_t *v, unsigned char **out, size_t *len)
{
	int rc;

	if (v != NULL && !json_is_string(v))
		return EO_ETCD_PROTOCOL;
	/* etcd's gateway writes standard padded base64; URL-safe or unpadded
	 * input is accepted too. */
	rc = eo_base64_decode(v ? json_string_value(v) : "", v ? json_string_length(v) : 0,
			      EO_BASE64_LENIENT, out, len);
	if (rc == -ENOMEM)
		return EO_ETCD_NOMEM;
	return rc == 0 ? EO_ETCD_OK : EO_ETCD_PROTOCOL;
}

eo_etcd_err eo__etcd_parse_kv(const json_t *o, struct eo_etcd_kv *kv)
{
	eo_etcd_err err;

	if (!json_is_object(o))
		return EO_ETCD_PROTOCOL;
	err = opt_bytes(json_object_get(o, "key"), &kv->key, &kv->key_len);
	if (err != EO_ETCD_OK)
		return err;
	err = opt_bytes(json_object_get(o, "value"), &kv->value, &kv->value_len);
	if (err != EO_ETCD_OK)
		return err;
	if (!eo__etcd_json_i64(json_object_get(o, "create_revision"), &kv->create_revision) ||
	    !eo__etcd_json_i64(json_object_get(o, "mod_revision"), &kv->mod_revision) ||
	    !eo__etcd_json_i64(json_object_get(o, "version"), &kv->version) ||
	    !eo__etcd_json_i64(json_object_get(o, "lease"), &kv->lease))
		return EO_ETCD_PROTOCOL;
	return EO_ETCD_OK;
}

eo_etcd_err eo_etcd_wire_parse_range(const char *body, size_t len, struct eo_etcd_range *out)
{
	json_t *root = load_object(body, len);
	const json_t *a, *e;
	size_t i;
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	memset(out, 0, sizeof(*out));
	if (root == NULL)
		goto out;
	if (!parse_header(root, NULL, NULL, &out->revision) ||
	    !eo__etcd_json_bool(json_object_get(root, "more"), &out->more) ||
	    !eo__etcd_json_i64(json_object_get(root, "count"), &out->count))
		goto out;
	a = json_object_get(root, "kvs");
	err = EO_ETCD_OK;
	if (a == NULL || (json_is_array(a) && json_array_size(a) == 0))
		goto out;
	err = EO_ETCD_PROTOCOL;
	if (!json_is_array(a))
		goto out;
	err = EO_ETCD_NOMEM;
	out->kvs = calloc(json_array_size(a), sizeof(*out->kvs));
	if (out->kvs == NULL)
		goto out;
	json_array_foreach(a, i, e)
	{
		out->n = i + 1;
		err = eo__etcd_parse_kv(e, &out->kvs[i]);
		if (err != EO_ETCD_OK)
			goto out;
	}
out:
	if (err != EO_ETCD_OK)
		eo_etcd_range_clear(out);
	json_decref(root);
	return err;
}

eo_etcd_err eo__etcd_parse_put(const char *body, size_t len, int64_t *revision)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err = EO_ETCD_PROTOCOL;
	int64_t rev = 0;

	if (root != NULL && parse_header(root, NULL, NULL, &rev))
		err = EO_ETCD_OK;
	if (revision != NULL)
		*revision = rev;
	json_decref(root);
	return err;
}

eo_etcd_err eo__etcd_parse_hash_kv(const char *body, size_t len, uint32_t *hash,
				   int64_t *compact_revision)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err = EO_ETCD_PROTOCOL;
	int64_t h = 0, c = 0;
	const json_t *cr;

	*hash = 0;
	*compact_revision = 0;
	cr = root ? json_object_get(root, "compact_revision") : NULL;
	if (root != NULL && parse_header(root, NULL, NULL, NULL) &&
	    eo__etcd_json_i64(json_object_get(root, "hash"), &h) && h >= 0 && h <= UINT32_MAX &&
	    (cr == NULL || eo__etcd_json_i64(cr, &c))) {
		*hash = (uint32_t)h;
		*compact_revision = c;
		err = EO_ETCD_OK;
	}
	json_decref(root);
	return err;
}

eo_etcd_err eo__etcd_parse_lease_grant(const char *body, size_t len, int64_t *id)
{
	json_t *root = load_object(body, len);
	eo_etcd_err err = EO_ETCD_PROTOCOL;
	int64_t v = 0;

	*id = 0;
	if (root != NULL && parse_header(root, NULL, NULL, NULL) &&
	    json_object_get(root, "error") == NULL &&
	    eo__etcd_json_i64(json_object_get(root, "ID"), &v) && v > 0) {
		*id = v;
		err = EO_ETCD_OK;
	}
	json_decref(root);
	return err;
}

/* ---- requests ----------------------------------------------------------- */

/* Dumps and releases obj (stolen); NULL if obj is NULL or on failure. */
static char *dump_steal(json_t *obj)
{
	char *s = NULL;

	if (obj != NULL)
		s = eo_json_dumps(obj, JSON_COMPACT, NULL);
	json_decref(obj);
	return s;
}

char *eo__etcd_req_member_add(const char *const *peer_urls, size_t n, bool as_learner)
{
	json_t *o = json_object(), *a = json_array();

	if (o == NULL || a == NULL) {
		json_decref(a);
		goto fail;
	}
	/* _set_new steals a even when it fails: no decref of a after this. */
	if (json_object_set_new(o, "peerURLs", a) != 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(peer_urls[i])) != 0)
			goto fail;
	if (as_learner && json_object_set_new(o, "isLearner", json_true()) != 0)
		goto fail;
	return dump_steal(o);
fail:
	json_decref(o);
	return NULL;
}

/* {"<key>":"<v>"}: 64-bit integers travel as JSON strings through the gateway. */
static char *one_u64(const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return dump_steal(json_pack("{s:s}", key, buf));
}

static char *one_i64(const char *key, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return dump_steal(json_pack("{s:s}", key, buf));
}

char *eo__etcd_req_member_id(uint64_t id)
{
	return one_u64("ID", id);
}

char *eo_etcd_wire_req_move_leader(uint64_t target_id)
{
	return one_u64("targetID", target_id);
}

char *eo__etcd_req_put(const void *key, size_t key_len, const void *value, size_t value_len)
{
	char *k = eo_base64_encode(key, key_len);
	char *v = eo_base64_encode(value, value_len);
	char *s = NULL;

	if (k != NULL && v != NULL)
		s = dump_steal(json_pack("{s:s,s:s}", "key", k, "value", v));
	free(k);
	free(v);
	return s;
}

/* One txn op: {"request_put":{key,value[,lease]}} or {"request_delete_range":{key}}. */
static json_t *txn_op(const struct eo_etcd_txn_op *op)
{
	char *k = eo_base64_encode(op->key, op->key_len);
	char *v = op->del ? NULL : eo_base64_encode(op->value ? op->value : "", op->value_len);
	char lease[24];
	json_t *o = NULL;

	snprintf(lease, sizeof(lease), "%" PRId64, op->lease);
	if (k != NULL && op->del)
		o = json_pack("{s:{s:s}}", "request_delete_range", "key", k);
	else if (k != NULL && v != NULL && op->lease != 0)
		o = json_pack("{s:{s:s,s:s,s:s}}", "request_put", "key", k, "value", v, "lease",
			      lease);
	else if (k != NULL && v != NULL)
		o = json_pack("{s:{s:s,s:s}}", "request_put", "key", k, "value", v);
	free(k);
	free(v);
	return o;
}

char *eo__etcd_req_txn(const struct eo_etcd_txn_op *ops, size_t n)
{
	json_t *success = json_array();
	size_t i;

	for (i = 0; success != NULL && i < n; i++) {
		json_t *op = txn_op(&ops[i]);

		if (op == NULL || json_array_append_new(success, op) != 0) {
			json_decref(success);
			return NULL;
		}
	}
	return success ? dump_steal(json_pack("{s:o}", "success", success)) : NULL;
}

char *eo__etcd_req_lease_grant_id(int64_t id, int64_t ttl_s)
{
	char ids[24], ttl[24];

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	snprintf(ttl, sizeof(ttl), "%" PRId64, ttl_s);
	return dump_steal(json_pack("{s:s,s:s}", "ID", ids, "TTL", ttl));
}

char *eo_etcd_wire_req_alarm(const char *action, const struct eo_etcd_alarm *a)
{
	if (a == NULL)
		return dump_steal(json_pack("{s:s}", "action", action));
	return eo_etcd_wire_req_alarm_name(action, a->member_id, eo_etcd_alarm_name(a->type));
}

char *eo_etcd_wire_req_alarm_name(const char *action, uint64_t member_id, const char *alarm)
{
	char id[24];

	snprintf(id, sizeof(id), "%" PRIu64, member_id);
	return dump_steal(json_pack("{s:s,s:s,s:s}", "action", action, "memberID", id, "alarm",
				    alarm ? alarm : "NONE"));
}

char *eo_etcd_wire_req_compact(int64_t revision, bool physical)
{
	char rev[24];

	snprintf(rev, sizeof(rev), "%" PRId64, revision);
	return dump_steal(json_pack("{s:s,s:b}", "revision", rev, "physical", physical));
}

char *eo__etcd_req_lease_grant(int64_t ttl_s)
{
	return one_i64("TTL", ttl_s);
}

char *eo__etcd_req_lease_id(int64_t id)
{
	return one_i64("ID", id);
}

char *eo_etcd_wire_req_range(const void *key, size_t key_len, const struct eo_etcd_range_opts *opts)
{
	static const struct eo_etcd_range_opts none;
	json_t *o = NULL;
	char *k = NULL, *e = NULL, *s = NULL;
	unsigned char *pend = NULL;
	size_t pend_len = 0;
	char limit[24];

	if (opts == NULL)
		opts = &none;
	k = eo_base64_encode(key, key_len);
	if (k == NULL)
		goto out;
	if (opts->range_end != NULL) {
		e = eo_base64_encode(opts->range_end, opts->range_end_len);
		if (e == NULL)
			goto out;
	} else if (opts->prefix) {
		if (!eo__etcd_prefix_end(key, key_len, &pend, &pend_len))
			goto out;
		e = eo_base64_encode(pend, pend_len);
		if (e == NULL)
			goto out;
	}
	o = json_pack("{s:s}", "key", k);
	if (o == NULL)
		goto out;
	if (e != NULL && json_object_set_new(o, "range_end", json_string(e)) != 0)
		goto out;
	if (opts->limit > 0) {
		snprintf(limit, sizeof(limit), "%" PRId64, opts->limit);
		if (json_object_set_new(o, "limit", json_string(limit)) != 0)
			goto out;
	}
	if (opts->revision > 0) {
		snprintf(limit, sizeof(limit), "%" PRId64, opts->revision);
		if (json_object_set_new(o, "revision", json_string(limit)) != 0)
			goto out;
	}
	if ((opts->serializable && json_object_set_new(o, "serializable", json_true()) != 0) ||
	    (opts->keys_only && json_object_set_new(o, "keys_only", json_true()) != 0) ||
	    (opts->count_only && json_object_set_new(o, "count_only", json_true()) != 0))
		goto out;
	s = dump_steal(o);
	o = NULL;
out:
	json_decref(o);
	free(k);
	free(e);
	free(pend);
	return s;
}

/* ---- auth ------------------------------------------------------------------ */

/* Cleanses every string value of obj in place, then releases it. */
static void wipe_decref(json_t *obj)
{
	const char *k = NULL;
	json_t *v = NULL;

	json_object_foreach(obj, k, v)
	{
		if (json_is_string(v))
			explicit_bzero((char *)json_string_value(v), json_string_length(v));
	}
	json_decref(obj);
}

char *eo_etcd_wire_req_name_password(const char *name, const char *password, bool with_options)
{
	json_t *o = json_object();
	char *s = NULL;
	size_t n;

	if (o == NULL || name == NULL || password == NULL)
		goto out;
	n = strlen(password);
	if (json_object_set_new(o, "name", json_string(name)) != 0 ||
	    json_object_set_new(o, "password", json_stringn(password, n)) != 0)
		goto out;
	/* Gateways before 3.4.16 refuse a user add without options (etcd#11414). */
	if (with_options &&
	    json_object_set_new(o, "options", json_pack("{s:b}", "no_password", 0)) != 0)
		goto out;
	s = eo_json_dumps(o, JSON_COMPACT, NULL);
out:
	wipe_decref(o);
	return s;
}

eo_etcd_err eo__etcd_parse_token(const char *body, size_t len, char *out, size_t cap)
{
	json_t *root = load_object(body, len);
	json_t *t = json_object_get(root, "token");
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	if (cap > 0)
		out[0] = '\0';
	if (json_is_string(t) && json_string_length(t) > 0 && json_string_length(t) < cap &&
	    strpbrk(json_string_value(t), "\r\n") == NULL) {
		memcpy(out, json_string_value(t), json_string_length(t) + 1);
		err = EO_ETCD_OK;
	}
	wipe_decref(root);
	return err;
}

eo_etcd_err eo__etcd_parse_auth_status(const char *body, size_t len, bool *enabled)
{
	json_t *root = load_object(body, len);
	json_t *e = json_object_get(root, "enabled");
	eo_etcd_err err = EO_ETCD_PROTOCOL;

	*enabled = false;
	/* Defaults are omitted: no "enabled" means false. */
	if (root != NULL && (e == NULL || json_is_boolean(e))) {
		*enabled = json_is_true(e);
		err = EO_ETCD_OK;
	}
	json_decref(root);
	return err;
}
