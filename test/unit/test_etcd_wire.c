/*
 * Unit tests of the etcd gateway JSON layer (src/etcd/wire.c): response
 * parsing per call, 64-bit ids as strings, omitted default fields, learner
 * flags, error mapping (base64 itself: test_core_base64.c) for the 3.4/3.5 and 3.6 error shapes.
 * Response samples are shaped like what the real servers return.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "etcd/internal.h"
#include "support/testutil.h"

#define S(lit) (lit), (sizeof(lit) - 1)

/* ---- scalars -------------------------------------------------------------- */

static void test_parse_u64(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_true(eo__etcd_parse_u64(S("0"), &v));
	assert_true(v == 0);
	assert_true(eo__etcd_parse_u64(S("18446744073709551615"), &v));
	assert_true(v == UINT64_MAX);
	/* Ids above 2^53 would lose precision as doubles; strings keep them. */
	assert_true(eo__etcd_parse_u64(S("13847567121247652255"), &v));
	assert_true(v == 13847567121247652255ull);
	assert_false(eo__etcd_parse_u64(S("18446744073709551616"), &v));
	assert_false(eo__etcd_parse_u64(S(""), &v));
	assert_false(eo__etcd_parse_u64(S("-1"), &v));
	assert_false(eo__etcd_parse_u64(S("+1"), &v));
	assert_false(eo__etcd_parse_u64(S(" 1"), &v));
	assert_false(eo__etcd_parse_u64(S("1x"), &v));
	assert_false(eo__etcd_parse_u64(S("123456789012345678901"), &v));
}

static void test_json_numbers(void **state)
{
	json_t *s = json_string("42"), *i = json_integer(42), *neg = json_integer(-1),
	       *ns = json_string("-5"), *big = json_string("9223372036854775808"), *t = json_true();
	uint64_t u;
	int64_t x;

	(void)state;
	assert_true(eo_etcd_wire_json_u64(NULL, &u) && u == 0);
	assert_true(eo_etcd_wire_json_u64(s, &u) && u == 42);
	assert_true(eo_etcd_wire_json_u64(i, &u) && u == 42);
	assert_false(eo_etcd_wire_json_u64(neg, &u));
	assert_false(eo_etcd_wire_json_u64(t, &u));
	assert_true(eo__etcd_json_i64(NULL, &x) && x == 0);
	assert_true(eo__etcd_json_i64(ns, &x) && x == -5);
	assert_true(eo__etcd_json_i64(neg, &x) && x == -1);
	assert_false(eo__etcd_json_i64(big, &x));
	assert_true(eo_etcd_wire_json_u64(big, &u) && u == 9223372036854775808ull);
	json_decref(s);
	json_decref(i);
	json_decref(neg);
	json_decref(ns);
	json_decref(big);
	json_decref(t);
}

static void test_prefix_end(void **state)
{
	unsigned char *e;
	size_t n;

	(void)state;
	assert_true(eo__etcd_prefix_end("abc", 3, &e, &n));
	assert_int_equal(n, 3);
	assert_memory_equal(e, "abd", 3);
	free(e);
	assert_true(eo__etcd_prefix_end("a\xff", 2, &e, &n));
	assert_int_equal(n, 1);
	assert_memory_equal(e, "b", 1);
	free(e);
	/* Nothing to increment: to the end of the keyspace. */
	assert_true(eo__etcd_prefix_end("\xff\xff", 2, &e, &n));
	assert_int_equal(n, 1);
	assert_int_equal(e[0], 0);
	free(e);
}

/* ---- member list ---------------------------------------------------------- */

/* 3.4 after a learner was added: the learner has no name and no clientURLs,
 * the voter has no isLearner (false is omitted). */
static const char members_34[] =
    "{\"header\":{\"cluster_id\":\"324952591200643719\",\"member_id\":\"3319814642761637952\","
    "\"raft_term\":\"2\"},\"members\":[{\"ID\":\"3319814642761637952\",\"name\":\"a\","
    "\"peerURLs\":[\"http://127.0.0.1:23800\"],\"clientURLs\":[\"http://127.0.0.1:23790\"]},"
    "{\"ID\":\"13513642583254261161\",\"peerURLs\":[\"http://127.0.0.1:23801\"],"
    "\"isLearner\":true}]}";

static void test_members(void **state)
{
	struct eo_etcd_members ms = {0};
	const struct eo_etcd_member *m;

	(void)state;
	assert_int_equal(eo_etcd_wire_parse_members(S(members_34), &ms), EO_ETCD_OK);
	assert_true(ms.cluster_id == 324952591200643719ull);
	assert_true(ms.responder_id == 3319814642761637952ull);
	assert_int_equal(ms.n, 2);
	assert_true(ms.v[0].id == 3319814642761637952ull);
	assert_string_equal(ms.v[0].name, "a");
	assert_int_equal(ms.v[0].n_peer_urls, 1);
	assert_string_equal(ms.v[0].peer_urls[0], "http://127.0.0.1:23800");
	assert_int_equal(ms.v[0].n_client_urls, 1);
	assert_false(ms.v[0].is_learner);
	m = eo_etcd_members_find(&ms, 13513642583254261161ull);
	assert_ptr_equal(m, &ms.v[1]);
	assert_string_equal(m->name, "");
	assert_int_equal(m->n_client_urls, 0);
	assert_null(m->client_urls);
	assert_true(m->is_learner);
	assert_null(eo_etcd_members_find(&ms, 1));
	eo_etcd_members_clear(&ms);
	assert_int_equal(ms.n, 0);
	assert_null(ms.v);
	eo_etcd_members_clear(&ms); /* idempotent */
}

static void test_members_edge(void **state)
{
	struct eo_etcd_members ms = {0};

	(void)state;
	/* No members key and no header: an empty list, not an error. */
	assert_int_equal(eo_etcd_wire_parse_members(S("{}"), &ms), EO_ETCD_OK);
	assert_int_equal(ms.n, 0);
	eo_etcd_members_clear(&ms);
	/* Numeric ids are accepted too (the gateway accepts both on input). */
	assert_int_equal(eo_etcd_wire_parse_members(S("{\"members\":[{\"ID\":5}]}"), &ms),
			 EO_ETCD_OK);
	assert_true(ms.v[0].id == 5);
	eo_etcd_members_clear(&ms);

	static const char *bad[] = {
	    "",
	    "[]",
	    "not json",
	    "{\"members\":{}}",
	    "{\"members\":[{}]}",			 /* no id */
	    "{\"members\":[{\"ID\":\"x\"}]}",		 /* id not a number */
	    "{\"members\":[{\"ID\":\"1\",\"name\":3}]}", /* name not a string */
	    "{\"members\":[{\"ID\":\"1\",\"peerURLs\":[1]}]}",
	    "{\"members\":[{\"ID\":\"1\",\"isLearner\":\"yes\"}]}",
	    "{\"members\":[{\"ID\":\"1\"},{\"ID\":\"2\",\"clientURLs\":\"x\"}]}",
	    "{\"header\":[],\"members\":[]}",
	    "{\"members\":[],\"members\":[]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(eo_etcd_wire_parse_members(bad[i], strlen(bad[i]), &ms),
				 EO_ETCD_PROTOCOL);
		assert_int_equal(ms.n, 0);
		assert_null(ms.v);
	}
}

static void test_member_add(void **state)
{
	static const char body[] =
	    "{\"header\":{\"cluster_id\":\"1\",\"member_id\":\"2\",\"raft_term\":\"2\"},"
	    "\"member\":{\"ID\":\"8842863931905285765\",\"peerURLs\":[\"http://p:2380\"],"
	    "\"isLearner\":true},\"members\":[{\"ID\":\"2\",\"name\":\"a\"},"
	    "{\"ID\":\"8842863931905285765\",\"peerURLs\":[\"http://p:2380\"],"
	    "\"isLearner\":true}]}";
	struct eo_etcd_member added = {0};
	struct eo_etcd_members ms = {0};

	(void)state;
	assert_int_equal(eo__etcd_parse_member_add(S(body), &added, &ms), EO_ETCD_OK);
	assert_true(added.id == 8842863931905285765ull);
	assert_true(added.is_learner);
	assert_string_equal(added.name, "");
	assert_string_equal(added.peer_urls[0], "http://p:2380");
	assert_int_equal(ms.n, 2);
	eo_etcd_member_clear(&added);
	eo_etcd_members_clear(&ms);
	/* members is optional */
	assert_int_equal(eo__etcd_parse_member_add(S(body), &added, NULL), EO_ETCD_OK);
	eo_etcd_member_clear(&added);
	assert_int_equal(eo__etcd_parse_member_add(S("{\"members\":[]}"), &added, &ms),
			 EO_ETCD_PROTOCOL);
	assert_null(added.name);
}

/* ---- status ----------------------------------------------------------------- */

static void test_status_36_learner(void **state)
{
	static const char body[] =
	    "{\"header\":{\"cluster_id\":\"324952591200643719\",\"member_id\":"
	    "\"8842863931905285765\",\"revision\":\"1\",\"raft_term\":\"2\"},\"version\":"
	    "\"3.6.16\",\"dbSize\":\"20480\",\"leader\":\"3319814642761637952\",\"raftIndex\":"
	    "\"7\",\"raftTerm\":\"2\",\"raftAppliedIndex\":\"7\",\"dbSizeInUse\":\"16384\","
	    "\"isLearner\":true,\"storageVersion\":\"3.5.0\",\"dbSizeQuota\":\"2147483648\","
	    "\"downgradeInfo\":{}}";
	struct eo_etcd_status st = {0};

	(void)state;
	assert_int_equal(eo_etcd_wire_parse_status(S(body), &st), EO_ETCD_OK);
	assert_string_equal(st.version, "3.6.16");
	assert_string_equal(st.storage_version, "3.5.0");
	assert_true(st.member_id == 8842863931905285765ull);
	assert_true(st.cluster_id == 324952591200643719ull);
	assert_true(st.leader == 3319814642761637952ull);
	assert_true(st.raft_index == 7 && st.raft_term == 2 && st.raft_applied_index == 7);
	assert_true(st.revision == 1);
	assert_true(st.db_size == 20480 && st.db_size_in_use == 16384);
	assert_true(st.db_size_quota == 2147483648ll);
	assert_true(st.is_learner);
	assert_int_equal(st.n_errors, 0);
	eo_etcd_status_clear(&st);
}

static void test_status_34_minimal(void **state)
{
	/* No leader yet, no applied index, an alarm in errors, nothing 3.6-only. */
	static const char body[] =
	    "{\"header\":{\"member_id\":\"9\"},\"version\":\"3.4.23\","
	    "\"dbSize\":\"20480\",\"errors\":[\"memberID:9 alarm:NOSPACE \"]}";
	struct eo_etcd_status st = {0};

	(void)state;
	assert_int_equal(eo_etcd_wire_parse_status(S(body), &st), EO_ETCD_OK);
	assert_string_equal(st.version, "3.4.23");
	assert_string_equal(st.storage_version, "");
	assert_true(st.leader == 0 && st.raft_term == 0 && st.db_size_quota == 0);
	assert_true(st.revision == 0);
	assert_false(st.is_learner);
	assert_int_equal(st.n_errors, 1);
	assert_string_equal(st.errors[0], "memberID:9 alarm:NOSPACE ");
	eo_etcd_status_clear(&st);

	assert_int_equal(eo_etcd_wire_parse_status(S("{}"), &st), EO_ETCD_PROTOCOL);
	assert_int_equal(
	    eo_etcd_wire_parse_status(S("{\"version\":\"3.5.0\",\"dbSize\":true}"), &st),
	    EO_ETCD_PROTOCOL);
	assert_int_equal(
	    eo_etcd_wire_parse_status(S("{\"version\":\"3.5.0\",\"errors\":[1]}"), &st),
	    EO_ETCD_PROTOCOL);
	assert_null(st.errors);
}

/* ---- range / put ------------------------------------------------------------ */

static void test_range(void **state)
{
	static const char body[] =
	    "{\"header\":{\"revision\":\"5\"},\"kvs\":[{\"key\":\"YQ==\",\"create_revision\":"
	    "\"2\",\"mod_revision\":\"4\",\"version\":\"2\",\"value\":\"AP8=\"},"
	    "{\"key\":\"Yg==\",\"create_revision\":\"3\",\"mod_revision\":\"3\",\"version\":"
	    "\"1\",\"lease\":\"7587\"}],\"more\":true,\"count\":\"3\"}";
	struct eo_etcd_range r = {0};

	(void)state;
	assert_int_equal(eo_etcd_wire_parse_range(S(body), &r), EO_ETCD_OK);
	assert_true(r.revision == 5);
	assert_true(r.more);
	assert_true(r.count == 3);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.kvs[0].key_len, 1);
	assert_string_equal((char *)r.kvs[0].key, "a");
	assert_int_equal(r.kvs[0].value_len, 2);
	assert_memory_equal(r.kvs[0].value, "\0\xff", 2);
	assert_true(r.kvs[0].create_revision == 2 && r.kvs[0].mod_revision == 4);
	assert_true(r.kvs[0].version == 2 && r.kvs[0].lease == 0);
	/* An empty value is omitted altogether. */
	assert_int_equal(r.kvs[1].value_len, 0);
	assert_string_equal((char *)r.kvs[1].value, "");
	assert_true(r.kvs[1].lease == 7587);
	eo_etcd_range_clear(&r);

	/* No kvs, no count: nothing found. */
	assert_int_equal(eo_etcd_wire_parse_range(S("{\"header\":{\"revision\":\"1\"}}"), &r),
			 EO_ETCD_OK);
	assert_int_equal(r.n, 0);
	assert_true(r.count == 0 && !r.more);
	eo_etcd_range_clear(&r);

	assert_int_equal(eo_etcd_wire_parse_range(S("{\"kvs\":[{\"key\":\"!!\"}]}"), &r),
			 EO_ETCD_PROTOCOL);
	assert_int_equal(eo_etcd_wire_parse_range(S("{\"kvs\":[{\"key\":\"YQ==\"},3]}"), &r),
			 EO_ETCD_PROTOCOL);
	assert_int_equal(r.n, 0);
	assert_int_equal(eo_etcd_wire_parse_range(S("{\"kvs\":{}}"), &r), EO_ETCD_PROTOCOL);
}

static void test_put(void **state)
{
	int64_t rev = -1;

	(void)state;
	assert_int_equal(eo__etcd_parse_put(S("{\"header\":{\"cluster_id\":\"1\",\"revision\":"
					      "\"12\"}}"),
					    &rev),
			 EO_ETCD_OK);
	assert_true(rev == 12);
	assert_int_equal(eo__etcd_parse_put(S("{\"header\":{\"revision\":\"x\"}}"), &rev),
			 EO_ETCD_PROTOCOL);
	assert_int_equal(eo__etcd_parse_put(S("[1]"), &rev), EO_ETCD_PROTOCOL);

	/* LeaseGrant: the ID as the gateway sends it (a string), or refused. */
	assert_int_equal(eo__etcd_parse_lease_grant(S("{\"header\":{\"revision\":\"1\"},"
						      "\"ID\":\"3435298769439722501\","
						      "\"TTL\":\"5\"}"),
						    &rev),
			 EO_ETCD_OK);
	assert_true(rev == 3435298769439722501LL);
	assert_int_equal(
	    eo__etcd_parse_lease_grant(S("{\"ID\":\"7\",\"error\":\"lease exists\"}"), &rev),
	    EO_ETCD_PROTOCOL);
	assert_true(rev == 0);
	assert_int_equal(eo__etcd_parse_lease_grant(S("{\"TTL\":\"5\"}"), &rev), EO_ETCD_PROTOCOL);
	assert_int_equal(eo__etcd_parse_lease_grant(S("{\"ID\":\"-3\"}"), &rev), EO_ETCD_PROTOCOL);
	assert_int_equal(eo__etcd_parse_lease_grant(S("{\"ID\":7}"), &rev), EO_ETCD_OK);
	assert_true(rev == 7);
}

/* ---- requests ----------------------------------------------------------------- */

static void test_requests(void **state)
{
	const char *peers[] = {"https://m1:2380", "https://10.0.0.1:2380"};
	struct eo_etcd_range_opts o = {.prefix = true, .limit = 10, .serializable = true};
	char *s;

	(void)state;
	s = eo__etcd_req_member_add(peers, 2, true);
	tu_assert_json_text_equal(s,
				  "{\"peerURLs\":[\"https://m1:2380\",\"https://10.0.0.1:2380\"],"
				  "\"isLearner\":true}");
	free(s);
	s = eo__etcd_req_member_add(peers, 1, false);
	tu_assert_json_text_equal(s, "{\"peerURLs\":[\"https://m1:2380\"]}");
	free(s);
	/* Ids go out as strings: they do not fit a double. */
	s = eo__etcd_req_member_id(18446744073709551615ull);
	tu_assert_json_text_equal(s, "{\"ID\":\"18446744073709551615\"}");
	free(s);
	s = eo__etcd_req_lease_grant(5);
	tu_assert_json_text_equal(s, "{\"TTL\":\"5\"}");
	free(s);
	s = eo__etcd_req_lease_id(9223372036854775807LL);
	tu_assert_json_text_equal(s, "{\"ID\":\"9223372036854775807\"}");
	free(s);
	s = eo__etcd_req_put("a", 1, "\0\xff", 2);
	tu_assert_json_text_equal(s, "{\"key\":\"YQ==\",\"value\":\"AP8=\"}");
	free(s);
	s = eo_etcd_wire_req_range("abc", 3, NULL);
	tu_assert_json_text_equal(s, "{\"key\":\"YWJj\"}");
	free(s);
	s = eo_etcd_wire_req_range("abc", 3, &o);
	tu_assert_json_text_equal(s, "{\"key\":\"YWJj\",\"range_end\":\"YWJk\",\"limit\":\"10\","
				     "\"serializable\":true}");
	free(s);
	o = (struct eo_etcd_range_opts){
	    .range_end = "b", .range_end_len = 1, .keys_only = true, .count_only = true};
	s = eo_etcd_wire_req_range("a", 1, &o);
	tu_assert_json_text_equal(s, "{\"key\":\"YQ==\",\"range_end\":\"Yg==\",\"keys_only\":true,"
				     "\"count_only\":true}");
	free(s);
}

/* ---- errors --------------------------------------------------------------------- */

struct err_case {
	long http;
	const char *body;
	eo_etcd_err want;
	int grpc;
	const char *msg;
};

static void test_error_mapping(void **state)
{
	static const struct err_case cases[] = {
	    /* 3.4/3.5 shape: error + code + message */
	    {404,
	     "{\"error\":\"etcdserver: member not found\",\"message\":\"etcdserver: member "
	     "not found\",\"code\":5}",
	     EO_ETCD_NOTFOUND, 5, "etcdserver: member not found"},
	    {412,
	     "{\"error\":\"etcdserver: too many learner members in cluster\",\"message\":"
	     "\"etcdserver: too many learner members in cluster\",\"code\":9}",
	     EO_ETCD_TOO_MANY_LEARNERS, 9, NULL},
	    {412,
	     "{\"error\":\"etcdserver: member ID already exist\",\"message\":\"etcdserver: "
	     "member ID already exist\",\"code\":9}",
	     EO_ETCD_PEER_URL_EXISTS, 9, NULL},
	    {503,
	     "{\"error\":\"etcdserver: rpc not supported for learner\",\"message\":"
	     "\"etcdserver: rpc not supported for learner\",\"code\":14}",
	     EO_ETCD_LEARNER, 14, NULL},
	    {503,
	     "{\"error\":\"etcdserver: unhealthy cluster\",\"message\":\"etcdserver: "
	     "unhealthy cluster\",\"code\":14}",
	     EO_ETCD_UNHEALTHY_CLUSTER, 14, NULL},
	    /* 3.6 shape: no "error" key; the learner refusal is FailedPrecondition */
	    {400, "{\"code\":9,\"message\":\"etcdserver: rpc not supported for learner\"}",
	     EO_ETCD_LEARNER, 9, "etcdserver: rpc not supported for learner"},
	    {400,
	     "{\"code\":9,\"message\":\"etcdserver: can only promote a learner member which "
	     "is in sync with leader\"}",
	     EO_ETCD_LEARNER_NOT_READY, 9, NULL},
	    {400, "{\"code\":9,\"message\":\"etcdserver: can only promote a learner member\"}",
	     EO_ETCD_NOT_LEARNER, 9, NULL},
	    {400, "{\"code\":9,\"message\":\"etcdserver: Peer URLs already exists\"}",
	     EO_ETCD_PEER_URL_EXISTS, 9, NULL},
	    {400,
	     "{\"code\":9,\"message\":\"etcdserver: re-configuration failed due to not "
	     "enough started members\"}",
	     EO_ETCD_UNHEALTHY_CLUSTER, 9, NULL},
	    {503, "{\"code\":14,\"message\":\"etcdserver: no leader\"}", EO_ETCD_UNAVAILABLE, 14,
	     NULL},
	    {503, "{\"code\":14,\"message\":\"etcdserver: request timed out\"}", EO_ETCD_TIMEOUT,
	     14, NULL},
	    {429, "{\"code\":8,\"message\":\"etcdserver: mvcc: database space exceeded\"}",
	     EO_ETCD_NOSPACE, 8, NULL},
	    {400,
	     "{\"code\":11,\"message\":\"etcdserver: mvcc: required revision has been "
	     "compacted\"}",
	     EO_ETCD_COMPACTED, 11, NULL},
	    {401, "{\"code\":16,\"message\":\"etcdserver: invalid auth token\"}", EO_ETCD_AUTH, 16,
	     NULL},
	    {400,
	     "{\"code\":3,\"message\":\"etcdserver: authentication failed, invalid user ID "
	     "or password\"}",
	     EO_ETCD_AUTH, 3, NULL},
	    {403, "{\"code\":7,\"message\":\"etcdserver: permission denied\"}", EO_ETCD_AUTH, 7,
	     NULL},
	    /* Unknown messages fall back on the code. */
	    {400, "{\"code\":3,\"message\":\"invalid character 'g'\"}", EO_ETCD_INVALID, 3, NULL},
	    {500, "{\"code\":13,\"message\":\"boom\"}", EO_ETCD_INTERNAL, 13, "boom"},
	    {504, "{\"code\":4,\"message\":\"context deadline exceeded\"}", EO_ETCD_TIMEOUT, 4,
	     NULL},
	    {503, "{\"code\":14,\"message\":\"transport is closing\"}", EO_ETCD_UNAVAILABLE, 14,
	     NULL},
	    {501, "{\"code\":12,\"message\":\"unknown service\"}", EO_ETCD_UNSUPPORTED, 12, NULL},
	    /* 3.6's router answers unknown paths with a NotFound of its own. */
	    {404, "{\"code\":5,\"message\":\"Not Found\"}", EO_ETCD_UNSUPPORTED, 5, "Not Found"},
	    /* Not the gateway's JSON at all: the HTTP status decides. */
	    {404, "Not Found\n", EO_ETCD_UNSUPPORTED, -1, "Not Found"},
	    {503, "", EO_ETCD_UNAVAILABLE, -1, ""},
	    {401, NULL, EO_ETCD_AUTH, -1, ""},
	    {421, "misdirected", EO_ETCD_PROTOCOL, -1, "misdirected"},
	    {502, "bad gateway", EO_ETCD_INTERNAL, -1, NULL},
	    {400, "{\"code\":\"nine\"}", EO_ETCD_INVALID, -1, NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct err_case *c = &cases[i];
		struct eo_etcd_detail d;
		eo_etcd_err got;

		/* Junk from an earlier attempt must not survive into the detail. */
		memset(&d, 'j', sizeof(d));
		got = eo_etcd_wire_map_error(c->http, c->body, c->body ? strlen(c->body) : 0, &d);
		if (got != c->want)
			fail_msg("case %zu: got %s, want %s", i, eo_etcd_strerror(got),
				 eo_etcd_strerror(c->want));
		assert_int_equal(d.grpc_code, c->grpc);
		if (c->msg != NULL)
			assert_string_equal(d.message, c->msg);
	}
	/* A NULL detail is fine. */
	assert_int_equal(eo_etcd_wire_map_error(404, S("{\"code\":5}"), NULL), EO_ETCD_UNSUPPORTED);
}

static void test_error_message_truncated(void **state)
{
	char body[2048];
	struct eo_etcd_detail d;
	int n;

	(void)state;
	n = snprintf(body, sizeof(body), "{\"code\":13,\"message\":\"");
	memset(body + n, 'x', 1000);
	snprintf(body + n + 1000, sizeof(body) - (size_t)n - 1000, "\"}");
	assert_int_equal(eo_etcd_wire_map_error(500, body, strlen(body), &d), EO_ETCD_INTERNAL);
	assert_int_equal(strlen(d.message), EO_ETCD_MSG_MAX - 1);
}

static void test_strerror(void **state)
{
	(void)state;
	for (int e = 0; e < EO_ETCD_ERR_COUNT_; e++) {
		assert_non_null(eo_etcd_strerror((eo_etcd_err)e));
		assert_string_not_equal(eo_etcd_strerror((eo_etcd_err)e), "unknown etcd error");
	}
	assert_string_equal(eo_etcd_strerror((eo_etcd_err)999), "unknown etcd error");
	assert_string_equal(eo_etcd_strerror(EO_ETCD_OK), "ok");
}

/* ---- allocation failures ---------------------------------------------------- */

/*
 * Every request builder, with each of its jansson allocations failing in turn: the result is
 * NULL or valid JSON, and nothing is freed twice or leaked (checked under ASan).
 */
static void test_requests_out_of_memory(void **state)
{
	const char *peers[] = {"https://m1:2380", "https://m2:2380"};
	struct eo_etcd_range_opts o = {.prefix = true, .limit = 10, .serializable = true};
	int done = 0;

	(void)state;
	for (int at = 1; at < 200 && done < 4; at++) {
		char *s[4];

		tu_json_alloc_fail_at(at);
		s[0] = eo__etcd_req_member_add(peers, 2, true);
		s[1] = eo__etcd_req_member_id(42);
		s[2] = eo__etcd_req_put("k", 1, "v", 1);
		s[3] = eo_etcd_wire_req_range("abc", 3, &o);
		tu_json_alloc_fail_at(0);
		done = 0;
		for (int i = 0; i < 4; i++) {
			if (s[i] != NULL) /* what came out is whole JSON */
				json_decref(tu_json(s[i]));
			done += s[i] != NULL;
			free(s[i]);
		}
	}
	assert_int_equal(done, 4);
}

/* Alarm list: names and numbers, an absent list, and what is refused. */
static void test_parse_alarms(void **state)
{
	static const struct {
		const char *body;
		eo_etcd_err want;
		size_t n;
		uint64_t id0;
		enum eo_etcd_alarm_type t0;
	} rows[] = {
	    {"{\"header\":{\"member_id\":\"7\"}}", EO_ETCD_OK, 0, 0, EO_ETCD_ALARM_NONE},
	    {"{\"alarms\":[{\"memberID\":\"12345678901234567890\",\"alarm\":\"NOSPACE\"}]}",
	     EO_ETCD_OK, 1, 12345678901234567890ULL, EO_ETCD_ALARM_NOSPACE},
	    {"{\"alarms\":[{\"memberID\":\"5\",\"alarm\":2},{\"memberID\":\"6\"}]}", EO_ETCD_OK, 2,
	     5, EO_ETCD_ALARM_CORRUPT},
	    {"{\"alarms\":[{\"memberID\":\"5\",\"alarm\":\"BOGUS\"}]}", EO_ETCD_PROTOCOL, 0, 0,
	     EO_ETCD_ALARM_NONE},
	    {"{\"alarms\":{}}", EO_ETCD_PROTOCOL, 0, 0, EO_ETCD_ALARM_NONE},
	    {"[]", EO_ETCD_PROTOCOL, 0, 0, EO_ETCD_ALARM_NONE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct eo_etcd_alarms a = {0};

		assert_int_equal(eo__etcd_parse_alarms(rows[i].body, strlen(rows[i].body), &a),
				 rows[i].want);
		assert_int_equal(a.n, rows[i].n);
		if (a.n > 0) {
			assert_true(a.v[0].member_id == rows[i].id0);
			assert_int_equal(a.v[0].type, rows[i].t0);
		}
		eo_etcd_alarms_clear(&a);
	}
}

static void test_requests_maintenance(void **state)
{
	struct eo_etcd_alarm al = {42, EO_ETCD_ALARM_NOSPACE};
	char *s;

	(void)state;
	s = eo_etcd_wire_req_alarm("GET", NULL);
	tu_assert_json_text_equal(s, "{\"action\":\"GET\"}");
	free(s);
	s = eo_etcd_wire_req_alarm("DEACTIVATE", &al);
	tu_assert_json_text_equal(
	    s, "{\"action\":\"DEACTIVATE\",\"memberID\":\"42\",\"alarm\":\"NOSPACE\"}");
	free(s);
	s = eo_etcd_wire_req_compact(1234, true);
	tu_assert_json_text_equal(s, "{\"revision\":\"1234\",\"physical\":true}");
	free(s);
}

/* The archive replay's bodies: one txn per revision, a lease under its own ID, a read at a
 * revision; and HashKV's answer. */
static void test_requests_replay(void **state)
{
	struct eo_etcd_txn_op ops[3] = {
	    {.key = "a", .key_len = 1, .value = "v", .value_len = 1},
	    {.key = "b", .key_len = 1, .value = "", .value_len = 0, .lease = 7},
	    {.del = true, .key = "c", .key_len = 1},
	};
	struct eo_etcd_range_opts ro = {.revision = 42};
	uint32_t hash;
	int64_t cr;
	char *s;

	(void)state;
	s = eo__etcd_req_txn(ops, 3);
	tu_assert_json_text_equal(
	    s, "{\"success\":[{\"request_put\":{\"key\":\"YQ==\",\"value\":\"dg==\"}},"
	       "{\"request_put\":{\"key\":\"Yg==\",\"value\":\"\",\"lease\":\"7\"}},"
	       "{\"request_delete_range\":{\"key\":\"Yw==\"}}]}");
	free(s);
	s = eo__etcd_req_lease_grant_id(7, 3600);
	tu_assert_json_text_equal(s, "{\"ID\":\"7\",\"TTL\":\"3600\"}");
	free(s);
	s = eo_etcd_wire_req_range("k", 1, &ro);
	tu_assert_json_text_equal(s, "{\"key\":\"aw==\",\"revision\":\"42\"}");
	free(s);
	assert_int_equal(eo__etcd_parse_hash_kv("{\"header\":{\"revision\":\"9\"},\"hash\":"
						"4294967295,\"compact_revision\":\"3\"}",
						68, &hash, &cr),
			 EO_ETCD_OK);
	assert_int_equal(hash, 4294967295u);
	assert_int_equal(cr, 3);
	/* A hash over 32 bits is not etcd's answer; a missing one is 0 (the gateway leaves out
	 * zero values). */
	assert_int_equal(eo__etcd_parse_hash_kv("{\"header\":{\"revision\":\"9\"},\"hash\":"
						"4294967296}",
						45, &hash, &cr),
			 EO_ETCD_PROTOCOL);
	assert_int_equal(
	    eo__etcd_parse_hash_kv("{\"header\":{\"revision\":\"9\"}}", 27, &hash, &cr),
	    EO_ETCD_OK);
	assert_int_equal(hash, 0);
	assert_int_equal(cr, 0);
}

/* The bodies kubectl-etcd sends through the Pod proxy (plugin/cmd_maintenance.c, reach.c). */
static void test_requests_plugin(void **state)
{
	char *s;

	(void)state;
	s = eo_etcd_wire_req_alarm("GET", NULL);
	assert_string_equal(s, "{\"action\":\"GET\"}");
	free(s);
	s = eo_etcd_wire_req_alarm_name("DEACTIVATE", 18446744073709551615ull, "NOSPACE");
	assert_string_equal(s, "{\"action\":\"DEACTIVATE\",\"memberID\":\"18446744073709551615\","
			       "\"alarm\":\"NOSPACE\"}");
	free(s);
	s = eo_etcd_wire_req_compact(9, true);
	assert_string_equal(s, "{\"revision\":\"9\",\"physical\":true}");
	free(s);
	s = eo_etcd_wire_req_name_password("root", "p\"w", false);
	assert_string_equal(s, "{\"name\":\"root\",\"password\":\"p\\\"w\"}");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_u64),
	    cmocka_unit_test(test_json_numbers),
	    cmocka_unit_test(test_prefix_end),
	    cmocka_unit_test(test_members),
	    cmocka_unit_test(test_members_edge),
	    cmocka_unit_test(test_member_add),
	    cmocka_unit_test(test_status_36_learner),
	    cmocka_unit_test(test_status_34_minimal),
	    cmocka_unit_test(test_range),
	    cmocka_unit_test(test_put),
	    cmocka_unit_test(test_requests),
	    cmocka_unit_test(test_requests_out_of_memory),
	    cmocka_unit_test(test_error_mapping),
	    cmocka_unit_test(test_error_message_truncated),
	    cmocka_unit_test(test_strerror),
	    cmocka_unit_test(test_parse_alarms),
	    cmocka_unit_test(test_requests_maintenance),
	    cmocka_unit_test(test_requests_plugin),
	    cmocka_unit_test(test_requests_replay),
	};

	return cmocka_run_group_tests_name("etcd_wire", tests, NULL, NULL);
}
