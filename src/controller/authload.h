/*
 * controller/authload.h - the etcd root password of a cluster with spec.auth.enabled, read
 * from spec.auth.rootCredentialsSecretRef on every reconcile.
 *
 * The Secret (type kubernetes.io/basic-auth, as the CRD says) is read with a direct GET of that
 * one Secret, as the TLS Secrets are (controller/tlsload.h): the operator never lists or
 * watches Secrets. Its key "password" is the root password; "username", when present, must be
 * "root" (etcd's root user is the only one the operator manages). The password is kept in
 * memory only, cleansed when freed, and the base64 copies in the Secret object are cleansed
 * before it is freed. Reading on every reconcile means a corrected Secret is used from the next
 * reconcile on.
 *
 * Nothing here logs the password; messages name the Secret and the problem.
 */
#ifndef EO_CONTROLLER_AUTHLOAD_H
#define EO_CONTROLLER_AUTHLOAD_H

#include <stdbool.h>

#include <jansson.h>

#include "controller/tlsload.h"
#include "kube/client.h"

struct eo_auth_creds {
	char *password; /* NUL-terminated; cleansed on clear. NULL when auth is not asked for */
};

/*
 * Reads the root password of cluster when spec.auth.enabled (otherwise *out stays zeroed and
 * EO_TLSLOAD_OK is returned). PROBLEM: p says why (reason EO_REASON_AUTH_SECRET_NOT_FOUND /
 * _INVALID); ERROR: the apiserver could not be asked (err).
 */
enum eo_tlsload_result eo_authload(eo_kube_client *kc, const json_t *cluster,
				   struct eo_auth_creds *out, struct eo_tlsload_problem *p,
				   struct eo_kube_error *err);

/*
 * Whether etcd accepted password for the cluster of that UID since this operator started
 * (eo_authload_mark_verified). Memory only: only digests are kept, never written anywhere.
 * A changed Secret, or an operator restart, reads as not verified, and the planner then asks
 * etcd (AuthStatus, Authenticate) on the next pass: an edited password is noticed at once.
 */
bool eo_authload_verified(const char *uid, const char *password);
void eo_authload_mark_verified(const char *uid, const char *password);

/*
 * Whether the certificate (PEM, the first one) has a subject CommonName: 1 (cn[cap] receives
 * it), 0 none, -1 not a certificate. With spec.auth and mTLS etcd's JSON gateway refuses every
 * request whose client certificate has one ("CommonName of client sending a request against
 * gateway will be ignored and not used as expected"), so the operator's must have none.
 */
int eo_authload_cert_cn(const unsigned char *pem, size_t len, char *cn, size_t cap);

/* Cleanses and frees; accepts a zeroed struct. */
void eo_auth_creds_clear(struct eo_auth_creds *c);

#endif
