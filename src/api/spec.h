/*
 * Internal helpers of src/api: the pod-shaping fields that EtcdCluster.spec
 * and EtcdMember.spec share (resources, affinity, topology spread, image pull
 * secrets, additional metadata, etcd options), read once for both kinds so
 * the two sets of public accessors (api/cluster.h, api/member.h) cannot drift.
 *
 * obj is the whole object (cluster or member); every pointer returned is
 * borrowed from it. Names use the eo__ prefix: not part of the public API.
 */
#ifndef EO_API_SPEC_H
#define EO_API_SPEC_H

#include <jansson.h>

#include "api/cluster.h"

/* spec.resources when any of limits/requests/claims is non-empty, else the
 * defaults (eo_api_default_resources). New reference; NULL when out of memory. */
json_t *eo__spec_resources(const json_t *obj);

/* spec.affinity when it is an object, else NULL. */
const json_t *eo__spec_affinity(const json_t *obj);

/* spec.topologySpreadConstraints / spec.imagePullSecrets when arrays, else NULL. */
const json_t *eo__spec_topology_spread_constraints(const json_t *obj);
const json_t *eo__spec_image_pull_secrets(const json_t *obj);

/*
 * Scheduling pass-through (additive, optional): spec.tolerations when an array,
 * spec.nodeSelector when an object, spec.priorityClassName when a non-empty string;
 * else NULL.
 */
const json_t *eo__spec_tolerations(const json_t *obj);
const json_t *eo__spec_node_selector(const json_t *obj);
const char *eo__spec_priority_class_name(const json_t *obj);

/* spec.additionalMetadata.{labels,annotations} when objects, else NULL. */
const json_t *eo__spec_extra_labels(const json_t *obj);
const json_t *eo__spec_extra_annotations(const json_t *obj);

/* spec.options read by eo_options_read. */
void eo__spec_options(const json_t *obj, struct eo_etcd_options *out);

#endif
