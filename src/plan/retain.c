/*
 * plan/retain.c - spec.deletionPolicy: Retain. See retain.h.
 */
#include "plan/retain.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/strbuf.h"
#include "core/util.h"

static const char *const names[EO_RETAIN_ACTION_COUNT_] = {
    [EO_RETAIN_NONE] = "none",
    [EO_RETAIN_ADD_FINALIZER] = "add-retain-finalizer",
    [EO_RETAIN_RELEASE_PVC] = "release-pvc",
    [EO_RETAIN_DROP_FINALIZER] = "drop-retain-finalizer",
};

const char *eo_retain_action_name(enum eo_retain_action a)
{
	return EO_ENUM_NAME(names, a, "unknown");
}

void eo_plan_retain_clear(struct eo_retain_result *r)
{
	if (r == NULL)
		return;
	json_decref(r->patch);
	memset(r, 0, sizeof(*r));
}

#define msgf(out, ...) EO_FMT((out)->message, __VA_ARGS__)

bool eo_plan_retain_has_finalizer(const json_t *cluster)
{
	return eo_meta_has_finalizer(cluster, EO_FINALIZER_RETAIN_DATA);
}

static bool gone(const json_t *pvc)
{
	return pvc == NULL || eo_meta_is_deleting(pvc);
}

bool eo_plan_retain_holds_member(const json_t *cluster, const json_t *member, const json_t *pvc)
{
	const char *uid = eo_member_uid(member);

	return cluster != NULL && eo_cluster_is_deleting(cluster) &&
	       eo_cluster_retains_data(cluster) && eo_plan_retain_has_finalizer(cluster) &&
	       uid != NULL && !gone(pvc) && eo_meta_owned_by(pvc, uid);
}

/* The merge patch that drops the member's owner references and keeps any other. */
static json_t *release_patch(const json_t *pvc, const char *member_uid)
{
	const char *rv = eo_meta_resource_version(pvc);
	json_t *keep = json_array(), *ref = NULL, *patch = NULL;
	size_t i;
	int bad = keep == NULL || rv == NULL || rv[0] == '\0';

	json_array_foreach(eo_meta_get(pvc, "ownerReferences"), i, ref)
	{
		const char *uid = json_string_value(json_object_get(ref, "uid"));

		if (!bad && (uid == NULL || strcmp(uid, member_uid) != 0))
			bad |= json_array_append(keep, ref);
	}
	if (bad) {
		json_decref(keep);
		return NULL;
	}
	if (json_array_size(keep) == 0) {
		json_decref(keep);
		keep = json_null();
	}
	patch =
	    json_pack("{s:{s:o, s:s}}", "metadata", "ownerReferences", keep, "resourceVersion", rv);
	return patch;
}

/* Appends ", name" (or "name") to buf while it fits; once full, ", ..." ends it. */
static void add_name(char *buf, size_t n, const char *name, bool *full)
{
	size_t len = strlen(buf);
	int w;

	if (*full)
		return;
	w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", name);
	if (w < 0 || (size_t)w >= n - len) {
		buf[len] = '\0';
		if (len + 5 < n)
			strcat(buf, ", ...");
		*full = true;
	}
}

/* The deleting Retain cluster: the next PVC to release, or the finalizer to drop. */
static int plan_deleting(const struct eo_retain_input *in, struct eo_retain_result *out)
{
	const char *cname = eo_cluster_name(in->cluster);
	char kept[EO_PLAN_MSG_MAX / 2] = "";
	bool full = false;
	size_t n_kept = 0;

	for (size_t i = 0; i < in->n_members; i++) {
		const json_t *m = in->members[i].member, *pvc = in->members[i].pvc;
		const char *uid = eo_member_uid(m), *mname = eo_member_name(m);
		const char *pname = eo_meta_name(pvc);

		if (uid == NULL || mname == NULL)
			return -1;
		if (gone(pvc) || pname == NULL)
			continue;
		if (eo_meta_owned_by(pvc, uid)) {
			out->patch = release_patch(pvc, uid);
			if (out->patch == NULL)
				return -1;
			snprintf(out->pvc, sizeof(out->pvc), "%s", pname);
			snprintf(out->member, sizeof(out->member), "%s", mname);
			msgf(out,
			     "deletionPolicy Retain: removed the owner reference of PVC %s to "
			     "EtcdMember %s; the claim outlives cluster %s",
			     pname, mname, cname);
			out->action = EO_RETAIN_RELEASE_PVC;
			out->event_type = "Normal";
			out->event_reason = EO_PLAN_REASON_PVC_RELEASED;
			return 0;
		}
		add_name(kept, sizeof(kept), pname, &full);
		n_kept++;
	}
	out->action = EO_RETAIN_DROP_FINALIZER;
	out->retained = true;
	out->event_type = "Normal";
	out->event_reason = EO_PLAN_REASON_DATA_RETAINED;
	if (n_kept == 0)
		msgf(out, "deletionPolicy Retain: cluster %s has no data PVC to keep", cname);
	else
		msgf(out,
		     "deletionPolicy Retain: kept %zu data PVC(s) of cluster %s without owner "
		     "references, labels unchanged: %s",
		     n_kept, cname, kept);
	return 0;
}

int eo_plan_retain(const struct eo_retain_input *in, struct eo_retain_result *out)
{
	const json_t *c = in->cluster;
	bool has = eo_plan_retain_has_finalizer(c), retain = eo_cluster_retains_data(c);

	memset(out, 0, sizeof(*out));
	if (eo_cluster_name(c) == NULL)
		return -1;
	if (eo_cluster_is_deleting(c)) {
		if (!has)
			return 0; /* nothing holds it (and no finalizer can be added now) */
		if (retain)
			return plan_deleting(in, out);
		msgf(out, "deletionPolicy is not Retain: the data PVCs go with the cluster");
		out->action = EO_RETAIN_DROP_FINALIZER;
		return 0;
	}
	if (eo_cluster_migrating(c) || has == retain)
		return 0;
	if (retain) {
		msgf(out, "deletionPolicy Retain: adding the finalizer %s",
		     EO_FINALIZER_RETAIN_DATA);
		out->action = EO_RETAIN_ADD_FINALIZER;
	} else {
		msgf(out, "deletionPolicy is not Retain: removing the finalizer %s",
		     EO_FINALIZER_RETAIN_DATA);
		out->action = EO_RETAIN_DROP_FINALIZER;
	}
	return 0;
}
