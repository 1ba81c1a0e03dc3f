/*
 * kube/cache.c - keyed object store with owner and label indexes.
 *
 * Maps are jansson objects: store maps key -> the object's compact JSON text
 * (a jansson string); each index maps an index value -> a set (object of
 * key -> true). Objects are kept as text, not as trees: a jansson tree costs
 * about eight times its compact JSON, and the cache holds every object of
 * every watched kind while a reconcile reads a handful. Each read decodes a
 * fresh tree (a few microseconds per KiB).
 */
#include "kube/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "kube/client.h"

static json_t *decode(const json_t *text)
{
	return text ? json_loadb(json_string_value(text), json_string_length(text), 0, NULL) : NULL;
}

/* The compact JSON of obj as a jansson string; NULL on OOM. */
static json_t *encode(const json_t *obj)
{
	size_t n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	char *buf = n ? malloc(n) : NULL;
	json_t *s = NULL;

	if (buf && json_dumpb(obj, buf, n, JSON_COMPACT) == n)
		s = json_stringn_nocheck(buf, n);
	free(buf);
	return s;
}

struct eo_kube_cache {
	pthread_rwlock_t lock;
	char *label_key;
	json_t *store;
	json_t *by_owner;
	json_t *by_label;
};

eo_kube_cache *eo_kube_cache_new(const char *label_key)
{
	eo_kube_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->store = json_object();
	c->by_owner = json_object();
	c->by_label = json_object();
	c->label_key = label_key ? strdup(label_key) : NULL;
	if (!c->store || !c->by_owner || !c->by_label || (label_key && !c->label_key)) {
		json_decref(c->store);
		json_decref(c->by_owner);
		json_decref(c->by_label);
		free(c->label_key);
		free(c);
		return NULL;
	}
	pthread_rwlock_init(&c->lock, NULL);
	return c;
}

void eo_kube_cache_free(eo_kube_cache *c)
{
	if (!c)
		return;
	json_decref(c->store);
	json_decref(c->by_owner);
	json_decref(c->by_label);
	free(c->label_key);
	pthread_rwlock_destroy(&c->lock);
	free(c);
}

char *eo_kube_cache_key(const char *ns, const char *name)
{
	char *k = NULL;

	if (!name)
		return NULL;
	if (!ns || !ns[0])
		return strdup(name);
	if (asprintf(&k, "%s/%s", ns, name) < 0)
		return NULL;
	return k;
}

/* Adds or removes key under index value v. */
static int index_add(json_t *index, const char *v, const char *key)
{
	json_t *set = json_object_get(index, v);

	if (!set) {
		set = json_object();
		if (!set || json_object_set_new_nocheck(index, v, set) != 0)
			return -1;
	}
	return json_object_set_new_nocheck(set, key, json_true());
}

static void index_del(json_t *index, const char *v, const char *key)
{
	json_t *set = json_object_get(index, v);

	if (!set)
		return;
	json_object_del(set, key);
	if (json_object_size(set) == 0)
		json_object_del(index, v);
}

/* Applies fn to every index entry of obj. */
static int index_obj(eo_kube_cache *c, json_t *obj, const char *key, bool add)
{
	json_t *refs = eo_meta_get(obj, "ownerReferences");
	json_t *ref;
	size_t i;
	int rc = 0;

	json_array_foreach(refs, i, ref)
	{
		const char *uid = json_string_value(json_object_get(ref, "uid"));

		if (!uid)
			continue;
		if (add)
			rc |= index_add(c->by_owner, uid, key);
		else
			index_del(c->by_owner, uid, key);
	}
	if (c->label_key) {
		const char *v = eo_meta_label(obj, c->label_key);

		if (v) {
			if (add)
				rc |= index_add(c->by_label, v, key);
			else
				index_del(c->by_label, v, key);
		}
	}
	return rc;
}

eo_kube_err eo_kube_cache_upsert(eo_kube_cache *c, json_t *obj, json_t **old)
{
	const char *name = eo_meta_name(obj);
	char *key;
	json_t *text, *prev_text, *prev = NULL;
	eo_kube_err rc = EO_KUBE_OK;

	if (old)
		*old = NULL;
	if (!name)
		return EO_KUBE_EINVALID;
	key = eo_kube_cache_key(eo_meta_namespace(obj), name);
	text = encode(obj);
	if (!key || !text) {
		free(key);
		json_decref(text);
		return EO_KUBE_ENOMEM;
	}
	pthread_rwlock_wrlock(&c->lock);
	prev_text = json_incref(json_object_get(c->store, key));
	if (prev_text) {
		prev = decode(prev_text);
		index_obj(c, prev, key, false);
	}
	if (json_object_set_nocheck(c->store, key, text) != 0) {
		rc = EO_KUBE_ENOMEM;
		if (prev)
			index_obj(c, prev, key, true);
	} else if (index_obj(c, obj, key, true) != 0) {
		rc = EO_KUBE_ENOMEM;
	}
	pthread_rwlock_unlock(&c->lock);
	json_decref(prev_text);
	json_decref(text);
	if (old)
		*old = prev;
	else
		json_decref(prev);
	free(key);
	return rc;
}

eo_kube_err eo_kube_cache_remove(eo_kube_cache *c, const char *ns, const char *name, json_t **old)
{
	char *key = eo_kube_cache_key(ns, name);
	json_t *prev = NULL, *prev_text;

	if (old)
		*old = NULL;
	if (!key)
		return name ? EO_KUBE_ENOMEM : EO_KUBE_EINVALID;
	pthread_rwlock_wrlock(&c->lock);
	prev_text = json_incref(json_object_get(c->store, key));
	if (prev_text) {
		prev = decode(prev_text);
		index_obj(c, prev, key, false);
		json_object_del(c->store, key);
	}
	pthread_rwlock_unlock(&c->lock);
	json_decref(prev_text);
	free(key);
	if (old)
		*old = prev;
	else
		json_decref(prev);
	return EO_KUBE_OK;
}

void eo_kube_cache_clear(eo_kube_cache *c)
{
	pthread_rwlock_wrlock(&c->lock);
	json_object_clear(c->store);
	json_object_clear(c->by_owner);
	json_object_clear(c->by_label);
	pthread_rwlock_unlock(&c->lock);
}

json_t *eo_kube_cache_get(eo_kube_cache *c, const char *ns, const char *name)
{
	char *key = eo_kube_cache_key(ns, name);
	json_t *obj, *text;

	if (!key)
		return NULL;
	pthread_rwlock_rdlock(&c->lock);
	text = json_incref(json_object_get(c->store, key));
	pthread_rwlock_unlock(&c->lock);
	free(key);
	obj = decode(text);
	json_decref(text);
	return obj;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted keys of a jansson object (borrowed strings; caller frees array).
 * Returns NULL with *n = 0 for an empty object or on OOM. */
static const char **sorted_keys(json_t *obj, size_t *n)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t i = 0;

	*n = json_object_size(obj);
	if (*n == 0)
		return NULL;
	keys = malloc(*n * sizeof(*keys));
	if (!keys) {
		*n = 0;
		return NULL;
	}
	json_object_foreach(obj, k, v)
	{
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

/* Array of the stored texts named in set (sorted by key). Lock held. */
static json_t *collect(eo_kube_cache *c, json_t *set, const char *ns)
{
	json_t *out = json_array();
	size_t n, i, nslen = ns ? strlen(ns) : 0;
	const char **keys;

	if (!out)
		return NULL;
	keys = sorted_keys(set, &n);
	for (i = 0; i < n; i++) {
		json_t *obj;

		if (ns && (strncmp(keys[i], ns, nslen) != 0 || keys[i][nslen] != '/'))
			continue;
		obj = json_object_get(c->store, keys[i]);
		if (obj)
			json_array_append(out, obj);
	}
	free(keys);
	return out;
}

/* Replaces each text of arr by its decoded object, outside the lock. */
static json_t *decode_all(json_t *arr)
{
	json_t *t;
	size_t i;

	json_array_foreach(arr, i, t)
	{
		json_t *obj = decode(t);

		if (!obj || json_array_set_new(arr, i, obj) != 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *eo_kube_cache_list(eo_kube_cache *c, const char *ns)
{
	json_t *out;

	pthread_rwlock_rdlock(&c->lock);
	out = collect(c, c->store, ns && ns[0] ? ns : NULL);
	pthread_rwlock_unlock(&c->lock);
	return decode_all(out);
}

static json_t *by_index(eo_kube_cache *c, json_t *index, const char *v)
{
	json_t *out, *set;

	pthread_rwlock_rdlock(&c->lock);
	set = v ? json_object_get(index, v) : NULL;
	out = set ? collect(c, set, NULL) : json_array();
	pthread_rwlock_unlock(&c->lock);
	return decode_all(out);
}

json_t *eo_kube_cache_by_owner(eo_kube_cache *c, const char *uid)
{
	return by_index(c, c->by_owner, uid);
}

json_t *eo_kube_cache_by_label(eo_kube_cache *c, const char *value)
{
	return by_index(c, c->by_label, value);
}

json_t *eo_kube_cache_keys(eo_kube_cache *c)
{
	json_t *out = json_array();
	const char **keys;
	size_t n;

	if (!out)
		return NULL;
	pthread_rwlock_rdlock(&c->lock);
	keys = sorted_keys(c->store, &n);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, json_string(keys[i]));
	pthread_rwlock_unlock(&c->lock);
	free(keys);
	return out;
}

size_t eo_kube_cache_len(eo_kube_cache *c)
{
	size_t n;

	pthread_rwlock_rdlock(&c->lock);
	n = json_object_size(c->store);
	pthread_rwlock_unlock(&c->lock);
	return n;
}
