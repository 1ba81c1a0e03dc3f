/*
 * controller/act_kube.c - the actions carried out through the apiserver: the Services, the
 * members' creation and patches (spec, status, voter label, dormancy, marks), their removal,
 * the PodDisruptionBudget, a Pod's restart or eviction, the finalizers and the objects a
 * member owns. Part of the reconcilers (controller/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"

/*
 * Creates o->want when o->have is NULL, or patches the object (o->patch, or patch_of(want, have)
 * when it drifted), unless o->have is held by another controller (FOREIGN, holder filled:
 * nothing written). A create answered AlreadyExists is the cache lagging behind our own create
 * (EO_KUBE_OK), unless the live object is another controller's (taken, holder filled:
 * EO_KUBE_EEXISTS). With a pass, refused writes and a taken name are recorded in it (NULL: the
 * caller tells them its own way). Returns the outcome; o->step, o->answer and o->err say what
 * was sent and answered.
 */
eo_kube_err eo__ctl_ensure_owned(struct eo_controller *c, struct eo_pass *pass,
				 struct eo__ctl_owned *o)
{
	const char *name = o->r.name;
	json_t *patch = o->patch;

	o->step = EO__CTL_OWNED_IN_SYNC;
	o->answer = EO_KUBE_OK;
	o->taken = false;
	if (patch == NULL && o->have != NULL &&
	    !eo_desired_is_controlled_by(o->have, o->owner_uid)) {
		o->step = EO__CTL_OWNED_FOREIGN;
		eo_desired_controller_of(o->have, o->holder, sizeof(o->holder));
		return EO_KUBE_OK;
	}
	if (patch == NULL && o->have == NULL) {
		o->step = EO__CTL_OWNED_CREATE;
		o->answer = eo_kube_create(c->kc, &o->r, o->want, NULL, &o->err);
		if (pass != NULL)
			eo__ctl_note_refusal(pass, EO_PLAN_VERB_CREATE, o->kind, name, o->answer,
					     &o->err);
		if (o->answer != EO_KUBE_EEXISTS)
			return o->answer;
		o->taken =
		    eo__ctl_held_by_other(c, o->r, o->owner_uid, o->holder, sizeof(o->holder));
		if (o->taken && pass != NULL)
			eo__ctl_note_taken(pass, &o->r, o->kind, o->owner, o->holder);
		return o->taken ? EO_KUBE_EEXISTS : EO_KUBE_OK;
	}
	if (patch == NULL && (patch = o->patch_of(o->want, o->have)) == NULL)
		return EO_KUBE_OK;
	o->step = EO__CTL_OWNED_PATCH;
	o->answer = eo_kube_patch(c->kc, &o->r, patch, NULL, &o->err);
	if (patch != o->patch)
		json_decref(patch);
	if (pass != NULL)
		eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, o->kind, name, o->answer, &o->err);
	return o->answer;
}

static int ensure_service(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			  json_t *want, json_t *have)
{
	const char *ns = eo_cluster_namespace(cluster), *name = eo_meta_name(want);
	struct eo__ctl_owned o = {.r = eo_kube_res_at(RES_SERVICES, ns, name),
				  .kind = "Service",
				  .owner = "this EtcdCluster",
				  .owner_uid = eo_cluster_uid(cluster),
				  .want = want,
				  .have = have,
				  .patch_of = eo_desired_service_patch};
	eo_kube_err e = eo__ctl_ensure_owned(c, pass, &o);

	if (o.step == EO__CTL_OWNED_FOREIGN) {
		/* The plan stops on it (ForeignObject); the cache moved since: leave it alone. */
		o.err = (struct eo_kube_error){.http_status = 409};
		snprintf(o.err.message, sizeof(o.err.message),
			 "Service %s is not controlled by this EtcdCluster (its controller: %s); "
			 "not changing it",
			 name, o.holder);
		eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, "Service", name, EO_KUBE_EHTTP,
				     &o.err);
		e = EO_KUBE_EHTTP;
	} else if (o.step == EO__CTL_OWNED_CREATE && o.answer == EO_KUBE_OK) {
		char msg[EO_NAME_MAX + 32];

		snprintf(msg, sizeof(msg), "created Service %s", name);
		eo_log_kv(EO_LOG_INFO, pass->lc, "service created", "service", name, NULL);
		eo__ctl_emit(c, cluster, "Normal", "ServiceCreated", msg);
	} else if (o.step == EO__CTL_OWNED_PATCH && e == EO_KUBE_OK) {
		eo_log_kv(EO_LOG_INFO, pass->lc, "service drift repaired", "service", name, NULL);
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "ensuring service failed", "service", name,
			  "error", eo_kube_strerror(e), "detail", o.err.message, NULL);
		return -1;
	}
	return 0;
}

int eo__ctl_act_services(struct eo_controller *c, struct eo_pass *pass, json_t *cluster)
{
	const char *ns = eo_cluster_namespace(cluster), *name = eo_cluster_name(cluster);
	char client[EO_NAME_MAX], headless[EO_NAME_MAX];
	json_t *wh = eo_desired_headless_service(cluster), *wc = eo_desired_client_service(cluster);
	json_t *hh = NULL, *hc = NULL;
	int rc = -1;

	if (eo_cluster_headless_service(cluster, headless, sizeof(headless)) == 0)
		hh = eo_cache_set_get(&c->services, ns, headless);
	if (eo_name_client_service(client, sizeof(client), name) == 0)
		hc = eo_cache_set_get(&c->services, ns, client);
	if (wh != NULL && wc != NULL && ensure_service(c, pass, cluster, wh, hh) == 0 &&
	    ensure_service(c, pass, cluster, wc, hc) == 0)
		rc = 0;
	json_decref(wh);
	json_decref(wc);
	json_decref(hh);
	json_decref(hc);
	return rc;
}

/*
 * Creates the seed or a joining EtcdMember under the name the plan took from the stored
 * status.nextMemberName: a create retried after a crash or on a lagging cache collides (409)
 * instead of making a second member. 0 created or already there, -1 failure.
 */
int eo__ctl_act_create_named(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     const struct eo_plan_result *pr, long *requeue)
{
	bool seed = pr->action == EO_PLAN_CREATE_SEED;
	struct eo_kube_error err = {0};
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_MEMBERS, eo_cluster_namespace(cluster), NULL);
	json_t *m = seed ? eo_desired_seed_member(cluster, pr->member_name)
			 : eo_desired_joining_member(cluster, pr->member_name);
	char msg[EO_NAME_MAX + 64];
	eo_kube_err e;

	if (m == NULL)
		return -1;
	e = eo_kube_create(c->kc, &r, m, NULL, &err);
	json_decref(m);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_CREATE, EO_KIND_MEMBER, pr->member_name, e, &err);
	if (e == EO_KUBE_EEXISTS) {
		/* Created by an earlier attempt; the cache has not shown it yet. */
		eo_log_kv(EO_LOG_INFO, pass->lc, "member already created; waiting for the cache",
			  "member", pr->member_name, NULL);
		*requeue = CONFLICT_REQUEUE_MS;
		return 0;
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc,
			  seed ? "creating the seed member failed" : "creating a member failed",
			  "member", pr->member_name, "error", eo_kube_strerror(e), "detail",
			  err.message, NULL);
		return -1;
	}
	if (seed) {
		snprintf(msg, sizeof(msg), "created seed member %s", pr->member_name);
		eo_log_kv(EO_LOG_INFO, pass->lc,
			  "bootstrapping single-node cluster: seed member created", "member",
			  pr->member_name, NULL);
		eo__ctl_emit(c, cluster, "Normal", "SeedCreated", msg);
	} else {
		snprintf(msg, sizeof(msg), "created member %s to scale up", pr->member_name);
		eo_log_kv(EO_LOG_INFO, pass->lc, "member created", "member", pr->member_name, NULL);
		eo__ctl_emit(c, cluster, "Normal", "MemberCreated", msg);
	}
	return 0;
}

int eo__ctl_act_complete_seed(struct eo_controller *c, struct eo_pass *pass,
			      const struct eo_plan_result *pr)
{
	struct eo_kube_error err = {0};
	const char *mname = eo_member_name(pr->member);
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_MEMBERS, eo_member_namespace(pr->member), mname);
	json_t *sp = json_pack("{s:{s:b}}", "status", "isVoter", 1);
	json_t *p = json_pack("{s:{s:s}}", "spec", "initialCluster", pr->initial_cluster);
	eo_kube_err e = EO_KUBE_ENOMEM;

	/* The voter mark first, so the Pod is created with the voter label. */
	if (sp != NULL && p != NULL) {
		e = eo_member_is_voter(pr->member)
			? EO_KUBE_OK
			: eo_kube_patch_status(c->kc, &r, sp, NULL, &err);
		if (e == EO_KUBE_OK)
			e = eo_kube_patch(c->kc, &r, p, NULL, &err);
	}
	json_decref(sp);
	json_decref(p);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, EO_KIND_MEMBER, mname, e, &err);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "completing the seed member failed", "member",
			  mname, "error", eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc, "seed member initial cluster set", "member", mname,
		  "initial_cluster", pr->initial_cluster, NULL);
	return 0;
}

int eo__ctl_patch_member(struct eo_controller *c, struct eo_pass *pass, const json_t *member,
			 json_t *patch, bool status)
{
	struct eo_kube_error err = {0};
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_MEMBERS, eo_member_namespace(member), eo_member_name(member));
	eo_kube_err e = EO_KUBE_ENOMEM;

	if (patch != NULL)
		e = status ? eo_kube_patch_status(c->kc, &r, patch, NULL, &err)
			   : eo_kube_patch(c->kc, &r, patch, NULL, &err);
	json_decref(patch);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, EO_KIND_MEMBER, eo_member_name(member), e,
			     &err);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "patching member failed", "member",
			  eo_member_name(member), "error", eo_kube_strerror(e), "detail",
			  err.message, NULL);
		return -1;
	}
	return 0;
}

/*
 * The voter label of the member's Pod, set or removed right after its mark (pr->label_pod),
 * so that the client Service and the PDB follow a promotion within the pass. The patch names
 * the Pod's UID: a Pod replaced meanwhile is left alone (409). Best effort: the mark is
 * written, and the member controller puts the label right on its own pass when this fails.
 */
void eo__ctl_label_member_pod(struct eo_controller *c, struct eo_pass *pass,
			      const struct eo_plan_result *pr, bool voter)
{
	struct eo_kube_error err = {0};
	const char *mname = eo_member_name(pr->member);
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_PODS, eo_member_namespace(pr->member), mname);
	json_t *patch = NULL;
	eo_kube_err e = EO_KUBE_ENOMEM;

	if (!pr->label_pod || pr->pod_uid[0] == '\0')
		return;
	patch = voter ? json_pack("{s:{s:s, s:{s:s}}}", "metadata", "uid", pr->pod_uid, "labels",
				  EO_LABEL_ROLE, EO_LABEL_ROLE_VOTER)
		      : json_pack("{s:{s:s, s:{s:n}}}", "metadata", "uid", pr->pod_uid, "labels",
				  EO_LABEL_ROLE);
	if (patch != NULL)
		e = eo_kube_patch(c->kc, &r, patch, NULL, &err);
	json_decref(patch);
	if (e == EO_KUBE_OK)
		eo_log_kv(EO_LOG_INFO, pass->lc, "pod labels synced", "member", mname, "message",
			  voter ? "added the voter label with the voter mark"
				: "removed the voter label with the voter mark",
			  NULL);
	else
		eo_log_kv(
		    e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT ? EO_LOG_DEBUG : EO_LOG_WARN,
		    pass->lc,
		    "labelling the Pod with the voter mark failed; the member controller "
		    "retries",
		    "member", mname, "error", eo_kube_strerror(e), "detail", err.message, NULL);
}

int eo__ctl_act_set_initial_cluster(struct eo_controller *c, struct eo_pass *pass,
				    const struct eo_plan_result *pr)
{
	if (eo__ctl_patch_member(
		c, pass, pr->member,
		json_pack("{s:{s:s}}", "spec", "initialCluster", pr->initial_cluster), false) != 0)
		return -1;
	eo_log_kv(EO_LOG_INFO, pass->lc, "member initial cluster set", "member",
		  eo_member_name(pr->member), "initial_cluster", pr->initial_cluster, NULL);
	return 0;
}

int eo__ctl_act_remove_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			      struct eo_plan_result *pr)
{
	struct eo_kube_error err = {0};
	const char *mname = eo_member_name(pr->member);
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_MEMBERS, eo_member_namespace(pr->member), mname);
	struct eo_kube_delete_opts d = {.uid = eo_member_uid(pr->member),
					.grace_period_seconds = -1};
	eo_kube_err e = eo_kube_delete(c->kc, &r, &d, &err);
	char msg[EO_NAME_MAX + 64];

	if (e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT)
		return 0;
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_DELETE, EO_KIND_MEMBER, mname, e, &err);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "deleting member failed", "member", mname, "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc, "member deleted", "member", mname, NULL);
	if (pr->event_reason != NULL) {
		/* A replacement (lost member): the plan's reason, told once. */
		eo__ctl_emit_planned(c, cluster, pr);
		return 0;
	}
	snprintf(msg, sizeof(msg), "removing member %s to scale down", mname);
	eo__ctl_emit(c, cluster, "Normal", "MemberRemoving", msg);
	return 0;
}

int eo__ctl_act_pdb(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
		    const struct eo_plan_result *pr)
{
	struct eo_kube_error err = {0};
	const char *ns = eo_cluster_namespace(cluster), *name = eo_cluster_name(cluster);
	struct eo_kube_resource r = eo_kube_res_at(RES_PDBS, ns, name);
	eo_kube_err e;

	if (pr->action == EO_PLAN_DELETE_PDB) {
		/* Only the PDB the plan saw as ours: the UID is the delete's precondition. */
		json_t *have = eo_cache_set_get(&c->pdbs, ns, name);
		struct eo_kube_delete_opts d = {.uid = eo_meta_uid(have),
						.grace_period_seconds = -1};

		e = EO_KUBE_OK;
		if (have != NULL && eo_desired_is_controlled_by(have, eo_cluster_uid(cluster)))
			e = eo_kube_delete(c->kc, &r, &d, &err);
		if (e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT)
			e = EO_KUBE_OK;
		eo__ctl_note_refusal(pass, EO_PLAN_VERB_DELETE, "PodDisruptionBudget", name, e,
				     &err);
		json_decref(have);
	} else {
		/* The plan's patch, made from the PDB it found ours; or the PDB created. */
		struct eo__ctl_owned o = {.r = r,
					  .kind = "PodDisruptionBudget",
					  .owner = "this EtcdCluster",
					  .owner_uid = eo_cluster_uid(cluster),
					  .want = pr->object,
					  .patch = pr->patch};

		e = eo__ctl_ensure_owned(c, pass, &o);
		err = o.err;
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "PodDisruptionBudget change failed", "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc, "PodDisruptionBudget reconciled", "message", pr->message,
		  NULL);
	return 0;
}

/*
 * Pause / resume: spec.dormant of the member. The event is told here, once the patch is in
 * (the status write that follows may carry no change and so tell nothing).
 */
int eo__ctl_act_dormant(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			struct eo_plan_result *pr)
{
	bool dormant = pr->action == EO_PLAN_SET_DORMANT;

	if (eo__ctl_patch_member(c, pass, pr->member,
				 json_pack("{s:{s:b}}", "spec", "dormant", dormant), false) != 0)
		return -1;
	eo_log_kv(EO_LOG_INFO, pass->lc,
		  dormant ? "member marked dormant" : "waking dormant member", "member",
		  eo_member_name(pr->member), "message", pr->message, NULL);
	eo__ctl_emit_planned(c, cluster, pr);
	return 0;
}

/*
 * The plan's patch onto the member (pr->patch, taken): UPDATE_MEMBER brings its spec to the
 * target; MARK_MEMBER, in quorum-loss recovery, sets or removes the survivor's
 * force-new-cluster step annotation. done: the log line once it is written.
 */
int eo__ctl_act_patch_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			     struct eo_plan_result *pr, const char *done)
{
	json_t *patch = pr->patch;

	pr->patch = NULL; /* patch_member takes it */
	if (eo__ctl_patch_member(c, pass, pr->member, patch, false) != 0)
		return -1;
	eo_log_kv(EO_LOG_INFO, pass->lc, done, "member", eo_member_name(pr->member), "message",
		  pr->message, NULL);
	eo__ctl_emit_planned(c, cluster, pr);
	return 0;
}

/*
 * Quorum-loss recovery done: the status (ForceNewCluster=False/ForceNewClusterDone) is written
 * first, while the cluster's resourceVersion is still the one it was planned on, then the
 * request annotation is removed. 1 when the status write conflicted (plan again).
 */
int eo__ctl_act_clear_force_request(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
				    struct eo_plan_result *pr)
{
	struct eo_kube_error err = {0};
	struct eo_kube_resource r =
	    eo_kube_res_at(RES_CLUSTERS, eo_cluster_namespace(cluster), eo_cluster_name(cluster));
	eo_kube_err e;
	int rc = 0;

	if (pr->status != NULL && pr->status_changed) {
		rc = eo_controller_write_status(c, pass->lc, r, cluster, pr->status);
		if (rc != 0)
			return rc;
		pr->status_changed = false;
	}
	e = eo_kube_patch(c->kc, &r, pr->patch, NULL, &err);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, "EtcdCluster", eo_cluster_name(cluster), e,
			     &err);
	if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "removing the force-new-cluster annotation failed",
			  "error", eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc, "quorum-loss recovery finished", "message", pr->message,
		  NULL);
	eo__ctl_emit_planned(c, cluster, pr);
	return 0;
}

/*
 * RESTART_MEMBER: the member's Pod goes (UID precondition) and the member controller brings it
 * back from the member's spec. Through the Eviction API when the plan says so (pr->evict): a
 * PodDisruptionBudget that allows no disruption now (a node drain took one) refuses with 429,
 * which is no error: the plan's Event is not told, a Normal EvictionRefused Event (the
 * recorder folds repeats into one) and a log line say why, and the pass comes back after
 * *requeue ms to look again.
 */
int eo__ctl_act_restart_member(struct eo_controller *c, struct eo_pass *pass, json_t *cluster,
			       struct eo_plan_result *pr, long *requeue)
{
	struct eo_kube_error err = {0};
	const char *mname = eo_member_name(pr->member), *ns = eo_member_namespace(pr->member);
	const char *uid = pr->pod_uid[0] ? pr->pod_uid : NULL;
	struct eo_kube_resource r = eo_kube_res_at(RES_PODS, ns, mname);
	struct eo_kube_delete_opts d = {.uid = uid, .grace_period_seconds = -1};
	eo_kube_err e = pr->evict ? eo_kube_evict(c->kc, ns, mname, uid, &err)
				  : eo_kube_delete(c->kc, &r, &d, &err);

	if (e == EO_KUBE_ENOTFOUND || e == EO_KUBE_ECONFLICT)
		return 0; /* already gone or replaced: the next pass sees it */
	if (pr->evict && e == EO_KUBE_ETHROTTLED) {
		char m[EO_PLAN_MSG_MAX + EO_KUBE_MESSAGE_MAX];

		snprintf(m, sizeof(m),
			 "eviction of member %s's Pod refused (%s); waiting for the "
			 "PodDisruptionBudget to allow it",
			 mname, err.message[0] ? err.message : "429");
		eo_log_kv(EO_LOG_INFO, pass->lc, "member Pod eviction refused", "member", mname,
			  "detail", err.message, NULL);
		pr->event_type = NULL;
		pr->event_reason = NULL;
		eo__ctl_emit(c, cluster, "Normal", EO_PLAN_REASON_EVICTION_REFUSED, m);
		*requeue = EO_PLAN_REQUEUE_ROLL_MS;
		return 0;
	}
	eo__ctl_note_refusal(pass, pr->evict ? EO_PLAN_VERB_CREATE : EO_PLAN_VERB_DELETE,
			     pr->evict ? "Pod eviction" : "Pod", mname, e, &err);
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "restarting member Pod failed", "member", mname,
			  "error", eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	eo_log_kv(EO_LOG_INFO, pass->lc,
		  pr->evict ? "member Pod evicted to restart it"
			    : "member Pod deleted to restart it",
		  "member", mname, "message", pr->message, NULL);
	eo__ctl_emit_planned(c, cluster, pr);
	return 0;
}

/*
 * Adds (add) or removes fin in obj's metadata.finalizers with a merge patch carrying obj's
 * resourceVersion (a 409 means obj changed: plan again), never losing another controller's
 * entry. 0 done (or obj gone), 1 conflict, -1 failure.
 */
int eo__ctl_patch_finalizer(struct eo_controller *c, struct eo_pass *pass,
			    struct eo_kube_resource r, const json_t *obj, const char *kind,
			    const char *fin, bool add)
{
	struct eo_kube_error err = {0};
	json_t *fins = json_array(), *f = NULL, *patch = NULL;
	size_t i;
	eo_kube_err e = EO_KUBE_ENOMEM;
	int bad = fins == NULL;

	json_array_foreach(eo_meta_get(obj, "finalizers"), i, f)
	{
		const char *s = json_string_value(f);

		if (!bad && s != NULL && strcmp(s, fin) != 0)
			bad |= json_array_append(fins, f);
	}
	if (!bad && add)
		bad |= json_array_append_new(fins, json_string(fin));
	if (bad) { /* never send a list that lost another controller's finalizer */
		eo_log_kv(EO_LOG_WARN, NULL, "finalizer patch not sent", "error", "out of memory",
			  "kind", kind, "name", r.name, NULL);
		json_decref(fins);
		return -1;
	}
	patch = json_pack("{s:{s:o, s:s}}", "metadata", "finalizers", fins, "resourceVersion",
			  eo_meta_resource_version(obj));
	if (patch != NULL)
		e = eo_kube_patch(c->kc, &r, patch, NULL, &err);
	json_decref(patch);
	eo__ctl_note_refusal(pass, EO_PLAN_VERB_PATCH, kind, r.name, e, &err);
	if (e == EO_KUBE_OK || e == EO_KUBE_ENOTFOUND)
		return 0;
	return e == EO_KUBE_ECONFLICT ? 1 : -1;
}

int eo__ctl_patch_finalizers(struct eo_controller *c, struct eo_pass *pass, const json_t *member,
			     bool add)
{
	return eo__ctl_patch_finalizer(
	    c, pass,
	    eo_kube_res_at(RES_MEMBERS, eo_member_namespace(member), eo_member_name(member)),
	    member, EO_KIND_MEMBER, EO_FINALIZER_MEMBER_CLEANUP, add);
}

int eo__ctl_create_owned(struct eo_controller *c, struct eo_pass *pass, json_t *member,
			 struct eo_kube_resource r, json_t *obj, const char *what)
{
	struct eo_kube_error err = {0};
	char msg[EO_NAME_MAX + 32];
	const char *kind = strcmp(what, "Pod") == 0 ? "Pod" : "PersistentVolumeClaim";
	eo_kube_err e = eo_kube_create(c->kc, &r, obj, NULL, &err);

	eo__ctl_note_refusal(pass, EO_PLAN_VERB_CREATE, kind, eo_meta_name(obj), e, &err);
	if (e == EO_KUBE_EEXISTS) {
		r.name = eo_meta_name(obj);
		/* the cache lags (the next pass sees it), or the name is someone else's */
		return eo__ctl_taken_by_other(c, pass, r, kind, "this EtcdMember",
					      eo_member_uid(member))
			   ? -1
			   : 0;
	}
	if (e != EO_KUBE_OK) {
		eo_log_kv(EO_LOG_WARN, pass->lc, "create failed", "kind", what, "error",
			  eo_kube_strerror(e), "detail", err.message, NULL);
		return -1;
	}
	snprintf(msg, sizeof(msg), "created %s %s", what, eo_meta_name(obj));
	eo_log_kv(EO_LOG_INFO, pass->lc, "created", "kind", what, "name", eo_meta_name(obj), NULL);
	eo__ctl_emit(c, member, "Normal", strcmp(what, "Pod") == 0 ? "PodCreated" : "PVCCreated",
		     msg);
	return 0;
}
