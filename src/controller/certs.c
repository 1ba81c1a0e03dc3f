/*
 * controller/certs.c - cert-manager TLS mode, the act part. See certs.h.
 */
#include "controller/certs.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "desired/certificate.h"

static const struct eo_kube_resource RES_CERTS = {EO_CERT_MANAGER_GROUP_VERSION,
						  EO_CERT_MANAGER_PLURAL, NULL, NULL};

void eo_certs_seen_clear(struct eo_certs_seen *s)
{
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++)
		json_decref(s->held[r]);
	memset(s, 0, sizeof(*s));
}

/* 1 the issuer exists, 0 it does not, -1 could not tell. */
static int issuer_exists(struct eo_controller *c, const struct eo_log_ctx *lc,
			 const json_t *cluster, enum eo_cert_role role)
{
	const char *name = NULL, *kind = NULL;
	bool cluster_scoped;
	struct eo_kube_resource r = {EO_CERT_MANAGER_GROUP_VERSION, NULL, NULL, NULL};
	struct eo_kube_error err = {0};
	eo_kube_err e;

	if (eo_desired_certificate_issuer(cluster, role, &name, &kind) != 0)
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
	json_t *res = json_object_get(doc, "resources"), *r = NULL;
	size_t i;

	json_array_foreach(res, i, r)
	{
		const char *name = json_string_value(json_object_get(r, "name"));

		if (name != NULL && strcmp(name, EO_CERT_MANAGER_PLURAL) == 0)
			return true;
	}
	return false;
}

int eo_certs_observe(struct eo_controller *c, const struct eo_log_ctx *lc, const json_t *cluster,
		     struct eo_certs_seen *out)
{
	const char *ns = eo_cluster_namespace(cluster), *cname = eo_cluster_name(cluster);
	bool absent = false;

	memset(out, 0, sizeof(*out));
	out->plan.installed = true;
	for (int i = 0; i < EO_CERT_ROLE_COUNT_; i++) {
		enum eo_cert_role role = (enum eo_cert_role)i;
		struct eo_kube_resource r = RES_CERTS;
		struct eo_kube_error err = {0};
		char name[EO_NAME_MAX];
		json_t *obj = NULL;
		eo_kube_err e;

		out->plan.role[i].issuer_exists = -1;
		if (!eo_desired_certificate_wanted(cluster, role))
			continue;
		if (eo_desired_certificate_name(name, sizeof(name), cname, role) != 0)
			return -1;
		r.ns = ns;
		r.name = name;
		e = eo_kube_get(c->kc, &r, &obj, &err);
		if (e == EO_KUBE_ENOTFOUND) {
			absent = true;
			continue;
		}
		if (e != EO_KUBE_OK) {
			eo_log_kv(EO_LOG_WARN, lc, "reading the certificate failed", "certificate",
				  name, "error", eo_kube_strerror(e), "detail", err.message, NULL);
			eo_certs_seen_clear(out);
			return -1;
		}
		if (!eo_desired_is_controlled_by(obj, eo_cluster_uid(cluster))) {
			json_decref(obj); /* not ours: the create fails and says so */
			continue;
		}
		out->held[i] = obj;
		out->plan.role[i].have = obj;
		if (!eo_plan_cert_ready(obj, NULL))
			out->plan.role[i].issuer_exists = issuer_exists(c, lc, cluster, role);
	}
	if (absent) {
		/*
		 * A 404 is either a missing object or a missing API: discovery tells which. The
		 * group can be served without its certificates resource (the Certificate CRD
		 * alone deleted, a partial install): not installed either, or every create would
		 * only fail with a 404.
		 */
		struct eo_kube_error err = {0};
		json_t *doc = NULL;
		eo_kube_err e = eo_kube_get_path(c->kc, EO_CERT_MANAGER_DISCOVERY_PATH, &doc, &err);

		if (e == EO_KUBE_ENOTFOUND) {
			out->plan.installed = false;
		} else if (e != EO_KUBE_OK) {
			eo_log_kv(EO_LOG_WARN, lc, "cert-manager discovery failed", "error",
				  eo_kube_strerror(e), "detail", err.message, NULL);
			eo_certs_seen_clear(out);
			return -1;
		} else {
			out->plan.installed = serves_certificates(doc);
		}
		json_decref(doc);
	}
	return 0;
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
static bool taken(struct eo_controller *c, struct eo_kube_resource r, const json_t *cluster,
		  struct eo_certs_refusal *ref)
{
	struct eo_kube_error err = {0};
	json_t *live = NULL;
	bool other = false;

	if (eo_kube_get(c->kc, &r, &live, &err) == EO_KUBE_OK &&
	    !eo_desired_is_controlled_by(live, eo_cluster_uid(cluster))) {
		err = (struct eo_kube_error){.http_status = 409};
		snprintf(err.message, sizeof(err.message),
			 "Certificate %s already exists and is not controlled by this EtcdCluster; "
			 "delete or rename it",
			 r.name);
		refused(ref, true, r.name, EO_KUBE_EHTTP, &err);
		other = true;
	}
	json_decref(live);
	return other;
}

int eo_certs_ensure(struct eo_controller *c, const struct eo_log_ctx *lc, json_t *cluster,
		    const struct eo_certs_seen *seen, struct eo_certs_refusal *ref)
{
	int rc = 0;

	if (ref != NULL)
		memset(ref, 0, sizeof(*ref));
	for (int i = 0; i < EO_CERT_ROLE_COUNT_ && rc == 0; i++) {
		enum eo_cert_role role = (enum eo_cert_role)i;
		struct eo_kube_resource r = RES_CERTS;
		struct eo_kube_error err = {0};
		const json_t *have = seen->plan.role[i].have;
		json_t *want = NULL, *patch = NULL;
		eo_kube_err e = EO_KUBE_OK;
		const char *name;

		if (!eo_desired_certificate_wanted(cluster, role))
			continue;
		want = eo_desired_certificate(cluster, role, &c->build);
		if (want == NULL)
			return -1;
		name = eo_kube_obj_name(want);
		r.ns = eo_cluster_namespace(cluster);
		r.name = name;
		if (have == NULL) {
			e = eo_kube_create(c->kc, &r, want, NULL, &err);
			refused(ref, true, name, e, &err);
			if (e == EO_KUBE_OK) {
				char msg[EO_NAME_MAX + 64];

				snprintf(msg, sizeof(msg), "created Certificate %s (%s)", name,
					 eo_cert_role_name(role));
				eo_log_kv(EO_LOG_INFO, lc, "certificate created", "certificate",
					  name, NULL);
				if (c->rec != NULL)
					eo_kube_event(c->rec, cluster, "Normal",
						      "CertificateCreated", NULL, "%s", msg);
			} else if (e == EO_KUBE_EEXISTS && !taken(c, r, cluster, ref)) {
				e = EO_KUBE_OK;
			}
		} else if ((patch = eo_desired_certificate_patch(want, have)) != NULL) {
			e = eo_kube_patch(c->kc, &r, patch, NULL, &err);
			refused(ref, false, name, e, &err);
			if (e == EO_KUBE_OK)
				eo_log_kv(EO_LOG_INFO, lc, "certificate drift repaired",
					  "certificate", name, NULL);
		}
		if (e != EO_KUBE_OK) {
			eo_log_kv(EO_LOG_WARN, lc, "ensuring certificate failed", "certificate",
				  name, "error", eo_kube_strerror(e), "detail", err.message, NULL);
			rc = -1;
		}
		json_decref(patch);
		json_decref(want);
	}
	return rc;
}
