/*
 * desired/snapshot_job.c - the Job of an EtcdSnapshot. See snapshot_job.h.
 */
#include "desired/snapshot_job.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/names.h"
#include "api/schedule.h"
#include "api/snapshot.h"
#include "api/meta.h"
#include "core/util.h"

#define PVC_VOLUME	   "snapshot-data"
#define CRED_VOLUME	   "s3-credentials"
#define TERMINATION_PATH   "/dev/termination-log"
#define ETCD_CA_VOLUME	   "etcd-ca"
#define ETCD_CLIENT_VOLUME "etcd-client"
#define PATH_MAX_SNAPSHOT  1024

static void set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (value == NULL || json_object_set_new(obj, key, value) != 0)
		*ok = false;
}

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

static bool destination_usable(const struct eo_snapshot_location *d)
{
	if (d->kind == EO_LOCATION_S3)
		return eo_present(d->endpoint) && eo_present(d->bucket) &&
		       eo_present(d->credentials_secret);
	return d->kind == EO_LOCATION_PVC && eo_present(d->claim_name);
}

/* Adds the destination flags, volumes and mounts. */
static void destination(const struct eo_snapshot_location *d, json_t *args, json_t *volumes,
			json_t *mounts, bool *ok)
{
	char dir[PATH_MAX_SNAPSHOT];

	if (d->kind == EO_LOCATION_S3) {
		arg2(args, "--s3-endpoint", d->endpoint, ok);
		arg2(args, "--s3-bucket", d->bucket, ok);
		if (eo_present(d->key))
			arg2(args, "--s3-key", d->key, ok);
		if (eo_present(d->region))
			arg2(args, "--s3-region", d->region, ok);
		if (d->force_path_style)
			add(args, json_string("--s3-force-path-style"), ok);
		if (d->insecure)
			add(args, json_string("--s3-insecure"), ok);
		arg2(args, "--credentials-dir", EO_SNAPSHOT_CREDENTIALS_DIR, ok);
		add(volumes,
		    json_pack("{s:s, s:{s:s, s:i}}", "name", CRED_VOLUME, "secret", "secretName",
			      d->credentials_secret, "defaultMode", 0440),
		    ok);
		add(mounts,
		    json_pack("{s:s, s:s, s:b}", "name", CRED_VOLUME, "mountPath",
			      EO_SNAPSHOT_CREDENTIALS_DIR, "readOnly", 1),
		    ok);
		return;
	}
	if (eo_present(d->sub_path)) {
		const char *sp = d->sub_path;

		while (*sp == '/')
			sp++;
		if (snprintf(dir, sizeof(dir), "%s/%s", EO_SNAPSHOT_PVC_MOUNT_PATH, sp) >=
		    (int)sizeof(dir))
			*ok = false;
	} else {
		snprintf(dir, sizeof(dir), "%s", EO_SNAPSHOT_PVC_MOUNT_PATH);
	}
	arg2(args, "--pvc-dir", dir, ok);
	add(volumes,
	    json_pack("{s:s, s:{s:s}}", "name", PVC_VOLUME, "persistentVolumeClaim", "claimName",
		      d->claim_name),
	    ok);
	add(mounts,
	    json_pack("{s:s, s:s}", "name", PVC_VOLUME, "mountPath", EO_SNAPSHOT_PVC_MOUNT_PATH),
	    ok);
}

/*
 * fsGroup makes a fresh destination volume writable by the agent; OnRootMismatch keeps the
 * kubelet from re-owning every file of a volume whose root already has the group (M6 of the
 * reliability review: a recursive chown of a big or shared volume on every snapshot).
 *
 * The Job named job_name owned by snapshot, labelled labels (its Pod: managed-by plus
 * pod_label=pod_label_value), running container `container` with args. Takes no
 * references; NULL on allocation failure.
 */
static json_t *agent_job(const json_t *snapshot, const char *job_name, const char *container,
			 const char *image, const struct eo_desired_opts *o, json_t *labels,
			 const char *pod_label, const char *pod_label_value, json_t *args,
			 json_t *volumes, json_t *mounts)
{
	json_t *ctr = NULL, *refs = json_array(), *job = NULL;
	json_t *psc = eo_desired_pod_security_context(o, true);
	bool ok = refs != NULL && psc != NULL;

	if (ok)
		add(refs, eo_desired_owner_ref(snapshot), &ok);
	if (ok)
		ctr = json_pack(
		    "{s:s, s:s, s:O, s:s, s:s, s:{s:{s:s, s:s}, s:{s:s}}, s:{s:b, s:b, s:b, "
		    "s:{s:[s]}}, s:O}",
		    "name", container, "image", image, "args", args, "terminationMessagePath",
		    TERMINATION_PATH, "terminationMessagePolicy", "FallbackToLogsOnError",
		    "resources", "requests", "cpu", "50m", "memory", "64Mi", "limits", "memory",
		    "256Mi", "securityContext", "runAsNonRoot", 1, "allowPrivilegeEscalation", 0,
		    "readOnlyRootFilesystem", 1, "capabilities", "drop", "ALL", "volumeMounts",
		    mounts);
	if (ctr != NULL)
		job = json_pack(
		    "{s:s, s:s, s:{s:s, s:s, s:O, s:O}, s:{s:i, s:i, s:i, s:{s:{s:{s:s, s:s}}, "
		    "s:{s:s, s:b, s:b, s:O, s:[O], s:O}}}}",
		    "apiVersion", "batch/v1", "kind", "Job", "metadata", "name", job_name,
		    "namespace", eo_meta_namespace(snapshot), "labels", labels, "ownerReferences",
		    refs, "spec", "backoffLimit", EO_SNAPSHOT_JOB_BACKOFF_LIMIT,
		    "activeDeadlineSeconds", EO_SNAPSHOT_JOB_DEADLINE_SECONDS,
		    "ttlSecondsAfterFinished", EO_SNAPSHOT_JOB_TTL_SECONDS, "template", "metadata",
		    "labels", EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE, pod_label,
		    pod_label_value, "spec", "restartPolicy", "Never",
		    "automountServiceAccountToken", 0, "enableServiceLinks", 0, "securityContext",
		    psc, "containers", ctr, "volumes", volumes);
	json_decref(ctr);
	json_decref(refs);
	json_decref(psc);
	return job;
}

/*
 * A cluster whose client API is TLS: the CA bundle (only ca.crt of the server Secret, never its
 * key) and, with mTLS, the operator client certificate, mounted read-only and passed to the
 * agent. The Secret names are the resolved ones (api/cluster.h), whatever their source.
 */
void eo_desired_agent_etcd_tls(const json_t *cluster, json_t *args, json_t *volumes, json_t *mounts,
			       bool *ok)
{
	char server[EO_NAME_MAX], client[EO_NAME_MAX], path[256];

	if (eo_cluster_server_secret_name(cluster, server, sizeof(server)) != 0)
		return; /* plaintext */
	add(volumes,
	    json_pack("{s:s, s:{s:s, s:[{s:s, s:s}], s:i}}", "name", ETCD_CA_VOLUME, "secret",
		      "secretName", server, "items", "key", "ca.crt", "path", "ca.crt",
		      "defaultMode", 0440),
	    ok);
	add(mounts,
	    json_pack("{s:s, s:s, s:b}", "name", ETCD_CA_VOLUME, "mountPath",
		      EO_SNAPSHOT_ETCD_CA_DIR, "readOnly", 1),
	    ok);
	snprintf(path, sizeof(path), "%s/ca.crt", EO_SNAPSHOT_ETCD_CA_DIR);
	arg2(args, "--cacert", path, ok);
	if (eo_cluster_operator_client_secret_name(cluster, client, sizeof(client)) != 0)
		return; /* server TLS only */
	add(volumes,
	    json_pack("{s:s, s:{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:i}}", "name", ETCD_CLIENT_VOLUME,
		      "secret", "secretName", client, "items", "key", "tls.crt", "path", "tls.crt",
		      "key", "tls.key", "path", "tls.key", "defaultMode", 0440),
	    ok);
	add(mounts,
	    json_pack("{s:s, s:s, s:b}", "name", ETCD_CLIENT_VOLUME, "mountPath",
		      EO_SNAPSHOT_ETCD_CLIENT_DIR, "readOnly", 1),
	    ok);
	snprintf(path, sizeof(path), "%s/tls.crt", EO_SNAPSHOT_ETCD_CLIENT_DIR);
	arg2(args, "--cert", path, ok);
	snprintf(path, sizeof(path), "%s/tls.key", EO_SNAPSHOT_ETCD_CLIENT_DIR);
	arg2(args, "--key", path, ok);
}

json_t *eo_desired_snapshot_job(const json_t *snapshot, const json_t *cluster, const char *image,
				const struct eo_desired_opts *o,
				const char (*endpoints)[EO_DESIRED_URL_MAX], size_t n_endpoints)
{
	const char *name = eo_meta_name(snapshot), *ns = eo_meta_namespace(snapshot);
	const char *uid = eo_meta_uid(snapshot), *cname = eo_snapshot_cluster_name(snapshot);
	struct eo_snapshot_location d;
	char job_name[EO_NAME_MAX];
	json_t *job = NULL, *labels = NULL, *args = NULL, *volumes = NULL, *mounts = NULL;
	bool ok = true;

	eo_snapshot_destination(snapshot, &d);
	if (!eo_present(name) || !eo_present(ns) || !eo_present(uid) || !eo_present(cname) ||
	    !eo_present(image) || n_endpoints == 0 || endpoints == NULL ||
	    !destination_usable(&d) || eo_name_snapshot_job(job_name, sizeof(job_name), name) != 0)
		return NULL;

	labels = eo_desired_cluster_labels(cluster, cname);
	args = json_array();
	volumes = json_array();
	mounts = json_array();
	ok = labels != NULL && args != NULL && volumes != NULL && mounts != NULL;
	if (ok) {
		set(labels, EO_LABEL_SNAPSHOT, json_string(name), &ok);
		add(args, json_string("snapshot-agent"), &ok);
		arg2(args, "--snapshot-name", name, &ok);
		arg2(args, "--snapshot-uid", uid, &ok);
		for (size_t i = 0; i < n_endpoints; i++)
			arg2(args, "--endpoint", endpoints[i], &ok);
		destination(&d, args, volumes, mounts, &ok);
		eo_desired_agent_etcd_tls(cluster, args, volumes, mounts, &ok);
		arg2(args, "--termination-log", TERMINATION_PATH, &ok);
	}
	if (ok)
		job = agent_job(snapshot, job_name, EO_SNAPSHOT_CONTAINER, image, o, labels,
				EO_LABEL_SNAPSHOT, name, args, volumes, mounts);
	/*
	 * spec.auth: the agent authenticates as root with the password from the cluster's
	 * credentials Secret, handed over by the kubelet as an environment variable (never an
	 * argument, never read by the operator for the Job).
	 */
	if (job != NULL && eo_cluster_auth_enabled(cluster) &&
	    eo_present(eo_cluster_auth_secret(cluster))) {
		json_t *ctr = json_array_get(
		    json_object_get(
			json_object_get(json_object_get(json_object_get(job, "spec"), "template"),
					"spec"),
			"containers"),
		    0);

		if (ctr == NULL || eo_desired_agent_password_env(cluster, ctr) != 0) {
			json_decref(job);
			job = NULL;
		}
	}
	/* The agent reaches the client port: the cluster's NetworkPolicy admits this label. */
	if (job != NULL &&
	    json_object_set_new(
		json_object_get(
		    json_object_get(json_object_get(json_object_get(job, "spec"), "template"),
				    "metadata"),
		    "labels"),
		EO_LABEL_SNAPSHOT_OF, json_string(cname)) != 0) {
		json_decref(job);
		job = NULL;
	}
	json_decref(labels);
	json_decref(args);
	json_decref(volumes);
	json_decref(mounts);
	return job;
}

json_t *eo_desired_prune_job(const json_t *snapshot, const char *schedule, const char *image,
			     const struct eo_desired_opts *o)
{
	const char *name = eo_meta_name(snapshot), *ns = eo_meta_namespace(snapshot);
	const char *uid = eo_meta_uid(snapshot);
	struct eo_snapshot_location d;
	char job_name[EO_NAME_MAX];
	json_t *job = NULL, *labels = NULL, *args = NULL, *volumes = NULL, *mounts = NULL;
	bool ok = true;

	eo_snapshot_destination(snapshot, &d);
	if (!eo_present(name) || !eo_present(ns) || !eo_present(uid) || !eo_present(schedule) ||
	    !eo_present(image) || !destination_usable(&d) ||
	    eo_name_prune_job(job_name, sizeof(job_name), name) != 0)
		return NULL;
	labels = json_pack("{s:s, s:s, s:s}", EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE,
			   EO_LABEL_SNAPSHOT, name, EO_LABEL_SCHEDULE, schedule);
	args = json_array();
	volumes = json_array();
	mounts = json_array();
	ok = labels != NULL && args != NULL && volumes != NULL && mounts != NULL;
	if (ok) {
		add(args, json_string("snapshot-prune"), &ok);
		arg2(args, "--snapshot-name", name, &ok);
		arg2(args, "--snapshot-uid", uid, &ok);
		destination(&d, args, volumes, mounts, &ok);
		arg2(args, "--termination-log", TERMINATION_PATH, &ok);
	}
	if (ok)
		job = agent_job(snapshot, job_name, EO_PRUNE_CONTAINER, image, o, labels,
				EO_LABEL_SCHEDULE, schedule, args, volumes, mounts);
	json_decref(labels);
	json_decref(args);
	json_decref(volumes);
	json_decref(mounts);
	return job;
}

int eo_desired_agent_password_env(const json_t *cluster, json_t *ctr)
{
	return json_object_set_new(
	    ctr, "env",
	    json_pack("[{s:s, s:{s:{s:s, s:s}}}]", "name", EO_SNAPSHOT_ENV_PASSWORD, "valueFrom",
		      "secretKeyRef", "name", eo_cluster_auth_secret(cluster), "key", "password"));
}
