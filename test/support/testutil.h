/*
 * support/testutil.h - helpers shared by the unit tests (cmocka): JSON from
 * text and JSON comparison that fail the test with both sides printed, a
 * settable clock, jansson allocation-failure injection, apiserver Status
 * bodies for fake-apiserver handlers, and small file helpers.
 *
 * Test code only (linked from build/libeotest.a, never into the operator).
 * Every helper that can fail calls cmocka's fail_msg(), so callers need no
 * checks of their own. Names use the tu_ prefix.
 */
#ifndef EO_TEST_TESTUTIL_H
#define EO_TEST_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Parses JSON text; fails the test with the parser's message on bad input. */
json_t *tu_json(const char *text);

/* Same, with every ' turned into " first, so test JSON needs no escapes:
 * tu_jsonq("{'spec':{'replicas':3}}"). */
json_t *tu_jsonq(const char *text);

/* Fails the test, naming what and printing both sides (sorted, compact),
 * unless got and want are equal JSON. Either may be NULL (then both must be). */
void tu_assert_json_equal(const json_t *got, const json_t *want, const char *what);

/* Same for two JSON texts (each must parse). */
void tu_assert_json_text_equal(const char *got, const char *want);

/* A clock for the *_opts.now_ms hooks: returns *(int64_t *)ud, the test
 * moves time by changing that variable. */
int64_t tu_clock_now(void *ud);

/*
 * jansson allocation failures: after tu_json_alloc_fail_at(n) with n > 0,
 * only the n-th jansson allocation from now on fails (later ones succeed, so
 * a caller that ignored the failure shows what it dropped);
 * tu_json_alloc_fail_at(0) puts malloc/free back. tu_json_alloc_count() is
 * the number of jansson allocations since the last call; fewer than n means
 * nothing failed. Safe with the fake apiserver's threads.
 */
void tu_json_alloc_fail_at(int n);
int tu_json_alloc_count(void);

/* A Kubernetes Status object as a heap string, for eo_kube_fake_response.body. */
char *tu_status_body(int code, const char *reason, const char *message);

/* Writes text to dir/name (name alone when dir is NULL); fails the test on error. */
void tu_write_file(const char *dir, const char *name, const char *text);

/* obj must equal the JSON file at path; EO_UPDATE_GOLDEN=1 rewrites the file instead. */
void tu_golden(const char *path, const json_t *obj);

/*
 * Fails the test unless every container and init container of the Pod spec runs under the
 * restricted Pod Security Standard plus a read-only root filesystem: runAsNonRoot (Pod or
 * container), allowPrivilegeEscalation false, capabilities drop ALL, readOnlyRootFilesystem
 * true, seccompProfile RuntimeDefault (Pod or container). what names the object in messages.
 */
void tu_assert_restricted_pod_spec(const json_t *pod_spec, const char *what);

/*
 * A case of an admission validator's table: the object (and the old one for an update, NULL: a
 * create) in tu_jsonq form; msg NULL: accepted, else the message must start with msg.
 */
struct tu_vcase {
	const char *what;
	const char *obj;
	const char *old; /* NULL: create */
	const char *msg; /* NULL: valid; else the message must start with this */
};
/* eo_*_validate: 0, or -1 with the message in msg (n bytes; msg may be NULL when n is 0). */
typedef int tu_validate_fn(const json_t *obj, const json_t *old, char *msg, size_t n);

/*
 * Runs validate on every case, failing the test (naming the case) unless it answers as wanted,
 * leaves its input as it was and answers the same with no message buffer.
 */
void tu_validate_cases(tu_validate_fn *validate, const struct tu_vcase *cases, size_t n);

#endif
