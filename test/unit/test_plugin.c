/* kubectl-etcd's pure parts: arguments, rendering, decisions (src/plugin). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The tables leave trailing fields zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "etcd/wire.h"
#include "kube/config.h"
#include "support/fake_apiserver.h"
#include "support/testutil.h"
#include "support/tu_main.h"
#include "plugin/args.h"
#include "plugin/complete.h"
#include "plugin/decide.h"
#include "plugin/reach.h"
#include "plugin/render.h"
#include "plugin/report.h"

/* ---- arguments ---------------------------------------------------------------------- */

struct args_case {
	const char *argv[10];
	int rc;
	enum eo_plugin_cmd cmd;
	const char *cluster, *ns, *member, *path, *remove, *err_has;
	enum eo_plugin_format fmt;
	int64_t revision;
	bool help, version;
};

static const struct args_case args_cases[] = {
    {{"members", "demo", "-n", "ns1"}, 0, EO_PCMD_MEMBERS, "demo", "ns1", NULL, NULL, NULL, NULL},
    {{"members", "--help"}, 0, EO_PCMD_MEMBERS, NULL, NULL, NULL, NULL, NULL, NULL, .help = true},
    {{"--version"}, 0, EO_PCMD_NONE, NULL, NULL, NULL, NULL, NULL, NULL, .version = true},
    {{"version"}, 0, EO_PCMD_VERSION, NULL, NULL, NULL, NULL, NULL, NULL},
    {{"report", "demo"}, 0, EO_PCMD_REPORT, "demo", NULL, NULL, NULL, NULL, NULL},
    {{"report", "demo", "/tmp/r.tgz", "-n", "p"},
     0,
     EO_PCMD_REPORT,
     "demo",
     "p",
     NULL,
     "/tmp/r.tgz",
     NULL,
     NULL},
    {{"report", "demo", "a", "b"},
     -1,
     EO_PCMD_REPORT,
     NULL,
     NULL,
     NULL,
     NULL,
     NULL,
     "unexpected argument \"b\""},
    {{"status", "--namespace=x", "demo", "-ojson", "--member", "demo-a"},
     0,
     EO_PCMD_STATUS,
     "demo",
     "x",
     "demo-a",
     NULL,
     NULL,
     NULL,
     EO_PFMT_JSON},
    {{"alarm", "list", "demo", "-o", "yaml"},
     0,
     EO_PCMD_ALARM_LIST,
     "demo",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL,
     EO_PFMT_YAML},
    {{"alarm", "disarm", "--cluster", "demo"},
     0,
     EO_PCMD_ALARM_DISARM,
     "demo",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
    {{"snapshot", "demo", "/tmp/s.db"},
     0,
     EO_PCMD_SNAPSHOT,
     "demo",
     NULL,
     NULL,
     "/tmp/s.db",
     NULL,
     NULL},
    {{"snapshot", "-c", "demo", "s.db"},
     0,
     EO_PCMD_SNAPSHOT,
     "demo",
     NULL,
     NULL,
     "s.db",
     NULL,
     NULL},
    {{"remove-member", "demo", "demo-abcde"},
     0,
     EO_PCMD_REMOVE_MEMBER,
     "demo",
     NULL,
     NULL,
     NULL,
     "demo-abcde",
     NULL},
    {{"compact", "demo", "42"},
     0,
     EO_PCMD_COMPACT,
     "demo",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL,
     .revision = 42},
    {{"forfeit-leadership", "demo", "--to", "demo-b"},
     0,
     EO_PCMD_FORFEIT_LEADERSHIP,
     "demo",
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
    {{"--", "members", "demo"}, 0, EO_PCMD_MEMBERS, "demo", NULL, NULL, NULL, NULL, NULL},
    /* errors */
    {{"members"}, -1, .err_has = "which cluster"},
    {{"bogus", "demo"}, -1, .err_has = "unknown command"},
    {{"alarm", "demo"}, -1, .err_has = "list or disarm"},
    {{"members", "demo", "-o", "xml"}, -1, .err_has = "unknown output format"},
    {{"members", "Demo_X"}, -1, .err_has = "invalid cluster name"},
    {{"members", "demo", "-n", "a.b"}, -1, .err_has = "invalid namespace"},
    {{"members", "demo", "-n"}, -1, .err_has = "needs a value"},
    {{"members", "demo", "--frob"}, -1, .err_has = "unknown flag"},
    {{"snapshot", "demo"}, -1, .err_has = "needs the path"},
    {{"remove-member", "demo"}, -1, .err_has = "needs the name"},
    {{"compact", "demo", "-3"}, -1, .err_has = "unknown flag"},
    {{"compact", "demo", "x3"}, -1, .err_has = "positive revision"},
    {{"members", "demo", "extra"}, -1, .err_has = "unexpected argument"},
    {{"members", "demo", "--member", "demo-a"}, -1, .err_has = "--member applies"},
    {{"status", "demo", "--to", "demo-a"}, -1, .err_has = "--to applies"},
    {{"status", "demo", "--timeout", "0"}, -1, .err_has = "--timeout"},
    {{"version", "x"}, -1, .err_has = "takes no argument"},
    {{"members", "demo", "--help=yes"}, -1, .err_has = "takes no value"},
    /* getopt_long with pflag's rules: letters combine, "-n=NS" is NS, no abbreviations */
    {{"-hn", "ns1", "members"}, 0, EO_PCMD_MEMBERS, NULL, "ns1", .help = true},
    {{"members", "demo", "-n=ns1", "-o=json"},
     0,
     EO_PCMD_MEMBERS,
     "demo",
     "ns1",
     .fmt = EO_PFMT_JSON},
    {{"members", "-n", "=ns1", "demo"}, -1, .err_has = "invalid namespace \"=ns1\""},
    {{"members", "demo", "-hx"}, -1, .err_has = "unknown flag \"-x\" in \"-hx\""},
    {{"members", "demo", "-h=x"}, -1, .err_has = "-h takes no value"},
    {{"members", "demo", "--names", "ns1"}, -1, .err_has = "unknown flag \"--names\""},
    {{"members", "demo", "--namespace"}, -1, .err_has = "--namespace needs a value"},
};

static void test_args_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(args_cases) / sizeof(args_cases[0]); i++) {
		const struct args_case *c = &args_cases[i];
		char *argv[12] = {"kubectl-etcd"};
		int argc = 1, rc;
		struct eo_plugin_args a;
		char err[256];

		while (c->argv[argc - 1]) {
			argv[argc] = (char *)c->argv[argc - 1];
			argc++;
		}
		rc = eo_plugin_parse_args(argc, argv, &a, err, sizeof(err));
		if (rc != c->rc)
			fail_msg("case %zu: rc %d, want %d (%s)", i, rc, c->rc, err);
		if (rc != 0) {
			if (!strstr(err, c->err_has))
				fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, err, c->err_has);
			continue;
		}
		assert_int_equal(a.cmd, c->cmd);
		assert_int_equal(a.help, c->help);
		assert_int_equal(a.version, c->version);
		assert_int_equal(a.format, c->fmt);
		assert_int_equal(a.revision, c->revision);
#define STR_EQ(got, want)                                                                          \
	do {                                                                                       \
		if ((want) == NULL)                                                                \
			assert_null(got);                                                          \
		else                                                                               \
			assert_string_equal(got, want);                                            \
	} while (0)
		STR_EQ(a.cluster, c->cluster);
		STR_EQ(a.ns, c->ns);
		STR_EQ(a.member, c->member);
		STR_EQ(a.path, c->path);
		STR_EQ(a.remove_name, c->remove);
	}
}

static void test_help_per_command(void **state)
{
	(void)state;
	assert_non_null(strstr(eo_plugin_help(EO_PCMD_MEMBERS), "kubectl etcd members"));
	assert_non_null(strstr(eo_plugin_help(EO_PCMD_SNAPSHOT), "integrity"));
	assert_non_null(strstr(eo_plugin_help(EO_PCMD_NONE), "Exit codes"));
	assert_string_equal(eo_plugin_cmd_name(EO_PCMD_ALARM_DISARM), "alarm disarm");
}

/* ---- rendering ---------------------------------------------------------------------- */

static char *render(int (*fn)(const json_t *, struct eo_strbuf *), const char *doc)
{
	json_t *j = json_loads(doc, 0, NULL);
	struct eo_strbuf b = EO_STRBUF_INIT(1 << 20);
	char *s;

	assert_non_null(j);
	assert_int_equal(fn(j, &b), 0);
	json_decref(j);
	s = eo_strbuf_take(&b, NULL);
	assert_non_null(s);
	return s;
}

static void test_table(void **state)
{
	static const struct eo_plugin_col cols[] = {{"NAME", "name"}, {"OK", "ok"}, {"URLS", "u"}};
	json_t *rows = json_loads("[{\"name\":\"a-long-name\",\"ok\":true,\"u\":[\"x\",\"y\"]},"
				  "{\"name\":\"b\",\"ok\":false}]",
				  0, NULL);
	struct eo_strbuf b = EO_STRBUF_INIT(4096);
	char *s;

	(void)state;
	assert_int_equal(eo_plugin_render_table(rows, cols, 3, &b), 0);
	s = eo_strbuf_take(&b, NULL);
	assert_string_equal(s, "NAME          OK      URLS\n"
			       "a-long-name   true    x,y\n"
			       "b             false   -\n");
	free(s);
	/* no rows: the header alone; not an array: refused */
	json_decref(rows);
	rows = json_array();
	assert_int_equal(eo_plugin_render_table(rows, cols, 1, &b), 0);
	s = eo_strbuf_take(&b, NULL);
	assert_string_equal(s, "NAME\n");
	free(s);
	assert_int_equal(eo_plugin_render_table(json_object_get(rows, "x"), cols, 1, &b), -1);
	json_decref(rows);
}

static void test_yaml_and_json(void **state)
{
	static const struct {
		const char *doc, *yaml;
	} cases[] = {
	    {"{\"a\":1,\"b\":\"x\"}", "a: 1\nb: x\n"},
	    {"{\"s\":\"true\",\"n\":\"123\",\"e\":\"\",\"z\":null,\"t\":false}",
	     "s: \"true\"\n\"n\": \"123\"\ne: \"\"\nz: null\nt: false\n"},
	    {"{\"l\":[{\"k\":\"v\"}],\"m\":[]}", "l:\n- k: v\nm: []\n"},
	    {"{\"colon\":\"a: b\"}", "colon: 'a: b'\n"},
	};
	size_t i;
	char *s;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = render(eo_plugin_render_yaml, cases[i].doc);
		if (strcmp(s, cases[i].yaml) != 0)
			fail_msg("yaml case %zu:\n%s\nwant:\n%s", i, s, cases[i].yaml);
		free(s);
	}
	s = render(eo_plugin_render_json, "{\"b\":1,\"a\":[true]}");
	assert_string_equal(s, "{\n  \"b\": 1,\n  \"a\": [\n    true\n  ]\n}\n");
	free(s);
}

static void test_bytes(void **state)
{
	static const struct {
		int64_t n;
		const char *s;
	} cases[] = {{0, "0 B"},
		     {999, "999 B"},
		     {20480, "20 kB"},
		     {1500000, "1.5 MB"},
		     {2147483648, "2.1 GB"}};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(eo_plugin_bytes(cases[i].n, buf, sizeof(buf)), cases[i].s);
}

/* ---- decisions ---------------------------------------------------------------------- */

#define MEMBER(name, ts, voter)                                                                    \
	"{\"metadata\":{\"name\":\"" name "\",\"creationTimestamp\":\"" ts "\"},"                  \
	"\"spec\":{\"initialCluster\":\"x=http://x:2380\"},\"status\":{\"isVoter\":" voter "}}"
#define POD(name, phase, ready)                                                                    \
	"{\"metadata\":{\"name\":\"" name "\"},\"status\":{\"phase\":\"" phase "\","               \
	"\"conditions\":[{\"type\":\"Ready\",\"status\":\"" ready "\"}]}}"

static json_t *members3(void)
{
	return json_loads("{\"items\":[" MEMBER("c-b", "2024-01-01T00:00:02Z", "true") "," MEMBER(
			      "c-a", "2024-01-01T00:00:01Z",
			      "true") "," MEMBER("c-c", "2024-01-01T00:00:03Z", "true") "]}",
			  0, NULL);
}

static json_t *pods3(const char *c_ready)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{\"items\":[" POD("c-a", "Running", "True") "," POD(
		     "c-b", "Pending", "False") ","
						"{\"metadata\":{\"name\":\"c-c\"},\"status\":"
						"{\"phase\":\"Running\",\"conditions\":[{"
						"\"type\":\"Ready\",\"status\":\"%s\"}]}}]}",
		 c_ready);
	return json_loads(buf, 0, NULL);
}

static void test_targets_and_order(void **state)
{
	json_t *m = members3(), *p = pods3("False");
	struct eo_plugin_target t[8];
	size_t order[8], n;
	int k;

	(void)state;
	k = eo_plugin_targets(m, p, t, 8);
	assert_int_equal(k, 3);
	assert_string_equal(t[0].name, "c-a");
	assert_true(t[0].running && t[0].ready && t[0].voter);
	assert_false(t[1].running); /* c-b Pending */
	assert_true(t[2].running && !t[2].ready);
	/* ready voters first, then running not-ready voters; no Pod running: left out */
	n = eo_plugin_query_order(t, 3, order);
	assert_int_equal(n, 2);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 2);
	assert_int_equal(eo_plugin_target_find(t, 3, "c-c"), 2);
	assert_int_equal(eo_plugin_target_find(t, 3, "c-z"), -1);
	json_decref(m);
	m = json_object();
	assert_int_equal(eo_plugin_targets(m, p, t, 8), -1);
	json_decref(m);
	json_decref(p);
}

static void test_paused_and_defrag_order(void **state)
{
	json_t *c = json_loads("{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\"},"
			       "\"spec\":{\"replicas\":0}}",
			       0, NULL);
	char msg[512];
	size_t order[4];

	(void)state;
	assert_non_null(eo_plugin_paused(c, msg, sizeof(msg)));
	assert_non_null(strstr(msg, "paused"));
	json_object_set_new(json_object_get(c, "spec"), "replicas", json_integer(3));
	assert_null(eo_plugin_paused(c, msg, sizeof(msg)));
	json_decref(c);

	eo_plugin_defrag_order(4, 1, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 2);
	assert_int_equal(order[2], 3);
	assert_int_equal(order[3], 1);
	eo_plugin_defrag_order(2, -1, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
}

static void test_forfeit_target(void **state)
{
	struct eo_etcd_member v[3] = {{.id = 1, .name = "a"},
				      {.id = 2, .name = "b", .is_learner = true},
				      {.id = 3, .name = "c"}};
	struct eo_etcd_members ms = {.v = v, .n = 3};
	const char *running_ac[] = {"a", "c"}, *running_a[] = {"a"};
	static const struct {
		uint64_t leader;
		const char *to;
		int nrun; /* 2: a,c  1: a only */
		int rc;
		uint64_t target;
		const char *msg;
	} cases[] = {
	    {1, NULL, 2, 0, 3, NULL},	     {3, NULL, 2, 0, 1, NULL},
	    {1, NULL, 1, -1, 0, "no other"}, {0, NULL, 2, -1, 0, "no leader"},
	    {1, "c", 2, 0, 3, NULL},	     {1, "a", 2, -1, 0, "already the leader"},
	    {1, "b", 2, -1, 0, "learner"},   {1, "zz", 2, -2, 0, "not a started member"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t target = 99;
		char msg[256] = "";
		int rc = eo_plugin_forfeit_target(&ms, cases[i].leader, cases[i].to,
						  cases[i].nrun == 2 ? running_ac : running_a,
						  (size_t)cases[i].nrun, &target, msg, sizeof(msg));

		if (rc != cases[i].rc || (rc == 0 && target != cases[i].target))
			fail_msg("case %zu: rc %d target %llu (%s)", i, rc,
				 (unsigned long long)target, msg);
		if (cases[i].msg && !strstr(msg, cases[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, msg, cases[i].msg);
	}
}

static void test_scale_decide(void **state)
{
	static const struct {
		const char *cluster_extra; /* spec/status */
		const char *remove;
		const char *c_ready;
		enum eo_plugin_scale want;
		int64_t replicas_to;
		const char *msg;
	} cases[] = {
	    {"\"spec\":{\"replicas\":3},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     NULL, "True", EO_PSCALE_PATCH, 4, "raised from 3 to 4"},
	    {"\"spec\":{\"replicas\":0},\"status\":{\"observed\":{\"replicas\":0}}", NULL, "True",
	     EO_PSCALE_PAUSED, 0, "paused"},
	    {"\"spec\":{\"replicas\":4},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     NULL, "True", EO_PSCALE_IN_FLIGHT, 0, "still working"},
	    {"\"spec\":{\"replicas\":4},\"status\":{\"observed\":{\"replicas\":4},"
	     "\"readyMembers\":3}",
	     NULL, "True", EO_PSCALE_IN_FLIGHT, 0, "3 ready"},
	    {"\"spec\":{\"replicas\":3},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     "c-zz", "True", EO_PSCALE_NOT_FOUND, 0, "not a member"},
	    /* c-b's Pod is not ready: the operator would remove c-b first */
	    {"\"spec\":{\"replicas\":3},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     "c-c", "True", EO_PSCALE_NOT_VICTIM, 0, "would remove c-b, not c-c"},
	    /* c-b and c-c not ready: c-c (newest) is the pick, and only c-a is left ready */
	    {"\"spec\":{\"replicas\":3},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     "c-c", "False", EO_PSCALE_NO_QUORUM, 0, "quorum"},
	    {"\"spec\":{\"replicas\":3},\"status\":{\"observed\":{\"replicas\":3},"
	     "\"readyMembers\":3}",
	     "c-b", "True", EO_PSCALE_PATCH, 2, "lowered from 3 to 2"},
	    {"\"spec\":{\"replicas\":1},\"status\":{\"observed\":{\"replicas\":1},"
	     "\"readyMembers\":1}",
	     "c-a", "True", EO_PSCALE_LAST, 0, "last member"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[1024], msg[1024] = "";
		json_t *cluster, *m = members3(), *p = pods3(cases[i].c_ready), *patch = NULL;
		struct eo_plugin_target t[8];
		struct eo_plan_member pm[8];
		enum eo_plugin_scale got;
		int n, k;

		snprintf(buf, sizeof(buf),
			 "{\"metadata\":{\"name\":\"c\",\"namespace\":\"n\",\"resourceVersion\":"
			 "\"7\"},%s}",
			 cases[i].cluster_extra);
		cluster = json_loads(buf, 0, NULL);
		assert_non_null(cluster);
		n = eo_plugin_targets(m, p, t, 8);
		for (k = 0; k < n; k++) {
			pm[k].member = t[k].member;
			pm[k].pod = t[k].pod;
			pm[k].pvc = NULL;
		}
		got = eo_plugin_scale_decide(cluster, pm, (size_t)n, cases[i].remove, &patch, msg,
					     sizeof(msg));
		if (got != cases[i].want || !strstr(msg, cases[i].msg))
			fail_msg("case %zu: got %d (%s)", i, got, msg);
		if (got == EO_PSCALE_PATCH) {
			assert_int_equal(json_integer_value(json_object_get(
					     json_object_get(patch, "spec"), "replicas")),
					 cases[i].replicas_to);
			assert_string_equal(
			    json_string_value(json_object_get(json_object_get(patch, "metadata"),
							      "resourceVersion")),
			    "7");
			assert_int_equal(eo_plugin_scale_exit(got), EO_PEXIT_OK);
		} else {
			assert_null(patch);
			assert_int_equal(eo_plugin_scale_exit(got), got == EO_PSCALE_NOT_FOUND
									? EO_PEXIT_NOTFOUND
									: EO_PEXIT_REFUSED);
		}
		json_decref(patch);
		json_decref(cluster);
		json_decref(m);
		json_decref(p);
	}
}

static void test_failures(void **state)
{
	static const struct {
		eo_kube_err e;
		long status;
		const char *body;
		const char *kmsg;
		bool tunnel, refused;
		const char *farside;
		enum eo_plugin_exit want;
		bool said;
		const char *has;
	} cases[] = {
	    {EO_KUBE_EFORBIDDEN, 403,
	     "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":"
	     "\"Forbidden\",\"code\":403}",
	     "pods \"m\" is forbidden: User \"u\" cannot create resource \"pods/proxy\"", false,
	     false, NULL, EO_PEXIT_FORBIDDEN, false,
	     "may not create pods/proxy (Pod m) in namespace ns"},
	    {EO_KUBE_EUNAVAILABLE, 503, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"code\":503}",
	     "error trying to reach service: dial tcp 10.0.0.1:2379: connect: connection refused",
	     false, false, NULL, EO_PEXIT_FAILED, false, "member m unreachable"},
	    {EO_KUBE_ENOTFOUND, 404, "{\"kind\":\"Status\",\"code\":404}", "pods \"m\" not found",
	     false, false, NULL, EO_PEXIT_FAILED, false, "has no Pod"},
	    {EO_KUBE_EUNAVAILABLE, 503,
	     "{\"error\":\"etcdserver: no leader\",\"code\":14,\"message\":\"etcdserver: no "
	     "leader\"}",
	     "", false, false, NULL, EO_PEXIT_FAILED, true,
	     "etcd refused /v3/x: etcdserver: no leader"},
	    /* etcd's own 401 (a bad token) is etcd's answer, not the apiserver's. */
	    {EO_KUBE_EUNAUTHORIZED, 401,
	     "{\"error\":\"etcdserver: invalid auth token\",\"code\":16,\"message\":"
	     "\"etcdserver: invalid auth token\"}",
	     "", false, false, NULL, EO_PEXIT_FAILED, true, "invalid auth token"},
	    {EO_KUBE_ETIMEOUT, 0, "", "Operation timed out", false, false, NULL, EO_PEXIT_FAILED,
	     false, "unreachable through the apiserver's pods/proxy"},
	    /* The tunnel: the apiserver's refusal of the upgrade, the node's word, etcd's. */
	    {EO_KUBE_EFORBIDDEN, 403, "", "cannot get resource \"pods/portforward\"", true, true,
	     NULL, EO_PEXIT_FORBIDDEN, false, "may not get pods/portforward (Pod m)"},
	    {EO_KUBE_ENOTFOUND, 404, "", "pods \"m\" not found", true, true, NULL, EO_PEXIT_FAILED,
	     false, "has no Pod"},
	    {EO_KUBE_ETRANSPORT, 0, "", "Recv failure: Connection reset by peer", true, false,
	     "error forwarding port 2379 to pod x: connection refused", EO_PEXIT_FAILED, false,
	     "the node said: error forwarding port 2379"},
	    {EO_KUBE_EHTTP, 400,
	     "{\"error\":\"etcdserver: mvcc: required revision has been compacted\",\"code\":11,"
	     "\"message\":\"mvcc: required revision has been compacted\"}",
	     "HTTP 400", true, false, NULL, EO_PEXIT_FAILED, true, "required revision"},
	};
	size_t i;
	char msg[1024];
	struct eo_kube_error ke;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum eo_plugin_exit x;

		memset(&ke, 0, sizeof(ke));
		snprintf(ke.message, sizeof(ke.message), "%s", cases[i].kmsg);
		struct eo_plugin_call_failure f = {cases[i].e,
						   &ke,
						   cases[i].status,
						   cases[i].body,
						   strlen(cases[i].body),
						   cases[i].tunnel,
						   cases[i].refused,
						   cases[i].farside};
		bool said = true;

		x = eo_plugin_call_failure(&f, "m", "ns", "/v3/x", &said, msg, sizeof(msg));
		if (x != cases[i].want || !strstr(msg, cases[i].has) || said != cases[i].said)
			fail_msg("case %zu: exit %d said %d: %s", i, x, said, msg);
	}
	memset(&ke, 0, sizeof(ke));
	assert_int_equal(eo_plugin_kube_failure(EO_KUBE_EFORBIDDEN, &ke, "patch",
						"etcdclusters.x \"c\"", "ns", msg, sizeof(msg)),
			 EO_PEXIT_FORBIDDEN);
	assert_non_null(strstr(msg, "grants verb \"patch\""));
	assert_int_equal(
	    eo_plugin_kube_failure(EO_KUBE_ENOTFOUND, &ke, "get", "x", "ns", msg, sizeof(msg)),
	    EO_PEXIT_NOTFOUND);
	assert_int_equal(
	    eo_plugin_kube_failure(EO_KUBE_EUNAUTHORIZED, &ke, "get", "x", "ns", msg, sizeof(msg)),
	    EO_PEXIT_FORBIDDEN);
}

static void test_gateway_bodies(void **state)
{
	json_t *alarms = NULL;
	char err[256], *s, hex[32];
	static const char body[] = "{\"header\":{},\"alarms\":[{\"memberID\":\"12345\",\"alarm\":"
				   "\"NOSPACE\"},{\"memberID\":\"7\",\"alarm\":2}]}";

	(void)state;
	assert_int_equal(eo_plugin_parse_alarms(body, strlen(body), &alarms, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(alarms), 2);
	assert_int_equal(eo_plugin_alarm_member(json_array_get(alarms, 0)), 12345);
	assert_string_equal(json_string_value(json_object_get(json_array_get(alarms, 1), "alarm")),
			    "CORRUPT");
	json_decref(alarms);
	assert_int_equal(eo_plugin_parse_alarms("{\"header\":{}}", 13, &alarms, err, sizeof(err)),
			 0);
	assert_int_equal(json_array_size(alarms), 0);
	json_decref(alarms);
	assert_int_equal(eo_plugin_parse_alarms("{\"alarms\":[{\"alarm\":\"NOSPACE\"}]}", 33,
						&alarms, err, sizeof(err)),
			 -1);
	assert_null(alarms);
	assert_int_equal(eo_plugin_parse_alarms("[]", 2, &alarms, err, sizeof(err)), -1);

	s = eo_etcd_wire_req_move_leader(42);
	assert_string_equal(s, "{\"targetID\":\"42\"}");
	free(s);
	s = eo_plugin_parse_token("{\"header\":{},\"token\":\"abc.42\"}", 30, 64);
	assert_string_equal(s, "abc.42");
	free(s);
	assert_null(eo_plugin_parse_token("{\"token\":\"abc.42\"}", 18, 3)); /* over max */
	assert_null(eo_plugin_parse_token("{\"token\":\"a\\r\\nX: y\"}", 21, 64));
	assert_null(eo_plugin_parse_token("{\"token\":\"\"}", 12, 64));
	assert_null(eo_plugin_parse_token("{\"header\":{}}", 13, 64));
	assert_null(eo_plugin_parse_token("nope", 4, 64));
	assert_string_equal(eo_plugin_id_hex(0x1e899fd58babc8dfull, hex, sizeof(hex)),
			    "1e899fd58babc8df");
}

/* ---- reach: the Pod proxy and auth against a fake apiserver ----------------------------- */

struct fakeapi {
	int auth_calls, status_calls, secret_gets;
	char last_path[256];
	char token_seen[64];
	char password_seen[64];
};

static void api_handler(void *ud, const struct eo_kube_fake_request *rq,
			struct eo_kube_fake_response *rs)
{
	struct fakeapi *f = ud;
	const char *tok = eo_kube_fake_header(rq, "Grpc-Metadata-Token");

	snprintf(f->last_path, sizeof(f->last_path), "%s", rq->path);
	if (strcmp(rq->method, "GET") == 0 &&
	    strcmp(rq->path, "/api/v1/namespaces/ns/secrets/root-creds") == 0) {
		f->secret_gets++;
		/* base64("s3cret") */
		rs->body = strdup("{\"kind\":\"Secret\",\"data\":{\"username\":\"cm9vdA==\","
				  "\"password\":\"czNjcmV0\"}}");
		return;
	}
	if (strstr(rq->path, "/proxy/v3/auth/authenticate")) {
		json_t *b = json_loads(rq->body, 0, NULL);

		f->auth_calls++;
		snprintf(f->password_seen, sizeof(f->password_seen), "%s",
			 json_string_value(json_object_get(b, "password")));
		json_decref(b);
		rs->body = strdup("{\"header\":{},\"token\":\"tok.7\"}");
		return;
	}
	if (strstr(rq->path, "/proxy/v3/maintenance/status")) {
		f->status_calls++;
		snprintf(f->token_seen, sizeof(f->token_seen), "%s", tok ? tok : "");
		if (!tok) {
			rs->status = 400;
			rs->body =
			    strdup("{\"error\":\"etcdserver: user name is empty\",\"code\":3,"
				   "\"message\":\"etcdserver: user name is empty\"}");
			return;
		}
		rs->body = strdup("{\"header\":{\"member_id\":\"1\"},\"version\":\"3.6.11\"}");
		return;
	}
	rs->status = 404;
	rs->body = tu_status_body(404, "NotFound", "not found");
}

static int sink_count(void *ud, const char *p, size_t n)
{
	(void)p;
	*(size_t *)ud += n;
	return 0;
}

static void test_reach_proxy_and_auth(void **state)
{
	struct fakeapi f = {0};
	eo_kube_fake *fake = eo_kube_fake_start(api_handler, &f);
	eo_kube_config *cfg = NULL;
	eo_kube_client *kc = NULL;
	struct eo_plugin_reach r;
	struct eo_plugin_answer ans;
	char msg[512] = "";
	size_t got = 0;
	json_t *plain =
	    json_loads("{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{}}", 0, NULL);
	json_t *authed = json_loads(
	    "{\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{\"tls\":{\"client\":"
	    "{\"serverSecretRef\":{\"name\":\"srv\"}}},\"auth\":{\"enabled\":true,"
	    "\"rootCredentialsSecretRef\":{\"name\":\"root-creds\"}}}}",
	    0, NULL);

	(void)state;
	assert_non_null(fake);
	assert_int_equal(eo_kube_config_new(eo_kube_fake_url(fake), "t", "ns", &cfg, NULL),
			 EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &kc, NULL), EO_KUBE_OK);

	/* Plaintext: the Pod proxy over http, no Secret read, no token. */
	assert_int_equal(eo_plugin_reach_open(&r, kc, plain, "ns", msg, sizeof(msg)), 0);
	assert_int_equal(r.path, EO_PPATH_PROXY);
	assert_null(r.password);
	assert_int_equal(eo_plugin_reach_login(&r, "c-a", NULL, 5000, &ans), EO_KUBE_OK);
	assert_int_equal(f.auth_calls, 0);
	assert_int_not_equal(eo_plugin_reach_post(&r, "c-a", NULL, "/v3/maintenance/status", "{}",
						  5000, 0, sink_count, &got, &ans),
			     EO_KUBE_OK);
	assert_int_equal(ans.res.http_status, 400); /* etcd's refusal passed on */
	assert_non_null(strstr(ans.res.errbody, "user name is empty"));
	assert_string_equal(f.last_path,
			    "/api/v1/namespaces/ns/pods/c-a:2379/proxy/v3/maintenance/status");
	eo_plugin_reach_close(&r);

	/* Server TLS and auth: https through the proxy, the token on every call. */
	assert_int_equal(eo_plugin_reach_open(&r, kc, authed, "ns", msg, sizeof(msg)), 0);
	assert_int_equal(r.path, EO_PPATH_PROXY_TLS);
	assert_int_equal(f.secret_gets, 1);
	assert_int_equal(eo_plugin_reach_login(&r, "c-a", NULL, 5000, &ans), EO_KUBE_OK);
	assert_int_equal(f.auth_calls, 1);
	assert_string_equal(f.password_seen, "s3cret");
	assert_string_equal(f.last_path,
			    "/api/v1/namespaces/ns/pods/https:c-a:2379/proxy/v3/auth/authenticate");
	got = 0;
	assert_int_equal(eo_plugin_reach_post(&r, "c-b", NULL, "/v3/maintenance/status", "{}", 5000,
					      0, sink_count, &got, &ans),
			 EO_KUBE_OK);
	assert_string_equal(f.token_seen, "tok.7");
	assert_true(got > 0);
	eo_plugin_reach_close(&r);
	assert_null(r.token);

	/* A missing Secret is an exit code naming it. */
	json_object_set_new(json_object_get(json_object_get(authed, "spec"), "auth"),
			    "rootCredentialsSecretRef", json_pack("{s:s}", "name", "nope"));
	assert_int_equal(eo_plugin_reach_open(&r, kc, authed, "ns", msg, sizeof(msg)),
			 EO_PEXIT_NOTFOUND);
	assert_non_null(strstr(msg, "secrets \"nope\""));
	eo_plugin_reach_close(&r);

	json_decref(plain);
	json_decref(authed);
	eo_kube_client_free(kc);
	eo_kube_fake_stop(fake);
}

static void test_member_host_and_path(void **state)
{
	json_t *pod = json_loads(
	    "{\"spec\":{\"containers\":[{\"name\":\"etcd\",\"command\":[\"etcd\","
	    "\"--name=c-a\",\"--advertise-client-urls=https://c-a.c.ns.svc.k8s.example:2379\"]}]}}",
	    0, NULL);
	json_t *bare = json_loads("{\"spec\":{\"containers\":[{\"args\":[\"--x=1\"]}]}}", 0, NULL);
	static const struct {
		const char *spec;
		enum eo_plugin_path want;
	} cases[] = {
	    {"{}", EO_PPATH_PROXY},
	    {"{\"tls\":{\"client\":{\"serverSecretRef\":{\"name\":\"s\"}}}}", EO_PPATH_PROXY_TLS},
	    {"{\"tls\":{\"client\":{\"serverSecretRef\":{\"name\":\"s\"},"
	     "\"operatorClientSecretRef\":{\"name\":\"o\"}}}}",
	     EO_PPATH_TUNNEL},
	    {"{\"tls\":{\"client\":{\"certManager\":{\"serverIssuerRef\":{\"name\":\"i\"}}}}}",
	     EO_PPATH_PROXY_TLS},
	    {"{\"tls\":{\"client\":{\"certManager\":{\"serverIssuerRef\":{\"name\":\"i\"},"
	     "\"operatorClientIssuerRef\":{\"name\":\"i\"}}}}}",
	     EO_PPATH_TUNNEL},
	};
	char host[64];
	size_t i;

	(void)state;
	assert_int_equal(eo_plugin_member_host(pod, "c-a", "c", "ns", host, sizeof(host)), 0);
	assert_string_equal(host, "c-a.c.ns.svc.k8s.example");
	assert_int_equal(eo_plugin_member_host(bare, "c-a", "c", "ns", host, sizeof(host)), 0);
	assert_string_equal(host, "c-a.c.ns.svc");
	assert_int_equal(eo_plugin_member_host(NULL, "c-a", "c", "ns", host, sizeof(host)), 0);
	assert_string_equal(host, "c-a.c.ns.svc");
	assert_int_equal(eo_plugin_member_host(bare, "c-a", "c", "ns", host, 8), -1);
	json_decref(pod);
	json_decref(bare);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = json_pack("{s:{s:s,s:s},s:o}", "metadata", "name", "c", "namespace",
				      "ns", "spec", json_loads(cases[i].spec, 0, NULL));

		if (eo_plugin_path_of(c) != cases[i].want)
			fail_msg("case %zu: path %d", i, eo_plugin_path_of(c));
		json_decref(c);
	}
	assert_string_equal(eo_plugin_path_subresource(EO_PPATH_TUNNEL), "pods/portforward");
	assert_string_equal(eo_plugin_path_subresource(EO_PPATH_PROXY_TLS), "pods/proxy");
}

/* ---- completion ------------------------------------------------------------------- */

/* Completes the words of line (space-separated; a trailing space means an empty last word) and
 * returns the candidates joined by ',' with the flags: +clusters, :directive, ns=. */
static const char *completes(const char *line)
{
	static char out[512];
	char buf[256], *words[16], *save = NULL, *w;
	struct eo_plugin_completion c;
	size_t n = 0, len;

	snprintf(buf, sizeof(buf), "%s", line);
	for (w = strtok_r(buf, " ", &save); w && n < 15; w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	len = strlen(line);
	if (len == 0 || line[len - 1] == ' ')
		words[n++] = (char *)"";
	eo_plugin_complete((const char *const *)words, n, &c);
	out[0] = '\0';
	for (size_t i = 0; i < c.n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "",
			 c.cand[i]);
	snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s:%d%s%s",
		 c.clusters ? "+clusters" : "", c.directive, c.ns ? " ns=" : "", c.ns ? c.ns : "");
	return out;
}

static void test_completion(void **state)
{
	(void)state;
	assert_string_equal(completes(""), "members,status,defrag,compact,alarm,forfeit-leadership,"
					   "snapshot,add-member,remove-member,report,version,"
					   "completion:4");
	assert_string_equal(completes("s"), "status,snapshot:4");
	assert_string_equal(completes("alarm "), "list,disarm:4");
	assert_string_equal(completes("alarm list "), "+clusters:4");
	assert_string_equal(completes("status "), "+clusters:4");
	assert_string_equal(completes("status -n prod k"), "+clusters:4 ns=prod");
	assert_string_equal(completes("status --namespace=x "), "+clusters:4 ns=x");
	assert_string_equal(completes("status demo --mem"), "--member:4");
	assert_string_equal(completes("status demo -o "), "table,json,yaml:4");
	assert_string_equal(completes("status demo -o j"), "json:4");
	assert_string_equal(completes("members -c "), "+clusters:4");
	assert_string_equal(completes("snapshot demo "), ":0");
	assert_string_equal(completes("snapshot -c demo "), ":0");
	assert_string_equal(completes("snapshot demo /tmp/x "), ":4");
	assert_string_equal(completes("status --kubeconfig "), ":0");
	assert_string_equal(completes("completion "), "bash,zsh:4");
	assert_string_equal(completes("version "), ":4");
	assert_non_null(strstr(eo_plugin_completion_script("bash"), "complete -F _kubectl_etcd"));
	assert_non_null(strstr(eo_plugin_completion_script("zsh"), "#compdef kubectl-etcd"));
	assert_null(eo_plugin_completion_script("fish"));
	assert_null(eo_plugin_completion_script(NULL));
}

static void test_progress_line(void **state)
{
	char line[128];

	(void)state;
	assert_string_equal(eo_plugin_progress("demo-abcde", 12500000, 2500, line, sizeof(line)),
			    "snapshot of demo-abcde: 12 MB, 5.0 MB/s");
	assert_string_equal(eo_plugin_progress("m", 900, 0, line, sizeof(line)),
			    "snapshot of m: 900 B, -");
	assert_string_equal(eo_plugin_progress("m", 2048, 2000, line, sizeof(line)),
			    "snapshot of m: 2.0 kB, 1.0 kB/s");
}

/* ---- report ------------------------------------------------------------------------ */

static void test_report_filters(void **state)
{
	const char *l1 = "ts=1 level=info msg=\"member added\" cluster=prod/demo member=demo-x";
	const char *l2 = "ts=1 level=info msg=x cluster=prod/demo2";
	const char *l3 = "ts=1 level=info msg=x cluster=prod/demo";
	const char *l4 = "ts=1 level=info msg=\"cluster=prod/demo\" cluster=prod/other";
	json_t *ev = tu_jsonq("{'involvedObject':{'name':'demo-abcde'}}");
	json_t *ev2 = tu_jsonq("{'involvedObject':{'name':'demox'}}");
	json_t *ev3 = tu_jsonq("{'involvedObject':{'name':'demo'}}");
	json_t *pods = tu_jsonq(
	    "{'items':[{'metadata':{'name':'p','managedFields':[{}]},'spec':{'containers':[{'env':["
	    "{'name':'A','value':'hunter2'},{'name':'B','valueFrom':{'fieldRef':{}}}]}],"
	    "'initContainers':[{'env':[{'name':'C','value':'x'}]}]}}]}");
	char name[128], *dump;

	(void)state;
	assert_true(eo_plugin_log_line_matches(l1, strlen(l1), "prod", "demo"));
	assert_false(eo_plugin_log_line_matches(l2, strlen(l2), "prod", "demo"));
	assert_true(eo_plugin_log_line_matches(l3, strlen(l3), "prod", "demo"));
	assert_false(eo_plugin_log_line_matches(l3, strlen(l3), "dev", "demo"));
	assert_false(eo_plugin_log_line_matches(l4, strlen(l4), "prod", "demo"));
	assert_true(eo_plugin_event_matches(ev, "demo"));
	assert_false(eo_plugin_event_matches(ev2, "demo"));
	assert_true(eo_plugin_event_matches(ev3, "demo"));
	eo_plugin_report_scrub(pods);
	dump = json_dumps(pods, JSON_COMPACT);
	assert_null(strstr(dump, "hunter2"));
	assert_null(strstr(dump, "managedFields"));
	assert_non_null(strstr(dump, "\"valueFrom\""));
	assert_non_null(strstr(dump, "\"value\":\"(left out)\""));
	free(dump);
	eo_plugin_report_name("prod", "demo", 1795780800, name, sizeof(name));
	assert_string_equal(name, "etcd-report-prod-demo-20261127T120000Z.tar.gz");
	json_decref(ev);
	json_decref(ev2);
	json_decref(ev3);
	json_decref(pods);
}

static void test_report_summary(void **state)
{
	json_t *cl = tu_jsonq(
	    "{'metadata':{'name':'demo','namespace':'prod','generation':3},'spec':{'replicas':3},"
	    "'status':{'observedGeneration':3,'readyMembers':2,'conditions':[{'type':'Available',"
	    "'status':'True','reason':'QuorumAvailable','lastTransitionTime':'2026-01-01T00:00:00Z'"
	    ","
	    "'message':'2 of 3'}]}}");
	json_t *ms =
	    tu_jsonq("{'items':[{'metadata':{'name':'demo-a'},'status':{'memberID':'1f',"
		     "'conditions':[{'type':'Ready','status':'False','reason':'PodNotReady',"
		     "'message':'m'}]}}]}");
	struct eo_strbuf b = EO_STRBUF_INIT(1 << 16);
	char *s;

	(void)state;
	eo_plugin_report_summary(cl, ms, "  events: forbidden\n", &b);
	s = eo_strbuf_take(&b, NULL);
	assert_non_null(s);
	assert_non_null(strstr(s, "EtcdCluster prod/demo (generation 3, observed 3)\n"));
	assert_non_null(strstr(s, "ready members: 2 of 3\n"));
	assert_non_null(strstr(s, "  Available=True reason=QuorumAvailable since "
				  "2026-01-01T00:00:00Z: 2 of 3\n"));
	assert_non_null(strstr(s, "  demo-a memberID=1f\n    Ready=False reason=PodNotReady: m\n"));
	assert_non_null(strstr(s, "not collected:\n  events: forbidden\n"));
	free(s);
	json_decref(cl);
	json_decref(ms);
}

/* The archive is one tar.gz that tar(1) reads back. */
static void test_report_archive(void **state)
{
	char dir[] = "/tmp/eo-report-XXXXXX", path[128], cmd[512], err[256], big[1500];
	struct eo_plugin_tar *t;
	FILE *p;
	char out[256] = "";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.tar.gz", dir);
	memset(big, 'x', sizeof(big));
	t = eo_plugin_tar_open(path, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(
	    eo_plugin_tar_add(t, "summary.txt", "hello\n", 6, 1795780800, err, sizeof(err)), 0);
	assert_int_equal(
	    eo_plugin_tar_add(t, "big.log", big, sizeof(big), 1795780800, err, sizeof(err)), 0);
	assert_int_equal(eo_plugin_tar_add(t, "empty.json", "", 0, 1795780800, err, sizeof(err)),
			 0);
	assert_int_equal(eo_plugin_tar_close(t, false, err, sizeof(err)), 0);
	/* An existing file is not overwritten. */
	assert_null(eo_plugin_tar_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "File exists"));

	snprintf(cmd, sizeof(cmd),
		 "cd %s && tar -xzf r.tar.gz && cat summary.txt && wc -c < big.log && "
		 "wc -c < empty.json && tar -tzvf r.tar.gz | awk '{print $1}' | sort -u",
		 dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_int_equal(fread(out, 1, sizeof(out) - 1, p) > 0, 1);
	assert_int_equal(pclose(p), 0);
	assert_string_equal(out, "hello\n1500\n0\n-rw-r--r--\n");

	/* Abandoned: the file is gone. */
	snprintf(path, sizeof(path), "%s/gone.tar.gz", dir);
	t = eo_plugin_tar_open(path, err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(eo_plugin_tar_close(t, true, err, sizeof(err)), -1);
	assert_int_not_equal(access(path, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

TU_MAIN(test_args_table, test_completion, test_progress_line, test_report_filters,
	test_report_summary, test_report_archive, test_help_per_command, test_table,
	test_yaml_and_json, test_bytes, test_targets_and_order, test_paused_and_defrag_order,
	test_forfeit_target, test_scale_decide, test_failures, test_gateway_bodies,
	test_member_host_and_path, test_reach_proxy_and_auth)
