/* kubectl-etcd's decisions and extra gateway routes (plugin/decide.h). */
#include "plugin/decide.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/json.h"
#include "etcd/wire.h"

__attribute__((format(printf, 3, 4))) static void msgf(char *msg, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, cap, fmt, ap);
	va_end(ap);
}

static const char *str_at(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);

	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int by_name(const void *a, const void *b)
{
	const struct eo_plugin_target *x = a, *y = b;

	return strcmp(x->name, y->name);
}

int eo_plugin_targets(const json_t *members, const json_t *pods, struct eo_plugin_target *out,
		      size_t cap)
{
	const json_t *mitems = json_object_get(members, "items");
	const json_t *pitems = json_object_get(pods, "items"), *m, *p;
	size_t i, j, n = 0;

	if (!json_is_array(mitems) || (pods && !json_is_array(pitems)))
		return -1;
	json_array_foreach(mitems, i, m)
	{
		struct eo_plugin_target *t;
		const char *name = eo_meta_name(m), *phase;

		if (!name)
			return -1;
		if (n == cap)
			break;
		t = &out[n++];
		memset(t, 0, sizeof(*t));
		t->name = name;
		t->member = m;
		t->voter = eo_member_is_voter(m);
		json_array_foreach(pitems, j, p)
		{
			const char *pn = eo_meta_name(p);

			if (pn && strcmp(pn, name) == 0) {
				t->pod = p;
				break;
			}
		}
		if (t->pod) {
			/* Started, not only scheduled: a Pending Pod's etcd cannot answer yet. */
			phase = str_at(t->pod, "status", "phase");
			t->running =
			    eo_plan_pod_running(t->pod) && phase && strcmp(phase, "Running") == 0;
			t->ready = t->running && eo_plan_pod_ready(t->pod);
		}
	}
	qsort(out, n, sizeof(*out), by_name);
	return (int)n;
}

int eo_plugin_target_find(const struct eo_plugin_target *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name && strcmp(t[i].name, name) == 0)
			return (int)i;
	return -1;
}

size_t eo_plugin_query_order(const struct eo_plugin_target *t, size_t n, size_t *order)
{
	size_t i, k = 0;
	int pass;

	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < n; i++) {
			bool take = t[i].running && ((pass == 0 && t[i].voter && t[i].ready) ||
						     (pass == 1 && t[i].voter && !t[i].ready) ||
						     (pass == 2 && !t[i].voter));

			if (take)
				order[k++] = i;
		}
	return k;
}

const char *eo_plugin_paused(const json_t *cluster, char *msg, size_t cap)
{
	const json_t *r = json_object_get(json_object_get(cluster, "spec"), "replicas");
	const char *name = eo_meta_name(cluster);
	const char *ns = eo_meta_namespace(cluster);

	if (json_is_integer(r) && json_integer_value(r) == 0) {
		msgf(msg, cap,
		     "cluster %s/%s is paused (spec.replicas is 0): no etcd member is running. "
		     "Resume it first: kubectl patch etcdcluster.%s %s -n %s --type=merge "
		     "-p '{\"spec\":{\"replicas\":3}}'",
		     ns ? ns : "?", name ? name : "?", EO_API_GROUP, name ? name : "?",
		     ns ? ns : "?");
		return msg;
	}
	return NULL;
}

void eo_plugin_defrag_order(size_t n, int leader, size_t *order)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if ((int)i != leader)
			order[k++] = i;
	if (leader >= 0 && (size_t)leader < n)
		order[k++] = (size_t)leader;
}

static bool in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s && list[i] && strcmp(s, list[i]) == 0)
			return true;
	return false;
}

int eo_plugin_forfeit_target(const struct eo_etcd_members *ms, uint64_t leader, const char *to,
			     const char *const *running, size_t nrunning, uint64_t *target,
			     char *msg, size_t cap)
{
	size_t i;

	*target = 0;
	if (leader == 0) {
		msgf(msg, cap, "the cluster has no leader now: there is no leadership to move");
		return -1;
	}
	if (to) {
		for (i = 0; i < ms->n; i++) {
			const struct eo_etcd_member *m = &ms->v[i];

			if (!m->name || strcmp(m->name, to) != 0)
				continue;
			if (m->id == leader) {
				msgf(msg, cap, "%s is already the leader", to);
				return -1;
			}
			if (m->is_learner) {
				msgf(msg, cap, "%s is a learner: only a voting member can lead",
				     to);
				return -1;
			}
			*target = m->id;
			return 0;
		}
		msgf(msg, cap,
		     "%s is not a started member of the cluster (see kubectl etcd members)", to);
		return -2;
	}
	for (i = 0; i < ms->n; i++) {
		const struct eo_etcd_member *m = &ms->v[i];

		if (m->id == leader || m->is_learner || !m->name || !m->name[0])
			continue;
		if (running && !in_list(m->name, running, nrunning))
			continue;
		*target = m->id;
		return 0;
	}
	msgf(msg, cap,
	     "no other started voting member with a running Pod to take the leadership over");
	return -1;
}

static int64_t int_at(const json_t *o, const char *a, const char *b, int64_t dflt)
{
	const json_t *v = json_object_get(json_object_get(o, a), b);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

enum eo_plugin_scale eo_plugin_scale_decide(const json_t *cluster,
					    const struct eo_plan_member *members, size_t n,
					    const char *remove, json_t **patch, char *msg,
					    size_t cap)
{
	const char *name = eo_meta_name(cluster);
	const char *ns = eo_meta_namespace(cluster);
	const char *rv = eo_meta_resource_version(cluster);
	int64_t replicas = eo_cluster_replicas(cluster); /* absent: the operator's default */
	const json_t *obs = json_object_get(json_object_get(cluster, "status"), "observed");
	int64_t observed = int_at(json_object_get(cluster, "status"), "observed", "replicas", -1);
	const struct eo_plan_member *victim = NULL;
	size_t i, ready_after = 0, voters_after = 0;
	int64_t to, ready;

	*patch = NULL;
	name = name ? name : "?";
	ns = ns ? ns : "?";
	if (replicas == 0) {
		msgf(msg, cap,
		     "cluster %s/%s is paused (spec.replicas is 0); resume it by setting "
		     "spec.replicas before adding or removing members",
		     ns, name);
		return EO_PSCALE_PAUSED;
	}
	ready = int_at(cluster, "status", "readyMembers", -1);
	if (!obs || observed != replicas || ready < observed) {
		msgf(msg, cap,
		     "cluster %s/%s is still working towards its last change (spec.replicas %lld, "
		     "latched target %lld, %lld ready): wait until it is reached (kubectl get "
		     "etcdcluster %s "
		     "-n %s shows Progressing=False) and try again",
		     ns, name, (long long)replicas, (long long)observed, (long long)ready, name,
		     ns);
		return EO_PSCALE_IN_FLIGHT;
	}
	if (remove) {
		const struct eo_plan_member *want = NULL;

		for (i = 0; i < n; i++) {
			const char *mn = eo_meta_name(members[i].member);

			if (mn && strcmp(mn, remove) == 0)
				want = &members[i];
		}
		if (!want) {
			msgf(msg, cap,
			     "%s is not a member of cluster %s/%s (see kubectl etcd members %s -n "
			     "%s)",
			     remove, ns, name, name, ns);
			return EO_PSCALE_NOT_FOUND;
		}
		if (replicas <= 1) {
			msgf(
			    msg, cap,
			    "%s is the last member of %s/%s: removing it would delete the data. To "
			    "stop the cluster and keep its data, pause it (spec.replicas 0)",
			    remove, ns, name);
			return EO_PSCALE_LAST;
		}
		victim = eo_plan_scale_down_victim(members, n);
		if (victim != want) {
			const char *vn = victim ? eo_meta_name(victim->member) : NULL;

			msgf(
			    msg, cap,
			    "the operator removes members in its own order (one that never joined, "
			    "then learners, then voters whose Pod is not ready, then the newest) "
			    "and "
			    "would remove %s, not %s, when scaling down; lowering spec.replicas "
			    "now "
			    "would remove the wrong member. To replace %s on a fresh volume delete "
			    "its EtcdMember (kubectl delete etcdmember %s -n %s): the operator "
			    "removes it from etcd and adds a new member",
			    vn ? vn : "(none)", remove, remove, remove, ns);
			return EO_PSCALE_NOT_VICTIM;
		}
		if (!eo_plan_removal_keeps_quorum(members, n, victim, &ready_after,
						  &voters_after)) {
			msgf(msg, cap,
			     "removing %s now would not keep a quorum of ready voters (%zu of %zu "
			     "ready after it): bring the members that are down back first",
			     remove, ready_after, voters_after);
			return EO_PSCALE_NO_QUORUM;
		}
		to = replicas - 1;
	} else {
		to = replicas + 1;
	}
	*patch = json_pack("{s:{s:s?},s:{s:I}}", "metadata", "resourceVersion", rv, "spec",
			   "replicas", (json_int_t)to);
	if (!*patch) {
		msgf(msg, cap, "out of memory");
		return EO_PSCALE_IN_FLIGHT;
	}
	if (remove)
		msgf(msg, cap,
		     "spec.replicas of %s/%s lowered from %lld to %lld: the operator removes %s "
		     "from etcd, then its Pod and PVC",
		     ns, name, (long long)replicas, (long long)to, remove);
	else
		msgf(msg, cap,
		     "spec.replicas of %s/%s raised from %lld to %lld: the operator adds a member "
		     "as a learner and promotes it once it has caught up",
		     ns, name, (long long)replicas, (long long)to);
	return EO_PSCALE_PATCH;
}

enum eo_plugin_exit eo_plugin_scale_exit(enum eo_plugin_scale s)
{
	switch (s) {
	case EO_PSCALE_PATCH:
		return EO_PEXIT_OK;
	case EO_PSCALE_NOT_FOUND:
		return EO_PEXIT_NOTFOUND;
	default:
		return EO_PEXIT_REFUSED;
	}
}

enum eo_plugin_exit eo_plugin_kube_failure(eo_kube_err e, const struct eo_kube_error *ke,
					   const char *verb, const char *resource, const char *ns,
					   char *msg, size_t cap)
{
	const char *said = ke && ke->message[0] ? ke->message : eo_kube_strerror(e);

	switch (e) {
	case EO_KUBE_EFORBIDDEN:
		msgf(msg, cap,
		     "permission denied: you may not %s %s in namespace %s; ask for RBAC that "
		     "grants verb \"%s\" on it (the apiserver said: %s)",
		     verb, resource, ns, verb, said);
		return EO_PEXIT_FORBIDDEN;
	case EO_KUBE_EUNAUTHORIZED:
		msgf(msg, cap,
		     "the apiserver did not accept your credentials (401) for %s %s: check the "
		     "kubeconfig's user (expired token or certificate?): %s",
		     verb, resource, said);
		return EO_PEXIT_FORBIDDEN;
	case EO_KUBE_ENOTFOUND:
		msgf(msg, cap, "%s not found in namespace %s", resource, ns);
		return EO_PEXIT_NOTFOUND;
	default:
		msgf(msg, cap, "%s %s in namespace %s failed: %s (%s)", verb, resource, ns, said,
		     eo_kube_strerror(e));
		return EO_PEXIT_FAILED;
	}
}

/* Whether body is a Kubernetes Status object (the apiserver's own answer). */
static bool is_kube_status(const char *body, size_t len)
{
	json_t *j = body && len ? json_loadb(body, len, 0, NULL) : NULL;
	const char *kind = str_at(j, "kind", NULL);
	bool yes = kind && strcmp(kind, "Status") == 0;

	json_decref(j);
	return yes;
}

/*
 * The apiserver's own 401/403 (verb on res refused) or 404 (no such Pod): true with *rc and
 * msg set; false for any other status.
 */
static bool apiserver_refused(const struct eo_plugin_call_failure *f, const char *verb,
			      const char *res, const char *ns, const char *member, const char *said,
			      char *msg, size_t cap, enum eo_plugin_exit *rc)
{
	if (f->http_status == 401 || f->http_status == 403) {
		*rc = eo_plugin_kube_failure(f->http_status == 401 ? EO_KUBE_EUNAUTHORIZED
								   : EO_KUBE_EFORBIDDEN,
					     f->ke, verb, res, ns, msg, cap);
		return true;
	}
	if (f->http_status == 404) {
		msgf(msg, cap,
		     "member %s has no Pod to reach (the apiserver said: %s); it may be "
		     "restarting or being replaced",
		     member, said);
		*rc = EO_PEXIT_FAILED;
		return true;
	}
	return false;
}

enum eo_plugin_exit eo_plugin_call_failure(const struct eo_plugin_call_failure *f,
					   const char *member, const char *ns, const char *path,
					   bool *etcd_said, char *msg, size_t cap)
{
	const char *said = f->ke && f->ke->message[0] ? f->ke->message : eo_kube_strerror(f->e);
	const char *far = f->farside && f->farside[0] ? f->farside : NULL;
	const char *sub = f->tunnel ? "pods/portforward" : "pods/proxy";
	char res[EO_NAME_MAX + 32];
	bool status = is_kube_status(f->body, f->len);
	enum eo_plugin_exit rc;

	if (etcd_said)
		*etcd_said = false;
	snprintf(res, sizeof(res), "%s (Pod %s)", sub, member);
	if (f->tunnel_refused) {
		if (apiserver_refused(f, "get", res, ns, member, said, msg, cap, &rc))
			return rc;
		msgf(msg, cap, "member %s unreachable: the apiserver refused the port-forward: %s",
		     member, said);
		return EO_PEXIT_FAILED;
	}
	if (f->http_status == 0 || (f->http_status >= 200 && f->http_status < 300)) {
		msgf(msg, cap, "member %s unreachable through the apiserver's %s (%s): %s (%s)%s%s",
		     member, sub, path, said, eo_kube_strerror(f->e),
		     far ? "; the node said: " : "", far ? far : "");
		return EO_PEXIT_FAILED;
	}
	if (!f->tunnel && status) {
		if (apiserver_refused(f, "create", res, ns, member, said, msg, cap, &rc))
			return rc;
		msgf(msg, cap,
		     "member %s unreachable: the apiserver could not reach its etcd (HTTP %ld: "
		     "%s)",
		     member, f->http_status, said);
		return EO_PEXIT_FAILED;
	}
	{
		struct eo_etcd_detail d = {0};
		eo_etcd_err ee = eo_etcd_wire_map_error(f->http_status, f->body, f->len, &d);

		msgf(msg, cap, "member %s: etcd refused %s: %s (%s, HTTP %ld)", member, path,
		     d.message[0] ? d.message : "(no message)", eo_etcd_strerror(ee),
		     f->http_status);
		if (etcd_said)
			*etcd_said = true;
	}
	return EO_PEXIT_FAILED;
}

int eo_plugin_member_host(const json_t *pod, const char *member, const char *cluster,
			  const char *ns, char *out, size_t cap)
{
	static const char flag[] = "--advertise-client-urls=";
	const json_t *ctrs = json_object_get(json_object_get(pod, "spec"), "containers"), *ct;
	size_t i, j;
	int n;

	json_array_foreach(ctrs, i, ct)
	{
		const json_t *lists[2] = {json_object_get(ct, "command"),
					  json_object_get(ct, "args")};
		size_t l;

		for (l = 0; l < 2; l++) {
			const json_t *a;

			json_array_foreach(lists[l], j, a)
			{
				const char *v = json_string_value(a), *h, *e;

				if (!v || strncmp(v, flag, sizeof(flag) - 1) != 0)
					continue;
				v += sizeof(flag) - 1;
				h = strstr(v, "://");
				if (!h)
					continue;
				h += 3;
				e = h + strcspn(h, ":/,");
				if (e == h || (size_t)(e - h) >= cap)
					continue;
				memcpy(out, h, (size_t)(e - h));
				out[e - h] = '\0';
				return 0;
			}
		}
	}
	n = snprintf(out, cap, "%s.%s.%s.svc", member, cluster, ns);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

char *eo_plugin_id_hex(uint64_t id, char *out, size_t cap)
{
	snprintf(out, cap, "%" PRIx64, id);
	return out;
}

char *eo_plugin_parse_token(const char *body, size_t len, size_t max)
{
	json_t *root = json_loadb(body ? body : "", len, 0, NULL),
	       *t = json_object_get(root, "token");
	char *out = NULL;

	if (json_is_string(t) && json_string_length(t) > 0 && json_string_length(t) <= max &&
	    strpbrk(json_string_value(t), "\r\n") == NULL &&
	    strlen(json_string_value(t)) == json_string_length(t))
		out = strdup(json_string_value(t));
	if (json_is_string(t))
		explicit_bzero((char *)json_string_value(t), json_string_length(t));
	json_decref(root);
	return out;
}

int eo_plugin_parse_alarms(const char *body, size_t len, json_t **out, char *err, size_t cap)
{
	json_t *root = json_loadb(body ? body : "", len, 0, NULL), *alarms, *a;
	size_t i;

	*out = NULL;
	if (!json_is_object(root)) {
		msgf(err, cap, "alarm answer is not a JSON object");
		goto bad;
	}
	alarms = json_object_get(root, "alarms");
	*out = json_array();
	if (!*out)
		goto bad;
	json_array_foreach(alarms, i, a)
	{
		uint64_t id = 0;
		const json_t *type = json_object_get(a, "alarm");

		if (!json_is_object(a) ||
		    !eo_etcd_wire_json_u64(json_object_get(a, "memberID"), &id)) {
			msgf(err, cap, "alarm entry %zu has no valid memberID", i);
			goto bad;
		}
		/* The gateway omits a zero enum: NONE. Numbers may appear with EmitDefaults off. */
		if (json_array_append_new(
			*out, json_pack("{s:I,s:s}", "memberID", (json_int_t)id, "alarm",
					json_is_string(type)		? json_string_value(type)
					: json_integer_value(type) == 1 ? "NOSPACE"
					: json_integer_value(type) == 2 ? "CORRUPT"
									: "NONE")) != 0) {
			msgf(err, cap, "out of memory");
			goto bad;
		}
	}
	if (alarms && !json_is_array(alarms)) {
		msgf(err, cap, "alarms is not an array");
		goto bad;
	}
	json_decref(root);
	return 0;
bad:
	json_decref(root);
	json_decref(*out);
	*out = NULL;
	return -1;
}

uint64_t eo_plugin_alarm_member(const json_t *alarm)
{
	return (uint64_t)json_integer_value(json_object_get(alarm, "memberID"));
}
