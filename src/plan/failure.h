/*
 * plan/failure.h - a create, patch or delete the planner asked for that the apiserver refused.
 *
 * The act layer fills a struct eo_plan_failure when a write it made for the plan was answered
 * with an error (a 4xx or 5xx other than the normal outcomes: 404, and 409 AlreadyExists /
 * Conflict), and plans again with it as input (eo_plan_input.failure, eo_mplan_input.failure).
 * The planner then writes the refusal into a condition: Degraded=True on the EtcdCluster,
 * Ready=False on the EtcdMember, with reason CreateFailed, PatchFailed or DeleteFailed and a
 * message that names the object, the HTTP status and the apiserver's own message. The act
 * layer also tells it as a Warning Event with the same reason and message.
 *
 * Pure: no I/O. Everything is borrowed.
 */
#ifndef EO_PLAN_FAILURE_H
#define EO_PLAN_FAILURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#define EO_PLAN_REASON_CREATE_FAILED "CreateFailed"
#define EO_PLAN_REASON_PATCH_FAILED  "PatchFailed"
#define EO_PLAN_REASON_DELETE_FAILED "DeleteFailed"

/* Longest failure message (the apiserver's message is cut to fit). */
#define EO_PLAN_FAILURE_MSG_MAX 640

enum eo_plan_verb { EO_PLAN_VERB_CREATE = 0, EO_PLAN_VERB_PATCH, EO_PLAN_VERB_DELETE };

struct eo_plan_failure {
	enum eo_plan_verb verb;
	const char *kind;   /* "Service", "Pod", "PersistentVolumeClaim", ... */
	const char *name;   /* the object's name; NULL or "" for a generateName create */
	int http_status;    /* the apiserver's answer (>= 400) */
	const char *detail; /* the apiserver's Status message (may be NULL) */
};

/* "CreateFailed", "PatchFailed" or "DeleteFailed". */
const char *eo_plan_failure_reason(const struct eo_plan_failure *f);

/* True when reason is one of the three above (reason may be NULL). */
bool eo_plan_failure_reason_is(const char *reason);

/*
 * "creating Service demo failed: HTTP 422: Service \"demo\" is invalid: ..." into buf (always
 * terminated, cut to n). A nameless create reads "creating an EtcdMember failed: ...".
 */
void eo_plan_failure_message(const struct eo_plan_failure *f, char *buf, size_t n);

/*
 * With f: sets condition type to cond_status with the failure's reason and message on status.
 * Without f: removes condition type when its reason is a failure reason (left by an earlier
 * pass whose write failed, and not rewritten by this pass). 0, or -1 on allocation failure.
 */
int eo_plan_failure_apply(json_t *status, const struct eo_plan_failure *f, const char *type,
			  const char *cond_status, int64_t generation, time_t now);

#endif
