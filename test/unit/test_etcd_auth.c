/*
 * Unit tests of the etcd client's authentication (src/etcd/client.c) against the fake etcd
 * (test/support/fake_etcd.c): provisioning root, lazy Authenticate on a refusal, the token
 * sent afterwards, re-authentication after the token went stale, a wrong password reported
 * as such, and AuthStatus with and without credentials.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <string.h>

#include "etcd/client.h"
#include "support/fake_etcd.h"
#include "support/tu_main.h"

#define EP "http://demo-a.demo.ns.svc:2379"

struct fx {
	eo_fake_etcd *f;
};

static int setup(void **state)
{
	static struct fx fx;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	fx.f = eo_fake_etcd_start();
	if (fx.f == NULL)
		return -1;
	eo_fake_etcd_set_member(fx.f, 0x1, "demo-a", "http://demo-a.demo.ns.svc:2380", false);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	eo_fake_etcd_stop(fx->f);
	curl_global_cleanup();
	return 0;
}

static eo_etcd_client *dial(struct fx *fx, const char *password)
{
	const char *eps[] = {EP};
	struct eo_etcd_config cfg = {.endpoints = eps,
				     .n_endpoints = 1,
				     .timeout_ms = 3000,
				     .password = password,
				     .connect_to = eo_fake_etcd_connect_to(fx->f)};
	eo_etcd_client *c = NULL;

	assert_int_equal(eo_etcd_client_new(&cfg, &c, NULL), EO_ETCD_OK);
	return c;
}

static void test_enable_then_token(void **state)
{
	struct fx *fx = *state;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_detail d;
	eo_etcd_client *c = dial(fx, "pw-1");
	bool on = true;
	unsigned before;

	/* Auth off: AuthStatus says so and nothing authenticates. */
	assert_int_equal(eo_etcd_auth_status(c, &on, &d), EO_ETCD_OK);
	assert_false(on);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	eo_etcd_members_clear(&ms);
	assert_int_equal(eo_fake_etcd_authenticates(fx->f), 0);
	assert_null(eo_etcd_client_token(c));

	/* Provision and enable. */
	assert_int_equal(eo_etcd_auth_enable_root(c, "pw-1", &d), EO_ETCD_OK);
	assert_true(eo_fake_etcd_auth_on(fx->f));
	assert_int_equal(eo_fake_etcd_count(fx->f, "auth/user/add"), 1);
	assert_int_equal(eo_fake_etcd_count(fx->f, "auth/role/add"), 1);
	assert_int_equal(eo_fake_etcd_count(fx->f, "auth/user/grant"), 1);
	assert_int_equal(eo_fake_etcd_count(fx->f, "auth/enable"), 1);

	/* The next call is refused, authenticates once, and goes through. */
	before = eo_fake_etcd_authenticates(fx->f);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	eo_etcd_members_clear(&ms);
	assert_int_equal(eo_fake_etcd_authenticates(fx->f), before + 1);
	assert_non_null(eo_etcd_client_token(c));
	/* The token is reused. */
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	eo_etcd_members_clear(&ms);
	assert_int_equal(eo_fake_etcd_authenticates(fx->f), before + 1);
	assert_int_equal(eo_etcd_auth_status(c, &on, &d), EO_ETCD_OK);
	assert_true(on);

	/* A stale token: authenticated again, once. */
	eo_fake_etcd_expire_token(fx->f);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_OK);
	eo_etcd_members_clear(&ms);
	assert_int_equal(eo_fake_etcd_authenticates(fx->f), before + 2);
	eo_etcd_client_free(c);
}

static void test_refusals(void **state)
{
	struct fx *fx = *state;
	struct eo_etcd_members ms = {0};
	struct eo_etcd_member added = {0};
	const char *peer[] = {"http://demo-b.demo.ns.svc:2380"};
	struct eo_etcd_detail d;
	eo_etcd_client *c;
	bool on = false;

	eo_fake_etcd_set_auth(fx->f, true, "pw-2");
	/* No password: refused, and AuthStatus's refusal reads as "on". */
	c = dial(fx, NULL);
	assert_int_equal(eo_etcd_member_list(c, &ms, &d), EO_ETCD_AUTH);
	assert_non_null(strstr(d.message, "user name is empty"));
	assert_int_equal(eo_etcd_auth_status(c, &on, &d), EO_ETCD_OK);
	assert_true(on);
	assert_int_equal(eo_etcd_authenticate(c, NULL, &d), EO_ETCD_INVALID);
	eo_etcd_client_free(c);

	/* A wrong password: AUTH with etcd's words, never the password, and no retry loop. */
	c = dial(fx, "wrong-pw");
	assert_int_equal(eo_etcd_member_add(c, peer, 1, true, &added, NULL, &d), EO_ETCD_AUTH);
	assert_non_null(strstr(d.message, "authentication failed"));
	assert_null(strstr(d.message, "wrong-pw"));
	assert_false(eo_fake_etcd_has_member(fx->f, 0x1000));
	assert_null(eo_etcd_client_token(c));
	assert_int_equal(eo_etcd_auth_status(c, &on, &d), EO_ETCD_OK);
	assert_true(on);
	assert_int_equal(eo_etcd_authenticate(c, EP, &d), EO_ETCD_AUTH);
	eo_etcd_client_free(c);

	/* The right one: a member add (needs root) goes through. */
	c = dial(fx, "pw-2");
	assert_int_equal(eo_etcd_member_add(c, peer, 1, true, &added, NULL, &d), EO_ETCD_OK);
	eo_etcd_member_clear(&added);
	assert_int_equal(eo_etcd_authenticate(c, EP, &d), EO_ETCD_OK);
	assert_non_null(eo_etcd_client_token(c));
	eo_etcd_client_free(c);
}

TU_MAIN_SETUP(setup, teardown, test_enable_then_token, test_refusals)
