/*
 * controller/tlsload.h - the TLS material of a cluster, read from its Secrets on every
 * reconcile.
 *
 * Which Secret holds what comes from one place, api/cluster.h's eo_cluster_server_secret_name,
 * eo_cluster_operator_client_secret_name and eo_cluster_peer_secret_name: the user's own
 * Secrets (spec.tls.*SecretRef) or the ones cert-manager fills (<cluster>-server-tls, ...).
 * Each is read with a direct GET of that one Secret (the operator never lists or watches
 * Secrets), checked (etcd/tlscheck.h), and the parts the operator's etcd client needs are kept
 * in memory only: the CA bundle of the server Secret (ca.crt: it signs etcd's server
 * certificate and is etcd's --trusted-ca-file) and, with mTLS, the operator client certificate
 * and key. Nothing is written to disk; key bytes are cleansed when freed, and the base64 copies
 * in the Secret objects are cleansed before those are freed. Reading on every reconcile means a
 * rotated Secret is used from the next reconcile on, without a restart; with a cache
 * (eo_tlsload_cached) a Secret whose resourceVersion did not move is not checked again.
 *
 * Nothing here logs key material; messages name the Secret and the problem.
 */
#ifndef EO_CONTROLLER_TLSLOAD_H
#define EO_CONTROLLER_TLSLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "kube/client.h"

struct eo_tls_material {
	bool client_tls;   /* the client API is TLS: dial https:// with ca */
	unsigned char *ca; /* ca.crt of the server Secret (PEM), client_tls only */
	size_t ca_len;
	unsigned char *cert; /* operator client certificate (PEM), mTLS only */
	size_t cert_len;
	unsigned char *key; /* its private key (PEM), mTLS only; cleansed on clear */
	size_t key_len;
	/*
	 * SHA-256 (64 hex digits) of the CA bundles the members' etcd trusts and does not
	 * reload by itself: ca.crt of the server Secret with client mTLS (--trusted-ca-file),
	 * ca.crt of the peer Secret (--peer-trusted-ca-file). "" when etcd trusts none (plaintext,
	 * server TLS without client certificates, peer auto-TLS). Certificates and keys are not
	 * in it: etcd reloads those on every handshake, so a leaf rotated under the same CA does
	 * not change it.
	 */
	char ca_bundle_digest[65];
	/*
	 * The earliest notAfter of the leaf certificates read (server, operator client, peer), in
	 * Unix seconds; 0 when none was read (per-cluster metrics, docs/monitoring.md).
	 */
	time_t not_after;
};

enum eo_tlsload_result {
	EO_TLSLOAD_OK = 0,
	EO_TLSLOAD_PROBLEM, /* the material is unusable: reason and message say why */
	EO_TLSLOAD_ERROR,   /* the apiserver could not be asked (transient): retry */
};

#define EO_TLSLOAD_MSG_MAX 512

struct eo_tlsload_problem {
	const char *reason; /* EO_REASON_TLS_SECRET_NOT_FOUND / _INVALID */
	char secret[254];   /* name of the Secret concerned */
	char message[EO_TLSLOAD_MSG_MAX];
	/* With a cache: the previous load of this cluster found this same problem. */
	bool repeated;
};

/*
 * Reads every TLS Secret of cluster the spec uses (client server, operator client, peer; all
 * of them first, stopping at one that cannot be read), then checks them at time now. A plaintext
 * cluster reads nothing and gets a zeroed material (client_tls false). On EO_TLSLOAD_OK out holds
 * the client material; otherwise out is zeroed and p (PROBLEM) or err (ERROR, the apiserver's
 * answer) says why.
 */
enum eo_tlsload_result eo_tlsload(eo_kube_client *kc, const json_t *cluster, time_t now,
				  struct eo_tls_material *out, struct eo_tlsload_problem *p,
				  struct eo_kube_error *err);

/*
 * A cache of the checks per cluster (by UID), so that a pass whose Secrets did not change
 * does not parse and check them again (OpenSSL): each load still GETs the Secrets (the
 * operator does not watch Secrets) and decodes them, and reuses the last verdict when every
 * Secret has the resourceVersion it had then and the check is younger than EO_TLS_RECHECK_S
 * (validity periods move with the clock). It holds verdicts only, never certificate or key
 * bytes: the material still lives for one pass. At most cap clusters, the least recently
 * loaded one making room. Thread-safe.
 */
#define EO_TLS_RECHECK_S 60
#define EO_TLS_RV_MAX	 64
#define EO_TLS_UID_MAX	 64
#define EO_TLS_CACHE_CAP 256

struct eo_tls_cache;
struct eo_tls_cache *eo_tls_cache_new(size_t cap);
void eo_tls_cache_free(struct eo_tls_cache *c);
/* Loads that reused a check, and loads that ran one (tests). */
void eo_tls_cache_stats(struct eo_tls_cache *c, unsigned long *hits, unsigned long *misses);

/*
 * eo_tlsload with a cache (NULL: none). Also tells, in p->repeated, when a problem is the one
 * the previous load of this cluster found, so that the caller logs it once.
 */
enum eo_tlsload_result eo_tlsload_cached(struct eo_tls_cache *cache, eo_kube_client *kc,
					 const json_t *cluster, time_t now,
					 struct eo_tls_material *out, struct eo_tlsload_problem *p,
					 struct eo_kube_error *err);

/* Frees (cleansing the key) and zeroes; accepts a zeroed struct. */
void eo_tls_material_clear(struct eo_tls_material *m);

/* Fills *p (reason, the Secret's name, the formatted message); returns EO_TLSLOAD_PROBLEM. */
enum eo_tlsload_result eo_tlsload_problemf(struct eo_tlsload_problem *p, const char *reason,
					   const char *secret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Cleanses every base64 value of a Secret's data in place (the object is freed next). */
void eo_tlsload_wipe_secret(json_t *secret);

#endif
