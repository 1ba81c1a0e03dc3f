/*
 * desired/certificate.h - the cert-manager Certificates of a cluster in cert-manager TLS mode
 * (pure).
 *
 * With spec.tls.client.certManager and/or spec.tls.peer.certManager the operator asks
 * cert-manager for up to three cert-manager.io/v1 Certificates, owned by the EtcdCluster and
 * carrying the operator's labels (also on the Secrets, through spec.secretTemplate):
 *
 *   role             Certificate               Secret                        issuer
 *   server           <cluster>-server          <cluster>-server-tls certManager.serverIssuerRef
 *   operator client  <cluster>-operator-client <cluster>-operator-client-tls
 * certManager.operatorClientIssuerRef peer             <cluster>-peer            <cluster>-peer-tls
 * peer.certManager.issuerRef
 *
 * (the Secret names are eo_cluster_*_secret_name's in api/cluster.h, which the Pod builder
 * mounts). SANs, for a cluster c in namespace ns with cluster domain d:
 *
 *   server: *.c.ns.svc, *.c.ns.svc.d (each member, as etcd's peer-style reverse lookup and
 *           clients reaching one member see it), c.ns.svc, c.ns.svc.d (headless Service),
 *           c-client, c-client.ns, c-client.ns.svc, c-client.ns.svc.d (client Service),
 *           localhost and IP 127.0.0.1 (etcdctl inside the Pod, probes); usages server auth
 *           AND client auth (etcd's grpc-gateway dials itself with the server certificate)
 *   peer:   *.c.ns.svc, *.c.ns.svc.d, c.ns.svc, c.ns.svc.d; server auth and client auth
 *   operator client: commonName etcd-operator, client auth only
 *
 * Every certificate: ECDSA P-256 key, re-generated on every renewal (rotationPolicy Always),
 * cert-manager's default duration and renewal.
 *
 * Ownership as in desired.h: new references or NULL (missing metadata, no such role in this
 * cluster's spec, allocation failure).
 */
#ifndef EO_DESIRED_CERTIFICATE_H
#define EO_DESIRED_CERTIFICATE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "desired/desired.h"

#define EO_CERT_MANAGER_GROUP	      "cert-manager.io"
#define EO_CERT_MANAGER_GROUP_VERSION "cert-manager.io/v1"
#define EO_CERT_MANAGER_KIND	      "Certificate"
#define EO_CERT_MANAGER_PLURAL	      "certificates"
/* Common name of the operator's client certificate. */
#define EO_CERT_OPERATOR_CN "etcd-operator"

enum eo_cert_role {
	EO_CERT_SERVER = 0,
	EO_CERT_OPERATOR_CLIENT,
	EO_CERT_PEER,
	EO_CERT_ROLE_COUNT_ /* not a role */
};

/* "server", "operator-client", "peer"; never NULL. */
const char *eo_cert_role_name(enum eo_cert_role role);

/* True when the cluster's spec asks cert-manager for this role's certificate. */
bool eo_desired_certificate_wanted(const json_t *cluster, enum eo_cert_role role);

/* Name of the role's Certificate: "<cluster>-server" etc. 0, or -1 when it does not fit. */
int eo_desired_certificate_name(char *buf, size_t n, const char *cluster, enum eo_cert_role role);

/*
 * The issuer of a role: name and kind ("Issuer" or "ClusterIssuer") borrowed from the cluster.
 * 0, or -1 when the role is not wanted.
 */
int eo_desired_certificate_issuer(const json_t *cluster, enum eo_cert_role role, const char **name,
				  const char **kind);

/* The desired Certificate of a role; NULL when the role is not wanted (see above). */
json_t *eo_desired_certificate(const json_t *cluster, enum eo_cert_role role,
			       const struct eo_desired_opts *o);

/*
 * Merge patch bringing an existing Certificate in line with the desired one: our labels, and
 * every spec field the operator sets (secretName, issuerRef, commonName, dnsNames,
 * ipAddresses, usages, privateKey, secretTemplate) that differs. NULL when nothing differs (or
 * on allocation failure: callers treat it as no drift and look again on the next pass).
 */
json_t *eo_desired_certificate_patch(const json_t *desired, const json_t *actual);

#endif
