/*
 * kube/cache.h - the in-memory object store behind an informer.
 *
 * Objects are kept by key "namespace/name" ("name" for cluster-scoped
 * objects) with two secondary indexes: by owner UID (every entry of
 * metadata.ownerReferences) and by the value of one label key chosen at
 * creation (e.g. "etcd-operator.cozystack.io/cluster").
 *
 * Storage: each object is kept as its compact JSON text, not as a jansson tree
 * (a tree costs about eight times the text); reads decode a fresh tree.
 *
 * Ownership: upsert copies the object (as text); the caller keeps its own.
 * Readers get new objects (or new arrays of new objects) that belong to them
 * alone and must json_decref() them. Modifying one changes nothing in the
 * cache; the old habit of json_deep_copy() before modifying is harmless.
 *
 * Thread safety: any number of readers and one writer may run at once
 * (a read-write lock guards the maps).
 */
#ifndef EO_KUBE_CACHE_H
#define EO_KUBE_CACHE_H

#include <jansson.h>
#include <stddef.h>

#include "kube/err.h"

typedef struct eo_kube_cache eo_kube_cache;

/* label_key (copied) selects the label index; NULL for none. NULL on OOM. */
eo_kube_cache *eo_kube_cache_new(const char *label_key);
void eo_kube_cache_free(eo_kube_cache *c);

/* "ns/name", or "name" when ns is NULL or empty. Heap string; NULL on OOM. */
char *eo_kube_cache_key(const char *ns, const char *name);

/*
 * Inserts or replaces obj (borrowed; the cache stores a copy). obj needs
 * metadata.name. If old is not NULL it receives the replaced object (a new
 * object) or NULL.
 */
eo_kube_err eo_kube_cache_upsert(eo_kube_cache *c, json_t *obj, json_t **old);

/* Removes the object with this key; *old (if old is not NULL) receives it
 * (new reference) or NULL when it was not there. */
eo_kube_err eo_kube_cache_remove(eo_kube_cache *c, const char *ns, const char *name, json_t **old);

/* Removes everything. */
void eo_kube_cache_clear(eo_kube_cache *c);

/* A new object decoded from the cache, or NULL. ns NULL/"" for cluster-scoped. */
json_t *eo_kube_cache_get(eo_kube_cache *c, const char *ns, const char *name);

/* New array of the objects in namespace ns (NULL = all), ordered by key. */
json_t *eo_kube_cache_list(eo_kube_cache *c, const char *ns);

/* New array of the objects with an ownerReference to uid, ordered by key. */
json_t *eo_kube_cache_by_owner(eo_kube_cache *c, const char *uid);

/* New array of the objects whose indexed label equals value, by key. */
json_t *eo_kube_cache_by_label(eo_kube_cache *c, const char *value);

/* New array of all keys, sorted. */
json_t *eo_kube_cache_keys(eo_kube_cache *c);

size_t eo_kube_cache_len(eo_kube_cache *c);

#endif
