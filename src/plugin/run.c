/*
 * kubectl-etcd's commands (plugin/run.h): what they share (plugin/internal.h) and the dispatch.
 * Each command group is in its own cmd_*.c.
 */
#include "plugin/run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/strbuf.h"
#include "etcd/wire.h"
#include "plugin/complete.h"
#include "plugin/internal.h"

#define ETCD_BODY_MAX	   (4u << 20)
#define DEFAULT_TIMEOUT_MS 30000L

int eo__plugin_failf(struct eo__plugin_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* ---- the apiserver ------------------------------------------------------------------ */

static int load_cluster(struct eo__plugin_ctx *c)
{
	struct eo_kube_error ke = {0};
	eo_kube_config *cfg = NULL;
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, NULL, c->a->cluster};
	/* --timeout bounds the apiserver's calls too (the kube client's default otherwise). */
	struct eo_kube_client_opts o = {.user_agent = "kubectl-etcd",
					.proxy_from_env = true,
					.timeout_ms = c->a->timeout_s ? c->timeout_ms : 0};
	char res[EO_NAME_MAX + 64];
	eo_kube_err e;

	e = eo_kube_config_load(c->a->kubeconfig, c->a->context, &cfg, &ke);
	if (e != EO_KUBE_OK)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "kubeconfig: %s", ke.message);
	c->ns = c->a->ns ? c->a->ns : eo_kube_config_namespace(cfg);
	r.ns = c->ns;
	e = eo_kube_client_new(cfg, &o, &c->kc, &ke);
	if (e != EO_KUBE_OK)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "kubernetes client: %s", ke.message);
	e = eo_kube_get(c->kc, &r, &c->cluster, &ke);
	if (e == EO_KUBE_ENOTFOUND) {
		struct eo_kube_resource nsr = {"v1", "namespaces", NULL, c->ns};
		json_t *nso = NULL;
		struct eo_kube_error ke2 = {0};

		if (eo_kube_get(c->kc, &nsr, &nso, &ke2) == EO_KUBE_ENOTFOUND)
			return eo__plugin_failf(
			    c, EO_PEXIT_NOTFOUND,
			    "namespace \"%s\" does not exist (give the cluster's with -n)", c->ns);
		json_decref(nso);
		if (eo_kube_get_path(c->kc, "/apis/" EO_API_GROUP_VERSION, &nso, &ke2) ==
		    EO_KUBE_ENOTFOUND)
			return eo__plugin_failf(
			    c, EO_PEXIT_NOTFOUND,
			    "the apiserver does not know %s: is etcd-operator installed "
			    "(its CRDs applied)?",
			    EO_RESOURCE_CLUSTERS);
		json_decref(nso);
		return eo__plugin_failf(
		    c, EO_PEXIT_NOTFOUND,
		    "EtcdCluster \"%s\" not found in namespace \"%s\" (kubectl get "
		    "etcdclusters -n %s lists them; -n selects another namespace)",
		    c->a->cluster, c->ns, c->ns);
	}
	if (e != EO_KUBE_OK) {
		snprintf(res, sizeof(res), "%s \"%s\"", EO_RESOURCE_CLUSTERS, c->a->cluster);
		return (int)eo_plugin_kube_failure(e, &ke, "get", res, c->ns, c->msg,
						   sizeof(c->msg));
	}
	return 0;
}

static int load_members(struct eo__plugin_ctx *c)
{
	char sel[EO_NAME_MAX + 64];
	struct eo_kube_list_opts lo = {.label_selector = sel};
	struct eo_kube_resource mr = {EO_API_GROUP_VERSION, EO_PLURAL_MEMBERS, c->ns, NULL};
	struct eo_kube_resource pr = {"v1", "pods", c->ns, NULL};
	struct eo_kube_error ke = {0};
	eo_kube_err e;
	int n;

	snprintf(sel, sizeof(sel), "%s=%s", EO_LABEL_CLUSTER, c->a->cluster);
	e = eo_kube_list(c->kc, &mr, &lo, &c->members, &ke);
	if (e != EO_KUBE_OK)
		return (int)eo_plugin_kube_failure(e, &ke, "list", EO_RESOURCE_MEMBERS, c->ns,
						   c->msg, sizeof(c->msg));
	e = eo_kube_list(c->kc, &pr, &lo, &c->pods, &ke);
	if (e != EO_KUBE_OK)
		return (int)eo_plugin_kube_failure(e, &ke, "list", "pods", c->ns, c->msg,
						   sizeof(c->msg));
	n = eo_plugin_targets(c->members, c->pods, c->t, EO_PLUGIN_TARGETS_MAX);
	if (n < 0)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "malformed EtcdMember or Pod list");
	c->nt = (size_t)n;
	return 0;
}

/* ---- etcd through the apiserver (plugin/reach.h) ------------------------------------ */

static int collect(void *ud, const char *p, size_t n)
{
	struct eo_strbuf *b = ud;

	eo_strbuf_add_n(b, p, n);
	return b->failed ? -1 : 0;
}

/* The host member's certificate is checked for (tunnel only). */
const char *eo__plugin_member_host(struct eo__plugin_ctx *c, const char *member, char *buf,
				   size_t cap)
{
	int k = eo_plugin_target_find(c->t, c->nt, member);

	if (eo_plugin_member_host(k >= 0 ? c->t[k].pod : NULL, member, c->a->cluster, c->ns, buf,
				  cap) != 0)
		return member;
	return buf;
}

/* A failed call: c->msg and the exit code; *etcd_said when etcd itself refused. */
int eo__plugin_call_failed(struct eo__plugin_ctx *c, const struct eo_plugin_answer *ans,
			   const char *member, const char *route, bool *etcd_said)
{
	struct eo_plugin_call_failure f = {ans->e,
					   &ans->ke,
					   ans->res.http_status,
					   ans->res.errbody,
					   ans->res.errbody_len,
					   c->reach.path == EO_PPATH_TUNNEL,
					   ans->tunnel_refused,
					   ans->farside};

	return (int)eo_plugin_call_failure(&f, member, c->ns, route, etcd_said, c->msg,
					   sizeof(c->msg));
}

/*
 * POST body to route on member's etcd; *resp (caller frees) on success. The exit code;
 * *etcd_said (may be NULL) when etcd itself refused.
 */
static int etcd_call_said(struct eo__plugin_ctx *c, const char *member, const char *route,
			  const char *body, long timeout_ms, char **resp, size_t *len,
			  bool *etcd_said)
{
	struct eo_strbuf b = EO_STRBUF_INIT(ETCD_BODY_MAX);
	struct eo_plugin_answer *ans = calloc(1, sizeof(*ans));
	char host[EO_NAME_MAX * 2 + 64];
	int rc = 0;

	*resp = NULL;
	if (etcd_said)
		*etcd_said = false;
	if (!ans)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	if (eo_plugin_reach_post(
		&c->reach, member, eo__plugin_member_host(c, member, host, sizeof(host)), route,
		body, timeout_ms ? timeout_ms : c->timeout_ms, 0, collect, &b, ans) != EO_KUBE_OK) {
		rc = eo__plugin_call_failed(c, ans, member, route, etcd_said);
		eo_strbuf_free(&b);
	} else {
		*resp = eo_strbuf_take(&b, len);
		if (!*resp)
			rc = eo__plugin_failf(c, EO_PEXIT_FAILED,
					      "member %s: answer to %s too large or out of memory",
					      member, route);
	}
	free(ans);
	return rc;
}

int eo__plugin_etcd_call(struct eo__plugin_ctx *c, const char *member, const char *route,
			 const char *body, long timeout_ms, char **resp, size_t *len)
{
	return etcd_call_said(c, member, route, body, timeout_ms, resp, len, NULL);
}

/*
 * spec.auth.enabled: a token from the first member that answers (query order). etcd's own
 * refusal (a wrong password) stops there: every member would say the same.
 */
int eo__plugin_login(struct eo__plugin_ctx *c)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	struct eo_plugin_answer *ans;
	char host[EO_NAME_MAX * 2 + 64];
	int rc = 0;

	if (!c->reach.password)
		return 0;
	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "no member of %s/%s has a running Pod",
					c->ns, c->a->cluster);
	ans = calloc(1, sizeof(*ans));
	if (!ans)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	for (i = 0; i < n; i++) {
		const char *m = c->t[order[i]].name;
		bool said = false;

		if (eo_plugin_reach_login(&c->reach, m,
					  eo__plugin_member_host(c, m, host, sizeof(host)),
					  c->timeout_ms, ans) == EO_KUBE_OK) {
			rc = 0;
			break;
		}
		if (ans->e == EO_KUBE_EPROTOCOL) {
			rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "member %s: %s", m,
					      ans->ke.message);
			continue;
		}
		rc = eo__plugin_call_failed(c, ans, m, "/v3/auth/authenticate", &said);
		if (said && !eo_cluster_auth_latched(c->cluster)) {
			/* The operator has not turned etcd's auth on yet (status.authEnabled): go
			 * on without a token, as the operator itself still does. */
			c->msg[0] = '\0';
			rc = 0;
			break;
		}
		if (said || rc == EO_PEXIT_FORBIDDEN) {
			if (said)
				snprintf(c->msg + strlen(c->msg), sizeof(c->msg) - strlen(c->msg),
					 " (etcd root credentials from Secret %s/%s)", c->ns,
					 eo_cluster_auth_secret(c->cluster));
			break;
		}
	}
	free(ans);
	return rc;
}

int eo__plugin_member_list(struct eo__plugin_ctx *c, struct eo_etcd_members *ms, const char **via)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	int rc = 0;

	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return eo__plugin_failf(
		    c, EO_PEXIT_FAILED,
		    "no member of %s/%s has a running Pod (%zu EtcdMember(s)); see "
		    "kubectl get etcdcluster %s -n %s",
		    c->ns, c->a->cluster, c->nt, c->a->cluster, c->ns);
	for (i = 0; i < n; i++) {
		char *body = NULL;
		size_t len = 0;

		rc = eo__plugin_etcd_call(c, c->t[order[i]].name, "/v3/cluster/member/list",
					  "{\"linearizable\":true}", 0, &body, &len);
		if (rc == EO_PEXIT_FORBIDDEN)
			return rc;
		if (rc == 0) {
			eo_etcd_err ee = eo_etcd_wire_parse_members(body, len, ms);

			free(body);
			if (ee == EO_ETCD_OK) {
				if (via)
					*via = c->t[order[i]].name;
				return 0;
			}
			rc = eo__plugin_failf(c, EO_PEXIT_FAILED,
					      "member %s: malformed member list (%s)",
					      c->t[order[i]].name, eo_etcd_strerror(ee));
		}
	}
	return rc;
}

int eo__plugin_member_status(struct eo__plugin_ctx *c, const char *member,
			     struct eo_etcd_status *st)
{
	char *body = NULL;
	size_t len = 0;
	int rc = eo__plugin_etcd_call(c, member, "/v3/maintenance/status", "{}", 0, &body, &len);
	eo_etcd_err ee;

	if (rc != 0)
		return rc;
	ee = eo_etcd_wire_parse_status(body, len, st);
	free(body);
	if (ee != EO_ETCD_OK)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "member %s: malformed status (%s)",
					member, eo_etcd_strerror(ee));
	return 0;
}

const char *eo__plugin_name_of(const struct eo_etcd_members *ms, uint64_t id, char *buf, size_t cap)
{
	const struct eo_etcd_member *m = eo_etcd_members_find(ms, id);

	if (m && m->name && m->name[0])
		return m->name;
	return eo_plugin_id_hex(id, buf, cap);
}

/* ---- output ------------------------------------------------------------------------ */

int eo__plugin_emit(struct eo__plugin_ctx *c, json_t *doc, const char *rows_key,
		    const struct eo_plugin_col *cols, size_t ncols, const char *sentence)
{
	struct eo_strbuf b = EO_STRBUF_INIT(64u << 20);
	int rc = 0;

	switch (c->a->format) {
	case EO_PFMT_JSON:
		rc = eo_plugin_render_json(doc, &b);
		break;
	case EO_PFMT_YAML:
		rc = eo_plugin_render_yaml(doc, &b);
		break;
	case EO_PFMT_TABLE:
		if (cols)
			rc =
			    eo_plugin_render_table(json_object_get(doc, rows_key), cols, ncols, &b);
		if (sentence) {
			eo_strbuf_add(&b, sentence);
			eo_strbuf_add(&b, "\n");
		}
		break;
	}
	if (rc == 0 && (b.failed || !doc))
		rc = -1;
	json_decref(doc);
	if (rc != 0) {
		eo_strbuf_free(&b);
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "cannot render the output");
	}
	if (b.p && (fwrite(b.p, 1, b.len, c->out) != b.len || fflush(c->out) != 0)) {
		eo_strbuf_free(&b);
		return eo__plugin_failf(c, EO_PEXIT_LOCAL, "writing the output: %s",
					strerror(errno));
	}
	eo_strbuf_free(&b);
	return 0;
}

json_t *eo__plugin_base_doc(struct eo__plugin_ctx *c)
{
	return json_pack("{s:s,s:s}", "cluster", c->a->cluster, "namespace", c->ns);
}

json_t *eo__plugin_str_array(char **v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i] ? v[i] : ""));
	return a;
}

/* ---- shared by the commands ------------------------------------------------------------ */

/* The targets a per-member command works on: --member, or every member. */
int eo__plugin_pick_targets(struct eo__plugin_ctx *c, size_t *idx, size_t *n)
{
	size_t i;

	*n = 0;
	if (c->a->member) {
		int k = eo_plugin_target_find(c->t, c->nt, c->a->member);

		if (k < 0)
			return eo__plugin_failf(
			    c, EO_PEXIT_NOTFOUND,
			    "%s is not a member of cluster %s/%s (kubectl etcd members %s "
			    "-n %s lists them)",
			    c->a->member, c->ns, c->a->cluster, c->a->cluster, c->ns);
		idx[(*n)++] = (size_t)k;
		return 0;
	}
	for (i = 0; i < c->nt; i++)
		idx[(*n)++] = i;
	if (*n == 0)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "cluster %s/%s has no EtcdMember yet",
					c->ns, c->a->cluster);
	return 0;
}

/* Runs route on the first member that answers (query order). */
int eo__plugin_cluster_call(struct eo__plugin_ctx *c, const char *route, const char *body,
			    char **resp, size_t *len, const char **via)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	int rc = 0;

	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "no member of %s/%s has a running Pod",
					c->ns, c->a->cluster);
	for (i = 0; i < n; i++) {
		bool said = false;

		rc = etcd_call_said(c, c->t[order[i]].name, route, body, 0, resp, len, &said);
		if (rc == 0) {
			if (via)
				*via = c->t[order[i]].name;
			return 0;
		}
		if (rc == EO_PEXIT_FORBIDDEN || said)
			return rc; /* etcd's own answer: the next member would say the same */
	}
	return rc;
}

int eo_plugin_run(const struct eo_plugin_args *a, FILE *out, FILE *errf)
{
	struct eo__plugin_ctx *c = calloc(1, sizeof(*c));
	char paused[EO_PLUGIN_MSG_MAX];
	int rc;

	if (!c) {
		fprintf(errf, "error: out of memory\n");
		return EO_PEXIT_FAILED;
	}
	c->a = a;
	c->out = out;
	c->errf = errf;
	c->timeout_ms = a->timeout_s ? a->timeout_s * 1000L : DEFAULT_TIMEOUT_MS;
	rc = load_cluster(c);
	if (rc != 0)
		goto out;
	if (a->cmd != EO_PCMD_ADD_MEMBER && a->cmd != EO_PCMD_REMOVE_MEMBER &&
	    a->cmd != EO_PCMD_REPORT && eo_plugin_paused(c->cluster, paused, sizeof(paused))) {
		rc = eo__plugin_failf(c, EO_PEXIT_REFUSED, "%s", paused);
		goto out;
	}
	rc = load_members(c);
	if (rc != 0)
		goto out;
	if (a->cmd == EO_PCMD_REPORT) {
		rc = eo__plugin_cmd_report(c);
		goto out;
	}
	if (a->cmd != EO_PCMD_ADD_MEMBER && a->cmd != EO_PCMD_REMOVE_MEMBER) {
		rc = eo_plugin_reach_open(&c->reach, c->kc, c->cluster, c->ns, c->msg,
					  sizeof(c->msg));
		if (rc == 0)
			rc = eo__plugin_login(c);
		if (rc != 0)
			goto out;
	}
	switch (a->cmd) {
	case EO_PCMD_MEMBERS:
		rc = eo__plugin_cmd_members(c);
		break;
	case EO_PCMD_STATUS:
		rc = eo__plugin_cmd_status(c);
		break;
	case EO_PCMD_DEFRAG:
		rc = eo__plugin_cmd_defrag(c);
		break;
	case EO_PCMD_COMPACT:
		rc = eo__plugin_cmd_compact(c);
		break;
	case EO_PCMD_ALARM_LIST:
		rc = eo__plugin_cmd_alarm(c, false);
		break;
	case EO_PCMD_ALARM_DISARM:
		rc = eo__plugin_cmd_alarm(c, true);
		break;
	case EO_PCMD_FORFEIT_LEADERSHIP:
		rc = eo__plugin_cmd_forfeit(c);
		break;
	case EO_PCMD_SNAPSHOT:
		rc = eo__plugin_cmd_snapshot(c);
		break;
	case EO_PCMD_ADD_MEMBER:
	case EO_PCMD_REMOVE_MEMBER:
		rc = eo__plugin_cmd_scale(c);
		break;
	default:
		rc = eo__plugin_failf(c, EO_PEXIT_USAGE, "nothing to run");
		break;
	}
out:
	if (rc != 0 && c->msg[0])
		fprintf(errf, "error: %s\n", c->msg);
	eo_plugin_reach_close(&c->reach);
	json_decref(c->cluster);
	json_decref(c->members);
	json_decref(c->pods);
	eo_kube_client_free(c->kc);
	free(c);
	return rc;
}

int eo_plugin_complete_clusters(const struct eo_plugin_completion *c, const char *prefix, FILE *out)
{
	struct eo_kube_client_opts o = {.user_agent = "kubectl-etcd", .timeout_ms = 5000};
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, NULL, NULL};
	struct eo_kube_error ke = {0};
	eo_kube_config *cfg = NULL;
	eo_kube_client *kc = NULL;
	json_t *list = NULL, *item;
	size_t i;
	int n = 0;

	if (eo_kube_config_load(c->kubeconfig, c->context, &cfg, &ke) != EO_KUBE_OK)
		return 0;
	r.ns = c->ns ? c->ns : eo_kube_config_namespace(cfg);
	if (eo_kube_client_new(cfg, &o, &kc, &ke) != EO_KUBE_OK) {
		eo_kube_config_free(cfg);
		return 0;
	}
	if (eo_kube_list(kc, &r, NULL, &list, &ke) == EO_KUBE_OK) {
		json_array_foreach(json_object_get(list, "items"), i, item)
		{
			const char *name = eo_meta_name(item);

			if (name && strncmp(name, prefix, strlen(prefix)) == 0) {
				fprintf(out, "%s\n", name);
				n++;
			}
		}
	}
	json_decref(list);
	eo_kube_client_free(kc);
	return n;
}
