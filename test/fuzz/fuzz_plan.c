/*
 * Fuzz target: the pure planners (src/plan): eo_plan_cluster and eo_member_plan, fed an
 * observed world built from the fuzz input, with the raft-safety invariants as checks.
 *
 * The input is read byte by byte (struct fz) into a world: the EtcdCluster (spec.replicas,
 * storage medium, status: token, clusterID, observed.replicas, progressDeadline, Paused), its
 * Services and PDB, up to 6 EtcdMembers (seed, pending, voter, deleting, dormant, finalizer,
 * podUID, memberID, creation order) each with a Pod (none, pending, ready, failed, being
 * deleted, crash-looping) and a PVC, and etcd's member list (an entry per member or not,
 * learner or voter, started or not, plus strays: an unnamed or unknown voter, a learner no
 * member stands for), or an etcd error. Three last bytes change the storage (read last, so
 * that an input shorter than that keeps 1Gi everywhere, as before): the target's size and
 * class, which members were made on it, which PVCs are bound at 1Gi, whether they grew and
 * whether their filesystem waits for a new mount (a restart, checked as a roll's step). The
 * cluster is planned as the controller does it: without etcd first and, when it asks
 * (QUERY_MEMBERS), again with etcd's answer; every member is planned without and with etcd.
 *
 * Invariants (abort on violation):
 *  - never a seed when members exist: CREATE_SEED only with no EtcdMember at all and no
 *    clusterID;
 *  - one membership change at a time: ADD_LEARNER, PROMOTE_LEARNER, REMOVE_MEMBER and
 *    REMOVE_STRAY never while an EtcdMember is being deleted (a removal in flight), and
 *    ADD_LEARNER never while etcd lists a learner (never two learners);
 *  - never a removal that loses quorum: removing an etcd voter leaves at least a quorum of the
 *    remaining voters ready (ready = the member's Pod is ready; down voters count as down);
 *  - absence is never decided from one unverified answer: a voter mark is taken away only on a
 *    list the leader confirmed (the plan first asks for it: QUERY_MEMBERS with want_leader,
 *    and is then planned with a confirmed and with an unconfirmed list);
 *  - every action names what it acts on (member, id, URL, initial cluster, endpoints), and that
 *    is in the input: a promoted id is a learner, an added member is pending and unknown to
 *    etcd, a removed member is not already being deleted;
 *  - the member planner removes from etcd or drops its finalizer only for a member being
 *    deleted, never creates a Pod for a dormant, deleting or memory-lost member, never a PVC
 *    for a memory member, and gives an object for every create;
 *  - storage (plan/storage.h): a PVC's request is raised (PATCH_PVC) only for a PVC member
 *    that is not being deleted and owns the PVC; the cluster reads a StorageClass (READ_CLASS)
 *    by name and once. Members on an older storage are replaced under the invariants above.
 */
#include <jansson.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/quantity.h"
#include "desired/desired.h"
#include "desired/restore.h"
#include "plan/member.h"
#include "plan/plan.h"

#include "fuzz.h"

#define T0    1780394400 /* 2026-06-02T10:00:00Z */
#define MAXM  6
#define MAXE  (MAXM + 3)
#define CNAME "demo"
#define NS    "default"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

static const char *const STAMPS[] = {"2026-06-02T09:00:00Z", "2026-06-02T09:01:00Z",
				     "2026-06-02T09:02:00Z", "2026-06-02T09:03:00Z"};

struct world {
	json_t *cluster, *hsvc, *csvc, *pdb;
	json_t *pvc[MAXM];
	struct eo_plan_member pm[MAXM];
	size_t n;
	bool memory;
	struct eo_etcd_member ev[MAXE];
	struct eo_etcd_status st[MAXE]; /* what each entry said about itself (a roll) */
	size_t n_st;
	uint64_t leader;
	char peer[MAXE][EO_DESIRED_URL_MAX];
	char *peer_p[MAXE];
	char name[MAXE][32];
	struct eo_etcd_members etcd;
	eo_etcd_err etcd_err;
};

static json_t *make_cluster(struct fz *f, struct world *w)
{
	static const int replicas[] = {0, 1, 2, 3, 4, 5, 7, 1};
	static const json_int_t observed[] = {0, 1, 2, 3, 4, 5, -1, 1000};
	uint8_t b = fz_u8(f), s = fz_u8(f);
	int spec_replicas = replicas[b & 7];
	json_t *c, *status;

	w->memory = (b & 8) != 0;
	c = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:i}, s:{s:i, s:s, s:{s:s, s:s}, s:i}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster", "metadata", "name",
		      CNAME, "namespace", NS, "uid", "c-uid", "generation", 2, "spec", "replicas",
		      spec_replicas, "version", "3.6.11", "storage", "size", "1Gi", "medium",
		      w->memory ? EO_STORAGE_MEDIUM_MEMORY : "", "progressDeadlineSeconds", 600);
	if (c == NULL)
		abort();
	status = json_object();
	json_object_set_new(c, "status", status);
	if (s & 1)
		json_object_set_new(status, "clusterToken", json_string("default-demo-c-uid"));
	if (s & 2)
		json_object_set_new(status, "clusterID", json_string("248adce0359142ba"));
	if (s & 4) {
		/* observed.replicas: the latched target; -1 and 1000 as a hand-edited status. */
		json_int_t r = (s & 0x80) ? observed[(s >> 4) & 7] : (json_int_t)spec_replicas;
		json_t *obs = json_pack("{s:I, s:s, s:{s:s, s:s}}", "replicas", r, "version",
					"3.6.11", "storage", "size", "1Gi", "medium",
					w->memory ? EO_STORAGE_MEDIUM_MEMORY : "");

		json_object_set_new(status, "observed", obs);
	}
	switch ((s >> 3) & 3) {
	case 1:
		json_object_set_new(status, "progressDeadline",
				    json_string("2026-06-02T10:10:00Z"));
		break;
	case 2:
		json_object_set_new(status, "progressDeadline",
				    json_string("2026-06-02T09:50:00Z"));
		break;
	default:
		break;
	}
	if (b & 0x10)
		json_object_set_new(status, "conditions",
				    json_pack("[{s:s, s:s, s:s, s:s, s:s}]", "type",
					      EO_COND_AVAILABLE, "status", EO_COND_FALSE, "reason",
					      EO_REASON_PAUSED, "message", "paused",
					      "lastTransitionTime", "2026-06-02T09:00:00Z"));
	if (b & 0x20)
		json_object_set_new(c, "metadata",
				    json_pack("{s:s, s:s, s:s, s:i, s:s}", "name", CNAME,
					      "namespace", NS, "uid", "c-uid", "generation", 2,
					      "deletionTimestamp", "2026-06-02T10:00:00Z"));
	return c;
}

static json_t *make_member(struct fz *f, size_t i, bool memory)
{
	uint8_t a = fz_u8(f), b = fz_u8(f);
	char name[32], ic[EO_DESIRED_URL_MAX];
	json_t *m, *meta, *spec, *status;

	snprintf(name, sizeof(name), CNAME "-%c", (char)('a' + i));
	if (eo_desired_seed_initial_cluster(ic, sizeof(ic), &OPTS, name, CNAME, NS, false) != 0)
		abort();
	m = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:s, s:b}]}, "
		      "s:{s:s, s:s, s:b, s:s, s:s, s:{s:s, s:s}}, s:{}}",
		      "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name",
		      name, "namespace", NS, "uid", name, "creationTimestamp", STAMPS[b & 3],
		      "ownerReferences", "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdCluster",
		      "name", CNAME, "uid", "c-uid", "controller", 1, "spec", "clusterName", CNAME,
		      "version", "3.6.11", "bootstrap", (a & 1) != 0, "initialCluster",
		      (a & 2) ? "" : ic, "clusterToken", "default-demo-c-uid", "storage", "size",
		      "1Gi", "medium", memory ? EO_STORAGE_MEDIUM_MEMORY : "", "status");
	if (m == NULL)
		abort();
	meta = json_object_get(m, "metadata");
	spec = json_object_get(m, "spec");
	status = json_object_get(m, "status");
	if (!(a & 4))
		json_object_set_new(meta, "finalizers",
				    json_pack("[s]", EO_FINALIZER_MEMBER_CLEANUP));
	if (a & 8)
		json_object_set_new(status, "isVoter", json_true());
	if (a & 0x10)
		json_object_set_new(meta, "deletionTimestamp", json_string("2026-06-02T10:00:00Z"));
	if (a & 0x20)
		json_object_set_new(spec, "dormant", json_true());
	if (a & 0x40)
		json_object_set_new(status, "podUID", json_string("pod-uid"));
	if (a & 0x80)
		json_object_set_new(status, "memberID", json_string("10a"));
	return m;
}

static json_t *make_pod(struct fz *f, const json_t *member)
{
	uint8_t p = fz_u8(f);
	const char *name = eo_member_name(member);
	const char *phase = "Running";
	bool ready = false;
	json_t *pod, *owner;

	switch (p & 7) {
	case 0:
	case 1:
		return NULL;
	case 2:
		phase = "Pending";
		break;
	case 3:
	case 4:
	case 5:
		ready = true;
		break;
	case 6:
		phase = "Failed";
		break;
	default:
		break; /* running, not ready */
	}
	owner = eo_desired_owner_ref(member);
	pod =
	    json_pack("{s:{s:s, s:s, s:s, s:s, s:[o], s:{s:s}}, s:{s:s, s:[{s:s, s:s}]}}",
		      "metadata", "name", name, "namespace", NS, "uid", "pod-uid",
		      "creationTimestamp", STAMPS[(p >> 3) & 3], "ownerReferences", owner, "labels",
		      EO_LABEL_ROLE, (p & 0x20) ? EO_LABEL_ROLE_VOTER : "none", "status", "phase",
		      phase, "conditions", "type", "Ready", "status", ready ? "True" : "False");
	if (pod == NULL)
		abort();
	if (p & 0x40)
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	if ((p & 0x80) && !ready)
		json_object_set_new(json_object_get(pod, "status"), "containerStatuses",
				    json_pack("[{s:s, s:i, s:{s:{s:s}}, s:{s:{s:s, s:i}}}]", "name",
					      "etcd", "restartCount", EO_PLAN_CRASHLOOP_RESTARTS,
					      "state", "waiting", "reason", "CrashLoopBackOff",
					      "lastState", "terminated", "reason", "Error",
					      "exitCode", 1));
	return pod;
}

static json_t *make_pvc(struct fz *f, const json_t *member)
{
	uint8_t p = fz_u8(f);
	char name[EO_NAME_MAX];
	json_t *owner;

	if ((p & 3) == 0 || eo_name_member_pvc(name, sizeof(name), eo_member_name(member)) != 0)
		return NULL;
	owner = (p & 3) == 3 ? json_pack("{s:s, s:s, s:s, s:s, s:b}", "apiVersion", "v1", "kind",
					 "Foo", "name", "x", "uid", "other", "controller", 1)
			     : eo_desired_owner_ref(member);
	return json_pack("{s:{s:s, s:s, s:s, s:[o]}}", "metadata", "name", name, "namespace", NS,
			 "uid", "pvc-uid", "ownerReferences", owner);
}

static void add_entry(struct world *w, const char *member, const char *name, bool learner,
		      uint64_t id)
{
	size_t k = w->etcd.n;

	if (k >= MAXE)
		return;
	if (eo_desired_member_peer_url(w->peer[k], sizeof(w->peer[k]), &OPTS, member, CNAME, NS,
				       false) != 0)
		abort();
	snprintf(w->name[k], sizeof(w->name[k]), "%s", name);
	w->peer_p[k] = w->peer[k];
	w->ev[k] = (struct eo_etcd_member){.id = id,
					   .name = w->name[k],
					   .peer_urls = &w->peer_p[k],
					   .n_peer_urls = 1,
					   .is_learner = learner};
	w->etcd.n++;
}

/* The pod hash the member's Pod has once it runs the target (plan/roll.c compares it). */
static void stamp_pod_hash(const json_t *member, json_t *pod, const json_t *observed)
{
	char want[EO_DESIRED_HASH_MAX];
	json_t *target = eo_desired_member_with_target(member, observed);
	json_t *meta = json_object_get(pod, "metadata");

	if (target != NULL && meta != NULL &&
	    eo_desired_member_pod_hash(target, &OPTS, want, sizeof(want)) == 0) {
		if (json_object_get(meta, "annotations") == NULL)
			json_object_set_new(meta, "annotations", json_object());
		json_object_set_new(json_object_get(meta, "annotations"), EO_ANNOTATION_POD_HASH,
				    json_string(want));
	}
	json_decref(target);
}

/*
 * The storage bytes (read last). First: bit 0 the target (spec and status.observed) is 2Gi,
 * bit 1 it names the class "fast", bits 2 to 7 member i was made on the target (else on 1Gi,
 * no class). Second: bits 0 to 5 member i's PVC is bound at 1Gi of class "fast", bit 6 those
 * PVCs report 2Gi of capacity (grown), bit 7 the Pods carry the pod hash the target gives
 * (no roll due: the storage step's turn). Third: bit 0 those PVCs carry
 * FileSystemResizePending (the volume grew, its filesystem waits for a new mount: a restart).
 */
static void storage_init(struct fz *f, struct world *w)
{
	uint8_t t = fz_u8(f), v = fz_u8(f), g = fz_u8(f);
	json_t *st = json_pack("{s:s, s:s}", "size", (t & 1) ? "2Gi" : "1Gi", "medium",
			       w->memory ? EO_STORAGE_MEDIUM_MEMORY : "");
	json_t *obs = json_object_get(json_object_get(w->cluster, "status"), "observed");

	if (st == NULL)
		abort();
	if (t & 2)
		json_object_set_new(st, "storageClassName", json_string("fast"));
	json_object_set(json_object_get(w->cluster, "spec"), "storage", st);
	if (obs != NULL)
		json_object_set(obs, "storage", st);
	for (size_t i = 0; i < w->n; i++) {
		if (t & (4u << i))
			json_object_set_new(json_object_get((json_t *)w->pm[i].member, "spec"),
					    "storage", json_deep_copy(st));
		if (w->pvc[i] == NULL || !(v & (1u << i)))
			continue;
		json_object_set_new(w->pvc[i], "spec",
				    json_pack("{s:s, s:{s:{s:s}}}", "storageClassName", "fast",
					      "resources", "requests", "storage", "1Gi"));
		json_object_set_new(w->pvc[i], "status",
				    json_pack("{s:s, s:{s:s}}", "phase", "Bound", "capacity",
					      "storage", (v & 0x40) ? "2Gi" : "1Gi"));
		if (g & 1)
			json_object_set_new(json_object_get(w->pvc[i], "status"), "conditions",
					    json_pack("[{s:s, s:s}]", "type",
						      "FileSystemResizePending", "status", "True"));
	}
	json_decref(st);
	for (size_t i = 0; (v & 0x80) && obs != NULL && i < w->n; i++)
		stamp_pod_hash(w->pm[i].member, (json_t *)w->pm[i].pod, obs);
}

static void world_init(struct world *w, const uint8_t *data, size_t size)
{
	struct fz f = {data, size};
	uint8_t e;
	size_t n;

	memset(w, 0, sizeof(*w));
	w->cluster = make_cluster(&f, w);
	e = fz_u8(&f);
	w->hsvc = (e & 1) ? NULL : eo_desired_headless_service(w->cluster);
	w->csvc = (e & 2) ? NULL : eo_desired_client_service(w->cluster);
	n = fz_below(&f, MAXM + 1);
	for (size_t i = 0; i < n; i++) {
		json_t *m = make_member(&f, i, w->memory);

		w->pm[i].member = m;
		w->pm[i].pod = make_pod(&f, m);
		w->pvc[i] = make_pvc(&f, m);
		w->pm[i].pvc = w->pvc[i];
		w->n++;
	}
	/* etcd: one byte per member (entry or not, learner, started), then strays. */
	w->etcd_err = (e & 8) ? EO_ETCD_UNAVAILABLE : EO_ETCD_OK;
	w->etcd.cluster_id = (e & 0x10) ? 0 : 0x248adce0359142baULL;
	w->etcd.v = w->ev;
	for (size_t i = 0; i < w->n; i++) {
		uint8_t x = fz_u8(&f);
		const char *mn = eo_member_name(w->pm[i].member);

		if (x & 1)
			add_entry(w, mn, (x & 4) ? mn : "", (x & 2) != 0, 0x100 + i);
	}
	if (e & 0x20) /* a learner no EtcdMember stands for */
		add_entry(w, CNAME "-x", "", true, 0x1f0);
	if (e & 0x40) /* a voter no EtcdMember stands for */
		add_entry(w, CNAME "-y", CNAME "-y", false, 0x1f1);
	if (e & 0x80) /* a voter that never started */
		add_entry(w, CNAME "-z", "", false, 0x1f2);
	/* The PDB as desired for the voters, or absent. */
	if (fz_bool(&f)) {
		int voters = 0;

		for (size_t i = 0; i < w->n; i++)
			voters += eo_member_is_voter(w->pm[i].member);
		w->pdb = eo_desired_pdb(w->cluster, eo_desired_pdb_min_available(
							voters, eo_cluster_replicas(w->cluster)));
	}
	/* Statuses (read after everything above): a leader, then each entry's lag. */
	if (fz_bool(&f) && w->etcd.n > 0) {
		w->leader = w->ev[fz_below(&f, w->etcd.n)].id;
		for (size_t k = 0; k < w->etcd.n; k++) {
			uint8_t lag = fz_u8(&f);

			if (lag == 0xff)
				continue; /* did not answer */
			w->st[w->n_st++] =
			    (struct eo_etcd_status){.member_id = w->ev[k].id,
						    .leader = w->leader,
						    .raft_index = 1000,
						    .raft_applied_index = 1000 - (uint64_t)lag * 2};
		}
	}
	storage_init(&f, w);
}

static void world_free(struct world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->pm[i].member);
		json_decref((json_t *)w->pm[i].pod);
		json_decref(w->pvc[i]);
	}
	json_decref(w->cluster);
	json_decref(w->hsvc);
	json_decref(w->csvc);
	json_decref(w->pdb);
}

/* --- what the world says, independently of the planner --- */

static const struct eo_plan_member *member_named(const struct world *w, const char *name)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(eo_member_name(w->pm[i].member), name) == 0)
			return &w->pm[i];
	return NULL;
}

/* The EtcdMember an etcd entry stands for: by name, else by peer URL. */
static const struct eo_plan_member *member_of(const struct world *w,
					      const struct eo_etcd_member *em)
{
	for (size_t i = 0; i < w->n; i++) {
		char peer[EO_DESIRED_URL_MAX];
		const char *mn = eo_member_name(w->pm[i].member);

		if (eo_desired_member_peer_url(peer, sizeof(peer), &OPTS, mn, CNAME, NS, false) !=
		    0)
			abort();
		if ((em->name[0] != '\0' && strcmp(em->name, mn) == 0) ||
		    (em->n_peer_urls > 0 && strcmp(em->peer_urls[0], peer) == 0))
			return &w->pm[i];
	}
	return NULL;
}

static const struct eo_etcd_member *entry_of(const struct world *w, const json_t *member)
{
	for (size_t k = 0; k < w->etcd.n; k++)
		if (member_of(w, &w->ev[k]) != NULL && member_of(w, &w->ev[k])->member == member)
			return &w->ev[k];
	return NULL;
}

static size_t deleting(const struct world *w)
{
	size_t d = 0;

	for (size_t i = 0; i < w->n; i++)
		d += eo_member_is_deleting(w->pm[i].member);
	return d;
}

static size_t learners(const struct world *w)
{
	size_t l = 0;

	for (size_t k = 0; k < w->etcd.n; k++)
		l += w->ev[k].is_learner;
	return l;
}

/* Voters in etcd's list, and those whose member's Pod is ready. */
static void voters(const struct world *w, size_t *v, size_t *ready)
{
	*v = *ready = 0;
	for (size_t k = 0; k < w->etcd.n; k++) {
		const struct eo_plan_member *pm;

		if (w->ev[k].is_learner)
			continue;
		(*v)++;
		pm = member_of(w, &w->ev[k]);
		if (pm != NULL && eo_plan_pod_ready(pm->pod))
			(*ready)++;
	}
}

/* Removing etcd entry em (a voter) keeps a quorum of the remaining voters ready. */
static void check_quorum_after_removal(const struct world *w, const struct eo_etcd_member *em,
				       const char *what, const char *why)
{
	const struct eo_plan_member *pm = member_of(w, em);
	size_t v, r, v_after, r_after;

	if (em->is_learner)
		return; /* a learner does not vote */
	voters(w, &v, &r);
	v_after = v - 1;
	r_after = r - (pm != NULL && eo_plan_pod_ready(pm->pod) ? 1 : 0);
	FUZZ_CHECK(
	    v_after == 0 || r_after >= v_after / 2 + 1,
	    "%s of a voter loses quorum: %zu voters, %zu ready; after: %zu voters, %zu ready "
	    "(%s)",
	    what, v, r, v_after, r_after, why);
}

/* Every member not being deleted has a ready Pod. */
static bool all_ready(const struct world *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!eo_member_is_deleting(w->pm[i].member) &&
		    !eo_member_dormant(w->pm[i].member) && !eo_plan_pod_ready(w->pm[i].pod))
			return false;
	return true;
}

/*
 * An UPDATE_MEMBER whose patch only raises spec.storage.size (a PVC grown in place,
 * plan/storage.h): no restart follows, so not a roll step.
 */
static bool is_storage_grow(const struct eo_plan_result *r)
{
	const json_t *spec = json_object_get(r->patch, "spec");

	return r->action == EO_PLAN_UPDATE_MEMBER && json_object_size(r->patch) == 1 &&
	       json_object_size(spec) == 1 &&
	       json_object_size(json_object_get(spec, "storage")) == 1 &&
	       json_is_string(json_object_get(json_object_get(spec, "storage"), "size"));
}

static bool is_roll_step(const struct eo_plan_result *r)
{
	return (r->action == EO_PLAN_UPDATE_MEMBER && !is_storage_grow(r)) ||
	       r->action == EO_PLAN_RESTART_MEMBER || r->action == EO_PLAN_MOVE_LEADER;
}

static bool is_membership_change(enum eo_plan_action a)
{
	return a == EO_PLAN_ADD_LEARNER || a == EO_PLAN_PROMOTE_LEARNER ||
	       a == EO_PLAN_REMOVE_MEMBER || a == EO_PLAN_REMOVE_STRAY;
}

static void check_cluster_plan(const struct world *w, const struct eo_plan_input *in,
			       const struct eo_plan_result *r)
{
	const char *an = eo_plan_action_name(r->action);
	bool etcd_ok = in->etcd_queried && in->etcd_err == EO_ETCD_OK && in->etcd != NULL;

	FUZZ_CHECK(r->action < EO_PLAN_ACTION_COUNT_, "action %d", (int)r->action);
	FUZZ_CHECK(memchr(r->message, '\0', sizeof(r->message)) != NULL, "message");
	FUZZ_CHECK(r->n_endpoints <= EO_PLAN_MAX_ENDPOINTS, "%zu endpoints", r->n_endpoints);
	for (size_t i = 0; i < r->n_endpoints; i++)
		FUZZ_CHECK(r->endpoints[i][0] != '\0', "%s: endpoint %zu empty", an, i);
	if (r->status_changed)
		FUZZ_CHECK(r->status != NULL, "status changed without a status");
	/* A survivor is marked for --force-new-cluster only on the live view. */
	if (r->action == EO_PLAN_MARK_MEMBER) {
		const char *v = json_string_value(json_object_get(
		    json_object_get(json_object_get(r->patch, "metadata"), "annotations"),
		    EO_ANNOTATION_FORCE_NEW_CLUSTER_STEP));

		FUZZ_CHECK(v == NULL || strcmp(v, "forcing") != 0 || in->live_checked,
			   "force-new-cluster mark without the live checks");
	}

	/* Never a seed when members exist (or once the cluster has an ID). */
	if (r->action == EO_PLAN_CREATE_SEED) {
		FUZZ_CHECK(w->n == 0, "create-seed with %zu EtcdMember(s)", w->n);
		FUZZ_CHECK(eo_cluster_cluster_id(w->cluster) == NULL,
			   "create-seed in a bootstrapped cluster");
	}

	if (is_membership_change(r->action)) {
		/* Membership changes are decided from etcd's list, one at a time. */
		FUZZ_CHECK(etcd_ok, "%s without etcd's member list", an);
		FUZZ_CHECK(deleting(w) == 0, "%s while %zu member(s) are being deleted", an,
			   deleting(w));
		FUZZ_CHECK(r->action == EO_PLAN_REMOVE_MEMBER || r->n_endpoints > 0,
			   "%s without endpoints", an);
	}

	if (is_storage_grow(r)) {
		const char *size = json_string_value(json_object_get(
		    json_object_get(json_object_get(r->patch, "spec"), "storage"), "size"));
		struct eo_storage have;
		struct eo_quantity q;

		/* A member's size is raised only for a PVC member, never lowered, all serving. */
		FUZZ_CHECK(r->member != NULL && !eo_member_is_deleting(r->member),
			   "storage grow without a member, or of one being deleted");
		eo_member_storage(r->member, &have);
		FUZZ_CHECK(!have.memory, "storage grow of a memory member");
		FUZZ_CHECK(have.size_valid && eo_quantity_parse(size, &q) == 0 &&
			       eo_quantity_cmp(&have.size_q, &q) < 0,
			   "storage grow that does not grow: %s -> %s", have.size, size);
		FUZZ_CHECK(in->class_read, "storage grow without the class read live");
		FUZZ_CHECK(all_ready(w), "storage grow while a member is not ready");
	}

	if (is_roll_step(r)) {
		const struct eo_etcd_member *em = NULL;

		/* A roll step: never with a membership change in flight or a member down. */
		FUZZ_CHECK(etcd_ok, "%s without etcd's member list", an);
		FUZZ_CHECK(deleting(w) == 0 && learners(w) == 0,
			   "%s while %zu member(s) are being deleted, %zu learner(s)", an,
			   deleting(w), learners(w));
		FUZZ_CHECK(all_ready(w), "%s while a member is not ready", an);
		FUZZ_CHECK(w->leader != 0, "%s without a known leader", an);
		FUZZ_CHECK(r->member != NULL, "%s without member", an);
		em = entry_of(w, r->member);
		FUZZ_CHECK(em != NULL, "%s of a member etcd does not list", an);
		if (r->action == EO_PLAN_MOVE_LEADER)
			FUZZ_CHECK(em->id == w->leader && r->etcd_id != w->leader &&
				       eo_etcd_members_find(&w->etcd, r->etcd_id) != NULL,
				   "move-leader from %llx to %llx, leader %llx",
				   (unsigned long long)em->id, (unsigned long long)r->etcd_id,
				   (unsigned long long)w->leader);
		else
			FUZZ_CHECK(em->id != w->leader || w->etcd.n == 1,
				   "%s of the leader of %zu members", an, w->etcd.n);
	}

	switch (r->action) {
	case EO_PLAN_ADD_LEARNER:
		FUZZ_CHECK(learners(w) == 0, "add-learner while etcd lists %zu learner(s)",
			   learners(w));
		FUZZ_CHECK(r->member != NULL && eo_member_is_pending(r->member) &&
			       !eo_member_is_deleting(r->member),
			   "add-learner of a member that is not pending");
		FUZZ_CHECK(entry_of(w, r->member) == NULL, "add-learner of a member etcd lists");
		FUZZ_CHECK(r->peer_url[0] != '\0', "add-learner without peer URL");
		break;
	case EO_PLAN_PROMOTE_LEARNER: {
		const struct eo_etcd_member *em = eo_etcd_members_find(&w->etcd, r->etcd_id);

		FUZZ_CHECK(em != NULL && em->is_learner, "promote of %llx, not a learner",
			   (unsigned long long)r->etcd_id);
		FUZZ_CHECK(r->member != NULL && member_of(w, em) != NULL &&
			       member_of(w, em)->member == r->member &&
			       eo_plan_pod_ready(member_of(w, em)->pod),
			   "promote of a learner whose Pod is not ready");
		break;
	}
	case EO_PLAN_REMOVE_MEMBER: {
		const struct eo_etcd_member *em = NULL;

		FUZZ_CHECK(r->member != NULL && !eo_member_is_deleting(r->member),
			   "remove-member of a member already being deleted");
		em = entry_of(w, r->member);
		if (em != NULL)
			check_quorum_after_removal(w, em, "remove-member", r->message);
		break;
	}
	case EO_PLAN_REMOVE_STRAY: {
		const struct eo_etcd_member *em = eo_etcd_members_find(&w->etcd, r->etcd_id);

		FUZZ_CHECK(em != NULL, "remove-stray of %llx, not in etcd",
			   (unsigned long long)r->etcd_id);
		FUZZ_CHECK(member_of(w, em) == NULL,
			   "remove-stray of an entry a member stands for");
		FUZZ_CHECK(em->is_learner || em->name[0] == '\0',
			   "remove-stray of a started voter");
		check_quorum_after_removal(w, em, "remove-stray", r->message);
		break;
	}
	case EO_PLAN_READ_CLASS:
		/* The class of a PVC to grow is read live once, by name. */
		FUZZ_CHECK(r->storage_class[0] != '\0', "read-class without a StorageClass name");
		FUZZ_CHECK(!in->class_read, "read-class asked twice");
		break;
	case EO_PLAN_COMPLETE_SEED:
	case EO_PLAN_SET_INITIAL_CLUSTER:
		FUZZ_CHECK(r->member != NULL, "%s without member", an);
		FUZZ_CHECK(strstr(r->initial_cluster, eo_member_name(r->member)) != NULL,
			   "%s: initial cluster '%s' does not name %s", an, r->initial_cluster,
			   eo_member_name(r->member));
		break;
	case EO_PLAN_SET_VOTER:
		FUZZ_CHECK(r->voter || (in->etcd_leader_checked && in->etcd_from_leader),
			   "a voter mark taken away on a list the leader did not confirm");
		/* fall through */
	case EO_PLAN_SET_DORMANT:
	case EO_PLAN_WAKE_DORMANT:
		FUZZ_CHECK(r->member != NULL, "%s without member", an);
		FUZZ_CHECK(member_named(w, eo_member_name(r->member)) != NULL, "%s: unknown member",
			   an);
		break;
	case EO_PLAN_QUERY_MEMBERS:
		if (in->etcd_queried) { /* only to have the list confirmed by the leader */
			FUZZ_CHECK(r->want_leader && etcd_ok, "query-members asked twice");
			FUZZ_CHECK(!in->etcd_leader_checked, "the leader asked twice");
			break;
		}
		FUZZ_CHECK(r->n_endpoints > 0, "query-members without endpoints");
		break;
	case EO_PLAN_ENSURE_PDB:
		FUZZ_CHECK(r->object != NULL, "ensure-pdb without object");
		break;
	default:
		break;
	}
}

static void check_member_plan(const struct eo_mplan_input *in, const struct eo_mplan_result *r,
			      bool memory)
{
	const char *an = eo_mplan_action_name(r->action);
	const json_t *m = in->member;
	bool del = eo_member_is_deleting(m);

	FUZZ_CHECK(r->action < EO_MPLAN_ACTION_COUNT_, "member action %d", (int)r->action);
	FUZZ_CHECK(memchr(r->message, '\0', sizeof(r->message)) != NULL, "message");
	switch (r->action) {
	case EO_MPLAN_REMOVE_MEMBER:
	case EO_MPLAN_DROP_FINALIZER:
		FUZZ_CHECK(del && eo_member_has_finalizer(m), "%s of a member not being deleted",
			   an);
		break;
	case EO_MPLAN_CREATE_POD:
		FUZZ_CHECK(!del, "create-pod for a member being deleted");
		FUZZ_CHECK(!eo_member_dormant(m), "create-pod for a dormant member");
		FUZZ_CHECK(!eo_plan_memory_member_lost(m, in->pod),
			   "create-pod for a memory member that lost its data");
		FUZZ_CHECK(in->pod == NULL, "create-pod while the Pod exists");
		FUZZ_CHECK(r->object != NULL, "create-pod without object");
		FUZZ_CHECK(eo_desired_restore_claim(r->object) == NULL || in->volume_read,
			   "create-pod mounting a restore source PVC that was not read live");
		break;
	case EO_MPLAN_READ_VOLUME:
		FUZZ_CHECK(r->volume[0] != '\0', "read-volume without a PVC name");
		FUZZ_CHECK(!in->volume_read, "read-volume asked twice");
		FUZZ_CHECK(r->object == NULL, "read-volume with an object");
		break;
	case EO_MPLAN_CREATE_PVC:
		FUZZ_CHECK(!del, "create-pvc for a member being deleted");
		FUZZ_CHECK(!memory, "create-pvc for a memory member");
		FUZZ_CHECK(in->pvc == NULL, "create-pvc while the PVC exists");
		FUZZ_CHECK(r->object != NULL, "create-pvc without object");
		break;
	case EO_MPLAN_DELETE_POD:
		FUZZ_CHECK(in->pod != NULL, "delete-pod without Pod");
		break;
	case EO_MPLAN_PATCH_POD:
		FUZZ_CHECK(in->pod != NULL && r->object != NULL, "patch-pod without Pod or patch");
		break;
	case EO_MPLAN_PATCH_PVC:
		/* A PVC's request only grows, for a PVC member that stays and owns it. */
		FUZZ_CHECK(!del, "patch-pvc for a member being deleted");
		FUZZ_CHECK(!memory, "patch-pvc for a memory member");
		FUZZ_CHECK(in->pvc != NULL && r->object != NULL, "patch-pvc without PVC or patch");
		FUZZ_CHECK(eo_desired_is_controlled_by(in->pvc, eo_member_uid(m)),
			   "patch-pvc of a PVC the member does not own");
		break;
	case EO_MPLAN_QUERY_ETCD:
		FUZZ_CHECK(r->endpoint[0] != '\0', "query-etcd without endpoint");
		FUZZ_CHECK(!in->etcd_queried, "query-etcd asked twice");
		break;
	default:
		break;
	}
}

/* Asked to read a StorageClass: planned again with it not found, without and with expansion. */
static void plan_with_class(const struct world *w, const struct eo_plan_input *asked,
			    const char *name)
{
	struct eo_plan_input in = *asked;
	struct eo_plan_result r;

	in.class_read = true;
	for (int k = 0; k < 3; k++) {
		json_t *sc = k == 0 ? NULL
				    : json_pack("{s:{s:s}, s:b}", "metadata", "name", name,
						"allowVolumeExpansion", k == 2);

		in.storage_class = sc;
		if (eo_plan_cluster(&in, &r) == 0) {
			check_cluster_plan(w, &in, &r);
			eo_plan_result_clear(&r);
		}
		json_decref(sc);
	}
}

static void plan_cluster(const struct world *w)
{
	struct eo_plan_input in = {.cluster = w->cluster,
				   .members = w->pm,
				   .n_members = w->n,
				   .headless_svc = w->hsvc,
				   .client_svc = w->csvc,
				   .pdb = w->pdb,
				   .build = &OPTS,
				   .now = T0};
	struct eo_plan_result r;

	/* As the controller: without etcd, then with its answer when asked. */
	if (eo_plan_cluster(&in, &r) == 0) {
		bool again = r.action == EO_PLAN_QUERY_MEMBERS;

		check_cluster_plan(w, &in, &r);
		/* the world's Pods and PVCs stand for the live reads too */
		in.live_checked = r.want_live;
		eo_plan_result_clear(&r);
		if (!again)
			return;
	}
	in.etcd_queried = true;
	in.etcd_err = w->etcd_err;
	in.etcd = w->etcd_err == EO_ETCD_OK ? &w->etcd : NULL;
	in.statuses = w->st;
	in.n_statuses = w->n_st;
	if (eo_plan_cluster(&in, &r) == 0) {
		bool leader = r.action == EO_PLAN_QUERY_MEMBERS && r.want_leader;

		check_cluster_plan(w, &in, &r);
		if (r.action == EO_PLAN_READ_CLASS)
			plan_with_class(w, &in, r.storage_class);
		eo_plan_result_clear(&r);
		if (!leader)
			return;
	}
	/* Asked to confirm the list with the leader: both answers. */
	in.etcd_leader_checked = true;
	for (int confirmed = 0; confirmed < 2; confirmed++) {
		in.etcd_from_leader = confirmed;
		in.etcd_leader_why = confirmed ? NULL : "the member at x knows no leader";
		if (eo_plan_cluster(&in, &r) == 0) {
			check_cluster_plan(w, &in, &r);
			eo_plan_result_clear(&r);
		}
	}
}

static void plan_members(const struct world *w)
{
	struct eo_etcd_status st = {.version = "3.6.11", .cluster_id = 0x248adce0359142baULL};

	for (size_t i = 0; i < w->n; i++) {
		struct eo_mplan_input in = {.member = w->pm[i].member,
					    .cluster = w->cluster,
					    .pod = w->pm[i].pod,
					    .pvc = w->pm[i].pvc,
					    .build = &OPTS,
					    .now = T0};
		struct eo_mplan_result r;

		if (eo_member_plan(&in, &r) == 0) {
			check_member_plan(&in, &r, w->memory);
			eo_member_plan_clear(&r);
		}
		in.etcd_queried = true;
		in.list_err = w->etcd_err;
		in.list = w->etcd_err == EO_ETCD_OK ? &w->etcd : NULL;
		in.status_err = w->etcd_err;
		in.status = w->etcd_err == EO_ETCD_OK ? &st : NULL;
		if (eo_member_plan(&in, &r) == 0) {
			check_member_plan(&in, &r, w->memory);
			eo_member_plan_clear(&r);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct world w;

	world_init(&w, data, size);
	plan_cluster(&w);
	plan_members(&w);
	world_free(&w);
	return 0;
}
