/*
 * `kubectl etcd migrate`, the pure half (src/plugin/migrate.c), against the objects of a
 * legacy (etcd.aenix.io/v1alpha1) 3-member cluster recorded from the local Kubernetes
 * (test/unit/test_migrate_recorded/, its README says how):
 * whether it may be adopted (healthy, legacy operator stopped, a spec this operator
 * carries), the EtcdCluster and EtcdMembers it becomes, and the Pod this operator would
 * build for an adopted member (same Service, same data on the PVC, same peer TLS).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/tu_main.h"

#include "api/cluster.h"
#include "api/member.h"
#include "api/names.h"
#include "desired/desired.h"
#include "etcd/wire.h"
#include "plugin/args.h"
#include "plugin/migrate.h"
#include "plugin/migrate_run.h"

#define DIR "test/unit/test_migrate_recorded/"

#define NS "migrate-manual"

struct rec {
	json_t *legacy, *sts, *pods, *pvcs, *cm, *dep;
	struct eo_etcd_members etcd; /* legacy-2, legacy-1, legacy-0, as etcd listed them */
	size_t n_etcd;		     /* as parsed (a case may shorten etcd.n) */
	bool status_ok[EO_MIGRATE_MAX_MEMBERS];
	size_t alarms[EO_MIGRATE_MAX_MEMBERS];
	struct eo_migrate_observed in;
};

static json_t *load(const char *file)
{
	char path[256];
	json_error_t e;
	json_t *o = NULL;

	snprintf(path, sizeof(path), DIR "%s", file);
	o = json_load_file(path, 0, &e);
	if (o == NULL)
		fail_msg("%s: %s", path, e.text);
	return o;
}

static void rec_init(struct rec *r)
{
	char *text = NULL;
	json_t *members = NULL;

	memset(r, 0, sizeof(*r));
	r->legacy = load("legacy.json");
	r->sts = load("statefulset.json");
	r->pods = load("pods.json");
	r->pvcs = load("pvcs.json");
	r->cm = load("cluster_state.json");
	r->dep = load("operator.json"); /* scaled to 0: the legacy operator is stopped */
	members = load("members.json");
	text = json_dumps(members, JSON_COMPACT);
	assert_non_null(text);
	assert_int_equal(eo_etcd_wire_parse_members(text, strlen(text), &r->etcd), EO_ETCD_OK);
	assert_int_equal(r->etcd.n, 3);
	r->n_etcd = r->etcd.n;
	free(text);
	json_decref(members);
	for (size_t i = 0; i < EO_MIGRATE_MAX_MEMBERS; i++)
		r->status_ok[i] = true;
	r->in = (struct eo_migrate_observed){
	    .ns = NS,
	    .name = "legacy",
	    .legacy = r->legacy,
	    .sts = r->sts,
	    .sts_live = true,
	    .pods = r->pods,
	    .pvcs = r->pvcs,
	    .operator_dep = r->dep,
	    .state_cm = r->cm,
	    .etcd = &r->etcd,
	    .status_ok = r->status_ok,
	    .n_alarms = r->alarms,
	};
}

static void rec_free(struct rec *r)
{
	json_decref(r->legacy);
	json_decref(r->sts);
	json_decref(r->pods);
	json_decref(r->pvcs);
	json_decref(r->cm);
	json_decref(r->dep);
	r->etcd.n = r->n_etcd;
	eo_etcd_members_clear(&r->etcd);
}

static json_t *pod(struct rec *r, size_t i)
{
	return json_array_get(r->pods, i);
}

/* ---- bad input: refused, with the reason ------------------------------------------------ */

static void operator_running(struct rec *r)
{
	json_object_set_new(json_object_get(r->dep, "spec"), "replicas", json_integer(1));
	json_object_set_new(json_object_get(r->dep, "status"), "readyReplicas", json_integer(1));
}
static void operator_scaled_up_not_ready(struct rec *r)
{
	json_object_set_new(json_object_get(r->dep, "spec"), "replicas", json_integer(1));
}
static void pod_not_ready(struct rec *r)
{
	json_t *c = NULL;
	size_t i;

	/* legacy-1 is the second Pod of the list */
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(pod(r, 1), "metadata"), "name")),
	    "legacy-1");
	json_array_foreach(json_object_get(json_object_get(pod(r, 1), "status"), "conditions"), i,
			   c)
	{
		if (strcmp(json_string_value(json_object_get(c, "type")), "Ready") == 0)
			json_object_set_new(c, "status", json_string("False"));
	}
}
static void pod_missing(struct rec *r)
{
	json_array_remove(r->pods, 2);
}
static void pod_terminating(struct rec *r)
{
	json_object_set_new(json_object_get(pod(r, 0), "metadata"), "deletionTimestamp",
			    json_string("2026-01-01T00:00:00Z"));
}
static void sts_not_ready(struct rec *r)
{
	json_object_set_new(json_object_get(r->sts, "status"), "readyReplicas", json_integer(2));
}
static void etcd_unreachable(struct rec *r)
{
	r->in.etcd = NULL;
	r->in.etcd_error = "member legacy-0: connection refused";
}
static void etcd_learner(struct rec *r)
{
	r->etcd.v[2].is_learner = true;
}
static void etcd_member_short(struct rec *r)
{
	r->etcd.n = 2;
}
static void etcd_unstarted(struct rec *r)
{
	r->etcd.v[1].name[0] = '\0';
}
static void etcd_foreign_member(struct rec *r)
{
	r->etcd.v[0].name[0] = 'x';
}
static void member_silent(struct rec *r)
{
	r->status_ok[2] = false;
}
static void member_alarm(struct rec *r)
{
	r->alarms[0] = 1;
}
static void legacy_tls(struct rec *r)
{
	json_object_set_new(
	    json_object_get(r->legacy, "spec"), "security",
	    json_pack("{s:{s:s, s:s}}", "tls", "peerSecret", "p", "peerTrustedCASecret", "ca"));
}
static void legacy_auth(struct rec *r)
{
	json_object_set_new(json_object_get(r->legacy, "spec"), "security",
			    json_pack("{s:b}", "enableAuth", 1));
}
static void legacy_emptydir(struct rec *r)
{
	json_object_set_new(json_object_get(r->legacy, "spec"), "storage",
			    json_pack("{s:{}}", "emptyDir"));
}
static void legacy_gone(struct rec *r)
{
	r->in.legacy = NULL;
}
static void image_digest(struct rec *r)
{
	json_t *c =
	    json_array_get(json_object_get(json_object_get(pod(r, 0), "spec"), "containers"), 0);
	json_object_set_new(c, "image", json_string("quay.io/coreos/etcd@sha256:0123"));
}
static void ours_unrelated(struct rec *r)
{
	r->in.ours = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "name", "legacy", "namespace", NS,
			       "uid", "u1");
}
static void pvc_missing(struct rec *r)
{
	json_array_remove(r->pvcs, 1);
}
static void client_tls_flag(struct rec *r)
{
	json_t *c =
	    json_array_get(json_object_get(json_object_get(pod(r, 0), "spec"), "containers"), 0);
	json_array_append_new(json_object_get(c, "args"),
			      json_string("--cert-file=/etc/etcd/pki/server/cert/tls.crt"));
}

struct refusal_case {
	const char *name;
	void (*mutate)(struct rec *r);
	const char *msg_has;
};

static const struct refusal_case refusals[] = {
    {"legacy operator ready", operator_running, "the legacy operator is still running"},
    {"legacy operator scaled up", operator_scaled_up_not_ready, "stop it first"},
    {"pod not ready", pod_not_ready, "is not healthy: Pod legacy-1 is not ready"},
    {"pod missing", pod_missing, "Pod legacy-2 is missing"},
    {"pod terminating", pod_terminating, "Pod legacy-0 is not ready"},
    {"statefulset not ready", sts_not_ready, "has 2 of 3 replicas ready"},
    {"etcd unreachable", etcd_unreachable,
     "no member answered the member list (member "
     "legacy-0: connection refused)"},
    {"learner", etcd_learner, "is a learner"},
    {"missing etcd member", etcd_member_short, "etcd lists 2 member(s) but the StatefulSet has 3"},
    {"foreign etcd member", etcd_foreign_member, "etcd member xegacy-2 has no Pod"},
    {"unstarted member", etcd_unstarted, "not started"},
    {"member silent", member_silent, "member legacy-2 did not answer its status"},
    {"alarm", member_alarm, "reports 1 alarm(s)"},
    {"tls", legacy_tls, "uses TLS certificates or etcd auth"},
    {"auth", legacy_auth, "uses TLS certificates or etcd auth"},
    {"client tls flag", client_tls_flag, "runs etcd with TLS certificates"},
    {"emptyDir", legacy_emptydir, "keeps its data in emptyDir volumes"},
    {"no legacy cluster", legacy_gone, "no EtcdCluster.etcd.aenix.io legacy in namespace " NS},
    {"image digest", image_digest, "give it with --etcd-version"},
    {"our cluster exists", ours_unrelated, "was not made by kubectl etcd migrate"},
    {"pvc missing", pvc_missing, "PVC data-legacy-1 of Pod legacy-1 is missing"},
};

static void test_refusals(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		struct rec r;
		struct eo_migrate_plan p;

		rec_init(&r);
		refusals[i].mutate(&r);
		assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
		if (p.state != EO_MIGRATE_REFUSED || strstr(p.message, refusals[i].msg_has) == NULL)
			fail_msg("%s: state %d, message \"%s\"", refusals[i].name, p.state,
				 p.message);
		assert_null(p.cluster);
		eo_migrate_plan_free(&p);
		json_decref((json_t *)r.in.ours);
		rec_free(&r);
	}
}

/* ---- a healthy cluster: what it becomes -------------------------------------------------- */

static json_t *as_created(const json_t *cluster)
{
	json_t *c = json_deep_copy(cluster);

	json_object_set_new(json_object_get(c, "metadata"), "uid", json_string("ours-uid"));
	return c;
}

static void test_plan_healthy(void **state)
{
	struct rec r;
	struct eo_migrate_plan p;
	const json_t *spec = NULL, *ann = NULL;
	json_t *st = NULL;

	(void)state;
	rec_init(&r);
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_ADOPTABLE);
	assert_non_null(strstr(p.message, "3 member(s), etcd 3.5.35, cluster ID 181f9d5a41b5643a"));
	assert_string_equal(p.version, "3.5.35");
	assert_string_equal(p.headless, "legacy-headless");
	assert_string_equal(p.subpath, "default.etcd");
	assert_true(p.peer_auto_tls);
	assert_string_equal(p.token, "legacy-migrate-manual");
	assert_string_equal(p.initial_cluster,
			    "legacy-2=https://legacy-2.legacy-headless." NS ".svc:2380,"
			    "legacy-1=https://legacy-1.legacy-headless." NS ".svc:2380,"
			    "legacy-0=https://legacy-0.legacy-headless." NS ".svc:2380");
	assert_int_equal(p.n, 3);
	assert_string_equal(p.m[0].name, "legacy-0");
	assert_string_equal(p.m[0].pvc, "data-legacy-0");
	assert_string_equal(p.m[0].pod_uid, "405fd2f6-c13f-43bd-a9c6-cb023ca0850c");
	assert_true(p.m[0].id == 0xeb8a50dab1483266ULL);
	assert_true(p.m[2].id == 0x258397a3e510f327ULL);

	spec = json_object_get(p.cluster, "spec");
	ann = json_object_get(json_object_get(p.cluster, "metadata"), "annotations");
	assert_string_equal(json_string_value(json_object_get(ann, EO_ANNOTATION_MIGRATING)),
			    "true");
	assert_string_equal(
	    json_string_value(json_object_get(ann, EO_ANNOTATION_HEADLESS_SERVICE_NAME)),
	    "legacy-headless");
	assert_string_equal(json_string_value(json_object_get(ann, EO_ANNOTATION_PEER_AUTO_TLS)),
			    "true");
	assert_int_equal(json_integer_value(json_object_get(spec, "replicas")), 3);
	assert_string_equal(json_string_value(json_object_get(spec, "version")), "3.5.35");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(spec, "storage"), "size")), "1Gi");
	assert_string_equal(json_string_value(json_object_get(json_object_get(spec, "storage"),
							      "storageClassName")),
			    "standard");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(spec, "options"),
							    "quotaBackendBytes")),
			 1020054732);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(spec, "options"), "snapshotCount")),
	    10000);
	assert_string_equal(json_string_value(json_object_get(json_object_get(spec, "options"),
							      "autoCompactionRetention")),
			    "5m");
	assert_null(json_object_get(spec, "resources"));
	{
		/* the operator accepts it as it is */
		char msg[256];
		json_t *c = as_created(p.cluster);

		assert_int_equal(eo_cluster_validate(c, NULL, msg, sizeof(msg)), 0);
		assert_true(eo_cluster_migrating(c));
		assert_int_equal(eo_cluster_headless_service(c, msg, sizeof(msg)), 0);
		assert_string_equal(msg, "legacy-headless");
		json_decref(c);
	}
	assert_true(json_array_size(p.changes) >= 5);
	st = eo_migrate_cluster_status(&p);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(st, "status"), "clusterID")),
	    "181f9d5a41b5643a");
	json_decref(st);
	st = eo_migrate_member_status(&p, 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(st, "status"), "memberID")),
	    "eb8a50dab1483266");
	assert_true(json_is_true(json_object_get(json_object_get(st, "status"), "isVoter")));
	json_decref(st);
	assert_null(eo_migrate_member_status(&p, 3));
	eo_migrate_plan_free(&p);
	rec_free(&r);
}

/* An unknown flag is carried by the adopted Pods only, and said so. */
static void test_dropped_flag(void **state)
{
	struct rec r;
	struct eo_migrate_plan p;
	json_t *c = NULL, *v = NULL;
	size_t i;
	bool said = false;

	(void)state;
	rec_init(&r);
	c = json_array_get(json_object_get(json_object_get(pod(&r, 0), "spec"), "containers"), 0);
	json_array_append_new(json_object_get(c, "args"),
			      json_string("--max-request-bytes=2097152"));
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_ADOPTABLE);
	json_array_foreach(p.changes, i, v) said |=
	    strstr(json_string_value(v), "--max-request-bytes=2097152 is not carried over") != NULL;
	assert_true(said);
	eo_migrate_plan_free(&p);
	rec_free(&r);
}

/* Resumed: the StatefulSet is gone (its saved copy is read), our cluster is still held. */
static void test_resume_and_done(void **state)
{
	struct rec r;
	struct eo_migrate_plan p;
	json_t *ours = NULL;

	(void)state;
	rec_init(&r);
	r.in.sts_live = false;
	json_object_set_new(json_object_get(r.sts, "status"), "readyReplicas", json_integer(0));
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_ADOPTABLE);
	ours = as_created(p.cluster);
	eo_migrate_plan_free(&p);

	r.in.ours = ours;
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_ADOPTABLE);
	eo_migrate_plan_free(&p);

	/* released: done, whatever the legacy side says now */
	json_object_del(json_object_get(json_object_get(ours, "metadata"), "annotations"),
			EO_ANNOTATION_MIGRATING);
	r.in.legacy = NULL;
	r.in.etcd = NULL;
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_DONE);
	assert_non_null(strstr(p.message, "was migrated already"));
	eo_migrate_plan_free(&p);
	json_decref(ours);
	rec_free(&r);
}

static void test_version_override(void **state)
{
	struct rec r;
	struct eo_migrate_plan p;

	(void)state;
	rec_init(&r);
	image_digest(&r);
	r.in.version = "3.5.12";
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_ADOPTABLE);
	assert_string_equal(p.version, "3.5.12");
	eo_migrate_plan_free(&p);
	r.in.version = "3.5";
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	assert_int_equal(p.state, EO_MIGRATE_REFUSED);
	assert_non_null(strstr(p.message, "--etcd-version 3.5 is not a version"));
	eo_migrate_plan_free(&p);
	rec_free(&r);
}

/* The adopted EtcdMember, and the Pod this operator builds for it when it rolls it. */
static void test_member_and_its_pod(void **state)
{
	struct rec r;
	struct eo_migrate_plan p;
	json_t *ours = NULL, *m = NULL, *podj = NULL, *patch = NULL;
	const json_t *ann = NULL, *spec = NULL, *ctr = NULL, *mount = NULL, *vol = NULL;
	struct eo_desired_opts o = {0};
	char *cmd = NULL;

	(void)state;
	rec_init(&r);
	assert_int_equal(eo_migrate_plan(&r.in, &p), 0);
	ours = as_created(p.cluster);
	m = eo_migrate_member_object(ours, &p, 1);
	assert_non_null(m);
	assert_string_equal(eo_member_name(m), "legacy-1");
	ann = json_object_get(json_object_get(m, "metadata"), "annotations");
	assert_string_equal(json_string_value(json_object_get(ann, EO_ANNOTATION_ADOPTED_POD_UID)),
			    "f12841d4-b34d-4543-b2b6-29f6a375ebfb");
	assert_string_equal(json_string_value(json_object_get(ann, EO_ANNOTATION_DATA_DIR_SUBPATH)),
			    "default.etcd");
	assert_null(json_object_get(ann, EO_ANNOTATION_MIGRATING));
	spec = json_object_get(m, "spec");
	assert_false(json_is_true(json_object_get(spec, "bootstrap")));
	assert_string_equal(json_string_value(json_object_get(spec, "initialCluster")),
			    p.initial_cluster);
	assert_string_equal(json_string_value(json_object_get(spec, "clusterToken")), "");
	assert_true(json_is_true(json_object_get(json_object_get(spec, "tls"), "peerAutoTLS")));
	assert_true(eo_desired_is_controlled_by(m, "ours-uid"));

	/* as the apiserver returns it */
	json_object_set_new(json_object_get(m, "metadata"), "uid", json_string("member-uid-1"));
	assert_string_equal(eo_member_service(m), "legacy-headless");
	assert_string_equal(eo_member_adopted_pod_uid(m), "f12841d4-b34d-4543-b2b6-29f6a375ebfb");
	podj = eo_desired_member_pod(m, &o, true);
	assert_non_null(podj);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(podj, "spec"), "subdomain")),
	    "legacy-headless");
	ctr = json_array_get(json_object_get(json_object_get(podj, "spec"), "containers"), 0);
	mount = json_array_get(json_object_get(ctr, "volumeMounts"), 0);
	assert_string_equal(json_string_value(json_object_get(mount, "subPath")), "default.etcd");
	vol = json_array_get(json_object_get(json_object_get(podj, "spec"), "volumes"), 0);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(vol, "persistentVolumeClaim"), "claimName")),
			    "data-legacy-1");
	cmd = json_dumps(json_object_get(ctr, "command"), JSON_COMPACT);
	assert_non_null(strstr(cmd, "--initial-advertise-peer-urls=https://"
				    "legacy-1.legacy-headless." NS ".svc.cluster.local:2380"));
	assert_non_null(strstr(cmd, "--advertise-client-urls=http://"
				    "legacy-1.legacy-headless." NS ".svc.cluster.local:2379"));
	assert_non_null(strstr(cmd, "--peer-auto-tls=true"));
	assert_non_null(strstr(cmd, "--listen-peer-urls=https://"));
	assert_non_null(strstr(cmd, "--initial-cluster-state=existing"));
	free(cmd);

	/* a roll to another target also ends the adoption of the legacy Pod */
	{
		json_t *obs = json_pack("{s:s}", "version", "3.5.36");
		json_t *rp = eo_desired_member_roll_patch(m, obs);

		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(rp, "spec"), "version")),
		    "3.5.36");
		assert_true(json_is_null(
		    json_object_get(json_object_get(json_object_get(rp, "metadata"), "annotations"),
				    EO_ANNOTATION_ADOPTED_POD_UID)));
		json_decref(rp);
		json_decref(obs);
	}
	/* the Pod and PVC patches: our labels, the member as controller */
	patch = eo_migrate_adopt_patch(m);
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(patch, "metadata"), "labels"), EO_LABEL_CLUSTER)),
	    "legacy");
	assert_string_equal(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(patch, "metadata"), "labels"), EO_LABEL_COMPONENT)),
	    "legacy-1");
	assert_null(json_object_get(json_object_get(json_object_get(patch, "metadata"), "labels"),
				    EO_LABEL_ROLE));
	assert_true(eo_desired_is_controlled_by(patch, "member-uid-1"));
	assert_int_equal(
	    json_array_size(json_object_get(json_object_get(patch, "metadata"), "ownerReferences")),
	    1);
	json_decref(patch);
	patch = eo_migrate_owner_patch(ours, false);
	assert_true(eo_migrate_owned_by(patch, "ours-uid"));
	assert_false(eo_desired_is_controlled_by(patch, "ours-uid"));
	json_decref(patch);
	patch = eo_migrate_owner_patch(ours, true);
	assert_true(eo_desired_is_controlled_by(patch, "ours-uid"));
	json_decref(patch);

	/* a member this operator adds later to the adopted cluster: same Service, peer TLS */
	/* with the operator image known: the adopt-data init container on the same sub-path */
	{
		struct eo_desired_opts oi = {.operator_image = "op:1"};
		json_t *p2 = eo_desired_member_pod(m, &oi, true);
		const json_t *init = json_array_get(
		    json_object_get(json_object_get(p2, "spec"), "initContainers"), 0);
		char *a = json_dumps(json_object_get(init, "args"), JSON_COMPACT);

		assert_string_equal(json_string_value(json_object_get(init, "name")),
				    EO_DESIRED_ADOPT_CONTAINER);
		assert_string_equal(a, "[\"adopt-data\",\"--data-dir\",\"/var/lib/etcd\",\"--uid\","
				       "\"65532\",\"--gid\",\"65532\"]");
		assert_string_equal(
		    json_string_value(json_object_get(
			json_array_get(json_object_get(init, "volumeMounts"), 0), "subPath")),
		    "default.etcd");
		assert_int_equal(json_integer_value(json_object_get(
				     json_object_get(init, "securityContext"), "runAsUser")),
				 0);
		free(a);
		json_decref(p2);
	}
	assert_null(json_object_get(json_object_get(podj, "spec"), "initContainers"));
	json_decref(m);
	m = eo_desired_joining_member(ours, "legacy-abcde");
	ann = json_object_get(json_object_get(m, "metadata"), "annotations");
	assert_string_equal(
	    json_string_value(json_object_get(ann, EO_ANNOTATION_HEADLESS_SERVICE_NAME)),
	    "legacy-headless");
	assert_null(json_object_get(ann, EO_ANNOTATION_DATA_DIR_SUBPATH));
	assert_null(json_object_get(ann, EO_ANNOTATION_ADOPTED_POD_UID));
	assert_true(json_is_true(
	    json_object_get(json_object_get(json_object_get(m, "spec"), "tls"), "peerAutoTLS")));
	{
		json_t *h = eo_desired_headless_service(ours);

		assert_string_equal(
		    json_string_value(json_object_get(json_object_get(h, "metadata"), "name")),
		    "legacy-headless");
		json_decref(h);
	}
	json_decref(m);
	json_decref(podj);
	json_decref(ours);
	eo_migrate_plan_free(&p);
	rec_free(&r);
}

static void test_finalizers(void **state)
{
	json_t *o = json_pack("{s:{s:[s, s, s]}}", "metadata", "finalizers", "orphan",
			      "etcd.aenix.io/cleanup", "foregroundDeletion");
	json_t *p = eo_migrate_finalizers_patch(o);
	char *t = json_dumps(p, JSON_COMPACT);

	(void)state;
	assert_string_equal(t,
			    "{\"metadata\":{\"finalizers\":[\"orphan\",\"foregroundDeletion\"]}}");
	free(t);
	json_decref(p);
	json_decref(o);
	o = json_pack("{s:{s:[s]}}", "metadata", "finalizers", "orphan");
	assert_null(eo_migrate_finalizers_patch(o)); /* the collector's own: left alone */
	json_decref(o);
	o = json_pack("{s:{}}", "metadata");
	assert_null(eo_migrate_finalizers_patch(o));
	json_decref(o);
}

/*
 * migrate's command line, through eo_plugin_migrate_main: a line it accepts goes on to load
 * the kubeconfig, which /nonexistent fails (exit 1, "kubeconfig:"); a refused one exits 2.
 */
static const struct {
	const char *argv[10];
	int rc;
	const char *err_has; /* on stderr; NULL: --help, the help on stdout */
} migrate_args_cases[] = {
    {{"inspect", "legacy", "--kubeconfig", "/nonexistent"}, EO_PEXIT_FAILED, "kubeconfig:"},
    {{"--help"}, EO_PEXIT_OK, NULL},
    {{"inspect"}, EO_PEXIT_USAGE, "needs the legacy cluster's name"},
    {{"inspect", "a", "b"}, EO_PEXIT_USAGE, "unexpected argument \"b\""},
    {{"inspect", "a", "--frob"}, EO_PEXIT_USAGE, "unknown flag --frob"},
    {{"inspect", "a", "-n"}, EO_PEXIT_USAGE, "flag -n needs a value"},
    {{"inspect", "a", "-o", "xml"}, EO_PEXIT_USAGE, "-o xml: migrate prints table or json"},
    {{"inspect", "a", "-o=xml"}, EO_PEXIT_USAGE, "-o xml: migrate prints table or json"},
    {{"inspect", "a", "-oxml"}, EO_PEXIT_USAGE, "-o xml: migrate prints table or json"},
    {{"apply", "a"}, EO_PEXIT_USAGE, "takes a safety snapshot first"},
    {{"--timeout", "0", "inspect", "a"}, EO_PEXIT_USAGE, "--timeout 0: seconds"},
    {{"--", "inspect", "a", "--kubeconfig"}, EO_PEXIT_USAGE, "unexpected argument"},
    {{"apply", "a", "--no-snapshot", "--snapshot-pvc", "c"}, EO_PEXIT_USAGE, "give one of"},
    /* getopt_long with pflag's rules: letters combine, no abbreviations, no value to a
     * boolean */
    {{"-hn", "ns1", "inspect"}, EO_PEXIT_OK, NULL},
    {{"inspect", "a", "-hx"}, EO_PEXIT_USAGE, "unknown flag -x in -hx"},
    {{"inspect", "a", "--names", "x"}, EO_PEXIT_USAGE, "unknown flag --names"},
    {{"inspect", "a", "--help=x"}, EO_PEXIT_USAGE, "flag --help takes no value"},
    {{"apply", "a", "--no-snapshot=1"}, EO_PEXIT_USAGE, "flag --no-snapshot takes no value"},
    {{"apply", "a", "-n=ns1", "--no-snapshot", "--kubeconfig=/nonexistent"},
     EO_PEXIT_FAILED,
     "kubeconfig:"},
    /* the consent to remove the legacy webhooks (docs/migration.md) */
    {{"apply", "a", "--no-snapshot", "--remove-legacy-webhooks", "--kubeconfig", "/nonexistent"},
     EO_PEXIT_FAILED,
     "kubeconfig:"},
    {{"apply", "a", "--no-snapshot", "--remove-legacy-webhooks=yes"},
     EO_PEXIT_USAGE,
     "flag --remove-legacy-webhooks takes no value"},
};

static void test_migrate_args(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(migrate_args_cases) / sizeof(migrate_args_cases[0]); i++) {
		char *argv[12] = {"migrate"}, *out = NULL, *errs = NULL;
		size_t nout = 0, nerr = 0;
		FILE *fo = open_memstream(&out, &nout), *fe = open_memstream(&errs, &nerr);
		int argc = 1, rc;

		assert_non_null(fo);
		assert_non_null(fe);
		while (migrate_args_cases[i].argv[argc - 1]) {
			argv[argc] = (char *)migrate_args_cases[i].argv[argc - 1];
			argc++;
		}
		rc = eo_plugin_migrate_main(argc, argv, fo, fe);
		fclose(fo);
		fclose(fe);
		if (rc != migrate_args_cases[i].rc)
			fail_msg("case %zu: rc %d, want %d (%s)", i, rc, migrate_args_cases[i].rc,
				 errs);
		if (migrate_args_cases[i].err_has == NULL)
			assert_non_null(strstr(out, "Adopt a cluster of the legacy operator"));
		else if (!strstr(errs, migrate_args_cases[i].err_has))
			fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, errs,
				 migrate_args_cases[i].err_has);
		free(out);
		free(errs);
	}
}

/* ---- the legacy release's admission webhooks -------------------------------------------- */

/* A webhook configuration: one webhook per (name, group, resource, service ns/name|URL, policy). */
static json_t *hook(const char *name, const char *group, const char *res, const char *svc_ns,
		    const char *svc, const char *policy)
{
	json_t *h = json_pack("{s:s, s:[{s:[s], s:[s], s:[s], s:[s, s]}], s:[s], s:s}", "name",
			      name, "rules", "apiGroups", group, "apiVersions", "v1alpha1",
			      "resources", res, "operations", "CREATE", "UPDATE",
			      "admissionReviewVersions", "v1", "sideEffects", "None");

	if (svc_ns != NULL)
		json_object_set_new(h, "clientConfig",
				    json_pack("{s:{s:s, s:s, s:s}}", "service", "namespace", svc_ns,
					      "name", svc, "path", "/mutate"));
	else
		json_object_set_new(h, "clientConfig", json_pack("{s:s}", "url", svc));
	if (policy != NULL)
		json_object_set_new(h, "failurePolicy", json_string(policy));
	return h;
}

static json_t *config(const char *name, json_t *hooks)
{
	return json_pack("{s:{s:s, s:s, s:s, s:{s:s}, s:[{s:s}]}, s:o}", "metadata", "name", name,
			 "uid", "u-1", "resourceVersion", "42", "annotations",
			 "cert-manager.io/inject-ca-from", "etcd-operator-system/serving-cert",
			 "managedFields", "manager", "kubectl", "webhooks", hooks);
}

#define LNS  "etcd-operator-system"
#define LSVC "etcd-operator-webhook-service"

static json_t *legacy_dep(void)
{
	return json_pack("{s:{s:s, s:s}, s:{s:{s:{s:{s:s}}}}}", "metadata", "name",
			 "etcd-operator-controller-manager", "namespace", LNS, "spec", "template",
			 "metadata", "labels", "control-plane", "controller-manager");
}

static json_t *service(const char *name, const char *key, const char *value)
{
	json_t *s = json_pack("{s:{s:s, s:s}, s:{s:{}}}", "metadata", "name", name, "namespace",
			      LNS, "spec", "selector");

	if (key != NULL)
		json_object_set_new(json_object_get(json_object_get(s, "spec"), "selector"), key,
				    json_string(value));
	return s;
}

struct wh_row {
	const char *what;
	json_t *mutating, *validating; /* arrays of configurations */
	bool with_dep;
	size_t n, n_legacy;
	bool fail0; /* the first configuration's failurePolicy is Fail */
	enum eo_migrate_webhook_action without, with;
};

static void test_webhooks(void **state)
{
	json_t *svcs =
	    json_pack("[o, o, o]", service(LSVC, "control-plane", "controller-manager"),
		      service("other", "app", "something-else"), service("bare", NULL, NULL));
	struct wh_row rows[] = {
	    {"the legacy release: a mutating and a validating webhook, Fail, on its Service",
	     json_pack("[o]", config("etcd-operator-mutating-webhook-configuration",
				     json_pack("[o]", hook("metcdcluster.kb.io", "etcd.aenix.io",
							   "etcdclusters", LNS, LSVC, "Fail")))),
	     json_pack("[o]", config("etcd-operator-validating-webhook-configuration",
				     json_pack("[o]", hook("vetcdcluster.kb.io", "etcd.aenix.io",
							   "etcdclusters", LNS, LSVC, NULL)))),
	     true, 2, 2, true, EO_MIGRATE_WEBHOOKS_REFUSE, EO_MIGRATE_WEBHOOKS_REMOVE},
	    {"another group's webhook is not looked at",
	     json_pack("[o]",
		       config("cert-manager-webhook",
			      json_pack("[o]", hook("webhook.cert-manager.io", "cert-manager.io",
						    "*", "cert-manager", "cm", "Fail")))),
	     json_array(), true, 0, 0, false, EO_MIGRATE_WEBHOOKS_NONE, EO_MIGRATE_WEBHOOKS_NONE},
	    {"a wildcard webhook of someone else covers the group but is not removed",
	     json_pack("[o]",
		       config("policy-engine", json_pack("[o]", hook("all.policy.io", "*", "*/*",
								     LNS, "other", "Ignore")))),
	     json_array(), true, 1, 0, false, EO_MIGRATE_WEBHOOKS_NONE, EO_MIGRATE_WEBHOOKS_NONE},
	    {"without the legacy Deployment nothing is the legacy operator's",
	     json_pack("[o]", config("etcd-operator-mutating-webhook-configuration",
				     json_pack("[o]", hook("metcdcluster.kb.io", "etcd.aenix.io",
							   "etcdclusters", LNS, LSVC, "Fail")))),
	     json_array(), false, 1, 0, true, EO_MIGRATE_WEBHOOKS_NONE, EO_MIGRATE_WEBHOOKS_NONE},
	    {"a Service of another namespace, one without a selector, a URL: not the legacy one",
	     json_pack(
		 "[o, o, o]",
		 config("other-ns",
			json_pack("[o]", hook("a.kb.io", "etcd.aenix.io", "etcdclusters",
					      "elsewhere", LSVC, "Fail"))),
		 config("bare", json_pack("[o]", hook("b.kb.io", "etcd.aenix.io", "etcdclusters",
						      LNS, "bare", "Fail"))),
		 config("url", json_pack("[o]", hook("c.kb.io", "etcd.aenix.io", "etcdclusters",
						     NULL, "https://x.example/h", "Fail")))),
	     json_array(), true, 3, 0, true, EO_MIGRATE_WEBHOOKS_NONE, EO_MIGRATE_WEBHOOKS_NONE},
	    {"a configuration whose covering webhooks are not all the legacy operator's is kept",
	     json_pack("[o]",
		       config("mixed", json_pack("[o, o]",
						 hook("m.kb.io", "etcd.aenix.io", "etcdclusters",
						      LNS, LSVC, "Fail"),
						 hook("n.kb.io", "etcd.aenix.io", "etcdclusters/*",
						      LNS, "other", "Fail")))),
	     json_array(), true, 1, 0, true, EO_MIGRATE_WEBHOOKS_NONE, EO_MIGRATE_WEBHOOKS_NONE},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct wh_row *r = &rows[i];
		json_t *dep = r->with_dep ? legacy_dep() : NULL;
		struct eo_migrate_webhooks w;
		char msg[EO_MIGRATE_MSG_MAX];

		print_message("webhooks: %s\n", r->what);
		eo_migrate_find_webhooks(r->mutating, r->validating, dep, svcs, &w);
		assert_int_equal(w.n, r->n);
		assert_int_equal(w.n_legacy, r->n_legacy);
		if (r->n > 0)
			assert_int_equal(w.w[0].fail, r->fail0);
		assert_int_equal(
		    eo_migrate_webhooks_decide(&w, false, NS, "legacy", msg, sizeof(msg)),
		    r->without);
		if (r->without == EO_MIGRATE_WEBHOOKS_NONE)
			assert_string_equal(msg, "");
		assert_int_equal(
		    eo_migrate_webhooks_decide(&w, true, NS, "legacy", msg, sizeof(msg)), r->with);
		json_decref(dep);
		json_decref(r->mutating);
		json_decref(r->validating);
	}
	json_decref(svcs);
}

/* The real layout in detail: what is said, under which key it is saved, what is saved. */
static void test_webhooks_legacy_release(void **state)
{
	json_t *m =
	    json_pack("[o]", config("etcd-operator-mutating-webhook-configuration",
				    json_pack("[o]", hook("metcdcluster.kb.io", "etcd.aenix.io",
							  "etcdclusters", LNS, LSVC, "Fail"))));
	json_t *v =
	    json_pack("[o]", config("etcd-operator-validating-webhook-configuration",
				    json_pack("[o]", hook("vetcdcluster.kb.io", "etcd.aenix.io",
							  "etcdclusters", LNS, LSVC, "Ignore"))));
	json_t *svcs = json_pack("[o]", service(LSVC, "control-plane", "controller-manager"));
	json_t *dep = legacy_dep(), *saved = NULL;
	struct eo_migrate_webhooks w;
	char msg[EO_MIGRATE_MSG_MAX], key[512];

	(void)state;
	eo_migrate_find_webhooks(m, v, dep, svcs, &w);
	assert_int_equal(w.n, 2);
	assert_true(w.w[0].mutating && w.w[0].legacy && w.w[0].fail);
	assert_true(!w.w[1].mutating && w.w[1].legacy && !w.w[1].fail);
	assert_string_equal(w.w[0].hooks, "metcdcluster.kb.io");
	assert_string_equal(w.w[0].service, LNS "/" LSVC);

	assert_int_equal(eo_migrate_webhooks_decide(&w, false, NS, "legacy", msg, sizeof(msg)),
			 EO_MIGRATE_WEBHOOKS_REFUSE);
	assert_non_null(strstr(msg, "MutatingWebhookConfiguration "
				    "etcd-operator-mutating-webhook-configuration (webhook "
				    "metcdcluster.kb.io; Service " LNS "/" LSVC
				    "; failurePolicy Fail)"));
	assert_non_null(strstr(msg, "ValidatingWebhookConfiguration "
				    "etcd-operator-validating-webhook-configuration"));
	assert_non_null(strstr(msg, "--remove-legacy-webhooks"));
	assert_non_null(strstr(msg, "legacy-etcd-migration"));
	assert_int_equal(eo_migrate_webhooks_decide(&w, true, NS, "legacy", msg, sizeof(msg)),
			 EO_MIGRATE_WEBHOOKS_REMOVE);
	assert_non_null(strstr(msg, NS "/legacy-etcd-migration"));

	eo_migrate_webhook_key(&w.w[0], key, sizeof(key));
	assert_string_equal(key, "mutatingwebhookconfigurations."
				 "etcd-operator-mutating-webhook-configuration.json");
	eo_migrate_webhook_key(&w.w[1], key, sizeof(key));
	assert_string_equal(key, "validatingwebhookconfigurations."
				 "etcd-operator-validating-webhook-configuration.json");
	saved = eo_migrate_webhook_saved(&w.w[0]);
	assert_string_equal(json_string_value(json_object_get(saved, "kind")),
			    "MutatingWebhookConfiguration");
	assert_string_equal(json_string_value(json_object_get(saved, "apiVersion")),
			    "admissionregistration.k8s.io/v1");
	assert_null(json_object_get(json_object_get(saved, "metadata"), "uid"));
	assert_null(json_object_get(json_object_get(saved, "metadata"), "resourceVersion"));
	assert_null(json_object_get(json_object_get(saved, "metadata"), "managedFields"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(saved, "metadata"), "name")),
	    "etcd-operator-mutating-webhook-configuration");
	assert_non_null(
	    json_object_get(json_object_get(json_object_get(saved, "metadata"), "annotations"),
			    "cert-manager.io/inject-ca-from"));
	assert_true(json_equal(json_object_get(saved, "webhooks"),
			       json_object_get(json_array_get(m, 0), "webhooks")));
	/* the object read is not changed */
	assert_non_null(json_object_get(json_object_get(json_array_get(m, 0), "metadata"), "uid"));
	json_decref(saved);
	json_decref(m);
	json_decref(v);
	json_decref(svcs);
	json_decref(dep);
}

TU_MAIN(test_refusals, test_plan_healthy, test_dropped_flag, test_resume_and_done,
	test_version_override, test_member_and_its_pod, test_finalizers, test_migrate_args,
	test_webhooks, test_webhooks_legacy_release)
