/*
 * controller/tlsload.c - the TLS material of a cluster from its Secrets. See tlsload.h.
 */
#include "controller/tlsload.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "api/meta.h"
#include "api/cluster.h"
#include "api/conditions.h"
#include "api/names.h"
#include "core/base64.h"
#include "kube/client.h"
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

enum eo_tlsload_result eo_tlsload_problemf(struct eo_tlsload_problem *p, const char *reason,
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

void eo_tlsload_wipe_secret(json_t *secret)
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

/* GETs Secret ns/name (label: "server", "operator client", "peer") into *out. */
static enum eo_tlsload_result fetch_secret(eo_kube_client *kc, const char *ns, const char *name,
					   const char *label, json_t **out,
					   struct eo_tlsload_problem *p, struct eo_kube_error *err)
{
	struct eo_kube_resource r = {"v1", "secrets", ns, name};
	eo_kube_err e;

	*out = NULL;
	e = eo_kube_get(kc, &r, out, err);
	if (e == EO_KUBE_ENOTFOUND)
		return eo_tlsload_problemf(p, EO_REASON_TLS_SECRET_NOT_FOUND, name,
					   "the %s Secret %s/%s does not exist", label, ns, name);
	if (e == EO_KUBE_EFORBIDDEN)
		return eo_tlsload_problemf(
		    p, EO_REASON_TLS_SECRET_NOT_FOUND, name,
		    "the operator may not read the %s Secret %s/%s (forbidden: its "
		    "ClusterRole needs get on secrets)",
		    label, ns, name);
	return e == EO_KUBE_OK ? EO_TLSLOAD_OK : EO_TLSLOAD_ERROR;
}

/*
 * Decodes tls.crt, tls.key and, when need_ca, ca.crt of the fetched Secret ns/name; every one
 * of them must be there.
 */
static enum eo_tlsload_result decode_secret(const json_t *secret, const char *ns, const char *name,
					    const char *label, bool need_ca, struct secret_data *d,
					    struct eo_tlsload_problem *p)
{
	const char *keys[] = {"tls.crt", "tls.key", "ca.crt"};
	unsigned char **outs[] = {&d->crt, &d->key, &d->ca};
	size_t *lens[] = {&d->crt_len, &d->key_len, &d->ca_len};
	const json_t *data = json_object_get(secret, "data");
	enum eo_tlsload_result res = EO_TLSLOAD_OK;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < 3 && res == EO_TLSLOAD_OK; i++) {
		int rc;

		if (i == 2 && !need_ca)
			break;
		rc = decode_key(data, keys[i], outs[i], lens[i]);
		if (rc > 0)
			res = eo_tlsload_problemf(p, EO_REASON_TLS_SECRET_INVALID, name,
						  "the %s Secret %s/%s has no %s", label, ns, name,
						  keys[i]);
		else if (rc < 0)
			res = eo_tlsload_problemf(p, EO_REASON_TLS_SECRET_INVALID, name,
						  "the %s Secret %s/%s: %s is not valid base64",
						  label, ns, name, keys[i]);
	}
	if (res != EO_TLSLOAD_OK)
		secret_data_clear(d);
	return res;
}

/* A check failed: the problem names the Secret. */
static enum eo_tlsload_result invalid(struct eo_tlsload_problem *p, const char *label,
				      const char *ns, const char *name, const char *why)
{
	return eo_tlsload_problemf(p, EO_REASON_TLS_SECRET_INVALID, name, "the %s Secret %s/%s: %s",
				   label, ns, name, why);
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

/* The Secrets of one cluster, fetched: index 0 server, 1 operator client, 2 peer. */
enum { SRV, OPC, PEER, NSECRETS };
static const char *const labels[NSECRETS] = {"server", "operator client", "peer"};

struct fetched {
	json_t *obj[NSECRETS]; /* NULL: not used by the spec */
	char name[NSECRETS][EO_NAME_MAX];
	char rv[NSECRETS][EO_TLS_RV_MAX]; /* resourceVersion, "" when not used */
};

static void fetched_clear(struct fetched *f)
{
	for (int i = 0; i < NSECRETS; i++) {
		if (f->obj[i] != NULL)
			eo_tlsload_wipe_secret(f->obj[i]);
		json_decref(f->obj[i]);
		f->obj[i] = NULL;
	}
}

/* GETs every Secret the spec uses, in order; stops at the first one that cannot be read. */
static enum eo_tlsload_result fetch(eo_kube_client *kc, const json_t *cluster, struct fetched *f,
				    struct eo_tlsload_problem *p, struct eo_kube_error *err)
{
	const char *ns = eo_cluster_namespace(cluster);
	struct eo_cluster_tls t;
	bool used[NSECRETS];
	int (*namer[NSECRETS])(const json_t *, char *, size_t) = {
	    eo_cluster_server_secret_name, eo_cluster_operator_client_secret_name,
	    eo_cluster_peer_secret_name};
	const char *what[NSECRETS] = {"spec.tls.client", "spec.tls.client", "spec.tls.peer"};

	eo_cluster_tls(cluster, &t);
	used[SRV] = t.client != EO_TLS_NONE;
	used[OPC] = t.client != EO_TLS_NONE && t.client_mtls;
	used[PEER] = t.peer != EO_TLS_NONE;
	for (int i = 0; i < NSECRETS; i++) {
		enum eo_tlsload_result res;
		const char *rv = NULL;

		if (!used[i])
			continue;
		if (namer[i](cluster, f->name[i], sizeof(f->name[i])) != 0)
			return eo_tlsload_problemf(p, EO_REASON_TLS_SECRET_INVALID, "",
						   "the %s Secret of %s has no usable name",
						   labels[i], what[i]);
		res = fetch_secret(kc, ns, f->name[i], labels[i], &f->obj[i], p, err);
		if (res != EO_TLSLOAD_OK)
			return res;
		rv = eo_meta_resource_version(f->obj[i]);
		/* No resourceVersion (never from an apiserver): "?" never matches a cached one. */
		snprintf(f->rv[i], sizeof(f->rv[i]), "%s", rv != NULL && rv[0] ? rv : "?");
	}
	return EO_TLSLOAD_OK;
}

/*
 * Decodes Secret i (one with its own ca.crt: server or peer) into sd and, when verify, checks
 * its CA bundle and its pair for role at time now.
 */
static enum eo_tlsload_result check_bundle(const struct fetched *f, int i, enum eo_tls_role role,
					   const char *ns, time_t now, bool verify,
					   struct secret_data *sd, struct eo_tlsload_problem *p)
{
	const char *name = f->name[i];
	char why[EO_TLSCHECK_MSG_MAX];
	enum eo_tlsload_result res;

	res = decode_secret(f->obj[i], ns, name, labels[i], true, sd, p);
	/* check_pair parses the bundle as well; check_ca says "no certificate" first. */
	if (res == EO_TLSLOAD_OK && verify &&
	    (eo_tls_check_ca(sd->ca, sd->ca_len, why, sizeof(why)) != 0 ||
	     eo_tls_check_pair(role, sd->crt, sd->crt_len, sd->key, sd->key_len, sd->ca, sd->ca_len,
			       now, why, sizeof(why)) != 0))
		res = invalid(p, labels[i], ns, name, why);
	return res;
}

/* Lowers *earliest to the notAfter of the leaf of crt when that is earlier (or *earliest 0). */
static void note_not_after(const struct secret_data *sd, time_t *earliest)
{
	time_t t;

	if (sd->crt != NULL && eo_tls_cert_not_after(sd->crt, sd->crt_len, &t) == 0 &&
	    (*earliest == 0 || t < *earliest))
		*earliest = t;
}

/*
 * Decodes the fetched Secrets into out and, when verify, checks them (see tlsload.h) at time
 * now; without verify (the same versions passed the checks a moment ago) only decodes.
 */
static enum eo_tlsload_result check(const json_t *cluster, const struct fetched *f, time_t now,
				    bool verify, struct eo_tls_material *out,
				    struct eo_tlsload_problem *p)
{
	const char *ns = eo_cluster_namespace(cluster);
	struct secret_data srv = {0}, op = {0}, peer = {0};
	char why[EO_TLSCHECK_MSG_MAX];
	enum eo_tlsload_result res = EO_TLSLOAD_OK;

	if (f->obj[SRV] != NULL) {
		res = check_bundle(f, SRV, EO_TLS_ROLE_SERVER, ns, now, verify, &srv, p);
		if (res != EO_TLSLOAD_OK)
			goto out;
		out->client_tls = true;
		out->ca = srv.ca;
		out->ca_len = srv.ca_len;
		srv.ca = NULL;
		srv.ca_len = 0;
	}
	if (f->obj[OPC] != NULL) {
		const char *name = f->name[OPC];

		/* ca.crt is optional here: etcd trusts the server Secret's bundle. */
		res = decode_secret(f->obj[OPC], ns, name, labels[OPC], false, &op, p);
		if (res == EO_TLSLOAD_OK && verify &&
		    eo_tls_check_pair(EO_TLS_ROLE_CLIENT, op.crt, op.crt_len, op.key, op.key_len,
				      out->ca, out->ca_len, now, why, sizeof(why)) != 0)
			res = invalid(p, labels[OPC], ns, name, why);
		if (res != EO_TLSLOAD_OK)
			goto out;
		out->cert = op.crt;
		out->cert_len = op.crt_len;
		out->key = op.key;
		out->key_len = op.key_len;
		op.crt = op.key = NULL;
		op.crt_len = op.key_len = 0;
	}
	if (f->obj[PEER] != NULL) {
		res = check_bundle(f, PEER, EO_TLS_ROLE_PEER, ns, now, verify, &peer, p);
	}
	if (res == EO_TLSLOAD_OK) {
		note_not_after(&srv, &out->not_after);
		note_not_after(&peer, &out->not_after);
		if (out->cert != NULL)
			note_not_after(
			    &(struct secret_data){.crt = out->cert, .crt_len = out->cert_len},
			    &out->not_after);
	}
	if (res == EO_TLSLOAD_OK) {
		/* The server CA is etcd's only with client certificates (desired.c). */
		struct secret_data client_ca = {.ca = out->ca, .ca_len = out->ca_len};

		if (ca_bundle_digest(f->obj[OPC] != NULL ? &client_ca : NULL,
				     f->obj[PEER] != NULL ? &peer : NULL,
				     out->ca_bundle_digest) != 0)
			res = eo_tlsload_problemf(
			    p, EO_REASON_TLS_SECRET_INVALID, "",
			    "the digest of the CA bundles could not be computed");
	}
out:
	secret_data_clear(&srv);
	secret_data_clear(&op);
	secret_data_clear(&peer);
	return res;
}

/* --- the cache (see tlsload.h) --- */

struct entry {
	char uid[EO_TLS_UID_MAX]; /* "": free */
	char rv[NSECRETS][EO_TLS_RV_MAX];
	bool checked; /* result, m and p below hold a check of these versions */
	time_t checked_at;
	enum eo_tlsload_result result;	     /* OK or PROBLEM */
	struct eo_tls_material m;	     /* OK: an owned copy */
	struct eo_tlsload_problem p;	     /* PROBLEM: what it was */
	char last[EO_TLSLOAD_MSG_MAX + 320]; /* the last problem told ("" none) */
	unsigned long used;		     /* for eviction: larger is more recent */
};

struct eo_tls_cache {
	pthread_mutex_t mu;
	struct entry *v;
	size_t cap;
	unsigned long clock;
	unsigned long hits, misses; /* for tests */
};

struct eo_tls_cache *eo_tls_cache_new(size_t cap)
{
	struct eo_tls_cache *c = NULL;

	if (cap == 0 || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->v = calloc(cap, sizeof(*c->v))) == NULL) {
		free(c);
		return NULL;
	}
	c->cap = cap;
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void eo_tls_cache_free(struct eo_tls_cache *c)
{
	if (c == NULL)
		return;
	pthread_mutex_destroy(&c->mu);
	free(c->v);
	free(c);
}

void eo_tls_cache_stats(struct eo_tls_cache *c, unsigned long *hits, unsigned long *misses)
{
	pthread_mutex_lock(&c->mu);
	*hits = c->hits;
	*misses = c->misses;
	pthread_mutex_unlock(&c->mu);
}

/* The entry of uid, or a free / the least recently used one (reset) when new. Locked. */
static struct entry *slot(struct eo_tls_cache *c, const char *uid)
{
	struct entry *lru = NULL;

	for (size_t i = 0; i < c->cap; i++) {
		struct entry *e = &c->v[i];

		if (e->uid[0] != '\0' && strcmp(e->uid, uid) == 0)
			return e;
		if (lru == NULL ||
		    (lru->uid[0] != '\0' && (e->uid[0] == '\0' || e->used < lru->used)))
			lru = e;
	}
	memset(lru, 0, sizeof(*lru));
	snprintf(lru->uid, sizeof(lru->uid), "%s", uid);
	return lru;
}

/* The cached check of exactly these versions, not older than EO_TLS_RECHECK_S. Locked. */
static bool fresh(const struct entry *e, const struct fetched *f, time_t now)
{
	if (!e->checked || now < e->checked_at || now - e->checked_at >= EO_TLS_RECHECK_S)
		return false;
	for (int i = 0; i < NSECRETS; i++)
		if (strcmp(e->rv[i], f->rv[i]) != 0 || strcmp(f->rv[i], "?") == 0)
			return false;
	return true;
}

/* "reason secret message" of a problem, to tell a repeat from a new one. */
static void problem_key(const struct eo_tlsload_problem *p, char *buf, size_t n)
{
	snprintf(buf, n, "%s %s %s", p->reason != NULL ? p->reason : "", p->secret, p->message);
}

enum eo_tlsload_result eo_tlsload_cached(struct eo_tls_cache *cache, eo_kube_client *kc,
					 const json_t *cluster, time_t now,
					 struct eo_tls_material *out, struct eo_tlsload_problem *p,
					 struct eo_kube_error *err)
{
	struct eo_tlsload_problem scratch_p;
	struct eo_kube_error scratch_e;
	struct fetched f;
	const char *uid = eo_cluster_uid(cluster);
	struct entry *e = NULL;
	enum eo_tlsload_result res;
	bool hit = false;

	if (p == NULL)
		p = &scratch_p;
	if (err == NULL)
		err = &scratch_e;
	memset(out, 0, sizeof(*out));
	memset(p, 0, sizeof(*p));
	memset(err, 0, sizeof(*err));
	memset(&f, 0, sizeof(f));
	if (uid == NULL || uid[0] == '\0' || strlen(uid) >= EO_TLS_UID_MAX)
		cache = NULL;
	res = fetch(kc, cluster, &f, p, err);
	if (cache != NULL && res == EO_TLSLOAD_OK) {
		pthread_mutex_lock(&cache->mu);
		e = slot(cache, uid);
		e->used = ++cache->clock;
		if (fresh(e, &f, now)) {
			hit = true;
			res = e->result;
			if (res == EO_TLSLOAD_PROBLEM)
				*p = e->p;
		}
		cache->hits += hit;
		cache->misses += !hit;
		pthread_mutex_unlock(&cache->mu);
	}
	if (res == EO_TLSLOAD_OK) {
		/* A hit only spares the checks: the bytes are decoded again, nothing is kept. */
		res = check(cluster, &f, now, !hit, out, p);
		if (cache != NULL && !hit) {
			pthread_mutex_lock(&cache->mu);
			e = slot(cache, uid);
			e->checked = true;
			e->checked_at = now;
			e->result = res;
			e->p = *p;
			memcpy(e->rv, f.rv, sizeof(e->rv));
			pthread_mutex_unlock(&cache->mu);
		}
	}
	fetched_clear(&f);
	if (res != EO_TLSLOAD_OK)
		eo_tls_material_clear(out);
	if (cache != NULL && res != EO_TLSLOAD_ERROR) {
		char key[EO_TLSLOAD_MSG_MAX + 320];

		problem_key(p, key, sizeof(key));
		pthread_mutex_lock(&cache->mu);
		e = slot(cache, uid);
		if (res == EO_TLSLOAD_PROBLEM)
			p->repeated = strcmp(e->last, key) == 0;
		snprintf(e->last, sizeof(e->last), "%s", res == EO_TLSLOAD_PROBLEM ? key : "");
		pthread_mutex_unlock(&cache->mu);
	}
	return res;
}

enum eo_tlsload_result eo_tlsload(eo_kube_client *kc, const json_t *cluster, time_t now,
				  struct eo_tls_material *out, struct eo_tlsload_problem *p,
				  struct eo_kube_error *err)
{
	return eo_tlsload_cached(NULL, kc, cluster, now, out, p, err);
}
