/*
 * Unit tests for controller/: the status merge patch (only changed keys, removed keys as null,
 * the resourceVersion precondition) and the cache-set lookups over several namespaces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include "controller/controller.h"

static void test_status_patch(void **state)
{
	json_t *cur = json_pack("{s:i, s:s, s:s}", "readyMembers", 0, "progressDeadline",
				"2026-06-02T10:10:00Z", "selector", "x");
	json_t *want =
	    json_pack("{s:i, s:s, s:s}", "readyMembers", 1, "selector", "x", "clusterID", "abc");
	json_t *p = eo_controller_status_patch(cur, want, "42"), *st = NULL;

	(void)state;
	assert_non_null(p);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "metadata"), "resourceVersion")),
	    "42");
	st = json_object_get(p, "status");
	assert_int_equal(json_object_size(st), 3);
	assert_int_equal(json_integer_value(json_object_get(st, "readyMembers")), 1);
	assert_string_equal(json_string_value(json_object_get(st, "clusterID")), "abc");
	assert_true(json_is_null(json_object_get(st, "progressDeadline")));
	assert_null(json_object_get(st, "selector"));
	json_decref(p);
	/* No current status, no precondition. */
	p = eo_controller_status_patch(NULL, want, NULL);
	assert_null(json_object_get(p, "metadata"));
	assert_int_equal(json_object_size(json_object_get(p, "status")), 3);
	json_decref(p);
	json_decref(cur);
	json_decref(want);
}

/* The write path stamps status.observedGeneration from metadata.generation; want is kept. */
static void test_object_status_patch(void **state)
{
	json_t *obj =
	    json_pack("{s:{s:i, s:s}, s:{s:i, s:i}}", "metadata", "generation", 3,
		      "resourceVersion", "9", "status", "readyMembers", 1, "observedGeneration", 2);
	json_t *want = json_pack("{s:i, s:i}", "readyMembers", 1, "observedGeneration", 2);
	json_t *p = eo_controller_object_status_patch(obj, want), *st = NULL;

	(void)state;
	assert_non_null(p);
	st = json_object_get(p, "status");
	assert_int_equal(json_object_size(st), 1);
	assert_int_equal(json_integer_value(json_object_get(st, "observedGeneration")), 3);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "metadata"), "resourceVersion")),
	    "9");
	assert_int_equal(json_integer_value(json_object_get(want, "observedGeneration")), 2);
	json_decref(p);
	/* Already current: nothing to change. */
	json_object_set_new(json_object_get(obj, "status"), "observedGeneration", json_integer(3));
	p = eo_controller_object_status_patch(obj, want);
	assert_int_equal(json_object_size(json_object_get(p, "status")), 0);
	json_decref(p);
	json_decref(obj);
	json_decref(want);
}

static void test_cache_set(void **state)
{
	struct eo_cache_set s = {.n = 2};
	json_t *a = json_pack("{s:{s:s, s:s, s:[{s:s}]}}", "metadata", "name", "a", "namespace",
			      "ns1", "ownerReferences", "uid", "u1");
	json_t *b = json_pack("{s:{s:s, s:s, s:[{s:s}]}}", "metadata", "name", "b", "namespace",
			      "ns2", "ownerReferences", "uid", "u1");
	json_t *got = NULL;

	(void)state;
	s.c[0] = eo_kube_cache_new(NULL);
	s.c[1] = eo_kube_cache_new(NULL);
	eo_kube_cache_upsert(s.c[0], a, NULL);
	eo_kube_cache_upsert(s.c[1], b, NULL);
	got = eo_cache_set_get(&s, "ns2", "b");
	assert_true(json_equal(got, b));
	json_decref(got);
	assert_null(eo_cache_set_get(&s, "ns1", "b"));
	got = eo_cache_set_by_owner(&s, "u1");
	assert_int_equal(json_array_size(got), 2);
	json_decref(got);
	eo_kube_cache_free(s.c[0]);
	eo_kube_cache_free(s.c[1]);
	json_decref(a);
	json_decref(b);
}

TU_MAIN(test_status_patch, test_object_status_patch, test_cache_set)
