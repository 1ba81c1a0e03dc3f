/*
 * plan/nodeloss.c - a member's node in trouble. See nodeloss.h.
 */
#include "plan/nodeloss.h"

#include <stdio.h>
#include <string.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "plan/podissue.h"

static bool same_str(const char *a, const char *b);

static const json_t *at(const json_t *o, const char *a, const char *b)
{
	return json_object_get(json_object_get(o, a), b);
}

/* The element of array arr whose key equals want, or NULL. */
static const json_t *find_by(const json_t *arr, const char *key, const char *want)
{
	const json_t *e = NULL;
	size_t i;

	json_array_foreach(arr, i, e)
	{
		const char *v = json_string_value(json_object_get(e, key));

		if (v != NULL && strcmp(v, want) == 0)
			return e;
	}
	return NULL;
}

static const json_t *node_ready_condition(const json_t *node)
{
	return find_by(at(node, "status", "conditions"), "type", "Ready");
}

bool eo_plan_node_lost(const json_t *node, bool node_absent)
{
	const char *st = NULL;

	if (node_absent)
		return true;
	if (node == NULL)
		return false; /* not looked up: nothing is known */
	st = json_string_value(json_object_get(node_ready_condition(node), "status"));
	return st == NULL || strcmp(st, "True") != 0;
}

/* *since from an RFC 3339 string; false when absent or malformed. */
static bool parse_since(const char *s, time_t *since)
{
	return s != NULL && eo_time_parse(s, since) == 0;
}

/* Fills due and left_s from a clock (known or not). */
static void clock_from(struct eo_node_verdict *v, bool known, time_t since, long grace_s,
		       time_t now)
{
	v->left_s = -1;
	v->due = false;
	if (!known)
		return;
	if (now - since >= grace_s) {
		v->due = true;
		v->left_s = 0;
	} else {
		v->left_s = (long)(grace_s - (now - since));
	}
}

static void since_text(char *buf, size_t n, bool known, time_t since)
{
	char ts[EO_TIME_BUF];

	if (known && eo_time_format(since, ts, sizeof(ts)) == 0)
		snprintf(buf, n, " since %s", ts);
	else
		snprintf(buf, n, " (since when is not known)");
}

static bool gone(const json_t *pod, long grace_s, time_t now, struct eo_node_verdict *v)
{
	const json_t *ready = find_by(at(pod, "status", "conditions"), "type", "Ready");
	const char *rs = json_string_value(json_object_get(ready, "status"));
	time_t since = 0;
	bool known = parse_since(eo_meta_deletion_timestamp(pod), &since);
	char s[64];

	if (!known && rs != NULL && strcmp(rs, "True") != 0)
		known = parse_since(json_string_value(json_object_get(ready, "lastTransitionTime")),
				    &since);
	v->trouble = EO_NODE_GONE;
	v->lost = true;
	clock_from(v, known, since, grace_s, now);
	since_text(s, sizeof(s), known, since);
	snprintf(v->why, sizeof(v->why), "node %s is gone (no Node object); the Pod is %s%s",
		 v->node, eo_meta_is_deleting(pod) ? "terminating" : "not ready", s);
	return true;
}

static bool not_ready(const json_t *node, long grace_s, time_t now, struct eo_node_verdict *v)
{
	const json_t *c = node_ready_condition(node);
	const char *st = json_string_value(json_object_get(c, "status"));
	time_t since = 0;
	bool known =
	    c != NULL &&
	    parse_since(json_string_value(json_object_get(c, "lastTransitionTime")), &since);
	char s[64];

	v->trouble = EO_NODE_NOT_READY;
	v->lost = true;
	clock_from(v, known, since, grace_s, now);
	since_text(s, sizeof(s), known, since);
	snprintf(v->why, sizeof(v->why), "node %s is NotReady (Ready=%s)%s", v->node,
		 st != NULL ? st : "missing", s);
	return true;
}

static bool cordoned(const json_t *node, long grace_s, time_t now, struct eo_node_verdict *v)
{
	const json_t *taint = find_by(at(node, "spec", "taints"), "key", EO_TAINT_UNSCHEDULABLE);
	time_t since = 0;
	bool known = parse_since(json_string_value(json_object_get(taint, "timeAdded")), &since);
	char s[64];

	v->trouble = EO_NODE_CORDONED;
	clock_from(v, known, since, grace_s, now);
	since_text(s, sizeof(s), known, since);
	snprintf(v->why, sizeof(v->why), "node %s is cordoned (unschedulable)%s", v->node, s);
	return true;
}

const char *eo_plan_member_node_name(const json_t *pod, const json_t *pvc)
{
	const char *nn = json_string_value(at(pod, "spec", "nodeName"));

	if (pod == NULL)
		return NULL;
	if (nn == NULL || nn[0] == '\0')
		nn = eo_meta_annotation(pvc, EO_ANNOTATION_SELECTED_NODE);
	return nn != NULL && nn[0] != '\0' ? nn : NULL;
}

const char *eo_plan_member_pv_to_read(const json_t *pod, const json_t *pvc)
{
	const char *nn = json_string_value(at(pod, "spec", "nodeName"));
	const char *sel = eo_meta_annotation(pvc, EO_ANNOTATION_SELECTED_NODE);
	const char *vol = json_string_value(at(pvc, "spec", "volumeName"));

	if (pod == NULL || (nn != NULL && nn[0] != '\0') || (sel != NULL && sel[0] != '\0'))
		return NULL;
	return vol != NULL && vol[0] != '\0' ? vol : NULL;
}

const char *eo_plan_pv_node_name(const json_t *pv)
{
	const json_t *req = json_object_get(at(pv, "spec", "nodeAffinity"), "required");
	const json_t *terms = json_object_get(req, "nodeSelectorTerms");
	const json_t *exprs = json_object_get(json_array_get(terms, 0), "matchExpressions");
	const json_t *e = json_array_get(exprs, 0);
	const json_t *vals = json_object_get(e, "values");
	const char *key = json_string_value(json_object_get(e, "key"));
	const char *op = json_string_value(json_object_get(e, "operator"));
	const char *host = json_string_value(json_array_get(vals, 0));

	if (json_array_size(terms) != 1 || json_array_size(exprs) != 1 ||
	    json_array_size(vals) != 1 || !same_str(key, EO_LABEL_HOSTNAME) ||
	    !same_str(op, "In") || host == NULL || host[0] == '\0')
		return NULL;
	return host;
}

bool eo_plan_member_node_trouble(const struct eo_plan_member *pm, const struct eo_plan_node *pn,
				 long grace_s, time_t now, struct eo_node_verdict *v)
{
	const char *nn = NULL, *ev = NULL;
	const json_t *node = pn != NULL ? pn->node : NULL;

	memset(v, 0, sizeof(*v));
	v->left_s = -1;
	if (pm == NULL || pm->member == NULL || pm->pod == NULL ||
	    eo_member_is_deleting(pm->member) || eo_member_is_pending(pm->member) ||
	    eo_member_dormant(pm->member))
		return false;
	nn = eo_plan_member_node_name(pm->pod, pm->pvc);
	if (nn == NULL && pn != NULL && pn->pv != NULL)
		nn = node != NULL ? eo_meta_name(node) : eo_plan_pv_node_name(pn->pv);
	if (nn == NULL || pn == NULL || (node == NULL && !pn->absent))
		return false;
	if (snprintf(v->node, sizeof(v->node), "%s", nn) >= (int)sizeof(v->node))
		return false;
	if (grace_s < 0)
		grace_s = 0;
	if (pn->absent)
		return gone(pm->pod, grace_s, now, v);
	if (eo_plan_node_lost(node, false))
		return not_ready(node, grace_s, now, v);
	ev = eo_meta_annotation(node, EO_ANNOTATION_EVACUATE);
	if (ev != NULL && strcmp(ev, "true") == 0) {
		/*
		 * Only off a cordoned node: on a schedulable one the replacement could land on
		 * the same node and be evacuated in turn, for ever.
		 */
		bool cordoned_too = json_is_true(at(node, "spec", "unschedulable"));

		v->trouble = EO_NODE_EVACUATE;
		v->due = cordoned_too;
		v->left_s = cordoned_too ? 0 : -1;
		snprintf(v->why, sizeof(v->why), "node %s is annotated %s=true%s", v->node,
			 EO_ANNOTATION_EVACUATE,
			 cordoned_too ? " and cordoned"
				      : " but not cordoned: nothing moves until it is (kubectl "
					"cordon), or the replacement could land on it again");
		return true;
	}
	if (json_is_true(at(node, "spec", "unschedulable")))
		return cordoned(node, grace_s, now, v);
	memset(v, 0, sizeof(*v));
	v->left_s = -1;
	return false;
}

/* The status of a Node's Ready condition, "" when it has none. */
static const char *ready_status(const json_t *node)
{
	const char *st = json_string_value(json_object_get(node_ready_condition(node), "status"));

	return st != NULL ? st : "";
}

static bool same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Whether two JSON values (either may be NULL) are equal. */
static bool same_json(const json_t *a, const json_t *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && json_equal(a, b));
}

/* Whether a Node is in any trouble a member on it could be told about. */
static bool node_troubled(const json_t *node)
{
	return strcmp(ready_status(node), "True") != 0 ||
	       json_is_true(at(node, "spec", "unschedulable")) ||
	       eo_meta_annotation(node, EO_ANNOTATION_EVACUATE) != NULL;
}

bool eo_plan_node_change_matters(const json_t *old_node, const json_t *new_node)
{
	if (new_node == NULL)
		return old_node != NULL;
	if (old_node == NULL)
		return node_troubled(new_node);
	return strcmp(ready_status(old_node), ready_status(new_node)) != 0 ||
	       json_is_true(at(old_node, "spec", "unschedulable")) !=
		   json_is_true(at(new_node, "spec", "unschedulable")) ||
	       !same_json(at(old_node, "spec", "taints"), at(new_node, "spec", "taints")) ||
	       !same_str(eo_meta_annotation(old_node, EO_ANNOTATION_EVACUATE),
			 eo_meta_annotation(new_node, EO_ANNOTATION_EVACUATE));
}

/* Appends "ns/cluster" of obj to keys unless there already. 0, or -1 on OOM. */
static int add_cluster_key(json_t *keys, const json_t *obj)
{
	const char *ns = eo_meta_namespace(obj), *cl = eo_meta_label(obj, EO_LABEL_CLUSTER);
	const json_t *k = NULL;
	char key[2 * EO_PLAN_NAME_MAX + 2];
	size_t i;

	if (ns == NULL || cl == NULL || cl[0] == '\0' ||
	    snprintf(key, sizeof(key), "%s/%s", ns, cl) >= (int)sizeof(key))
		return 0;
	json_array_foreach(keys, i, k)
	{
		if (same_str(json_string_value(k), key))
			return 0;
	}
	return json_array_append_new(keys, json_string(key));
}

int eo_plan_clusters_on_node(const json_t *pods, const json_t *pvcs, const char *node, json_t *keys)
{
	const json_t *o = NULL;
	size_t i;

	if (node == NULL || node[0] == '\0' || !json_is_array(keys))
		return node == NULL || node[0] == '\0' ? 0 : -1;
	json_array_foreach(pods, i, o)
	{
		if (same_str(json_string_value(at(o, "spec", "nodeName")), node) &&
		    add_cluster_key(keys, o) != 0)
			return -1;
	}
	json_array_foreach(pvcs, i, o)
	{
		if (same_str(eo_meta_annotation(o, EO_ANNOTATION_SELECTED_NODE), node) &&
		    add_cluster_key(keys, o) != 0)
			return -1;
	}
	return 0;
}

long eo_plan_node_next_due_ms(const struct eo_plan_input *in)
{
	long grace = eo_cluster_node_loss_grace_seconds(in->cluster), best = -1;

	for (size_t i = 0; in->nodes != NULL && i < in->n_members; i++) {
		struct eo_node_verdict v;

		if (eo_plan_member_node_trouble(&in->members[i], &in->nodes[i], grace, in->now,
						&v) &&
		    !v.due && v.left_s >= 0 && (best < 0 || v.left_s < best))
			best = v.left_s;
	}
	return best < 0 ? -1 : (best + 1) * 1000;
}

bool eo_plan_node_move_first(const struct eo_plan_member *pm, const struct eo_node_verdict *v)
{
	return pm != NULL && v != NULL && !v->lost &&
	       (v->trouble == EO_NODE_CORDONED || v->trouble == EO_NODE_EVACUATE) &&
	       eo_plan_member_serving(pm->member, pm->pod);
}

const struct eo_plan_member *eo_plan_node_joining(const struct eo_plan_member *members, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *m = members[i].member;

		if (m == NULL || eo_member_is_deleting(m) || eo_member_dormant(m))
			continue;
		if (eo_member_is_pending(m) || !eo_member_is_voter(m))
			return &members[i];
	}
	return NULL;
}

bool eo_plan_node_move_blocked(const struct eo_plan_member *joining, time_t now, char *why,
			       size_t n)
{
	struct eo_pod_issue is;

	if (why != NULL && n > 0)
		why[0] = '\0';
	if (joining == NULL || joining->pod == NULL ||
	    !eo_plan_pod_issue(joining->member, joining->pod, joining->pvc, now, &is) ||
	    (is.kind != EO_POD_ISSUE_UNSCHEDULABLE && is.kind != EO_POD_ISSUE_VOLUME_NOT_BOUND))
		return false;
	if (why != NULL && n > 0)
		snprintf(why, n, "%s", is.message);
	return true;
}
