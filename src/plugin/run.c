/* kubectl-etcd's commands (plugin/run.h). */
#include "core/sleep.h"
#include "plugin/run.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "snapshot/etcdsnap.h"
#include "snapshot/filestore.h"
#include "snapshot/integrity.h"
#include "api/cluster.h"
#include "api/names.h"
#include "core/strbuf.h"
#include "etcd/wire.h"
#include "kube/client.h"
#include "kube/config.h"
#include "plugin/complete.h"
#include "plugin/decide.h"
#include "plugin/reach.h"
#include "plugin/render.h"
#include "plugin/report.h"

#define ETCD_BODY_MAX	     (4u << 20)
#define DEFAULT_TIMEOUT_MS   30000L
#define DEFRAG_TIMEOUT_MS    600000L
#define SNAPSHOT_STALL_S     60L
#define LEADER_WAIT_TRIES    20
#define LEADER_WAIT_SLEEP_MS 500

struct ctx {
	const struct eo_plugin_args *a;
	FILE *out;
	FILE *errf;
	eo_kube_client *kc;
	const char *ns;
	json_t *cluster, *members, *pods;
	struct eo_plugin_target t[EO_PLUGIN_TARGETS_MAX];
	size_t nt;
	struct eo_plugin_reach reach;
	long timeout_ms;
	char msg[EO_PLUGIN_MSG_MAX];
};

__attribute__((format(printf, 3, 4))) static int failf(struct ctx *c, int code, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* ---- the apiserver ------------------------------------------------------------------ */

static int load_cluster(struct ctx *c)
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
		return failf(c, EO_PEXIT_FAILED, "kubeconfig: %s", ke.message);
	c->ns = c->a->ns ? c->a->ns : eo_kube_config_namespace(cfg);
	r.ns = c->ns;
	e = eo_kube_client_new(cfg, &o, &c->kc, &ke);
	if (e != EO_KUBE_OK)
		return failf(c, EO_PEXIT_FAILED, "kubernetes client: %s", ke.message);
	e = eo_kube_get(c->kc, &r, &c->cluster, &ke);
	if (e == EO_KUBE_ENOTFOUND) {
		struct eo_kube_resource nsr = {"v1", "namespaces", NULL, c->ns};
		json_t *nso = NULL;
		struct eo_kube_error ke2 = {0};

		if (eo_kube_get(c->kc, &nsr, &nso, &ke2) == EO_KUBE_ENOTFOUND)
			return failf(c, EO_PEXIT_NOTFOUND,
				     "namespace \"%s\" does not exist (give the cluster's with -n)",
				     c->ns);
		json_decref(nso);
		if (eo_kube_get_path(c->kc, "/apis/" EO_API_GROUP_VERSION, &nso, &ke2) ==
		    EO_KUBE_ENOTFOUND)
			return failf(c, EO_PEXIT_NOTFOUND,
				     "the apiserver does not know %s: is etcd-operator installed "
				     "(its CRDs applied)?",
				     EO_RESOURCE_CLUSTERS);
		json_decref(nso);
		return failf(c, EO_PEXIT_NOTFOUND,
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

static int load_members(struct ctx *c)
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
		return failf(c, EO_PEXIT_FAILED, "malformed EtcdMember or Pod list");
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
static const char *member_host(struct ctx *c, const char *member, char *buf, size_t cap)
{
	int k = eo_plugin_target_find(c->t, c->nt, member);

	if (eo_plugin_member_host(k >= 0 ? c->t[k].pod : NULL, member, c->a->cluster, c->ns, buf,
				  cap) != 0)
		return member;
	return buf;
}

/* A failed call: c->msg and the exit code; *etcd_said when etcd itself refused. */
static int call_failed(struct ctx *c, const struct eo_plugin_answer *ans, const char *member,
		       const char *route, bool *etcd_said)
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
static int etcd_call_said(struct ctx *c, const char *member, const char *route, const char *body,
			  long timeout_ms, char **resp, size_t *len, bool *etcd_said)
{
	struct eo_strbuf b = EO_STRBUF_INIT(ETCD_BODY_MAX);
	struct eo_plugin_answer *ans = calloc(1, sizeof(*ans));
	char host[EO_NAME_MAX * 2 + 64];
	int rc = 0;

	*resp = NULL;
	if (etcd_said)
		*etcd_said = false;
	if (!ans)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	if (eo_plugin_reach_post(&c->reach, member, member_host(c, member, host, sizeof(host)),
				 route, body, timeout_ms ? timeout_ms : c->timeout_ms, 0, collect,
				 &b, ans) != EO_KUBE_OK) {
		rc = call_failed(c, ans, member, route, etcd_said);
		eo_strbuf_free(&b);
	} else {
		*resp = eo_strbuf_take(&b, len);
		if (!*resp)
			rc = failf(c, EO_PEXIT_FAILED,
				   "member %s: answer to %s too large or out of memory", member,
				   route);
	}
	free(ans);
	return rc;
}

static int etcd_call(struct ctx *c, const char *member, const char *route, const char *body,
		     long timeout_ms, char **resp, size_t *len)
{
	return etcd_call_said(c, member, route, body, timeout_ms, resp, len, NULL);
}

/*
 * spec.auth.enabled: a token from the first member that answers (query order). etcd's own
 * refusal (a wrong password) stops there: every member would say the same.
 */
static int login(struct ctx *c)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	struct eo_plugin_answer *ans;
	char host[EO_NAME_MAX * 2 + 64];
	int rc = 0;

	if (!c->reach.password)
		return 0;
	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return failf(c, EO_PEXIT_FAILED, "no member of %s/%s has a running Pod", c->ns,
			     c->a->cluster);
	ans = calloc(1, sizeof(*ans));
	if (!ans)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	for (i = 0; i < n; i++) {
		const char *m = c->t[order[i]].name;
		bool said = false;

		if (eo_plugin_reach_login(&c->reach, m, member_host(c, m, host, sizeof(host)),
					  c->timeout_ms, ans) == EO_KUBE_OK) {
			rc = 0;
			break;
		}
		if (ans->e == EO_KUBE_EPROTOCOL) {
			rc = failf(c, EO_PEXIT_FAILED, "member %s: %s", m, ans->ke.message);
			continue;
		}
		rc = call_failed(c, ans, m, "/v3/auth/authenticate", &said);
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

static int member_list(struct ctx *c, struct eo_etcd_members *ms, const char **via)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	int rc = 0;

	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return failf(c, EO_PEXIT_FAILED,
			     "no member of %s/%s has a running Pod (%zu EtcdMember(s)); see "
			     "kubectl get etcdcluster %s -n %s",
			     c->ns, c->a->cluster, c->nt, c->a->cluster, c->ns);
	for (i = 0; i < n; i++) {
		char *body = NULL;
		size_t len = 0;

		rc = etcd_call(c, c->t[order[i]].name, "/v3/cluster/member/list",
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
			rc = failf(c, EO_PEXIT_FAILED, "member %s: malformed member list (%s)",
				   c->t[order[i]].name, eo_etcd_strerror(ee));
		}
	}
	return rc;
}

static int member_status(struct ctx *c, const char *member, struct eo_etcd_status *st)
{
	char *body = NULL;
	size_t len = 0;
	int rc = etcd_call(c, member, "/v3/maintenance/status", "{}", 0, &body, &len);
	eo_etcd_err ee;

	if (rc != 0)
		return rc;
	ee = eo_etcd_wire_parse_status(body, len, st);
	free(body);
	if (ee != EO_ETCD_OK)
		return failf(c, EO_PEXIT_FAILED, "member %s: malformed status (%s)", member,
			     eo_etcd_strerror(ee));
	return 0;
}

static const char *name_of(const struct eo_etcd_members *ms, uint64_t id, char *buf, size_t cap)
{
	const struct eo_etcd_member *m = eo_etcd_members_find(ms, id);

	if (m && m->name && m->name[0])
		return m->name;
	return eo_plugin_id_hex(id, buf, cap);
}

/* ---- output ------------------------------------------------------------------------ */

static int emit(struct ctx *c, json_t *doc, const char *rows_key, const struct eo_plugin_col *cols,
		size_t ncols, const char *sentence)
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
		return failf(c, EO_PEXIT_FAILED, "cannot render the output");
	}
	if (b.p && (fwrite(b.p, 1, b.len, c->out) != b.len || fflush(c->out) != 0)) {
		eo_strbuf_free(&b);
		return failf(c, EO_PEXIT_LOCAL, "writing the output: %s", strerror(errno));
	}
	eo_strbuf_free(&b);
	return 0;
}

static json_t *base_doc(struct ctx *c)
{
	return json_pack("{s:s,s:s}", "cluster", c->a->cluster, "namespace", c->ns);
}

static json_t *str_array(char **v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_array_append_new(a, json_string(v[i] ? v[i] : ""));
	return a;
}

/* ---- commands ------------------------------------------------------------------------ */

static int cmd_members(struct ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},	       {"ID", "id"},
	    {"STATUS", "status"},      {"ROLE", "role"},
	    {"PEER URLS", "peerURLs"}, {"CLIENT URLS", "clientURLs"},
	};
	struct eo_etcd_members ms = {0};
	char hex[32];
	json_t *doc, *rows;
	size_t i;
	int rc = member_list(c, &ms, NULL);

	if (rc != 0)
		return rc;
	doc = base_doc(c);
	rows = json_array();
	json_object_set_new(doc, "clusterID",
			    json_string(eo_plugin_id_hex(ms.cluster_id, hex, sizeof(hex))));
	for (i = 0; i < ms.n; i++) {
		const struct eo_etcd_member *m = &ms.v[i];

		json_array_append_new(
		    rows, json_pack("{s:s,s:s,s:s,s:s,s:o,s:o}", "name", m->name ? m->name : "",
				    "id", eo_plugin_id_hex(m->id, hex, sizeof(hex)), "status",
				    m->name && m->name[0] ? "started" : "unstarted", "role",
				    m->is_learner ? "learner" : "voter", "peerURLs",
				    str_array(m->peer_urls, m->n_peer_urls), "clientURLs",
				    str_array(m->client_urls, m->n_client_urls)));
	}
	json_object_set_new(doc, "members", rows);
	eo_etcd_members_clear(&ms);
	return emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
}

/* The targets a per-member command works on: --member, or every member. */
static int pick_targets(struct ctx *c, size_t *idx, size_t *n)
{
	size_t i;

	*n = 0;
	if (c->a->member) {
		int k = eo_plugin_target_find(c->t, c->nt, c->a->member);

		if (k < 0)
			return failf(c, EO_PEXIT_NOTFOUND,
				     "%s is not a member of cluster %s/%s (kubectl etcd members %s "
				     "-n %s lists them)",
				     c->a->member, c->ns, c->a->cluster, c->a->cluster, c->ns);
		idx[(*n)++] = (size_t)k;
		return 0;
	}
	for (i = 0; i < c->nt; i++)
		idx[(*n)++] = i;
	if (*n == 0)
		return failf(c, EO_PEXIT_FAILED, "cluster %s/%s has no EtcdMember yet", c->ns,
			     c->a->cluster);
	return 0;
}

static int cmd_status(struct ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},
	    {"ID", "id"},
	    {"VERSION", "version"},
	    {"DB SIZE", "dbSizeText"},
	    {"IN USE", "inUseText"},
	    {"LEADER", "isLeader"},
	    {"LEARNER", "isLearner"},
	    {"RAFT TERM", "raftTerm"},
	    {"RAFT INDEX", "raftIndex"},
	    {"ERRORS", "errors"},
	};
	size_t idx[EO_PLUGIN_TARGETS_MAX], n, i, failed = 0;
	json_t *doc, *rows;
	char hex[32], b1[32], b2[32], first[EO_PLUGIN_MSG_MAX] = "";
	int rc = pick_targets(c, idx, &n), first_rc = 0;
	bool table = c->a->format == EO_PFMT_TABLE;

	if (rc != 0)
		return rc;
	doc = base_doc(c);
	rows = json_array();
	for (i = 0; i < n; i++) {
		const struct eo_plugin_target *t = &c->t[idx[i]];
		struct eo_etcd_status st = {0};
		json_t *row, *errs;

		rc = member_status(c, t->name, &st);
		if (rc != 0) {
			if (!first[0]) {
				snprintf(first, sizeof(first), "%s", c->msg);
				first_rc = rc;
			}
			failed++;
			json_array_append_new(
			    rows, table ? json_pack("{s:s,s:[s]}", "name", t->name, "errors",
						    "unreachable (see below)")
					: json_pack("{s:s,s:s}", "name", t->name, "error", c->msg));
			continue;
		}
		errs = str_array(st.errors, st.n_errors);
		row = json_pack(
		    "{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:b,s:b,s:I,s:I,s:I,s:o}", "name", t->name, "id",
		    eo_plugin_id_hex(st.member_id, hex, sizeof(hex)), "version", st.version,
		    "storageVersion", st.storage_version, "dbSize", (json_int_t)st.db_size,
		    "dbSizeInUse", (json_int_t)st.db_size_in_use, "dbSizeQuota",
		    (json_int_t)st.db_size_quota, "isLeader",
		    st.leader != 0 && st.leader == st.member_id, "isLearner", st.is_learner,
		    "raftTerm", (json_int_t)st.raft_term, "raftIndex", (json_int_t)st.raft_index,
		    "raftAppliedIndex", (json_int_t)st.raft_applied_index, "errors", errs);
		if (table) { /* sizes as etcdctl shows them; json and yaml keep the bytes */
			json_object_set_new(
			    row, "dbSizeText",
			    json_string(eo_plugin_bytes(st.db_size, b1, sizeof(b1))));
			json_object_set_new(
			    row, "inUseText",
			    json_string(eo_plugin_bytes(st.db_size_in_use, b2, sizeof(b2))));
		}
		json_array_append_new(rows, row);
		eo_etcd_status_clear(&st);
	}
	json_object_set_new(doc, "members", rows);
	rc = emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
	if (rc != 0)
		return rc;
	if (failed)
		return failf(c, first_rc, "%zu of %zu member(s) did not answer; first: %s", failed,
			     n, first);
	return 0;
}

static int cmd_defrag(struct ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},
	    {"LEADER", "isLeader"},
	    {"DB SIZE BEFORE", "before"},
	    {"DB SIZE AFTER", "after"},
	};
	size_t idx[EO_PLUGIN_TARGETS_MAX], order[EO_PLUGIN_TARGETS_MAX], n, i;
	int64_t before[EO_PLUGIN_TARGETS_MAX];
	int leader = -1, rc = pick_targets(c, idx, &n);
	json_t *doc, *rows;
	char b1[32], b2[32];

	if (rc != 0)
		return rc;
	for (i = 0; i < n; i++) {
		struct eo_etcd_status st = {0};

		rc = member_status(c, c->t[idx[i]].name, &st);
		if (rc != 0)
			return rc; /* defragmenting around an unreachable member: refuse */
		before[i] = st.db_size;
		if (st.leader != 0 && st.leader == st.member_id)
			leader = (int)i;
		eo_etcd_status_clear(&st);
	}
	eo_plugin_defrag_order(n, leader, order);
	doc = base_doc(c);
	rows = json_array();
	json_object_set_new(doc, "members", rows);
	for (i = 0; i < n; i++) {
		const char *name = c->t[idx[order[i]]].name;
		struct eo_etcd_status st = {0};
		char *body = NULL;
		size_t len = 0;

		rc = etcd_call(c, name, "/v3/maintenance/defragment", "{}",
			       c->a->timeout_s ? 0 : DEFRAG_TIMEOUT_MS, &body, &len);
		free(body);
		if (rc != 0) {
			json_decref(doc);
			return rc;
		}
		rc = member_status(c, name, &st);
		if (rc != 0) {
			json_decref(doc);
			return rc;
		}
		json_array_append_new(
		    rows,
		    json_pack("{s:s,s:b,s:s,s:s,s:I,s:I}", "name", name, "isLeader",
			      (int)order[i] == leader, "before",
			      eo_plugin_bytes(before[order[i]], b1, sizeof(b1)), "after",
			      eo_plugin_bytes(st.db_size, b2, sizeof(b2)), "dbSizeBefore",
			      (json_int_t)before[order[i]], "dbSizeAfter", (json_int_t)st.db_size));
		eo_etcd_status_clear(&st);
	}
	return emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
}

/* Runs route on the first member that answers (query order). */
static int cluster_call(struct ctx *c, const char *route, const char *body, char **resp,
			size_t *len, const char **via)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;
	int rc = 0;

	n = eo_plugin_query_order(c->t, c->nt, order);
	if (n == 0)
		return failf(c, EO_PEXIT_FAILED, "no member of %s/%s has a running Pod", c->ns,
			     c->a->cluster);
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

static int cmd_compact(struct ctx *c)
{
	int64_t rev = c->a->revision;
	char *body = NULL, *req, sentence[256];
	size_t len = 0;
	int rc;
	const char *via = NULL;

	if (rev == 0) {
		struct eo_etcd_range_opts ro = {.count_only = true};
		struct eo_etcd_range r = {0};

		req = eo_etcd_wire_req_range("kubectl-etcd", 12, &ro);
		if (!req)
			return failf(c, EO_PEXIT_FAILED, "out of memory");
		rc = cluster_call(c, "/v3/kv/range", req, &body, &len, NULL);
		free(req);
		if (rc != 0)
			return rc;
		if (eo_etcd_wire_parse_range(body, len, &r) != EO_ETCD_OK || r.revision < 1) {
			eo_etcd_range_clear(&r);
			free(body);
			return failf(c, EO_PEXIT_FAILED, "cannot read the current revision");
		}
		rev = r.revision;
		eo_etcd_range_clear(&r);
		free(body);
		body = NULL;
	}
	req = eo_etcd_wire_req_compact(rev, true);
	if (!req)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	rc = cluster_call(c, "/v3/kv/compaction", req, &body, &len, &via);
	free(req);
	free(body);
	if (rc != 0)
		return rc;
	snprintf(sentence, sizeof(sentence), "compacted %s/%s up to revision %" PRId64, c->ns,
		 c->a->cluster, rev);
	return emit(c,
		    json_pack("{s:s,s:s,s:I,s:b}", "cluster", c->a->cluster, "namespace", c->ns,
			      "revision", (json_int_t)rev, "physical", 1),
		    NULL, NULL, 0, sentence);
}

static int get_alarms(struct ctx *c, json_t **alarms)
{
	char *body = NULL, *req = eo_etcd_wire_req_alarm("GET", NULL), err[256];
	size_t len = 0;
	int rc;

	if (!req)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	rc = cluster_call(c, "/v3/maintenance/alarm", req, &body, &len, NULL);
	free(req);
	if (rc != 0)
		return rc;
	if (eo_plugin_parse_alarms(body, len, alarms, err, sizeof(err)) != 0)
		rc = failf(c, EO_PEXIT_FAILED, "%s", err);
	free(body);
	return rc;
}

static json_t *alarm_rows(json_t *alarms, const struct eo_etcd_members *ms)
{
	json_t *rows = json_array(), *a;
	char hex[32], nb[32];
	size_t i;

	json_array_foreach(alarms, i, a)
	{
		uint64_t id = eo_plugin_alarm_member(a);

		json_array_append_new(rows, json_pack("{s:s,s:s,s:O}", "member",
						      name_of(ms, id, nb, sizeof(nb)), "memberID",
						      eo_plugin_id_hex(id, hex, sizeof(hex)),
						      "alarm", json_object_get(a, "alarm")));
	}
	return rows;
}

static const struct eo_plugin_col alarm_cols[] = {
    {"MEMBER", "member"},
    {"ID", "memberID"},
    {"ALARM", "alarm"},
};

static int cmd_alarm(struct ctx *c, bool disarm)
{
	struct eo_etcd_members ms = {0};
	json_t *alarms = NULL, *doc, *a;
	size_t i;
	int rc = member_list(c, &ms, NULL);
	const char *sentence = NULL;

	if (rc != 0)
		return rc;
	rc = get_alarms(c, &alarms);
	if (rc != 0)
		goto out;
	if (disarm) {
		json_array_foreach(alarms, i, a)
		{
			char *body = NULL, *req;
			size_t len = 0;

			req = eo_etcd_wire_req_alarm_name(
			    "DEACTIVATE", eo_plugin_alarm_member(a),
			    json_string_value(json_object_get(a, "alarm")));
			if (!req) {
				rc = failf(c, EO_PEXIT_FAILED, "out of memory");
				goto out;
			}
			rc = cluster_call(c, "/v3/maintenance/alarm", req, &body, &len, NULL);
			free(req);
			free(body);
			if (rc != 0)
				goto out;
		}
	}
	doc = base_doc(c);
	json_object_set_new(doc, disarm ? "disarmed" : "alarms", alarm_rows(alarms, &ms));
	if (json_array_size(alarms) == 0)
		sentence = disarm ? "no alarm was raised; nothing to disarm" : "no alarms raised";
	else if (disarm)
		sentence = "disarmed the alarms above";
	rc = emit(c, doc, disarm ? "disarmed" : "alarms",
		  json_array_size(alarms) ? alarm_cols : NULL, 3, sentence);
out:
	json_decref(alarms);
	eo_etcd_members_clear(&ms);
	return rc;
}

/* The leader's ID as the running members see it (0: none known). */
static uint64_t find_leader(struct ctx *c)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;

	n = eo_plugin_query_order(c->t, c->nt, order);
	for (i = 0; i < n; i++) {
		struct eo_etcd_status st = {0};
		uint64_t l;

		if (member_status(c, c->t[order[i]].name, &st) != 0)
			continue;
		l = st.leader;
		eo_etcd_status_clear(&st);
		if (l)
			return l;
	}
	return 0;
}

static int cmd_forfeit(struct ctx *c)
{
	struct eo_etcd_members ms = {0};
	const char *running[EO_PLUGIN_TARGETS_MAX];
	size_t nrun = 0, i;
	uint64_t leader, target = 0, now = 0;
	char hex1[32], hex2[32], nb1[32], nb2[32], *req, *body = NULL, sentence[512];
	const char *lname;
	size_t len = 0;
	int rc = member_list(c, &ms, NULL), k;

	if (rc != 0)
		return rc;
	for (i = 0; i < c->nt; i++)
		if (c->t[i].running)
			running[nrun++] = c->t[i].name;
	leader = find_leader(c);
	k = eo_plugin_forfeit_target(&ms, leader, c->a->to, running, nrun, &target, c->msg,
				     sizeof(c->msg));
	if (k != 0) {
		/* --to names nothing etcd knows: not found when no EtcdMember has that name. */
		rc = k == -2 && eo_plugin_target_find(c->t, c->nt, c->a->to) < 0 ? EO_PEXIT_NOTFOUND
										 : EO_PEXIT_REFUSED;
		goto out;
	}
	lname = name_of(&ms, leader, nb1, sizeof(nb1));
	k = eo_plugin_target_find(c->t, c->nt, lname);
	if (k < 0 || !c->t[k].running) {
		rc = failf(c, EO_PEXIT_FAILED, "the leader %s has no running Pod to ask", lname);
		goto out;
	}
	req = eo_etcd_wire_req_move_leader(target);
	if (!req) {
		rc = failf(c, EO_PEXIT_FAILED, "out of memory");
		goto out;
	}
	rc = etcd_call(c, lname, "/v3/maintenance/transfer-leadership", req, 0, &body, &len);
	free(req);
	free(body);
	if (rc != 0)
		goto out;
	for (i = 0; i < LEADER_WAIT_TRIES; i++) {
		now = find_leader(c);
		if (now && now != leader)
			break;
		eo_sleep_ms(LEADER_WAIT_SLEEP_MS);
	}
	if (now != target) {
		rc = failf(c, EO_PEXIT_FAILED,
			   "etcd accepted the transfer but the leader is now %s, not %s",
			   name_of(&ms, now, nb2, sizeof(nb2)),
			   name_of(&ms, target, hex2, sizeof(hex2)));
		goto out;
	}
	snprintf(sentence, sizeof(sentence), "leadership moved from %s (%s) to %s (%s)", lname,
		 eo_plugin_id_hex(leader, hex1, sizeof(hex1)),
		 name_of(&ms, target, nb2, sizeof(nb2)),
		 eo_plugin_id_hex(target, hex2, sizeof(hex2)));
	{
		json_t *doc = base_doc(c);

		json_object_set_new(doc, "previousLeader", json_string(lname));
		json_object_set_new(doc, "leader",
				    json_string(name_of(&ms, target, nb2, sizeof(nb2))));
		rc = emit(c, doc, NULL, NULL, 0, sentence);
	}
out:
	eo_etcd_members_clear(&ms);
	return rc;
}

/* ---- snapshot -------------------------------------------------------------------------- */

struct snap {
	struct eo_filestore_writer w;
	struct eo_snapstream ss;
	struct eo_snapcheck check;
	char werr[256];
	FILE *progress; /* stderr when it is a terminal, else NULL */
	const char *member;
	int64_t start_ms, shown_ms;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Rewrites the progress line (bytes, rate) at most four times a second, or now when final. */
static void snap_progress(struct snap *s, bool final)
{
	int64_t now = now_ms();
	char line[256];

	if (!s->progress || (!final && now - s->shown_ms < 250))
		return;
	s->shown_ms = now;
	fprintf(s->progress, "\r%s\033[K%s",
		eo_plugin_progress(s->member, (int64_t)s->check.total, now - s->start_ms, line,
				   sizeof(line)),
		final ? "\n" : "");
	fflush(s->progress);
}

static int snap_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct snap *s = ud;

	eo_snapcheck_feed(&s->check, p, n);
	snap_progress(s, false);
	if (eo_filestore_write(&s->w, p, n, s->werr, sizeof(s->werr)) != 0) {
		snprintf(err, errcap, "writing the snapshot: %s", s->werr);
		return -1;
	}
	return 0;
}

static int snap_feed(void *ud, const char *p, size_t n)
{
	struct snap *s = ud;

	return eo_snapstream_feed(&s->ss, p, n);
}

static int cmd_snapshot(struct ctx *c)
{
	struct snap *s = calloc(1, sizeof(*s));
	char dirbuf[4096], basebuf[4096], host[EO_NAME_MAX * 2 + 64], err[512];
	char sha[EO_SNAP_SHA_HEX_LEN + 1] = "", sentence[1024];
	struct eo_plugin_answer *ans = calloc(1, sizeof(*ans));
	size_t order[EO_PLUGIN_TARGETS_MAX], n;
	enum eo_snapcheck_result verdict;
	const char *member, *dir, *base;
	int rc, k;
	eo_kube_err e;

	if (!s || !ans) {
		free(s);
		free(ans);
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	}
	s->w.fd = s->w.dirfd = -1;
	if (c->a->member) {
		k = eo_plugin_target_find(c->t, c->nt, c->a->member);
		if (k < 0) {
			rc = failf(c, EO_PEXIT_NOTFOUND, "%s is not a member of cluster %s/%s",
				   c->a->member, c->ns, c->a->cluster);
			goto out;
		}
		member = c->t[k].name;
	} else {
		n = eo_plugin_query_order(c->t, c->nt, order);
		if (n == 0) {
			rc = failf(c, EO_PEXIT_FAILED, "no member of %s/%s has a running Pod",
				   c->ns, c->a->cluster);
			goto out;
		}
		member = c->t[order[0]].name;
	}
	if (strlen(c->a->path) >= sizeof(dirbuf)) {
		rc = failf(c, EO_PEXIT_LOCAL, "snapshot path too long");
		goto out;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", c->a->path);
	snprintf(basebuf, sizeof(basebuf), "%s", c->a->path);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	/* The temporary file .<name>.tmp-<pid>-<n> lands beside the target, mode 0600. */
	if (eo_filestore_begin(&s->w, dir, base, err, sizeof(err)) != 0 ||
	    fchmod(s->w.fd, 0600) != 0) {
		if (s->w.fd >= 0)
			snprintf(err, sizeof(err), "chmod: %s", strerror(errno));
		rc = failf(c, EO_PEXIT_LOCAL, "cannot write the snapshot next to %s: %s",
			   c->a->path, err);
		goto out;
	}
	if (eo_snapstream_init(&s->ss, snap_sink, s) != 0 || eo_snapcheck_init(&s->check) != 0) {
		rc = failf(c, EO_PEXIT_FAILED, "out of memory");
		goto out;
	}
	s->member = member;
	s->progress = c->errf && isatty(fileno(c->errf)) ? c->errf : NULL;
	s->start_ms = s->shown_ms = now_ms();
	e = eo_plugin_reach_post(&c->reach, member, member_host(c, member, host, sizeof(host)),
				 "/v3/maintenance/snapshot", "{}", -1, SNAPSHOT_STALL_S, snap_feed,
				 s, ans);
	snap_progress(s, true);
	if (s->werr[0]) {
		rc = failf(c, EO_PEXIT_LOCAL, "%s", s->werr);
		goto out;
	}
	if (s->ss.failed) {
		rc = failf(c, EO_PEXIT_FAILED, "member %s: %s", member, s->ss.err);
		goto out;
	}
	if (e != EO_KUBE_OK) {
		rc = call_failed(c, ans, member, "/v3/maintenance/snapshot", NULL);
		goto out;
	}
	if (eo_snapstream_finish(&s->ss) != 0) {
		rc = failf(c, EO_PEXIT_FAILED, "member %s: %s", member, s->ss.err);
		goto out;
	}
	verdict = eo_snapcheck_finish(&s->check, sha);
	if (verdict != EO_SNAPCHECK_OK) {
		rc = failf(c, EO_PEXIT_FAILED, "member %s: %s", member,
			   eo_snapcheck_strerror(verdict));
		goto out;
	}
	/* fsync, rename over an existing file, fsync the directory; removes the file on failure */
	if (eo_filestore_commit(&s->w, NULL, true, err, sizeof(err)) != 0) {
		rc = failf(c, EO_PEXIT_LOCAL, "%s", err);
		goto out;
	}
	snprintf(sentence, sizeof(sentence),
		 "snapshot of member %s written to %s: %" PRIu64 " bytes, sha256 %s; etcd's "
		 "integrity hash verified",
		 member, c->a->path, s->check.total, sha);
	rc = emit(c,
		  json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:s}", "cluster", c->a->cluster,
			    "namespace", c->ns, "member", member, "path", c->a->path, "size",
			    (json_int_t)s->check.total, "sha256", sha, "verified", 1,
			    "storageVersion", s->ss.storage_version),
		  NULL, NULL, 0, sentence);
out:
	eo_filestore_abort(&s->w); /* removes the temporary file unless committed */
	eo_snapstream_free(&s->ss);
	eo_snapcheck_free(&s->check);
	free(ans);
	free(s);
	return rc;
}

/* ---- membership through the operator ------------------------------------------------- */

static int cmd_scale(struct ctx *c)
{
	struct eo_plan_member pm[EO_PLUGIN_TARGETS_MAX];
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->ns,
				     c->a->cluster};
	struct eo_kube_error ke = {0};
	enum eo_plugin_scale s;
	json_t *patch = NULL;
	char res[EO_NAME_MAX + 64];
	size_t i;
	eo_kube_err e;

	for (i = 0; i < c->nt; i++) {
		pm[i].member = c->t[i].member;
		pm[i].pod = c->t[i].pod;
		pm[i].pvc = NULL;
	}
	s = eo_plugin_scale_decide(c->cluster, pm, c->nt,
				   c->a->cmd == EO_PCMD_REMOVE_MEMBER ? c->a->remove_name : NULL,
				   &patch, c->msg, sizeof(c->msg));
	if (s != EO_PSCALE_PATCH)
		return (int)eo_plugin_scale_exit(s);
	e = eo_kube_patch(c->kc, &r, patch, NULL, &ke);
	json_decref(patch);
	if (e == EO_KUBE_ECONFLICT)
		return failf(c, EO_PEXIT_FAILED,
			     "EtcdCluster %s/%s changed while we decided; nothing was changed, run "
			     "the command again",
			     c->ns, c->a->cluster);
	if (e != EO_KUBE_OK) {
		snprintf(res, sizeof(res), "%s \"%s\"", EO_RESOURCE_CLUSTERS, c->a->cluster);
		return (int)eo_plugin_kube_failure(e, &ke, "patch", res, c->ns, c->msg,
						   sizeof(c->msg));
	}
	{
		char sentence[EO_PLUGIN_MSG_MAX];

		snprintf(sentence, sizeof(sentence), "%s", c->msg);
		c->msg[0] = '\0';
		return emit(c,
			    json_pack("{s:s,s:s,s:s,s:s}", "cluster", c->a->cluster, "namespace",
				      c->ns, "action", eo_plugin_cmd_name(c->a->cmd), "message",
				      sentence),
			    NULL, NULL, 0, sentence);
	}
}

/* ---- report (plugin/report.h) ----------------------------------------------------------- */

#define REPORT_LOG_LINE_MAX  8192
#define REPORT_OPERATOR_PODS 4

/* Runs a command with its JSON output captured into *text (for the report). */
static int capture(struct ctx *c, int (*fn)(struct ctx *), char **text, size_t *len)
{
	struct eo_plugin_args a2 = *c->a;
	const struct eo_plugin_args *saved = c->a;
	FILE *saved_out = c->out, *m;
	int rc;

	*text = NULL;
	*len = 0;
	a2.format = EO_PFMT_JSON;
	a2.member = NULL;
	m = open_memstream(text, len);
	if (!m)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	c->a = &a2;
	c->out = m;
	rc = fn(c);
	c->a = saved;
	c->out = saved_out;
	fclose(m);
	return rc;
}

struct logcut {
	struct eo_strbuf *out;
	const char *ns, *cluster;
	char line[REPORT_LOG_LINE_MAX];
	size_t n;
	bool overlong; /* the current line outgrew the buffer: dropped */
	bool cut;      /* the report's cap was reached: later lines dropped */
};

/* Keeps the operator's log lines about the cluster. */
static int log_sink(void *ud, const char *p, size_t n)
{
	struct logcut *l = ud;

	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (l->n < sizeof(l->line))
				l->line[l->n++] = p[i];
			else
				l->overlong = true;
			continue;
		}
		if (!l->overlong && eo_plugin_log_line_matches(l->line, l->n, l->ns, l->cluster)) {
			if (l->out->len + l->n + 2 > l->out->max) {
				l->cut = true;
			} else {
				eo_strbuf_add_n(l->out, l->line, l->n);
				eo_strbuf_add(l->out, "\n");
			}
		}
		l->n = 0;
		l->overlong = false;
	}
	return 0;
}

static void note(struct eo_strbuf *notes, const char *what, const char *why)
{
	eo_strbuf_add(notes, "  ");
	eo_strbuf_add(notes, what);
	eo_strbuf_add(notes, ": ");
	eo_strbuf_add(notes, why);
	eo_strbuf_add(notes, "\n");
}

/* The operator's Pods (found cluster-wide by the chart's label), their manager's log lines
 * about this cluster. */
static void report_logs(struct ctx *c, struct eo_strbuf *logs, struct eo_strbuf *notes)
{
	struct eo_kube_list_opts lo = {.label_selector = "app.kubernetes.io/name=etcd-operator"};
	struct eo_kube_resource pr = {"v1", "pods", NULL, NULL};
	struct eo_kube_error ke = {0};
	struct logcut *l = calloc(1, sizeof(*l));
	json_t *pods = NULL, *p;
	size_t i;
	eo_kube_err e;

	if (!l) {
		note(notes, "operator log", "out of memory");
		return;
	}
	e = eo_kube_list(c->kc, &pr, &lo, &pods, &ke);
	if (e != EO_KUBE_OK) {
		note(notes, "operator log (listing the operator's Pods in every namespace)",
		     ke.message[0] ? ke.message : eo_kube_strerror(e));
		free(l);
		return;
	}
	if (json_array_size(json_object_get(pods, "items")) == 0)
		note(notes, "operator log", "no Pod labelled app.kubernetes.io/name=etcd-operator");
	json_array_foreach(json_object_get(pods, "items"), i, p)
	{
		const json_t *meta = json_object_get(p, "metadata");
		const char *pns = json_string_value(json_object_get(meta, "namespace"));
		const char *pname = json_string_value(json_object_get(meta, "name"));
		char path[1024], head[600];
		struct eo_kube_raw_req rq = {.method = "GET", .path = path, .timeout_ms = 60000};
		struct eo_kube_raw_res *res;

		if (i == REPORT_OPERATOR_PODS || !pns || !pname)
			break;
		res = calloc(1, sizeof(*res));
		if (!res)
			break;
		snprintf(path, sizeof(path),
			 "/api/v1/namespaces/%s/pods/%s/log?container=manager&tailLines=100000",
			 pns, pname);
		snprintf(head, sizeof(head), "# Pod %s/%s, container manager\n", pns, pname);
		eo_strbuf_add(logs, head);
		*l = (struct logcut){
		    .out = logs, .ns = c->ns, .cluster = c->a->cluster, .cut = l->cut};
		e = eo_kube_raw(c->kc, &rq, log_sink, l, res, &ke);
		if (e != EO_KUBE_OK) {
			snprintf(head, sizeof(head), "operator log of %s/%s", pns, pname);
			note(notes, head, ke.message[0] ? ke.message : eo_kube_strerror(e));
		}
		free(res);
	}
	if (l->cut)
		note(notes, "operator log", "more lines than the report keeps: the latest are cut");
	json_decref(pods);
	free(l);
}

/* Events in the namespace about the cluster and its objects. */
static json_t *report_events(struct ctx *c, struct eo_strbuf *notes)
{
	struct eo_kube_resource er = {"v1", "events", c->ns, NULL};
	struct eo_kube_error ke = {0};
	json_t *list = NULL, *ev, *keep = json_array();
	size_t i;
	eo_kube_err e = eo_kube_list(c->kc, &er, NULL, &list, &ke);

	if (e != EO_KUBE_OK)
		note(notes, "events", ke.message[0] ? ke.message : eo_kube_strerror(e));
	json_array_foreach(json_object_get(list, "items"), i, ev)
	{
		if (eo_plugin_event_matches(ev, c->a->cluster))
			json_array_append(keep, ev);
	}
	json_decref(list);
	return json_pack("{s:o}", "items", keep);
}

/* etcd's own view, through the same path as members and status. */
static void report_etcd(struct ctx *c, struct eo_strbuf *notes, char **members, size_t *mlen,
			char **status, size_t *slen)
{
	*members = *status = NULL;
	*mlen = *slen = 0;
	c->msg[0] = '\0';
	if (eo_plugin_reach_open(&c->reach, c->kc, c->cluster, c->ns, c->msg, sizeof(c->msg)) !=
		0 ||
	    login(c) != 0) {
		note(notes, "etcd member list and status", c->msg);
		return;
	}
	if (capture(c, cmd_members, members, mlen) != 0)
		note(notes, "etcd member list", c->msg);
	c->msg[0] = '\0';
	if (capture(c, cmd_status, status, slen) != 0)
		note(notes, "etcd status (of some members)", c->msg);
	c->msg[0] = '\0';
}

struct report_file {
	const char *name;
	char *data;
	size_t len;
};

static char *dumps(json_t *j, size_t *len)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

	*len = s ? strlen(s) : 0;
	return s;
}

static int cmd_report(struct ctx *c)
{
	struct eo_strbuf notes = EO_STRBUF_INIT(64u << 10),
			 logs = EO_STRBUF_INIT(EO_PLUGIN_REPORT_LOG_MAX);
	struct eo_strbuf summary = EO_STRBUF_INIT(1u << 20);
	struct report_file f[8] = {
	    {"summary.txt", NULL, 0},	    {"cluster.json", NULL, 0},
	    {"etcdmembers.json", NULL, 0},  {"pods.json", NULL, 0},
	    {"events.json", NULL, 0},	    {"operator.log", NULL, 0},
	    {"etcd-members.json", NULL, 0}, {"etcd-status.json", NULL, 0},
	};
	char name[600], err[512], sentence[1024];
	const char *path = c->a->path;
	struct eo_plugin_tar *t;
	time_t now = time(NULL);
	json_t *events;
	int rc = 0;
	size_t i;

	eo_plugin_report_scrub(c->members);
	eo_plugin_report_scrub(c->pods);
	json_object_del(json_object_get(c->cluster, "metadata"), "managedFields");
	f[1].data = dumps(c->cluster, &f[1].len);
	f[2].data = dumps(c->members, &f[2].len);
	f[3].data = dumps(c->pods, &f[3].len);
	events = report_events(c, &notes);
	f[4].data = dumps(events, &f[4].len);
	json_decref(events);
	report_logs(c, &logs, &notes);
	report_etcd(c, &notes, &f[6].data, &f[6].len, &f[7].data, &f[7].len);
	f[5].data = eo_strbuf_take(&logs, &f[5].len);
	eo_plugin_report_summary(c->cluster, c->members, notes.p ? notes.p : "", &summary);
	f[0].data = eo_strbuf_take(&summary, &f[0].len);

	if (!path) {
		eo_plugin_report_name(c->ns, c->a->cluster, now, name, sizeof(name));
		path = name;
	}
	t = eo_plugin_tar_open(path, err, sizeof(err));
	if (!t) {
		rc = failf(c, EO_PEXIT_LOCAL, "%s", err);
		goto out;
	}
	for (i = 0; i < sizeof(f) / sizeof(f[0]) && rc == 0; i++)
		if (f[i].data && eo_plugin_tar_add(t, f[i].name, f[i].data, f[i].len, now, err,
						   sizeof(err)) != 0)
			rc = failf(c, EO_PEXIT_LOCAL, "%s", err);
	if (eo_plugin_tar_close(t, rc != 0, err, sizeof(err)) != 0 && rc == 0)
		rc = failf(c, EO_PEXIT_LOCAL, "%s", err);
	if (rc != 0)
		goto out;
	if (notes.p && c->errf)
		fprintf(c->errf, "warning: not in the report (see summary.txt):\n%s", notes.p);
	snprintf(sentence, sizeof(sentence),
		 "report of %s/%s written to %s (no Secrets; Pod env values left out)", c->ns,
		 c->a->cluster, path);
	rc = emit(c,
		  json_pack("{s:s,s:s,s:s,s:b}", "cluster", c->a->cluster, "namespace", c->ns,
			    "path", path, "complete", notes.p == NULL),
		  NULL, NULL, 0, sentence);
out:
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		free(f[i].data);
	eo_strbuf_free(&notes);
	eo_strbuf_free(&logs);
	eo_strbuf_free(&summary);
	return rc;
}

int eo_plugin_run(const struct eo_plugin_args *a, FILE *out, FILE *errf)
{
	struct ctx *c = calloc(1, sizeof(*c));
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
		rc = failf(c, EO_PEXIT_REFUSED, "%s", paused);
		goto out;
	}
	rc = load_members(c);
	if (rc != 0)
		goto out;
	if (a->cmd == EO_PCMD_REPORT) {
		rc = cmd_report(c);
		goto out;
	}
	if (a->cmd != EO_PCMD_ADD_MEMBER && a->cmd != EO_PCMD_REMOVE_MEMBER) {
		rc = eo_plugin_reach_open(&c->reach, c->kc, c->cluster, c->ns, c->msg,
					  sizeof(c->msg));
		if (rc == 0)
			rc = login(c);
		if (rc != 0)
			goto out;
	}
	switch (a->cmd) {
	case EO_PCMD_MEMBERS:
		rc = cmd_members(c);
		break;
	case EO_PCMD_STATUS:
		rc = cmd_status(c);
		break;
	case EO_PCMD_DEFRAG:
		rc = cmd_defrag(c);
		break;
	case EO_PCMD_COMPACT:
		rc = cmd_compact(c);
		break;
	case EO_PCMD_ALARM_LIST:
		rc = cmd_alarm(c, false);
		break;
	case EO_PCMD_ALARM_DISARM:
		rc = cmd_alarm(c, true);
		break;
	case EO_PCMD_FORFEIT_LEADERSHIP:
		rc = cmd_forfeit(c);
		break;
	case EO_PCMD_SNAPSHOT:
		rc = cmd_snapshot(c);
		break;
	case EO_PCMD_ADD_MEMBER:
	case EO_PCMD_REMOVE_MEMBER:
		rc = cmd_scale(c);
		break;
	default:
		rc = failf(c, EO_PEXIT_USAGE, "nothing to run");
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
			const char *name = json_string_value(
			    json_object_get(json_object_get(item, "metadata"), "name"));

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
