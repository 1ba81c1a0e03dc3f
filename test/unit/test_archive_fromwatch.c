/* archive/fromwatch.h: watch events grouped into archived revisions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "archive/fromwatch.h"

struct seen {
	int64_t revs[8];
	size_t counts[8], n;
	int refuse_at; /* refuse the revision with this index; -1: never */
	bool delete_seen_without_value;
};

static int collect(void *ud, const struct eo_archive_rev *rev, char *err, size_t cap)
{
	struct seen *s = ud;

	if ((int)s->n == s->refuse_at) {
		snprintf(err, cap, "refused");
		return -1;
	}
	assert_true(s->n < 8);
	assert_int_equal(rev->received_ms, 1234);
	for (size_t i = 0; i < rev->n; i++) {
		assert_int_equal(rev->events[i].mod_revision, rev->revision);
		if (rev->events[i].type == EO_ARCHIVE_DELETE)
			s->delete_seen_without_value =
			    rev->events[i].value == NULL && rev->events[i].value_len == 0;
	}
	s->revs[s->n] = rev->revision;
	s->counts[s->n++] = rev->n;
	return 0;
}

static struct eo_etcd_watch_event ev(enum eo_etcd_event_type t, const char *k, int64_t rev)
{
	struct eo_etcd_watch_event e = {.type = t};

	e.kv.key = (unsigned char *)k;
	e.kv.key_len = strlen(k);
	e.kv.value = (unsigned char *)"v";
	e.kv.value_len = t == EO_ETCD_EVENT_PUT ? 1 : 0;
	e.kv.mod_revision = rev;
	return e;
}

/* A put, a txn of three events (one revision), a delete: three revisions in order. */
static void test_groups_by_revision(void **state)
{
	struct eo_etcd_watch_event e[5] = {
	    ev(EO_ETCD_EVENT_PUT, "a", 5),    ev(EO_ETCD_EVENT_PUT, "b", 6),
	    ev(EO_ETCD_EVENT_DELETE, "c", 6), ev(EO_ETCD_EVENT_PUT, "d", 6),
	    ev(EO_ETCD_EVENT_DELETE, "e", 7),
	};
	struct eo_etcd_watch_resp r = {.events = e, .n = 5};
	struct seen s = {.refuse_at = -1};
	int64_t last = 4;
	char err[64];

	(void)state;
	assert_int_equal(eo_archive_from_watch(&r, 1234, collect, &s, &last, err, sizeof(err)), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.revs[0], 5);
	assert_int_equal(s.counts[0], 1);
	assert_int_equal(s.revs[1], 6);
	assert_int_equal(s.counts[1], 3);
	assert_int_equal(s.revs[2], 7);
	assert_int_equal(s.counts[2], 1);
	assert_true(s.delete_seen_without_value);
	assert_int_equal(last, 7);
}

/* A revision at or below the last one handed on is refused, before the callback sees it. */
static void test_order(void **state)
{
	struct eo_etcd_watch_event e[2] = {ev(EO_ETCD_EVENT_PUT, "a", 9),
					   ev(EO_ETCD_EVENT_PUT, "b", 8)};
	struct eo_etcd_watch_resp r = {.events = e, .n = 2};
	struct seen s = {.refuse_at = -1};
	int64_t last = 3;
	char err[64];

	(void)state;
	assert_int_equal(eo_archive_from_watch(&r, 1234, collect, &s, &last, err, sizeof(err)),
			 EO_ARCHIVE_EORDER);
	assert_int_equal(s.n, 1);
	assert_int_equal(last, 9);
	assert_non_null(strstr(err, "8 after 9"));
	s.n = 0;
	last = 9;
	r.n = 1; /* a replayed response: 9 again */
	assert_int_equal(eo_archive_from_watch(&r, 1234, collect, &s, &last, err, sizeof(err)),
			 EO_ARCHIVE_EORDER);
	assert_int_equal(s.n, 0);
}

/* A refusal stops at that revision; *last stays at the one before; empty responses pass. */
static void test_refusal_and_empty(void **state)
{
	struct eo_etcd_watch_event e[2] = {ev(EO_ETCD_EVENT_PUT, "a", 2),
					   ev(EO_ETCD_EVENT_PUT, "b", 3)};
	struct eo_etcd_watch_resp r = {.events = e, .n = 2}, empty = {0};
	struct seen s = {.refuse_at = 1};
	int64_t last = 1;
	char err[64];

	(void)state;
	assert_int_equal(eo_archive_from_watch(&r, 1234, collect, &s, &last, err, sizeof(err)),
			 EO_ARCHIVE_ECALLBACK);
	assert_int_equal(last, 2);
	assert_string_equal(err, "refused");
	assert_int_equal(eo_archive_from_watch(&empty, 1234, collect, &s, &last, err, sizeof(err)),
			 0);
	assert_int_equal(last, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_groups_by_revision),
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_refusal_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
