/*
 * controller/controller.c - what the reconcilers share (controller.h, controller/internal.h):
 * the cache sets, the status patch and its write, the clock, the etcd routes and the events. The
 * reconcilers are controller/cluster.c and controller/member.c.
 */
#include "controller/controller.h"
#include "controller/internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "controller/authload.h"
#include "controller/tlsload.h"
#include "controller/certs.h"
#include "etcd/client.h"
#include "obs/log.h"
#include "plan/auth.h"
#include "plan/failure.h"
#include "plan/member.h"
#include "plan/plan.h"
#include "plan/removal.h"
#include "plan/nodeloss.h"
#include "plan/retain.h"
#include "plan/roll.h"

json_t *eo_cache_set_get(const struct eo_cache_set *s, const char *ns, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		json_t *o = eo_kube_cache_get(s->c[i], ns, name);

		if (o != NULL)
			return o;
	}
	return NULL;
}

/* New array joining part(cache, key) over every cache of s. NULL on OOM. */
static json_t *cache_set_concat(const struct eo_cache_set *s,
				json_t *(*part_of)(eo_kube_cache *, const char *), const char *key)
{
	json_t *all = json_array();

	for (size_t i = 0; all != NULL && i < s->n; i++) {
		json_t *part = part_of(s->c[i], key);

		if (part == NULL || json_array_extend(all, part) != 0) {
			json_decref(part);
			json_decref(all);
			return NULL;
		}
		json_decref(part);
	}
	return all;
}

json_t *eo_cache_set_by_owner(const struct eo_cache_set *s, const char *uid)
{
	return cache_set_concat(s, eo_kube_cache_by_owner, uid);
}

json_t *eo_cache_set_list(const struct eo_cache_set *s, const char *ns)
{
	return cache_set_concat(s, eo_kube_cache_list, ns);
}

json_t *eo_controller_status_patch(const json_t *cur, const json_t *want, const char *rv)
{
	json_t *st = json_object(), *patch = NULL;
	const char *key = NULL;
	json_t *v = NULL;
	bool ok = st != NULL;

	json_object_foreach((json_t *)want, key, v)
	{
		if (ok && !json_equal(v, json_object_get(cur, key)))
			ok = json_object_set(st, key, v) == 0;
	}
	json_object_foreach((json_t *)cur, key, v)
	{
		if (ok && json_object_get(want, key) == NULL)
			ok = json_object_set_new(st, key, json_null()) == 0;
	}
	if (ok)
		patch = rv != NULL ? json_pack("{s:{s:s}, s:O}", "metadata", "resourceVersion", rv,
					       "status", st)
				   : json_pack("{s:O}", "status", st);
	json_decref(st);
	return patch;
}

json_t *eo_controller_object_status_patch(const json_t *obj, const json_t *want)
{
	int64_t gen = eo_meta_generation(obj, 0);
	json_t *w = json_is_object(want) ? json_copy((json_t *)want) : json_object();
	json_t *patch = NULL;

	if (w == NULL)
		return NULL;
	if (gen <= 0 || json_object_set_new(w, "observedGeneration", json_integer(gen)) == 0)
		patch = eo_controller_status_patch(json_object_get(obj, "status"), w,
						   eo_meta_resource_version(obj));
	json_decref(w);
	return patch;
}

json_t *eo_controller_typed_copy(json_t *obj, const char *api_version, const char *kind)
{
	json_t *c = json_deep_copy(obj);

	if (c == NULL)
		return NULL;
	if (json_object_get(c, "apiVersion") == NULL)
		json_object_set_new(c, "apiVersion", json_string(api_version));
	if (json_object_get(c, "kind") == NULL)
		json_object_set_new(c, "kind", json_string(kind));
	return c;
}

time_t eo_controller_now(const struct eo_controller *c)
{
	return c->now != NULL ? c->now() : time(NULL);
}

/* The short name used in this file. */
time_t eo__ctl_now_of(const struct eo_controller *c)
{
	return eo_controller_now(c);
}

void eo_controller_routes(const struct eo_controller *c, const char *const *endpoints, size_t n,
			  struct eo_controller_routes *out)
{
	out->n = 0;
	for (size_t i = 0; i < n && out->n < EO_CONTROLLER_ROUTES_MAX; i++) {
		char member[EO_NAME_MAX], ns[EO_NAME_MAX];
		json_t *pod;
		int rc;

		if (eo_desired_url_member(&c->build, endpoints[i], member, sizeof(member), ns,
					  sizeof(ns)) != 0)
			continue;
		pod = eo_cache_set_get(&c->pods, ns, member);
		rc = eo_desired_member_route(out->entry[out->n], sizeof(out->entry[out->n]),
					     &c->build, endpoints[i], pod);
		json_decref(pod);
		if (rc == 0) {
			out->ptr[out->n] = out->entry[out->n];
			out->n++;
		}
	}
}

/*
 * Writes the desired status (when it differs) with the object's resourceVersion as the
 * precondition. Returns 0 (written or nothing to write), 1 on a conflict (stale cache: come
 * back soon), -1 on failure.
 */
int eo_controller_write_status(struct eo_controller *c, const struct eo_log_ctx *lc,
			       struct eo_kube_resource r, const json_t *obj, const json_t *want)
{
	struct eo_kube_error err = {0};
	json_t *patch = NULL;
	eo_kube_err e;

	patch = eo_controller_object_status_patch(obj, want);
	if (patch == NULL)
		return -1;
	e = eo_kube_patch_status(c->kc, &r, patch, NULL, &err);
	json_decref(patch);
	if (e == EO_KUBE_OK) {
		eo_log_kv(EO_LOG_DEBUG, lc, "status updated", NULL);
		return 0;
	}
	if (e == EO_KUBE_ECONFLICT || e == EO_KUBE_ENOTFOUND)
		return 1;
	eo_log_kv(EO_LOG_WARN, lc, "status update failed", "error", eo_kube_strerror(e), "detail",
		  err.message, NULL);
	return -1;
}

void eo__ctl_emit(struct eo_controller *c, const json_t *obj, const char *type, const char *reason,
		  const char *msg)
{
	if (c->rec != NULL && type != NULL && reason != NULL)
		eo_kube_event(c->rec, obj, type, reason, NULL, "%s", msg);
}

/* The plan's Event, told now that its action succeeded, and cleared so it is told once. */
void eo__ctl_emit_planned(struct eo_controller *c, const json_t *cluster, struct eo_plan_result *pr)
{
	eo__ctl_emit(c, cluster, pr->event_type, pr->event_reason, pr->message);
	pr->event_type = NULL;
	pr->event_reason = NULL;
}
