/*
 * build/build.c - desired objects of a cluster and its members. See build.h.
 */
#include "desired/desired.h"
#include "desired/restore.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/cluster.h"
#include "api/defrag.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/json.h"
#include "core/util.h"

#define DEFAULT_CLUSTER_DOMAIN "cluster.local"
#define CONTAINER_NAME	       "etcd"
#define DATA_VOLUME	       "data"
#define TLS_CLIENT_VOLUME      "tls-client"
#define TLS_PEER_VOLUME	       "tls-peer"

/* The value at a path of object keys (NULL-terminated), or NULL. Borrowed. */
static json_t *at(const json_t *root, ...)
{
	va_list ap;
	const char *key = NULL;
	json_t *v = (json_t *)root;

	va_start(ap, root);
	while (v != NULL && (key = va_arg(ap, const char *)) != NULL)
		v = json_is_object(v) ? json_object_get(v, key) : NULL;
	va_end(ap);
	return v;
}

/* json_object_set_new that remembers failure in *ok. */
static void set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (value == NULL || json_object_set_new(obj, key, value) != 0)
		*ok = false;
}

/* Sets a deep copy of value when value is not NULL. */
static void set_copy(json_t *obj, const char *key, const json_t *value, bool *ok)
{
	if (value != NULL)
		set(obj, key, json_deep_copy(value), ok);
}

static void append(json_t *arr, json_t *value, bool *ok)
{
	if (value == NULL || json_array_append_new(arr, value) != 0)
		*ok = false;
}

static json_t *finish(json_t *obj, bool ok)
{
	if (!ok) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

static const char *domain_of(const struct eo_desired_opts *o)
{
	return o != NULL && eo_present(o->cluster_domain) ? o->cluster_domain
							  : DEFAULT_CLUSTER_DOMAIN;
}

/* --- helpers --- */

long eo_desired_pod_uid(const struct eo_desired_opts *o)
{
	if (o == NULL || o->pod_run_as_user == 0)
		return EO_DESIRED_POD_UID_DEFAULT;
	return o->pod_run_as_user < 0 ? EO_DESIRED_POD_UID_AUTO : o->pod_run_as_user;
}

json_t *eo_desired_pod_security_context(const struct eo_desired_opts *o, bool change_policy)
{
	long uid = eo_desired_pod_uid(o);
	json_t *sc = json_pack("{s:b, s:{s:s}}", "runAsNonRoot", 1, "seccompProfile", "type",
			       "RuntimeDefault");
	bool ok = sc != NULL;

	if (ok && uid != EO_DESIRED_POD_UID_AUTO) {
		set(sc, "runAsUser", json_integer(uid), &ok);
		set(sc, "runAsGroup", json_integer(uid), &ok);
		set(sc, "fsGroup", json_integer(uid), &ok);
	}
	if (ok && change_policy)
		set(sc, "fsGroupChangePolicy", json_string("OnRootMismatch"), &ok);
	return finish(sc, ok);
}

json_t *eo_desired_owner_ref(const json_t *owner)
{
	const char *api = json_string_value(json_object_get(owner, "apiVersion"));
	const char *kind = json_string_value(json_object_get(owner, "kind"));
	const char *name = eo_meta_name(owner);
	const char *uid = eo_meta_uid(owner);

	if (!eo_present(api) || !eo_present(kind) || !eo_present(name) || !eo_present(uid))
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", api, "kind", kind, "name",
			 name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
}

bool eo_desired_is_controlled_by(const json_t *obj, const char *owner_uid)
{
	return eo_meta_controlled_by(obj, owner_uid);
}

void eo_desired_controller_of(const json_t *obj, char *buf, size_t n)
{
	json_t *refs = eo_meta_get(obj, "ownerReferences");
	json_t *ref = NULL;
	size_t i;

	if (n == 0)
		return;
	snprintf(buf, n, "none");
	json_array_foreach(refs, i, ref)
	{
		const char *kind = json_string_value(json_object_get(ref, "kind"));
		const char *name = json_string_value(json_object_get(ref, "name"));
		const char *uid = json_string_value(json_object_get(ref, "uid"));

		if (json_is_true(json_object_get(ref, "controller"))) {
			snprintf(buf, n, "%s %s, uid %s", kind != NULL ? kind : "object",
				 name != NULL ? name : "?", uid != NULL ? uid : "?");
			return;
		}
	}
}

/* Copies the string entries of src whose keys are not reserved into dst. */
static void copy_unreserved(json_t *dst, const json_t *src, bool *ok)
{
	const char *key = NULL;
	json_t *v = NULL;

	json_object_foreach((json_t *)src, key, v)
	{
		if (json_is_string(v) && !eo_name_key_reserved(key))
			set(dst, key, json_copy(v), ok);
	}
}

json_t *eo_desired_cluster_labels(const json_t *source, const char *cluster)
{
	json_t *l = NULL;
	bool ok = true;

	if (!eo_present(cluster) || (l = json_object()) == NULL)
		return NULL;
	copy_unreserved(l, at(source, "spec", "additionalMetadata", "labels", NULL), &ok);
	set(l, EO_LABEL_APP_NAME, json_string(EO_LABEL_APP_NAME_VALUE), &ok);
	set(l, EO_LABEL_INSTANCE, json_string(cluster), &ok);
	set(l, EO_LABEL_MANAGED_BY, json_string(EO_LABEL_MANAGED_BY_VALUE), &ok);
	set(l, EO_LABEL_CLUSTER, json_string(cluster), &ok);
	return finish(l, ok);
}

json_t *eo_desired_extra_annotations(const json_t *source)
{
	json_t *a = json_object();
	bool ok = a != NULL;

	if (ok)
		copy_unreserved(a, at(source, "spec", "additionalMetadata", "annotations", NULL),
				&ok);
	return finish(a, ok);
}

static int fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fmt(char *buf, size_t n, const char *f, ...)
{
	va_list ap;
	int len;

	if (buf == NULL || n == 0)
		return -1;
	va_start(ap, f);
	len = vsnprintf(buf, n, f, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_desired_member_fqdn(char *buf, size_t n, const struct eo_desired_opts *o, const char *member,
			   const char *cluster, const char *ns)
{
	if (!eo_present(member) || !eo_present(cluster) || !eo_present(ns)) {
		if (buf != NULL && n > 0)
			buf[0] = '\0';
		return -1;
	}
	return fmt(buf, n, "%s.%s.%s.svc.%s", member, cluster, ns, domain_of(o));
}

static int member_url(char *buf, size_t n, const struct eo_desired_opts *o, const char *member,
		      const char *cluster, const char *ns, int port, bool tls)
{
	char host[EO_DESIRED_URL_MAX];

	if (eo_desired_member_fqdn(host, sizeof(host), o, member, cluster, ns) != 0) {
		if (buf != NULL && n > 0)
			buf[0] = '\0';
		return -1;
	}
	return fmt(buf, n, "%s://%s:%d", tls ? "https" : "http", host, port);
}

int eo_desired_member_peer_url(char *buf, size_t n, const struct eo_desired_opts *o,
			       const char *member, const char *cluster, const char *ns, bool tls)
{
	return member_url(buf, n, o, member, cluster, ns, EO_PORT_PEER, tls);
}

int eo_desired_member_client_url(char *buf, size_t n, const struct eo_desired_opts *o,
				 const char *member, const char *cluster, const char *ns, bool tls)
{
	return member_url(buf, n, o, member, cluster, ns, EO_PORT_CLIENT, tls);
}

/* The host and port of an "http(s)://host:port" URL into host (port as text into port). */
static int split_url(const char *url, char *host, size_t host_cap, char *port, size_t port_cap)
{
	const char *h, *colon;
	size_t hl, pl;

	if (url == NULL)
		return -1;
	if (strncmp(url, "http://", 7) == 0)
		h = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		h = url + 8;
	else
		return -1;
	colon = strchr(h, ':');
	if (colon == NULL)
		return -1;
	hl = (size_t)(colon - h);
	pl = strspn(colon + 1, "0123456789");
	if (hl == 0 || hl >= host_cap || pl == 0 || pl >= port_cap ||
	    (colon[1 + pl] != '\0' && colon[1 + pl] != '/'))
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	memcpy(port, colon + 1, pl);
	port[pl] = '\0';
	return 0;
}

/* Copies label i (0-based) of host into out; -1 when missing, empty or too long. */
static int host_label(const char *host, int i, char *out, size_t cap, const char **rest)
{
	const char *p = host, *dot;
	size_t l;

	for (; i > 0; i--) {
		p = strchr(p, '.');
		if (p == NULL)
			return -1;
		p++;
	}
	dot = strchr(p, '.');
	l = dot != NULL ? (size_t)(dot - p) : strlen(p);
	if (l == 0 || l >= cap)
		return -1;
	memcpy(out, p, l);
	out[l] = '\0';
	if (rest != NULL)
		*rest = dot != NULL ? dot + 1 : p + l;
	return 0;
}

/* The member and namespace of a member host "<member>.<svc>.<ns>.svc.<domain>". */
static int host_member(const struct eo_desired_opts *o, const char *host, char *member,
		       size_t member_cap, char *ns, size_t ns_cap)
{
	char svc[8];
	const char *domain = NULL;

	if (host_label(host, 3, svc, sizeof(svc), &domain) != 0 || strcmp(svc, "svc") != 0 ||
	    strcasecmp(domain, domain_of(o)) != 0 ||
	    host_label(host, 0, member, member_cap, NULL) != 0 ||
	    host_label(host, 2, ns, ns_cap, NULL) != 0) {
		member[0] = ns[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_desired_url_member(const struct eo_desired_opts *o, const char *url, char *member,
			  size_t member_cap, char *ns, size_t ns_cap)
{
	char host[EO_DESIRED_URL_MAX], port[8];

	if (member == NULL || member_cap == 0 || ns == NULL || ns_cap == 0)
		return -1;
	member[0] = ns[0] = '\0';
	if (split_url(url, host, sizeof(host), port, sizeof(port)) != 0)
		return -1;
	return host_member(o, host, member, member_cap, ns, ns_cap);
}

int eo_desired_member_route(char *buf, size_t n, const struct eo_desired_opts *o, const char *url,
			    const json_t *pod)
{
	char host[EO_DESIRED_URL_MAX], port[8], member[EO_NAME_MAX], ns[EO_NAME_MAX];
	const char *ip = json_string_value(at(pod, "status", "podIP", NULL));
	const char *phase = json_string_value(at(pod, "status", "phase", NULL));
	size_t ipl = ip != NULL ? strlen(ip) : 0;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (split_url(url, host, sizeof(host), port, sizeof(port)) != 0 ||
	    host_member(o, host, member, sizeof(member), ns, sizeof(ns)) != 0 || ipl == 0 ||
	    ipl > 45 || strspn(ip, "0123456789abcdefABCDEF.:") != ipl || eo_meta_is_deleting(pod) ||
	    (phase != NULL && (strcmp(phase, "Succeeded") == 0 || strcmp(phase, "Failed") == 0)) ||
	    eo_meta_name(pod) == NULL || strcmp(eo_meta_name(pod), member) != 0 ||
	    eo_meta_namespace(pod) == NULL || strcmp(eo_meta_namespace(pod), ns) != 0)
		return -1;
	if (strchr(ip, ':') != NULL)
		return fmt(buf, n, "%s:%s:[%s]:%s", host, port, ip, port);
	return fmt(buf, n, "%s:%s:%s:%s", host, port, ip, port);
}

bool eo_desired_member_peer_tls(const json_t *member)
{
	struct eo_member_tls t;

	eo_member_tls(member, &t);
	return t.peer_secret != NULL || t.peer_auto_tls;
}

bool eo_desired_member_client_tls(const json_t *member)
{
	struct eo_member_tls t;

	eo_member_tls(member, &t);
	return t.client_server_secret != NULL;
}

int eo_desired_seed_initial_cluster(char *buf, size_t n, const struct eo_desired_opts *o,
				    const char *member, const char *cluster, const char *ns,
				    bool tls)
{
	char url[EO_DESIRED_URL_MAX];

	if (eo_desired_member_peer_url(url, sizeof(url), o, member, cluster, ns, tls) != 0) {
		if (buf != NULL && n > 0)
			buf[0] = '\0';
		return -1;
	}
	return fmt(buf, n, "%s=%s", member, url);
}

/* metadata {name, namespace, labels, annotations (when any), ownerReferences [owner]} */
static json_t *owned_metadata(const json_t *owner, const char *name, const char *ns, json_t *labels,
			      json_t *annotations)
{
	json_t *md = json_object();
	json_t *refs = json_array();
	bool ok = md != NULL && refs != NULL && labels != NULL && annotations != NULL;

	if (ok) {
		set(md, "name", json_string(name), &ok);
		set(md, "namespace", json_string(ns), &ok);
		set(md, "labels", json_incref(labels), &ok);
		if (json_object_size(annotations) > 0)
			set(md, "annotations", json_incref(annotations), &ok);
		append(refs, eo_desired_owner_ref(owner), &ok);
		set(md, "ownerReferences", json_incref(refs), &ok);
	}
	json_decref(refs);
	json_decref(labels);
	json_decref(annotations);
	return finish(md, ok);
}

static json_t *port(const char *name, int number)
{
	return json_pack("{s:s, s:i, s:i, s:s}", "name", name, "port", number, "targetPort", number,
			 "protocol", "TCP");
}

static json_t *service(const json_t *cluster, bool headless)
{
	const char *cname = eo_cluster_name(cluster);
	const char *ns = eo_cluster_namespace(cluster);
	char name[EO_NAME_MAX];
	json_t *svc = NULL, *spec = NULL, *ports = NULL;
	bool ok = true;

	if (!eo_present(cname) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)))
		return NULL;
	if ((headless ? eo_cluster_headless_service(cluster, name, sizeof(name))
		      : eo_name_client_service(name, sizeof(name), cname)) != 0)
		return NULL;
	svc = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "Service");
	spec = json_object();
	ports = json_array();
	if (svc == NULL || spec == NULL || ports == NULL) {
		json_decref(spec);
		json_decref(ports);
		return finish(svc, false);
	}
	set(svc, "metadata",
	    owned_metadata(cluster, name, ns, eo_desired_cluster_labels(cluster, cname),
			   eo_desired_extra_annotations(cluster)),
	    &ok);
	if (headless) {
		set(spec, "clusterIP", json_string("None"), &ok);
		set(spec, "publishNotReadyAddresses", json_true(), &ok);
	} else {
		set(spec, "type", json_string("ClusterIP"), &ok);
	}
	/*
	 * The headless Service names every member (peers find a joining learner by it); clients
	 * reach voters only, never a learner catching up or a seed that lost a race.
	 */
	set(spec, "selector",
	    headless ? json_pack("{s:s}", EO_LABEL_CLUSTER, cname)
		     : json_pack("{s:s, s:s}", EO_LABEL_CLUSTER, cname, EO_LABEL_ROLE,
				 EO_LABEL_ROLE_VOTER),
	    &ok);
	append(ports, port(EO_PORT_NAME_CLIENT, EO_PORT_CLIENT), &ok);
	if (headless)
		append(ports, port(EO_PORT_NAME_PEER, EO_PORT_PEER), &ok);
	set(spec, "ports", ports, &ok);
	set(svc, "spec", spec, &ok);
	return finish(svc, ok);
}

json_t *eo_desired_headless_service(const json_t *cluster)
{
	return service(cluster, true);
}

json_t *eo_desired_client_service(const json_t *cluster)
{
	return service(cluster, false);
}

/* The port of actual's spec.ports with this name, or NULL. */
static json_t *port_named(const json_t *svc, const char *name)
{
	json_t *p = NULL;
	size_t i;

	json_array_foreach(at(svc, "spec", "ports", NULL), i, p)
	{
		const char *n = json_string_value(json_object_get(p, "name"));

		if (n != NULL && strcmp(n, name) == 0)
			return p;
	}
	return NULL;
}

static bool ports_match(const json_t *desired, const json_t *actual)
{
	json_t *want = NULL;
	size_t i;

	if (json_array_size(at(desired, "spec", "ports", NULL)) !=
	    json_array_size(at(actual, "spec", "ports", NULL)))
		return false;
	json_array_foreach(at(desired, "spec", "ports", NULL), i, want)
	{
		json_t *have = port_named(actual, json_string_value(json_object_get(want, "name")));

		if (have == NULL ||
		    !json_equal(json_object_get(want, "port"), json_object_get(have, "port")) ||
		    !json_equal(json_object_get(want, "targetPort"),
				json_object_get(have, "targetPort")))
			return false;
	}
	return true;
}

/* True when every key of want has the same value in have. */
static bool subset(const json_t *want, const json_t *have)
{
	const char *key = NULL;
	json_t *v = NULL;

	json_object_foreach((json_t *)want, key, v)
	{
		if (!json_equal(v, json_object_get(have, key)))
			return false;
	}
	return true;
}

/*
 * The merge patch of spec.selector: a merge patch merges maps, so every key of the actual
 * selector the desired one lacks is set to null (removed); without that a taken-over Service
 * (the aenix headless one) keeps its old selector keys and drifts forever.
 */
static json_t *selector_patch(const json_t *want, const json_t *have)
{
	json_t *sel = json_is_object(want) ? json_deep_copy(want) : json_object();
	const char *key = NULL;
	json_t *v = NULL;

	if (sel == NULL || !json_is_object(have))
		return sel;
	json_object_foreach((json_t *)have, key, v)
	{
		if (json_object_get(sel, key) == NULL &&
		    json_object_set_new(sel, key, json_null()) != 0) {
			json_decref(sel);
			return NULL;
		}
	}
	return sel;
}

json_t *eo_desired_service_patch(const json_t *desired, const json_t *actual)
{
	json_t *patch = json_object(), *spec = json_object();
	bool ok = patch != NULL && spec != NULL, drift = false;
	json_t *want_labels = eo_meta_get(desired, "labels");
	json_t *pnra = at(desired, "spec", "publishNotReadyAddresses", NULL);

	if (!ok)
		goto out;
	if (!subset(want_labels, eo_meta_get(actual, "labels"))) {
		set(patch, "metadata", json_pack("{s:O}", "labels", want_labels), &ok);
		drift = true;
	}
	if (!json_equal(at(desired, "spec", "selector", NULL),
			at(actual, "spec", "selector", NULL))) {
		set(spec, "selector",
		    selector_patch(at(desired, "spec", "selector", NULL),
				   at(actual, "spec", "selector", NULL)),
		    &ok);
		drift = true;
	}
	if (pnra != NULL &&
	    !json_equal(pnra, at(actual, "spec", "publishNotReadyAddresses", NULL))) {
		set_copy(spec, "publishNotReadyAddresses", pnra, &ok);
		drift = true;
	}
	if (!ports_match(desired, actual)) {
		set_copy(spec, "ports", at(desired, "spec", "ports", NULL), &ok);
		drift = true;
	}
	if (json_object_size(spec) > 0)
		set(patch, "spec", json_incref(spec), &ok);
out:
	json_decref(spec);
	if (!ok || !drift) {
		json_decref(patch);
		return NULL;
	}
	return patch;
}

/* Fields latched into status.observed and copied into new members, besides replicas. */
static const char *const latched[] = {
    "version",
    "storage",
    "resources",
    "affinity",
    "topologySpreadConstraints",
    "options",
    "imagePullSecrets",
    "additionalMetadata",
    "tolerations",
    "nodeSelector",
    "priorityClassName",
    NULL,
};

/* The latched fields a roll carries to existing members (not storage: see desired.h). */
const char *const eo_desired_rolled_fields[] = {
    "version",
    "resources",
    "affinity",
    "topologySpreadConstraints",
    "options",
    "imagePullSecrets",
    "additionalMetadata",
    "tolerations",
    "nodeSelector",
    "priorityClassName",
    NULL,
};

/*
 * The quota spec.quotaGuard.autoRaise set (status.quotaBackendBytes) goes into the target's
 * options when it is above spec.options.quotaBackendBytes (or etcd's default): the members
 * roll onto it like onto any options change, and the user's spec is never edited.
 */
static void raised_quota(const json_t *cluster, json_t *obs, bool *ok)
{
	int64_t raised = eo_cluster_raised_quota(cluster);
	json_t *opts;

	if (raised == 0 || eo_cluster_effective_quota(cluster) != raised)
		return;
	opts = json_object_get(obs, "options");
	if (!json_is_object(opts)) {
		opts = json_object();
		set(obs, "options", opts, ok);
	}
	if (*ok)
		set(opts, "quotaBackendBytes", json_integer((json_int_t)raised), ok);
}

json_t *eo_desired_observed(const json_t *cluster)
{
	json_t *spec = json_object_get(cluster, "spec");
	json_t *obs = NULL;
	bool ok = true;

	if (!json_is_object(spec) || (obs = json_object()) == NULL)
		return NULL;
	set(obs, "replicas", json_integer(eo_cluster_replicas(cluster)), &ok);
	for (size_t i = 0; latched[i] != NULL; i++)
		set_copy(obs, latched[i], json_object_get(spec, latched[i]), &ok);
	if (ok)
		raised_quota(cluster, obs, &ok);
	return finish(obs, ok);
}

json_t *eo_desired_member_tls(const json_t *cluster, bool *ok)
{
	struct eo_cluster_tls t;
	char server[EO_NAME_MAX], peer[EO_NAME_MAX];
	json_t *tls = NULL;

	eo_cluster_tls(cluster, &t);
	if (t.client == EO_TLS_NONE && t.peer == EO_TLS_NONE)
		return NULL;
	tls = json_object();
	if (tls == NULL) {
		*ok = false;
		return NULL;
	}
	if (t.client != EO_TLS_NONE) {
		if (eo_cluster_server_secret_name(cluster, server, sizeof(server)) != 0)
			*ok = false;
		else
			set(tls, "clientServerSecretRef", json_pack("{s:s}", "name", server), ok);
		set(tls, "clientMTLS", json_boolean(t.client_mtls), ok);
	}
	if (t.peer != EO_TLS_NONE) {
		if (eo_cluster_peer_secret_name(cluster, peer, sizeof(peer)) != 0)
			*ok = false;
		else
			set(tls, "peerSecretRef", json_pack("{s:s}", "name", peer), ok);
	}
	/*
	 * The peer certificate the operator requests names the cluster (<c>.<ns>.svc among
	 * its SANs, desired/certificate.h): peers then accept only this cluster's certificate
	 * even from a CA shared with other clusters. Not for your own Secrets, whose names the
	 * operator does not choose. Set on new members only: a running one keeps its flags.
	 */
	if (t.peer == EO_TLS_CERT_MANAGER) {
		char host[EO_NAME_MAX];
		int len = snprintf(host, sizeof(host), "%s.%s.svc", eo_cluster_name(cluster),
				   eo_cluster_namespace(cluster));

		if (len < 0 || (size_t)len >= sizeof(host))
			*ok = false;
		else
			set(tls, "peerAllowedHostname", json_string(host), ok);
	}
	if (!*ok) {
		json_decref(tls);
		return NULL;
	}
	return tls;
}

static const char *const adopted_keys[] = {EO_ANNOTATION_HEADLESS_SERVICE_NAME,
					   EO_ANNOTATION_PEER_AUTO_TLS};

static json_t *new_member(const json_t *cluster, bool seed, const char *name)
{
	const char *cname = eo_cluster_name(cluster);
	const char *ns = eo_cluster_namespace(cluster);
	const char *token = eo_cluster_cluster_token(cluster);
	const json_t *src = eo_cluster_observed(cluster);
	char prefix[EO_NAME_MAX];
	json_t *m = NULL, *md = NULL, *spec = NULL, *refs = NULL, *labels = NULL,
	       *annotations = NULL;
	bool ok = true;

	if (!eo_present(cname) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    eo_name_member_prefix(prefix, sizeof(prefix), cname) != 0)
		return NULL;
	if (src == NULL)
		src = json_object_get(cluster, "spec");
	m = json_pack("{s:s, s:s}", "apiVersion", EO_API_GROUP_VERSION, "kind", EO_KIND_MEMBER);
	md = json_object();
	spec = json_object();
	refs = json_array();
	labels = eo_desired_cluster_labels(cluster, cname);
	annotations = eo_desired_extra_annotations(cluster);
	if (m == NULL || md == NULL || spec == NULL || refs == NULL || labels == NULL ||
	    annotations == NULL) {
		ok = false;
		goto out;
	}
	if (eo_present(name))
		set(md, "name", json_string(name), &ok);
	else
		set(md, "generateName", json_string(prefix), &ok);
	set(md, "namespace", json_string(ns), &ok);
	set(md, "labels", json_incref(labels), &ok);
	/* An adopted cluster's new members are named and secured like the adopted ones. */
	for (size_t i = 0; i < sizeof(adopted_keys) / sizeof(adopted_keys[0]); i++) {
		const char *v = eo_cluster_annotation(cluster, adopted_keys[i]);

		if (v != NULL)
			set(annotations, adopted_keys[i], json_string(v), &ok);
	}
	if (json_object_size(annotations) > 0)
		set(md, "annotations", json_incref(annotations), &ok);
	append(refs, eo_desired_owner_ref(cluster), &ok);
	set(md, "ownerReferences", json_incref(refs), &ok);
	set(md, "finalizers", json_pack("[s]", EO_FINALIZER_MEMBER_CLEANUP), &ok);
	set(m, "metadata", json_incref(md), &ok);

	set(spec, "clusterName", json_string(cname), &ok);
	for (size_t i = 0; latched[i] != NULL; i++)
		set_copy(spec, latched[i], json_object_get(src, latched[i]), &ok);
	set(spec, "bootstrap", json_boolean(seed), &ok);
	set(spec, "initialCluster", json_string(""), &ok);
	set(spec, "clusterToken", json_string(eo_present(token) ? token : ""), &ok);
	set(spec, "replicas", json_integer(1), &ok);
	if (ok) {
		json_t *tls = eo_desired_member_tls(cluster, &ok);
		const char *pat = eo_cluster_annotation(cluster, EO_ANNOTATION_PEER_AUTO_TLS);

		if (ok && pat != NULL && strcmp(pat, "true") == 0 &&
		    json_object_get(tls, "peerSecretRef") == NULL) {
			if (tls == NULL)
				tls = json_object();
			set(tls, "peerAutoTLS", json_true(), &ok);
		}
		if (tls != NULL)
			set(spec, "tls", tls, &ok);
	}
	if (seed)
		set_copy(
		    spec, "restore",
		    json_object_get(json_object_get(json_object_get(cluster, "spec"), "bootstrap"),
				    "restore"),
		    &ok);
	set(m, "spec", json_incref(spec), &ok);
out:
	json_decref(md);
	json_decref(spec);
	json_decref(refs);
	json_decref(labels);
	json_decref(annotations);
	return finish(m, ok);
}

json_t *eo_desired_seed_member(const json_t *cluster, const char *name)
{
	return new_member(cluster, true, name);
}

json_t *eo_desired_joining_member(const json_t *cluster, const char *name)
{
	return new_member(cluster, false, name);
}

int eo_desired_pdb_min_available(int voters, int target)
{
	int n = voters > target ? voters : target;

	return n < 0 ? 1 : n / 2 + 1;
}

json_t *eo_desired_pdb(const json_t *cluster, int min_available)
{
	const char *cname = eo_cluster_name(cluster);
	const char *ns = eo_cluster_namespace(cluster);
	char name[EO_NAME_MAX];
	json_t *pdb = NULL, *spec = NULL;
	bool ok = true;

	if (!eo_present(cname) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    eo_name_headless_service(name, sizeof(name), cname) != 0)
		return NULL;
	pdb = json_pack("{s:s, s:s}", "apiVersion", "policy/v1", "kind", "PodDisruptionBudget");
	spec = json_object();
	if (pdb == NULL || spec == NULL) {
		json_decref(spec);
		return finish(pdb, false);
	}
	set(pdb, "metadata",
	    owned_metadata(cluster, name, ns, eo_desired_cluster_labels(cluster, cname),
			   eo_desired_extra_annotations(cluster)),
	    &ok);
	set(spec, "minAvailable", json_integer(min_available), &ok);
	set(spec, "selector",
	    json_pack("{s:{s:s, s:s}}", "matchLabels", EO_LABEL_CLUSTER, cname, EO_LABEL_ROLE,
		      EO_LABEL_ROLE_VOTER),
	    &ok);
	set(pdb, "spec", spec, &ok);
	return finish(pdb, ok);
}

json_t *eo_desired_pdb_patch(const json_t *desired, const json_t *actual)
{
	json_t *want = json_object_get(desired, "spec"), *have = json_object_get(actual, "spec");

	if (json_equal(json_object_get(want, "minAvailable"),
		       json_object_get(have, "minAvailable")) &&
	    json_equal(json_object_get(want, "selector"), json_object_get(have, "selector")) &&
	    json_object_get(have, "maxUnavailable") == NULL)
		return NULL;
	return json_pack("{s:{s:O, s:O, s:n}}", "spec", "minAvailable",
			 json_object_get(want, "minAvailable"), "selector",
			 json_object_get(want, "selector"), "maxUnavailable");
}

/* --- member-owned objects --- */

json_t *eo_desired_member_labels(const json_t *member, bool voter)
{
	const char *cname = eo_member_cluster_name(member);
	const char *mname = eo_member_name(member);
	json_t *l = NULL;
	bool ok = true;

	if (!eo_present(mname) || (l = eo_desired_cluster_labels(member, cname)) == NULL)
		return NULL;
	set(l, EO_LABEL_COMPONENT, json_string(mname), &ok);
	if (voter)
		set(l, EO_LABEL_ROLE, json_string(EO_LABEL_ROLE_VOTER), &ok);
	return finish(l, ok);
}

static bool member_ids_ok(const json_t *member)
{
	return eo_present(eo_member_name(member)) && eo_present(eo_member_namespace(member)) &&
	       eo_present(eo_member_uid(member)) && eo_present(eo_member_cluster_name(member));
}

json_t *eo_desired_member_pvc(const json_t *member)
{
	char name[EO_NAME_MAX];
	struct eo_storage st;
	json_t *pvc = NULL, *spec = NULL;
	bool ok = true;

	if (!member_ids_ok(member) ||
	    eo_name_member_pvc(name, sizeof(name), eo_member_name(member)) != 0)
		return NULL;
	eo_member_storage(member, &st);
	pvc = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "PersistentVolumeClaim");
	spec = json_object();
	if (pvc == NULL || spec == NULL) {
		json_decref(spec);
		return finish(pvc, false);
	}
	set(pvc, "metadata",
	    owned_metadata(member, name, eo_member_namespace(member),
			   eo_desired_member_labels(member, false),
			   eo_desired_extra_annotations(member)),
	    &ok);
	set(spec, "accessModes", json_pack("[s]", "ReadWriteOnce"), &ok);
	set(spec, "resources", json_pack("{s:{s:s}}", "requests", "storage", st.size), &ok);
	if (st.has_class)
		set(spec, "storageClassName", json_string(st.class_name ? st.class_name : ""), &ok);
	set(pvc, "spec", spec, &ok);
	return finish(pvc, ok);
}

static void add_arg(json_t *cmd, bool *ok, const char *f, ...)
    __attribute__((format(printf, 3, 4)));
static void add_arg(json_t *cmd, bool *ok, const char *f, ...)
{
	char buf[4096];
	va_list ap;
	int len;

	va_start(ap, f);
	len = vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(buf)) {
		*ok = false;
		return;
	}
	append(cmd, json_string(buf), ok);
}

static json_t *etcd_command(const json_t *member, const struct eo_desired_opts *o, bool state_new)
{
	const char *m = eo_member_name(member), *c = eo_member_service(member);
	const char *ns = eo_member_namespace(member);
	char peer[EO_DESIRED_URL_MAX], client[EO_DESIRED_URL_MAX];
	struct eo_etcd_options opt;
	struct eo_member_tls tls;
	json_t *cmd = json_array();
	bool ok = cmd != NULL, ctls, ptls;

	eo_member_tls(member, &tls);
	ctls = tls.client_server_secret != NULL;
	ptls = tls.peer_secret != NULL || tls.peer_auto_tls;
	if (!ok || eo_desired_member_peer_url(peer, sizeof(peer), o, m, c, ns, ptls) != 0 ||
	    eo_desired_member_client_url(client, sizeof(client), o, m, c, ns, ctls) != 0)
		return finish(cmd, false);
	eo_member_options(member, &opt);
	append(cmd, json_string("etcd"), &ok);
	add_arg(cmd, &ok, "--name=%s", m);
	add_arg(cmd, &ok, "--data-dir=%s", EO_ETCD_DATA_DIR);
	add_arg(cmd, &ok, "--listen-peer-urls=%s://0.0.0.0:%d", ptls ? "https" : "http",
		EO_PORT_PEER);
	add_arg(cmd, &ok, "--listen-client-urls=%s://0.0.0.0:%d", ctls ? "https" : "http",
		EO_PORT_CLIENT);
	add_arg(cmd, &ok, "--advertise-client-urls=%s", client);
	add_arg(cmd, &ok, "--initial-advertise-peer-urls=%s", peer);
	add_arg(cmd, &ok, "--initial-cluster=%s", eo_member_initial_cluster(member));
	add_arg(cmd, &ok, "--initial-cluster-token=%s", eo_member_cluster_token(member));
	add_arg(cmd, &ok, "--initial-cluster-state=%s", state_new ? "new" : "existing");
	/* Quorum-loss recovery (plan/forcenew.h): only while the member is marked "forcing". */
	if (eo_desired_member_forces_new_cluster(member))
		add_arg(cmd, &ok, "%s", EO_DESIRED_FORCE_NEW_CLUSTER_FLAG);
	/* Metrics and /health stay plaintext, whatever the client API does: the probes use it. */
	add_arg(cmd, &ok, "--listen-metrics-urls=http://0.0.0.0:%d", EO_PORT_METRICS);
	if (ctls) {
		add_arg(cmd, &ok, "--cert-file=%s/tls.crt", EO_DESIRED_TLS_CLIENT_DIR);
		add_arg(cmd, &ok, "--key-file=%s/tls.key", EO_DESIRED_TLS_CLIENT_DIR);
		/*
		 * etcd asks every client for a certificate as soon as it has a trusted CA file,
		 * so the CA goes in only with client certificate authentication.
		 */
		if (tls.client_mtls) {
			add_arg(cmd, &ok, "--client-cert-auth=true");
			add_arg(cmd, &ok, "--trusted-ca-file=%s/ca.crt", EO_DESIRED_TLS_CLIENT_DIR);
		}
	}
	if (tls.peer_secret != NULL) {
		add_arg(cmd, &ok, "--peer-cert-file=%s/tls.crt", EO_DESIRED_TLS_PEER_DIR);
		add_arg(cmd, &ok, "--peer-key-file=%s/tls.key", EO_DESIRED_TLS_PEER_DIR);
		add_arg(cmd, &ok, "--peer-client-cert-auth=true");
		add_arg(cmd, &ok, "--peer-trusted-ca-file=%s/ca.crt", EO_DESIRED_TLS_PEER_DIR);
		if (tls.peer_allowed_hostname != NULL)
			add_arg(cmd, &ok, "--peer-cert-allowed-hostname=%s",
				tls.peer_allowed_hostname);
	} else if (tls.peer_auto_tls) {
		add_arg(cmd, &ok, "--peer-auto-tls=true");
	}
	if (opt.quota_backend_bytes > 0)
		add_arg(cmd, &ok, "--quota-backend-bytes=%lld", (long long)opt.quota_backend_bytes);
	if (eo_present(opt.auto_compaction_mode))
		add_arg(cmd, &ok, "--auto-compaction-mode=%s", opt.auto_compaction_mode);
	if (eo_present(opt.auto_compaction_retention))
		add_arg(cmd, &ok, "--auto-compaction-retention=%s", opt.auto_compaction_retention);
	if (opt.snapshot_count > 0)
		add_arg(cmd, &ok, "--snapshot-count=%lld", (long long)opt.snapshot_count);
	return finish(cmd, ok);
}

/* The data directory, and the TLS Secrets read-only when the member uses them. */
static json_t *volume_mounts(const json_t *member)
{
	struct eo_member_tls tls;
	const char *sub = eo_member_data_subpath(member);
	json_t *mounts =
	    json_pack("[{s:s, s:s}]", "name", DATA_VOLUME, "mountPath", EO_ETCD_DATA_DIR);
	bool ok = mounts != NULL;

	/* An adopted legacy member keeps its data where the legacy Pod had it on the PVC. */
	if (ok && sub != NULL)
		set(json_array_get(mounts, 0), "subPath", json_string(sub), &ok);
	eo_member_tls(member, &tls);
	if (ok && tls.client_server_secret != NULL)
		append(mounts,
		       json_pack("{s:s, s:s, s:b}", "name", TLS_CLIENT_VOLUME, "mountPath",
				 EO_DESIRED_TLS_CLIENT_DIR, "readOnly", 1),
		       &ok);
	if (ok && tls.peer_secret != NULL)
		append(mounts,
		       json_pack("{s:s, s:s, s:b}", "name", TLS_PEER_VOLUME, "mountPath",
				 EO_DESIRED_TLS_PEER_DIR, "readOnly", 1),
		       &ok);
	return finish(mounts, ok);
}

/* A Secret volume, files readable by the owner and the Pod's fsGroup only (0440). */
static json_t *secret_volume(const char *name, const char *secret)
{
	return json_pack("{s:s, s:{s:s, s:i}}", "name", name, "secret", "secretName", secret,
			 "defaultMode", 0440);
}

static json_t *etcd_container(const json_t *member, const struct eo_desired_opts *o, bool state_new)
{
	char image[640];
	json_t *ctr = NULL;
	bool ok = true;

	if (eo_name_etcd_image(image, sizeof(image), o ? o->etcd_image_repository : NULL,
			       eo_member_version(member)) != 0)
		return NULL;
	ctr = json_object();
	if (ctr == NULL)
		return NULL;
	set(ctr, "name", json_string(CONTAINER_NAME), &ok);
	set(ctr, "image", json_string(image), &ok);
	set(ctr, "imagePullPolicy", json_string("IfNotPresent"), &ok);
	set(ctr, "command", etcd_command(member, o, state_new), &ok);
	set(ctr, "ports",
	    json_pack("[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}]", "name",
		      EO_PORT_NAME_CLIENT, "containerPort", EO_PORT_CLIENT, "protocol", "TCP",
		      "name", EO_PORT_NAME_PEER, "containerPort", EO_PORT_PEER, "protocol", "TCP",
		      "name", EO_PORT_NAME_METRICS, "containerPort", EO_PORT_METRICS, "protocol",
		      "TCP"),
	    &ok);
	set(ctr, "livenessProbe",
	    json_pack("{s:{s:i}, s:i, s:i, s:i}", "tcpSocket", "port", EO_PORT_PEER,
		      "initialDelaySeconds", 15, "periodSeconds", 10, "failureThreshold", 3),
	    &ok);
	/*
	 * Readiness gates the next step (the seed's cluster discovery, a learner's promotion), so
	 * it is probed every second from the first second on, as kubeadm probes its etcd: a member
	 * is reported ready about a second after /health passes, not after a 5 s delay and period.
	 * 15 failures in a row still take it out of ready, the same 15 s as before.
	 */
	set(ctr, "readinessProbe",
	    json_pack("{s:{s:s, s:i, s:s}, s:i, s:i, s:i}", "httpGet", "path", "/health", "port",
		      EO_PORT_METRICS, "scheme", "HTTP", "initialDelaySeconds", 1, "periodSeconds",
		      1, "failureThreshold", 15),
	    &ok);
	set(ctr, "resources", eo_member_resources(member), &ok);
	/*
	 * Restricted: etcd writes only its data dir (the volume below), so the image's root
	 * filesystem is mounted read-only; seccomp RuntimeDefault and the user are set on the Pod.
	 */
	set(ctr, "securityContext",
	    json_pack("{s:b, s:b, s:b, s:{s:[s]}}", "runAsNonRoot", 1, "allowPrivilegeEscalation",
		      0, "readOnlyRootFilesystem", 1, "capabilities", "drop", "ALL"),
	    &ok);
	set(ctr, "volumeMounts", volume_mounts(member), &ok);
	return finish(ctr, ok);
}

/*
 * When spec.affinity is empty: spread the cluster's member Pods over nodes. A memory member's
 * data lives only in its Pod, so two on one node are lost together with that node (or one
 * drain): required, one member per node. A PVC member's data survives its node: preferred
 * (soft, so a one-node cluster still schedules every member).
 */
static json_t *default_affinity(const char *cluster, bool memory)
{
	if (memory)
		return json_pack("{s:{s:[{s:s, s:{s:{s:s}}}]}}", "podAntiAffinity",
				 "requiredDuringSchedulingIgnoredDuringExecution", "topologyKey",
				 "kubernetes.io/hostname", "labelSelector", "matchLabels",
				 EO_LABEL_CLUSTER, cluster);
	return json_pack("{s:{s:[{s:i, s:{s:s, s:{s:{s:s}}}}]}}", "podAntiAffinity",
			 "preferredDuringSchedulingIgnoredDuringExecution", "weight", 100,
			 "podAffinityTerm", "topologyKey", "kubernetes.io/hostname",
			 "labelSelector", "matchLabels", EO_LABEL_CLUSTER, cluster);
}

/*
 * RFC 7386 merge patch turning have into want: objects recurse (a key want lacks becomes
 * null), anything else is replaced whole. New reference.
 */
static json_t *merge_diff(const json_t *have, const json_t *want)
{
	const char *k = NULL;
	json_t *v = NULL, *out = NULL;
	bool ok = true;

	if (!json_is_object(have) || !json_is_object(want))
		return json_deep_copy(want);
	if ((out = json_object()) == NULL)
		return NULL;
	json_object_foreach((json_t *)want, k, v)
	{
		json_t *h = json_object_get(have, k);

		if (h == NULL || !json_equal(h, v))
			set(out, k, merge_diff(h, v), &ok);
	}
	json_object_foreach((json_t *)have, k, v)
	{
		if (json_object_get(want, k) == NULL)
			set(out, k, json_null(), &ok);
	}
	return finish(out, ok);
}

/* metadata.annotations[key] = value, the annotations object created when absent. */
static void stamp_annotation(json_t *md, const char *key, const char *value, bool *ok)
{
	json_t *ann = json_object_get(md, "annotations");

	if (!*ok)
		return;
	if (!json_is_object(md)) {
		*ok = false;
		return;
	}
	if (ann == NULL) {
		ann = json_object();
		set(md, "annotations", ann, ok);
	}
	if (*ok)
		set(ann, key, json_string(value), ok);
}

/*
 * A member adopted from the legacy operator (docs/migration.md) finds its data written by
 * an etcd that ran as root: this init container gives it to etcd's user first (the agent's
 * adopt-data, agent/adopt.h). Root with CAP_CHOWN and CAP_DAC_OVERRIDE only (the baseline
 * Pod Security level admits both); a no-op walk once the files are etcd's.
 */
static json_t *adopt_data_init(const json_t *member, const struct eo_desired_opts *o)
{
	char id[24];

	snprintf(id, sizeof(id), "%ld", eo_desired_pod_uid(o));
	return json_pack("{s:s, s:s, s:s, s:[s, s, s, s, s, s, s], s:[{s:s, s:s, s:s}], "
			 "s:{s:i, s:b, s:b, s:b, s:{s:[s], s:[s, s]}}, s:s}",
			 "name", EO_DESIRED_ADOPT_CONTAINER, "image", o->operator_image,
			 "imagePullPolicy", "IfNotPresent", "args", "adopt-data", "--data-dir",
			 EO_ETCD_DATA_DIR, "--uid", id, "--gid", id, "volumeMounts", "name",
			 DATA_VOLUME, "mountPath", EO_ETCD_DATA_DIR, "subPath",
			 eo_member_data_subpath(member), "securityContext", "runAsUser", 0,
			 "runAsNonRoot", 0, "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem",
			 1, "capabilities", "drop", "ALL", "add", "CHOWN", "DAC_OVERRIDE",
			 "terminationMessagePolicy", "FallbackToLogsOnError");
}

/*
 * A member etcd knows by an ID never starts without its data (agent/dataguard.h): the
 * operator image checks for the write-ahead log before etcd runs, and exits
 * EO_DATA_GUARD_EXIT_NO_WAL when it is gone (the cluster controller then replaces the member).
 * Runs as etcd's user, after adopt-data (which makes the files etcd's).
 */
static json_t *data_guard_init(const json_t *member, const struct eo_desired_opts *o)
{
	json_t *ctr = json_pack(
	    "{s:s, s:s, s:s, s:[s, s, s, s, s, s, s, s, s], s:[{s:s, s:s, s:b}], "
	    "s:{s:b, s:b, s:b, s:{s:[s]}}, s:s}",
	    "name", EO_DESIRED_DATA_GUARD_CONTAINER, "image", o->operator_image, "imagePullPolicy",
	    "IfNotPresent", "args", "data-guard", "--data-dir", EO_ETCD_DATA_DIR, "--member-id",
	    eo_member_member_id(member), "--name", eo_member_name(member), "--termination-log",
	    "/dev/termination-log", "volumeMounts", "name", DATA_VOLUME, "mountPath",
	    EO_ETCD_DATA_DIR, "readOnly", 1, "securityContext", "runAsNonRoot", 1,
	    "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem", 1, "capabilities", "drop",
	    "ALL", "terminationMessagePolicy", "FallbackToLogsOnError");
	bool ok = ctr != NULL;
	const char *sub = eo_member_data_subpath(member);

	if (ok && sub != NULL)
		set(json_array_get(json_object_get(ctr, "volumeMounts"), 0), "subPath",
		    json_string(sub), &ok);
	return finish(ctr, ok);
}

/*
 * A member that joins a running cluster waits, bounded, until a peer accepts on its peer port
 * (agent/waitpeers.h): a network policy programmed after the Pod started would otherwise
 * refuse etcd's one-shot join, and the kubelet's back-off would hold the member down for
 * 10-20 s. Always exits 0. No volume, etcd's user.
 */
static json_t *wait_peers_init(const json_t *member, const struct eo_desired_opts *o)
{
	return json_pack("{s:s, s:s, s:s, s:[s, s, s, s, s, s, s], "
			 "s:{s:b, s:b, s:b, s:{s:[s]}}, s:s}",
			 "name", EO_DESIRED_WAIT_PEERS_CONTAINER, "image", o->operator_image,
			 "imagePullPolicy", "IfNotPresent", "args", "wait-peers", "--name",
			 eo_member_name(member), "--initial-cluster",
			 eo_member_initial_cluster(member), "--timeout",
			 EO_DESIRED_WAIT_PEERS_TIMEOUT, "securityContext", "runAsNonRoot", 1,
			 "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem", 1, "capabilities",
			 "drop", "ALL", "terminationMessagePolicy", "FallbackToLogsOnError");
}

/*
 * The init containers of a member's Pod, in order: adopt-data (an adopted legacy member),
 * data-guard (a member with an ID), wait-peers (a member joining without an ID yet), or the
 * restore pair (a restoring seed before the cluster ever bootstrapped; never together with the
 * guard: one needs a member ID, the other none).
 */
static void add_init(json_t *spec, json_t *ctr, bool *ok)
{
	json_t *inits = json_object_get(spec, "initContainers");

	if (!*ok || ctr == NULL) {
		json_decref(ctr);
		*ok = false;
		return;
	}
	if (inits == NULL) {
		inits = json_array();
		set(spec, "initContainers", inits, ok);
	}
	append(inits, ctr, ok);
}

static json_t *build_pod(const json_t *member, const struct eo_desired_opts *o,
			 bool cluster_bootstrapped)
{
	const char *mname = eo_member_name(member);
	struct eo_storage st;
	char pvc[EO_NAME_MAX];
	const json_t *aff = NULL;
	json_t *pod = NULL, *spec = NULL, *vol = NULL;
	bool ok = true, state_new;

	if (!member_ids_ok(member) || !eo_present(eo_member_version(member)) ||
	    eo_name_member_pvc(pvc, sizeof(pvc), mname) != 0)
		return NULL;
	state_new = eo_member_bootstrap(member) && !eo_present(eo_member_member_id(member)) &&
		    !cluster_bootstrapped;
	eo_member_storage(member, &st);
	pod = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "Pod");
	spec = json_object();
	if (pod == NULL || spec == NULL) {
		json_decref(spec);
		return finish(pod, false);
	}
	set(pod, "metadata",
	    owned_metadata(member, mname, eo_member_namespace(member),
			   eo_desired_member_labels(member, eo_member_is_voter(member)),
			   eo_desired_extra_annotations(member)),
	    &ok);
	set(spec, "hostname", json_string(mname), &ok);
	set(spec, "subdomain", json_string(eo_member_service(member)), &ok);
	set(spec, "automountServiceAccountToken", json_false(), &ok);
	set(spec, "enableServiceLinks", json_false(), &ok);
	set(spec, "securityContext", eo_desired_pod_security_context(o, false), &ok);
	set(spec, "containers", json_pack("[o]", etcd_container(member, o, state_new)), &ok);
	if (st.memory)
		vol = json_pack("{s:s, s:{s:s, s:s}}", "name", DATA_VOLUME, "emptyDir", "medium",
				EO_STORAGE_MEDIUM_MEMORY, "sizeLimit", st.size);
	else
		vol = json_pack("{s:s, s:{s:s}}", "name", DATA_VOLUME, "persistentVolumeClaim",
				"claimName", pvc);
	set(spec, "volumes", json_pack("[o]", vol), &ok);
	if (ok) {
		struct eo_member_tls tls;
		json_t *vols = json_object_get(spec, "volumes");

		eo_member_tls(member, &tls);
		if (tls.client_server_secret != NULL)
			append(vols, secret_volume(TLS_CLIENT_VOLUME, tls.client_server_secret),
			       &ok);
		if (tls.peer_secret != NULL)
			append(vols, secret_volume(TLS_PEER_VOLUME, tls.peer_secret), &ok);
		if (ok && (tls.client_server_secret != NULL || tls.peer_secret != NULL) &&
		    o != NULL && eo_present(o->ca_bundle_digest))
			stamp_annotation(json_object_get(pod, "metadata"),
					 EO_ANNOTATION_CA_BUNDLE_DIGEST, o->ca_bundle_digest, &ok);
	}
	/*
	 * A restore runs once: only while neither the cluster nor the member has an etcd ID.
	 * After that the seed's Pod neither restores nor mounts the source, so a lost data dir
	 * is the data guard's case and a deleted source never keeps the seed from starting.
	 */
	if (ok && eo_desired_member_restores(member) && !cluster_bootstrapped &&
	    !eo_present(eo_member_member_id(member))) {
		char image[640];

		ok = eo_name_etcd_image(image, sizeof(image), o ? o->etcd_image_repository : NULL,
					eo_member_version(member)) == 0 &&
		     eo_desired_restore_init(member, o, image, spec) == 0;
	}
	/* auto mode: no root container, no UID to give the data to (desired.h) */
	if (ok && eo_member_data_subpath(member) != NULL && o != NULL &&
	    eo_present(o->operator_image) && eo_desired_pod_uid(o) != EO_DESIRED_POD_UID_AUTO)
		add_init(spec, adopt_data_init(member, o), &ok);
	if (ok && eo_present(eo_member_member_id(member)) && o != NULL &&
	    eo_present(o->operator_image))
		add_init(spec, data_guard_init(member, o), &ok);
	/* wait-peers only when the initial cluster names a peer besides this member */
	if (ok && !state_new && !eo_present(eo_member_member_id(member)) &&
	    eo_present(eo_member_initial_cluster(member)) &&
	    strchr(eo_member_initial_cluster(member), ',') != NULL && o != NULL &&
	    eo_present(o->operator_image))
		add_init(spec, wait_peers_init(member, o), &ok);
	aff = eo_member_affinity(member);
	if (aff != NULL && json_object_size(aff) > 0) {
		set_copy(spec, "affinity", aff, &ok);
	} else {
		set(spec, "affinity", default_affinity(eo_member_cluster_name(member), st.memory),
		    &ok);
	}
	set_copy(spec, "topologySpreadConstraints", eo_member_topology_spread_constraints(member),
		 &ok);
	set_copy(spec, "imagePullSecrets", eo_member_image_pull_secrets(member), &ok);
	set_copy(spec, "tolerations", eo_member_tolerations(member), &ok);
	set_copy(spec, "nodeSelector", eo_member_node_selector(member), &ok);
	if (eo_member_priority_class_name(member) != NULL)
		set(spec, "priorityClassName", json_string(eo_member_priority_class_name(member)),
		    &ok);
	set(pod, "spec", spec, &ok);
	return finish(pod, ok);
}

bool eo_desired_member_forces_new_cluster(const json_t *member)
{
	const char *step = eo_meta_annotation(member, EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP);

	return step != NULL && strcmp(step, EO_DESIRED_FORCE_NEW_CLUSTER_STEP_FORCING) == 0;
}

bool eo_desired_pod_forces_new_cluster(const json_t *pod)
{
	const json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers");
	const json_t *ctr = NULL, *arg = NULL;
	size_t i, j;

	json_array_foreach(ctrs, i, ctr)
	{
		const char *name = json_string_value(json_object_get(ctr, "name"));

		if (name == NULL || strcmp(name, CONTAINER_NAME) != 0)
			continue;
		json_array_foreach(json_object_get(ctr, "command"), j, arg)
		{
			const char *a = json_string_value(arg);

			if (a != NULL &&
			    (strcmp(a, EO_DESIRED_FORCE_NEW_CLUSTER_FLAG) == 0 ||
			     strcmp(a, EO_DESIRED_FORCE_NEW_CLUSTER_FLAG "=true") == 0))
				return true;
		}
	}
	return false;
}

/*
 * The data guard and wait-peers are left out of the hash: both turn with the member ID, which
 * a member learns after its first Pod started (wait-peers goes, the guard comes), so counting
 * them would roll every member once after it joined (and every running Pod when the operator
 * is upgraded). Every Pod created after the member joined carries the guard; a Pod that
 * predates the ID keeps running without it, and with wait-peers, until it is replaced for
 * another reason (docs/concepts.md, "A wiped data directory" and "Joining behind a network
 * policy").
 */
static void drop_id_dependent_inits(json_t *spec)
{
	json_t *inits = json_object_get(spec, "initContainers");
	size_t i = 0;

	while (i < json_array_size(inits)) {
		const char *name =
		    json_string_value(json_object_get(json_array_get(inits, i), "name"));

		if (name != NULL && (strcmp(name, EO_DESIRED_DATA_GUARD_CONTAINER) == 0 ||
				     strcmp(name, EO_DESIRED_WAIT_PEERS_CONTAINER) == 0))
			json_array_remove(inits, i);
		else
			i++;
	}
	if (inits != NULL && json_array_size(inits) == 0)
		json_object_del(spec, "initContainers");
}

int eo_desired_pod_hash(const json_t *pod, char *buf, size_t n)
{
	json_t *c = NULL, *md = NULL;
	char *text = NULL;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
	int w;

	if (buf == NULL || n == 0 || !json_is_object(pod))
		return -1;
	buf[0] = '\0';
	if ((c = json_deep_copy(pod)) == NULL)
		return -1;
	md = json_object_get(c, "metadata");
	/* What moves by itself (the voter label) or is the hash is left out. */
	json_object_del(json_object_get(md, "labels"), EO_LABEL_ROLE);
	drop_id_dependent_inits(json_object_get(c, "spec"));
	json_object_del(json_object_get(md, "annotations"), EO_ANNOTATION_POD_HASH);
	if (json_object_size(json_object_get(md, "annotations")) == 0)
		json_object_del(md, "annotations");
	text = eo_json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS, NULL); /* NULL, never half a text */
	json_decref(c);
	if (text == NULL)
		return -1;
	for (const char *p = text; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ULL;
	}
	free(text);
	w = snprintf(buf, n, "%016llx", (unsigned long long)h);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

int eo_desired_member_pod_hash(const json_t *member, const struct eo_desired_opts *o, char *buf,
			       size_t n)
{
	json_t *pod = build_pod(member, o, true);
	int rc = pod != NULL ? eo_desired_pod_hash(pod, buf, n) : -1;

	json_decref(pod);
	return rc;
}

json_t *eo_desired_member_pod(const json_t *member, const struct eo_desired_opts *o,
			      bool cluster_bootstrapped)
{
	char hash[EO_DESIRED_HASH_MAX];
	json_t *pod = build_pod(member, o, cluster_bootstrapped);
	bool ok = pod != NULL;

	/*
	 * The hash is that of the Pod built as for a bootstrapped cluster: the Pod just built
	 * when the cluster is, a second build only for a seed's first Pod.
	 */
	if (!ok ||
	    (cluster_bootstrapped ? eo_desired_pod_hash(pod, hash, sizeof(hash))
				  : eo_desired_member_pod_hash(member, o, hash, sizeof(hash))) != 0)
		return finish(pod, false);
	stamp_annotation(json_object_get(pod, "metadata"), EO_ANNOTATION_POD_HASH, hash, &ok);
	return finish(pod, ok);
}

json_t *eo_desired_member_roll_patch(const json_t *member, const json_t *observed)
{
	const json_t *have = json_object_get(member, "spec");
	json_t *patch = json_object(), *spec = json_object();
	bool ok = patch != NULL && spec != NULL && json_is_object(observed);

	for (size_t i = 0; ok && eo_desired_rolled_fields[i] != NULL; i++) {
		const char *k = eo_desired_rolled_fields[i];
		json_t *want = json_object_get(observed, k), *cur = json_object_get(have, k);

		if (want == NULL && cur != NULL)
			set(spec, k, json_null(), &ok);
		else if (want != NULL && (cur == NULL || !json_equal(want, cur)))
			set(spec, k, merge_diff(cur, want), &ok);
	}
	if (ok && json_object_size(spec) == 0) {
		json_decref(spec);
		json_decref(patch);
		return json_object();
	}
	set(patch, "spec", spec, &ok);
	/* An adopted legacy Pod stops counting as current: this roll replaces it. */
	if (ok && eo_member_adopted_pod_uid(member) != NULL)
		set(patch, "metadata",
		    json_pack("{s:{s:n}}", "annotations", EO_ANNOTATION_ADOPTED_POD_UID), &ok);
	return finish(patch, ok);
}

json_t *eo_desired_member_with_target(const json_t *member, const json_t *observed)
{
	json_t *m = json_deep_copy(member), *spec = NULL;
	bool ok = m != NULL && json_is_object(observed);

	if (ok && !json_is_object(spec = json_object_get(m, "spec"))) {
		spec = json_object();
		set(m, "spec", spec, &ok);
	}
	for (size_t i = 0; ok && eo_desired_rolled_fields[i] != NULL; i++) {
		const char *k = eo_desired_rolled_fields[i];
		json_t *want = json_object_get(observed, k);

		if (want == NULL)
			json_object_del(spec, k);
		else
			set(spec, k, json_deep_copy(want), &ok);
	}
	return finish(m, ok);
}

bool eo_desired_member_on_target(const json_t *member, const json_t *observed)
{
	const json_t *have = json_object_get(member, "spec");

	for (size_t i = 0; eo_desired_rolled_fields[i] != NULL; i++) {
		const char *k = eo_desired_rolled_fields[i];
		json_t *want = json_object_get(observed, k), *cur = json_object_get(have, k);

		if ((want == NULL) != (cur == NULL) || (want != NULL && !json_equal(want, cur)))
			return false;
	}
	return true;
}
