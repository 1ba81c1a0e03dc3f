/*
 * desired/restore.c - init containers of a restoring seed. See restore.h.
 */
#include "desired/restore.h"

#include <stdio.h>
#include <string.h>

#include "api/member.h"
#include "api/names.h"
#include "api/snapshot.h"
#include "core/json.h"
#include "core/util.h"

#define AGENT_VOLUME  "agent"
#define CRED_VOLUME   "s3-credentials"
#define SOURCE_VOLUME "restore-source"
#define DATA_VOLUME   "data"
#define LOADER	      EO_RESTORE_AGENT_DIR "/lib/ld-linux-x86-64.so.2"
#define PATH_CAP      1024

static void add(json_t *arr, json_t *value, bool *ok)
{
	if (value == NULL || json_array_append_new(arr, value) != 0)
		*ok = false;
}

static void arg2(json_t *args, const char *flag, const char *value, bool *ok)
{
	add(args, json_string(flag), ok);
	add(args, json_string(value), ok);
}

bool eo_desired_member_restores(const json_t *member)
{
	struct eo_snapshot_location loc;

	return eo_member_bootstrap(member) && eo_member_restore_source(member, &loc) &&
	       (loc.kind == EO_LOCATION_S3 || loc.kind == EO_LOCATION_PVC ||
		loc.kind == EO_LOCATION_ARCHIVE);
}

/* As the etcd container's: both steps write only the data volume and the agent emptyDir. */
static json_t *security_context(void)
{
	return json_pack("{s:b, s:b, s:b, s:{s:[s]}}", "runAsNonRoot", 1,
			 "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem", 1, "capabilities",
			 "drop", "ALL");
}

/*
 * An archive source: restore-agent only installs itself (a1 gets nothing more); the
 * replay's arguments and mounts; the rebuild takes the staged file (no --file), so it
 * removes the staging dir, the replay's work dir with it, once the data dir is in place.
 */
static json_t *archive_replay(const struct eo_snapshot_location *loc, const char *etcd_image,
			      json_t *volumes, bool *ok)
{
	const char *sp = eo_present(loc->sub_path) ? loc->sub_path : "";
	char dir[PATH_CAP], rev[32];
	size_t len;
	json_t *a = json_array(), *mounts, *c = NULL;

	while (*sp == '/')
		sp++;
	len = strlen(sp);
	while (len > 0 && sp[len - 1] == '/')
		len--;
	if (snprintf(dir, sizeof(dir), "%s%s%.*s", EO_RESTORE_SOURCE_DIR, len ? "/" : "", (int)len,
		     sp) >= (int)sizeof(dir))
		*ok = false;
	mounts = json_pack("[{s:s, s:s}, {s:s, s:s, s:b}, {s:s, s:s, s:b}]", "name", DATA_VOLUME,
			   "mountPath", EO_ETCD_DATA_DIR, "name", AGENT_VOLUME, "mountPath",
			   EO_RESTORE_AGENT_DIR, "readOnly", 1, "name", SOURCE_VOLUME, "mountPath",
			   EO_RESTORE_SOURCE_DIR, "readOnly", 1);
	if (a == NULL || mounts == NULL)
		*ok = false;
	add(a, json_string("--library-path"), ok);
	add(a, json_string(EO_RESTORE_AGENT_DIR "/lib"), ok);
	add(a, json_string(EO_RESTORE_AGENT_DIR "/bin/etcd-operator"), ok);
	add(a, json_string("archive-replay"), ok);
	arg2(a, "--archive-dir", dir, ok);
	arg2(a, "--out", EO_RESTORE_REPLAY_OUT, ok);
	arg2(a, "--work-dir", EO_RESTORE_REPLAY_WORK_DIR, ok);
	arg2(a, "--data-dir", EO_ETCD_DATA_DIR, ok);
	if (loc->target_revision > 0) {
		snprintf(rev, sizeof(rev), "%lld", (long long)loc->target_revision);
		arg2(a, "--target-revision", rev, ok);
	} else if (eo_present(loc->target_time)) {
		arg2(a, "--target-time", loc->target_time, ok);
	}
	arg2(a, "--termination-log", EO_RESTORE_TERMINATION_LOG, ok);
	add(volumes,
	    json_pack("{s:s, s:{s:s, s:b}}", "name", SOURCE_VOLUME, "persistentVolumeClaim",
		      "claimName", loc->claim_name, "readOnly", 1),
	    ok);
	if (*ok)
		c = json_pack("{s:s, s:s, s:s, s:[s], s:O, s:O, s:o, s:s}", "name",
			      EO_RESTORE_REPLAY_CONTAINER, "image", etcd_image, "imagePullPolicy",
			      "IfNotPresent", "command", LOADER, "args", a, "volumeMounts", mounts,
			      "securityContext", security_context(), "terminationMessagePolicy",
			      "FallbackToLogsOnError");
	if (c == NULL)
		*ok = false;
	json_decref(a);
	json_decref(mounts);
	return c;
}

int eo_desired_restore_init(const json_t *member, const struct eo_desired_opts *o,
			    const char *etcd_image, json_t *pod_spec)
{
	const char *m = eo_member_name(member), *c = eo_member_service(member);
	const char *ns = eo_member_namespace(member);
	const char *ic = eo_member_initial_cluster(member);
	struct eo_snapshot_location loc;
	char peer[EO_DESIRED_URL_MAX], file[PATH_CAP];
	json_t *volumes = json_object_get(pod_spec, "volumes");
	json_t *a1 = json_array(), *a2 = json_array(), *m1 = NULL, *m2 = NULL, *inits = NULL;
	json_t *replay = NULL;
	bool ok = a1 != NULL && a2 != NULL;

	if (!eo_desired_member_restores(member) || o == NULL || !eo_present(o->operator_image) ||
	    !eo_present(etcd_image) || !eo_present(ic) || !json_is_array(volumes) ||
	    eo_desired_member_peer_url(peer, sizeof(peer), o, m, c, ns,
				       eo_desired_member_peer_tls(member)) != 0) {
		json_decref(a1);
		json_decref(a2);
		return -1;
	}
	eo_member_restore_source(member, &loc);
	m1 = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", DATA_VOLUME, "mountPath",
		       EO_ETCD_DATA_DIR, "name", AGENT_VOLUME, "mountPath", EO_RESTORE_AGENT_DIR);
	m2 = json_pack("[{s:s, s:s}, {s:s, s:s, s:b}]", "name", DATA_VOLUME, "mountPath",
		       EO_ETCD_DATA_DIR, "name", AGENT_VOLUME, "mountPath", EO_RESTORE_AGENT_DIR,
		       "readOnly", 1);
	ok = ok && m1 != NULL && m2 != NULL;

	/* restore: stage and verify */
	add(a1, json_string("restore-agent"), &ok);
	arg2(a1, "--data-dir", EO_ETCD_DATA_DIR, &ok);
	arg2(a1, "--staging-dir", EO_RESTORE_STAGING_DIR, &ok);
	/* restore-rebuild: etcdutl of the etcd image */
	add(a2, json_string("--library-path"), &ok);
	add(a2, json_string(EO_RESTORE_AGENT_DIR "/lib"), &ok);
	add(a2, json_string(EO_RESTORE_AGENT_DIR "/bin/etcd-operator"), &ok);
	add(a2, json_string("restore-rebuild"), &ok);
	arg2(a2, "--data-dir", EO_ETCD_DATA_DIR, &ok);
	arg2(a2, "--staging-dir", EO_RESTORE_STAGING_DIR, &ok);
	if (loc.kind == EO_LOCATION_S3) {
		arg2(a1, "--s3-endpoint", loc.endpoint, &ok);
		arg2(a1, "--s3-bucket", loc.bucket, &ok);
		arg2(a1, "--s3-key", loc.key, &ok);
		if (eo_present(loc.region))
			arg2(a1, "--s3-region", loc.region, &ok);
		if (loc.force_path_style)
			add(a1, json_string("--s3-force-path-style"), &ok);
		if (loc.insecure)
			add(a1, json_string("--s3-insecure"), &ok);
		arg2(a1, "--credentials-dir", EO_RESTORE_CREDENTIALS_DIR, &ok);
		add(volumes,
		    json_pack("{s:s, s:{s:s, s:i}}", "name", CRED_VOLUME, "secret", "secretName",
			      loc.credentials_secret, "defaultMode", 0440),
		    &ok);
		add(m1,
		    json_pack("{s:s, s:s, s:b}", "name", CRED_VOLUME, "mountPath",
			      EO_RESTORE_CREDENTIALS_DIR, "readOnly", 1),
		    &ok);
	} else if (loc.kind == EO_LOCATION_ARCHIVE) {
		replay = archive_replay(&loc, etcd_image, volumes, &ok);
	} else {
		const char *sp = eo_present(loc.sub_path) ? loc.sub_path : "";

		while (*sp == '/')
			sp++;
		if (snprintf(file, sizeof(file), "%s/%s", EO_RESTORE_SOURCE_DIR, sp) >=
		    (int)sizeof(file))
			ok = false;
		arg2(a1, "--file", file, &ok);
		arg2(a2, "--file", file, &ok);
		add(volumes,
		    json_pack("{s:s, s:{s:s, s:b}}", "name", SOURCE_VOLUME, "persistentVolumeClaim",
			      "claimName", loc.claim_name, "readOnly", 1),
		    &ok);
		add(m1,
		    json_pack("{s:s, s:s, s:b}", "name", SOURCE_VOLUME, "mountPath",
			      EO_RESTORE_SOURCE_DIR, "readOnly", 1),
		    &ok);
		add(m2,
		    json_pack("{s:s, s:s, s:b}", "name", SOURCE_VOLUME, "mountPath",
			      EO_RESTORE_SOURCE_DIR, "readOnly", 1),
		    &ok);
	}
	/* The restore refuses a file whose SHA-256 differs (RestoreChecksumMismatch). */
	if (eo_present(loc.expected_checksum))
		arg2(a1, "--expected-checksum", loc.expected_checksum, &ok);
	arg2(a1, "--install-self", EO_RESTORE_AGENT_DIR, &ok);
	/* Why a failure happened, for the EtcdCluster's condition (api/restorefail.h). */
	arg2(a1, "--termination-log", EO_RESTORE_TERMINATION_LOG, &ok);
	arg2(a2, "--termination-log", EO_RESTORE_TERMINATION_LOG, &ok);
	arg2(a2, "--name", m, &ok);
	arg2(a2, "--initial-cluster", ic, &ok);
	arg2(a2, "--initial-cluster-token", eo_member_cluster_token(member), &ok);
	arg2(a2, "--initial-advertise-peer-urls", peer, &ok);
	add(volumes, json_pack("{s:s, s:{}}", "name", AGENT_VOLUME, "emptyDir"), &ok);
	if (ok)
		inits = json_pack(
		    "[{s:s, s:s, s:s, s:O, s:O, s:o, s:s}, {s:s, s:s, s:s, s:[s], s:O, s:O, s:o, "
		    "s:s}]",
		    "name", EO_RESTORE_CONTAINER, "image", o->operator_image, "imagePullPolicy",
		    "IfNotPresent", "args", a1, "volumeMounts", m1, "securityContext",
		    security_context(), "terminationMessagePolicy", "FallbackToLogsOnError", "name",
		    EO_RESTORE_REBUILD_CONTAINER, "image", etcd_image, "imagePullPolicy",
		    "IfNotPresent", "command", LOADER, "args", a2, "volumeMounts", m2,
		    "securityContext", security_context(), "terminationMessagePolicy",
		    "FallbackToLogsOnError");
	/* restore-replay between the agent's install and the rebuild */
	if (inits != NULL && replay != NULL && json_array_insert(inits, 1, replay) != 0)
		ok = false;
	ok = ok && inits != NULL && json_object_set_new(pod_spec, "initContainers", inits) == 0;
	/*
	 * The restoring Pod's fsGroup: the kubelet re-owns the (new, empty) data volume once and
	 * never walks a volume whose root already has the group. The source PVC is mounted
	 * read-only, which the kubelet never re-owns. Only this first Pod of the seed carries it:
	 * it is not part of the Pod hash (built as for a bootstrapped cluster), so no member rolls.
	 * Without a fsGroup of the operator's (auto mode, desired.h) it applies to the one the
	 * platform assigns.
	 */
	if (ok && json_is_object(json_object_get(pod_spec, "securityContext")))
		ok = json_object_set_new(json_object_get(pod_spec, "securityContext"),
					 "fsGroupChangePolicy", json_string("OnRootMismatch")) == 0;
	json_decref(a1);
	json_decref(a2);
	json_decref(m1);
	json_decref(m2);
	json_decref(replay);
	return ok ? 0 : -1;
}

const char *eo_desired_restore_claim(const json_t *pod)
{
	const json_t *v =
	    eo_json_named(json_object_get(json_object_get(pod, "spec"), "volumes"), SOURCE_VOLUME);

	return json_string_value(
	    json_object_get(json_object_get(v, "persistentVolumeClaim"), "claimName"));
}
