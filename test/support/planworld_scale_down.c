/*
 * support/planworld_scale_down.c - see planworld_scale_down.h. Moved verbatim from
 * test_plan_scale_down.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "support/planworld_scale_down.h"

json_t *pwd_member(const struct pwd_m *d)
{
	json_t *m = json_pack(
	    "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:[s], s:[{s:s, s:s, s:s, s:s, "
	    "s:b}]}, s:{s:s, s:s, s:b, s:s, s:s}, s:{s:b}}",
	    "apiVersion", EO_API_GROUP_VERSION, "kind", "EtcdMember", "metadata", "name", d->name,
	    "namespace", "default", "uid", d->name, "creationTimestamp", d->created, "finalizers",
	    EO_FINALIZER_MEMBER_CLEANUP, "ownerReferences", "apiVersion", EO_API_GROUP_VERSION,
	    "kind", "EtcdCluster", "name", "demo", "uid", "c-uid", "controller", 1, "spec",
	    "clusterName", "demo", "version", "3.6.11", "bootstrap", 0, "initialCluster",
	    d->pending ? "" : "x=y", "clusterToken", "tok", "status", "isVoter", d->voter);

	assert_non_null(m);
	if (d->deleting)
		json_object_set_new(json_object_get(m, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	return m;
}

json_t *pwd_pod(const struct pwd_m *d)
{
	bool ready = d->pod == PWD_READY;

	if (d->pod == PWD_NO_POD)
		return NULL;
	return json_pack("{s:{s:s, s:s, s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name",
			 d->name, "namespace", "default", "uid", "pod-uid", "creationTimestamp",
			 d->created, "status", "phase", ready ? "Running" : "Pending", "conditions",
			 "type", "Ready", "status", ready ? "True" : "False");
}

void pwd_set_init(struct pwd_set *s, const struct pwd_m *ms)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < PWD_MAXM && ms[i].name != NULL; i++) {
		s->pm[i].member = pwd_member(&ms[i]);
		s->pm[i].pod = pwd_pod(&ms[i]);
		s->n++;
	}
}

void pwd_set_free(struct pwd_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		json_decref((json_t *)s->pm[i].member);
		json_decref((json_t *)s->pm[i].pod);
	}
}
