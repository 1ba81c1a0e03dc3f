/*
 * api/meta.c - readers of object metadata. See meta.h.
 */
#include "api/meta.h"

#include <string.h>

json_t *eo_meta_get(const json_t *obj, const char *key)
{
	return json_object_get(json_object_get(obj, "metadata"), key);
}

static const char *meta_str(const json_t *obj, const char *key)
{
	return json_string_value(eo_meta_get(obj, key));
}

const char *eo_meta_name(const json_t *obj)
{
	return meta_str(obj, "name");
}

const char *eo_meta_namespace(const json_t *obj)
{
	return meta_str(obj, "namespace");
}

const char *eo_meta_uid(const json_t *obj)
{
	return meta_str(obj, "uid");
}

const char *eo_meta_resource_version(const json_t *obj)
{
	return meta_str(obj, "resourceVersion");
}

int64_t eo_meta_generation(const json_t *obj, int64_t absent)
{
	const json_t *g = eo_meta_get(obj, "generation");

	return json_is_integer(g) ? (int64_t)json_integer_value(g) : absent;
}

bool eo_meta_is_deleting(const json_t *obj)
{
	return eo_meta_get(obj, "deletionTimestamp") != NULL;
}

const char *eo_meta_deletion_timestamp(const json_t *obj)
{
	return meta_str(obj, "deletionTimestamp");
}

const char *eo_meta_label(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(eo_meta_get(obj, "labels"), key));
}

const char *eo_meta_annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(eo_meta_get(obj, "annotations"), key));
}

bool eo_meta_has_finalizer(const json_t *obj, const char *finalizer)
{
	const json_t *f = NULL;
	size_t i;

	if (finalizer == NULL)
		return false;
	json_array_foreach(eo_meta_get(obj, "finalizers"), i, f)
	{
		const char *s = json_string_value(f);

		if (s != NULL && strcmp(s, finalizer) == 0)
			return true;
	}
	return false;
}

static bool has_owner(const json_t *obj, const char *owner_uid, bool controller)
{
	const json_t *ref = NULL;
	size_t i;

	if (owner_uid == NULL || owner_uid[0] == '\0')
		return false;
	json_array_foreach(eo_meta_get(obj, "ownerReferences"), i, ref)
	{
		const char *uid = json_string_value(json_object_get(ref, "uid"));

		if ((!controller || json_is_true(json_object_get(ref, "controller"))) &&
		    uid != NULL && strcmp(uid, owner_uid) == 0)
			return true;
	}
	return false;
}

bool eo_meta_controlled_by(const json_t *obj, const char *owner_uid)
{
	return has_owner(obj, owner_uid, true);
}

bool eo_meta_owned_by(const json_t *obj, const char *owner_uid)
{
	return has_owner(obj, owner_uid, false);
}
