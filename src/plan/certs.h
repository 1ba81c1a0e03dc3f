/*
 * plan/certs.h - what the cluster planner makes of a cluster's cert-manager Certificates
 * (pure).
 *
 * The controller observes, for a cluster in cert-manager TLS mode (eo_cluster_uses_cert_manager),
 * whether the cert-manager.io/v1 API is served, each wanted Certificate as it is, and - for a
 * Certificate that is not Ready - whether its Issuer or ClusterIssuer exists. eo_plan_certs()
 * turns that into one verdict, in this order:
 *
 *   NOT_INSTALLED  cert-manager.io/v1 serves no certificates: Available=False and
 *                  Progressing=False CertManagerNotInstalled, nothing created; looked at
 *                  again every 30 s, so installing cert-manager needs no operator restart
 *   ENSURE         a wanted Certificate is missing or differs from desired/certificate.h:
 *                  create / patch them (EO_PLAN_ENSURE_CERTIFICATES)
 *   ISSUER_MISSING a Certificate is not Ready and its issuer does not exist: IssuerNotFound
 *   NOT_READY      a Certificate is not Ready (being issued, or cert-manager says why not):
 *                  WaitingForCertificates before the cluster bootstrapped (no member, so no Pod,
 *                  exists before its Secrets), CertificateNotReady on a running cluster
 *   READY          every Certificate is Ready: plan as usual
 *
 * With a per-cluster CA (per_cluster_ca, see eo_plan_certs_per_cluster_ca) the operator's two
 * Issuers and the CA Certificate count as wanted objects too: missing or drifted, ENSURE.
 */
#ifndef EO_PLAN_CERTS_H
#define EO_PLAN_CERTS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "desired/certificate.h"
#include "desired/desired.h"

#define EO_REASON_ISSUER_NOT_FOUND	   "IssuerNotFound"
#define EO_REASON_WAITING_FOR_CERTIFICATES "WaitingForCertificates"
#define EO_REASON_CERTIFICATE_NOT_READY	   "CertificateNotReady"

/* Re-check interval while cert-manager is missing or a Certificate is not Ready. */
#define EO_PLAN_REQUEUE_CERTS_MS	 5000L
#define EO_PLAN_REQUEUE_CERTS_MISSING_MS 30000L

/* What the controller saw (all borrowed). */
struct eo_plan_certs {
	bool installed;	     /* cert-manager.io/v1 serves certificates */
	bool per_cluster_ca; /* eo_plan_certs_per_cluster_ca(), set once role[] was read */
	/* the operator's Issuers of the per-cluster CA as they are, NULL: absent */
	const json_t *issuer[EO_CA_ISSUER_COUNT_];
	struct eo_plan_cert {
		const json_t *have; /* the Certificate <cluster>-<role> as it is, NULL: absent */
		/* when have is not Ready: 1 the issuer exists, 0 it does not, -1 not known */
		int issuer_exists;
	} role[EO_CERT_ROLE_COUNT_];
};

enum eo_certs_verdict {
	EO_CERTS_READY = 0,
	EO_CERTS_NOT_INSTALLED,
	EO_CERTS_ENSURE,
	EO_CERTS_ISSUER_MISSING,
	EO_CERTS_NOT_READY,
};

#define EO_PLAN_CERTS_MSG_MAX 512

/*
 * The verdict for cluster (which must use cert-manager) given what was seen (NULL: nothing
 * was observed, read as not installed); msg tells which Certificate and why. -1 on allocation
 * failure or missing metadata.
 */
int eo_plan_certs(const json_t *cluster, const struct eo_desired_opts *o,
		  const struct eo_plan_certs *seen, enum eo_certs_verdict *verdict, char *msg,
		  size_t n);

/*
 * Whether the cluster's certificates come from a CA of its own (desired/certificate.h), from
 * the spec and the Certificates read into seen->role[] (CA and leaves):
 *
 *   spec.tls.certificateAuthority PerCluster / Issuer   as written
 *   absent, the CA Certificate exists                   per-cluster
 *   absent, a leaf Certificate exists                   per-cluster when it names the
 *                                                       operator's CA Issuer, else its issuer
 *                                                       stays (made by an older operator)
 *   absent, none exists, the cluster has an ID          the issuer (Certificates deleted
 *                                                       while its members run on Secrets of
 *                                                       the issuer: a new CA would strand them)
 *   absent, none exists, no cluster ID                  per-cluster (a new cluster)
 *
 * A running cluster thus never sees its CA replaced by this rule.
 */
bool eo_plan_certs_per_cluster_ca(const json_t *cluster, const struct eo_plan_certs *seen);

/*
 * The Ready condition of a Certificate: true when status True; *message (borrowed, may be
 * NULL) is the condition's message.
 */
bool eo_plan_cert_ready(const json_t *cert, const char **message);

#endif
