/*
 * support/fake_etcd.c - a fake etcd v3 JSON gateway. See fake_etcd.h.
 */
#include "support/fake_etcd.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "support/fake_apiserver.h"

#define MAX_MEMBERS 16
#define MAX_SCRIPT  16
#define MAX_DOWN    16
#define MAX_LOG	    256

struct fmember {
	uint64_t id;
	char name[EO_FAKE_ETCD_STR];
	char peer[EO_FAKE_ETCD_STR];
	bool learner;
};

struct scripted {
	char call[64];
	int status;
	char *body;
};

struct eo_fake_etcd {
	pthread_mutex_t mu;
	eo_kube_fake *srv;
	char connect_to[64];
	struct fmember m[MAX_MEMBERS];
	size_t n;
	uint64_t next_id;
	uint64_t cluster_id; /* every reply's header.cluster_id */
	uint64_t leader;     /* the leader every Status names; 0: the first member */
	struct scripted script[MAX_SCRIPT];
	size_t n_script;
	char down[MAX_DOWN][EO_FAKE_ETCD_STR];
	size_t n_down;
	struct eo_fake_etcd_request log[MAX_LOG];
	size_t n_log;
	/* auth: on/off, root's password (from auth/user/add or set_auth), the valid token */
	bool auth_on;
	char password[EO_FAKE_ETCD_STR];
	char token[64];
	unsigned tokens;
	unsigned authenticates;
};

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src != NULL ? src : "");
}

static struct fmember *find(eo_fake_etcd *f, uint64_t id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->m[i].id == id)
			return &f->m[i];
	return NULL;
}

static json_t *member_json(const struct fmember *m)
{
	char id[24];

	snprintf(id, sizeof(id), "%" PRIu64, m->id);
	return json_pack("{s:s, s:s, s:[s], s:[], s:b}", "ID", id, "name", m->name, "peerURLs",
			 m->peer, "clientURLs", "isLearner", m->learner);
}

/* The member whose name is the first label of host, or NULL. */
static const struct fmember *by_host(const eo_fake_etcd *f, const char *host)
{
	for (size_t i = 0; i < f->n; i++) {
		size_t l = strlen(f->m[i].name);

		if (l > 0 && strncmp(host, f->m[i].name, l) == 0 && host[l] == '.')
			return &f->m[i];
	}
	return NULL;
}

static uint64_t leader_of(const eo_fake_etcd *f)
{
	return f->leader != 0 ? f->leader : f->n > 0 ? f->m[0].id : 0;
}

/*
 * {"header":..., "members":[...]} plus extra (stolen) when not NULL; header.member_id is the
 * member addressed (host), or 1 when host names none.
 */
static char *members_body(eo_fake_etcd *f, const char *host, const char *key, json_t *extra)
{
	const struct fmember *self = by_host(f, host);
	char cid[24], mid[24];
	json_t *root = NULL;

	snprintf(cid, sizeof(cid), "%" PRIu64, f->cluster_id);
	snprintf(mid, sizeof(mid), "%" PRIu64, self != NULL ? self->id : 1);
	root = json_pack("{s:{s:s, s:s, s:s}, s:[]}", "header", "cluster_id", cid, "member_id", mid,
			 "revision", "7", "members");
	char *out = NULL;

	for (size_t i = 0; root != NULL && i < f->n; i++)
		json_array_append_new(json_object_get(root, "members"), member_json(&f->m[i]));
	if (root != NULL && extra != NULL)
		json_object_set(root, key, extra);
	json_decref(extra);
	if (root != NULL)
		out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

static char *error_body(const char *msg, int code)
{
	json_t *e = json_pack("{s:s, s:i, s:s}", "error", msg, "code", code, "message", msg);
	char *out = e != NULL ? json_dumps(e, JSON_COMPACT) : NULL;

	json_decref(e);
	return out;
}

static uint64_t body_id(const char *body)
{
	json_t *b = json_loads(body, 0, NULL);
	json_t *v = json_object_get(b, "ID");
	uint64_t id = 0;

	if (json_is_string(v))
		id = strtoull(json_string_value(v), NULL, 10);
	else if (json_is_integer(v))
		id = (uint64_t)json_integer_value(v);
	json_decref(b);
	return id;
}

static const char *body_str(const char *body, const char *key, char *buf, size_t cap)
{
	json_t *b = json_loads(body, 0, NULL);

	copy(buf, cap, json_string_value(json_object_get(b, key)));
	json_decref(b);
	return buf;
}

/* The auth calls; true when call was one of them (answered in rs). */
static bool answer_auth(eo_fake_etcd *f, const char *call, const char *body,
			struct eo_kube_fake_response *rs)
{
	char name[EO_FAKE_ETCD_STR], pw[EO_FAKE_ETCD_STR];

	if (strcmp(call, "auth/status") == 0) {
		rs->body =
		    strdup(f->auth_on ? "{\"header\":{},\"enabled\":true}" : "{\"header\":{}}");
	} else if (strcmp(call, "auth/authenticate") == 0) {
		f->authenticates++;
		body_str(body, "name", name, sizeof(name));
		body_str(body, "password", pw, sizeof(pw));
		if (!f->auth_on) {
			rs->status = 400;
			rs->body = error_body("etcdserver: authentication is not enabled", 9);
		} else if (strcmp(name, "root") != 0 || strcmp(pw, f->password) != 0) {
			rs->status = 400;
			rs->body = error_body("etcdserver: authentication failed, invalid user ID "
					      "or password",
					      3);
		} else {
			snprintf(f->token, sizeof(f->token), "fake.%u", ++f->tokens);
			if (asprintf(&rs->body, "{\"header\":{},\"token\":\"%s\"}", f->token) < 0)
				rs->body = NULL;
		}
	} else if (strcmp(call, "auth/user/add") == 0) {
		copy(f->password, sizeof(f->password), body_str(body, "password", pw, sizeof(pw)));
		rs->body = strdup("{\"header\":{}}");
	} else if (strcmp(call, "auth/role/add") == 0 || strcmp(call, "auth/user/grant") == 0) {
		rs->body = strdup("{\"header\":{}}");
	} else if (strcmp(call, "auth/enable") == 0) {
		f->auth_on = true;
		rs->body = strdup("{\"header\":{}}");
	} else {
		return false;
	}
	return true;
}

static void answer(eo_fake_etcd *f, const char *call, const char *host, const char *body,
		   const char *authz, struct eo_kube_fake_response *rs)
{
	for (size_t i = 0; i < f->n_down; i++)
		if (strcmp(f->down[i], host) == 0) {
			rs->status = 503;
			rs->body = error_body("etcdserver: unavailable (fake: host down)", 14);
			return;
		}
	for (size_t i = 0; i < f->n_script; i++)
		if (strcmp(f->script[i].call, call) == 0) {
			rs->status = f->script[i].status;
			rs->body = f->script[i].body;
			memmove(&f->script[i], &f->script[i + 1],
				(f->n_script - i - 1) * sizeof(f->script[0]));
			f->n_script--;
			return;
		}
	/* With auth on, everything but Authenticate and Status needs the current token. */
	if (f->auth_on && strcmp(call, "auth/authenticate") != 0 &&
	    strcmp(call, "maintenance/status") != 0 &&
	    (authz == NULL || f->token[0] == '\0' || strcmp(authz, f->token) != 0)) {
		rs->status = authz == NULL ? 400 : 401;
		rs->body = authz == NULL ? error_body("etcdserver: user name is empty", 3)
					 : error_body("etcdserver: invalid auth token", 16);
		return;
	}
	if (answer_auth(f, call, body, rs))
		return;
	if (strcmp(call, "cluster/member/list") == 0) {
		rs->body = members_body(f, host, NULL, NULL);
	} else if (strcmp(call, "cluster/member/add") == 0) {
		json_t *b = json_loads(body, 0, NULL);
		struct fmember *m = f->n < MAX_MEMBERS ? &f->m[f->n] : NULL;

		if (m == NULL || b == NULL) {
			rs->status = 500;
			rs->body = error_body("fake: cannot add", 13);
		} else {
			memset(m, 0, sizeof(*m));
			m->id = f->next_id++;
			copy(m->peer, sizeof(m->peer),
			     json_string_value(json_array_get(json_object_get(b, "peerURLs"), 0)));
			m->learner = json_is_true(json_object_get(b, "isLearner"));
			f->n++;
			rs->body = members_body(f, host, "member", member_json(m));
		}
		json_decref(b);
	} else if (strcmp(call, "cluster/member/promote") == 0 ||
		   strcmp(call, "cluster/member/remove") == 0) {
		struct fmember *m = find(f, body_id(body));

		if (m == NULL) {
			rs->status = 404;
			rs->body = error_body("etcdserver: member not found", 5);
		} else if (call[15] == 'p') {
			m->learner = false;
			rs->body = members_body(f, host, NULL, NULL);
		} else {
			memmove(m, m + 1, (size_t)(&f->m[f->n] - (m + 1)) * sizeof(*m));
			f->n--;
			rs->body = members_body(f, host, NULL, NULL);
		}
	} else if (strcmp(call, "maintenance/transfer-leadership") == 0) {
		const struct fmember *self = by_host(f, host);
		json_t *b = json_loads(body, 0, NULL);
		const char *t = json_string_value(json_object_get(b, "targetID"));
		uint64_t to = t != NULL ? strtoull(t, NULL, 10) : 0;

		if (self == NULL || self->id != leader_of(f)) {
			rs->status = 400;
			rs->body = error_body("etcdserver: not leader", 9);
		} else if (find(f, to) == NULL || find(f, to)->learner) {
			rs->status = 400;
			rs->body = error_body("etcdserver: bad leader transferee", 9);
		} else {
			f->leader = to;
			rs->body = strdup("{\"header\":{}}");
		}
		json_decref(b);
	} else if (strcmp(call, "maintenance/status") == 0) {
		const struct fmember *self = by_host(f, host);
		uint64_t id = self != NULL ? self->id : 0;
		bool learner = self != NULL && self->learner;

		if (asprintf(&rs->body,
			     "{\"header\":{\"cluster_id\":\"%" PRIu64 "\",\"member_id\":\"%" PRIu64
			     "\",\"revision\":\"7\"},\"version\":\"3.6.11\",\"dbSize\":\"20480\","
			     "\"leader\":\"%" PRIu64 "\",\"raftIndex\":\"9\",\"raftTerm\":\"2\","
			     "\"raftAppliedIndex\":\"9\",\"dbSizeInUse\":\"20480\","
			     "\"isLearner\":%s}",
			     f->cluster_id, id, leader_of(f), learner ? "true" : "false") < 0)
			rs->body = NULL;
	} else {
		rs->status = 404;
		rs->body = error_body("fake: unknown call", 12);
	}
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	eo_fake_etcd *f = ud;
	const char *h = eo_kube_fake_header(rq, "Host");
	const char *call = strncmp(rq->path, "/v3/", 4) == 0 ? rq->path + 4 : rq->path;
	char host[EO_FAKE_ETCD_STR];
	char *colon;

	copy(host, sizeof(host), h);
	colon = strrchr(host, ':');
	if (colon != NULL)
		*colon = '\0';
	pthread_mutex_lock(&f->mu);
	if (f->n_log < MAX_LOG) {
		struct eo_fake_etcd_request *r = &f->log[f->n_log++];

		copy(r->host, sizeof(r->host), host);
		copy(r->call, sizeof(r->call), call);
		copy(r->body, sizeof(r->body), rq->body);
	}
	answer(f, call, host, rq->body, eo_kube_fake_header(rq, "Authorization"), rs);
	pthread_mutex_unlock(&f->mu);
}

eo_fake_etcd *eo_fake_etcd_start(void)
{
	eo_fake_etcd *f = calloc(1, sizeof(*f));
	const char *url;

	if (f == NULL)
		return NULL;
	pthread_mutex_init(&f->mu, NULL);
	f->next_id = 0x1000;
	f->cluster_id = EO_FAKE_ETCD_CLUSTER_ID;
	f->srv = eo_kube_fake_start(handler, f);
	if (f->srv == NULL) {
		eo_fake_etcd_stop(f);
		return NULL;
	}
	url = eo_kube_fake_url(f->srv); /* http://127.0.0.1:<port> */
	snprintf(f->connect_to, sizeof(f->connect_to), "::%s", url + strlen("http://"));
	return f;
}

void eo_fake_etcd_stop(eo_fake_etcd *f)
{
	if (f == NULL)
		return;
	eo_kube_fake_stop(f->srv);
	for (size_t i = 0; i < f->n_script; i++)
		free(f->script[i].body);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

const char *eo_fake_etcd_url(const eo_fake_etcd *f)
{
	return eo_kube_fake_url(f->srv);
}

const char *eo_fake_etcd_connect_to(const eo_fake_etcd *f)
{
	return f->connect_to;
}

void eo_fake_etcd_set_cluster_id(eo_fake_etcd *f, uint64_t id)
{
	pthread_mutex_lock(&f->mu);
	f->cluster_id = id;
	pthread_mutex_unlock(&f->mu);
}

void eo_fake_etcd_set_member(eo_fake_etcd *f, uint64_t id, const char *name, const char *peer_url,
			     bool learner)
{
	struct fmember *m;

	pthread_mutex_lock(&f->mu);
	m = find(f, id);
	if (m == NULL && f->n < MAX_MEMBERS)
		m = &f->m[f->n++];
	if (m != NULL) {
		m->id = id;
		copy(m->name, sizeof(m->name), name);
		copy(m->peer, sizeof(m->peer), peer_url);
		m->learner = learner;
	}
	pthread_mutex_unlock(&f->mu);
}

bool eo_fake_etcd_has_member(eo_fake_etcd *f, uint64_t id)
{
	bool r;

	pthread_mutex_lock(&f->mu);
	r = find(f, id) != NULL;
	pthread_mutex_unlock(&f->mu);
	return r;
}

bool eo_fake_etcd_is_learner(eo_fake_etcd *f, uint64_t id)
{
	struct fmember *m;
	bool r;

	pthread_mutex_lock(&f->mu);
	m = find(f, id);
	r = m != NULL && m->learner;
	pthread_mutex_unlock(&f->mu);
	return r;
}

void eo_fake_etcd_set_leader(eo_fake_etcd *f, uint64_t id)
{
	pthread_mutex_lock(&f->mu);
	f->leader = id;
	pthread_mutex_unlock(&f->mu);
}

void eo_fake_etcd_script(eo_fake_etcd *f, const char *call, int status, const char *body)
{
	pthread_mutex_lock(&f->mu);
	if (f->n_script < MAX_SCRIPT) {
		struct scripted *s = &f->script[f->n_script++];

		copy(s->call, sizeof(s->call), call);
		s->status = status;
		s->body = strdup(body != NULL ? body : "");
	}
	pthread_mutex_unlock(&f->mu);
}

void eo_fake_etcd_set_down(eo_fake_etcd *f, const char *host, bool down)
{
	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n_down; i++)
		if (strcmp(f->down[i], host) == 0) {
			if (!down) {
				memmove(f->down[i], f->down[i + 1],
					(f->n_down - i - 1) * sizeof(f->down[0]));
				f->n_down--;
			}
			pthread_mutex_unlock(&f->mu);
			return;
		}
	if (down && f->n_down < MAX_DOWN)
		copy(f->down[f->n_down++], EO_FAKE_ETCD_STR, host);
	pthread_mutex_unlock(&f->mu);
}

size_t eo_fake_etcd_requests(eo_fake_etcd *f)
{
	size_t n;

	pthread_mutex_lock(&f->mu);
	n = f->n_log;
	pthread_mutex_unlock(&f->mu);
	return n;
}

bool eo_fake_etcd_request(eo_fake_etcd *f, size_t i, struct eo_fake_etcd_request *out)
{
	bool ok;

	pthread_mutex_lock(&f->mu);
	ok = i < f->n_log;
	if (ok)
		*out = f->log[i];
	pthread_mutex_unlock(&f->mu);
	return ok;
}

size_t eo_fake_etcd_count(eo_fake_etcd *f, const char *call)
{
	size_t n = 0;

	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n_log; i++)
		n += strcmp(f->log[i].call, call) == 0;
	pthread_mutex_unlock(&f->mu);
	return n;
}

size_t eo_fake_etcd_first(eo_fake_etcd *f, const char *call)
{
	size_t r = SIZE_MAX;

	pthread_mutex_lock(&f->mu);
	for (size_t i = 0; i < f->n_log && r == SIZE_MAX; i++)
		if (strcmp(f->log[i].call, call) == 0)
			r = i;
	pthread_mutex_unlock(&f->mu);
	return r;
}

void eo_fake_etcd_set_auth(eo_fake_etcd *f, bool on, const char *password)
{
	pthread_mutex_lock(&f->mu);
	f->auth_on = on;
	copy(f->password, sizeof(f->password), password);
	pthread_mutex_unlock(&f->mu);
}

bool eo_fake_etcd_auth_on(eo_fake_etcd *f)
{
	bool on;

	pthread_mutex_lock(&f->mu);
	on = f->auth_on;
	pthread_mutex_unlock(&f->mu);
	return on;
}

void eo_fake_etcd_expire_token(eo_fake_etcd *f)
{
	pthread_mutex_lock(&f->mu);
	f->token[0] = '\0';
	pthread_mutex_unlock(&f->mu);
}

unsigned eo_fake_etcd_authenticates(eo_fake_etcd *f)
{
	unsigned n;

	pthread_mutex_lock(&f->mu);
	n = f->authenticates;
	pthread_mutex_unlock(&f->mu);
	return n;
}
