/*
 * plan/failure.c - refused writes as conditions. See failure.h.
 */
#include "plan/failure.h"

#include <stdio.h>
#include <string.h>

#include "api/conditions.h"

const char *eo_plan_failure_reason(const struct eo_plan_failure *f)
{
	switch (f->verb) {
	case EO_PLAN_VERB_PATCH:
		return EO_PLAN_REASON_PATCH_FAILED;
	case EO_PLAN_VERB_DELETE:
		return EO_PLAN_REASON_DELETE_FAILED;
	default:
		return EO_PLAN_REASON_CREATE_FAILED;
	}
}

bool eo_plan_failure_reason_is(const char *reason)
{
	return reason != NULL && (strcmp(reason, EO_PLAN_REASON_CREATE_FAILED) == 0 ||
				  strcmp(reason, EO_PLAN_REASON_PATCH_FAILED) == 0 ||
				  strcmp(reason, EO_PLAN_REASON_DELETE_FAILED) == 0);
}

void eo_plan_failure_message(const struct eo_plan_failure *f, char *buf, size_t n)
{
	static const char *const verbs[] = {"creating", "patching", "deleting"};
	const char *verb = (unsigned)f->verb < 3 ? verbs[f->verb] : verbs[0];
	const char *kind = f->kind != NULL ? f->kind : "object";
	const char *detail = f->detail != NULL && f->detail[0] ? f->detail : "(no message)";

	if (n == 0)
		return;
	if (f->name != NULL && f->name[0] != '\0')
		snprintf(buf, n, "%s %s %s failed: HTTP %d: %s", verb, kind, f->name,
			 f->http_status, detail);
	else
		snprintf(buf, n, "%s a new %s failed: HTTP %d: %s", verb, kind, f->http_status,
			 detail);
}

int eo_plan_failure_apply(json_t *status, const struct eo_plan_failure *f, const char *type,
			  const char *cond_status, int64_t generation, time_t now)
{
	char msg[EO_PLAN_FAILURE_MSG_MAX];
	struct eo_condition c = {type, cond_status, NULL, msg, generation};

	if (status == NULL)
		return -1;
	if (f == NULL) {
		if (eo_plan_failure_reason_is(eo_condition_reason(status, type)))
			return eo_condition_remove(status, type) < 0 ? -1 : 0;
		return 0;
	}
	eo_plan_failure_message(f, msg, sizeof(msg));
	c.reason = eo_plan_failure_reason(f);
	return eo_condition_set(status, &c, now) < 0 ? -1 : 0;
}
