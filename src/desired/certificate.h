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
 *   operator client: commonName etcd-operator (without spec.auth) and the DNS name
 *           etcd-operator.c.ns, which names the cluster; client auth only
 *
 * Per-cluster CA (plan/certs.h decides when; spec.tls.certificateAuthority): the operator
 * also makes, owned by the cluster like the rest,
 *
 *   Issuer <cluster>-cluster-ca-bootstrap  selfSigned: signs the CA Certificate only
 *   Certificate <cluster>-cluster-ca       isCA, commonName c, O etcd-operator, OU ns, Secret
 *                                          <cluster>-cluster-ca, 10 years, key kept at renewal
 *                                          (rotationPolicy Never: a renewed CA still verifies
 *                                          the leaves of the old one)
 *   Issuer <cluster>-cluster-ca            ca.secretName <cluster>-cluster-ca: issues server,
 *                                          operator client and peer certificates instead of
 *                                          the spec's issuers
 *
 * (names distinct enough not to take over a user's "<something>-ca" Secret or Issuer).
 *
 * cert-manager writes the top of the chain into every Secret's ca.crt, which is what etcd
 * trusts; a CA signed by a shared issuer would put the shared root there, so the cluster's
 * CA is its own root.
 *
 * Every leaf certificate: ECDSA P-256 key, re-generated on every renewal (rotationPolicy
 * Always), cert-manager's default duration and renewal.
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
	EO_CERT_CA,	    /* the per-cluster CA (only when per_cluster_ca) */
	EO_CERT_ROLE_COUNT_ /* not a role */
};

/* "server", "operator-client", "peer", "cluster-ca"; never NULL. */
const char *eo_cert_role_name(enum eo_cert_role role);

/*
 * True when the cluster's spec asks cert-manager for this role's certificate; the CA role only
 * with per_cluster_ca (and a plane in cert-manager mode).
 */
bool eo_desired_certificate_wanted(const json_t *cluster, enum eo_cert_role role,
				   bool per_cluster_ca);

/* Name of the role's Certificate: "<cluster>-server" etc. 0, or -1 when it does not fit. */
int eo_desired_certificate_name(char *buf, size_t n, const char *cluster, enum eo_cert_role role);

/*
 * The issuer of a role: with per_cluster_ca the operator's Issuer (<cluster>-cluster-ca, or
 * <cluster>-cluster-ca-bootstrap for the CA) written into buf; otherwise name and kind ("Issuer" or
 * "ClusterIssuer") borrowed from the cluster. 0, or -1 when the role is not wanted or the name
 * does not fit buf.
 */
int eo_desired_certificate_issuer(const json_t *cluster, enum eo_cert_role role,
				  bool per_cluster_ca, char *buf, size_t n, const char **name,
				  const char **kind);

/* The desired Certificate of a role; NULL when the role is not wanted (see above). */
json_t *eo_desired_certificate(const json_t *cluster, enum eo_cert_role role, bool per_cluster_ca,
			       const struct eo_desired_opts *o);

/* The operator's own Issuers of a per-cluster CA. */
enum eo_ca_issuer {
	EO_CA_ISSUER_SELFSIGNED = 0, /* <cluster>-cluster-ca-bootstrap */
	EO_CA_ISSUER_CA,	     /* <cluster>-cluster-ca */
	EO_CA_ISSUER_COUNT_	     /* not an issuer */
};
#define EO_CERT_MANAGER_ISSUER_KIND   "Issuer"
#define EO_CERT_MANAGER_ISSUER_PLURAL "issuers"

/* "<cluster>-cluster-ca-bootstrap" / "<cluster>-cluster-ca". 0, or -1 when it does not fit. */
int eo_desired_ca_issuer_name(char *buf, size_t n, const char *cluster, enum eo_ca_issuer which);

/* The desired Issuer (owned by the cluster, its labels); NULL on missing metadata. */
json_t *eo_desired_ca_issuer(const json_t *cluster, enum eo_ca_issuer which);

/*
 * Merge patch bringing an existing Certificate (or Issuer) in line with the desired one: our
 * labels, and every spec field the operator sets (secretName, issuerRef, commonName, dnsNames,
 * ipAddresses, usages, privateKey, secretTemplate, isCA, subject, duration; an Issuer's
 * selfSigned or ca) that differs. NULL when nothing differs (or
 * on allocation failure: callers treat it as no drift and look again on the next pass).
 */
json_t *eo_desired_certificate_patch(const json_t *desired, const json_t *actual);

#endif
