/*
 * Unit tests for desired/netpol: the NetworkPolicy of a cluster against golden JSON
 * (test/unit/test_desired_golden/netpol_*.json; EO_UPDATE_GOLDEN=1 rewrites them), who may
 * reach which port, the opt-in rule, the drift patch and the --operator-pod-labels parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/names.h"
#include "desired/netpol.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define GOLDEN_DIR "test/unit/test_desired_golden/"

static json_t *cluster(const char *netpol)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'apps','uid':'c-uid-1'},"
		 "'spec':{'replicas':3,'version':'3.6.11',"
		 "'additionalMetadata':{'labels':{'team':'db'}}%s%s}}",
		 netpol ? ",'networkPolicy':" : "", netpol ? netpol : "");
	return tu_jsonq(buf);
}

struct fixture {
	json_t *labels;
	struct eo_netpol_opts o;
};

static int setup(void **state)
{
	static struct fixture fx;

	fx.labels = tu_jsonq("{'app.kubernetes.io/name':'etcd-operator',"
			     "'app.kubernetes.io/instance':'etcd-operator'}");
	fx.o = (struct eo_netpol_opts){.operator_namespace = "etcd-operator-system",
				       .operator_labels = fx.labels};
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	json_decref(((struct fixture *)*state)->labels);
	return 0;
}

/* The ingress rule for a port, or NULL. */
static const json_t *rule_for(const json_t *pol, int port)
{
	size_t i;
	json_t *r;

	json_array_foreach(json_object_get(json_object_get(pol, "spec"), "ingress"), i, r)
	{
		json_t *p = json_array_get(json_object_get(r, "ports"), 0);

		if (json_integer_value(json_object_get(p, "port")) == port)
			return r;
	}
	return NULL;
}

static void test_golden(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *file, *netpol;
	} cases[] = {
	    {"netpol_default.json", "{'enabled':true}"},
	    {"netpol_selected.json",
	     "{'enabled':true,'clientFrom':[{'podSelector':{'matchLabels':{'app':'api'}}},"
	     "{'namespaceSelector':{'matchLabels':{'team':'db'}},"
	     "'podSelector':{'matchLabels':{'role':'client'}}}],"
	     "'metricsFrom':[{'namespaceSelector':{'matchLabels':"
	     "{'kubernetes.io/metadata.name':'monitoring'}}}]}"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = cluster(cases[i].netpol), *p = eo_desired_network_policy(c, &fx->o);
		char path[256];

		snprintf(path, sizeof(path), GOLDEN_DIR "%s", cases[i].file);
		tu_golden(path, p);
		json_decref(p);
		json_decref(c);
	}
}

/* Who reaches which port: peer only from members, client from operator + agents + the
 * user's peers, metrics open / listed / closed. */
static void test_rules(void **state)
{
	struct fixture *fx = *state;
	json_t *c = cluster("{'clientFrom':[{'podSelector':{'matchLabels':{'app':'api'}}}]}");
	json_t *p = eo_desired_network_policy(c, &fx->o);
	const json_t *peer = rule_for(p, EO_PORT_PEER), *client = rule_for(p, EO_PORT_CLIENT);
	const json_t *from;
	json_t *sel = tu_jsonq("{'matchLabels':{'etcd-operator.cozystack.io/cluster':'demo',"
			       "'app.kubernetes.io/managed-by':'etcd-operator'}}");

	assert_non_null(p);
	assert_string_equal(json_string_value(json_array_get(
				json_object_get(json_object_get(p, "spec"), "policyTypes"), 0)),
			    "Ingress");
	/* the policy selects the member Pods of demo only */
	tu_assert_json_equal(json_object_get(json_object_get(p, "spec"), "podSelector"), sel,
			     "podSelector");
	json_decref(sel);
	from = json_object_get(peer, "from");
	assert_int_equal(json_array_size(from), 1);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_array_get(from, 0), "podSelector"),
				"matchLabels"),
		EO_LABEL_CLUSTER)),
	    "demo");
	from = json_object_get(client, "from");
	assert_int_equal(json_array_size(from), 3);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_array_get(from, 0), "namespaceSelector"),
				"matchLabels"),
		"kubernetes.io/metadata.name")),
	    "etcd-operator-system");
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_array_get(from, 1), "podSelector"),
				"matchLabels"),
		EO_LABEL_SNAPSHOT_OF)),
	    "demo");
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(json_array_get(from, 2), "podSelector"),
				"matchLabels"),
		"app")),
	    "api");
	/* metricsFrom absent: a rule with no from (every source) */
	assert_non_null(rule_for(p, EO_PORT_METRICS));
	assert_null(json_object_get(rule_for(p, EO_PORT_METRICS), "from"));
	json_decref(p);
	json_decref(c);

	/* metricsFrom []: no rule, so nobody (but the node) reaches it */
	c = cluster("{'metricsFrom':[]}");
	p = eo_desired_network_policy(c, &fx->o);
	assert_non_null(p);
	assert_null(rule_for(p, EO_PORT_METRICS));
	assert_int_equal(json_array_size(json_object_get(json_object_get(p, "spec"), "ingress")),
			 2);
	json_decref(p);
	json_decref(c);
}

static void test_enabled(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *netpol;
		bool def, want;
	} cases[] = {
	    {NULL, false, false},
	    {NULL, true, true},
	    {"{}", true, true},
	    {"{'enabled':true}", false, true},
	    {"{'enabled':false}", true, false},
	    {"{'enabled':false}", false, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_netpol_opts o = fx->o;
		json_t *c = cluster(cases[i].netpol);

		o.default_enabled = cases[i].def;
		if (eo_desired_network_policy_enabled(c, &o) != cases[i].want)
			fail_msg("case %zu: enabled %d", i, !cases[i].want);
		json_decref(c);
	}
	assert_false(eo_desired_network_policy_enabled(NULL, NULL));
}

static void test_missing_inputs(void **state)
{
	struct fixture *fx = *state;
	struct eo_netpol_opts o = fx->o;
	json_t *c = cluster(NULL), *empty = json_object();

	assert_null(eo_desired_network_policy(c, NULL));
	o.operator_namespace = "";
	assert_null(eo_desired_network_policy(c, &o));
	o = fx->o;
	o.operator_labels = empty;
	assert_null(eo_desired_network_policy(c, &o));
	json_object_del(json_object_get(c, "metadata"), "uid");
	assert_null(eo_desired_network_policy(c, &fx->o));
	json_decref(empty);
	json_decref(c);
}

static void test_patch(void **state)
{
	struct fixture *fx = *state;
	json_t *c = cluster("{'enabled':true}"), *want = eo_desired_network_policy(c, &fx->o);
	json_t *have = json_deep_copy(want), *patch;

	/* server-side extras (status fields, other labels) are not drift */
	json_object_set_new(json_object_get(have, "metadata"), "resourceVersion", json_string("9"));
	json_object_set_new(json_object_get(json_object_get(have, "metadata"), "labels"), "extra",
			    json_string("x"));
	assert_null(eo_desired_network_policy_patch(want, have));
	/* someone opened the client port to everyone: the whole ingress list goes back */
	json_object_del(
	    json_array_get(json_object_get(json_object_get(have, "spec"), "ingress"), 1), "from");
	patch = eo_desired_network_policy_patch(want, have);
	assert_non_null(patch);
	tu_assert_json_equal(json_object_get(json_object_get(patch, "spec"), "ingress"),
			     json_object_get(json_object_get(want, "spec"), "ingress"), "ingress");
	json_decref(patch);
	json_decref(have);
	json_decref(want);
	json_decref(c);
}

static void test_parse_labels(void **state)
{
	static const struct {
		const char *in, *want; /* want NULL: rejected */
	} cases[] = {
	    {"app.kubernetes.io/name=etcd-operator", "{'app.kubernetes.io/name':'etcd-operator'}"},
	    {"a=1,b=2", "{'a':'1','b':'2'}"},
	    {"a=", "{'a':''}"},
	    {"", NULL},
	    {"a", NULL},
	    {"=x", NULL},
	    {"a=b=c", NULL},
	    {",", NULL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *got = eo_desired_parse_labels(cases[i].in);

		if (cases[i].want == NULL) {
			if (got != NULL)
				fail_msg("case %zu (%s) accepted", i, cases[i].in);
			continue;
		}
		{
			json_t *want = tu_jsonq(cases[i].want);

			tu_assert_json_equal(got, want, cases[i].in);
			json_decref(want);
		}
		json_decref(got);
	}
	assert_null(eo_desired_parse_labels(NULL));
}

/* Does some policy of pols let every source (a rule with no from) reach port? */
static bool open_to_all(json_t *const *pols, size_t n, int port)
{
	for (size_t k = 0; k < n; k++) {
		size_t i;
		json_t *r;

		json_array_foreach(json_object_get(json_object_get(pols[k], "spec"), "ingress"), i,
				   r)
		{
			size_t j;
			json_t *p;

			json_array_foreach(json_object_get(r, "ports"), j, p)
			{
				if (json_integer_value(json_object_get(p, "port")) == port &&
				    json_object_get(r, "from") == NULL)
					return true;
			}
		}
	}
	return false;
}

static void test_peer_golden(void **state)
{
	json_t *c = cluster(NULL), *p;

	(void)state;
	p = eo_desired_peer_network_policy(c, true);
	tu_golden(GOLDEN_DIR "netpol_peer_open.json", p);
	json_decref(p);
	p = eo_desired_peer_network_policy(c, false);
	tu_golden(GOLDEN_DIR "netpol_peer_closed.json", p);
	json_decref(p);
	json_decref(c);
}

/*
 * The peer policy together with the cluster's own policy, as an enforcer adds them up: the
 * peer port is never open to every Pod; the client and metrics ports are open to every Pod
 * unless the cluster's own policy narrows them (and the peer policy then is not open).
 */
static void test_peer_with_cluster_policy(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *netpol; /* spec.networkPolicy; NULL: no policy of its own */
		bool open;	    /* the peer policy's open rules */
		bool client_all, metrics_all;
	} cases[] = {
	    {NULL, true, true, true},
	    {"{'enabled':false}", true, true, true},
	    {"{'enabled':true}", false, false, true},
	    {"{'enabled':true,'clientFrom':[{'podSelector':{'matchLabels':{'app':'api'}}}]}", false,
	     false, true},
	    {"{'enabled':true,'metricsFrom':[]}", false, false, false},
	    {"{'enabled':true,'metricsFrom':[{'podSelector':{'matchLabels':{'app':'prom'}}}]}",
	     false, false, false},
	    /* why the controller closes it: an open peer policy undoes the narrowing */
	    {"{'enabled':true,'metricsFrom':[]}", true, true, true},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = cluster(cases[i].netpol), *pols[2];
		size_t n = 0;
		const json_t *peer, *from;

		pols[n++] = eo_desired_peer_network_policy(c, cases[i].open);
		assert_non_null(pols[0]);
		if (eo_desired_network_policy_enabled(c, &fx->o))
			pols[n++] = eo_desired_network_policy(c, &fx->o);
		assert_non_null(pols[n - 1]);
		if (open_to_all(pols, n, EO_PORT_PEER))
			fail_msg("case %zu: the peer port is open to every Pod", i);
		if (open_to_all(pols, n, EO_PORT_CLIENT) != cases[i].client_all)
			fail_msg("case %zu: client port open to every Pod: %d", i,
				 !cases[i].client_all);
		if (open_to_all(pols, n, EO_PORT_METRICS) != cases[i].metrics_all)
			fail_msg("case %zu: metrics port open to every Pod: %d", i,
				 !cases[i].metrics_all);
		/* the peer rule: this cluster's member Pods only */
		peer = rule_for(pols[0], EO_PORT_PEER);
		from = json_object_get(peer, "from");
		assert_int_equal(json_array_size(from), 1);
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(json_object_get(json_array_get(from, 0), "podSelector"),
					"matchLabels"),
			EO_LABEL_CLUSTER)),
		    "demo");
		assert_string_equal(json_string_value(json_object_get(
					json_object_get(pols[0], "metadata"), "name")),
				    "demo.peer");
		for (size_t k = 0; k < n; k++)
			json_decref(pols[k]);
		json_decref(c);
	}
}

static void test_peer_patch_and_inputs(void **state)
{
	json_t *c = cluster(NULL), *open = eo_desired_peer_network_policy(c, true);
	json_t *closed = eo_desired_peer_network_policy(c, false), *patch;
	char buf[16], small[9];

	(void)state;
	assert_null(eo_desired_network_policy_patch(open, open));
	/* open -> closed (the cluster's own policy came): the whole ingress list is sent */
	patch = eo_desired_network_policy_patch(closed, open);
	assert_non_null(patch);
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(patch, "spec"), "ingress")), 1);
	json_decref(patch);
	json_decref(open);
	json_decref(closed);
	/* "demo.peer" needs 10 bytes */
	assert_int_equal(eo_name_peer_network_policy(small, sizeof(small), "demo"), -1);
	assert_int_equal(eo_name_peer_network_policy(buf, sizeof(buf), ""), -1);
	assert_int_equal(eo_name_peer_network_policy(buf, sizeof(buf), "demo"), 0);
	assert_string_equal(buf, "demo.peer");
	json_object_del(json_object_get(c, "metadata"), "uid");
	assert_null(eo_desired_peer_network_policy(c, true));
	json_decref(c);
}

TU_MAIN_SETUP(setup, teardown, test_golden, test_rules, test_enabled, test_missing_inputs,
	      test_patch, test_parse_labels, test_peer_golden, test_peer_with_cluster_policy,
	      test_peer_patch_and_inputs)
