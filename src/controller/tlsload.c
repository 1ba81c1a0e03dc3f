/*
 * controller/tlsload.c - the TLS material of a cluster from its Secrets. See tlsload.h.
 */
#include "controller/tlsload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/names.h"
#include "core/base64.h"
#include "etcd/tlscheck.h"

/* The three keys of a TLS Secret, decoded (NULL when absent). */
struct secret_data {
	unsigned char *crt, *key, *ca;
	size_t crt_len, key_len, ca_len;
};

static void wipe_free(unsigned char *p, size_t len)
{
	if (p != NULL)
		OPENSSL_cleanse(p, len);
	free(p);
}

static void secret_data_clear(struct secret_data *d)
{
	wipe_free(d->crt, d->crt_len);
	wipe_free(d->key, d->key_len);
	wipe_free(d->ca, d->ca_len);
	memset(d, 0, sizeof(*d));
}

void eo_tls_material_clear(struct eo_tls_material *m)
{
	if (m == NULL)
		return;
	wipe_free(m->ca, m->ca_len);
	wipe_free(m->cert, m->cert_len);
	wipe_free(m->key, m->key_len);
	memset(m, 0, sizeof(*m));
}

static enum eo_tlsload_result problem(struct eo_tlsload_problem *p, const char *reason,
				      const char *secret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum eo_tlsload_result problem(struct eo_tlsload_problem *p, const char *reason,
				      const char *secret, const char *fmt, ...)
{
	va_list ap;

	p->reason = reason;
	snprintf(p->secret, sizeof(p->secret), "%s", secret);
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	return EO_TLSLOAD_PROBLEM;
}

/* Cleanses every base64 value of the Secret's data in place (the object is freed next). */
static void wipe_secret(json_t *secret)
{
	const char *k = NULL;
	json_t *v = NULL;

	json_object_foreach(json_object_get(secret, "data"), k, v)
	{
		if (json_is_string(v))
			OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
	}
}

/* Decodes data[key] into *out; 1 when absent, 0 when decoded, -1 when not base64. */
static int decode_key(const json_t *data, const char *key, unsigned char **out, size_t *len)
{
	json_t *v = json_object_get(data, key);

	if (!json_is_string(v) || json_string_length(v) == 0)
		return 1;
	return eo_base64_decode(json_string_value(v), json_string_length(v), EO_BASE64_SPACE, out,
				len) == 0
		   ? 0
		   : -1;
}

/*
 * GETs Secret ns/name (label: "server", "operator client", "peer") and decodes tls.crt,
 * tls.key and, when need_ca, ca.crt; every one of them must be there.
 */
static enum eo_tlsload_result read_secret(eo_kube_client *kc, const char *ns, const char *name,
					  const char *label, bool need_ca, struct secret_data *d,
					  struct eo_tlsload_problem *p, struct eo_kube_error *err)
{
	struct eo_kube_resource r = {"v1", "secrets", ns, name};
	const char *keys[] = {"tls.crt", "tls.key", "ca.crt"};
	unsigned char **outs[] = {&d->crt, &d->key, &d->ca};
	size_t *lens[] = {&d->crt_len, &d->key_len, &d->ca_len};
	json_t *secret = NULL, *data = NULL;
	enum eo_tlsload_result res = EO_TLSLOAD_OK;
	eo_kube_err e;

	memset(d, 0, sizeof(*d));
	e = eo_kube_get(kc, &r, &secret, err);
	if (e == EO_KUBE_ENOTFOUND)
		return problem(p, EO_REASON_TLS_SECRET_NOT_FOUND, name,
			       "the %s Secret %s/%s does not exist", label, ns, name);
	if (e == EO_KUBE_EFORBIDDEN)
		return problem(p, EO_REASON_TLS_SECRET_NOT_FOUND, name,
			       "the operator may not read the %s Secret %s/%s (forbidden: its "
			       "ClusterRole needs get on secrets)",
			       label, ns, name);
	if (e != EO_KUBE_OK)
		return EO_TLSLOAD_ERROR;
	data = json_object_get(secret, "data");
	for (size_t i = 0; i < 3 && res == EO_TLSLOAD_OK; i++) {
		int rc;

		if (i == 2 && !need_ca)
			break;
		rc = decode_key(data, keys[i], outs[i], lens[i]);
		if (rc > 0)
			res = problem(p, EO_REASON_TLS_SECRET_INVALID, name,
				      "the %s Secret %s/%s has no %s", label, ns, name, keys[i]);
		else if (rc < 0)
			res = problem(p, EO_REASON_TLS_SECRET_INVALID, name,
				      "the %s Secret %s/%s: %s is not valid base64", label, ns,
				      name, keys[i]);
	}
	wipe_secret(secret);
	json_decref(secret);
	if (res != EO_TLSLOAD_OK)
		secret_data_clear(d);
	return res;
}

/* A check failed: the problem names the Secret. */
static enum eo_tlsload_result invalid(struct eo_tlsload_problem *p, const char *label,
				      const char *ns, const char *name, const char *why)
{
	return problem(p, EO_REASON_TLS_SECRET_INVALID, name, "the %s Secret %s/%s: %s", label, ns,
		       name, why);
}

/*
 * The digest of the trusted CA bundles (see tlsload.h): each one that etcd is given is fed
 * with a label, so the same bytes moving from one Secret to the other still count as a change.
 * "" when none is given. 0, or -1 when OpenSSL fails.
 */
static int ca_bundle_digest(const struct secret_data *client, const struct secret_data *peer,
			    char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;
	EVP_MD_CTX *ctx = NULL;
	int ok;

	out[0] = '\0';
	if (client == NULL && peer == NULL)
		return 0;
	ctx = EVP_MD_CTX_new();
	ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
	if (ok && client != NULL)
		ok = EVP_DigestUpdate(ctx, "client-ca\n", 10) == 1 &&
		     EVP_DigestUpdate(ctx, client->ca, client->ca_len) == 1;
	if (ok && peer != NULL)
		ok = EVP_DigestUpdate(ctx, "peer-ca\n", 8) == 1 &&
		     EVP_DigestUpdate(ctx, peer->ca, peer->ca_len) == 1;
	ok = ok && EVP_DigestFinal_ex(ctx, md, &md_len) == 1 && md_len == 32;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		return -1;
	for (unsigned int i = 0; i < md_len; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * md_len] = '\0';
	return 0;
}

static enum eo_tlsload_result load(eo_kube_client *kc, const json_t *cluster, time_t now,
				   struct eo_tls_material *out, struct eo_tlsload_problem *p,
				   struct eo_kube_error *err)
{
	const char *ns = eo_cluster_namespace(cluster);
	struct eo_cluster_tls t;
	struct secret_data srv = {0}, op = {0}, peer = {0};
	char name[EO_NAME_MAX], why[EO_TLSCHECK_MSG_MAX];
	enum eo_tlsload_result res = EO_TLSLOAD_OK;

	eo_cluster_tls(cluster, &t);
	if (t.client != EO_TLS_NONE) {
		if (eo_cluster_server_secret_name(cluster, name, sizeof(name)) != 0)
			return problem(p, EO_REASON_TLS_SECRET_INVALID, "",
				       "the server Secret of spec.tls.client has no usable name");
		res = read_secret(kc, ns, name, "server", true, &srv, p, err);
		if (res == EO_TLSLOAD_OK &&
		    (eo_tls_check_ca(srv.ca, srv.ca_len, why, sizeof(why)) != 0 ||
		     eo_tls_check_pair(EO_TLS_ROLE_SERVER, srv.crt, srv.crt_len, srv.key,
				       srv.key_len, srv.ca, srv.ca_len, now, why,
				       sizeof(why)) != 0))
			res = invalid(p, "server", ns, name, why);
		if (res != EO_TLSLOAD_OK)
			goto out;
		out->client_tls = true;
		out->ca = srv.ca;
		out->ca_len = srv.ca_len;
		srv.ca = NULL;
		srv.ca_len = 0;
	}
	if (t.client != EO_TLS_NONE && t.client_mtls) {
		if (eo_cluster_operator_client_secret_name(cluster, name, sizeof(name)) != 0) {
			res = problem(p, EO_REASON_TLS_SECRET_INVALID, "",
				      "the operator client Secret of spec.tls.client has no usable "
				      "name");
			goto out;
		}
		/* ca.crt is optional here: etcd trusts the server Secret's bundle. */
		res = read_secret(kc, ns, name, "operator client", false, &op, p, err);
		if (res == EO_TLSLOAD_OK &&
		    eo_tls_check_pair(EO_TLS_ROLE_CLIENT, op.crt, op.crt_len, op.key, op.key_len,
				      out->ca, out->ca_len, now, why, sizeof(why)) != 0)
			res = invalid(p, "operator client", ns, name, why);
		if (res != EO_TLSLOAD_OK)
			goto out;
		out->cert = op.crt;
		out->cert_len = op.crt_len;
		out->key = op.key;
		out->key_len = op.key_len;
		op.crt = op.key = NULL;
		op.crt_len = op.key_len = 0;
	}
	if (t.peer != EO_TLS_NONE) {
		if (eo_cluster_peer_secret_name(cluster, name, sizeof(name)) != 0) {
			res = problem(p, EO_REASON_TLS_SECRET_INVALID, "",
				      "the peer Secret of spec.tls.peer has no usable name");
			goto out;
		}
		res = read_secret(kc, ns, name, "peer", true, &peer, p, err);
		if (res == EO_TLSLOAD_OK &&
		    (eo_tls_check_ca(peer.ca, peer.ca_len, why, sizeof(why)) != 0 ||
		     eo_tls_check_pair(EO_TLS_ROLE_PEER, peer.crt, peer.crt_len, peer.key,
				       peer.key_len, peer.ca, peer.ca_len, now, why,
				       sizeof(why)) != 0))
			res = invalid(p, "peer", ns, name, why);
	}
	if (res == EO_TLSLOAD_OK) {
		/* The server CA is etcd's only with client certificates (desired.c). */
		struct secret_data client_ca = {.ca = out->ca, .ca_len = out->ca_len};

		if (ca_bundle_digest(t.client != EO_TLS_NONE && t.client_mtls ? &client_ca : NULL,
				     t.peer != EO_TLS_NONE ? &peer : NULL,
				     out->ca_bundle_digest) != 0)
			res = problem(p, EO_REASON_TLS_SECRET_INVALID, "",
				      "the digest of the CA bundles could not be computed");
	}
out:
	secret_data_clear(&srv);
	secret_data_clear(&op);
	secret_data_clear(&peer);
	return res;
}

enum eo_tlsload_result eo_tlsload(eo_kube_client *kc, const json_t *cluster, time_t now,
				  struct eo_tls_material *out, struct eo_tlsload_problem *p,
				  struct eo_kube_error *err)
{
	struct eo_tlsload_problem scratch_p;
	struct eo_kube_error scratch_e;
	enum eo_tlsload_result res;

	if (p == NULL)
		p = &scratch_p;
	if (err == NULL)
		err = &scratch_e;
	memset(out, 0, sizeof(*out));
	memset(p, 0, sizeof(*p));
	memset(err, 0, sizeof(*err));
	res = load(kc, cluster, now, out, p, err);
	if (res != EO_TLSLOAD_OK)
		eo_tls_material_clear(out);
	return res;
}
