/* `kubectl etcd report` (plugin/run.h, plugin/report.h): the bug-report archive. */
#include "plugin/internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/meta.h"
#include "core/strbuf.h"
#include "plugin/report.h"

#define REPORT_LOG_LINE_MAX  8192
#define REPORT_OPERATOR_PODS 4

struct logcut {
	struct eo_strbuf *out;
	const char *ns, *cluster;
	char line[REPORT_LOG_LINE_MAX];
	size_t n;
	bool overlong; /* the current line outgrew the buffer: dropped */
	bool cut;      /* the report's cap was reached: later lines dropped */
};

struct report_file {
	const char *name;
	char *data;
	size_t len;
};

/* Runs a command with its JSON output captured into *text (for the report). */
static int capture(struct eo__plugin_ctx *c, int (*fn)(struct eo__plugin_ctx *), char **text,
		   size_t *len)
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
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	c->a = &a2;
	c->out = m;
	rc = fn(c);
	c->a = saved;
	c->out = saved_out;
	fclose(m);
	return rc;
}

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
static void report_logs(struct eo__plugin_ctx *c, struct eo_strbuf *logs, struct eo_strbuf *notes)
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
		const char *pns = eo_meta_namespace(p);
		const char *pname = eo_meta_name(p);
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
static json_t *report_events(struct eo__plugin_ctx *c, struct eo_strbuf *notes)
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
static void report_etcd(struct eo__plugin_ctx *c, struct eo_strbuf *notes, char **members,
			size_t *mlen, char **status, size_t *slen)
{
	*members = *status = NULL;
	*mlen = *slen = 0;
	c->msg[0] = '\0';
	if (eo_plugin_reach_open(&c->reach, c->kc, c->cluster, c->ns, c->msg, sizeof(c->msg)) !=
		0 ||
	    eo__plugin_login(c) != 0) {
		note(notes, "etcd member list and status", c->msg);
		return;
	}
	if (capture(c, eo__plugin_cmd_members, members, mlen) != 0)
		note(notes, "etcd member list", c->msg);
	c->msg[0] = '\0';
	if (capture(c, eo__plugin_cmd_status, status, slen) != 0)
		note(notes, "etcd status (of some members)", c->msg);
	c->msg[0] = '\0';
}

static char *dumps(json_t *j, size_t *len)
{
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

	*len = s ? strlen(s) : 0;
	return s;
}

int eo__plugin_cmd_report(struct eo__plugin_ctx *c)
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
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "%s", err);
		goto out;
	}
	for (i = 0; i < sizeof(f) / sizeof(f[0]) && rc == 0; i++)
		if (f[i].data && eo_plugin_tar_add(t, f[i].name, f[i].data, f[i].len, now, err,
						   sizeof(err)) != 0)
			rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "%s", err);
	if (eo_plugin_tar_close(t, rc != 0, err, sizeof(err)) != 0 && rc == 0)
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "%s", err);
	if (rc != 0)
		goto out;
	if (notes.p && c->errf)
		fprintf(c->errf, "warning: not in the report (see summary.txt):\n%s", notes.p);
	snprintf(sentence, sizeof(sentence),
		 "report of %s/%s written to %s (no Secrets; Pod env values left out)", c->ns,
		 c->a->cluster, path);
	rc = eo__plugin_emit(c,
			     json_pack("{s:s,s:s,s:s,s:b}", "cluster", c->a->cluster, "namespace",
				       c->ns, "path", path, "complete", notes.p == NULL),
			     NULL, NULL, 0, sentence);
out:
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		free(f[i].data);
	eo_strbuf_free(&notes);
	eo_strbuf_free(&logs);
	eo_strbuf_free(&summary);
	return rc;
}
