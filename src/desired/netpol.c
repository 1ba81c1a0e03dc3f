/*
 * desired/netpol.c - the optional NetworkPolicy of a cluster. See netpol.h.
 */
#include "desired/netpol.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/util.h"
#include "desired/desired.h"

#define LABELS_MAX 1024

static void set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (value == NULL || json_object_set_new(obj, key, value) != 0)
		*ok = false;
}

static void add(json_t *arr, json_t *value, bool *ok)
{
	if (value == NULL || json_array_append_new(arr, value) != 0)
		*ok = false;
}

static const json_t *np_spec(const json_t *cluster)
{
	return json_object_get(json_object_get(cluster, "spec"), "networkPolicy");
}

bool eo_desired_network_policy_enabled(const json_t *cluster, const struct eo_netpol_opts *o)
{
	const json_t *e = json_object_get(np_spec(cluster), "enabled");

	if (json_is_boolean(e))
		return json_is_true(e);
	return o != NULL && o->default_enabled;
}

/* Member Pods of the cluster (they carry the member name as component). */
static json_t *members_selector(const char *cname)
{
	return json_pack("{s:{s:s, s:s}, s:[{s:s, s:s}]}", "matchLabels", EO_LABEL_CLUSTER, cname,
			 EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE, "matchExpressions", "key",
			 EO_LABEL_COMPONENT, "operator", "Exists");
}

/* Snapshot agent Pods of the cluster's snapshot Jobs. */
static json_t *agents_selector(const char *cname)
{
	return json_pack("{s:{s:s, s:s}}", "matchLabels", EO_LABEL_SNAPSHOT_OF, cname,
			 EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE);
}

static json_t *tcp_port(int port)
{
	return json_pack("[{s:s, s:i}]", "protocol", "TCP", "port", port);
}

/* Appends a deep copy of every object in peers to from. */
static void copy_peers(json_t *from, const json_t *peers, bool *ok)
{
	size_t i;
	json_t *p;

	json_array_foreach(peers, i, p)
	{
		if (json_is_object(p))
			add(from, json_deep_copy(p), ok);
	}
}

json_t *eo_desired_network_policy(const json_t *cluster, const struct eo_netpol_opts *o)
{
	const char *cname = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const json_t *np = np_spec(cluster), *metrics_from = json_object_get(np, "metricsFrom");
	json_t *pol = NULL, *md = NULL, *spec = NULL, *ingress = NULL, *client_from = NULL;
	json_t *rule = NULL, *refs = NULL;
	bool ok = true;

	if (!eo_present(cname) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    o == NULL || !eo_present(o->operator_namespace) ||
	    !json_is_object(o->operator_labels) || json_object_size(o->operator_labels) == 0)
		return NULL;
	pol =
	    json_pack("{s:s, s:s}", "apiVersion", "networking.k8s.io/v1", "kind", "NetworkPolicy");
	md = json_object();
	spec = json_object();
	ingress = json_array();
	client_from = json_array();
	refs = json_array();
	if (pol == NULL || md == NULL || spec == NULL || ingress == NULL || client_from == NULL ||
	    refs == NULL) {
		ok = false;
		goto out;
	}
	set(md, "name", json_string(cname), &ok);
	set(md, "namespace", json_string(ns), &ok);
	set(md, "labels", eo_desired_cluster_labels(cluster, cname), &ok);
	{
		json_t *ann = eo_desired_extra_annotations(cluster);

		if (json_object_size(ann) > 0)
			set(md, "annotations", json_incref(ann), &ok);
		if (ann == NULL)
			ok = false;
		json_decref(ann);
	}
	add(refs, eo_desired_owner_ref(cluster), &ok);
	set(md, "ownerReferences", json_incref(refs), &ok);
	set(pol, "metadata", json_incref(md), &ok);

	set(spec, "podSelector",
	    json_pack("{s:{s:s, s:s}}", "matchLabels", EO_LABEL_CLUSTER, cname, EO_LABEL_MANAGED_BY,
		      EO_LABEL_MANAGED_BY_VALUE),
	    &ok);
	set(spec, "policyTypes", json_pack("[s]", "Ingress"), &ok);
	/* peer: the cluster's own members */
	add(ingress,
	    json_pack("{s:o, s:[{s:o}]}", "ports", tcp_port(EO_PORT_PEER), "from", "podSelector",
		      members_selector(cname)),
	    &ok);
	/* client: the operator, the snapshot agents, the user's peers */
	add(client_from,
	    json_pack("{s:{s:{s:s}}, s:{s:O}}", "namespaceSelector", "matchLabels",
		      "kubernetes.io/metadata.name", o->operator_namespace, "podSelector",
		      "matchLabels", o->operator_labels),
	    &ok);
	add(client_from, json_pack("{s:o}", "podSelector", agents_selector(cname)), &ok);
	copy_peers(client_from, json_object_get(np, "clientFrom"), &ok);
	add(ingress,
	    json_pack("{s:o, s:O}", "ports", tcp_port(EO_PORT_CLIENT), "from", client_from), &ok);
	/* metrics: anywhere (absent), the listed peers, or no rule at all (empty list) */
	if (!json_is_array(metrics_from)) {
		add(ingress, json_pack("{s:o}", "ports", tcp_port(EO_PORT_METRICS)), &ok);
	} else if (json_array_size(metrics_from) > 0) {
		rule = json_array();
		if (rule == NULL)
			ok = false;
		else
			copy_peers(rule, metrics_from, &ok);
		add(ingress,
		    json_pack("{s:o, s:O}", "ports", tcp_port(EO_PORT_METRICS), "from", rule), &ok);
	}
	set(spec, "ingress", json_incref(ingress), &ok);
	set(pol, "spec", json_incref(spec), &ok);
out:
	json_decref(md);
	json_decref(spec);
	json_decref(ingress);
	json_decref(client_from);
	json_decref(rule);
	json_decref(refs);
	if (!ok) {
		json_decref(pol);
		return NULL;
	}
	return pol;
}

int eo_name_peer_network_policy(char *buf, size_t n, const char *cluster)
{
	int len;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (!eo_present(cluster))
		return -1;
	len = snprintf(buf, n, "%s%s", cluster, EO_PEER_NETPOL_SUFFIX);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

json_t *eo_desired_peer_network_policy(const json_t *cluster, bool open)
{
	const char *cname = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	json_t *pol = NULL, *md = NULL, *ingress = NULL, *ann = NULL;
	char name[EO_NAME_MAX];
	bool ok = true;

	if (!eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    eo_name_peer_network_policy(name, sizeof(name), cname) != 0)
		return NULL;
	md = json_pack("{s:s, s:s, s:o, s:[o]}", "name", name, "namespace", ns, "labels",
		       eo_desired_cluster_labels(cluster, cname), "ownerReferences",
		       eo_desired_owner_ref(cluster));
	ann = eo_desired_extra_annotations(cluster);
	ingress = json_array();
	if (md == NULL || ann == NULL || ingress == NULL) {
		ok = false;
		goto out;
	}
	if (json_object_size(ann) > 0)
		set(md, "annotations", json_incref(ann), &ok);
	/* peer: the cluster's own members, always */
	add(ingress,
	    json_pack("{s:o, s:[{s:o}]}", "ports", tcp_port(EO_PORT_PEER), "from", "podSelector",
		      members_selector(cname)),
	    &ok);
	/* client and metrics: from anywhere, unless the cluster's own policy narrows them */
	if (open) {
		add(ingress, json_pack("{s:o}", "ports", tcp_port(EO_PORT_CLIENT)), &ok);
		add(ingress, json_pack("{s:o}", "ports", tcp_port(EO_PORT_METRICS)), &ok);
	}
	pol = json_pack("{s:s, s:s, s:O, s:{s:{s:{s:s, s:s}}, s:[s], s:O}}", "apiVersion",
			"networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata", md, "spec",
			"podSelector", "matchLabels", EO_LABEL_CLUSTER, cname, EO_LABEL_MANAGED_BY,
			EO_LABEL_MANAGED_BY_VALUE, "policyTypes", "Ingress", "ingress", ingress);
	if (pol == NULL)
		ok = false;
out:
	json_decref(md);
	json_decref(ann);
	json_decref(ingress);
	if (!ok) {
		json_decref(pol);
		return NULL;
	}
	return pol;
}

json_t *eo_desired_network_policy_patch(const json_t *desired, const json_t *actual)
{
	const json_t *ws = json_object_get(desired, "spec"), *hs = json_object_get(actual, "spec");
	const json_t *wl = eo_meta_get(desired, "labels");
	const json_t *hl = eo_meta_get(actual, "labels");
	bool labels_ok = true;
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)wl, k, v)
	{
		if (!json_equal(v, json_object_get(hl, k)))
			labels_ok = false;
	}
	/* The apiserver fills no defaults into these fields, so equal JSON means in sync. */
	if (labels_ok &&
	    json_equal(json_object_get(ws, "podSelector"), json_object_get(hs, "podSelector")) &&
	    json_equal(json_object_get(ws, "policyTypes"), json_object_get(hs, "policyTypes")) &&
	    json_equal(json_object_get(ws, "ingress"), json_object_get(hs, "ingress")))
		return NULL;
	/* Lists in a merge patch replace the whole list: ingress is sent whole. */
	return json_pack("{s:{s:O}, s:{s:O, s:O, s:O}}", "metadata", "labels", wl, "spec",
			 "podSelector", json_object_get(ws, "podSelector"), "policyTypes",
			 json_object_get(ws, "policyTypes"), "ingress",
			 json_object_get(ws, "ingress"));
}

json_t *eo_desired_parse_labels(const char *s)
{
	char buf[LABELS_MAX], *save = NULL, *tok;
	json_t *out;

	if (!eo_present(s) || strlen(s) >= sizeof(buf))
		return NULL;
	snprintf(buf, sizeof(buf), "%s", s);
	out = json_object();
	if (out == NULL)
		return NULL;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL || eq == tok || strchr(eq + 1, '=') != NULL) {
			json_decref(out);
			return NULL;
		}
		*eq = '\0';
		if (json_object_set_new(out, tok, json_string(eq + 1)) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}
