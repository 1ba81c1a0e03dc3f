/*
 * controller/certs.h - the act part of cert-manager TLS mode (see plan/certs.h and
 * desired/certificate.h).
 *
 * Certificates are read with GET at each reconcile of a cluster in cert-manager mode, not
 * watched: the operator starts and runs without cert-manager, and no informer is opened on a
 * resource type that may not exist. While a Certificate is not Ready the planner requeues
 * every few seconds, which is what picks up cert-manager's progress.
 */
#ifndef EO_CONTROLLER_CERTS_H
#define EO_CONTROLLER_CERTS_H

#include <stdbool.h>

#include <jansson.h>

#include "api/names.h"
#include "kube/err.h"

#include "controller/controller.h"
#include "obs/log.h"
#include "plan/certs.h"

/* The API path whose presence means cert-manager is installed. */
#define EO_CERT_MANAGER_DISCOVERY_PATH "/apis/" EO_CERT_MANAGER_GROUP_VERSION

/* What was read; the objects are owned here (eo_certs_seen_clear frees them). */
struct eo_certs_seen {
	struct eo_plan_certs plan; /* borrowed views of the objects below */
	json_t *held[EO_CERT_ROLE_COUNT_];
	json_t *held_issuer[EO_CA_ISSUER_COUNT_];
};

/*
 * Reads the cluster's wanted Certificates (and the per-cluster CA Certificate unless the spec
 * says Issuer), decides plan.per_cluster_ca from them (eo_plan_certs_per_cluster_ca), then
 * with a per-cluster CA reads the operator's two Issuers; when one is absent (404), asks the
 * discovery API whether cert-manager.io/v1 is served and lists certificates (plan.installed); for a
 * Certificate that is not Ready, whether its Issuer / ClusterIssuer exists. A Certificate of
 * that name that this cluster does not control is reported absent, so that the create fails
 * and says why. 0, or -1 when the apiserver could not be asked (retry with backoff).
 */
int eo_certs_observe(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *cluster,
		     struct eo_certs_seen *out);

void eo_certs_seen_clear(struct eo_certs_seen *s);

/* A write the apiserver refused (for the Degraded condition, plan/failure.h). */
struct eo_certs_refusal {
	bool set;
	bool create; /* create, else patch */
	char name[EO_NAME_MAX];
	struct eo_kube_error err;
};

/*
 * Creates the missing and patches the drifted Certificates, and with a per-cluster CA its
 * Issuers first (EO_PLAN_ENSURE_CERTIFICATES), with an Event CertificateCreated (IssuerCreated)
 * per create. 0, or -1 when a write failed; *ref then says
 * which write the apiserver refused, if it was a refusal (a name taken by a Certificate this
 * cluster does not control is one).
 */
int eo_certs_ensure(struct eo_controller *c, const struct eo_log_ctx *lc, json_t *cluster,
		    const struct eo_certs_seen *seen, struct eo_certs_refusal *ref);

#endif
