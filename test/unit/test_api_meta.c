/*
 * Unit tests for api/meta: the metadata readers on objects with metadata
 * missing, null, not an object, and with fields of the wrong type.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <string.h>

#include "api/meta.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);

	if (j == NULL)
		fail_msg("bad fixture %s: %s", text, e.text);
	return j;
}

static const char *const FULL =
    "{\"metadata\":{\"name\":\"n\",\"namespace\":\"ns\",\"uid\":\"u-1\","
    "\"resourceVersion\":\"42\",\"generation\":7,"
    "\"deletionTimestamp\":\"2026-11-27T10:00:00Z\","
    "\"labels\":{\"app\":\"etcd\",\"num\":3},"
    "\"annotations\":{\"a.example/x\":\"y\",\"empty\":\"\"},"
    "\"finalizers\":[\"keep\",7,null,\"fin.example/other\"],"
    "\"ownerReferences\":[{\"uid\":\"not-ctl\"},"
    "{\"uid\":\"false-ctl\",\"controller\":false},"
    "{\"uid\":\"ctl\",\"controller\":true}]}}";

static void test_full_object(void **state)
{
	json_t *o = parse(FULL);

	(void)state;
	assert_string_equal(eo_meta_name(o), "n");
	assert_string_equal(eo_meta_namespace(o), "ns");
	assert_string_equal(eo_meta_uid(o), "u-1");
	assert_string_equal(eo_meta_resource_version(o), "42");
	assert_int_equal(eo_meta_generation(o, -1), 7);
	assert_true(eo_meta_is_deleting(o));
	assert_string_equal(eo_meta_deletion_timestamp(o), "2026-11-27T10:00:00Z");
	assert_string_equal(eo_meta_label(o, "app"), "etcd");
	assert_null(eo_meta_label(o, "num"));
	assert_null(eo_meta_label(o, "missing"));
	assert_null(eo_meta_label(o, NULL));
	assert_string_equal(eo_meta_annotation(o, "a.example/x"), "y");
	assert_string_equal(eo_meta_annotation(o, "empty"), "");
	assert_null(eo_meta_annotation(o, "app"));
	assert_true(eo_meta_has_finalizer(o, "keep"));
	assert_true(eo_meta_has_finalizer(o, "fin.example/other"));
	assert_false(eo_meta_has_finalizer(o, "kee"));
	assert_false(eo_meta_has_finalizer(o, NULL));
	assert_true(eo_meta_controlled_by(o, "ctl"));
	assert_false(eo_meta_controlled_by(o, "not-ctl"));
	assert_false(eo_meta_controlled_by(o, "false-ctl"));
	assert_false(eo_meta_controlled_by(o, "other"));
	assert_false(eo_meta_controlled_by(o, ""));
	assert_false(eo_meta_controlled_by(o, NULL));
	assert_ptr_equal(eo_meta_get(o, "labels"),
			 json_object_get(json_object_get(o, "metadata"), "labels"));
	json_decref(o);
}

/* Objects on which every reader answers "absent". */
static const char *const ABSENT[] = {
    "{}",
    "{\"metadata\":null}",
    "{\"metadata\":\"n\"}",
    "{\"metadata\":[{\"name\":\"n\"}]}",
    "{\"metadata\":7}",
    "{\"metadata\":{}}",
    "{\"metadata\":{\"name\":null,\"namespace\":1,\"uid\":true,\"resourceVersion\":42,"
    "\"generation\":\"7\",\"labels\":null,\"annotations\":[\"y\"],"
    "\"finalizers\":\"keep\",\"ownerReferences\":{\"uid\":\"ctl\",\"controller\":true}}}",
    "{\"metadata\":{\"generation\":7.0,\"labels\":{\"app\":null},"
    "\"finalizers\":{\"keep\":\"keep\"},"
    "\"ownerReferences\":[{\"uid\":\"ctl\",\"controller\":\"true\"},{\"uid\":7,\"controller\":true}"
    "]}}",
    "[{\"metadata\":{\"name\":\"n\"}}]",
    "\"metadata\"",
    "null",
};

static void test_absent_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ABSENT) / sizeof(ABSENT[0]); i++) {
		json_t *o = parse(ABSENT[i]);

		if (eo_meta_name(o) || eo_meta_namespace(o) || eo_meta_uid(o) ||
		    eo_meta_resource_version(o) || eo_meta_deletion_timestamp(o))
			fail_msg("row %zu (%s): a string read", i, ABSENT[i]);
		if (eo_meta_generation(o, -3) != -3)
			fail_msg("row %zu (%s): generation read", i, ABSENT[i]);
		if (eo_meta_is_deleting(o))
			fail_msg("row %zu (%s): deleting", i, ABSENT[i]);
		if (eo_meta_label(o, "app") || eo_meta_annotation(o, "a.example/x") ||
		    eo_meta_annotation(o, "0"))
			fail_msg("row %zu (%s): label or annotation read", i, ABSENT[i]);
		if (eo_meta_has_finalizer(o, "keep") || eo_meta_controlled_by(o, "ctl"))
			fail_msg("row %zu (%s): finalizer or controller read", i, ABSENT[i]);
		json_decref(o);
	}
}

static void test_null_object(void **state)
{
	(void)state;
	assert_null(eo_meta_get(NULL, "name"));
	assert_null(eo_meta_name(NULL));
	assert_int_equal(eo_meta_generation(NULL, 0), 0);
	assert_false(eo_meta_is_deleting(NULL));
	assert_null(eo_meta_label(NULL, "app"));
	assert_false(eo_meta_has_finalizer(NULL, "keep"));
	assert_false(eo_meta_controlled_by(NULL, "ctl"));
}

/* Deletion is the key's presence: a JSON null deletionTimestamp still counts,
 * while the timestamp itself reads only as a string. */
static void test_deletion_null(void **state)
{
	json_t *o = parse("{\"metadata\":{\"deletionTimestamp\":null}}");
	json_t *n = parse("{\"metadata\":{\"deletionTimestamp\":5}}");

	(void)state;
	assert_true(eo_meta_is_deleting(o));
	assert_null(eo_meta_deletion_timestamp(o));
	assert_true(eo_meta_is_deleting(n));
	assert_null(eo_meta_deletion_timestamp(n));
	json_decref(o);
	json_decref(n);
}

/* generation: 0 and negative integers are values, not "absent". */
static void test_generation_values(void **state)
{
	json_t *z = parse("{\"metadata\":{\"generation\":0}}");
	json_t *neg = parse("{\"metadata\":{\"generation\":-2}}");

	(void)state;
	assert_int_equal(eo_meta_generation(z, -1), 0);
	assert_int_equal(eo_meta_generation(neg, 9), -2);
	json_decref(z);
	json_decref(neg);
}

/* eo_meta_owned_by: any owner reference counts, controller or not; never an empty uid. */
static void test_owned_by_any_reference(void **state)
{
	json_t *o = parse(FULL);

	(void)state;
	assert_true(eo_meta_owned_by(o, "ctl") && eo_meta_owned_by(o, "not-ctl") &&
		    eo_meta_owned_by(o, "false-ctl"));
	assert_false(eo_meta_owned_by(o, "other") || eo_meta_owned_by(o, "") ||
		     eo_meta_owned_by(o, NULL) || eo_meta_owned_by(NULL, "ctl"));
	json_decref(o);
}

TU_MAIN(test_full_object, test_absent_rows, test_null_object, test_deletion_null,
	test_generation_values, test_owned_by_any_reference)
