/*
 * api/meta.h - one vocabulary for the metadata of any Kubernetes object (name,
 * namespace, uid, resourceVersion, generation, deletion, labels, annotations,
 * finalizers, the controller reference), for every layer. It reads jansson
 * trees only: the pure layers (src/plan, src/desired) use it without the HTTP
 * client.
 *
 * Every reader takes any json_t, including NULL: an object without metadata,
 * with a JSON null or a non-object in its place, or without the field reads as
 * "absent" (NULL, false, or the caller's default). Returned pointers are
 * borrowed from the tree and valid while it is neither changed nor freed.
 */
#ifndef EO_API_META_H
#define EO_API_META_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

/* metadata.<key> of any JSON type (null included), or NULL. */
json_t *eo_meta_get(const json_t *obj, const char *key);

/* metadata.name, .namespace, .uid, .resourceVersion when a string, else NULL. */
const char *eo_meta_name(const json_t *obj);
const char *eo_meta_namespace(const json_t *obj);
const char *eo_meta_uid(const json_t *obj);
const char *eo_meta_resource_version(const json_t *obj);

/* metadata.generation when an integer, else absent. */
int64_t eo_meta_generation(const json_t *obj, int64_t absent);

/*
 * True when metadata.deletionTimestamp is there, whatever its value (a JSON null
 * counts). eo_meta_deletion_timestamp() is the value when a string, else NULL.
 */
bool eo_meta_is_deleting(const json_t *obj);
const char *eo_meta_deletion_timestamp(const json_t *obj);

/* metadata.labels[key] / metadata.annotations[key] when a string, else NULL. */
const char *eo_meta_label(const json_t *obj, const char *key);
const char *eo_meta_annotation(const json_t *obj, const char *key);

/* True when the string finalizer is in metadata.finalizers. */
bool eo_meta_has_finalizer(const json_t *obj, const char *finalizer);

/*
 * True when an owner reference with controller: true carries owner_uid. False
 * for a NULL or empty owner_uid.
 */
bool eo_meta_controlled_by(const json_t *obj, const char *owner_uid);

/* True when any owner reference (controller or not) carries owner_uid; false for NULL or "". */
bool eo_meta_owned_by(const json_t *obj, const char *owner_uid);

#endif
