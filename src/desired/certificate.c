/*
 * desired/certificate.c - cert-manager Certificates of a cluster. See certificate.h.
 */
#include "desired/certificate.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/util.h"

#define DEFAULT_CLUSTER_DOMAIN "cluster.local"
#define SAN_MAX		       (EO_NAME_MAX * 2 + 32)

static const char *const ROLE_NAMES[EO_CERT_ROLE_COUNT_] = {"server", "operator-client", "peer",
							    "cluster-ca"};
static const char *const CA_ISSUER_SUFFIX[EO_CA_ISSUER_COUNT_] = {"cluster-ca-bootstrap",
								  "cluster-ca"};

/* Ten years, written as cert-manager's Go duration prints it (no drift on read-back). */
#define CA_DURATION "87600h0m0s"

const char *eo_cert_role_name(enum eo_cert_role role)
{
	return (unsigned)role < EO_CERT_ROLE_COUNT_ ? ROLE_NAMES[role] : "unknown";
}

static void set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (value == NULL || json_object_set_new(obj, key, value) != 0)
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

/* The issuer reference of a leaf role in the spec, or NULL-named when the role is not wanted. */
static struct eo_issuer_ref role_issuer(const json_t *cluster, enum eo_cert_role role)
{
	struct eo_cluster_tls t;
	struct eo_issuer_ref none = {NULL, NULL};

	eo_cluster_tls(cluster, &t);
	switch (role) {
	case EO_CERT_SERVER:
		return t.client == EO_TLS_CERT_MANAGER ? t.server_issuer : none;
	case EO_CERT_OPERATOR_CLIENT:
		return t.client == EO_TLS_CERT_MANAGER && t.client_mtls ? t.operator_client_issuer
									: none;
	case EO_CERT_PEER:
		return t.peer == EO_TLS_CERT_MANAGER ? t.peer_issuer : none;
	default:
		return none;
	}
}

bool eo_desired_certificate_wanted(const json_t *cluster, enum eo_cert_role role,
				   bool per_cluster_ca)
{
	if (role == EO_CERT_CA)
		return per_cluster_ca && eo_cluster_uses_cert_manager(cluster);
	return eo_present(role_issuer(cluster, role).name);
}

int eo_desired_ca_issuer_name(char *buf, size_t n, const char *cluster, enum eo_ca_issuer which)
{
	int len;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (!eo_present(cluster) || (unsigned)which >= EO_CA_ISSUER_COUNT_)
		return -1;
	len = snprintf(buf, n, "%s-%s", cluster, CA_ISSUER_SUFFIX[which]);
	if (len < 0 || (size_t)len >= n || (size_t)len > EO_NAME_MAX - 1) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_desired_certificate_name(char *buf, size_t n, const char *cluster, enum eo_cert_role role)
{
	int len;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (!eo_present(cluster) || (unsigned)role >= EO_CERT_ROLE_COUNT_)
		return -1;
	len = snprintf(buf, n, "%s-%s", cluster, ROLE_NAMES[role]);
	if (len < 0 || (size_t)len >= n || (size_t)len > EO_NAME_MAX - 1) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_desired_certificate_issuer(const json_t *cluster, enum eo_cert_role role,
				  bool per_cluster_ca, char *buf, size_t n, const char **name,
				  const char **kind)
{
	struct eo_issuer_ref r = role_issuer(cluster, role);

	if (!eo_desired_certificate_wanted(cluster, role, per_cluster_ca))
		return -1;
	if (per_cluster_ca) {
		if (eo_desired_ca_issuer_name(buf, n, eo_cluster_name(cluster),
					      role == EO_CERT_CA ? EO_CA_ISSUER_SELFSIGNED
								 : EO_CA_ISSUER_CA) != 0)
			return -1;
		*name = buf;
		*kind = EO_CERT_MANAGER_ISSUER_KIND;
		return 0;
	}
	if (!eo_present(r.name))
		return -1;
	*name = r.name;
	*kind = eo_present(r.kind) ? r.kind : EO_DEFAULT_ISSUER_KIND;
	return 0;
}

/* Appends printf(fmt, ...) to arr; remembers failure (also truncation) in *ok. */
static void san(json_t *arr, bool *ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void san(json_t *arr, bool *ok, const char *fmt, ...)
{
	char buf[SAN_MAX];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(buf) ||
	    json_array_append_new(arr, json_string(buf)) != 0)
		*ok = false;
}

static json_t *dns_names(enum eo_cert_role role, const char *c, const char *ns, const char *d)
{
	json_t *a = json_array();
	bool ok = a != NULL;

	if (!ok)
		return NULL;
	/* Each member: <member>.<cluster>.<ns>.svc[.<domain>] (the headless Service's names). */
	san(a, &ok, "*.%s.%s.svc", c, ns);
	san(a, &ok, "*.%s.%s.svc.%s", c, ns, d);
	san(a, &ok, "%s.%s.svc", c, ns);
	san(a, &ok, "%s.%s.svc.%s", c, ns, d);
	if (role == EO_CERT_SERVER) {
		san(a, &ok, "%s-client", c);
		san(a, &ok, "%s-client.%s", c, ns);
		san(a, &ok, "%s-client.%s.svc", c, ns);
		san(a, &ok, "%s-client.%s.svc.%s", c, ns, d);
		san(a, &ok, "localhost");
	}
	return finish(a, ok);
}

static json_t *usages(enum eo_cert_role role)
{
	if (role == EO_CERT_CA)
		return json_pack("[s, s, s]", "cert sign", "crl sign", "digital signature");
	if (role == EO_CERT_OPERATOR_CLIENT)
		return json_pack("[s, s, s]", "digital signature", "key encipherment",
				 "client auth");
	return json_pack("[s, s, s, s]", "digital signature", "key encipherment", "server auth",
			 "client auth");
}

static json_t *metadata(const json_t *cluster, const char *name, const char *ns)
{
	json_t *md = json_object(), *refs = json_array();
	json_t *labels = eo_desired_cluster_labels(cluster, eo_cluster_name(cluster));
	json_t *ann = eo_desired_extra_annotations(cluster);
	bool ok = md != NULL && refs != NULL && labels != NULL && ann != NULL;

	if (ok) {
		set(md, "name", json_string(name), &ok);
		set(md, "namespace", json_string(ns), &ok);
		set(md, "labels", json_incref(labels), &ok);
		if (json_object_size(ann) > 0)
			set(md, "annotations", json_incref(ann), &ok);
		if (json_array_append_new(refs, eo_desired_owner_ref(cluster)) != 0)
			ok = false;
		set(md, "ownerReferences", json_incref(refs), &ok);
	}
	json_decref(refs);
	json_decref(labels);
	json_decref(ann);
	return finish(md, ok);
}

/* The Secret a role's Certificate writes. */
static int role_secret(const json_t *cluster, enum eo_cert_role role, char *buf, size_t n)
{
	switch (role) {
	case EO_CERT_SERVER:
		return eo_cluster_server_secret_name(cluster, buf, n);
	case EO_CERT_PEER:
		return eo_cluster_peer_secret_name(cluster, buf, n);
	case EO_CERT_OPERATOR_CLIENT:
		return eo_cluster_operator_client_secret_name(cluster, buf, n);
	case EO_CERT_CA:
		return eo_desired_certificate_name(buf, n, eo_cluster_name(cluster), EO_CERT_CA);
	default:
		return -1;
	}
}

/* The identity of a role: common name, subject and SANs, into spec. */
static void identity(json_t *spec, const json_t *cluster, enum eo_cert_role role, const char *c,
		     const char *ns, const char *d, bool *ok)
{
	json_t *names = NULL;

	switch (role) {
	case EO_CERT_CA:
		/* Unique per cluster in this Kubernetes: <cluster> in O etcd-operator, OU <ns>. */
		set(spec, "isCA", json_true(), ok);
		set(spec, "commonName", json_string(c), ok);
		set(spec, "subject",
		    json_pack("{s:[s], s:[s]}", "organizations", "etcd-operator",
			      "organizationalUnits", ns),
		    ok);
		set(spec, "duration", json_string(CA_DURATION), ok);
		return;
	case EO_CERT_OPERATOR_CLIENT:
		/*
		 * The DNS name names the cluster the certificate was made for. With auth etcd's
		 * JSON gateway refuses client certificates that have a CommonName, so then the
		 * DNS name is the only identity.
		 */
		names = json_array();
		if (names == NULL)
			*ok = false;
		else
			san(names, ok, "%s.%s.%s", EO_CERT_OPERATOR_CN, c, ns);
		set(spec, "dnsNames", names, ok);
		if (!eo_cluster_auth_enabled(cluster))
			set(spec, "commonName", json_string(EO_CERT_OPERATOR_CN), ok);
		return;
	default:
		/* No common name: the SANs carry the identity (and a CN is capped at 64). */
		set(spec, "dnsNames", dns_names(role, c, ns, d), ok);
		if (role == EO_CERT_SERVER)
			set(spec, "ipAddresses", json_pack("[s]", "127.0.0.1"), ok);
		return;
	}
}

json_t *eo_desired_certificate(const json_t *cluster, enum eo_cert_role role, bool per_cluster_ca,
			       const struct eo_desired_opts *o)
{
	const char *c = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	const char *d =
	    o != NULL && eo_present(o->cluster_domain) ? o->cluster_domain : DEFAULT_CLUSTER_DOMAIN;
	const char *iname = NULL, *ikind = NULL;
	char name[EO_NAME_MAX], secret[EO_NAME_MAX], ibuf[EO_NAME_MAX];
	json_t *cert = NULL, *spec = NULL, *md = NULL, *labels = NULL;
	bool ok = true;

	if (!eo_present(c) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    eo_desired_certificate_issuer(cluster, role, per_cluster_ca, ibuf, sizeof(ibuf), &iname,
					  &ikind) != 0 ||
	    eo_desired_certificate_name(name, sizeof(name), c, role) != 0)
		return NULL;
	if (role_secret(cluster, role, secret, sizeof(secret)) != 0 ||
	    (md = metadata(cluster, name, ns)) == NULL)
		return NULL;
	cert = json_object();
	spec = json_object();
	labels = eo_desired_cluster_labels(cluster, c);
	ok = cert != NULL && spec != NULL && labels != NULL;
	if (ok) {
		set(cert, "apiVersion", json_string(EO_CERT_MANAGER_GROUP_VERSION), &ok);
		set(cert, "kind", json_string(EO_CERT_MANAGER_KIND), &ok);
		set(cert, "metadata", json_incref(md), &ok);
		set(spec, "secretName", json_string(secret), &ok);
		set(spec, "secretTemplate", json_pack("{s:O}", "labels", labels), &ok);
		set(spec, "issuerRef",
		    json_pack("{s:s, s:s, s:s}", "name", iname, "kind", ikind, "group",
			      EO_CERT_MANAGER_GROUP),
		    &ok);
		identity(spec, cluster, role, c, ns, d, &ok);
		set(spec, "usages", usages(role), &ok);
		set(spec, "privateKey",
		    json_pack("{s:s, s:i, s:s, s:s}", "algorithm", "ECDSA", "size", 256, "encoding",
			      "PKCS8", "rotationPolicy", role == EO_CERT_CA ? "Never" : "Always"),
		    &ok);
		set(cert, "spec", json_incref(spec), &ok);
	}
	json_decref(md);
	json_decref(spec);
	json_decref(labels);
	return finish(cert, ok);
}

json_t *eo_desired_ca_issuer(const json_t *cluster, enum eo_ca_issuer which)
{
	const char *c = eo_cluster_name(cluster), *ns = eo_cluster_namespace(cluster);
	char name[EO_NAME_MAX], secret[EO_NAME_MAX];
	json_t *iss = NULL, *md = NULL;
	bool ok = true;

	if (!eo_present(c) || !eo_present(ns) || !eo_present(eo_cluster_uid(cluster)) ||
	    eo_desired_ca_issuer_name(name, sizeof(name), c, which) != 0 ||
	    eo_desired_certificate_name(secret, sizeof(secret), c, EO_CERT_CA) != 0 ||
	    (md = metadata(cluster, name, ns)) == NULL)
		return NULL;
	iss = json_object();
	ok = iss != NULL;
	if (ok) {
		set(iss, "apiVersion", json_string(EO_CERT_MANAGER_GROUP_VERSION), &ok);
		set(iss, "kind", json_string(EO_CERT_MANAGER_ISSUER_KIND), &ok);
		set(iss, "metadata", json_incref(md), &ok);
		if (which == EO_CA_ISSUER_SELFSIGNED)
			set(iss, "spec", json_pack("{s:{}}", "selfSigned"), &ok);
		else
			set(iss, "spec", json_pack("{s:{s:s}}", "ca", "secretName", secret), &ok);
	}
	json_decref(md);
	return finish(iss, ok);
}

/* The labels of desired missing from (or different in) actual's, or NULL. */
static json_t *label_patch(const json_t *desired, const json_t *actual, bool *ok)
{
	json_t *want = eo_meta_get(desired, "labels");
	json_t *have = eo_meta_get(actual, "labels");
	json_t *p = NULL;
	const char *k = NULL;
	json_t *v = NULL;

	json_object_foreach(want, k, v)
	{
		if (json_equal(v, json_object_get(have, k)))
			continue;
		if (p == NULL && (p = json_object()) == NULL) {
			*ok = false;
			return NULL;
		}
		set(p, k, json_incref(v), ok);
	}
	return p;
}

json_t *eo_desired_certificate_patch(const json_t *desired, const json_t *actual)
{
	json_t *want = json_object_get(desired, "spec");
	json_t *have = json_object_get(actual, "spec");
	json_t *spec = json_object(), *patch = NULL, *labels = NULL;
	const char *k = NULL;
	json_t *v = NULL;
	bool ok = spec != NULL;

	json_object_foreach(want, k, v)
	{
		if (ok && !json_equal(v, json_object_get(have, k)))
			set(spec, k, json_incref(v), &ok);
	}
	labels = ok ? label_patch(desired, actual, &ok) : NULL;
	if (ok && (json_object_size(spec) > 0 || labels != NULL)) {
		patch = json_object();
		ok = patch != NULL;
		if (ok && json_object_size(spec) > 0)
			set(patch, "spec", json_incref(spec), &ok);
		if (ok && labels != NULL)
			set(patch, "metadata", json_pack("{s:O}", "labels", labels), &ok);
	}
	json_decref(spec);
	json_decref(labels);
	if (!ok) {
		json_decref(patch);
		return NULL;
	}
	return patch;
}
