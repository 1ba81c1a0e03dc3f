/*
 * plan/certs.c - the cert-manager verdict of the cluster planner. See certs.h.
 */
#include "plan/certs.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/names.h"
#include "api/conditions.h"
#include "plan/internal.h"

bool eo_plan_cert_ready(const json_t *cert, const char **message)
{
	json_t *conds = json_object_get(json_object_get(cert, "status"), "conditions");
	json_t *c = NULL;
	size_t i;

	if (message != NULL)
		*message = NULL;
	json_array_foreach(conds, i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));

		if (type == NULL || strcmp(type, "Ready") != 0)
			continue;
		if (message != NULL)
			*message = json_string_value(json_object_get(c, "message"));
		return json_is_string(json_object_get(c, "status")) &&
		       strcmp(json_string_value(json_object_get(c, "status")), "True") == 0;
	}
	return false;
}

/* The leaf names the operator's CA Issuer. */
static bool from_cluster_ca(const json_t *cluster, const json_t *leaf)
{
	json_t *ref = json_object_get(json_object_get(leaf, "spec"), "issuerRef");
	const char *name = json_string_value(json_object_get(ref, "name"));
	const char *kind = json_string_value(json_object_get(ref, "kind"));
	char want[EO_NAME_MAX];

	if (eo_desired_ca_issuer_name(want, sizeof(want), eo_cluster_name(cluster),
				      EO_CA_ISSUER_CA) != 0 ||
	    name == NULL || strcmp(name, want) != 0)
		return false;
	return kind == NULL || strcmp(kind, EO_CERT_MANAGER_ISSUER_KIND) == 0;
}

bool eo_plan_certs_per_cluster_ca(const json_t *cluster, const struct eo_plan_certs *seen)
{
	struct eo_cluster_tls t;

	eo_cluster_tls(cluster, &t);
	if (t.ca != EO_TLS_CA_UNSET)
		return t.ca == EO_TLS_CA_PER_CLUSTER;
	if (seen != NULL && seen->role[EO_CERT_CA].have != NULL)
		return true;
	for (int r = 0; seen != NULL && r < EO_CERT_CA; r++) {
		if (seen->role[r].have != NULL)
			return from_cluster_ca(cluster, seen->role[r].have);
	}
	return eo_cluster_cluster_id(cluster) == NULL;
}

/* An operator Issuer of the per-cluster CA is missing or differs. */
static int issuers_drift(const json_t *cluster, const struct eo_plan_certs *seen, bool *drift)
{
	*drift = false;
	for (int i = 0; i < EO_CA_ISSUER_COUNT_ && !*drift; i++) {
		json_t *want = eo_desired_ca_issuer(cluster, (enum eo_ca_issuer)i), *patch = NULL;

		if (want == NULL)
			return -1;
		patch = seen->issuer[i] != NULL
			    ? eo_desired_certificate_patch(want, seen->issuer[i])
			    : NULL;
		*drift = seen->issuer[i] == NULL || patch != NULL;
		json_decref(patch);
		json_decref(want);
	}
	return 0;
}

int eo_plan_certs(const json_t *cluster, const struct eo_desired_opts *o,
		  const struct eo_plan_certs *seen, enum eo_certs_verdict *verdict, char *msg,
		  size_t n)
{
	const char *cname = eo_cluster_name(cluster);
	bool pcc = seen != NULL && seen->per_cluster_ca;
	int missing = -1, not_ready = -1;
	const char *why = NULL;
	char name[EO_NAME_MAX];

	*verdict = EO_CERTS_READY;
	msg[0] = '\0';
	if (seen == NULL || !seen->installed) {
		*verdict = EO_CERTS_NOT_INSTALLED;
		snprintf(msg, n,
			 "spec.tls asks for cert-manager Certificates but this Kubernetes does not "
			 "serve cert-manager.io/v1 Certificates; install cert-manager (looked at "
			 "again every %ld s)",
			 EO_PLAN_REQUEUE_CERTS_MISSING_MS / 1000);
		return 0;
	}
	if (seen->per_cluster_ca) {
		bool drift = false;

		if (issuers_drift(cluster, seen, &drift) != 0)
			return -1;
		if (drift) {
			*verdict = EO_CERTS_ENSURE;
			snprintf(msg, n, "ensuring the cluster CA Issuers of %s", cname);
			return 0;
		}
	}
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++) {
		json_t *want = NULL, *patch = NULL;
		const json_t *have = seen->role[r].have;

		if (!eo_desired_certificate_wanted(cluster, (enum eo_cert_role)r, pcc))
			continue;
		if ((want = eo_desired_certificate(cluster, (enum eo_cert_role)r, pcc, o)) == NULL)
			return -1;
		patch = have != NULL ? eo_desired_certificate_patch(want, have) : NULL;
		json_decref(want);
		if (have == NULL || patch != NULL) {
			json_decref(patch);
			*verdict = EO_CERTS_ENSURE;
			snprintf(msg, n, "ensuring the cert-manager Certificates of %s", cname);
			return 0;
		}
		if (eo_plan_cert_ready(have, &why))
			continue;
		if (seen->role[r].issuer_exists == 0 && missing < 0)
			missing = r;
		if (not_ready < 0)
			not_ready = r;
	}
	if (missing >= 0) {
		const char *iname = "", *ikind = "";
		char ibuf[EO_NAME_MAX];

		(void)eo_desired_certificate_issuer(cluster, (enum eo_cert_role)missing, pcc, ibuf,
						    sizeof(ibuf), &iname, &ikind);
		(void)eo_desired_certificate_name(name, sizeof(name), cname,
						  (enum eo_cert_role)missing);
		*verdict = EO_CERTS_ISSUER_MISSING;
		snprintf(msg, n, "%s %s referenced by Certificate %s does not exist", ikind, iname,
			 name);
		return 0;
	}
	if (not_ready >= 0) {
		(void)eo_desired_certificate_name(name, sizeof(name), cname,
						  (enum eo_cert_role)not_ready);
		(void)eo_plan_cert_ready(seen->role[not_ready].have, &why);
		*verdict = EO_CERTS_NOT_READY;
		snprintf(msg, n, "Certificate %s is not Ready: %s", name,
			 why != NULL && why[0] != '\0' ? why : "not issued yet");
	}
	return 0;
}

/* --- cert-manager mode as a step of the cluster planner (plan/internal.h) --- */

/*
 * cert-manager TLS mode (plan/certs.h). True when the verdict decides this pass; on a running
 * cluster a Certificate that is not Ready only makes Degraded say so, and planning goes on.
 */
bool eo__plan_step_certs(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running)
{
	enum eo_certs_verdict v = EO_CERTS_READY;
	char m[EO_PLAN_CERTS_MSG_MAX];
	const char *reason = NULL;

	if (eo_plan_certs(x->in->cluster, x->in->build, x->in->certs, &v, m, sizeof(m)) != 0) {
		x->ok = false;
		return true;
	}
	if (v == EO_CERTS_READY)
		return false;
	eo__plan_msgf(x, "%s", m);
	switch (v) {
	case EO_CERTS_NOT_INSTALLED:
		eo__plan_stop_with(x, c, running, EO_REASON_CERT_MANAGER_NOT_INSTALLED);
		x->out->requeue_ms = EO_PLAN_REQUEUE_CERTS_MISSING_MS;
		return true;
	case EO_CERTS_ENSURE:
		x->out->action = EO_PLAN_ENSURE_CERTIFICATES;
		x->out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return true;
	default:
		break;
	}
	reason = v == EO_CERTS_ISSUER_MISSING ? EO_REASON_ISSUER_NOT_FOUND
		 : running		      ? EO_REASON_CERTIFICATE_NOT_READY
					      : EO_REASON_WAITING_FOR_CERTIFICATES;
	if (running) {
		eo__plan_etcd_problem(x, reason);
		x->out->message[0] = '\0';
		return false;
	}
	if (v == EO_CERTS_ISSUER_MISSING) {
		eo__plan_stop_with(x, c, false, reason);
	} else {
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, reason, x->out->message);
		eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_TRUE, reason, x->out->message);
		x->out->action = EO_PLAN_WAIT;
	}
	x->out->requeue_ms = EO_PLAN_REQUEUE_CERTS_MS;
	return true;
}
