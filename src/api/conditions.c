#include "api/conditions.h"

#include <errno.h>
#include <string.h>

#include "api/timeutil.h"

static bool valid_status(const char *s)
{
	return s != NULL && (strcmp(s, EO_COND_TRUE) == 0 || strcmp(s, EO_COND_FALSE) == 0 ||
			     strcmp(s, EO_COND_UNKNOWN) == 0);
}

static bool str_eq(const json_t *v, const char *s)
{
	const char *have = json_string_value(v);

	return have != NULL && strcmp(have, s) == 0;
}

/* Set obj[key] = string s unless it already is; returns 1 if changed, <0 on error. */
static int set_str(json_t *obj, const char *key, const char *s)
{
	if (str_eq(json_object_get(obj, key), s))
		return 0;
	if (json_object_set_new(obj, key, json_string(s)) != 0)
		return -ENOMEM;
	return 1;
}

static json_t *find_in(const json_t *conds, const char *type, size_t *index)
{
	size_t i = 0;
	json_t *c = NULL;

	if (!json_is_array(conds) || type == NULL)
		return NULL;
	json_array_foreach(conds, i, c)
	{
		if (str_eq(json_object_get(c, "type"), type)) {
			if (index != NULL)
				*index = i;
			return c;
		}
	}
	return NULL;
}

int eo_condition_set(json_t *status, const struct eo_condition *c, time_t now)
{
	char ts[EO_TIME_BUF];
	json_t *conds = NULL;
	json_t *cond = NULL;
	json_t *gen = NULL;
	const char *message = NULL;
	int changed = 0;
	int rc = 0;

	if (!json_is_object(status) || c == NULL || c->type == NULL || c->type[0] == '\0' ||
	    !valid_status(c->status) || c->reason == NULL || c->reason[0] == '\0')
		return -EINVAL;
	if (eo_time_format(now, ts, sizeof(ts)) != 0)
		return -EINVAL;
	message = c->message != NULL ? c->message : "";

	conds = json_object_get(status, "conditions");
	if (conds != NULL && !json_is_array(conds))
		return -EINVAL;
	if (conds == NULL) {
		conds = json_array();
		if (conds == NULL || json_object_set_new(status, "conditions", conds) != 0)
			return -ENOMEM;
	}
	cond = find_in(conds, c->type, NULL);
	if (cond == NULL) {
		cond = json_object();
		if (cond == NULL || json_array_append_new(conds, cond) != 0)
			return -ENOMEM;
		if (json_object_set_new(cond, "type", json_string(c->type)) != 0)
			return -ENOMEM;
		changed = 1;
	}
	if (!str_eq(json_object_get(cond, "status"), c->status) ||
	    !json_is_string(json_object_get(cond, "lastTransitionTime"))) {
		if ((rc = set_str(cond, "lastTransitionTime", ts)) < 0)
			return rc;
		changed |= rc;
	}
	if ((rc = set_str(cond, "status", c->status)) < 0)
		return rc;
	changed |= rc;
	if ((rc = set_str(cond, "reason", c->reason)) < 0)
		return rc;
	changed |= rc;
	if ((rc = set_str(cond, "message", message)) < 0)
		return rc;
	changed |= rc;

	gen = json_object_get(cond, "observedGeneration");
	if (c->observed_generation >= 0) {
		if (!json_is_integer(gen) ||
		    json_integer_value(gen) != (json_int_t)c->observed_generation) {
			if (json_object_set_new(cond, "observedGeneration",
						json_integer(c->observed_generation)) != 0)
				return -ENOMEM;
			changed = 1;
		}
	} else if (gen != NULL) {
		json_object_del(cond, "observedGeneration");
		changed = 1;
	}
	return changed;
}

json_t *eo_condition_find(const json_t *status, const char *type)
{
	if (!json_is_object(status))
		return NULL;
	return find_in(json_object_get(status, "conditions"), type, NULL);
}

const char *eo_condition_status(const json_t *status, const char *type)
{
	return json_string_value(json_object_get(eo_condition_find(status, type), "status"));
}

const char *eo_condition_reason(const json_t *status, const char *type)
{
	return json_string_value(json_object_get(eo_condition_find(status, type), "reason"));
}

bool eo_condition_is_true(const json_t *status, const char *type)
{
	return eo_condition_matches(status, type, EO_COND_TRUE, NULL);
}

bool eo_condition_true_message(const json_t *status, const char *type, const char **message)
{
	if (!eo_condition_is_true(status, type))
		return false;
	if (message != NULL)
		*message =
		    json_string_value(json_object_get(eo_condition_find(status, type), "message"));
	return true;
}

bool eo_condition_matches(const json_t *status, const char *type, const char *cond_status,
			  const char *reason)
{
	json_t *c = eo_condition_find(status, type);

	if (c == NULL || cond_status == NULL || !str_eq(json_object_get(c, "status"), cond_status))
		return false;
	return reason == NULL || str_eq(json_object_get(c, "reason"), reason);
}

int eo_condition_remove(json_t *status, const char *type)
{
	size_t index = 0;
	json_t *conds = NULL;

	if (!json_is_object(status))
		return 0;
	conds = json_object_get(status, "conditions");
	if (find_in(conds, type, &index) == NULL)
		return 0;
	json_array_remove(conds, index);
	return 1;
}
