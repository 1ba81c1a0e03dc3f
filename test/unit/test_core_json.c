/*
 * Unit tests of core/json: eo_json_dumps gives the same text as json_dumps,
 * and under any single failed jansson allocation either NULL or the whole
 * document, never the broken text jansson 2.14's json_dumps can return
 * (akheron/jansson#655).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "support/testutil.h"
#include "support/tu_main.h"

static void test_same_text_as_jansson(void **state)
{
	json_t *j = tu_jsonq("{'kind':'Pod','metadata':{'name':'a','labels':{'x':'y'}},"
			     "'spec':{'n':[1,2.5,true,null,'\\u00e9']}}");
	size_t len = 0;
	char *want = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	char *got = eo_json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS, &len);

	(void)state;
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(got);
	free(want);
	assert_null(eo_json_dumps(NULL, 0, NULL));
	json_decref(j);
}

static void test_whole_or_nothing_under_allocation_failure(void **state)
{
	json_t *j = tu_jsonq("{'key':'aw==','value':'dg==','nested':{'a':[{'b':'c'}],"
			     "'long-key-name-to-force-a-buffer-growth':'x'}}");
	int at, failed = 0;

	(void)state;
	for (at = 1; at < 500; at++) {
		char *s;
		int n;

		tu_json_alloc_fail_at(at);
		s = eo_json_dumps(j, JSON_COMPACT, NULL);
		n = tu_json_alloc_count();
		tu_json_alloc_fail_at(0);
		if (s == NULL) {
			failed++;
		} else {
			json_t *back = tu_json(s);

			tu_assert_json_equal(back, j, "dumped document");
			json_decref(back);
			free(s);
		}
		if (n < at)
			break; /* nothing failed this time: every allocation was tried */
	}
	assert_true(at < 500);
	json_decref(j);
	(void)failed;
}

/* eo_json_named: the first element with that "name"; NULL for none or a non-array. */
static void test_named_finds_the_first_match(void **state)
{
	json_t *a = json_loads("[{\"image\":\"x\"},{\"name\":\"etcd\",\"n\":1},"
			       "{\"name\":\"etcd\",\"n\":2}]",
			       0, NULL);

	(void)state;
	assert_non_null(a);
	assert_int_equal(json_integer_value(json_object_get(eo_json_named(a, "etcd"), "n")), 1);
	assert_null(eo_json_named(a, "data"));
	assert_null(eo_json_named(json_object_get(a, "x"), "etcd"));
	assert_null(eo_json_named(json_array_get(a, 0), "etcd"));
	json_decref(a);
}

TU_MAIN(test_same_text_as_jansson, test_whole_or_nothing_under_allocation_failure,
	test_named_finds_the_first_match)
