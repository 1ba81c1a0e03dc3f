#include "api/member.h"

#include <string.h>

#include "api/conditions.h"
#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/names.h"
#include "api/spec.h"
#include "api/validate.h"

static const char *str_or_empty(const json_t *obj, const char *path)
{
	const char *s = eo__json_str_at(obj, path);

	return s != NULL ? s : "";
}

const char *eo_member_name(const json_t *member)
{
	return eo_meta_name(member);
}

const char *eo_member_namespace(const json_t *member)
{
	return eo_meta_namespace(member);
}

const char *eo_member_uid(const json_t *member)
{
	return eo_meta_uid(member);
}

int64_t eo_member_generation(const json_t *member)
{
	return eo_meta_generation(member, 0);
}

bool eo_member_is_deleting(const json_t *member)
{
	return eo_meta_deletion_timestamp(member) != NULL;
}

bool eo_member_has_finalizer(const json_t *member)
{
	return eo_meta_has_finalizer(member, EO_FINALIZER_MEMBER_CLEANUP);
}

const char *eo_member_cluster_name(const json_t *member)
{
	return eo__json_str_at(member, "spec.clusterName");
}

static const char *member_annotation(const json_t *member, const char *key)
{
	const char *v = eo_meta_annotation(member, key);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

const char *eo_member_service(const json_t *member)
{
	const char *svc = member_annotation(member, EO_ANNOTATION_HEADLESS_SERVICE_NAME);

	if (svc != NULL && eo_name_is_dns1035_label(svc, EO_DNS_LABEL_MAX))
		return svc;
	return eo_member_cluster_name(member);
}

const char *eo_member_data_subpath(const json_t *member)
{
	const char *p = member_annotation(member, EO_ANNOTATION_DATA_DIR_SUBPATH);

	/* A relative path inside the volume, never "..": the kubelet refuses those anyway. */
	if (p == NULL || p[0] == '/' || strstr(p, "..") != NULL)
		return NULL;
	return p;
}

const char *eo_member_adopted_pod_uid(const json_t *member)
{
	return member_annotation(member, EO_ANNOTATION_ADOPTED_POD_UID);
}

bool eo_member_pod_adopted(const json_t *member, const json_t *pod)
{
	const char *want = eo_member_adopted_pod_uid(member);
	const char *uid = eo_meta_uid(pod);

	return want != NULL && uid != NULL && strcmp(want, uid) == 0;
}

const char *eo_member_version(const json_t *member)
{
	return eo__json_str_at(member, "spec.version");
}

void eo_member_storage(const json_t *member, struct eo_storage *out)
{
	eo_storage_read(eo__json_at(member, "spec.storage"), out);
}

bool eo_member_bootstrap(const json_t *member)
{
	return eo__json_bool_at(member, "spec.bootstrap", false);
}

const char *eo_member_initial_cluster(const json_t *member)
{
	return str_or_empty(member, "spec.initialCluster");
}

bool eo_member_is_pending(const json_t *member)
{
	return eo_member_initial_cluster(member)[0] == '\0';
}

const char *eo_member_cluster_token(const json_t *member)
{
	return str_or_empty(member, "spec.clusterToken");
}

bool eo_member_dormant(const json_t *member)
{
	return eo__json_bool_at(member, "spec.dormant", false);
}

void eo_member_options(const json_t *member, struct eo_etcd_options *out)
{
	eo__spec_options(member, out);
}

json_t *eo_member_resources(const json_t *member)
{
	return eo__spec_resources(member);
}

const json_t *eo_member_affinity(const json_t *member)
{
	return eo__spec_affinity(member);
}

const json_t *eo_member_topology_spread_constraints(const json_t *member)
{
	return eo__spec_topology_spread_constraints(member);
}

const json_t *eo_member_tolerations(const json_t *member)
{
	return eo__spec_tolerations(member);
}

const json_t *eo_member_node_selector(const json_t *member)
{
	return eo__spec_node_selector(member);
}

const char *eo_member_priority_class_name(const json_t *member)
{
	return eo__spec_priority_class_name(member);
}

const json_t *eo_member_image_pull_secrets(const json_t *member)
{
	return eo__spec_image_pull_secrets(member);
}

const json_t *eo_member_extra_labels(const json_t *member)
{
	return eo__spec_extra_labels(member);
}

const json_t *eo_member_extra_annotations(const json_t *member)
{
	return eo__spec_extra_annotations(member);
}

void eo_member_tls(const json_t *member, struct eo_member_tls *out)
{
	json_t *tls = eo__json_object_at(member, "spec.tls");
	const char *s = NULL;

	memset(out, 0, sizeof(*out));
	s = eo__json_str_at(tls, "clientServerSecretRef.name");
	out->client_server_secret = s != NULL && s[0] != '\0' ? s : NULL;
	out->client_mtls = eo__json_bool_at(tls, "clientMTLS", false);
	s = eo__json_str_at(tls, "peerSecretRef.name");
	out->peer_secret = s != NULL && s[0] != '\0' ? s : NULL;
	out->peer_auto_tls = eo__json_bool_at(tls, "peerAutoTLS", false);
	s = eo__json_str_at(tls, "peerAllowedHostname");
	out->peer_allowed_hostname = s != NULL && s[0] != '\0' ? s : NULL;
}

bool eo_member_restore_source(const json_t *member, struct eo_snapshot_location *out)
{
	json_t *restore = eo__json_object_at(member, "spec.restore");

	eo_location_read(eo__json_at(restore, "source"), out);
	return restore != NULL;
}

const char *eo_member_member_id(const json_t *member)
{
	return str_or_empty(member, "status.memberID");
}

const char *eo_member_pod_name(const json_t *member)
{
	return str_or_empty(member, "status.podName");
}

const char *eo_member_pod_uid(const json_t *member)
{
	return str_or_empty(member, "status.podUID");
}

bool eo_member_is_voter(const json_t *member)
{
	return eo__json_bool_at(member, "status.isVoter", false);
}

const char *eo_member_pvc_name(const json_t *member)
{
	return str_or_empty(member, "status.pvcName");
}

const char *eo_member_running_version(const json_t *member)
{
	return str_or_empty(member, "status.version");
}

bool eo_member_is_ready(const json_t *member)
{
	return eo_condition_is_true(eo__json_at(member, "status"), EO_COND_READY);
}

static int default_value(json_t *obj, const char *key, json_t *value)
{
	if (value == NULL)
		return -1;
	if (json_object_get(obj, key) != NULL) {
		json_decref(value);
		return 0;
	}
	return json_object_set_new(obj, key, value) == 0 ? 0 : -1;
}

int eo_member_apply_defaults(json_t *member)
{
	json_t *spec = eo__json_object_at(member, "spec");
	json_t *storage = NULL;

	if (spec == NULL)
		return -1;
	if (default_value(spec, "replicas", json_integer(1)) != 0)
		return -1;
	if (json_object_get(spec, "storage") == NULL &&
	    default_value(spec, "storage", json_object()) != 0)
		return -1;
	storage = json_object_get(spec, "storage");
	if (json_is_object(storage) &&
	    (default_value(storage, "size", json_string(EO_DEFAULT_STORAGE_SIZE)) != 0 ||
	     default_value(storage, "medium", json_string("")) != 0))
		return -1;
	return 0;
}

static bool version_ok(const char *v)
{
	json_t *probe = NULL;
	bool ok = false;

	/* Reuse the cluster check so both kinds accept exactly the same versions. */
	probe = json_pack("{s:{s:s, s:i}}", "spec", "version", v != NULL ? v : "", "replicas", 1);
	ok = probe != NULL && eo_cluster_validate(probe, NULL, NULL, 0) == 0;
	json_decref(probe);
	return ok;
}

int eo_member_validate(const json_t *member, const json_t *old, char *msg, size_t n)
{
	json_t *spec = eo__json_object_at(member, "spec");
	json_t *old_spec = eo__json_object_at(old, "spec");
	json_t *replicas = NULL;
	json_t *size = NULL;
	json_t *restore = NULL;
	const char *cluster = NULL;
	const char *medium = NULL;
	struct eo_quantity q;

	eo__clear(msg, n);
	if (spec == NULL)
		return eo__fail(msg, n, "spec: Required value");
	cluster = eo__json_str_at(spec, "clusterName");
	if (cluster == NULL || cluster[0] == '\0')
		return eo__fail(msg, n, "spec.clusterName: Required value");
	if (strlen(cluster) > EO_DNS_LABEL_MAX)
		return eo__fail(msg, n, "spec.clusterName: must be at most %d characters",
				EO_DNS_LABEL_MAX);
	if (json_object_get(spec, "version") == NULL)
		return eo__fail(msg, n, "spec.version: Required value");
	if (!version_ok(eo__json_str_at(spec, "version")))
		return eo__fail(msg, n, "%s", EO_MSG_VERSION);
	replicas = json_object_get(spec, "replicas");
	if (replicas != NULL && (!json_is_integer(replicas) || json_integer_value(replicas) != 1))
		return eo__fail(msg, n, "spec.replicas: must be 1");
	size = eo__json_at(spec, "storage.size");
	if (size != NULL && eo_quantity_from_json(size, &q) != 0)
		return eo__fail(msg, n, "spec.storage.size: must be a quantity such as 1Gi");
	if (eo__json_has(spec, "storage.medium")) {
		medium = eo__json_str_at(spec, "storage.medium");
		if (medium == NULL ||
		    (medium[0] != '\0' && strcmp(medium, EO_STORAGE_MEDIUM_MEMORY) != 0))
			return eo__fail(msg, n, "spec.storage.medium: must be \"\" or Memory");
	}
	if (eo_extra_metadata_validate(json_object_get(spec, "additionalMetadata"), msg, n) != 0)
		return -1;
	restore = json_object_get(spec, "restore");
	if (restore != NULL && eo_restore_source_validate(json_object_get(restore, "source"),
							  "spec.restore.source", msg, n) != 0)
		return -1;
	if (old_spec != NULL) {
		struct eo_storage now, before;
		const char *old_cluster = eo__json_str_at(old_spec, "clusterName");
		const char *old_ic = eo__json_str_at(old_spec, "initialCluster");
		const char *ic = eo__json_str_at(spec, "initialCluster");

		if (old_cluster != NULL && strcmp(old_cluster, cluster) != 0)
			return eo__fail(msg, n, "%s", EO_MSG_MEMBER_CLUSTER_NAME_IMMUTABLE);
		eo_storage_read(json_object_get(spec, "storage"), &now);
		eo_storage_read(json_object_get(old_spec, "storage"), &before);
		if (now.memory != before.memory)
			return eo__fail(msg, n, "%s", EO_MSG_MEMBER_MEDIUM_IMMUTABLE);
		if (old_ic != NULL && old_ic[0] != '\0' && (ic == NULL || strcmp(ic, old_ic) != 0))
			return eo__fail(msg, n, "%s", EO_MSG_MEMBER_INITIAL_CLUSTER);
	}
	return 0;
}
