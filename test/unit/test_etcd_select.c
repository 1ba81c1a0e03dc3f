/*
 * Unit tests of endpoint bookkeeping (src/etcd/select.c): URL normalisation,
 * try order with learners and recent failures, learner marks from member
 * lists.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "etcd/internal.h"

static void test_url_normalise(void **state)
{
	static const struct {
		const char *in;
		const char *out; /* NULL: rejected */
	} cases[] = {
	    {"http://127.0.0.1:2379", "http://127.0.0.1:2379"},
	    {"https://m1.c.ns.svc:2379/", "https://m1.c.ns.svc:2379"},
	    {"HTTPS://Host:2379//", "https://Host:2379"},
	    {"http://[::1]:2379", "http://[::1]:2379"},
	    {"http://", NULL},
	    {"http:///", NULL},
	    {"127.0.0.1:2379", NULL},
	    {"unix:///run/etcd.sock", NULL},
	    {"ftp://h:1", NULL},
	    {"http://h:1/v3", NULL},
	    {"http://h:1?x", NULL},
	    {"http://h 1:2", NULL},
	    {"", NULL},
	};
	char out[EO_ETCD_URL_MAX];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok = eo__etcd_url_normalise(cases[i].in, out, sizeof(out));

		if (cases[i].out == NULL) {
			if (ok)
				fail_msg("case %zu: %s accepted as %s", i, cases[i].in, out);
		} else {
			assert_true(ok);
			assert_string_equal(out, cases[i].out);
		}
	}
	assert_false(eo__etcd_url_normalise(NULL, out, sizeof(out)));
	/* Too long for the buffer. */
	assert_false(eo__etcd_url_normalise("http://a-rather-long-host:2379", out, 12));
}

static void set_url(struct eo__etcd_ep *ep, const char *url)
{
	memset(ep, 0, sizeof(*ep));
	assert_true(eo__etcd_url_normalise(url, ep->url, sizeof(ep->url)));
}

static void assert_order(const size_t *got, size_t n_got, const size_t *want, size_t n_want)
{
	assert_int_equal(n_got, n_want);
	for (size_t i = 0; i < n_want; i++)
		if (got[i] != want[i])
			fail_msg("position %zu: got endpoint %zu, want %zu", i, got[i], want[i]);
}

static void test_select(void **state)
{
	struct eo__etcd_ep eps[4];
	size_t order[4], n;
	const int64_t now = 100000, backoff = 10000;

	(void)state;
	set_url(&eps[0], "http://a:2379");
	set_url(&eps[1], "http://b:2379");
	set_url(&eps[2], "http://c:2379");
	set_url(&eps[3], "http://d:2379");

	/* Nothing known: configured order. */
	n = eo__etcd_select(eps, 4, true, now, backoff, order);
	assert_order(order, n, (size_t[]){0, 1, 2, 3}, 4);

	/* A known learner is skipped for voter-only calls, kept for the others. */
	eps[1].role = EO__ETCD_ROLE_LEARNER;
	n = eo__etcd_select(eps, 4, true, now, backoff, order);
	assert_order(order, n, (size_t[]){0, 2, 3}, 3);
	n = eo__etcd_select(eps, 4, false, now, backoff, order);
	assert_order(order, n, (size_t[]){0, 1, 2, 3}, 4);

	/* Recent failures go last, the oldest failure first; still tried. */
	eps[0].failed_at_ms = now - 100;
	eps[2].failed_at_ms = now - 5000;
	n = eo__etcd_select(eps, 4, true, now, backoff, order);
	assert_order(order, n, (size_t[]){3, 2, 0}, 3);
	n = eo__etcd_select(eps, 4, false, now, backoff, order);
	assert_order(order, n, (size_t[]){1, 3, 2, 0}, 4);

	/* After the backoff a failed endpoint is back in its place. */
	n = eo__etcd_select(eps, 4, true, now + 5500, backoff, order);
	assert_order(order, n, (size_t[]){2, 3, 0}, 3);

	/* A failed learner stays excluded from voter-only calls. */
	eps[1].failed_at_ms = now - 1;
	n = eo__etcd_select(eps, 4, true, now, backoff, order);
	assert_order(order, n, (size_t[]){3, 2, 0}, 3);

	/* Only learners: nothing to try. */
	for (int i = 0; i < 4; i++)
		eps[i].role = EO__ETCD_ROLE_LEARNER;
	n = eo__etcd_select(eps, 4, true, now, backoff, order);
	assert_int_equal(n, 0);
	n = eo__etcd_select(eps, 0, false, now, backoff, order);
	assert_int_equal(n, 0);
}

static void test_select_all_failed(void **state)
{
	struct eo__etcd_ep eps[3];
	size_t order[3], n;

	(void)state;
	set_url(&eps[0], "http://a:2379");
	set_url(&eps[1], "http://b:2379");
	set_url(&eps[2], "http://c:2379");
	eps[0].failed_at_ms = 300;
	eps[1].failed_at_ms = 100;
	eps[2].failed_at_ms = 200;
	n = eo__etcd_select(eps, 3, true, 400, 10000, order);
	assert_order(order, n, (size_t[]){1, 2, 0}, 3);
}

static void test_learn_roles(void **state)
{
	struct eo__etcd_ep eps[3];
	char *a_urls[] = {"http://a:2379"};
	char *b_urls[] = {"http://B:2379/", "http://10.0.0.2:2379"};
	struct eo_etcd_member mem[3] = {
	    {.id = 1, .client_urls = a_urls, .n_client_urls = 1},
	    {.id = 2, .client_urls = b_urls, .n_client_urls = 2, .is_learner = true},
	    {.id = 3, .is_learner = true}, /* not started: no client URLs */
	};
	struct eo_etcd_members ms = {.v = mem, .n = 3};

	(void)state;
	set_url(&eps[0], "http://a:2379");
	set_url(&eps[1], "http://10.0.0.2:2379");
	set_url(&eps[2], "http://c:2379");
	eps[0].role = EO__ETCD_ROLE_LEARNER; /* was a learner, now promoted */
	eo__etcd_learn_roles(eps, 3, &ms);
	assert_int_equal(eps[0].role, EO__ETCD_ROLE_VOTER);
	assert_int_equal(eps[1].role, EO__ETCD_ROLE_LEARNER);
	assert_int_equal(eps[2].role, EO__ETCD_ROLE_UNKNOWN);
	assert_int_equal(eo__etcd_find_ep(eps, 3, "http://b:2379"), 3);
	assert_int_equal(eo__etcd_find_ep(eps, 3, "HTTP://C:2379/"), 2);
	assert_int_equal(eo__etcd_find_ep(eps, 3, "garbage"), 3);
	eo__etcd_learn_roles(eps, 3, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_url_normalise),
	    cmocka_unit_test(test_select),
	    cmocka_unit_test(test_select_all_failed),
	    cmocka_unit_test(test_learn_roles),
	};

	return cmocka_run_group_tests_name("etcd_select", tests, NULL, NULL);
}
