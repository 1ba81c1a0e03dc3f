/*
 * controller/archive.c - the EtcdArchive reconciler (issue 20 item 1): observe,
 * plan/archive.h decides, act.
 *
 * Observe: the EtcdArchive and its EtcdCluster with the cluster's members (caches), the
 * archiver Deployment <archive>-archiver read live (no Deployment informer: the reconciler
 * comes back every 30 s anyway), the archiver's Pod (Pod cache, label EO_LABEL_ARCHIVE).
 * When the plan asks, GET http://<Pod IP>:EO_ARCHIVE_STATUS_PORT/status (bounded by
 * POLL_TIMEOUT_MS and POLL_BODY_MAX), then plan again with the answer. This runs on the
 * EtcdArchive's own work queue and workers: it never delays an EtcdCluster pass.
 * Act: create the Deployment (AlreadyExists: the live read lags, come back), replace it when
 * its hash differs (resourceVersion precondition), never touch one the archive does not
 * control; write the status (merge patch guarded by resourceVersion) with the Event of a
 * change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "api/archive.h"
#include "api/cluster.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "controller/controller.h"
#include "controller/internal.h"
#include "obs/log.h"
#include "plan/archive.h"
#include "plan/plan.h"
#include "snapshot/contract.h"

#define REQUEUE_MS	1000L
#define POLL_TIMEOUT_MS 3000L
#define POLL_BODY_MAX	(64 * 1024)
#define MAX_ENDPOINTS	16

static const struct eo_kube_resource RES_ARCHIVES = {EO_API_GROUP_VERSION, EO_PLURAL_ARCHIVES, NULL,
						     NULL};
static const struct eo_kube_resource RES_DEPLOYMENTS = {"apps/v1", "deployments", NULL, NULL};

struct archive_pass {
	struct eo_log_ctx lc;
	struct eo_aplan_input in;
	struct eo_aplan_result pr;
	struct eo_aplan_agent agent;
	json_t *archive, *cluster, *dep, *pod;
	char ep[MAX_ENDPOINTS][EO_DESIRED_URL_MAX];
	char poll_err[256];
	char dep_name[EO_NAME_MAX];
};

static void pass_clear(struct archive_pass *x)
{
	eo_aplan_result_clear(&x->pr);
	json_decref(x->archive);
	json_decref(x->cluster);
	json_decref(x->dep);
	json_decref(x->pod);
}

static int cmp_ep(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The client URLs of the cluster's members (controlled by it, not being deleted), sorted so
 * that the built Deployment does not change with the cache's order. 0 or -1. */
static int endpoints(struct eo_controller *c, struct archive_pass *x)
{
	const char *ns = eo_cluster_namespace(x->cluster), *cname = eo_meta_name(x->cluster);
	json_t *ms = eo_cache_set_by_owner(&c->members, eo_cluster_uid(x->cluster)), *m;
	size_t i, n = 0;

	if (ms == NULL)
		return -1;
	json_array_foreach(ms, i, m)
	{
		const char *mname = eo_meta_name(m);

		if (mname == NULL || !eo_desired_is_controlled_by(m, eo_cluster_uid(x->cluster)) ||
		    eo_member_is_deleting(m) || n >= MAX_ENDPOINTS)
			continue;
		if (eo_desired_member_client_url(x->ep[n], EO_DESIRED_URL_MAX, &c->build, mname,
						 cname, ns, eo_desired_member_client_tls(m)) != 0) {
			json_decref(ms);
			return -1;
		}
		n++;
	}
	json_decref(ms);
	qsort(x->ep, n, EO_DESIRED_URL_MAX, cmp_ep);
	x->in.endpoints = (const char(*)[EO_DESIRED_URL_MAX])x->ep;
	x->in.n_endpoints = n;
	return 0;
}

/* The archiver's Pod (label EO_LABEL_ARCHIVE=<archive>, not being deleted), or NULL. */
static json_t *archiver_pod(struct eo_controller *c, const char *ns, const char *name)
{
	json_t *pods = eo_cache_set_list(&c->pods, ns), *p, *found = NULL;
	size_t i;

	json_array_foreach(pods, i, p)
	{
		const char *l = eo_meta_label(p, EO_LABEL_ARCHIVE);

		if (l != NULL && strcmp(l, name) == 0 && !eo_meta_is_deleting(p) &&
		    (found == NULL || eo_plan_pod_ready(p))) {
			json_decref(found);
			found = json_incref(p);
		}
	}
	json_decref(pods);
	return found;
}

static int observe(struct eo_controller *c, struct archive_pass *x, const char *ns,
		   const char *name)
{
	json_t *raw = eo_cache_set_get(&c->archives, ns, name), *craw;
	const char *cname;

	if (raw == NULL)
		return 1; /* deleted: the Deployment goes with it (owner reference) */
	x->archive = eo_controller_typed_copy(raw, EO_API_GROUP_VERSION, EO_KIND_ARCHIVE);
	json_decref(raw);
	if (x->archive == NULL || eo_name_archiver(x->dep_name, sizeof(x->dep_name), name) != 0)
		return -1;
	if (eo_meta_is_deleting(x->archive))
		return 1;
	cname = eo_archive_cluster_name(x->archive);
	if (cname != NULL && (craw = eo_cache_set_get(&c->clusters, ns, cname)) != NULL) {
		x->cluster = eo_controller_typed_copy(craw, EO_API_GROUP_VERSION, EO_KIND_CLUSTER);
		json_decref(craw);
		if (x->cluster == NULL || endpoints(c, x) != 0)
			return -1;
	}
	/* Live (no Deployment informer); NULL when there is none. */
	if (eo__ctl_get_live(c, &x->lc, eo_kube_res_at(RES_DEPLOYMENTS, ns, x->dep_name),
			     &x->dep) != 0)
		return -1;
	x->pod = archiver_pod(c, ns, name);
	x->in.archive = x->archive;
	x->in.cluster = x->cluster;
	x->in.operator_image = c->operator_image;
	x->in.build = &c->build;
	x->in.deployment = x->dep;
	x->in.deployment_foreign =
	    x->dep != NULL && !eo_desired_is_controlled_by(x->dep, eo_meta_uid(x->archive));
	x->in.pod_ready = x->pod != NULL && eo_plan_pod_ready(x->pod);
	x->in.pod = x->pod;
	x->in.now = eo_controller_now(c);
	return 0;
}

/* ---- the poll ------------------------------------------------------------------------ */

struct body {
	char buf[POLL_BODY_MAX + 1];
	size_t len;
	bool over;
};

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
	struct body *b = ud;
	size_t n = size * nmemb;

	if (b->len + n > POLL_BODY_MAX) {
		b->over = true;
		return 0;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	return n;
}

/* GET /status of the Pod: 0 with x->agent, or -1 with x->poll_err. */
static int poll_agent(struct archive_pass *x)
{
	const char *ip =
	    json_string_value(json_object_get(json_object_get(x->pod, "status"), "podIP"));
	struct body *b = calloc(1, sizeof(*b));
	char url[128];
	CURL *h = NULL;
	CURLcode e;
	long code = 0;
	int rc = -1;

	if (ip == NULL || ip[0] == '\0' || strlen(ip) > 64 || b == NULL) {
		snprintf(x->poll_err, sizeof(x->poll_err), "%s",
			 b == NULL ? "out of memory" : "the archiver Pod has no IP");
		free(b);
		return -1;
	}
	snprintf(url, sizeof(url),
		 strchr(ip, ':') != NULL ? "http://[%s]:%d/status" : "http://%s:%d/status", ip,
		 EO_ARCHIVE_STATUS_PORT);
	h = curl_easy_init();
	if (h == NULL) {
		snprintf(x->poll_err, sizeof(x->poll_err), "curl_easy_init failed");
		free(b);
		return -1;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, POLL_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, POLL_TIMEOUT_MS);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
	/* The Pod IP directly, whatever proxy the environment names ("": none, CURLOPT_PROXY(3)).
	 */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	e = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	if (e != CURLE_OK)
		snprintf(x->poll_err, sizeof(x->poll_err), "%s: %s", url,
			 b->over ? "answer over 64 KiB" : curl_easy_strerror(e));
	else if (code != 200)
		snprintf(x->poll_err, sizeof(x->poll_err), "%s: HTTP %ld", url, code);
	else
		rc = eo_aplan_parse_status(b->buf, b->len, &x->agent, x->poll_err,
					   sizeof(x->poll_err));
	free(b);
	return rc;
}

/* ---- act ----------------------------------------------------------------------------- */

/* Creates or replaces the Deployment. 0 done, 1 come back soon (collision), -1 failure. */
static int act(struct eo_controller *c, struct archive_pass *x, const char *ns)
{
	struct eo_kube_resource r = {RES_DEPLOYMENTS.gv, RES_DEPLOYMENTS.plural, ns, NULL};
	struct eo_kube_error err = {0};
	eo_kube_err e;

	if (x->pr.action == EO_APLAN_CREATE) {
		e = eo_kube_create(c->kc, &r, x->pr.deployment, NULL, &err);
	} else if (x->pr.action == EO_APLAN_REPLACE) {
		r.name = x->dep_name;
		e = eo_kube_update(c->kc, &r, x->pr.deployment, NULL, &err);
	} else {
		return 0;
	}
	if (e == EO_KUBE_EEXISTS || e == EO_KUBE_ECONFLICT)
		return 1;
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, &x->lc, "writing the archiver Deployment failed",
			  "deployment", x->dep_name, "error", eo_kube_strerror(e), "detail",
			  err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, &x->lc,
		  x->pr.action == EO_APLAN_CREATE ? "archiver Deployment created"
						  : "archiver Deployment replaced",
		  "deployment", x->dep_name, NULL);
	return 0;
}

static int report(struct eo_controller *c, struct archive_pass *x, const char *ns, const char *name,
		  struct eo_reconcile_out *out)
{
	const struct eo_aplan_result *pr = &x->pr;
	int rc;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(c, &x->lc, eo_kube_res_at(RES_ARCHIVES, ns, name),
						x->archive, pr->status);
		if (rc != 0)
			return rc;
		if (pr->event_type != NULL) {
			eo_log_kv(strcmp(pr->event_type, "Warning") == 0 ? EO_LOG_WARN
									 : EO_LOG_INFO,
				  &x->lc, "archive status changed", "reason", pr->event_reason,
				  "message", pr->message, NULL);
			if (c->rec != NULL)
				eo_kube_event(c->rec, x->archive, pr->event_type, pr->event_reason,
					      NULL, "%s", pr->message);
		}
	}
	out->requeue_ms = pr->requeue_ms;
	return 0;
}

void eo_archive_reconcile(struct eo_controller *c, const char *ns, const char *name,
			  struct eo_reconcile_out *out)
{
	struct archive_pass x;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&x, 0, sizeof(x));
	eo_log_ctx_init(&x.lc);
	eo_log_ctx_add(&x.lc, "archive", name);
	eo_log_ctx_add(&x.lc, "namespace", ns);
	rc = observe(c, &x, ns, name);
	if (rc > 0) { /* gone or being deleted: nothing to do */
		pass_clear(&x);
		return;
	}
	if (rc == 0)
		rc = eo_plan_archive(&x.in, &x.pr);
	if (rc == 0 && x.pr.action == EO_APLAN_POLL) {
		bool ok = poll_agent(&x) == 0;

		x.in.polled = true;
		x.in.agent = ok ? &x.agent : NULL;
		x.in.poll_error = ok ? NULL : x.poll_err;
		eo_aplan_result_clear(&x.pr);
		rc = eo_plan_archive(&x.in, &x.pr);
	}
	if (rc == 0) {
		eo_log_ctx_add(&x.lc, "action", eo_aplan_action_name(x.pr.action));
		rc = act(c, &x, ns);
	}
	if (rc == 0)
		rc = report(c, &x, ns, name, out);
	if (rc > 0) /* a collision or a conflict: the live state moved, look again soon */
		out->requeue_ms = REQUEUE_MS;
	if (rc < 0)
		out->error = true;
	pass_clear(&x);
}
