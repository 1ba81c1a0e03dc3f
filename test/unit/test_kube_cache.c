/*
 * Unit tests for kube/cache: keys, upsert/remove, namespace listing, the
 * owner-UID and label indexes (including re-indexing on update), and
 * reference ownership.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "kube/cache.h"
#include "kube/client.h"

#define CLUSTER_LABEL "etcd-operator.cozystack.io/cluster"

/* A member-like object: ns/name, resourceVersion, optional owner and label. */
static json_t *obj(const char *ns, const char *name, const char *rv, const char *owner_uid,
		   const char *cluster)
{
	json_t *o = json_pack("{s:s, s:{s:s, s:s}}", "kind", "EtcdMember", "metadata", "name", name,
			      "resourceVersion", rv);
	json_t *meta = json_object_get(o, "metadata");

	if (ns)
		json_object_set_new(meta, "namespace", json_string(ns));
	if (owner_uid)
		json_object_set_new(meta, "ownerReferences",
				    json_pack("[{s:s, s:s, s:s}]", "kind", "EtcdCluster", "name",
					      "c", "uid", owner_uid));
	if (cluster)
		json_object_set_new(meta, "labels", json_pack("{s:s}", CLUSTER_LABEL, cluster));
	return o;
}

static void assert_names(json_t *arr, const char *const *want, size_t n)
{
	assert_int_equal(json_array_size(arr), n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(eo_meta_name(json_array_get(arr, i)), want[i]);
}

static void test_keys(void **state)
{
	char *k;

	(void)state;
	k = eo_kube_cache_key("ns", "a");
	assert_string_equal(k, "ns/a");
	free(k);
	k = eo_kube_cache_key(NULL, "node-1");
	assert_string_equal(k, "node-1");
	free(k);
	k = eo_kube_cache_key("", "node-1");
	assert_string_equal(k, "node-1");
	free(k);
	assert_null(eo_kube_cache_key("ns", NULL));
}

static void test_upsert_get_remove(void **state)
{
	eo_kube_cache *c = eo_kube_cache_new(NULL);
	json_t *a1 = obj("ns", "a", "1", NULL, NULL), *a2 = obj("ns", "a", "2", NULL, NULL);
	json_t *noname = json_pack("{s:{}}", "metadata");
	json_t *old = (json_t *)1, *got;

	(void)state;
	assert_int_equal(eo_kube_cache_upsert(c, a1, &old), EO_KUBE_OK);
	assert_null(old);
	assert_int_equal(eo_kube_cache_upsert(c, a2, &old), EO_KUBE_OK);
	assert_true(json_equal(old, a1));
	json_decref(old);
	assert_int_equal(eo_kube_cache_len(c), 1);

	got = eo_kube_cache_get(c, "ns", "a");
	assert_true(json_equal(got, a2)); /* a copy, decoded afresh */
	assert_true(got != a2);
	assert_int_equal(got->refcount, 1); /* the reader's own */
	json_decref(got);
	assert_null(eo_kube_cache_get(c, "other", "a"));
	assert_int_equal(eo_kube_cache_upsert(c, noname, NULL), EO_KUBE_EINVALID);

	assert_int_equal(eo_kube_cache_remove(c, "ns", "a", &old), EO_KUBE_OK);
	assert_true(json_equal(old, a2));
	json_decref(old);
	assert_int_equal(eo_kube_cache_remove(c, "ns", "a", &old), EO_KUBE_OK);
	assert_null(old);
	assert_int_equal(eo_kube_cache_len(c), 0);

	/* The cache dropped its references: only ours remain. */
	assert_int_equal(a1->refcount, 1);
	assert_int_equal(a2->refcount, 1);
	json_decref(a1);
	json_decref(a2);
	json_decref(noname);
	eo_kube_cache_free(c);
}

static void test_list_by_namespace_sorted(void **state)
{
	eo_kube_cache *c = eo_kube_cache_new(NULL);
	const char *ns1[] = {"a", "b", "c"};
	json_t *l, *keys;

	(void)state;
	json_t *objs[] = {obj("ns1", "c", "1", NULL, NULL), obj("ns1", "a", "1", NULL, NULL),
			  obj("ns10", "z", "1", NULL, NULL), obj("ns1", "b", "1", NULL, NULL),
			  obj(NULL, "node", "1", NULL, NULL)};
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(eo_kube_cache_upsert(c, objs[i], NULL), EO_KUBE_OK);
		json_decref(objs[i]);
	}
	l = eo_kube_cache_list(c, "ns1");
	assert_names(l, ns1, 3); /* "ns10" must not match the "ns1" prefix */
	json_decref(l);
	l = eo_kube_cache_list(c, NULL);
	/* Sorted by key: "node" < "ns1/a" < ... < "ns10/z". */
	assert_int_equal(json_array_size(l), 5);
	assert_string_equal(eo_meta_name(json_array_get(l, 0)), "node");
	assert_string_equal(eo_meta_name(json_array_get(l, 4)), "z");
	json_decref(l);
	keys = eo_kube_cache_keys(c);
	assert_int_equal(json_array_size(keys), 5);
	assert_string_equal(json_string_value(json_array_get(keys, 1)), "ns1/a");
	json_decref(keys);
	eo_kube_cache_clear(c);
	assert_int_equal(eo_kube_cache_len(c), 0);
	eo_kube_cache_free(c);
}

static void test_owner_index(void **state)
{
	eo_kube_cache *c = eo_kube_cache_new(CLUSTER_LABEL);
	const char *want_u1[] = {"m1", "m2"};
	const char *want_u2[] = {"m2"};
	json_t *m1 = obj("ns", "m1", "1", "uid-1", NULL);
	json_t *m2 = obj("ns", "m2", "1", "uid-1", NULL);
	json_t *m2b = obj("ns", "m2", "2", "uid-2", NULL);
	json_t *l;

	(void)state;
	eo_kube_cache_upsert(c, m1, NULL);
	eo_kube_cache_upsert(c, m2, NULL);
	l = eo_kube_cache_by_owner(c, "uid-1");
	assert_names(l, want_u1, 2);
	json_decref(l);

	/* Changing the owner moves the object between index entries. */
	eo_kube_cache_upsert(c, m2b, NULL);
	l = eo_kube_cache_by_owner(c, "uid-1");
	assert_names(l, want_u1, 1);
	json_decref(l);
	l = eo_kube_cache_by_owner(c, "uid-2");
	assert_names(l, want_u2, 1);
	json_decref(l);

	/* Removal clears the index. */
	eo_kube_cache_remove(c, "ns", "m1", NULL);
	l = eo_kube_cache_by_owner(c, "uid-1");
	assert_int_equal(json_array_size(l), 0);
	json_decref(l);
	l = eo_kube_cache_by_owner(c, "no-such-uid");
	assert_non_null(l);
	assert_int_equal(json_array_size(l), 0);
	json_decref(l);
	json_decref(m1);
	json_decref(m2);
	json_decref(m2b);
	eo_kube_cache_free(c);
}

static void test_label_index(void **state)
{
	eo_kube_cache *c = eo_kube_cache_new(CLUSTER_LABEL);
	eo_kube_cache *plain = eo_kube_cache_new(NULL);
	const char *want_main[] = {"main-1", "main-2"};
	json_t *objs[] = {
	    obj("ns", "main-2", "1", NULL, "main"), obj("ns", "main-1", "1", NULL, "main"),
	    obj("ns", "other-1", "1", NULL, "other"), obj("ns", "unlabelled", "1", NULL, NULL)};
	json_t *moved = obj("ns", "main-2", "2", NULL, "other");
	json_t *l;

	(void)state;
	for (size_t i = 0; i < 4; i++) {
		eo_kube_cache_upsert(c, objs[i], NULL);
		eo_kube_cache_upsert(plain, objs[i], NULL);
	}
	l = eo_kube_cache_by_label(c, "main");
	assert_names(l, want_main, 2);
	json_decref(l);

	/* Relabelled: it leaves "main" and joins "other". */
	eo_kube_cache_upsert(c, moved, NULL);
	l = eo_kube_cache_by_label(c, "main");
	assert_names(l, want_main, 1);
	json_decref(l);
	l = eo_kube_cache_by_label(c, "other");
	assert_int_equal(json_array_size(l), 2);
	json_decref(l);

	/* Without a label key the index is empty. */
	l = eo_kube_cache_by_label(plain, "main");
	assert_int_equal(json_array_size(l), 0);
	json_decref(l);
	for (size_t i = 0; i < 4; i++)
		json_decref(objs[i]);
	json_decref(moved);
	eo_kube_cache_free(c);
	eo_kube_cache_free(plain);
}

struct rw {
	eo_kube_cache *c;
	int reads_ok;
};

static void *reader(void *p)
{
	struct rw *rw = p;

	for (int i = 0; i < 2000; i++) {
		json_t *o = eo_kube_cache_get(rw->c, "ns", "hot");
		json_t *l = eo_kube_cache_by_label(rw->c, "main");

		if (o && eo_meta_name(o) && json_array_size(l) == 1)
			rw->reads_ok++;
		json_decref(o);
		json_decref(l);
	}
	return NULL;
}

static void test_concurrent_readers_and_writer(void **state)
{
	eo_kube_cache *c = eo_kube_cache_new(CLUSTER_LABEL);
	struct rw rws[3];
	pthread_t th[3];
	json_t *first = obj("ns", "hot", "0", "u", "main");

	(void)state;
	eo_kube_cache_upsert(c, first, NULL);
	json_decref(first);
	for (int i = 0; i < 3; i++) {
		rws[i] = (struct rw){.c = c};
		pthread_create(&th[i], NULL, reader, &rws[i]);
	}
	for (int i = 1; i <= 2000; i++) {
		char rv[16];
		json_t *o;

		snprintf(rv, sizeof(rv), "%d", i);
		o = obj("ns", "hot", rv, "u", "main");
		eo_kube_cache_upsert(c, o, NULL);
		json_decref(o);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		/* The object is always there and always indexed once. */
		assert_int_equal(rws[i].reads_ok, 2000);
	}
	eo_kube_cache_free(c);
}

TU_MAIN(test_keys, test_upsert_get_remove, test_list_by_namespace_sorted, test_owner_index,
	test_label_index, test_concurrent_readers_and_writer)
