/*
 * api/spec.c - the spec fields EtcdCluster and EtcdMember share (spec.h).
 */
#include "api/spec.h"

#include "api/jsonpath.h"

static bool non_empty_container(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v) > 0) ||
	       (json_is_array(v) && json_array_size(v) > 0);
}

json_t *eo__spec_resources(const json_t *obj)
{
	json_t *r = eo__json_object_at(obj, "spec.resources");

	if (r != NULL && (non_empty_container(json_object_get(r, "limits")) ||
			  non_empty_container(json_object_get(r, "requests")) ||
			  non_empty_container(json_object_get(r, "claims"))))
		return json_deep_copy(r);
	return eo_api_default_resources();
}

const json_t *eo__spec_affinity(const json_t *obj)
{
	return eo__json_object_at(obj, "spec.affinity");
}

static const json_t *array_at(const json_t *obj, const char *path)
{
	json_t *v = eo__json_at(obj, path);

	return json_is_array(v) ? v : NULL;
}

const json_t *eo__spec_topology_spread_constraints(const json_t *obj)
{
	return array_at(obj, "spec.topologySpreadConstraints");
}

const json_t *eo__spec_image_pull_secrets(const json_t *obj)
{
	return array_at(obj, "spec.imagePullSecrets");
}

const json_t *eo__spec_tolerations(const json_t *obj)
{
	return array_at(obj, "spec.tolerations");
}

const json_t *eo__spec_node_selector(const json_t *obj)
{
	return eo__json_object_at(obj, "spec.nodeSelector");
}

const char *eo__spec_priority_class_name(const json_t *obj)
{
	const char *s = eo__json_str_at(obj, "spec.priorityClassName");

	return s != NULL && s[0] != '\0' ? s : NULL;
}

const json_t *eo__spec_extra_labels(const json_t *obj)
{
	return eo__json_object_at(obj, "spec.additionalMetadata.labels");
}

const json_t *eo__spec_extra_annotations(const json_t *obj)
{
	return eo__json_object_at(obj, "spec.additionalMetadata.annotations");
}

void eo__spec_options(const json_t *obj, struct eo_etcd_options *out)
{
	eo_options_read(eo__json_at(obj, "spec.options"), out);
}
