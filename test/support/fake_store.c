/*
 * support/fake_store.c - the stateful fake apiserver (support/fake_store.h).
 */
#include "support/fake_store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/fake_apiserver.h"
#include "support/testutil.h"

#define FS_MODES 8
#define FS_FAILS 8

struct fs_store {
	pthread_mutex_t mu;
	eo_kube_fake *fake;
	json_t *objects; /* key -> object */
	json_t *log;	 /* [entry] */
	long rv;	 /* the last resourceVersion handed out */
	enum fs_patch_mode mode;
	struct {
		char plural[64];
		enum fs_patch_mode mode;
	} modes[FS_MODES];
	struct {
		char method[8], plural[64], name[256];
		bool any_name;
		int status;
	} fails[FS_FAILS];
	bool refuse_evictions;
	void (*on_request)(void *ud, json_t *entry);
	void *on_request_ud;
};

/* What a request path names. */
struct target {
	char buf[1024];
	const char *plural, *name, *sub;
	char key[1024];
};

/*
 * /api/v1/[namespaces/<ns>/]<plural>[/<name>[/<sub>]] and the same under /apis/<group>/<v>;
 * the key is "plural/name", or the path itself when it names no resource.
 */
static void parse(const char *path, struct target *t)
{
	char *seg[16], *save = NULL;
	size_t n = 0, i;

	snprintf(t->buf, sizeof(t->buf), "%s", path);
	t->plural = t->name = t->sub = "";
	for (char *p = strtok_r(t->buf, "/", &save); p != NULL && n < 16;
	     p = strtok_r(NULL, "/", &save))
		seg[n++] = p;
	i = n > 0 && strcmp(seg[0], "api") == 0 ? 2
						: (n > 0 && strcmp(seg[0], "apis") == 0 ? 3 : n);
	if (i < n && strcmp(seg[i], "namespaces") == 0 && i + 2 < n)
		i += 2;
	if (i >= n) {
		snprintf(t->key, sizeof(t->key), "%s", path);
		return;
	}
	t->plural = seg[i];
	t->name = i + 1 < n ? seg[i + 1] : "";
	t->sub = i + 2 < n ? seg[i + 2] : "";
	snprintf(t->key, sizeof(t->key), "%s/%s", t->plural, t->name);
}

static const char *md_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

static void reply(struct eo_kube_fake_response *rs, int status, const json_t *o)
{
	rs->status = status;
	rs->body = json_dumps(o, JSON_COMPACT);
}

static void reply_status(struct eo_kube_fake_response *rs, int status, const char *reason,
			 const char *msg)
{
	rs->status = status;
	rs->body = tu_status_body(status, reason, msg);
}

static const char *reason_of(int status)
{
	switch (status) {
	case 404:
		return "NotFound";
	case 409:
		return "Conflict";
	case 429:
		return "TooManyRequests";
	default:
		return status >= 500 ? "InternalError" : "BadRequest";
	}
}

static int injected(struct fs_store *s, const char *method, const struct target *t)
{
	for (size_t i = 0; i < FS_FAILS; i++)
		if (s->fails[i].status != 0 && strcmp(s->fails[i].method, method) == 0 &&
		    strcmp(s->fails[i].plural, t->plural) == 0 &&
		    (s->fails[i].any_name || strcmp(s->fails[i].name, t->name) == 0))
			return s->fails[i].status;
	return 0;
}

static enum fs_patch_mode mode_of(struct fs_store *s, const char *plural)
{
	for (size_t i = 0; i < FS_MODES; i++)
		if (s->modes[i].plural[0] != '\0' && strcmp(s->modes[i].plural, plural) == 0)
			return s->modes[i].mode;
	return s->mode;
}

/* RFC 7386 merge of patch into target (in place). */
static void merge(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)patch, k, v)
	{
		if (json_is_null(v))
			json_object_del(target, k);
		else if (json_is_object(v) && json_is_object(json_object_get(target, k)))
			merge(json_object_get(target, k), v);
		else if (json_is_object(v)) {
			json_t *fresh = json_object();

			merge(fresh, v);
			json_object_set_new(target, k, fresh);
		} else
			json_object_set(target, k, v);
	}
}

static void patch_merge(struct fs_store *s, const struct target *t, json_t *have,
			const json_t *body, struct eo_kube_fake_response *rs)
{
	const char *rv = md_str(body, "resourceVersion"), *uid = md_str(body, "uid");
	const char *cur = md_str(have, "resourceVersion"), *cur_uid = md_str(have, "uid");
	json_t *copy, *part;
	char next[32];

	if ((rv != NULL && (cur == NULL || strcmp(rv, cur) != 0)) ||
	    (uid != NULL && (cur_uid == NULL || strcmp(uid, cur_uid) != 0))) {
		reply_status(rs, 409, "Conflict", "the object has been modified");
		return;
	}
	copy = json_deep_copy(have);
	if (strcmp(t->sub, "status") == 0) {
		if (json_object_get(copy, "status") == NULL)
			json_object_set_new(copy, "status", json_object());
		merge(json_object_get(copy, "status"), json_object_get(body, "status"));
	} else {
		part = json_deep_copy(body);
		json_object_del(part, "status");
		merge(copy, part);
		json_decref(part);
	}
	if (json_object_get(copy, "metadata") == NULL)
		json_object_set_new(copy, "metadata", json_object());
	snprintf(next, sizeof(next), "%ld", ++s->rv);
	json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion",
			    json_string(next));
	json_object_set_new(s->objects, t->key, copy);
	reply(rs, 200, copy);
}

static void do_patch(struct fs_store *s, const struct target *t, json_t *have, const json_t *body,
		     struct eo_kube_fake_response *rs)
{
	enum fs_patch_mode m = mode_of(s, t->plural);

	if (m == FS_PATCH_EMPTY)
		rs->status = 200, rs->body = strdup("{}");
	else if (have == NULL)
		reply_status(rs, 404, "NotFound", "not found");
	else if (m == FS_PATCH_ECHO)
		reply(rs, 200, have);
	else
		patch_merge(s, t, have, body, rs);
}

/* Whether a UID precondition (pre, may be NULL) holds for have. */
static bool uid_holds(const json_t *have, const char *pre)
{
	const char *uid = md_str(have, "uid");

	return pre == NULL || (uid != NULL && strcmp(pre, uid) == 0);
}

static void do_evict(struct fs_store *s, const struct target *t, json_t *have, const json_t *body,
		     struct eo_kube_fake_response *rs)
{
	const char *pre = json_string_value(json_object_get(
	    json_object_get(json_object_get(body, "deleteOptions"), "preconditions"), "uid"));

	if (have == NULL)
		reply_status(rs, 404, "NotFound", "not found");
	else if (!uid_holds(have, pre))
		reply_status(rs, 409, "Conflict", "precondition failed: UID");
	else if (s->refuse_evictions)
		reply_status(rs, 429, "TooManyRequests",
			     "Cannot evict pod as it would violate the pod's disruption budget.");
	else {
		json_object_del(s->objects, t->key);
		reply(rs, 201, body);
	}
}

static void answer(struct fs_store *s, const char *method, const struct target *t, json_t *have,
		   json_t *body, struct eo_kube_fake_response *rs)
{
	int fail = injected(s, method, t);

	if (fail != 0)
		reply_status(rs, fail, reason_of(fail), "injected failure");
	else if (strcmp(t->plural, "events") == 0)
		reply(rs, 201, body ? body : json_object());
	else if (strcmp(method, "POST") == 0 && strcmp(t->sub, "eviction") == 0)
		do_evict(s, t, have, body, rs);
	else if (strcmp(method, "GET") == 0 && have != NULL)
		reply(rs, 200, have);
	else if (strcmp(method, "GET") == 0)
		reply_status(rs, 404, "NotFound", "not found");
	else if (strcmp(method, "POST") == 0 && have != NULL)
		reply_status(rs, 409, "AlreadyExists", "already exists");
	else if (strcmp(method, "POST") == 0) {
		json_object_set(s->objects, t->key, body);
		reply(rs, 201, body);
	} else if (strcmp(method, "DELETE") == 0 && have == NULL)
		reply_status(rs, 404, "NotFound", "not found");
	else if (strcmp(method, "DELETE") == 0 &&
		 !uid_holds(have, json_string_value(json_object_get(
				      json_object_get(body, "preconditions"), "uid"))))
		reply_status(rs, 409, "Conflict", "precondition failed: UID");
	else if (strcmp(method, "DELETE") == 0) {
		json_object_del(s->objects, t->key);
		rs->body = strdup("{\"kind\":\"Status\",\"status\":\"Success\"}");
	} else if (strcmp(method, "PATCH") == 0)
		do_patch(s, t, have, body, rs);
	else
		reply_status(rs, 405, "MethodNotAllowed", "no");
}

static void handler(void *ud, const struct eo_kube_fake_request *rq,
		    struct eo_kube_fake_response *rs)
{
	struct fs_store *s = ud;
	json_t *body = json_loads(rq->body, 0, NULL), *have, *entry;
	struct target t;
	char path[1200];

	parse(rq->path, &t);
	snprintf(path, sizeof(path), "%s", rq->path);
	if (strcmp(rq->method, "POST") == 0 && t.name[0] == '\0' && t.plural[0] != '\0') {
		const char *n = md_str(body, "name");

		t.name = n != NULL ? n : "";
		snprintf(t.key, sizeof(t.key), "%s/%s", t.plural, t.name);
		snprintf(path, sizeof(path), "%s/%s", rq->path, t.name);
	}
	pthread_mutex_lock(&s->mu);
	have = json_object_get(s->objects, t.key);
	entry = json_pack("{s:s, s:s, s:s, s:s, s:s, s:O, s:s?}", "method", rq->method, "path",
			  path, "plural", t.plural, "name", t.name, "sub", t.sub, "body",
			  body ? body : json_null(), "uid", md_str(have, "uid"));
	if (s->on_request != NULL)
		s->on_request(s->on_request_ud, entry);
	json_array_append_new(s->log, entry);
	answer(s, rq->method, &t, have, body, rs);
	pthread_mutex_unlock(&s->mu);
	json_decref(body);
}

fs_store *fs_start(void)
{
	struct fs_store *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	pthread_mutex_init(&s->mu, NULL);
	s->objects = json_object();
	s->log = json_array();
	s->rv = 100;
	s->fake = eo_kube_fake_start(handler, s);
	assert_non_null(s->fake);
	return s;
}

void fs_stop(fs_store *s)
{
	if (s == NULL)
		return;
	eo_kube_fake_stop(s->fake);
	json_decref(s->objects);
	json_decref(s->log);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const char *fs_url(const fs_store *s)
{
	return eo_kube_fake_url(s->fake);
}

void fs_put(fs_store *s, const char *plural, json_t *o)
{
	char key[1024];

	assert_non_null(o);
	snprintf(key, sizeof(key), "%s/%s", plural, md_str(o, "name"));
	pthread_mutex_lock(&s->mu);
	json_object_set_new(s->objects, key, o);
	pthread_mutex_unlock(&s->mu);
}

void fs_put_path(fs_store *s, const char *path, json_t *o)
{
	struct target t;

	assert_non_null(o);
	parse(path, &t);
	pthread_mutex_lock(&s->mu);
	json_object_set_new(s->objects, t.key, o);
	pthread_mutex_unlock(&s->mu);
}

json_t *fs_get(fs_store *s, const char *plural, const char *name)
{
	char key[1024];
	json_t *o;

	snprintf(key, sizeof(key), "%s/%s", plural, name);
	pthread_mutex_lock(&s->mu);
	o = json_deep_copy(json_object_get(s->objects, key));
	pthread_mutex_unlock(&s->mu);
	return o;
}

size_t fs_size(fs_store *s, const char *plural)
{
	const char *k;
	json_t *v;
	size_t n = 0, l = plural != NULL ? strlen(plural) : 0;

	pthread_mutex_lock(&s->mu);
	json_object_foreach(s->objects, k, v)
	{
		n += plural == NULL || (strncmp(k, plural, l) == 0 && k[l] == '/');
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

json_t *fs_list(fs_store *s, const char *plural)
{
	const char *k;
	json_t *v, *out = json_array();
	size_t l = strlen(plural);

	pthread_mutex_lock(&s->mu);
	json_object_foreach(s->objects, k, v)
	{
		if (strncmp(k, plural, l) == 0 && k[l] == '/')
			json_array_append_new(out, json_deep_copy(v));
	}
	pthread_mutex_unlock(&s->mu);
	return out;
}

void fs_patch_mode(fs_store *s, const char *plural, enum fs_patch_mode m)
{
	pthread_mutex_lock(&s->mu);
	if (plural == NULL) {
		s->mode = m;
	} else {
		size_t i = 0;

		while (i < FS_MODES - 1 && s->modes[i].plural[0] != '\0' &&
		       strcmp(s->modes[i].plural, plural) != 0)
			i++;
		snprintf(s->modes[i].plural, sizeof(s->modes[i].plural), "%s", plural);
		s->modes[i].mode = m;
	}
	pthread_mutex_unlock(&s->mu);
}

void fs_fail(fs_store *s, const char *method, const char *plural, const char *name, int status)
{
	size_t i, free_at = FS_FAILS;

	pthread_mutex_lock(&s->mu);
	for (i = 0; i < FS_FAILS; i++) {
		if (strcmp(s->fails[i].method, method) == 0 &&
		    strcmp(s->fails[i].plural, plural) == 0 &&
		    s->fails[i].any_name == (name == NULL) &&
		    (name == NULL || strcmp(s->fails[i].name, name) == 0))
			break;
		if (free_at == FS_FAILS && s->fails[i].status == 0)
			free_at = i;
	}
	if (i == FS_FAILS)
		i = free_at;
	assert_true(i < FS_FAILS);
	snprintf(s->fails[i].method, sizeof(s->fails[i].method), "%s", method);
	snprintf(s->fails[i].plural, sizeof(s->fails[i].plural), "%s", plural);
	snprintf(s->fails[i].name, sizeof(s->fails[i].name), "%s", name != NULL ? name : "");
	s->fails[i].any_name = name == NULL;
	s->fails[i].status = status;
	pthread_mutex_unlock(&s->mu);
}

void fs_refuse_evictions(fs_store *s, bool on)
{
	pthread_mutex_lock(&s->mu);
	s->refuse_evictions = on;
	pthread_mutex_unlock(&s->mu);
}

void fs_on_request(fs_store *s, void (*cb)(void *ud, json_t *entry), void *ud)
{
	pthread_mutex_lock(&s->mu);
	s->on_request = cb;
	s->on_request_ud = ud;
	pthread_mutex_unlock(&s->mu);
}

json_t *fs_log(fs_store *s)
{
	return s->log;
}

json_t *fs_nth(fs_store *s, size_t i)
{
	return json_array_get(s->log, i);
}

json_t *fs_body(const json_t *entry)
{
	return json_object_get(entry, "body");
}

static bool field_is(const json_t *e, const char *key, const char *want)
{
	return want == NULL || strcmp(json_string_value(json_object_get(e, key)), want) == 0;
}

static bool matches(const json_t *e, const char *method, const char *plural, const char *name,
		    const char *sub)
{
	return field_is(e, "method", method) && field_is(e, "plural", plural) &&
	       field_is(e, "name", name) && field_is(e, "sub", sub);
}

size_t fs_count(fs_store *s, const char *method, const char *plural, const char *name,
		const char *sub, json_t **last)
{
	size_t i, n = 0;
	json_t *e;

	pthread_mutex_lock(&s->mu);
	json_array_foreach(s->log, i, e)
	{
		if (!matches(e, method, plural, name, sub))
			continue;
		n++;
		if (last != NULL)
			*last = e;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

size_t fs_count_body(fs_store *s, const char *method, const char *plural, const char *name,
		     const char *sub, json_t **last_body)
{
	json_t *e = NULL;
	size_t n = fs_count(s, method, plural, name, sub, &e);

	if (last_body != NULL && e != NULL)
		*last_body = fs_body(e);
	return n;
}

size_t fs_count_path(fs_store *s, const char *method, const char *prefix, bool exact,
		     json_t **last_body)
{
	size_t i, n = 0;
	json_t *e;

	pthread_mutex_lock(&s->mu);
	json_array_foreach(s->log, i, e)
	{
		const char *path = json_string_value(json_object_get(e, "path"));

		if (!field_is(e, "method", method) || strncmp(path, prefix, strlen(prefix)) != 0 ||
		    (exact && strlen(path) != strlen(prefix)))
			continue;
		n++;
		if (last_body != NULL)
			*last_body = fs_body(e);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

json_t *fs_bodies(fs_store *s, const char *method, const char *plural)
{
	json_t *out = json_array(), *e;
	size_t i;

	pthread_mutex_lock(&s->mu);
	json_array_foreach(s->log, i, e)
	{
		if (matches(e, method, plural, NULL, NULL))
			json_array_append(out, fs_body(e));
	}
	pthread_mutex_unlock(&s->mu);
	return out;
}

size_t fs_find(fs_store *s, size_t from, const char *method, const char *plural, const char *name,
	       const char *sub)
{
	size_t i, at = SIZE_MAX;
	json_t *e;

	pthread_mutex_lock(&s->mu);
	json_array_foreach(s->log, i, e)
	{
		if (i >= from && matches(e, method, plural, name, sub)) {
			at = i;
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return at;
}

size_t fs_find_last(fs_store *s, const char *method, const char *plural, const char *name,
		    const char *sub)
{
	size_t i, at = SIZE_MAX;
	json_t *e;

	pthread_mutex_lock(&s->mu);
	json_array_foreach(s->log, i, e)
	{
		if (matches(e, method, plural, name, sub))
			at = i;
	}
	pthread_mutex_unlock(&s->mu);
	return at;
}
