/*
 * Unit tests for controller/config (the operator's flags): defaults, flag syntax (Go flag
 * package forms), booleans, environment fallbacks, validation errors, and cluster-domain
 * discovery from resolv.conf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/config.h"
#include "support/testutil.h"

#define MAX_ARGS 16

/* Environment as a NULL-terminated list of name, value pairs. */
static const char *table_env(void *ud, const char *name)
{
	const char *const *kv = ud;

	for (; kv && kv[0]; kv += 2) {
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	}
	return NULL;
}

static const char *const BASE_ENV[] = {"OPERATOR_IMAGE", "ghcr.io/cozystack/etcd-operator:v0.5.0",
				       NULL};

static char resolv_path[64];

/* Parses argv (NULL-terminated, without argv[0]) against env and the temporary resolv.conf. */
static enum eo_flags_status parse(const char *const *args, const char *const *env,
				  struct eo_config *cfg, char *err, size_t errcap)
{
	char *argv[MAX_ARGS + 1];
	struct eo_flags_env fe = {
	    .getenv = table_env, .ud = (void *)env, .resolv_conf = resolv_path};
	int argc = 0;

	argv[argc++] = "etcd-operator";
	for (; args && *args; args++) {
		assert_true(argc < MAX_ARGS);
		argv[argc++] = (char *)*args;
	}
	argv[argc] = NULL;
	return eo_flags_parse(argc, argv, &fe, cfg, err, errcap);
}

static void test_defaults(void **state)
{
	struct eo_config cfg;
	char err[256];

	(void)state;
	unlink(resolv_path);
	assert_int_equal(parse(NULL, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.metrics_bind_address, ":8080");
	assert_string_equal(cfg.health_probe_bind_address, ":8081");
	assert_true(cfg.leader_elect); /* on unless --leader-elect=false (local runs) */
	assert_string_equal(cfg.leader_election_id, "aa20b3a9.etcd-operator.cozystack.io");
	assert_string_equal(cfg.leader_election_namespace, "");
	assert_string_equal(cfg.cluster_domain, "cluster.local");
	assert_int_equal(cfg.cluster_domain_source, EO_DOMAIN_DEFAULT);
	assert_int_equal(cfg.nwatch_namespaces, 0);
	assert_string_equal(cfg.operator_image, "ghcr.io/cozystack/etcd-operator:v0.5.0");
	assert_string_equal(cfg.etcd_image_repository, "quay.io/coreos/etcd");
	assert_string_equal(cfg.kubeconfig, "");
	assert_int_equal(cfg.log_level, EO_LOG_INFO);
	assert_int_equal(cfg.workers, 4);
	/* The usage text's default is the value a run without the flag gets (make run). */
	assert_string_equal(cfg.operator_pod_labels, "app.kubernetes.io/name=etcd-operator");
	assert_false(cfg.network_policy);
	/* issue 21: the peer-only NetworkPolicy and the snapshot schedule bounds are on */
	assert_true(cfg.peer_network_policy);
	assert_int_equal(cfg.schedule_min_interval_s, 300);
	assert_int_equal(cfg.schedule_default_keep_last, 10);
	assert_int_equal(cfg.pod_run_as_user, 65532);
}

/* --pod-run-as-user: a non-root UID, or auto (the platform assigns it); nothing else. */
static void test_pod_run_as_user(void **state)
{
	static const char *const uid[] = {"--pod-run-as-user=1000", NULL};
	static const char *const aut[] = {"--pod-run-as-user", "auto", NULL};
	static const char *const bad[][2] = {{"--pod-run-as-user=0", NULL},
					     {"--pod-run-as-user=-1", NULL},
					     {"--pod-run-as-user=nonroot", NULL},
					     {"--pod-run-as-user=2147483648", NULL},
					     {"--pod-run-as-user=AUTO", NULL}};
	struct eo_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(parse(uid, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.pod_run_as_user, 1000);
	assert_int_equal(parse(aut, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.pod_run_as_user, EO_CFG_POD_UID_AUTO);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], BASE_ENV, &cfg, err, sizeof(err)) != EO_FLAGS_ERROR)
			fail_msg("%s accepted", bad[i][0]);
		assert_non_null(strstr(err, "--pod-run-as-user"));
	}
}

/* The administrator's overrides: 0 lifts a bound; a negative or non-number is an error. */
static void test_bounds_flags(void **state)
{
	static const char *const off[] = {"--peer-network-policy=false",
					  "--snapshot-schedule-min-interval-seconds=0",
					  "--snapshot-schedule-default-keep-last", "0", NULL};
	static const char *const bad[][2] = {{"--snapshot-schedule-min-interval-seconds=-1", NULL},
					     {"--snapshot-schedule-default-keep-last=ten", NULL},
					     {"--snapshot-schedule-min-interval-seconds=", NULL}};
	struct eo_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(parse(off, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_false(cfg.peer_network_policy);
	assert_int_equal(cfg.schedule_min_interval_s, 0);
	assert_int_equal(cfg.schedule_default_keep_last, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i], BASE_ENV, &cfg, err, sizeof(err)) != EO_FLAGS_ERROR)
			fail_msg("%s accepted", bad[i][0]);
		assert_non_null(strstr(err, "--snapshot-schedule-"));
	}
}

static void test_all_flags_and_syntax(void **state)
{
	static const char *const args[] = {
	    "--metrics-bind-address=127.0.0.1:9090",
	    "-health-probe-bind-address",
	    ":9091",
	    "--leader-elect",
	    "--leader-election-id",
	    "my-lease",
	    "--leader-election-namespace=ops",
	    "--cluster-domain=Cozy.Local.",
	    "--watch-namespace=tenant-a,tenant-b",
	    "--operator-image=reg.example/op:v1",
	    "--etcd-image-repository=registry.local:5000/mirror/etcd",
	    "--kubeconfig=/home/me/.kube/config",
	    "--log-level=debug",
	    "--workers=8",
	    NULL};
	struct eo_config cfg;
	char err[256];

	(void)state;
	unlink(resolv_path);
	assert_int_equal(parse(args, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.metrics_bind_address, "127.0.0.1:9090");
	assert_string_equal(cfg.health_probe_bind_address, ":9091");
	assert_true(cfg.leader_elect);
	assert_string_equal(cfg.leader_election_id, "my-lease");
	assert_string_equal(cfg.leader_election_namespace, "ops");
	assert_string_equal(cfg.cluster_domain, "cozy.local");
	assert_int_equal(cfg.cluster_domain_source, EO_DOMAIN_FROM_FLAG);
	assert_int_equal(cfg.nwatch_namespaces, 2);
	assert_string_equal(cfg.watch_namespaces[0], "tenant-a");
	assert_string_equal(cfg.watch_namespaces[1], "tenant-b");
	/* The flag beats OPERATOR_IMAGE. */
	assert_string_equal(cfg.operator_image, "reg.example/op:v1");
	assert_string_equal(cfg.etcd_image_repository, "registry.local:5000/mirror/etcd");
	assert_string_equal(cfg.kubeconfig, "/home/me/.kube/config");
	assert_int_equal(cfg.log_level, EO_LOG_DEBUG);
	assert_int_equal(cfg.workers, 8);
}

static void test_bool_forms(void **state)
{
	static const struct {
		const char *arg;
		enum eo_flags_status st;
		bool value;
	} cases[] = {
	    {"--leader-elect", EO_FLAGS_RUN, true},
	    {"-leader-elect", EO_FLAGS_RUN, true},
	    {"--leader-elect=true", EO_FLAGS_RUN, true},
	    {"--leader-elect=false", EO_FLAGS_RUN, false},
	    {"--leader-elect=1", EO_FLAGS_RUN, true},
	    {"--leader-elect=0", EO_FLAGS_RUN, false},
	    {"--leader-elect=T", EO_FLAGS_RUN, true},
	    {"--leader-elect=F", EO_FLAGS_RUN, false},
	    {"--leader-elect=TRUE", EO_FLAGS_RUN, true},
	    {"--leader-elect=False", EO_FLAGS_RUN, false},
	    {"--leader-elect=yes", EO_FLAGS_ERROR, false},
	    {"--leader-elect=", EO_FLAGS_ERROR, false},
	};
	struct eo_config cfg;
	char err[256];
	const char *args[2] = {NULL, NULL};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		args[0] = cases[i].arg;
		assert_int_equal(parse(args, BASE_ENV, &cfg, err, sizeof(err)), cases[i].st);
		if (cases[i].st == EO_FLAGS_RUN)
			assert_int_equal(cfg.leader_elect, cases[i].value);
		else
			assert_non_null(strstr(err, "invalid boolean value"));
	}
	/* Go semantics: a boolean never takes the next argument, so "false" is a stray argument. */
	{
		static const char *const two[] = {"--leader-elect", "false", NULL};

		assert_int_equal(parse(two, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);
		assert_string_equal(err, "unexpected argument \"false\"");
	}
	/* The last occurrence wins. */
	{
		static const char *const twice[] = {"--leader-elect", "--leader-elect=false", NULL};

		assert_int_equal(parse(twice, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
		assert_false(cfg.leader_elect);
	}
}

static void test_errors(void **state)
{
	static const struct {
		const char *args[4];
		const char *msg;
	} cases[] = {
	    {{"--nope", NULL}, "unknown flag: --nope"},
	    {{"--nope=1", NULL}, "unknown flag: --nope"},
	    {{"-x", NULL}, "unknown flag: --x"},
	    {{"---metrics-bind-address=:1", NULL}, "bad flag syntax: ---metrics-bind-address=:1"},
	    {{"-", NULL}, "unexpected argument \"-\""},
	    {{"run", NULL}, "unexpected argument \"run\""},
	    {{"--", "extra", NULL}, "unexpected argument \"extra\""},
	    {{"--workers", NULL}, "flag needs an argument: --workers"},
	    {{"-operator-image", NULL}, "flag needs an argument: --operator-image"},
	    /* getopt_long would take abbreviations and short-option clusters; Go does not. */
	    {{"--leader-election-i=x", NULL}, "unknown flag: --leader-election-i"},
	    {{"--work", "2", NULL}, "unknown flag: --work"},
	    {{"--he", NULL}, "unknown flag: --he"},
	    {{"-hx", NULL}, "unknown flag: --hx"},
	    {{"--=x", NULL}, "bad flag syntax: --=x"},
	    {{"--leader-elect", "--workers=2", "stray", NULL}, "unexpected argument \"stray\""},
	    {{"--workers=0", NULL}, "invalid value \"0\" for --workers (1-64)"},
	    {{"--workers=65", NULL}, "invalid value \"65\" for --workers (1-64)"},
	    {{"--workers=4x", NULL}, "invalid value \"4x\" for --workers (1-64)"},
	    {{"--log-level=trace", NULL},
	     "invalid value \"trace\" for --log-level (use debug, info, warn or error)"},
	    {{"--metrics-bind-address=8080", NULL},
	     "--metrics-bind-address: bind address 8080: missing port (use host:port or :port)"},
	    {{"--health-probe-bind-address=:99999", NULL},
	     "--health-probe-bind-address: bind address :99999: port out of range"},
	    {{"--cluster-domain=bad_domain", NULL},
	     "--cluster-domain \"bad_domain\" is not a DNS name"},
	    {{"--leader-election-id=Not_Valid", NULL},
	     "--leader-election-id \"Not_Valid\" is not a valid Lease name"},
	    {{"--leader-election-namespace=a.b", NULL},
	     "--leader-election-namespace \"a.b\" is not a namespace name"},
	    {{"--watch-namespace=ok,Bad", NULL}, "invalid namespace \"Bad\" in watch namespaces"},
	    {{"--etcd-image-repository=quay.io/coreos/etcd:v3.5", NULL},
	     "--etcd-image-repository \"quay.io/coreos/etcd:v3.5\" must be a repository without "
	     "tag or digest"},
	    {{"--etcd-image-repository=etcd@sha256:00", NULL},
	     "--etcd-image-repository \"etcd@sha256:00\" must be a repository without tag or "
	     "digest"},
	    {{"--operator-image=controller:latest", NULL},
	     "the operator image is the placeholder \"controller:latest\": set OPERATOR_IMAGE (or "
	     "--operator-image) to the image this operator runs from"},
	};
	struct eo_config cfg;
	char err[256];
	size_t i;

	(void)state;
	unlink(resolv_path);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(cases[i].args, BASE_ENV, &cfg, err, sizeof(err)),
				 EO_FLAGS_ERROR);
		assert_string_equal(err, cases[i].msg);
	}
}

static void test_help_and_version(void **state)
{
	static const char *const h1[] = {"-h", NULL};
	static const char *const h2[] = {"--help", NULL};
	static const char *const h3[] = {"--workers=2", "-help", "--nope", NULL};
	static const char *const h4[] = {"--h", NULL};
	static const char *const v1[] = {"--version", NULL};
	static const char *const v2[] = {"-version", NULL};
	static const char *const bad_then_help[] = {"--nope", "--help", NULL};
	struct eo_config cfg;
	char err[256];
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* Help and version need no operator image. */
	assert_int_equal(parse(h1, NULL, &cfg, err, sizeof(err)), EO_FLAGS_HELP);
	assert_int_equal(parse(h2, NULL, &cfg, err, sizeof(err)), EO_FLAGS_HELP);
	assert_int_equal(parse(h3, NULL, &cfg, err, sizeof(err)), EO_FLAGS_HELP);
	assert_int_equal(parse(h4, NULL, &cfg, err, sizeof(err)), EO_FLAGS_HELP);
	assert_int_equal(parse(v1, NULL, &cfg, err, sizeof(err)), EO_FLAGS_VERSION);
	assert_int_equal(parse(v2, NULL, &cfg, err, sizeof(err)), EO_FLAGS_VERSION);
	assert_int_equal(parse(bad_then_help, NULL, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	eo_flags_usage(f, "etcd-operator");
	fclose(f);
	assert_non_null(strstr(text, "Usage: etcd-operator [flags]\n"));
	assert_non_null(strstr(text, "--metrics-bind-address value"));
	assert_non_null(strstr(text, "(default :8080)"));
	assert_non_null(strstr(text, "(default :8081)"));
	assert_non_null(strstr(text, "[env OPERATOR_IMAGE]"));
	assert_non_null(strstr(text, "(default quay.io/coreos/etcd) [env ETCD_IMAGE_REPOSITORY]"));
	assert_non_null(strstr(text, "--leader-elect "));
	free(text);
}

static void test_env_fallbacks(void **state)
{
	static const char *const env[] = {
	    "OPERATOR_IMAGE",	 "env/op:1",	    "ETCD_IMAGE_REPOSITORY",
	    "mirror.local/etcd", "WATCH_NAMESPACE", " a, b ,,a,c",
	    "KUBECONFIG",	 "/env/kubeconfig", NULL};
	static const char *const empty_env[] = {"OPERATOR_IMAGE", "", NULL};
	static const char *const placeholder_env[] = {"OPERATOR_IMAGE", "controller:latest", NULL};
	static const char *const empty_flags[] = {
	    "--watch-namespace=", "--operator-image=", "--metrics-bind-address=", NULL};
	static const char *const override[] = {"--watch-namespace=x", "--kubeconfig=/flag/kc",
					       NULL};
	struct eo_config cfg;
	char err[256];

	(void)state;
	unlink(resolv_path);
	assert_int_equal(parse(NULL, env, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.operator_image, "env/op:1");
	assert_string_equal(cfg.etcd_image_repository, "mirror.local/etcd");
	assert_string_equal(cfg.kubeconfig, "/env/kubeconfig");
	/* Spaces trimmed, empty items skipped, duplicates merged. */
	assert_int_equal(cfg.nwatch_namespaces, 3);
	assert_string_equal(cfg.watch_namespaces[0], "a");
	assert_string_equal(cfg.watch_namespaces[1], "b");
	assert_string_equal(cfg.watch_namespaces[2], "c");

	/* An empty flag counts as unset: the environment and defaults apply. */
	assert_int_equal(parse(empty_flags, env, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.nwatch_namespaces, 3);
	assert_string_equal(cfg.operator_image, "env/op:1");
	assert_string_equal(cfg.metrics_bind_address, ":8080");

	assert_int_equal(parse(override, env, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.nwatch_namespaces, 1);
	assert_string_equal(cfg.watch_namespaces[0], "x");
	assert_string_equal(cfg.kubeconfig, "/flag/kc");

	/* The operator image is required, and the kustomize placeholder is refused. */
	assert_int_equal(parse(NULL, NULL, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);
	assert_non_null(strstr(err, "the operator image is not set"));
	assert_int_equal(parse(NULL, empty_env, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);
	assert_non_null(strstr(err, "the operator image is not set"));
	assert_int_equal(parse(NULL, placeholder_env, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);
	assert_non_null(strstr(err, "placeholder \"controller:latest\""));
}

static void test_log_level_alias(void **state)
{
	static const char *const zap[] = {"--zap-log-level=error", NULL};
	static const char *const zapnum[] = {"--zap-log-level", "2", NULL};
	static const char *const both[] = {"--log-level=warn", "--zap-log-level=debug", NULL};
	struct eo_config cfg;
	char err[256];

	(void)state;
	assert_int_equal(parse(zap, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.log_level, EO_LOG_ERROR);
	assert_int_equal(parse(zapnum, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.log_level, EO_LOG_DEBUG);
	assert_int_equal(parse(both, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_int_equal(cfg.log_level, EO_LOG_DEBUG);
}

static void test_watch_namespace_limit(void **state)
{
	static char list[64 * 8];
	const char *args[2] = {NULL, NULL};
	struct eo_config cfg;
	char err[256], flag[sizeof(list) + 32];
	size_t len = 0;
	int i;

	(void)state;
	for (i = 0; i <= EO_CFG_NAMESPACES_MAX; i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%sns%d", i ? "," : "", i);
	snprintf(flag, sizeof(flag), "--watch-namespace=%s", list);
	args[0] = flag;
	assert_int_equal(parse(args, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_ERROR);
	assert_string_equal(err, "more than 64 watch namespaces");
}

static void test_resolv_conf_discovery(void **state)
{
	static const struct {
		const char *content;
		const char *domain; /* NULL: discovery fails */
	} cases[] = {
	    {"search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\n"
	     "options ndots:5\n",
	     "cluster.local"},
	    {"nameserver 10.0.0.10\nsearch tenant-root.svc.cozy.local svc.cozy.local cozy.local\n",
	     "cozy.local"},
	    {"search svc.cluster.local.\n", "cluster.local"},
	    {"search\tdefault.svc.Example.ORG\tsvc.example.org\n", "example.org"},
	    /* A node's resolv.conf (hostNetwork pods): no svc entry. */
	    {"search us-east-1.compute.internal example.com\nnameserver 10.0.0.2\n", NULL},
	    /* "svc" must be a whole label. */
	    {"search mysvc.example.com notsvc.local\n", NULL},
	    /* The last search line wins, as in the resolver. */
	    {"search a.svc.first.local\nsearch b.svc.second.local\n", "second.local"},
	    {"search a.svc.first.local\nsearch example.com\n", NULL},
	    /* Comments and other keywords are not search lines. */
	    {"# search x.svc.commented.local\nsearchx y.svc.nope.local\n", NULL},
	    {"search ns.svc.\n", NULL},
	    {"search ns.svc.bad_domain\n", NULL},
	    {"", NULL},
	};
	char out[EO_CFG_DNS_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tu_write_file(NULL, resolv_path, cases[i].content);
		out[0] = '\0';
		if (cases[i].domain) {
			assert_int_equal(eo_cluster_domain_discover(resolv_path, out, sizeof(out)),
					 0);
			assert_string_equal(out, cases[i].domain);
		} else {
			assert_int_equal(eo_cluster_domain_discover(resolv_path, out, sizeof(out)),
					 -1);
		}
	}
	unlink(resolv_path);
	assert_int_equal(eo_cluster_domain_discover(resolv_path, out, sizeof(out)), -1);
}

static void test_resolv_conf_long_line(void **state)
{
	static char content[4096];
	char out[EO_CFG_DNS_MAX];
	size_t i;

	(void)state;
	/* A 3000-byte junk line must not be mistaken for a search line or break parsing. */
	memcpy(content, "nameserver ", 11);
	for (i = 11; i < 3000; i++)
		content[i] = 'x';
	snprintf(content + 3000, sizeof(content) - 3000, "\nsearch ns.svc.long.local\n");
	tu_write_file(NULL, resolv_path, content);
	assert_int_equal(eo_cluster_domain_discover(resolv_path, out, sizeof(out)), 0);
	assert_string_equal(out, "long.local");
	unlink(resolv_path);
}

static void test_cluster_domain_sources(void **state)
{
	static const char *const flag[] = {"--cluster-domain=override.local", NULL};
	struct eo_config cfg;
	char err[256];

	(void)state;
	tu_write_file(NULL, resolv_path, "search ns.svc.cozy.local svc.cozy.local cozy.local\n");
	assert_int_equal(parse(NULL, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.cluster_domain, "cozy.local");
	assert_int_equal(cfg.cluster_domain_source, EO_DOMAIN_FROM_RESOLV_CONF);

	assert_int_equal(parse(flag, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.cluster_domain, "override.local");
	assert_int_equal(cfg.cluster_domain_source, EO_DOMAIN_FROM_FLAG);

	tu_write_file(NULL, resolv_path, "search example.com\n");
	assert_int_equal(parse(NULL, BASE_ENV, &cfg, err, sizeof(err)), EO_FLAGS_RUN);
	assert_string_equal(cfg.cluster_domain, "cluster.local");
	assert_int_equal(cfg.cluster_domain_source, EO_DOMAIN_DEFAULT);
	unlink(resolv_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_bounds_flags),
	    cmocka_unit_test(test_pod_run_as_user),
	    cmocka_unit_test(test_all_flags_and_syntax),
	    cmocka_unit_test(test_bool_forms),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_help_and_version),
	    cmocka_unit_test(test_env_fallbacks),
	    cmocka_unit_test(test_log_level_alias),
	    cmocka_unit_test(test_watch_namespace_limit),
	    cmocka_unit_test(test_resolv_conf_discovery),
	    cmocka_unit_test(test_resolv_conf_long_line),
	    cmocka_unit_test(test_cluster_domain_sources),
	};

	snprintf(resolv_path, sizeof(resolv_path), "/tmp/eo-resolv-%ld.conf", (long)getpid());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
