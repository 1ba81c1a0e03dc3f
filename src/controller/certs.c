/*
 * controller/certs.c - cert-manager TLS mode, the act part. See certs.h.
 */
#include "controller/certs.h"

#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/cluster.h"
#include "core/json.h"
#include "desired/certificate.h"

static const struct eo_kube_resource RES_CERTS = {EO_CERT_MANAGER_GROUP_VERSION,
						  EO_CERT_MANAGER_PLURAL, NULL, NULL};
static const struct eo_kube_resource RES_ISSUERS = {EO_CERT_MANAGER_GROUP_VERSION,
						    EO_CERT_MANAGER_ISSUER_PLURAL, NULL, NULL};

void eo_certs_seen_clear(struct eo_certs_seen *s)
{
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++)
		json_decref(s->held[r]);
	for (int i = 0; i < EO_CA_ISSUER_COUNT_; i++)
		json_decref(s->held_issuer[i]);
	memset(s, 0, sizeof(*s));
}

/* 1 the issuer exists, 0 it does not, -1 could not tell. */
static int issuer_exists(struct eo_controller *c, const struct eo_log_ctx *lc,
			 const json_t *cluster, enum eo_cert_role role, bool per_cluster_ca)
{
	const char *name = NULL, *kind = NULL;
	char buf[EO_NAME_MAX];
	bool cluster_scoped;
	struct eo_kube_resource r = {EO_CERT_MANAGER_GROUP_VERSION, NULL, NULL, NULL};
	struct eo_kube_error err = {0};
	eo_kube_err e;

	if (eo_desired_certificate_issuer(cluster, role, per_cluster_ca, buf, sizeof(buf), &name,
					  &kind) != 0)
		return -1;
	cluster_scoped = strcmp(kind, "ClusterIssuer") == 0;
	r.plural = cluster_scoped ? "clusterissuers" : "issuers";
	r.ns = cluster_scoped ? NULL : eo_cluster_namespace(cluster);
	r.name = name;
	e = eo_kube_get(c->kc, &r, NULL, &err);
	if (e == EO_KUBE_OK)
		return 1;
	if (e == EO_KUBE_ENOTFOUND)
		return 0;
	eo_log_kv(EO_LOG_WARN, lc, "reading the issuer failed", "issuer", name, "kind", kind,
		  "error", eo_kube_strerror(e), "detail", err.message, NULL);
	return -1;
}

/* The discovery document lists the certificates resource. */
static bool serves_certificates(const json_t *doc)
{
	return eo_json_named(json_object_get(doc, "resources"), EO_CERT_MANAGER_PLURAL) != NULL;
}

/*
 * Reads r (namespaced) into *out when this cluster controls it; NULL when absent (*absent set)
 * or not ours (the create then fails and says so). 0, or -1 when the apiserver could not be
 * asked.
 */
static int read_owned(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *cluster,
		      struct eo_kube_resource r, json_t **out, bool *absent)
{
	struct eo_kube_error err = {0};
	json_t *obj = NULL;
	eo_kube_err e = eo_kube_get(c->kc, &r, &obj, &err);

	*out = NULL;
	if (e == EO_KUBE_ENOTFOUND) {
		*absent = true;
		return 0;
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, lc, "reading a cert-manager object failed", "resource",
			  r.plural, "name", r.name, "error", eo_kube_strerror(e), "detail",
			  err.message, NULL);
		return -1;
	}
	if (!eo_desired_is_controlled_by(obj, eo_cluster_uid(cluster))) {
		json_decref(obj);
		return 0;
	}
	*out = obj;
	return 0;
}

/* The per-cluster CA's Issuers this cluster owns, into out. 0, or -1. */
static int read_ca_issuers(struct eo_controller *c, const struct eo_log_ctx *lc,
			   const json_t *cluster, struct eo_certs_seen *out)
{
	const char *ns = eo_cluster_namespace(cluster), *cname = eo_cluster_name(cluster);

	for (int i = 0; i < EO_CA_ISSUER_COUNT_; i++) {
		struct eo_kube_resource r = RES_ISSUERS;
		char name[EO_NAME_MAX];
		bool gone = false;

		if (eo_desired_ca_issuer_name(name, sizeof(name), cname, (enum eo_ca_issuer)i) != 0)
			return -1;
		r.ns = ns;
		r.name = name;
		if (read_owned(c, lc, cluster, r, &out->held_issuer[i], &gone) != 0)
			return -1;
		out->plan.issuer[i] = out->held_issuer[i];
	}
	return 0;
}

/*
 * A 404 is either a missing object or a missing API: discovery tells which. The group can be
 * served without its certificates resource (the Certificate CRD alone deleted, a partial
 * install): not installed either, or every create would only fail with a 404. Sets
 * out->plan.installed; 0, or -1 when discovery failed.
 */
static int discover_cert_manager(struct eo_controller *c, const struct eo_log_ctx *lc,
				 struct eo_certs_seen *out)
{
	struct eo_kube_error err = {0};
	json_t *doc = NULL;
	eo_kube_err e = eo_kube_get_path(c->kc, EO_CERT_MANAGER_DISCOVERY_PATH, &doc, &err);

	if (e == EO_KUBE_ENOTFOUND) {
		out->plan.installed = false;
	} else if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, lc, "cert-manager discovery failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	} else {
		out->plan.installed = serves_certificates(doc);
	}
	json_decref(doc);
	return 0;
}

int eo_certs_observe(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *cluster,
		     struct eo_certs_seen *out)
{
	const char *ns = eo_cluster_namespace(cluster), *cname = eo_cluster_name(cluster);
	bool absent = false, ca_absent = false, pcc = false;
	struct eo_cluster_tls t;

	memset(out, 0, sizeof(*out));
	eo_cluster_tls(cluster, &t);
	out->plan.installed = true;
	for (int i = 0; i < EO_CERT_ROLE_COUNT_; i++) {
		enum eo_cert_role role = (enum eo_cert_role)i;
		struct eo_kube_resource r = RES_CERTS;
		char name[EO_NAME_MAX];
		bool ca = role == EO_CERT_CA;

		out->plan.role[i].issuer_exists = -1;
		/* The CA Certificate is read whatever the mode: it is one of the mode's inputs. */
		if (ca ? t.ca == EO_TLS_CA_ISSUER
		       : !eo_desired_certificate_wanted(cluster, role, false))
			continue;
		if (eo_desired_certificate_name(name, sizeof(name), cname, role) != 0)
			goto fail;
		r.ns = ns;
		r.name = name;
		if (read_owned(c, lc, cluster, r, &out->held[i], ca ? &ca_absent : &absent) != 0)
			goto fail;
		out->plan.role[i].have = out->held[i];
	}
	pcc = eo_plan_certs_per_cluster_ca(cluster, &out->plan);
	out->plan.per_cluster_ca = pcc;
	absent = absent || (pcc && ca_absent);
	if (pcc && read_ca_issuers(c, lc, cluster, out) != 0)
		goto fail;
	for (int i = 0; i < EO_CERT_ROLE_COUNT_; i++) {
		const json_t *have = out->plan.role[i].have;

		if (have != NULL && !eo_plan_cert_ready(have, NULL) &&
		    eo_desired_certificate_wanted(cluster, (enum eo_cert_role)i, pcc))
			out->plan.role[i].issuer_exists =
			    issuer_exists(c, lc, cluster, (enum eo_cert_role)i, pcc);
	}
	if (absent && discover_cert_manager(c, lc, out) != 0)
		goto fail;
	return 0;
fail:
	eo_certs_seen_clear(out);
	return -1;
}

static void refused(struct eo_certs_refusal *ref, bool create, const char *name, eo_kube_err e,
		    const struct eo_kube_error *err)
{
	if (ref == NULL || ref->set || e == EO_KUBE_OK || err->http_status < 400 ||
	    e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT || e == EO_KUBE_EEXISTS)
		return;
	ref->set = true;
	ref->create = create;
	snprintf(ref->name, sizeof(ref->name), "%s", name);
	ref->err = *err;
}

/* A create answered 409: ours (a lagging read: fine) or someone else's (a refusal). */
static bool taken(struct eo_controller *c, struct eo_kube_resource r, const char *kind,
		  const json_t *cluster, struct eo_certs_refusal *ref)
{
	struct eo_kube_error err = {0};
	json_t *live = NULL;
	bool other = false;

	if (eo_kube_get(c->kc, &r, &live, &err) == EO_KUBE_OK &&
	    !eo_desired_is_controlled_by(live, eo_cluster_uid(cluster))) {
		err = (struct eo_kube_error){.http_status = 409};
		snprintf(err.message, sizeof(err.message),
			 "%s %s already exists and is not controlled by this EtcdCluster; "
			 "delete or rename it",
			 kind, r.name);
		refused(ref, true, r.name, EO_KUBE_EHTTP, &err);
		other = true;
	}
	json_decref(live);
	return other;
}

/* Creates want when have is NULL, else patches the drift. 0, or -1 when a write failed. */
static int ensure_one(struct eo_controller *c, const struct eo_log_ctx *lc, json_t *cluster,
		      struct eo_kube_resource r, json_t *want, const json_t *have, const char *what,
		      struct eo_certs_refusal *ref)
{
	const char *kind = json_string_value(json_object_get(want, "kind"));
	struct eo_kube_error err = {0};
	json_t *patch = NULL;
	eo_kube_err e = EO_KUBE_OK;

	r.ns = eo_cluster_namespace(cluster);
	r.name = eo_meta_name(want);
	if (have == NULL) {
		e = eo_kube_create(c->kc, &r, want, NULL, &err);
		refused(ref, true, r.name, e, &err);
		if (e == EO_KUBE_OK) {
			char msg[EO_NAME_MAX + 64];
			bool issuer = strcmp(kind, EO_CERT_MANAGER_ISSUER_KIND) == 0;

			snprintf(msg, sizeof(msg), "created %s %s (%s)", kind, r.name, what);
			eo_log_kv(EO_LOG_INFO, lc,
				  issuer ? "issuer created" : "certificate created",
				  issuer ? "issuer" : "certificate", r.name, NULL);
			if (c->rec != NULL)
				eo_kube_event(c->rec, cluster, "Normal",
					      issuer ? "IssuerCreated" : "CertificateCreated", NULL,
					      "%s", msg);
		} else if (e == EO_KUBE_EEXISTS && !taken(c, r, kind, cluster, ref)) {
			e = EO_KUBE_OK;
		}
	} else if ((patch = eo_desired_certificate_patch(want, have)) != NULL) {
		e = eo_kube_patch(c->kc, &r, patch, NULL, &err);
		refused(ref, false, r.name, e, &err);
		if (e == EO_KUBE_OK)
			eo_log_kv(EO_LOG_INFO, lc, "cert-manager object drift repaired", "kind",
				  kind, "name", r.name, NULL);
	}
	json_decref(patch);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, lc, "ensuring a cert-manager object failed", "kind", kind,
			  "name", r.name, "error", eo_kube_strerror(e), "detail", err.message,
			  NULL);
		return -1;
	}
	return 0;
}

int eo_certs_ensure(struct eo_controller *c, const struct eo_log_ctx *lc, json_t *cluster,
		    const struct eo_certs_seen *seen, struct eo_certs_refusal *ref)
{
	bool pcc = seen->plan.per_cluster_ca;
	int rc = 0;

	if (ref != NULL)
		memset(ref, 0, sizeof(*ref));
	for (int i = 0; pcc && i < EO_CA_ISSUER_COUNT_ && rc == 0; i++) {
		json_t *want = eo_desired_ca_issuer(cluster, (enum eo_ca_issuer)i);

		if (want == NULL)
			return -1;
		rc = ensure_one(
		    c, lc, cluster, RES_ISSUERS, want, seen->plan.issuer[i],
		    i == EO_CA_ISSUER_CA ? "the cluster CA issuer" : "signs the cluster CA", ref);
		json_decref(want);
	}
	/* The CA first: cert-manager issues the leaves as soon as their Issuer is ready. */
	for (int k = 0; k < EO_CERT_ROLE_COUNT_ && rc == 0; k++) {
		int i = (k + EO_CERT_CA) % EO_CERT_ROLE_COUNT_;
		enum eo_cert_role role = (enum eo_cert_role)i;
		json_t *want = NULL;

		if (!eo_desired_certificate_wanted(cluster, role, pcc))
			continue;
		want = eo_desired_certificate(cluster, role, pcc, &c->build);
		if (want == NULL)
			return -1;
		rc = ensure_one(c, lc, cluster, RES_CERTS, want, seen->plan.role[i].have,
				eo_cert_role_name(role), ref);
		json_decref(want);
	}
	return rc;
}
