/*
 * plan/preconditions.c - what must hold before the cluster planner moves anything: a valid
 * spec, usable TLS material (cert-manager mode: plan/certs.c), no object of another owner under
 * the cluster's names, the Services in place. A failed one stops the pass with its reason;
 * the stops are shared with plan/certs.c and plan/auth.c. Part of the cluster planner
 * (plan/plan.h, plan/internal.h).
 */
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/meta.h"
#include "plan/internal.h"

static bool services_ok(const struct eo_plan_input *in, bool *ok)
{
	json_t *want_h = eo_desired_headless_service(in->cluster);
	json_t *want_c = eo_desired_client_service(in->cluster);
	json_t *ph = NULL, *pc = NULL;
	bool good = false;

	if (want_h == NULL || want_c == NULL) {
		*ok = false;
		goto out;
	}
	if (in->headless_svc == NULL || in->client_svc == NULL)
		goto out;
	ph = eo_desired_service_patch(want_h, in->headless_svc);
	pc = eo_desired_service_patch(want_c, in->client_svc);
	good = ph == NULL && pc == NULL;
out:
	json_decref(want_h);
	json_decref(want_c);
	json_decref(ph);
	json_decref(pc);
	return good;
}

/*
 * The first object under one of the cluster's own names that the cluster does not control:
 * another EtcdCluster's (cluster x's client Service x-client is cluster x-client's headless
 * Service), a user's, or one with no owner. Its kind into *kind; NULL when there is none.
 */
static const json_t *foreign_object(const struct eo_plan_input *in, const char **kind)
{
	const struct {
		const json_t *obj;
		const char *kind;
	} seen[] = {{in->headless_svc, "Service"},
		    {in->client_svc, "Service"},
		    {in->pdb, "PodDisruptionBudget"},
		    {in->netpol, "NetworkPolicy"}};
	const char *uid = eo_cluster_uid(in->cluster);

	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++)
		if (seen[i].obj != NULL && !eo_desired_is_controlled_by(seen[i].obj, uid)) {
			*kind = seen[i].kind;
			return seen[i].obj;
		}
	return NULL;
}

/*
 * A name the cluster needs is held by an object it does not control: that object is never
 * patched or deleted, and nothing else is done (true). Before the cluster formed Available
 * says so and no member is created, so a cluster whose names collide leaves nothing behind;
 * after, the members keep serving, Available tells how they are, Degraded says so and
 * membership changes wait. Looked at again every 30 s: the holder's events do not wake this
 * cluster.
 */
static bool stop_foreign(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running)
{
	const char *kind = NULL;
	const json_t *o = foreign_object(x->in, &kind);
	const char *name = eo_meta_name(o);
	char holder[2 * EO_NAME_MAX + 64];

	if (o == NULL)
		return false;
	eo_desired_controller_of(o, holder, sizeof(holder));
	eo__plan_msgf(
	    x,
	    "%s %s is not controlled by this EtcdCluster (its controller: %s): it is left as it "
	    "is and nothing else is done for this cluster until the name is free (delete or "
	    "rename the other object, or delete this EtcdCluster)",
	    kind, name != NULL ? name : "?", holder);
	if (running) {
		eo__plan_health_of(x, c, true);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, EO_REASON_FOREIGN_OBJECT,
			      x->out->message);
	} else {
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT,
			      x->out->message);
	}
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, EO_REASON_FOREIGN_OBJECT,
		      x->out->message);
	eo__plan_event(x, "Warning", EO_REASON_FOREIGN_OBJECT);
	x->out->action = EO_PLAN_NONE;
	x->out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
	return true;
}

/*
 * A terminal or refusing state (message in out->message): Available and Progressing False with
 * reason, Degraded still from the members when the cluster runs, a Warning Event, no action.
 */
void eo__plan_stop_with(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
			const char *reason)
{
	eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, reason, x->out->message);
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, reason, x->out->message);
	if (running)
		eo__plan_health_of(x, c, false);
	eo__plan_event(x, "Warning", reason);
	x->out->action = EO_PLAN_NONE;
}

/*
 * The TLS material is unusable: nothing is touched. Before the cluster formed Available says
 * so; after, Available keeps telling how the members are and Degraded says so.
 */
void eo__plan_stop_tls(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running,
		       const char *reason)
{
	if (running) {
		eo__plan_health_of(x, c, true);
		eo__plan_cond(x, EO_COND_DEGRADED, EO_COND_TRUE, reason, x->out->message);
	} else {
		eo__plan_cond(x, EO_COND_AVAILABLE, EO_COND_FALSE, reason, x->out->message);
	}
	eo__plan_cond(x, EO_COND_PROGRESSING, EO_COND_FALSE, reason, x->out->message);
	eo__plan_event(x, "Warning", reason);
	x->out->action = EO_PLAN_NONE;
	x->out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
}

/*
 * The preconditions of a pass, in order: the spec validates, cert-manager mode's Certificates
 * are there (plan/certs.c), the TLS material is usable, the CA bundles' digest is recorded (a
 * change rolls the members), no object of another owner holds one of the cluster's names, the
 * Services are in place. True when one of them decided the pass.
 */
bool eo__plan_preconditions(struct eo__plan_ctx *x, const struct eo__plan_counts *c, bool running)
{
	const struct eo_plan_input *in = x->in;
	const json_t *cluster = in->cluster;
	const char *name = eo_cluster_name(cluster);
	char buf[EO_PLAN_MSG_MAX];

	if (eo_cluster_validate(cluster, NULL, buf, sizeof(buf)) != 0) {
		eo__plan_msgf(x, "invalid spec: %s", buf);
		eo__plan_stop_with(x, c, running, EO_REASON_INVALID_SPEC);
		return true;
	}
	if (eo_cluster_uses_cert_manager(cluster) && eo__plan_step_certs(x, c, running))
		return true;
	if (eo_present(in->tls_reason)) {
		eo__plan_msgf(x, "%s", in->tls_message != NULL ? in->tls_message : in->tls_reason);
		eo__plan_stop_tls(x, c, running, in->tls_reason);
		return true;
	}
	if (eo_present(in->ca_bundle_digest) &&
	    (eo_cluster_ca_bundle_digest(cluster) == NULL ||
	     strcmp(in->ca_bundle_digest, eo_cluster_ca_bundle_digest(cluster)) != 0)) {
		/*
		 * A first record (a cluster created before this field, or a new one) rolls the
		 * running Pods too: nothing says which bundle they read; the message says "changed"
		 * only for a real change.
		 */
		x->ca_changed = eo_cluster_ca_bundle_digest(cluster) != NULL;
		eo__plan_set_status(x, "caBundleDigest", json_string(in->ca_bundle_digest));
	}
	if (stop_foreign(x, c, running))
		return true;
	if (!services_ok(in, &x->ok)) {
		eo__plan_msgf(x, "ensuring Services %s and %s-client", name, name);
		x->out->action = EO_PLAN_ENSURE_SERVICES;
		x->out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return true;
	}
	return false;
}
