/*
 * Unit tests for kube/objstream: LIST and watch bodies cut into items, fed whole and in
 * small chunks; items over the cap, too deep or not objects are skipped with their identity
 * while the rest of the page is kept; managedFields and last-applied-configuration dropped;
 * framing errors end the stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/objstream.h"

struct seen {
	char log[4096]; /* "I:<name> S:<name>:<why> E:<rv> ..." */
	size_t len;
	int items, skips, ends;
	bool managed_fields, last_applied, other_annotation;
	int stop_at; /* stop after this many callbacks (0 = never) */
	int calls;
};

/* Appends "<tag>:<a><sep><b> " to the log. */
static void add(struct seen *s, const char *tag, const char *a, const char *sep, const char *b)
{
	int n = snprintf(s->log + s->len, sizeof(s->log) - s->len, "%s:%s%s%s ", tag,
			 a ? a : "(null)", sep, b ? b : "(null)");

	if (n > 0 && (size_t)n < sizeof(s->log) - s->len)
		s->len += (size_t)n;
}

static int cb(void *ud, const struct eo_kube_objstream_event *ev)
{
	struct seen *s = ud;
	json_t *md;

	switch (ev->type) {
	case EO_KUBE_OS_ITEM:
		s->items++;
		md = json_object_get(ev->obj, "metadata");
		add(s, "I", json_string_value(json_object_get(md, "name")), "", "");
		if (json_object_get(md, "managedFields"))
			s->managed_fields = true;
		if (json_object_get(json_object_get(md, "annotations"),
				    "kubectl.kubernetes.io/last-applied-configuration"))
			s->last_applied = true;
		if (json_object_get(json_object_get(md, "annotations"), "keep"))
			s->other_annotation = true;
		break;
	case EO_KUBE_OS_SKIP:
		s->skips++;
		add(s, "S", ev->ref->name, ":", ev->why == EO_KUBE_ETOOLARGE ? "big" : "bad");
		break;
	case EO_KUBE_OS_END:
		s->ends++;
		md = json_object_get(ev->obj, "metadata");
		add(s, "E", json_string_value(json_object_get(md, "resourceVersion")), "",
		    json_object_get(ev->obj, "type")
			? json_string_value(json_object_get(ev->obj, "type"))
			: "");
		break;
	case EO_KUBE_OS_RESTART:
		break;
	}
	return s->stop_at && ++s->calls >= s->stop_at;
}

/* Feeds body in chunks of `chunk` bytes (0 = whole); returns the first error. */
static eo_kube_err run(enum eo_kube_objstream_mode mode, size_t max_object, bool keep_all,
		       const char *body, size_t chunk, struct seen *s)
{
	struct eo_kube_objstream_opts o = {
	    .mode = mode, .max_object = max_object, .keep_all = keep_all, .cb = cb, .ud = s};
	eo_kube_objstream *os = eo_kube_objstream_new(&o);
	size_t n = strlen(body), off = 0;
	eo_kube_err rc = EO_KUBE_OK;

	assert_non_null(os);
	if (!chunk)
		chunk = n ? n : 1;
	while (off < n && rc == EO_KUBE_OK) {
		size_t k = n - off < chunk ? n - off : chunk;

		rc = eo_kube_objstream_feed(os, body + off, k, NULL);
		off += k;
	}
	if (rc == EO_KUBE_OK)
		rc = eo_kube_objstream_finish(os, NULL);
	eo_kube_objstream_free(os);
	return rc;
}

#define POD(name, extra)                                                                           \
	"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"uid\":"      \
	"\"u-" name "\",\"resourceVersion\":\"1\"" extra "}}"

static const char *LIST_OK =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
    "\"resourceVersion\":\"42\"},"
    "\"items\":[ " POD("a", ",\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{"
			    "\"f:"
			    "metadata\":{}}}],\"annotations\":{\"kubectl.kubernetes.io/"
			    "last-applied-"
			    "configuration\":\"{\\\"x\\\":\\\"}]{[\\\"}\",\"keep\":"
			    "\"1\"}") ",\n" POD("b", ",\"labels\":{\"x\":\"a \\\" ] } "
						     "\\\\\"}") " ] }";

struct row {
	const char *name;
	enum eo_kube_objstream_mode mode;
	size_t max_object;
	bool keep_all;
	const char *body;
	eo_kube_err want;
	const char *log;
};

static void test_table(void **state)
{
	static char deep[12000], big[4096];
	const struct row rows[] = {
	    {"list of two", EO_KUBE_OBJSTREAM_LIST, 0, false, LIST_OK, EO_KUBE_OK, "I:a I:b E:42 "},
	    {"empty list", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[]}", EO_KUBE_OK, "E:7 "},
	    {"items null", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":null}", EO_KUBE_OK, "E:7 "},
	    {"items before metadata", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"items\":[" POD("a", "") "],\"metadata\":{\"resourceVersion\":\"8\"}}", EO_KUBE_OK,
	     "I:a E:8 "},
	    {"nested items key is not the list", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"metadata\":{\"resourceVersion\":\"9\",\"items\":[1]},\"items\":[" POD("a",
										       "") "]}",
	     EO_KUBE_OK, "I:a E:9 "},
	    {"over the cap in the middle", EO_KUBE_OBJSTREAM_LIST, 100, false,
	     "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[" POD("a", "") "," POD(
		 "huge", ",\"labels\":{\"l\":"
			 "\"0123456789012345678901234567890123456789\"}") "," POD("c", "") "]}",
	     EO_KUBE_OK, "I:a S:huge:big I:c E:5 "},
	    {"too deep in the middle", EO_KUBE_OBJSTREAM_LIST, 0, false, deep, EO_KUBE_OK,
	     "I:a S:deep:bad I:c E:6 "},
	    {"too deep and over a small cap", EO_KUBE_OBJSTREAM_LIST, 1000, false, deep, EO_KUBE_OK,
	     "I:a S:deep:big I:c E:6 "},
	    {"not an object item", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"metadata\":{},\"items\":[12,\"s\",[1]," POD("a", "") "]}", EO_KUBE_OK,
	     "S::bad S::bad S::bad I:a E:(null) "},
	    {"bad JSON inside an item", EO_KUBE_OBJSTREAM_LIST, 0, false,
	     "{\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"x\"},\"a\":tru}," POD("a",
											  "") "]}",
	     EO_KUBE_OK, "S:x:bad I:a E:(null) "},
	    {"managedFields too big alone do not count", EO_KUBE_OBJSTREAM_LIST, 140, false, big,
	     EO_KUBE_OK, "I:a E:1 "},
	    {"two lists", EO_KUBE_OBJSTREAM_LIST, 0, false, "{\"items\":[]}{\"items\":[]}",
	     EO_KUBE_EPROTOCOL, ""},
	    {"truncated", EO_KUBE_OBJSTREAM_LIST, 0, false, "{\"items\":[{\"a\":1}",
	     EO_KUBE_EPROTOCOL, ""},
	    {"not an object", EO_KUBE_OBJSTREAM_LIST, 0, false, "[1,2]", EO_KUBE_EPROTOCOL, ""},
	    {"empty body", EO_KUBE_OBJSTREAM_LIST, 0, false, "", EO_KUBE_EPROTOCOL, ""},
	    {"mismatched brackets", EO_KUBE_OBJSTREAM_LIST, 0, false, "{\"items\":[}]}",
	     EO_KUBE_EPROTOCOL, ""},
	    {"watch events", EO_KUBE_OBJSTREAM_WATCH, 0, false,
	     "{\"type\":\"ADDED\",\"object\":" POD("a", "") "}\n{\"object\":" POD(
		 "b", "") ",\"type\":\"DELETED\"}\r\n\n",
	     EO_KUBE_OK, "I:a E:(null)ADDED I:b E:(null)DELETED "},
	    {"watch garbage", EO_KUBE_OBJSTREAM_WATCH, 0, false, "{\"type\":\"ADDED\"}\nxyz\n",
	     EO_KUBE_EPROTOCOL, "E:(null)ADDED "},
	    {"watch nothing", EO_KUBE_OBJSTREAM_WATCH, 0, false, "", EO_KUBE_OK, ""},
	};
	size_t n = 0;

	(void)state;
	/* a list whose middle item nests 3000 arrays */
	n += (size_t)snprintf(deep, sizeof(deep),
			      "{\"metadata\":{\"resourceVersion\":\"6\"},\"items\":[" POD(
				  "a", "") ","
					   "{\"metadata\":{\"name\":\"deep\"},\"spec\":");
	for (int i = 0; i < 3000; i++)
		deep[n++] = '[';
	for (int i = 0; i < 3000; i++)
		deep[n++] = ']';
	snprintf(deep + n, sizeof(deep) - n, "}," POD("c", "") "]}");
	/* an item under 140 bytes once its managedFields are dropped */
	n = (size_t)snprintf(big, sizeof(big),
			     "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[{\"metadata\":{"
			     "\"name\":\"a\",\"managedFields\":[\"");
	memset(big + n, 'm', 2000);
	n += 2000;
	snprintf(big + n, sizeof(big) - n, "\"]}}]}");

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		static const size_t chunks[] = {0, 1, 7};

		for (size_t c = 0; c < 3; c++) {
			struct seen s = {0};
			eo_kube_err rc = run(rows[i].mode, rows[i].max_object, rows[i].keep_all,
					     rows[i].body, chunks[c], &s);

			if (rc != rows[i].want ||
			    (rows[i].want == EO_KUBE_OK && strcmp(s.log, rows[i].log) != 0)) {
				print_error("row \"%s\" chunk %zu: rc %d log \"%s\"\n",
					    rows[i].name, chunks[c], rc, s.log);
				fail();
			}
		}
	}
}

static void test_dropped_fields(void **state)
{
	struct seen s = {0};

	(void)state;
	assert_int_equal(run(EO_KUBE_OBJSTREAM_LIST, 0, false, LIST_OK, 3, &s), EO_KUBE_OK);
	assert_int_equal(s.items, 2);
	assert_false(s.managed_fields);
	assert_false(s.last_applied);
	assert_true(s.other_annotation);

	memset(&s, 0, sizeof(s));
	assert_int_equal(run(EO_KUBE_OBJSTREAM_LIST, 0, true, LIST_OK, 0, &s), EO_KUBE_OK);
	assert_true(s.managed_fields);
	assert_true(s.last_applied);
}

static void test_callback_stops(void **state)
{
	struct seen s = {.stop_at = 1};

	(void)state;
	assert_int_equal(run(EO_KUBE_OBJSTREAM_LIST, 0, false, LIST_OK, 0, &s), EO_KUBE_ECANCELED);
	assert_int_equal(s.items, 1);
}

static void test_envelope_cap(void **state)
{
	struct eo_kube_objstream_opts o = {
	    .mode = EO_KUBE_OBJSTREAM_LIST, .max_envelope = 32, .cb = cb};
	struct seen s = {0};
	const char *body = "{\"metadata\":{\"continue\":\"0123456789012345678901234567890\"},"
			   "\"items\":[]}";
	eo_kube_objstream *os;

	(void)state;
	o.ud = &s;
	os = eo_kube_objstream_new(&o);
	assert_int_equal(eo_kube_objstream_feed(os, body, strlen(body), NULL), EO_KUBE_ETOOLARGE);
	/* sticky */
	assert_int_equal(eo_kube_objstream_feed(os, "}", 1, NULL), EO_KUBE_ETOOLARGE);
	eo_kube_objstream_free(os);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_dropped_fields),
	    cmocka_unit_test(test_callback_stops),
	    cmocka_unit_test(test_envelope_cap),
	};

	return cmocka_run_group_tests_name("objstream", tests, NULL, NULL);
}
