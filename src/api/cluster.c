#include "api/cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/jsonpath.h"
#include "api/meta.h"
#include "api/names.h"
#include "api/spec.h"
#include "api/timeutil.h"
#include "api/validate.h"

#define SECRET_NAME_MAX 253

/* --- metadata --- */

const char *eo_cluster_name(const json_t *cluster)
{
	return eo_meta_name(cluster);
}

const char *eo_cluster_annotation(const json_t *cluster, const char *key)
{
	return key ? eo_meta_annotation(cluster, key) : NULL;
}

int eo_cluster_headless_service(const json_t *cluster, char *buf, size_t n)
{
	const char *svc = eo_cluster_annotation(cluster, EO_ANNOTATION_HEADLESS_SERVICE_NAME);
	int w;

	if (svc == NULL || !eo_name_is_dns1035_label(svc, EO_DNS_LABEL_MAX))
		return eo_name_headless_service(buf, n, eo_cluster_name(cluster));
	if (buf == NULL || n == 0)
		return -1;
	w = snprintf(buf, n, "%s", svc);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

bool eo_cluster_migrating(const json_t *cluster)
{
	const char *v = eo_cluster_annotation(cluster, EO_ANNOTATION_MIGRATING);

	return v != NULL && strcmp(v, "true") == 0;
}

const char *eo_cluster_namespace(const json_t *cluster)
{
	return eo_meta_namespace(cluster);
}

const char *eo_cluster_uid(const json_t *cluster)
{
	return eo_meta_uid(cluster);
}

int64_t eo_cluster_generation(const json_t *cluster)
{
	return eo_meta_generation(cluster, 0);
}

bool eo_cluster_is_deleting(const json_t *cluster)
{
	return eo_meta_deletion_timestamp(cluster) != NULL;
}

/* --- spec --- */

bool eo_cluster_retains_data(const json_t *cluster)
{
	const char *v = eo__json_str_at(cluster, "spec.deletionPolicy");

	return v != NULL && strcmp(v, EO_DELETION_POLICY_RETAIN) == 0;
}

int32_t eo_cluster_replicas(const json_t *cluster)
{
	int64_t v = 0;

	if (!eo__json_int_at(cluster, "spec.replicas", &v) || v < 0 || v > INT32_MAX)
		return EO_DEFAULT_REPLICAS;
	return (int32_t)v;
}

const char *eo_cluster_version(const json_t *cluster)
{
	return eo__json_str_at(cluster, "spec.version");
}

int eo_cluster_etcd_image(const json_t *cluster, const char *repository, char *buf, size_t n)
{
	return eo_name_etcd_image(buf, n, repository, eo_cluster_version(cluster));
}

int32_t eo_cluster_progress_deadline_seconds(const json_t *cluster)
{
	int64_t v = 0;

	if (!eo__json_int_at(cluster, "spec.progressDeadlineSeconds", &v) || v < 1 || v > INT32_MAX)
		return EO_DEFAULT_PROGRESS_DEADLINE_SECONDS;
	return (int32_t)v;
}

long eo_cluster_node_loss_grace_seconds(const json_t *cluster)
{
	const char *s = eo__json_str_at(cluster, "spec.nodeLossGracePeriod");
	int64_t ms = 0;

	if (s == NULL || eo_duration_parse_ms(s, &ms) != 0 || ms < 0 || ms / 1000 > INT32_MAX)
		return EO_DEFAULT_NODE_LOSS_GRACE_SECONDS;
	return (long)(ms / 1000);
}

void eo_storage_read(const json_t *storage, struct eo_storage *out)
{
	json_t *size = json_is_object(storage) ? json_object_get(storage, "size") : NULL;
	json_t *sc = json_is_object(storage) ? json_object_get(storage, "storageClassName") : NULL;
	const char *medium = eo__json_str_at(storage, "medium");

	memset(out, 0, sizeof(*out));
	if (json_is_integer(size))
		snprintf(out->size, sizeof(out->size), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(size));
	else if (json_is_string(size))
		snprintf(out->size, sizeof(out->size), "%s", json_string_value(size));
	else
		snprintf(out->size, sizeof(out->size), "%s", EO_DEFAULT_STORAGE_SIZE);
	out->size_valid = eo_quantity_parse(out->size, &out->size_q) == 0;
	if (!out->size_valid)
		memset(&out->size_q, 0, sizeof(out->size_q));
	out->memory = medium != NULL && strcmp(medium, EO_STORAGE_MEDIUM_MEMORY) == 0;
	out->has_class = json_is_string(sc);
	out->class_name = json_string_value(sc);
}

void eo_cluster_storage(const json_t *cluster, struct eo_storage *out)
{
	eo_storage_read(eo__json_at(cluster, "spec.storage"), out);
}

static void read_issuer(const json_t *ref, struct eo_issuer_ref *out)
{
	out->name = eo__json_str_at(ref, "name");
	out->kind = eo__json_str_at(ref, "kind");
	if (out->kind == NULL || out->kind[0] == '\0')
		out->kind = EO_DEFAULT_ISSUER_KIND;
}

void eo_cluster_tls(const json_t *cluster, struct eo_cluster_tls *out)
{
	json_t *client = eo__json_object_at(cluster, "spec.tls.client");
	json_t *peer = eo__json_object_at(cluster, "spec.tls.peer");
	const char *ca = NULL;

	memset(out, 0, sizeof(*out));
	read_issuer(NULL, &out->server_issuer);
	read_issuer(NULL, &out->operator_client_issuer);
	read_issuer(NULL, &out->peer_issuer);
	if (client != NULL) {
		json_t *cm = eo__json_object_at(client, "certManager");

		if (cm != NULL) {
			json_t *op = eo__json_object_at(cm, "operatorClientIssuerRef");

			out->client = EO_TLS_CERT_MANAGER;
			read_issuer(eo__json_object_at(cm, "serverIssuerRef"), &out->server_issuer);
			if (op != NULL) {
				read_issuer(op, &out->operator_client_issuer);
				out->client_mtls = true;
			}
		} else {
			out->client = EO_TLS_SECRET;
			out->server_secret = eo__json_str_at(client, "serverSecretRef.name");
			out->operator_client_secret =
			    eo__json_str_at(client, "operatorClientSecretRef.name");
			out->client_mtls = out->operator_client_secret != NULL;
		}
	}
	ca = eo__json_str_at(cluster, "spec.tls.certificateAuthority");
	if (ca != NULL && strcmp(ca, EO_TLS_CA_PER_CLUSTER_NAME) == 0)
		out->ca = EO_TLS_CA_PER_CLUSTER;
	else if (ca != NULL && strcmp(ca, EO_TLS_CA_ISSUER_NAME) == 0)
		out->ca = EO_TLS_CA_ISSUER;
	if (peer != NULL) {
		json_t *cm = eo__json_object_at(peer, "certManager");

		if (cm != NULL) {
			out->peer = EO_TLS_CERT_MANAGER;
			read_issuer(eo__json_object_at(cm, "issuerRef"), &out->peer_issuer);
		} else {
			out->peer = EO_TLS_SECRET;
			out->peer_secret = eo__json_str_at(peer, "secretRef.name");
		}
	}
}

/* Copy a BYO secret name into buf; -1 when NULL/empty or too long. */
static int copy_name(char *buf, size_t n, const char *name)
{
	int len = 0;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (name == NULL || name[0] == '\0')
		return -1;
	len = snprintf(buf, n, "%s", name);
	if (len < 0 || (size_t)len >= n) {
		buf[0] = '\0';
		return -1;
	}
	return 0;
}

int eo_cluster_server_secret_name(const json_t *cluster, char *buf, size_t n)
{
	struct eo_cluster_tls tls;

	eo_cluster_tls(cluster, &tls);
	if (tls.client == EO_TLS_CERT_MANAGER)
		return eo_name_server_tls_secret(buf, n, eo_cluster_name(cluster));
	if (tls.client == EO_TLS_SECRET)
		return copy_name(buf, n, tls.server_secret);
	return copy_name(buf, n, NULL);
}

int eo_cluster_operator_client_secret_name(const json_t *cluster, char *buf, size_t n)
{
	struct eo_cluster_tls tls;

	eo_cluster_tls(cluster, &tls);
	if (tls.client == EO_TLS_CERT_MANAGER && tls.client_mtls)
		return eo_name_operator_client_tls_secret(buf, n, eo_cluster_name(cluster));
	if (tls.client == EO_TLS_SECRET && tls.client_mtls)
		return copy_name(buf, n, tls.operator_client_secret);
	return copy_name(buf, n, NULL);
}

int eo_cluster_peer_secret_name(const json_t *cluster, char *buf, size_t n)
{
	struct eo_cluster_tls tls;

	eo_cluster_tls(cluster, &tls);
	if (tls.peer == EO_TLS_CERT_MANAGER)
		return eo_name_peer_tls_secret(buf, n, eo_cluster_name(cluster));
	if (tls.peer == EO_TLS_SECRET)
		return copy_name(buf, n, tls.peer_secret);
	return copy_name(buf, n, NULL);
}

bool eo_cluster_uses_cert_manager(const json_t *cluster)
{
	struct eo_cluster_tls tls;

	eo_cluster_tls(cluster, &tls);
	return tls.client == EO_TLS_CERT_MANAGER || tls.peer == EO_TLS_CERT_MANAGER;
}

bool eo_cluster_auth_enabled(const json_t *cluster)
{
	return eo__json_bool_at(cluster, "spec.auth.enabled", false);
}

const char *eo_cluster_auth_secret(const json_t *cluster)
{
	return eo__json_str_at(cluster, "spec.auth.rootCredentialsSecretRef.name");
}

bool eo_cluster_restore_source(const json_t *cluster, struct eo_snapshot_location *out)
{
	json_t *restore = eo__json_object_at(cluster, "spec.bootstrap.restore");

	eo_location_read(eo__json_at(restore, "source"), out);
	return restore != NULL;
}

json_t *eo_api_default_resources(void)
{
	return json_pack("{s:{s:s, s:s}}", "requests", "cpu", EO_DEFAULT_CPU_REQUEST, "memory",
			 EO_DEFAULT_MEMORY_REQUEST);
}

json_t *eo_cluster_resources(const json_t *cluster)
{
	return eo__spec_resources(cluster);
}

const json_t *eo_cluster_affinity(const json_t *cluster)
{
	return eo__spec_affinity(cluster);
}

const json_t *eo_cluster_topology_spread_constraints(const json_t *cluster)
{
	return eo__spec_topology_spread_constraints(cluster);
}

const json_t *eo_cluster_image_pull_secrets(const json_t *cluster)
{
	return eo__spec_image_pull_secrets(cluster);
}

const json_t *eo_cluster_extra_labels(const json_t *cluster)
{
	return eo__spec_extra_labels(cluster);
}

const json_t *eo_cluster_extra_annotations(const json_t *cluster)
{
	return eo__spec_extra_annotations(cluster);
}

void eo_options_read(const json_t *options, struct eo_etcd_options *out)
{
	int64_t v = 0;

	memset(out, 0, sizeof(*out));
	if (eo__json_int_at(options, "quotaBackendBytes", &v) && v > 0)
		out->quota_backend_bytes = v;
	if (eo__json_int_at(options, "snapshotCount", &v) && v > 0)
		out->snapshot_count = v;
	out->auto_compaction_mode = eo__json_str_at(options, "autoCompactionMode");
	out->auto_compaction_retention = eo__json_str_at(options, "autoCompactionRetention");
}

void eo_cluster_options(const json_t *cluster, struct eo_etcd_options *out)
{
	eo__spec_options(cluster, out);
}

/* --- status --- */

int32_t eo_cluster_ready_members(const json_t *cluster)
{
	int64_t v = 0;

	if (!eo__json_int_at(cluster, "status.readyMembers", &v) || v < 0 || v > INT32_MAX)
		return 0;
	return (int32_t)v;
}

const char *eo_cluster_cluster_id(const json_t *cluster)
{
	const char *s = eo__json_str_at(cluster, "status.clusterID");

	return s != NULL && s[0] != '\0' ? s : NULL;
}

const char *eo_cluster_ca_bundle_digest(const json_t *cluster)
{
	const char *s = eo__json_str_at(cluster, "status.caBundleDigest");

	return s != NULL && s[0] != '\0' ? s : NULL;
}

const char *eo_cluster_cluster_token(const json_t *cluster)
{
	const char *s = eo__json_str_at(cluster, "status.clusterToken");

	return s != NULL && s[0] != '\0' ? s : NULL;
}

bool eo_cluster_auth_latched(const json_t *cluster)
{
	return eo__json_bool_at(cluster, "status.authEnabled", false);
}

const json_t *eo_cluster_observed(const json_t *cluster)
{
	return eo__json_object_at(cluster, "status.observed");
}

bool eo_cluster_progress_deadline(const json_t *cluster, time_t *out)
{
	const char *s = eo__json_str_at(cluster, "status.progressDeadline");

	return s != NULL && eo_time_parse(s, out) == 0;
}

/* --- defaults --- */

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

static int default_issuer_kind(json_t *ref)
{
	if (!json_is_object(ref))
		return 0;
	return default_value(ref, "kind", json_string(EO_DEFAULT_ISSUER_KIND));
}

int eo_cluster_apply_defaults(json_t *cluster)
{
	json_t *spec = eo__json_object_at(cluster, "spec");
	json_t *storage = NULL;

	if (spec == NULL)
		return -1;
	if (default_value(spec, "replicas", json_integer(EO_DEFAULT_REPLICAS)) != 0 ||
	    default_value(spec, "progressDeadlineSeconds",
			  json_integer(EO_DEFAULT_PROGRESS_DEADLINE_SECONDS)) != 0)
		return -1;
	storage = json_object_get(spec, "storage");
	if (storage == NULL) {
		if (default_value(spec, "storage", json_object()) != 0)
			return -1;
		storage = json_object_get(spec, "storage");
	}
	if (json_is_object(storage) &&
	    (default_value(storage, "size", json_string(EO_DEFAULT_STORAGE_SIZE)) != 0 ||
	     default_value(storage, "medium", json_string("")) != 0))
		return -1;
	if (default_issuer_kind(eo__json_at(spec, "tls.client.certManager.serverIssuerRef")) != 0 ||
	    default_issuer_kind(
		eo__json_at(spec, "tls.client.certManager.operatorClientIssuerRef")) != 0 ||
	    default_issuer_kind(eo__json_at(spec, "tls.peer.certManager.issuerRef")) != 0)
		return -1;
	return 0;
}

/* --- validation --- */

/* An optional integer field in [min, max]. */
static int check_int(const json_t *obj, const char *key, const char *path, int64_t min, int64_t max,
		     char *msg, size_t n)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_integer(v))
		return eo__fail(msg, n, "%s: must be an integer", path);
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return eo__fail(msg, n, "%s: must be between %" PRId64 " and %" PRId64, path, min,
				max);
	return 0;
}

/* An optional string field of at most max characters. */
static int check_str(const json_t *obj, const char *key, const char *path, size_t max, char *msg,
		     size_t n)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (!json_is_string(v))
		return eo__fail(msg, n, "%s: must be a string", path);
	if (strlen(json_string_value(v)) > max)
		return eo__fail(msg, n, "%s: must be at most %zu characters", path, max);
	return 0;
}

/* An optional {name} reference; when present name must be a non-empty string. */
static int check_ref(const json_t *obj, const char *key, const char *path, char *msg, size_t n)
{
	json_t *ref = json_object_get(obj, key);
	const char *name = NULL;

	if (ref == NULL)
		return 0;
	name = eo__json_str_at(ref, "name");
	if (!json_is_object(ref) || name == NULL || name[0] == '\0')
		return eo__fail(msg, n, "%s.name: Required value", path);
	if (strlen(name) > SECRET_NAME_MAX)
		return eo__fail(msg, n, "%s.name: must be at most %d characters", path,
				SECRET_NAME_MAX);
	return 0;
}

static int check_issuer(const json_t *obj, const char *key, const char *path, bool required,
			char *msg, size_t n)
{
	json_t *ref = json_object_get(obj, key);
	const char *kind = NULL;

	if (ref == NULL)
		return required ? eo__fail(msg, n, "%s: Required value", path) : 0;
	if (check_ref(obj, key, path, msg, n) != 0)
		return -1;
	kind = eo__json_str_at(ref, "kind");
	if (kind != NULL && strcmp(kind, "Issuer") != 0 && strcmp(kind, "ClusterIssuer") != 0)
		return eo__fail(msg, n, "%s.kind: must be Issuer or ClusterIssuer", path);
	return 0;
}

/* A valid version (version_valid) at least EO_VERSION_MIN_MAJOR.EO_VERSION_MIN_MINOR. */
static bool version_supported(const char *v)
{
	char *end = NULL;
	unsigned long major = strtoul(v, &end, 10), minor;

	if (end == NULL || *end != '.')
		return false;
	minor = strtoul(end + 1, NULL, 10);
	return major > EO_VERSION_MIN_MAJOR ||
	       (major == EO_VERSION_MIN_MAJOR && minor >= EO_VERSION_MIN_MINOR);
}

static bool version_valid(const char *v)
{
	int groups = 0;

	if (v == NULL || strlen(v) > 64)
		return false;
	while (groups < 3) {
		const char *start = v;

		while (*v >= '0' && *v <= '9')
			v++;
		if (v == start)
			return false;
		groups++;
		if (groups < 3) {
			if (*v != '.')
				return false;
			v++;
		}
	}
	return *v == '\0';
}

static int check_quantity_map(const json_t *obj, const char *path, char *msg, size_t n)
{
	const char *key = NULL;
	json_t *v = NULL;
	struct eo_quantity q;

	if (obj == NULL)
		return 0;
	if (!json_is_object(obj))
		return eo__fail(msg, n, "%s: must be an object", path);
	json_object_foreach((json_t *)obj, key, v)
	{
		if (eo_quantity_from_json(v, &q) != 0)
			return eo__fail(msg, n, "%s.%s: must be a quantity such as 500m or 1Gi",
					path, key);
	}
	return 0;
}

static int check_storage(const json_t *spec, char *msg, size_t n)
{
	json_t *storage = json_object_get(spec, "storage");
	json_t *size = NULL;
	const char *medium = NULL;
	struct eo_quantity q;

	if (storage == NULL)
		return 0;
	if (!json_is_object(storage))
		return eo__fail(msg, n, "spec.storage: must be an object");
	size = json_object_get(storage, "size");
	if (size != NULL && eo_quantity_from_json(size, &q) != 0)
		return eo__fail(msg, n, "spec.storage.size: must be a quantity such as 1Gi");
	if (json_object_get(storage, "medium") != NULL) {
		medium = eo__json_str_at(storage, "medium");
		if (medium == NULL ||
		    (medium[0] != '\0' && strcmp(medium, EO_STORAGE_MEDIUM_MEMORY) != 0))
			return eo__fail(msg, n, "spec.storage.medium: must be \"\" or Memory");
	}
	return check_str(storage, "storageClassName", "spec.storage.storageClassName", 253, msg, n);
}

static int check_tls(const json_t *spec, char *msg, size_t n)
{
	json_t *tls = json_object_get(spec, "tls");
	json_t *client = NULL;
	json_t *peer = NULL;

	if (tls == NULL)
		return 0;
	if (!json_is_object(tls))
		return eo__fail(msg, n, "spec.tls: must be an object");
	if (json_object_get(tls, "certificateAuthority") != NULL) {
		const char *ca = eo__json_str_at(tls, "certificateAuthority");

		if (ca == NULL || (strcmp(ca, EO_TLS_CA_PER_CLUSTER_NAME) != 0 &&
				   strcmp(ca, EO_TLS_CA_ISSUER_NAME) != 0))
			return eo__fail(
			    msg, n, "spec.tls.certificateAuthority: must be PerCluster or Issuer");
	}
	client = json_object_get(tls, "client");
	peer = json_object_get(tls, "peer");
	if (client != NULL) {
		json_t *cm = json_object_get(client, "certManager");

		if (!json_is_object(client))
			return eo__fail(msg, n, "spec.tls.client: must be an object");
		if ((json_object_get(client, "serverSecretRef") != NULL) == (cm != NULL))
			return eo__fail(msg, n, "%s", EO_MSG_CLIENT_TLS_ONE_OF);
		if (cm != NULL && json_object_get(client, "operatorClientSecretRef") != NULL)
			return eo__fail(msg, n, "%s", EO_MSG_CLIENT_TLS_CM_OPCLIENT);
		if (check_ref(client, "serverSecretRef", "spec.tls.client.serverSecretRef", msg,
			      n) != 0 ||
		    check_ref(client, "operatorClientSecretRef",
			      "spec.tls.client.operatorClientSecretRef", msg, n) != 0)
			return -1;
		if (cm != NULL &&
		    (check_issuer(cm, "serverIssuerRef",
				  "spec.tls.client.certManager.serverIssuerRef", true, msg,
				  n) != 0 ||
		     check_issuer(cm, "operatorClientIssuerRef",
				  "spec.tls.client.certManager.operatorClientIssuerRef", false, msg,
				  n) != 0))
			return -1;
	}
	if (peer != NULL) {
		json_t *cm = json_object_get(peer, "certManager");

		if (!json_is_object(peer))
			return eo__fail(msg, n, "spec.tls.peer: must be an object");
		if ((json_object_get(peer, "secretRef") != NULL) == (cm != NULL))
			return eo__fail(msg, n, "%s", EO_MSG_PEER_TLS_ONE_OF);
		if (check_ref(peer, "secretRef", "spec.tls.peer.secretRef", msg, n) != 0)
			return -1;
		if (cm != NULL &&
		    check_issuer(cm, "issuerRef", "spec.tls.peer.certManager.issuerRef", true, msg,
				 n) != 0)
			return -1;
	}
	return 0;
}

/*
 * formed: the cluster has a cluster ID. The source is read only at the first bootstrap, so a
 * formed cluster is never stopped for the way its source was written (a cluster restored
 * from a plain-HTTP store before s3.insecure existed keeps running).
 */
static int check_restore(const json_t *spec, bool memory, bool formed, char *msg, size_t n)
{
	json_t *bootstrap = json_object_get(spec, "bootstrap");
	json_t *restore = NULL;
	json_t *source = NULL;
	struct eo_snapshot_location loc;

	if (bootstrap == NULL)
		return 0;
	if (!json_is_object(bootstrap))
		return eo__fail(msg, n, "spec.bootstrap: must be an object");
	restore = json_object_get(bootstrap, "restore");
	if (restore == NULL)
		return 0;
	if (!json_is_object(restore))
		return eo__fail(msg, n, "spec.bootstrap.restore: must be an object");
	source = json_object_get(restore, "source");
	if (eo_restore_source_validate(source, "spec.bootstrap.restore.source", msg, n) != 0)
		return -1;
	eo_location_read(source, &loc);
	if (loc.kind == EO_LOCATION_S3 && loc.key[0] == '\0')
		return eo__fail(msg, n, "%s", EO_MSG_RESTORE_S3_KEY);
	if (loc.kind == EO_LOCATION_PVC && loc.sub_path[0] == '\0')
		return eo__fail(msg, n, "%s", EO_MSG_RESTORE_PVC_SUBPATH);
	if (json_object_get(source, "expectedChecksum") != NULL &&
	    !eo_snapshot_checksum_well_formed(
		json_string_value(json_object_get(source, "expectedChecksum"))))
		return eo__fail(msg, n, "%s", EO_MSG_RESTORE_CHECKSUM);
	if (!formed && eo_location_validate_transport(source, msg, n) != 0)
		return -1;
	if (memory)
		return eo__fail(msg, n, "%s", EO_MSG_RESTORE_MEMORY);
	return 0;
}

static int check_options(const json_t *spec, char *msg, size_t n)
{
	json_t *opts = json_object_get(spec, "options");
	const char *mode = NULL;
	const char *retention = NULL;

	if (opts == NULL)
		return 0;
	if (!json_is_object(opts))
		return eo__fail(msg, n, "spec.options: must be an object");
	if (check_int(opts, "quotaBackendBytes", "spec.options.quotaBackendBytes", 0, INT64_MAX,
		      msg, n) != 0 ||
	    check_int(opts, "snapshotCount", "spec.options.snapshotCount", 1, INT64_MAX, msg, n) !=
		0)
		return -1;
	if (json_object_get(opts, "autoCompactionMode") != NULL) {
		mode = eo__json_str_at(opts, "autoCompactionMode");
		if (mode == NULL ||
		    (strcmp(mode, "periodic") != 0 && strcmp(mode, "revision") != 0))
			return eo__fail(msg, n,
					"spec.options.autoCompactionMode: must be periodic or "
					"revision");
	}
	if (json_object_get(opts, "autoCompactionRetention") != NULL) {
		retention = eo__json_str_at(opts, "autoCompactionRetention");
		if (retention == NULL || strlen(retention) > 64 || !eo_retention_valid(retention))
			return eo__fail(msg, n,
					"spec.options.autoCompactionRetention: must be a duration "
					"such as 1h or 30m, or a whole number");
	}
	return 0;
}

static int check_lists(const json_t *spec, char *msg, size_t n)
{
	json_t *ips = json_object_get(spec, "imagePullSecrets");
	json_t *tsc = json_object_get(spec, "topologySpreadConstraints");
	json_t *tol = json_object_get(spec, "tolerations");
	json_t *sel = json_object_get(spec, "nodeSelector");
	json_t *pcn = json_object_get(spec, "priorityClassName");
	json_t *item = NULL;
	const char *key = NULL;
	size_t i = 0;
	char path[96];

	if (ips != NULL) {
		if (!json_is_array(ips))
			return eo__fail(msg, n, "spec.imagePullSecrets: must be a list");
		json_array_foreach(ips, i, item)
		{
			const char *name = eo__json_str_at(item, "name");

			if (name == NULL || name[0] == '\0')
				return eo__fail(
				    msg, n, "spec.imagePullSecrets[%zu].name: Required value", i);
		}
	}
	if (tol != NULL) {
		if (!json_is_array(tol))
			return eo__fail(msg, n, "spec.tolerations: must be a list");
		json_array_foreach(tol, i, item)
		{
			if (!json_is_object(item))
				return eo__fail(msg, n, "spec.tolerations[%zu]: must be an object",
						i);
		}
	}
	if (sel != NULL) {
		if (!json_is_object(sel))
			return eo__fail(msg, n, "spec.nodeSelector: must be a map of strings");
		json_object_foreach(sel, key, item)
		{
			if (!json_is_string(item))
				return eo__fail(msg, n, "spec.nodeSelector.%s: must be a string",
						key);
		}
	}
	if (pcn != NULL && (!json_is_string(pcn) || strlen(json_string_value(pcn)) > 253))
		return eo__fail(msg, n,
				"spec.priorityClassName: must be a string of at most 253 "
				"characters");
	if (tsc != NULL) {
		if (!json_is_array(tsc))
			return eo__fail(msg, n, "spec.topologySpreadConstraints: must be a list");
		json_array_foreach(tsc, i, item)
		{
			snprintf(path, sizeof(path), "spec.topologySpreadConstraints[%zu]", i);
			if (!json_is_integer(json_object_get(item, "maxSkew")) ||
			    eo__json_str_at(item, "topologyKey") == NULL ||
			    eo__json_str_at(item, "whenUnsatisfiable") == NULL)
				return eo__fail(
				    msg, n,
				    "%s: maxSkew, topologyKey and whenUnsatisfiable are "
				    "required",
				    path);
			if (check_int(item, "maxSkew", path, 1, INT32_MAX, msg, n) != 0)
				return -1;
		}
	}
	return 0;
}

/* One map of additionalMetadata: an object of at most max string values. */
static int check_metadata_map(const json_t *m, const char *path, size_t max, bool labels, char *msg,
			      size_t n)
{
	const char *key = NULL;
	json_t *v = NULL;

	if (m == NULL)
		return 0;
	if (!json_is_object(m))
		return eo__fail(msg, n, "%s: must be an object", path);
	if (json_object_size(m) > max)
		return eo__fail(msg, n, "%s: must have at most %zu entries", path, max);
	json_object_foreach((json_t *)m, key, v)
	{
		if (!eo_name_is_label_key(key))
			return eo__fail(msg, n, "%s",
					labels ? EO_MSG_LABEL_KEY : EO_MSG_ANNOTATION_KEY);
		if (!json_is_string(v))
			return eo__fail(msg, n, "%s: every value must be a string", path);
		if (labels && !eo_name_is_label_value(json_string_value(v)))
			return eo__fail(msg, n, "%s", EO_MSG_LABEL_VALUE);
		if (!labels && json_string_length(v) > EO_EXTRA_ANNOTATION_VALUE_MAX)
			return eo__fail(msg, n, "%s: every value must be at most %d bytes", path,
					EO_EXTRA_ANNOTATION_VALUE_MAX);
	}
	return 0;
}

int eo_extra_metadata_validate(const json_t *am, char *msg, size_t n)
{
	eo__clear(msg, n);
	if (am == NULL)
		return 0;
	if (!json_is_object(am))
		return eo__fail(msg, n, "spec.additionalMetadata: must be an object");
	if (check_metadata_map(json_object_get(am, "labels"), "spec.additionalMetadata.labels",
			       EO_EXTRA_LABELS_MAX, true, msg, n) != 0 ||
	    check_metadata_map(json_object_get(am, "annotations"),
			       "spec.additionalMetadata.annotations", EO_EXTRA_ANNOTATIONS_MAX,
			       false, msg, n) != 0)
		return -1;
	return 0;
}

/* Rules that compare with the previous object (both defaulted). */
static int check_transitions(const json_t *spec, const json_t *old_spec, char *msg, size_t n)
{
	const char *fields[] = {"tls", "auth", "bootstrap"};
	const char *add_remove[] = {EO_MSG_TLS_ADD_REMOVE, EO_MSG_AUTH_ADD_REMOVE,
				    EO_MSG_BOOTSTRAP_ADD_REMOVE};
	const char *immutable[] = {EO_MSG_TLS_IMMUTABLE, EO_MSG_AUTH_IMMUTABLE,
				   EO_MSG_BOOTSTRAP_IMMUTABLE};
	struct eo_storage now, before;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		json_t *a = json_object_get(spec, fields[i]);
		json_t *b = json_object_get(old_spec, fields[i]);

		if ((a != NULL) != (b != NULL))
			return eo__fail(msg, n, "%s", add_remove[i]);
		if (a != NULL && !json_equal(a, b))
			return eo__fail(msg, n, "%s", immutable[i]);
	}
	eo_storage_read(json_object_get(spec, "storage"), &now);
	eo_storage_read(json_object_get(old_spec, "storage"), &before);
	if (now.memory != before.memory)
		return eo__fail(msg, n, "%s", EO_MSG_MEDIUM_IMMUTABLE);
	/* storageClassName may change: the members move onto the new class (plan/storage.h). */
	if (now.size_valid && before.size_valid && eo_quantity_cmp(&now.size_q, &before.size_q) < 0)
		return eo__fail(msg, n, "%s", EO_MSG_SIZE_SHRINK);
	return 0;
}

/* formed: the cluster has a cluster ID (check_restore). */
static int check_spec(const json_t *spec, bool formed, char *msg, size_t n)
{
	json_t *version = json_object_get(spec, "version");
	struct eo_storage storage;
	int64_t replicas = EO_DEFAULT_REPLICAS;

	if (version == NULL)
		return eo__fail(msg, n, "spec.version: Required value");
	if (!version_valid(json_string_value(version)))
		return eo__fail(msg, n, "%s", EO_MSG_VERSION);
	if (!version_supported(json_string_value(version)))
		return eo__fail(msg, n, "%s", EO_MSG_VERSION_MIN);
	if (check_int(spec, "replicas", "spec.replicas", 0, INT32_MAX, msg, n) != 0 ||
	    check_int(spec, "progressDeadlineSeconds", "spec.progressDeadlineSeconds", 1, INT32_MAX,
		      msg, n) != 0 ||
	    check_storage(spec, msg, n) != 0)
		return -1;
	eo__json_int_at(spec, "replicas", &replicas);
	if (replicas > EO_MAX_REPLICAS)
		return eo__fail(msg, n, "%s", EO_MSG_REPLICAS_MAX);
	if (eo_extra_metadata_validate(json_object_get(spec, "additionalMetadata"), msg, n) != 0)
		return -1;
	eo_storage_read(json_object_get(spec, "storage"), &storage);
	if (storage.memory && replicas == 0)
		return eo__fail(msg, n, "%s", EO_MSG_MEMORY_PAUSE);
	if (storage.memory && eo_quantity_sign(&storage.size_q) <= 0)
		return eo__fail(msg, n, "%s", EO_MSG_MEMORY_SIZE);
	if (!storage.memory && eo_quantity_sign(&storage.size_q) <= 0)
		return eo__fail(msg, n, "%s", EO_MSG_PVC_SIZE);
	if (check_tls(spec, msg, n) != 0)
		return -1;
	if (json_object_get(spec, "auth") != NULL) {
		json_t *auth = json_object_get(spec, "auth");
		json_t *enabled = json_object_get(auth, "enabled");

		if (!json_is_object(auth))
			return eo__fail(msg, n, "spec.auth: must be an object");
		if (enabled != NULL && !json_is_boolean(enabled))
			return eo__fail(msg, n, "spec.auth.enabled: must be a boolean");
		if (check_ref(auth, "rootCredentialsSecretRef",
			      "spec.auth.rootCredentialsSecretRef", msg, n) != 0)
			return -1;
		if (json_is_true(enabled) && eo__json_at(spec, "tls.client") == NULL)
			return eo__fail(msg, n, "%s", EO_MSG_AUTH_NEEDS_TLS);
		if (json_is_true(enabled) &&
		    json_object_get(auth, "rootCredentialsSecretRef") == NULL)
			return eo__fail(msg, n, "%s", EO_MSG_AUTH_NEEDS_SECRET);
	}
	if (json_object_get(spec, "deletionPolicy") != NULL) {
		const char *dp = eo__json_str_at(spec, "deletionPolicy");

		if (dp == NULL || (strcmp(dp, EO_DELETION_POLICY_DELETE) != 0 &&
				   strcmp(dp, EO_DELETION_POLICY_RETAIN) != 0))
			return eo__fail(msg, n, "spec.deletionPolicy: must be Delete or Retain");
	}
	if (check_restore(spec, storage.memory, formed, msg, n) != 0 ||
	    check_options(spec, msg, n) != 0 || check_lists(spec, msg, n) != 0)
		return -1;
	if (eo__json_has(spec, "resources")) {
		json_t *r = json_object_get(spec, "resources");

		if (!json_is_object(r))
			return eo__fail(msg, n, "spec.resources: must be an object");
		if (check_quantity_map(json_object_get(r, "limits"), "spec.resources.limits", msg,
				       n) != 0 ||
		    check_quantity_map(json_object_get(r, "requests"), "spec.resources.requests",
				       msg, n) != 0)
			return -1;
	}
	return 0;
}

int eo_cluster_validate(const json_t *cluster, const json_t *old, char *msg, size_t n)
{
	json_t *cur = NULL;
	json_t *prev = NULL;
	json_t *spec = NULL;
	const char *name = NULL, *id = NULL;
	int rc = -1;

	eo__clear(msg, n);
	if (!json_is_object(cluster)) {
		eo__fail(msg, n, "object: must be a JSON object");
		goto out;
	}
	name = eo_meta_name(cluster);
	if (name != NULL && !eo_name_is_dns1035_label(name, EO_CLUSTER_NAME_MAX)) {
		eo__fail(msg, n, "%s", EO_MSG_CLUSTER_NAME);
		goto out;
	}
	spec = eo__json_at(cluster, "spec");
	if (spec == NULL) {
		eo__fail(msg, n, "spec: Required value");
		goto out;
	}
	if (!json_is_object(spec)) {
		eo__fail(msg, n, "spec: must be an object");
		goto out;
	}
	/* Read both objects as the apiserver stores them: with defaults applied. */
	cur = json_deep_copy(cluster);
	if (cur == NULL || eo_cluster_apply_defaults(cur) != 0) {
		eo__fail(msg, n, "out of memory");
		goto out;
	}
	id = eo_cluster_cluster_id(cluster);
	if (check_spec(json_object_get(cur, "spec"), id != NULL && id[0] != '\0', msg, n) != 0)
		goto out;
	if (json_is_object(old) && json_is_object(json_object_get(old, "spec"))) {
		prev = json_deep_copy(old);
		if (prev == NULL || eo_cluster_apply_defaults(prev) != 0) {
			eo__fail(msg, n, "out of memory");
			goto out;
		}
		if (check_transitions(json_object_get(cur, "spec"), json_object_get(prev, "spec"),
				      msg, n) != 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(cur);
	json_decref(prev);
	return rc;
}
