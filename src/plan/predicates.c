/*
 * plan/predicates.c - the small predicates over members, Pods and etcd answers that the planners
 * and the controllers share (declared in plan/plan.h: "small predicates shared with the
 * controllers" and below): ready, running, lost data, crash-looping, serving, member names and
 * IDs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/json.h"
#include "plan/internal.h"

bool eo_plan_pod_ready(const json_t *pod)
{
	if (pod == NULL || eo_meta_is_deleting(pod))
		return false;
	return eo_condition_is_true(json_object_get(pod, "status"), "Ready");
}

bool eo_plan_pod_running(const json_t *pod)
{
	const char *phase = NULL;

	if (pod == NULL || eo_meta_is_deleting(pod))
		return false;
	phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
	return phase == NULL || (strcmp(phase, "Failed") != 0 && strcmp(phase, "Succeeded") != 0);
}

bool eo_plan_pod_voter_labelled(const json_t *pod)
{
	const char *v = eo_meta_label(pod, EO_LABEL_ROLE);

	return v != NULL && strcmp(v, EO_LABEL_ROLE_VOTER) == 0;
}

bool eo_plan_memory_member_lost(const json_t *member, const json_t *pod)
{
	struct eo_storage st;

	if (pod != NULL || eo_member_is_deleting(member) || eo_member_is_pending(member))
		return false;
	eo_member_storage(member, &st);
	return st.memory && eo_present(json_string_value(
				json_object_get(json_object_get(member, "status"), "podUID")));
}

bool eo_plan_data_volume_lost(const json_t *member, const json_t *pvc)
{
	const json_t *st = json_object_get(member, "status");
	const char *recorded = json_string_value(json_object_get(st, "dataVolumeUID"));
	const char *uid = NULL;
	struct eo_storage s;

	if (member == NULL || eo_member_is_deleting(member) || eo_member_is_pending(member) ||
	    eo_member_dormant(member))
		return false;
	eo_member_storage(member, &s);
	if (s.memory)
		return false;
	if (!eo_present(recorded) &&
	    !eo_present(json_string_value(json_object_get(st, "memberID"))))
		return false; /* never ran on its data: a missing PVC is simply created */
	if (pvc == NULL || eo_meta_is_deleting(pvc))
		return true; /* gone, or going as soon as the Pod lets go of it */
	uid = eo_meta_uid(pvc);
	return eo_present(recorded) && (uid == NULL || strcmp(uid, recorded) != 0);
}

/* The data guard's status when it refused for a missing WAL: its state, or its last one. */
static const json_t *guard_refusal(const json_t *pod)
{
	const json_t *cs = NULL;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pod, "status"), "initContainerStatuses"),
			   i, cs)
	{
		const char *name = json_string_value(json_object_get(cs, "name"));
		const json_t *t = NULL;

		if (name == NULL || strcmp(name, EO_DESIRED_DATA_GUARD_CONTAINER) != 0)
			continue;
		t = json_object_get(json_object_get(cs, "state"), "terminated");
		if (json_integer_value(json_object_get(t, "exitCode")) ==
		    EO_DESIRED_DATA_GUARD_EXIT_NO_WAL)
			return t;
		t = json_object_get(json_object_get(cs, "lastState"), "terminated");
		if (json_integer_value(json_object_get(t, "exitCode")) ==
		    EO_DESIRED_DATA_GUARD_EXIT_NO_WAL)
			return t;
		return NULL;
	}
	return NULL;
}

bool eo_plan_data_dir_lost(const json_t *member, const json_t *pod, char *why, size_t n)
{
	const json_t *t = NULL;
	const char *msg = NULL;
	size_t len;

	if (why != NULL && n > 0)
		why[0] = '\0';
	if (member == NULL || pod == NULL || eo_member_is_deleting(member) ||
	    eo_member_is_pending(member) || eo_member_dormant(member) ||
	    !eo_present(json_string_value(
		json_object_get(json_object_get(member, "status"), "memberID"))) ||
	    eo_meta_is_deleting(pod) || (t = guard_refusal(pod)) == NULL)
		return false;
	if (why != NULL && n > 0) {
		msg = json_string_value(json_object_get(t, "message"));
		snprintf(why, n, "%s",
			 eo_present(msg) ? msg
					 : "data directory has no WAL (the data guard refused)");
		len = strlen(why);
		while (len > 0 && (why[len - 1] == '\n' || why[len - 1] == ' '))
			why[--len] = '\0';
	}
	return true;
}

bool eo_plan_member_lost_data(const json_t *member, const json_t *pod, const json_t *pvc)
{
	return eo_plan_memory_member_lost(member, pod) || eo_plan_data_volume_lost(member, pvc) ||
	       eo_plan_data_dir_lost(member, pod, NULL, 0);
}

/* The status of the etcd container in a Pod, or NULL. */
static const json_t *etcd_container_status(const json_t *pod)
{
	return eo_json_named(json_object_get(json_object_get(pod, "status"), "containerStatuses"),
			     "etcd");
}

bool eo_plan_member_crashlooping(const json_t *member, const json_t *pod, char *why, size_t n)
{
	const json_t *cs = NULL, *last = NULL;
	const char *waiting = NULL, *reason = NULL;
	json_int_t restarts;

	if (why != NULL && n > 0)
		why[0] = '\0';
	if (pod == NULL || eo_member_is_deleting(member) || eo_member_is_pending(member) ||
	    eo_member_dormant(member) || eo_plan_pod_ready(pod) || eo_meta_is_deleting(pod))
		return false;
	if ((cs = etcd_container_status(pod)) == NULL)
		return false;
	restarts = json_integer_value(json_object_get(cs, "restartCount"));
	waiting = json_string_value(
	    json_object_get(json_object_get(json_object_get(cs, "state"), "waiting"), "reason"));
	last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	reason = json_string_value(json_object_get(last, "reason"));
	if (restarts < EO_PLAN_CRASHLOOP_RESTARTS || waiting == NULL ||
	    strcmp(waiting, "CrashLoopBackOff") != 0 ||
	    (reason != NULL && strcmp(reason, "OOMKilled") == 0))
		return false;
	if (why != NULL && n > 0)
		snprintf(why, n, "%lld restarts, last exit code %lld (%s)", (long long)restarts,
			 (long long)json_integer_value(json_object_get(last, "exitCode")),
			 reason != NULL ? reason : "unknown");
	return true;
}

bool eo_plan_observed_differs(const json_t *cached, const json_t *live)
{
	const char *uc = eo_meta_uid(cached);
	const char *ul = eo_meta_uid(live);

	if ((cached == NULL) != (live == NULL))
		return true;
	if (cached == NULL)
		return false;
	if ((uc == NULL) != (ul == NULL) || (uc != NULL && strcmp(uc, ul) != 0))
		return true;
	return eo_meta_is_deleting(cached) != eo_meta_is_deleting(live);
}

int eo_plan_next_member_name(const char *cluster, const char *cluster_uid, const char *prev,
			     unsigned attempt, char *buf, size_t n)
{
	/* The alphabet of Kubernetes' generateName suffixes (no vowels, no look-alikes). */
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */
	char seed[3 * EO_PLAN_NAME_MAX], suffix[6];
	int w;

	if (!eo_present(cluster) || !eo_present(cluster_uid))
		return -1;
	w = snprintf(seed, sizeof(seed), "%s/%s/%u", cluster_uid, prev ? prev : "", attempt);
	if (w < 0 || (size_t)w >= sizeof(seed))
		return -1;
	for (const char *p = seed; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 1099511628211ULL;
	}
	for (size_t i = 0; i < 5; i++) {
		suffix[i] = alphabet[h % (sizeof(alphabet) - 1)];
		h /= sizeof(alphabet) - 1;
	}
	suffix[5] = '\0';
	w = snprintf(buf, n, "%s-%s", cluster, suffix);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

void eo_plan_format_id(uint64_t id, char *buf, size_t n)
{
	snprintf(buf, n, "%" PRIx64, id);
}

bool eo_plan_same_cluster(const json_t *cluster, uint64_t cluster_id)
{
	const char *want = eo_cluster_cluster_id(cluster);
	char got[EO_PLAN_ID_MAX];

	if (!eo_present(want) || cluster_id == 0)
		return true; /* nothing recorded yet, or a reply without a header */
	eo_plan_format_id(cluster_id, got, sizeof(got));
	return strcasecmp(got, want) == 0;
}

const struct eo_etcd_member *eo_plan_find_etcd_member(const struct eo_etcd_members *list,
						      const char *member_name, const char *peer_url)
{
	if (list == NULL)
		return NULL;
	for (size_t i = 0; i < list->n; i++) {
		const struct eo_etcd_member *m = &list->v[i];

		if (eo_present(member_name) && m->name != NULL && strcmp(m->name, member_name) == 0)
			return m;
		for (size_t j = 0; eo_present(peer_url) && j < m->n_peer_urls; j++)
			if (strcmp(m->peer_urls[j], peer_url) == 0)
				return m;
	}
	return NULL;
}

bool eo_plan_member_serving(const json_t *member, const json_t *pod)
{
	const json_t *c = eo_condition_find(json_object_get(member, "status"), EO_COND_READY);
	const char *st = json_string_value(json_object_get(c, "status"));
	const char *reason = json_string_value(json_object_get(c, "reason"));

	/*
	 * Ready=True, or no Ready yet (nothing said), or False only for a learner's member ID
	 * not known yet (it answered: a learner refuses the member list). Any other False
	 * (NotServing, or PodNotReady still there from before the Pod turned ready) waits for
	 * the member controller's look at etcd.
	 */
	return eo_plan_pod_ready(pod) &&
	       (c == NULL || (st != NULL && strcmp(st, EO_COND_TRUE) == 0) ||
		(st != NULL && strcmp(st, EO_COND_FALSE) == 0 && reason != NULL &&
		 strcmp(reason, EO_REASON_DISCOVERING_MEMBER_ID) == 0));
}
