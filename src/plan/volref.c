/*
 * plan/volref.c - may the operator mount a PVC a user named? See volref.h.
 */
#include "plan/volref.h"

#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/names.h"

static const char *or_q(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "?";
}

/* The first owner reference with controller: true that is not referrer_uid's, or NULL. */
static const json_t *foreign_controller(const json_t *pvc, const char *referrer_uid)
{
	const json_t *refs = eo_meta_get(pvc, "ownerReferences");
	const json_t *ref = NULL;
	size_t i;

	json_array_foreach(refs, i, ref)
	{
		const char *uid = json_string_value(json_object_get(ref, "uid"));

		if (!json_is_true(json_object_get(ref, "controller")))
			continue;
		if (referrer_uid != NULL && referrer_uid[0] != '\0' && uid != NULL &&
		    strcmp(uid, referrer_uid) == 0)
			continue;
		return ref;
	}
	return NULL;
}

enum eo_volref_verdict eo_plan_volref_check(const json_t *pvc, const char *claim_name,
					    const char *referrer_uid, const char *own_cluster,
					    char *why, size_t n)
{
	const json_t *labels = eo_meta_get(pvc, "labels");
	const char *cluster = json_string_value(json_object_get(labels, EO_LABEL_CLUSTER));
	const char *by = json_string_value(json_object_get(labels, EO_LABEL_MANAGED_BY));
	const json_t *ref = NULL;

	if (n > 0)
		why[0] = '\0';
	if (pvc == NULL) {
		snprintf(why, n, "PVC %s does not exist; nothing is mounted until it does",
			 or_q(claim_name));
		return EO_VOLREF_MISSING;
	}
	if ((ref = foreign_controller(pvc, referrer_uid)) != NULL) {
		snprintf(why, n,
			 "PVC %s is controlled by %s %s (uid %s); the operator mounts only a PVC "
			 "no other object controls",
			 or_q(claim_name), or_q(json_string_value(json_object_get(ref, "kind"))),
			 or_q(json_string_value(json_object_get(ref, "name"))),
			 or_q(json_string_value(json_object_get(ref, "uid"))));
		return EO_VOLREF_FOREIGN;
	}
	/*
	 * A claim no object controls, labelled as member data of own_cluster: the retained
	 * volume of a deleted cluster of that name (deletionPolicy: Retain), read by the
	 * cluster that replaces it (the documented recovery restores from a file on it).
	 */
	if (own_cluster != NULL && own_cluster[0] != '\0' && cluster != NULL &&
	    strcmp(cluster, own_cluster) == 0)
		return EO_VOLREF_USABLE;
	if (json_object_get(labels, EO_LABEL_CLUSTER) != NULL) {
		snprintf(why, n,
			 "PVC %s is labelled %s=%s: it holds an etcd member's data; the operator "
			 "never mounts one as a snapshot destination or restore source",
			 or_q(claim_name), EO_LABEL_CLUSTER, cluster != NULL ? cluster : "");
		return EO_VOLREF_FOREIGN;
	}
	if (by != NULL && strcmp(by, EO_LABEL_MANAGED_BY_VALUE) == 0) {
		snprintf(why, n,
			 "PVC %s is labelled %s=%s: it holds an etcd member's data; the operator "
			 "never mounts one as a snapshot destination or restore source",
			 or_q(claim_name), EO_LABEL_MANAGED_BY, by);
		return EO_VOLREF_FOREIGN;
	}
	return EO_VOLREF_USABLE;
}
