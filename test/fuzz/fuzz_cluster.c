/*
 * Fuzz target: the EtcdCluster accessors, defaults and validation (src/api/cluster.c,
 * validate.c) on arbitrary JSON, and the objects the operator derives from a valid cluster
 * (src/desired).
 *
 * Input: JSON. An object is a cluster being created; an array [new, old] is an update of old
 * to new (the update-only rules: immutability, no shrinking).
 *
 * Invariants: validation reads defaults, so an object and its defaulted copy validate the same
 * with the same message; validating twice gives the same answer; defaulting is idempotent; a
 * valid cluster (with the name, namespace and uid the apiserver sets) yields its Services, observed
 * snapshot, seed and joining members and PDB, and its seed member (once named) is a valid
 * EtcdMember with a Pod and (unless in memory) a PVC.
 */
#include <jansson.h>

#include "api/cluster.h"
#include "api/names.h"
#include "api/member.h"
#include "desired/desired.h"

#include "fuzz.h"

#define MSG 512

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

static void read_everything(const json_t *c)
{
	struct eo_storage st;
	struct eo_cluster_tls tls;
	struct eo_etcd_options opts;
	struct eo_snapshot_location loc;
	char buf[256];
	time_t dl;
	json_t *res;

	(void)eo_cluster_name(c);
	(void)eo_cluster_namespace(c);
	(void)eo_cluster_uid(c);
	(void)eo_cluster_generation(c);
	(void)eo_cluster_is_deleting(c);
	(void)eo_cluster_replicas(c);
	(void)eo_cluster_version(c);
	if (eo_cluster_etcd_image(c, NULL, buf, sizeof(buf)) == 0)
		FUZZ_CHECK(strlen(buf) < sizeof(buf), "image");
	(void)eo_cluster_progress_deadline_seconds(c);
	eo_cluster_storage(c, &st);
	FUZZ_CHECK(memchr(st.size, '\0', sizeof(st.size)) != NULL, "size not terminated");
	eo_cluster_tls(c, &tls);
	(void)eo_cluster_server_secret_name(c, buf, sizeof(buf));
	(void)eo_cluster_operator_client_secret_name(c, buf, sizeof(buf));
	(void)eo_cluster_peer_secret_name(c, buf, sizeof(buf));
	(void)eo_cluster_uses_cert_manager(c);
	(void)eo_cluster_auth_enabled(c);
	(void)eo_cluster_auth_secret(c);
	(void)eo_cluster_restore_source(c, &loc);
	res = eo_cluster_resources(c);
	FUZZ_CHECK(res != NULL, "resources");
	json_decref(res);
	(void)eo_cluster_affinity(c);
	(void)eo_cluster_topology_spread_constraints(c);
	(void)eo_cluster_image_pull_secrets(c);
	(void)eo_cluster_extra_labels(c);
	(void)eo_cluster_extra_annotations(c);
	eo_cluster_options(c, &opts);
	(void)eo_cluster_ready_members(c);
	(void)eo_cluster_cluster_id(c);
	(void)eo_cluster_cluster_token(c);
	(void)eo_cluster_auth_latched(c);
	(void)eo_cluster_observed(c);
	(void)eo_cluster_progress_deadline(c, &dl);
}

/*
 * What the apiserver always sets on an object it serves and the CRD rules do not check: kind,
 * apiVersion, and a name, namespace and uid. Missing ones are filled in; false when metadata is
 * not an object.
 */
static bool as_served(json_t *c)
{
	static const char *const keys[] = {"name", "namespace", "uid"};
	static const char *const vals[] = {"demo", "default", "c-uid"};
	json_t *md = json_object_get(c, "metadata");

	if (md == NULL) {
		md = json_object();
		json_object_set_new(c, "metadata", md);
	}
	if (!json_is_object(md))
		return false;
	json_object_set_new(c, "apiVersion", json_string(EO_API_GROUP_VERSION));
	json_object_set_new(c, "kind", json_string("EtcdCluster"));
	for (size_t i = 0; i < 3; i++)
		if (!json_is_string(json_object_get(md, keys[i])) ||
		    json_string_length(json_object_get(md, keys[i])) == 0)
			json_object_set_new(md, keys[i], json_string(vals[i]));
	return true;
}

/* Objects derived from a valid cluster. */
static void derive(json_t *c)
{
	json_t *o;
	json_t *seed;
	char msg[MSG];
	struct eo_storage st;

	o = eo_desired_headless_service(c);
	FUZZ_CHECK(o != NULL, "headless Service of a valid cluster");
	json_decref(o);
	o = eo_desired_client_service(c);
	FUZZ_CHECK(o != NULL, "client Service of a valid cluster");
	json_decref(o);
	o = eo_desired_observed(c);
	FUZZ_CHECK(o != NULL, "observed of a valid cluster");
	/*
	 * Members are built from status.observed, which only the operator writes (a snapshot of
	 * a spec that was valid): put that snapshot there, as the planner latches it.
	 */
	if (json_is_object(json_object_get(c, "status")))
		json_object_set(json_object_get(c, "status"), "observed", o);
	json_decref(o);
	o = eo_desired_pdb(c, eo_desired_pdb_min_available(eo_cluster_replicas(c), 3));
	FUZZ_CHECK(o != NULL, "PDB of a valid cluster");
	json_decref(o);
	o = eo_desired_joining_member(c, NULL);
	FUZZ_CHECK(o != NULL, "joining member of a valid cluster");
	json_decref(o);

	seed = eo_desired_seed_member(c, NULL);
	FUZZ_CHECK(seed != NULL, "seed member of a valid cluster");
	/* What the apiserver does with generateName, and a uid. */
	snprintf(msg, sizeof(msg), "%s-fz0001", eo_cluster_name(c));
	json_object_set_new(json_object_get(seed, "metadata"), "name", json_string(msg));
	json_object_set_new(json_object_get(seed, "metadata"), "uid", json_string("fz-uid"));
	FUZZ_CHECK(eo_member_apply_defaults(seed) == 0, "defaults of the seed member");
	FUZZ_CHECK(eo_member_validate(seed, NULL, msg, sizeof(msg)) == 0,
		   "the seed member of a valid cluster is invalid: %s", msg);
	o = eo_desired_member_pod(seed, &OPTS, false);
	FUZZ_CHECK(o != NULL, "Pod of the seed member");
	json_decref(o);
	eo_member_storage(seed, &st);
	if (!st.memory) {
		o = eo_desired_member_pvc(seed);
		FUZZ_CHECK(o != NULL, "PVC of the seed member");
		json_decref(o);
	}
	json_decref(seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *root = json_loadb((const char *)data, size, 0, &jerr);
	const json_t *cluster = root, *old = NULL;
	json_t *copy = NULL, *copy2 = NULL;
	char m1[MSG], m2[MSG];
	int r1, r2, d1, d2;

	if (root == NULL)
		return 0;
	if (json_is_array(root)) {
		cluster = json_array_get(root, 0);
		old = json_array_get(root, 1);
	}
	if (cluster == NULL)
		goto out;
	read_everything(cluster);
	r1 = eo_cluster_validate(cluster, old, m1, sizeof(m1));
	FUZZ_CHECK(r1 == 0 || r1 == -1, "validate = %d", r1);
	FUZZ_CHECK(memchr(m1, '\0', sizeof(m1)) != NULL, "message not terminated");
	r2 = eo_cluster_validate(cluster, old, m2, sizeof(m2));
	FUZZ_CHECK(r1 == r2 && strcmp(m1, m2) == 0, "validation not repeatable");

	copy = json_deep_copy(cluster);
	if (copy == NULL)
		goto out;
	d1 = eo_cluster_apply_defaults(copy);
	if (d1 == 0) {
		read_everything(copy);
		r2 = eo_cluster_validate(copy, old, m2, sizeof(m2));
		FUZZ_CHECK(r1 == r2 && strcmp(m1, m2) == 0,
			   "defaulting changed the verdict: %d '%s' -> %d '%s'", r1, m1, r2, m2);
		copy2 = json_deep_copy(copy);
		d2 = copy2 != NULL ? eo_cluster_apply_defaults(copy2) : -1;
		FUZZ_CHECK(d2 == 0 && json_equal(copy, copy2), "defaulting is not idempotent");
		if (r1 == 0 && as_served(copy))
			derive(copy);
	}
out:
	json_decref(copy);
	json_decref(copy2);
	json_decref(root);
	return 0;
}
