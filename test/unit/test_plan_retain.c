/*
 * Unit tests for plan/retain.c: spec.deletionPolicy Retain. A table over the cluster (policy,
 * finalizer, being deleted, migrating) and its members' PVCs (owned by the member, released,
 * absent, being deleted): add or drop the finalizer, release the next PVC (the patch keeps any
 * other owner reference and carries the PVC's resourceVersion), or let the cluster go with an
 * Event naming the PVCs kept. Delete (or no policy) never holds a deleting cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/names.h"
#include "plan/retain.h"
#include "support/testutil.h"
#include "support/tu_main.h"

enum pv { PV_NONE, PV_OWNED, PV_RELEASED, PV_DELETING, PV_OWNED_TOO };

static json_t *cluster(const char *policy, bool finalizer, bool deleting, bool migrating)
{
	json_t *c = tu_jsonq("{'metadata':{'name':'demo','namespace':'default','uid':'cu',"
			     "'finalizers':['example.com/other']},'spec':{'version':'3.6.11'}}");
	json_t *md = json_object_get(c, "metadata");

	if (policy != NULL)
		json_object_set_new(json_object_get(c, "spec"), "deletionPolicy",
				    json_string(policy));
	if (finalizer)
		json_array_append_new(json_object_get(md, "finalizers"),
				      json_string(EO_FINALIZER_RETAIN_DATA));
	if (deleting)
		json_object_set_new(md, "deletionTimestamp", json_string("2026-06-02T10:00:00Z"));
	if (migrating) {
		json_t *a = json_object();

		json_object_set_new(a, EO_ANNOTATION_MIGRATING, json_string("true"));
		json_object_set_new(md, "annotations", a);
	}
	return c;
}

static json_t *member(const char *name)
{
	return json_pack("{s:{s:s, s:s, s:s}, s:{s:s}}", "metadata", "name", name, "namespace",
			 "default", "uid", name, "spec", "clusterName", "demo");
}

/* PVC data-<member>, owned (or not any more) by the EtcdMember whose UID is its name. */
static json_t *pvc(const char *mname, enum pv kind)
{
	char name[64];
	json_t *p = NULL, *refs = json_array();

	snprintf(name, sizeof(name), "data-%s", mname);
	if (kind == PV_OWNED_TOO)
		json_array_append_new(refs, tu_jsonq("{'apiVersion':'v1','kind':'ConfigMap',"
						     "'name':'keep','uid':'cm-uid'}"));
	if (kind == PV_OWNED || kind == PV_OWNED_TOO || kind == PV_DELETING)
		json_array_append_new(refs, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}",
						      "apiVersion", EO_API_GROUP_VERSION, "kind",
						      "EtcdMember", "name", mname, "uid", mname,
						      "controller", 1, "blockOwnerDeletion", 1));
	p = json_pack("{s:{s:s, s:s, s:s, s:{s:s, s:s}, s:o}}", "metadata", "name", name,
		      "namespace", "default", "resourceVersion", "41", "labels", EO_LABEL_CLUSTER,
		      "demo", EO_LABEL_COMPONENT, mname, "ownerReferences", refs);
	if (kind == PV_DELETING)
		json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
				    json_string("2026-06-02T10:00:00Z"));
	return p;
}

struct row {
	const char *what;
	const char *policy;
	bool finalizer, deleting, migrating;
	enum pv pvcs[3]; /* members demo-a, demo-b, demo-c; PV_NONE past the last */
	int n;
	enum eo_retain_action want;
	const char *pvc;     /* RELEASE_PVC: which */
	const char *refs;    /* RELEASE_PVC: the ownerReferences the patch writes */
	const char *message; /* a part of the message */
};

static const struct row rows[] = {
    {"Retain, no finalizer yet: add it",
     "Retain",
     false,
     false,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_ADD_FINALIZER,
     NULL,
     NULL,
     EO_FINALIZER_RETAIN_DATA},
    {"Retain with its finalizer: nothing",
     "Retain",
     true,
     false,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"no policy: nothing",
     NULL,
     false,
     false,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"Delete: nothing",
     "Delete",
     false,
     false,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"back to Delete: the finalizer goes",
     "Delete",
     true,
     false,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "not Retain"},
    {"migrating: hands off",
     "Retain",
     false,
     false,
     true,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"Delete, being deleted: nothing holds it",
     "Delete",
     false,
     true,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"no policy, being deleted: nothing holds it",
     NULL,
     false,
     true,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"Retain deleted before its finalizer: nothing can be done",
     "Retain",
     false,
     true,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_NONE,
     NULL,
     NULL,
     NULL},
    {"Retain, deleting: release the first owned PVC",
     "Retain",
     true,
     true,
     false,
     {PV_RELEASED, PV_OWNED, PV_OWNED},
     3,
     EO_RETAIN_RELEASE_PVC,
     "data-demo-b",
     "null",
     "PVC data-demo-b"},
    {"Retain, deleting: another owner reference stays",
     "Retain",
     true,
     true,
     false,
     {PV_OWNED_TOO},
     1,
     EO_RETAIN_RELEASE_PVC,
     "data-demo-a",
     "[{'apiVersion':'v1','kind':'ConfigMap','name':'keep','uid':'cm-uid'}]",
     "data-demo-a"},
    {"Retain, deleting, all released: the finalizer goes, naming them",
     "Retain",
     true,
     true,
     false,
     {PV_RELEASED, PV_RELEASED, PV_RELEASED},
     3,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "kept 3 data PVC(s) of cluster demo without owner references, labels unchanged: "
     "data-demo-a, data-demo-b, data-demo-c"},
    {"Retain, deleting: a PVC already being deleted cannot be kept",
     "Retain",
     true,
     true,
     false,
     {PV_RELEASED, PV_DELETING},
     2,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "kept 1 data PVC(s) of cluster demo without owner references, labels unchanged: "
     "data-demo-a"},
    {"Retain, deleting, no PVC (memory, or never created)",
     "Retain",
     true,
     true,
     false,
     {PV_NONE},
     1,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "no data PVC to keep"},
    {"Retain, deleting, no member",
     "Retain",
     true,
     true,
     false,
     {PV_NONE},
     0,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "no data PVC to keep"},
    {"switched to Delete while deleting: the finalizer goes, PVCs untouched",
     "Delete",
     true,
     true,
     false,
     {PV_OWNED},
     1,
     EO_RETAIN_DROP_FINALIZER,
     NULL,
     NULL,
     "go with the cluster"},
};

static void run_row(const struct row *r)
{
	static const char *const mnames[] = {"demo-a", "demo-b", "demo-c"};
	struct eo_plan_member pm[3] = {{0}};
	json_t *objs[6] = {NULL};
	json_t *c = cluster(r->policy, r->finalizer, r->deleting, r->migrating);
	struct eo_retain_input in = {.cluster = c, .members = pm, .n_members = (size_t)r->n};
	struct eo_retain_result out;

	for (int i = 0; i < r->n; i++) {
		objs[2 * i] = member(mnames[i]);
		pm[i].member = objs[2 * i];
		if (r->pvcs[i] != PV_NONE)
			pm[i].pvc = objs[2 * i + 1] = pvc(mnames[i], r->pvcs[i]);
	}
	if (eo_plan_retain(&in, &out) != 0)
		fail_msg("%s: plan failed", r->what);
	if (out.action != r->want)
		fail_msg("%s: action %s, want %s (%s)", r->what, eo_retain_action_name(out.action),
			 eo_retain_action_name(r->want), out.message);
	if (r->message != NULL && strstr(out.message, r->message) == NULL)
		fail_msg("%s: message \"%s\" lacks \"%s\"", r->what, out.message, r->message);
	if (r->want == EO_RETAIN_RELEASE_PVC) {
		json_t *md = json_object_get(out.patch, "metadata");
		json_t *want = strcmp(r->refs, "null") == 0 ? json_null() : tu_jsonq(r->refs);

		assert_string_equal(out.pvc, r->pvc);
		assert_string_equal(out.event_reason, EO_PLAN_REASON_PVC_RELEASED);
		assert_string_equal(json_string_value(json_object_get(md, "resourceVersion")),
				    "41");
		tu_assert_json_equal(json_object_get(md, "ownerReferences"), want, r->what);
		/* only the owner references and the precondition: the labels stay as they are */
		assert_int_equal(json_object_size(md), 2);
		assert_int_equal(json_object_size(out.patch), 1);
		json_decref(want);
	} else {
		assert_null(out.patch);
	}
	if (r->want == EO_RETAIN_DROP_FINALIZER && r->deleting &&
	    strcmp(r->policy, "Retain") == 0) {
		assert_true(out.retained);
		assert_string_equal(out.event_reason, EO_PLAN_REASON_DATA_RETAINED);
	} else {
		assert_false(out.retained);
	}
	eo_plan_retain_clear(&out);
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		json_decref(objs[i]);
	json_decref(c);
}

static void test_retain_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i]);
}

/* Releasing every PVC in turn ends in the finalizer's drop: the loop the controller runs. */
static void test_release_until_done(void **state)
{
	static const char *const mnames[] = {"demo-a", "demo-b", "demo-c"};
	struct eo_plan_member pm[3] = {{0}};
	json_t *ms[3], *ps[3];
	json_t *c = cluster("Retain", true, true, false);
	struct eo_retain_input in = {.cluster = c, .members = pm, .n_members = 3};
	struct eo_retain_result out;
	int releases = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		pm[i].member = ms[i] = member(mnames[i]);
		pm[i].pvc = ps[i] = pvc(mnames[i], PV_OWNED);
	}
	for (;;) {
		assert_int_equal(eo_plan_retain(&in, &out), 0);
		if (out.action != EO_RETAIN_RELEASE_PVC)
			break;
		for (int i = 0; i < 3; i++)
			if (strcmp(out.pvc, json_string_value(json_object_get(
						json_object_get(ps[i], "metadata"), "name"))) == 0)
				json_object_set_new(json_object_get(ps[i], "metadata"),
						    "ownerReferences", json_array());
		eo_plan_retain_clear(&out);
		assert_true(++releases <= 3);
	}
	assert_int_equal(releases, 3);
	assert_int_equal(out.action, EO_RETAIN_DROP_FINALIZER);
	assert_true(out.retained);
	assert_non_null(strstr(out.message, "data-demo-a, data-demo-b, data-demo-c"));
	eo_plan_retain_clear(&out);
	for (int i = 0; i < 3; i++) {
		json_decref(ms[i]);
		json_decref(ps[i]);
	}
	json_decref(c);
}

/* The finalizer test reads only our own finalizer, among others. */
static void test_has_finalizer(void **state)
{
	json_t *a = cluster("Retain", true, false, false),
	       *b = cluster("Retain", false, false, false);

	(void)state;
	assert_true(eo_plan_retain_has_finalizer(a));
	assert_false(eo_plan_retain_has_finalizer(b));
	json_decref(a);
	json_decref(b);
}

TU_MAIN(test_retain_table, test_release_until_done, test_has_finalizer)
