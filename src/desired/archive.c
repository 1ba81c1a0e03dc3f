/*
 * desired/archive.c - the archiver Deployment of an EtcdArchive. See archive.h.
 */
#include "desired/archive.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/archive.h"
#include "api/cluster.h"
#include "api/meta.h"
#include "core/util.h"
#include "desired/snapshot_job.h"
#include "snapshot/contract.h"

#define PVC_VOLUME "archive-data"
#define DIR_MAX	   1100

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

static void arg_i64(json_t *args, const char *flag, int64_t v, bool *ok)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	arg2(args, flag, buf, ok);
}

/* The agent's arguments before the TLS ones. */
static void agent_args(const json_t *archive, const struct eo_snapshot_location *d,
		       const char (*endpoints)[EO_DESIRED_URL_MAX], size_t n, json_t *args,
		       bool *ok)
{
	char dir[DIR_MAX], port[16];
	const char *sp = d->sub_path;

	add(args, json_string("archive-agent"), ok);
	for (size_t i = 0; i < n; i++)
		arg2(args, "--endpoint", endpoints[i], ok);
	while (sp != NULL && *sp == '/')
		sp++;
	if (eo_present(sp)) {
		if (snprintf(dir, sizeof(dir), "%s/%s", EO_SNAPSHOT_PVC_MOUNT_PATH, sp) >=
		    (int)sizeof(dir))
			*ok = false;
	} else {
		snprintf(dir, sizeof(dir), "%s", EO_SNAPSHOT_PVC_MOUNT_PATH);
	}
	arg2(args, "--dir", dir, ok);
	arg_i64(args, "--segment-seconds", eo_archive_segment_seconds(archive), ok);
	arg_i64(args, "--segment-bytes", eo_archive_segment_bytes(archive), ok);
	if (eo_archive_retention_seconds(archive) > 0)
		arg_i64(args, "--retention-seconds", eo_archive_retention_seconds(archive), ok);
	snprintf(port, sizeof(port), ":%d", EO_ARCHIVE_STATUS_PORT);
	arg2(args, "--status-addr", port, ok);
}

static json_t *container(const char *image, json_t *args, json_t *mounts, const json_t *cluster)
{
	json_t *ctr = json_pack(
	    "{s:s, s:s, s:O, s:s, s:[{s:s, s:i, s:s}], s:{s:{s:s, s:i}, s:i, s:i, s:i}, "
	    "s:{s:{s:s, s:s}, s:{s:s}}, s:{s:b, s:b, s:b, s:{s:[s]}}, s:O}",
	    "name", EO_ARCHIVE_CONTAINER, "image", image, "args", args, "terminationMessagePolicy",
	    "FallbackToLogsOnError", "ports", "name", "status", "containerPort",
	    EO_ARCHIVE_STATUS_PORT, "protocol", "TCP", "readinessProbe", "httpGet", "path",
	    "/status", "port", EO_ARCHIVE_STATUS_PORT, "periodSeconds", 10, "timeoutSeconds", 5,
	    "failureThreshold", 3, "resources", "requests", "cpu", "50m", "memory", "64Mi",
	    "limits", "memory", "256Mi", "securityContext", "runAsNonRoot", 1,
	    "allowPrivilegeEscalation", 0, "readOnlyRootFilesystem", 1, "capabilities", "drop",
	    "ALL", "volumeMounts", mounts);

	/* spec.auth: the root password from the cluster's Secret, never an argument. */
	if (ctr != NULL && eo_cluster_auth_enabled(cluster) &&
	    eo_present(eo_cluster_auth_secret(cluster))) {
		json_t *a = json_object_get(ctr, "args");

		if (json_array_append_new(a, json_string("--password-env")) != 0 ||
		    json_array_append_new(a, json_string(EO_SNAPSHOT_ENV_PASSWORD)) != 0 ||
		    eo_desired_agent_password_env(cluster, ctr) != 0) {
			json_decref(ctr);
			return NULL;
		}
	}
	return ctr;
}

/* FNV-1a 64 of the compact, key-sorted JSON of v as 16 hex digits; -1 on OOM. */
static int hash_of(const json_t *v, char buf[17])
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	uint64_t h = 1469598103934665603ULL;

	if (text == NULL)
		return -1;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		h ^= *p;
		h *= 1099511628211ULL;
	}
	free(text);
	snprintf(buf, 17, "%016" PRIx64, h);
	return 0;
}

static json_t *deployment(const json_t *archive, const char *name, json_t *labels, json_t *ctr,
			  json_t *volumes, const char *cname, const struct eo_desired_opts *o)
{
	const char *aname = eo_meta_name(archive);
	json_t *refs = json_pack("[o]", eo_desired_owner_ref(archive)), *dep = NULL, *spec;
	json_t *psc = eo_desired_pod_security_context(o, true);
	char hash[17];

	if (refs == NULL || psc == NULL) {
		json_decref(refs);
		json_decref(psc);
		return NULL;
	}
	dep = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:O, s:{}, s:O}, s:{s:i, s:i, s:{s:s}, s:{s:{s:s, s:s}}, "
	    "s:{s:{s:{s:s, s:s, s:s}}, s:{s:b, s:b, s:i, s:O, s:[O], s:O}}}}",
	    "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name", name, "namespace",
	    eo_meta_namespace(archive), "labels", labels, "annotations", "ownerReferences", refs,
	    "spec", "replicas", 1, "revisionHistoryLimit", 2, "strategy", "type", "Recreate",
	    "selector", "matchLabels", EO_LABEL_MANAGED_BY, EO_LABEL_MANAGED_BY_VALUE,
	    EO_LABEL_ARCHIVE, aname, "template", "metadata", "labels", EO_LABEL_MANAGED_BY,
	    EO_LABEL_MANAGED_BY_VALUE, EO_LABEL_ARCHIVE, aname, EO_LABEL_SNAPSHOT_OF, cname, "spec",
	    "automountServiceAccountToken", 0, "enableServiceLinks", 0,
	    "terminationGracePeriodSeconds", 30, "securityContext", psc, "containers", ctr,
	    "volumes", volumes);
	json_decref(refs);
	json_decref(psc);
	spec = json_object_get(dep, "spec");
	if (dep == NULL || hash_of(spec, hash) != 0 ||
	    json_object_set_new(json_object_get(json_object_get(dep, "metadata"), "annotations"),
				EO_ANNOTATION_ARCHIVER_HASH, json_string(hash)) != 0) {
		json_decref(dep);
		return NULL;
	}
	return dep;
}

json_t *eo_desired_archiver(const json_t *archive, const json_t *cluster, const char *image,
			    const struct eo_desired_opts *o,
			    const char (*endpoints)[EO_DESIRED_URL_MAX], size_t n_endpoints)
{
	const char *name = eo_meta_name(archive), *cname = eo_archive_cluster_name(archive);
	struct eo_snapshot_location d;
	char dep_name[EO_NAME_MAX];
	json_t *labels = NULL, *args = NULL, *volumes = NULL, *mounts = NULL, *ctr = NULL;
	json_t *dep = NULL;
	bool ok;

	eo_archive_destination(archive, &d);
	if (!eo_present(name) || !eo_present(eo_meta_namespace(archive)) ||
	    !eo_present(eo_meta_uid(archive)) || !eo_present(cname) || cluster == NULL ||
	    !eo_present(image) || endpoints == NULL || n_endpoints == 0 ||
	    d.kind != EO_LOCATION_PVC || !eo_present(d.claim_name) ||
	    eo_name_archiver(dep_name, sizeof(dep_name), name) != 0)
		return NULL;
	labels = eo_desired_cluster_labels(cluster, cname);
	args = json_array();
	volumes = json_array();
	mounts = json_array();
	ok = labels != NULL && args != NULL && volumes != NULL && mounts != NULL &&
	     json_object_set_new(labels, EO_LABEL_ARCHIVE, json_string(name)) == 0;
	if (ok) {
		agent_args(archive, &d, endpoints, n_endpoints, args, &ok);
		add(volumes,
		    json_pack("{s:s, s:{s:s}}", "name", PVC_VOLUME, "persistentVolumeClaim",
			      "claimName", d.claim_name),
		    &ok);
		add(mounts,
		    json_pack("{s:s, s:s}", "name", PVC_VOLUME, "mountPath",
			      EO_SNAPSHOT_PVC_MOUNT_PATH),
		    &ok);
		eo_desired_agent_etcd_tls(cluster, args, volumes, mounts, &ok);
	}
	if (ok)
		ctr = container(image, args, mounts, cluster);
	if (ctr != NULL)
		dep = deployment(archive, dep_name, labels, ctr, volumes, cname, o);
	json_decref(ctr);
	json_decref(labels);
	json_decref(args);
	json_decref(volumes);
	json_decref(mounts);
	return dep;
}

const char *eo_desired_archiver_hash(const json_t *obj)
{
	return eo_meta_annotation(obj, EO_ANNOTATION_ARCHIVER_HASH);
}
