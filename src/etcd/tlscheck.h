/*
 * etcd/tlscheck.h - checks of TLS material read from a Secret, before anything uses it (pure:
 * OpenSSL on bytes, the time is an argument).
 *
 * The operator reads the certificates of a cluster (the server, peer and operator-client
 * Secrets) on every reconcile and refuses material etcd would refuse later with a less clear
 * failure: a certificate or key that does not parse, a key that is not the certificate's, a
 * certificate outside its validity period, one without the extended key usages the role needs
 * (a server or peer certificate needs serverAuth and clientAuth, an operator client certificate
 * clientAuth; a certificate without the extension allows every usage), or one that the CA bundle
 * it must chain to does not sign. Messages name the problem and never contain key material.
 */
#ifndef EO_ETCD_TLSCHECK_H
#define EO_ETCD_TLSCHECK_H

#include <stddef.h>
#include <time.h>

#define EO_TLSCHECK_MSG_MAX 256

enum eo_tls_role {
	EO_TLS_ROLE_SERVER, /* etcd's client-API certificate: serverAuth + clientAuth */
	EO_TLS_ROLE_PEER,   /* etcd's peer certificate: serverAuth + clientAuth */
	EO_TLS_ROLE_CLIENT, /* the operator's client certificate: clientAuth */
};

/* A PEM bundle with at least one certificate. 0, or -1 with the reason in msg. */
int eo_tls_check_ca(const void *ca, size_t ca_len, char *msg, size_t n);

/*
 * A certificate (PEM: the leaf, then any intermediates) and its private key (PEM) for role,
 * at time now: parses, matches, valid, has the usages, and chains to the bundle ca (PEM; NULL
 * skips that check). 0, or -1 with the reason in msg ("the certificate expired on <date>", "the
 * certificate lacks the clientAuth extended key usage", ...).
 */
int eo_tls_check_pair(enum eo_tls_role role, const void *cert, size_t cert_len, const void *key,
		      size_t key_len, const void *ca, size_t ca_len, time_t now, char *msg,
		      size_t n);

/*
 * The notAfter of the first certificate (the leaf) of a PEM bundle, in Unix seconds, into *out.
 * 0, or -1 when no certificate parses.
 */
int eo_tls_cert_not_after(const void *cert, size_t cert_len, time_t *out);

#endif
