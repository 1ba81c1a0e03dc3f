/* `kubectl etcd migrate`, the I/O half (plugin/migrate_run.h). */
#include "core/sleep.h"
#include "plugin/migrate_run.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/cluster.h"
#include "api/member.h"
#include "api/meta.h"
#include "api/names.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "etcd/wire.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/raw.h"
#include "plugin/args.h"
#include "plugin/decide.h"
#include "plugin/migrate.h"

#define ETCD_BODY_MAX	   (4u << 20)
#define CALL_TIMEOUT_MS	   15000L
#define DEFAULT_TIMEOUT_S  600L
#define POLL_MS		   2000L
#define REPORT_AFTER_S	   6  /* a wait says what it waits for after this */
#define REPORT_EVERY_S	   20 /* and again this often */
#define ADMISSION_GV	   "admissionregistration.k8s.io/v1"
#define STATE_KEY_LEGACY   "etcdcluster.json"
#define STATE_KEY_STS	   "statefulset.json"
#define LEGACY_CLUSTER_RES "etcdclusters.etcd.aenix.io"

struct margs {
	bool apply, help, no_snapshot, json, s3_path_style, s3_insecure, remove_webhooks;
	const char *name, *ns, *kubeconfig, *context;
	const char *snap_pvc, *s3_endpoint, *s3_bucket, *s3_secret, *s3_key, *s3_region;
	const char *legacy_operator, *version;
	long timeout_s;
};

struct mctx {
	const struct margs *a;
	FILE *out, *errf;
	eo_kube_client *kc;
	const char *ns;
	/* what was read */
	json_t *legacy, *sts, *pods, *pvcs, *dep, *state_cm, *saved, *ours, *pod_items, *pvc_items;
	bool sts_live, legacy_live;
	struct eo_etcd_members etcd;
	bool etcd_ok;
	char etcd_err[256];
	bool status_ok[EO_MIGRATE_MAX_MEMBERS];
	size_t n_alarms[EO_MIGRATE_MAX_MEMBERS];
	struct eo_migrate_plan plan;
	/* the admission webhook configurations covering the legacy EtcdClusters */
	json_t *mwh, *vwh, *dep_svcs;
	struct eo_migrate_webhooks wh;
	enum eo_migrate_webhook_action wh_action;
	char wh_msg[EO_MIGRATE_MSG_MAX];
	char msg[EO_MIGRATE_MSG_MAX];
};

static const char help_text[] =
    "Adopt a cluster of the legacy operator (etcd.aenix.io/v1alpha1) in place.\n"
    "\n"
    "Usage:\n"
    "  kubectl etcd migrate inspect NAME [-n NS] [-o json]\n"
    "  kubectl etcd migrate apply NAME [-n NS] (--snapshot-pvc CLAIM[/SUBPATH] |\n"
    "      --snapshot-s3-endpoint URL --snapshot-s3-bucket B --snapshot-s3-secret S\n"
    "      [--snapshot-s3-key PREFIX] [--snapshot-s3-region R] [--snapshot-s3-path-style]\n"
    "      [--snapshot-s3-insecure] |\n"
    "      --no-snapshot) [" EO_MIGRATE_WEBHOOKS_FLAG "]\n"
    "\n"
    "inspect reads the legacy EtcdCluster, its StatefulSet, Pods, PVCs and etcd itself and\n"
    "says whether the cluster can be adopted and what changes; it writes nothing.\n"
    "apply adopts it: an EtcdCluster of this operator (held while the migration runs), one\n"
    "EtcdMember per running member named after its Pod, a safety EtcdSnapshot NAME-pre-\n"
    "migration, then the legacy EtcdCluster and StatefulSet are deleted with their Pods and\n"
    "PVCs orphaned, and the Pods, PVCs and Services are handed to the new objects. etcd is\n"
    "not restarted. Interrupted, run it again: every step checks what is done already.\n"
    "\n"
    "Flags:\n"
    "  -n, --namespace NS        the cluster's namespace (default: the context's)\n"
    "      --kubeconfig FILE, --context NAME\n"
    "  -o, --output json         inspect: the plan as JSON\n"
    "      --legacy-operator NS/NAME  the legacy operator's Deployment (default\n"
    "                            " EO_MIGRATE_LEGACY_OPERATOR_NS "/" EO_MIGRATE_LEGACY_OPERATOR_NAME
    "); it\n"
    "                            must be scaled to 0\n"
    "      --etcd-version X.Y.Z  when the image tag does not say it\n"
    "      --no-snapshot         adopt without the safety snapshot (not recommended)\n"
    "      " EO_MIGRATE_WEBHOOKS_FLAG "  apply: save the legacy operator's admission\n"
    "                            webhooks (they cover etcd.aenix.io EtcdClusters and\n"
    "                            nobody answers them once it is stopped) in the\n"
    "                            migration ConfigMap, then delete them; without it\n"
    "                            apply refuses while they exist\n"
    "      --timeout SECONDS     how long to wait for the snapshot and for each step (600)\n"
    "\n"
    "Exit codes: 0 done, 1 failed, 2 usage, 3 not found, 4 forbidden, 5 refused (nothing\n"
    "was changed). docs/migration.md has the mapping, the steps and the rollback.\n";

const char *eo_plugin_migrate_help(void)
{
	return help_text;
}

__attribute__((format(printf, 3, 4))) static int failf(struct mctx *c, int code, const char *fmt,
						       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return code;
}

static void say(struct mctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct mctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(c->out, fmt, ap);
	va_end(ap);
	fputc('\n', c->out);
	fflush(c->out);
}

/* ---- arguments ------------------------------------------------------------------------ */

/* getopt_long's val of the flags without a letter; -n, -o and -h use their letter. */
enum {
	MO_KUBECONFIG = 256,
	MO_CONTEXT,
	MO_SNAP_PVC,
	MO_S3_ENDPOINT,
	MO_S3_BUCKET,
	MO_S3_SECRET,
	MO_S3_KEY,
	MO_S3_REGION,
	MO_LEGACY_OPERATOR,
	MO_VERSION,
	MO_TIMEOUT,
	MO_NO_SNAPSHOT,
	MO_S3_PATH_STYLE,
	MO_S3_INSECURE,
	MO_REMOVE_WEBHOOKS,
};

static const struct option migrate_opts[] = {
    {"namespace", required_argument, NULL, 'n'},
    {"kubeconfig", required_argument, NULL, MO_KUBECONFIG},
    {"context", required_argument, NULL, MO_CONTEXT},
    {"output", required_argument, NULL, 'o'},
    {"snapshot-pvc", required_argument, NULL, MO_SNAP_PVC},
    {"snapshot-s3-endpoint", required_argument, NULL, MO_S3_ENDPOINT},
    {"snapshot-s3-bucket", required_argument, NULL, MO_S3_BUCKET},
    {"snapshot-s3-secret", required_argument, NULL, MO_S3_SECRET},
    {"snapshot-s3-key", required_argument, NULL, MO_S3_KEY},
    {"snapshot-s3-region", required_argument, NULL, MO_S3_REGION},
    {"legacy-operator", required_argument, NULL, MO_LEGACY_OPERATOR},
    {"etcd-version", required_argument, NULL, MO_VERSION},
    {"timeout", required_argument, NULL, MO_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {"no-snapshot", no_argument, NULL, MO_NO_SNAPSHOT},
    {"snapshot-s3-path-style", no_argument, NULL, MO_S3_PATH_STYLE},
    {"snapshot-s3-insecure", no_argument, NULL, MO_S3_INSECURE},
    {"remove-legacy-webhooks", no_argument, NULL,
     MO_REMOVE_WEBHOOKS}, /* EO_MIGRATE_WEBHOOKS_FLAG */
    {NULL, 0, NULL, 0},
};

/* The words parse checks after the flags: the step, -o and --timeout as given. */
struct mwords {
	const char *sub, *output, *timeout;
};

static void set_migrate_flag(struct margs *a, struct mwords *w, int val, const char *v)
{
	switch (val) {
	case 'h':
		a->help = true;
		break;
	case MO_NO_SNAPSHOT:
		a->no_snapshot = true;
		break;
	case MO_S3_PATH_STYLE:
		a->s3_path_style = true;
		break;
	case MO_S3_INSECURE:
		a->s3_insecure = true; /* s3.insecure: a plain http:// endpoint */
		break;
	case MO_REMOVE_WEBHOOKS:
		a->remove_webhooks = true;
		break;
	case 'n':
		a->ns = v;
		break;
	case MO_KUBECONFIG:
		a->kubeconfig = v;
		break;
	case MO_CONTEXT:
		a->context = v;
		break;
	case 'o':
		w->output = v;
		break;
	case MO_SNAP_PVC:
		a->snap_pvc = v;
		break;
	case MO_S3_ENDPOINT:
		a->s3_endpoint = v;
		break;
	case MO_S3_BUCKET:
		a->s3_bucket = v;
		break;
	case MO_S3_SECRET:
		a->s3_secret = v;
		break;
	case MO_S3_KEY:
		a->s3_key = v;
		break;
	case MO_S3_REGION:
		a->s3_region = v;
		break;
	case MO_LEGACY_OPERATOR:
		a->legacy_operator = v;
		break;
	case MO_VERSION:
		a->version = v;
		break;
	case MO_TIMEOUT:
		w->timeout = v;
		break;
	default:
		break;
	}
}

/* The step, then the legacy cluster's name; nothing more. */
static int add_word(struct margs *a, struct mwords *w, const char *s, char *err, size_t cap)
{
	if (w->sub == NULL)
		w->sub = s;
	else if (a->name == NULL)
		a->name = s;
	else {
		snprintf(err, cap, "unexpected argument \"%s\"", s);
		return -1;
	}
	return 0;
}

/* The command line with getopt_long (eo_plugin_getopt: flags anywhere, "--" ends them). */
static int parse_words(int argc, char *const *argv, struct margs *a, struct mwords *w, char *err,
		       size_t cap)
{
	struct eo_popt o = {0};

	for (;;) {
		eo_plugin_getopt(argc, argv, "-:hn:o:", migrate_opts, &o);
		switch (o.kind) {
		case EO_POPT_END:
			for (int i = o.rest; i < argc; i++)
				if (add_word(a, w, argv[i], err, cap) != 0)
					return -1;
			return 0;
		case EO_POPT_ARG:
			if (add_word(a, w, o.arg, err, cap) != 0)
				return -1;
			break;
		case EO_POPT_FLAG:
			set_migrate_flag(a, w, o.val, o.arg);
			break;
		case EO_POPT_UNKNOWN:
			snprintf(err, cap, "unknown flag %s%s%s (kubectl etcd migrate --help)",
				 o.shown, o.in ? " in " : "", o.in ? o.in : "");
			return -1;
		case EO_POPT_NO_VALUE:
			snprintf(err, cap, "flag %s needs a value", o.shown);
			return -1;
		case EO_POPT_TAKES_NONE:
			snprintf(err, cap, "flag %s takes no value", o.shown);
			return -1;
		}
	}
}

static int parse(int argc, char *const *argv, struct margs *a, char *err, size_t cap)
{
	struct mwords w = {NULL, NULL, NULL};
	const char *sub, *output, *timeout;

	memset(a, 0, sizeof(*a));
	if (parse_words(argc, argv, a, &w, err, cap) != 0)
		return -1;
	sub = w.sub;
	output = w.output;
	timeout = w.timeout;
	if (a->help)
		return 0;
	if (sub == NULL || (strcmp(sub, "inspect") != 0 && strcmp(sub, "apply") != 0)) {
		snprintf(err, cap,
			 "migrate needs a step: inspect or apply (kubectl etcd migrate "
			 "--help)");
		return -1;
	}
	a->apply = strcmp(sub, "apply") == 0;
	if (a->name == NULL) {
		snprintf(err, cap, "migrate %s needs the legacy cluster's name", sub);
		return -1;
	}
	if (output != NULL) {
		if (strcmp(output, "json") != 0 && strcmp(output, "table") != 0) {
			snprintf(err, cap, "-o %s: migrate prints table or json", output);
			return -1;
		}
		a->json = strcmp(output, "json") == 0;
	}
	a->timeout_s = DEFAULT_TIMEOUT_S;
	if (timeout != NULL) {
		char *end = NULL;

		a->timeout_s = strtol(timeout, &end, 10);
		if (*end != '\0' || a->timeout_s <= 0 || a->timeout_s > 86400) {
			snprintf(err, cap, "--timeout %s: seconds from 1 to 86400", timeout);
			return -1;
		}
	}
	if (a->apply) {
		bool s3 = a->s3_endpoint || a->s3_bucket || a->s3_secret;
		int dests = (a->snap_pvc != NULL) + s3 + a->no_snapshot;

		if (dests == 0) {
			snprintf(
			    err, cap,
			    "migrate apply takes a safety snapshot first: give --snapshot-pvc "
			    "CLAIM or the --snapshot-s3-* flags, or --no-snapshot to go without");
			return -1;
		}
		if (dests > 1) {
			snprintf(err, cap,
				 "give one of --snapshot-pvc, --snapshot-s3-*, --no-snapshot");
			return -1;
		}
		if (s3 && !(a->s3_endpoint && a->s3_bucket && a->s3_secret)) {
			snprintf(err, cap,
				 "--snapshot-s3-endpoint, --snapshot-s3-bucket and "
				 "--snapshot-s3-secret go together");
			return -1;
		}
	}
	return 0;
}

/* ---- reading ------------------------------------------------------------------------ */

static int kube_fail(struct mctx *c, eo_kube_err e, const struct eo_kube_error *ke,
		     const char *verb, const char *what)
{
	return (int)eo_plugin_kube_failure(e, ke, verb, what, c->ns, c->msg, sizeof(c->msg));
}

/* GET; *out NULL when not found (or the kind is unknown). Exit code. */
static int get_opt(struct mctx *c, const char *gv, const char *plural, const char *ns,
		   const char *name, json_t **out)
{
	struct eo_kube_resource r = {gv, plural, ns, name};
	struct eo_kube_error ke = {0};
	eo_kube_err e = eo_kube_get(c->kc, &r, out, &ke);
	char what[EO_NAME_MAX + 96];

	if (e == EO_KUBE_ENOTFOUND) {
		*out = NULL;
		return 0;
	}
	if (e == EO_KUBE_OK)
		return 0;
	*out = NULL;
	snprintf(what, sizeof(what), "%s \"%s\"", plural, name);
	return kube_fail(c, e, &ke, "get", what);
}

static int list_items(struct mctx *c, const char *gv, const char *plural, const char *sel,
		      json_t **list)
{
	struct eo_kube_resource r = {gv, plural, c->ns, NULL};
	struct eo_kube_list_opts lo = {.label_selector = sel};
	struct eo_kube_error ke = {0};
	eo_kube_err e = eo_kube_list(c->kc, &r, &lo, list, &ke);

	return e == EO_KUBE_OK ? 0 : kube_fail(c, e, &ke, "list", plural);
}

static int collect(void *ud, const char *p, size_t n)
{
	struct eo_strbuf *b = ud;

	eo_strbuf_add_n(b, p, n);
	return b->failed ? -1 : 0;
}

/* POST to etcd's JSON gateway on pod through the Pod proxy; *resp (caller frees). */
static int etcd_call(struct mctx *c, const char *pod, const char *route, const char *body,
		     char **resp, size_t *len)
{
	char path[1024];
	struct eo_strbuf b = EO_STRBUF_INIT(ETCD_BODY_MAX);
	struct eo_kube_raw_req req = {"POST", path, "application/json", body, CALL_TIMEOUT_MS,
				      0,      NULL};
	struct eo_kube_raw_res *res = calloc(1, sizeof(*res));
	struct eo_kube_error ke = {0};
	eo_kube_err e;
	int rc = 0;

	*resp = NULL;
	if (res == NULL)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s:%d/proxy%s", c->ns, pod,
		 EO_PORT_CLIENT, route);
	e = eo_kube_raw(c->kc, &req, collect, &b, res, &ke);
	if (e != EO_KUBE_OK) {
		struct eo_plugin_call_failure f = {
		    e, &ke, res->http_status, res->errbody, res->errbody_len, false, false, NULL};

		rc = (int)eo_plugin_call_failure(&f, pod, c->ns, route, NULL, c->msg,
						 sizeof(c->msg));
		eo_strbuf_free(&b);
	} else if ((*resp = eo_strbuf_take(&b, len)) == NULL) {
		rc = failf(c, EO_PEXIT_FAILED, "member %s: answer too large", pod);
	}
	free(res);
	return rc;
}

/* The member list through the first Pod that answers, and each member's status. */
static void read_etcd(struct mctx *c, json_int_t replicas)
{
	bool listed = false;

	for (json_int_t i = 0; i < replicas && i < EO_MIGRATE_MAX_MEMBERS; i++) {
		char pod[EO_NAME_MAX], *body = NULL;
		size_t len = 0;
		struct eo_etcd_status st;

		snprintf(pod, sizeof(pod), "%s-%lld", c->a->name, (long long)i);
		if (!listed && etcd_call(c, pod, "/v3/cluster/member/list",
					 "{\"linearizable\":true}", &body, &len) == 0) {
			if (eo_etcd_wire_parse_members(body, len, &c->etcd) == EO_ETCD_OK)
				listed = true;
			else
				snprintf(c->etcd_err, sizeof(c->etcd_err),
					 "member %.64s: malformed member list", pod);
		} else if (!listed) {
			snprintf(c->etcd_err, sizeof(c->etcd_err), "%.250s", c->msg);
		}
		free(body);
		body = NULL;
		memset(&st, 0, sizeof(st));
		if (etcd_call(c, pod, "/v3/maintenance/status", "{}", &body, &len) == 0 &&
		    eo_etcd_wire_parse_status(body, len, &st) == EO_ETCD_OK) {
			c->status_ok[i] = true;
			c->n_alarms[i] = st.n_errors;
		}
		eo_etcd_status_clear(&st);
		free(body);
	}
	c->etcd_ok = listed;
	c->msg[0] = '\0';
}

/* LIST of a resource in namespace ns (NULL: cluster-scoped); *list NULL on failure. */
static int list_in(struct mctx *c, const char *gv, const char *plural, const char *ns,
		   json_t **list)
{
	struct eo_kube_resource r = {gv, plural, ns, NULL};
	struct eo_kube_list_opts lo = {0};
	struct eo_kube_error ke = {0};
	eo_kube_err e = eo_kube_list(c->kc, &r, &lo, list, &ke);

	if (e == EO_KUBE_OK)
		return 0;
	*list = NULL;
	return kube_fail(c, e, &ke, "list", plural);
}

/*
 * The admission webhook configurations (and the Services of the legacy operator's namespace
 * they may call): only while the legacy EtcdCluster exists, since only its deletion meets
 * them. A failure to read them stops inspect and apply: apply could otherwise hang on them.
 */
static int gather_webhooks(struct mctx *c, const char *dep_ns)
{
	static const char *const plurals[2] = {"mutatingwebhookconfigurations",
					       "validatingwebhookconfigurations"};
	json_t **lists[2] = {&c->mwh, &c->vwh};
	int rc;

	if (!c->legacy_live)
		return 0;
	for (size_t i = 0; i < 2; i++)
		if ((rc = list_in(c, ADMISSION_GV, plurals[i], NULL, lists[i])) != 0)
			return failf(c, rc,
				     "cannot list %s.admissionregistration.k8s.io, needed to find "
				     "the legacy operator's webhooks (the user needs list on "
				     "mutating- and validatingwebhookconfigurations, "
				     "docs/migration.md): %s",
				     plurals[i], c->msg);
	if (c->dep != NULL && (rc = list_in(c, "v1", "services", dep_ns, &c->dep_svcs)) != 0)
		return failf(c, rc,
			     "cannot list the Services of namespace %s, needed to tell the legacy "
			     "operator's webhooks: %s",
			     dep_ns, c->msg);
	return 0;
}

/* The legacy objects saved by an earlier run (ConfigMap <name>-etcd-migration). */
static json_t *saved_object(const json_t *cm, const char *key)
{
	const char *text = json_string_value(json_object_get(json_object_get(cm, "data"), key));

	return text != NULL ? json_loads(text, 0, NULL) : NULL;
}

static int gather(struct mctx *c)
{
	char name[EO_NAME_MAX + 32], sel[EO_NAME_MAX + 96], dep_ns[EO_NAME_MAX],
	    dep_name[EO_NAME_MAX];
	const char *lo = c->a->legacy_operator;
	json_int_t replicas;
	int rc;

	rc = get_opt(c, EO_MIGRATE_LEGACY_GROUP_VERSION, EO_MIGRATE_LEGACY_PLURAL, c->ns,
		     c->a->name, &c->legacy);
	if (rc != 0 && strstr(c->msg, "could not find the requested resource") == NULL)
		return rc;
	c->legacy_live = c->legacy != NULL;
	snprintf(name, sizeof(name), "%s%s", c->a->name, EO_MIGRATE_STATE_SUFFIX);
	if ((rc = get_opt(c, "v1", "configmaps", c->ns, name, &c->saved)) != 0)
		return rc;
	if (c->legacy == NULL)
		c->legacy = saved_object(c->saved, STATE_KEY_LEGACY);
	if ((rc = get_opt(c, "apps/v1", "statefulsets", c->ns, c->a->name, &c->sts)) != 0)
		return rc;
	c->sts_live = c->sts != NULL;
	if (c->sts == NULL)
		c->sts = saved_object(c->saved, STATE_KEY_STS);
	snprintf(sel, sizeof(sel), "%s=%s,%s=%s", EO_LABEL_INSTANCE, c->a->name, EO_LABEL_APP_NAME,
		 EO_LABEL_APP_NAME_VALUE);
	if ((rc = list_items(c, "v1", "pods", sel, &c->pods)) != 0 ||
	    (rc = list_items(c, "v1", "persistentvolumeclaims", NULL, &c->pvcs)) != 0)
		return rc;
	snprintf(dep_ns, sizeof(dep_ns), "%s", EO_MIGRATE_LEGACY_OPERATOR_NS);
	snprintf(dep_name, sizeof(dep_name), "%s", EO_MIGRATE_LEGACY_OPERATOR_NAME);
	if (lo != NULL) {
		const char *slash = strchr(lo, '/');

		if (slash == NULL || slash == lo || slash[1] == '\0' ||
		    (size_t)(slash - lo) >= sizeof(dep_ns))
			return failf(c, EO_PEXIT_USAGE, "--legacy-operator %s: give NAMESPACE/NAME",
				     lo);
		snprintf(dep_ns, sizeof(dep_ns), "%.*s", (int)(slash - lo), lo);
		snprintf(dep_name, sizeof(dep_name), "%s", slash + 1);
	}
	if ((rc = get_opt(c, "apps/v1", "deployments", dep_ns, dep_name, &c->dep)) != 0)
		return failf(c, rc,
			     "cannot tell whether the legacy operator runs (Deployment %s/%s): %s",
			     dep_ns, dep_name, c->msg);
	if ((rc = gather_webhooks(c, dep_ns)) != 0)
		return rc;
	snprintf(name, sizeof(name), "%s%s", c->a->name, EO_MIGRATE_LEGACY_STATE_SUFFIX);
	if ((rc = get_opt(c, "v1", "configmaps", c->ns, name, &c->state_cm)) != 0)
		return rc;
	rc = get_opt(c, EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->ns, c->a->name, &c->ours);
	if (rc != 0) {
		if (strstr(c->msg, "could not find the requested resource") != NULL)
			return failf(c, EO_PEXIT_NOTFOUND,
				     "the apiserver does not know %s: install etcd-operator (its "
				     "CRDs and the operator) first",
				     EO_RESOURCE_CLUSTERS);
		return rc;
	}
	replicas = json_integer_value(json_object_get(json_object_get(c->sts, "spec"), "replicas"));
	if (c->sts != NULL &&
	    !json_is_integer(json_object_get(json_object_get(c->sts, "spec"), "replicas")))
		replicas = 1;
	c->pod_items = json_object_get(c->pods, "items");
	c->pvc_items = json_object_get(c->pvcs, "items");
	if (c->legacy != NULL && c->sts != NULL)
		read_etcd(c, replicas);
	return 0;
}

static int decide(struct mctx *c)
{
	struct eo_migrate_observed in = {
	    .ns = c->ns,
	    .name = c->a->name,
	    .legacy = c->legacy,
	    .sts = c->sts,
	    .sts_live = c->sts_live,
	    .pods = c->pod_items,
	    .pvcs = c->pvc_items,
	    .operator_dep = c->dep,
	    .state_cm = c->state_cm,
	    .etcd = c->etcd_ok ? &c->etcd : NULL,
	    .etcd_error = c->etcd_err,
	    .status_ok = c->status_ok,
	    .n_alarms = c->n_alarms,
	    .ours = c->ours,
	    .version = c->a->version,
	};

	eo_migrate_plan_free(&c->plan);
	if (eo_migrate_plan(&in, &c->plan) != 0)
		return failf(c, EO_PEXIT_FAILED, "%s", c->plan.message);
	eo_migrate_find_webhooks(json_object_get(c->mwh, "items"), json_object_get(c->vwh, "items"),
				 c->dep, json_object_get(c->dep_svcs, "items"), &c->wh);
	c->wh_action = eo_migrate_webhooks_decide(&c->wh, c->a->remove_webhooks, c->ns, c->a->name,
						  c->wh_msg, sizeof(c->wh_msg));
	return 0;
}

static void reset(struct mctx *c)
{
	json_t **objs[] = {&c->legacy, &c->sts,	 &c->pods, &c->pvcs, &c->dep,	  &c->state_cm,
			   &c->saved,  &c->ours, &c->mwh,  &c->vwh,  &c->dep_svcs};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		json_decref(*objs[i]);
		*objs[i] = NULL;
	}
	c->pod_items = c->pvc_items = NULL;
	eo_etcd_members_clear(&c->etcd);
	memset(&c->etcd, 0, sizeof(c->etcd));
	c->etcd_ok = false;
	c->etcd_err[0] = '\0';
	memset(c->status_ok, 0, sizeof(c->status_ok));
	memset(c->n_alarms, 0, sizeof(c->n_alarms));
}

/* ---- inspect -------------------------------------------------------------------------- */

static const char *state_name(enum eo_migrate_state s)
{
	return s == EO_MIGRATE_ADOPTABLE ? "ready" : s == EO_MIGRATE_DONE ? "migrated" : "refused";
}

static const char *wh_action_name(enum eo_migrate_webhook_action a)
{
	return a == EO_MIGRATE_WEBHOOKS_REMOVE	 ? "remove"
	       : a == EO_MIGRATE_WEBHOOKS_REFUSE ? "refuse"
						 : "none";
}

/* The webhook configurations found, for -o json. */
static json_t *webhooks_json(const struct mctx *c)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr != NULL && i < c->wh.n; i++) {
		const struct eo_migrate_webhook *w = &c->wh.w[i];

		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:b, s:s}", "kind",
						     w->mutating ? "MutatingWebhookConfiguration"
								 : "ValidatingWebhookConfiguration",
						     "name", w->name, "webhooks", w->hooks,
						     "service", w->service, "legacy", w->legacy,
						     "failurePolicy", w->fail ? "Fail" : "Ignore"));
	}
	return json_pack("{s:s, s:s, s:o?}", "action", wh_action_name(c->wh_action), "message",
			 c->wh_msg, "configurations", arr);
}

/* Webhook configurations covering the legacy group that are not the legacy operator's. */
static void say_foreign_webhooks(struct mctx *c)
{
	for (size_t i = 0; i < c->wh.n; i++)
		if (!c->wh.w[i].legacy)
			say(c,
			    "warning: %s %s (webhook %s, %s) also covers "
			    "etcdclusters.etcd.aenix.io "
			    "and is not the legacy operator's (its Service does not select the "
			    "legacy operator's Pods): it is left alone; if it refuses updates, the "
			    "deletion of the legacy EtcdCluster cannot finish",
			    c->wh.w[i].mutating ? "MutatingWebhookConfiguration"
						: "ValidatingWebhookConfiguration",
			    c->wh.w[i].name, c->wh.w[i].hooks,
			    c->wh.w[i].service[0] ? c->wh.w[i].service : "a URL");
	if (c->wh.truncated)
		say(c,
		    "warning: more than %d webhook configurations cover "
		    "etcdclusters.etcd.aenix.io; only the first are listed",
		    EO_MIGRATE_MAX_WEBHOOKS);
}

static int inspect(struct mctx *c)
{
	const struct eo_migrate_plan *p = &c->plan;
	json_t *v = NULL;
	size_t i;

	if (c->a->json) {
		json_t *members = json_array(), *doc = NULL;
		char *text = NULL;

		for (i = 0; members != NULL && i < p->n && p->state == EO_MIGRATE_ADOPTABLE; i++) {
			char id[24];

			snprintf(id, sizeof(id), "%" PRIx64, p->m[i].id);
			json_array_append_new(members,
					      json_pack("{s:s, s:s, s:s, s:s}", "name",
							p->m[i].name, "pvc", p->m[i].pvc, "podUID",
							p->m[i].pod_uid, "memberID", id));
		}
		doc = json_pack("{s:s, s:s, s:s, s:s, s:O?, s:o?, s:O, s:o?}", "cluster",
				c->a->name, "namespace", c->ns, "state", state_name(p->state),
				"message", p->message, "etcdCluster", p->cluster, "members",
				members, "changes", p->changes, "webhooks", webhooks_json(c));
		text = doc ? eo_json_dumps(doc, JSON_INDENT(2), NULL) : NULL;
		json_decref(doc);
		if (text == NULL)
			return failf(c, EO_PEXIT_FAILED, "out of memory");
		fprintf(c->out, "%s\n", text);
		free(text);
	} else {
		say(c, "%s: %s", state_name(p->state), p->message);
		if (p->state == EO_MIGRATE_ADOPTABLE) {
			char *spec = eo_json_dumps(json_object_get(p->cluster, "spec"),
						   JSON_COMPACT | JSON_SORT_KEYS, NULL);

			say(c, "\nmembers (EtcdMember = Pod, PVC, etcd member ID):");
			for (i = 0; i < p->n; i++)
				say(c, "  %s  %s  %" PRIx64, p->m[i].name, p->m[i].pvc, p->m[i].id);
			say(c, "\nEtcdCluster.%s %s spec: %s", EO_API_GROUP, c->a->name,
			    spec ? spec : "?");
			free(spec);
			say(c, "\nwhat changes:");
			json_array_foreach(p->changes, i, v) say(c, "  - %s", json_string_value(v));
		}
		if (c->wh.n > 0) {
			say(c, "\nadmission webhooks:");
			if (c->wh_action != EO_MIGRATE_WEBHOOKS_NONE)
				say(c, "  %s", c->wh_msg);
			say_foreign_webhooks(c);
		}
	}
	return p->state == EO_MIGRATE_REFUSED ? EO_PEXIT_REFUSED : EO_PEXIT_OK;
}

/* ---- apply: the steps ----------------------------------------------------------------- */

static bool expired(time_t deadline)
{
	return time(NULL) >= deadline;
}

static int patch_obj(struct mctx *c, const char *gv, const char *plural, const char *name,
		     json_t *patch);

static const char *or_else(const char *s, const char *dflt)
{
	return s != NULL ? s : dflt;
}

static void append_word(char *buf, size_t cap, const char *w)
{
	size_t len = strlen(buf);

	if (w != NULL && len < cap)
		snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", w);
}

/* "Type=Status Reason: message" of each condition of o, ", "-separated. */
static void conditions_text(const json_t *o, char *buf, size_t cap)
{
	const json_t *cond = NULL;
	size_t i;

	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(o, "status"), "conditions"), i, cond)
	{
		char one[640];
		const char *msg = json_string_value(json_object_get(cond, "message"));

		snprintf(one, sizeof(one), "%s=%s %s%s%.500s",
			 or_else(json_string_value(json_object_get(cond, "type")), "?"),
			 or_else(json_string_value(json_object_get(cond, "status")), "?"),
			 or_else(json_string_value(json_object_get(cond, "reason")), ""),
			 msg && msg[0] ? ": " : "", msg ? msg : "");
		append_word(buf, cap, one);
	}
}

/* True when a wait that began at start should say again what it waits for. */
static bool report_due(time_t start, time_t *next)
{
	time_t now = time(NULL);

	if (*next == 0)
		*next = start + REPORT_AFTER_S;
	if (now < *next)
		return false;
	*next = now + REPORT_EVERY_S;
	return true;
}

static int save_state(struct mctx *c)
{
	char name[EO_NAME_MAX + 32];
	struct eo_kube_resource r = {"v1", "configmaps", c->ns, NULL};
	struct eo_kube_error ke = {0};
	char *legacy = NULL, *sts = NULL;
	json_t *cm = NULL;
	eo_kube_err e;

	if (c->saved != NULL)
		return 0;
	snprintf(name, sizeof(name), "%s%s", c->a->name, EO_MIGRATE_STATE_SUFFIX);
	legacy = eo_json_dumps(c->legacy, JSON_COMPACT, NULL);
	sts = eo_json_dumps(c->sts, JSON_COMPACT, NULL);
	if (legacy != NULL && sts != NULL)
		cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}}", "apiVersion", "v1", "kind",
			       "ConfigMap", "metadata", "name", name, "namespace", c->ns, "data",
			       STATE_KEY_LEGACY, legacy, STATE_KEY_STS, sts);
	free(legacy);
	free(sts);
	if (cm == NULL)
		return failf(c, EO_PEXIT_FAILED, "out of memory");
	e = eo_kube_create(c->kc, &r, cm, NULL, &ke);
	json_decref(cm);
	if (e != EO_KUBE_OK && e != EO_KUBE_EEXISTS)
		return kube_fail(c, e, &ke, "create", "configmaps");
	say(c, "saved the legacy EtcdCluster and StatefulSet in ConfigMap %s", name);
	return 0;
}

static int ensure_cluster(struct mctx *c)
{
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->ns, NULL};
	struct eo_kube_error ke = {0};
	json_t *patch = NULL;
	eo_kube_err e;

	if (c->ours == NULL) {
		e = eo_kube_create(c->kc, &r, c->plan.cluster, &c->ours, &ke);
		if (e != EO_KUBE_OK)
			return kube_fail(c, e, &ke, "create", EO_RESOURCE_CLUSTERS);
		say(c, "created EtcdCluster.%s %s (held: annotation %s)", EO_API_GROUP, c->a->name,
		    EO_ANNOTATION_MIGRATING);
	}
	if (json_object_get(json_object_get(c->ours, "status"), "clusterID") == NULL) {
		json_t *now = NULL;

		r.name = c->a->name;
		patch = eo_migrate_cluster_status(&c->plan);
		e = patch ? eo_kube_patch_status(c->kc, &r, patch, &now, &ke) : EO_KUBE_ENOMEM;
		json_decref(patch);
		if (e != EO_KUBE_OK)
			return kube_fail(c, e, &ke, "patch", EO_RESOURCE_CLUSTERS "/status");
		/* the members are built from it: with the token it now has */
		json_decref(c->ours);
		c->ours = now;
		say(c, "recorded cluster ID %s and token %s", c->plan.cluster_id, c->plan.token);
	}
	return 0;
}

/* The EtcdMembers, created (or found) and marked with their etcd member ID as voters. */
static int ensure_members(struct mctx *c, json_t *members[])
{
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_MEMBERS, c->ns, NULL};

	for (size_t i = 0; i < c->plan.n; i++) {
		struct eo_kube_error ke = {0};
		json_t *m = NULL, *patch = NULL;
		eo_kube_err e;
		int rc;

		r.name = c->plan.m[i].name;
		if ((rc = get_opt(c, r.gv, r.plural, c->ns, r.name, &members[i])) != 0)
			return rc;
		if (members[i] == NULL) {
			m = eo_migrate_member_object(c->ours, &c->plan, i);
			if (m == NULL)
				return failf(c, EO_PEXIT_FAILED, "cannot build EtcdMember %s",
					     r.name);
			r.name = NULL;
			e = eo_kube_create(c->kc, &r, m, &members[i], &ke);
			json_decref(m);
			r.name = c->plan.m[i].name;
			if (e != EO_KUBE_OK)
				return kube_fail(c, e, &ke, "create", EO_RESOURCE_MEMBERS);
			say(c, "created EtcdMember %s", r.name);
		} else if (!eo_migrate_owned_by(members[i], eo_cluster_uid(c->ours))) {
			return failf(
			    c, EO_PEXIT_REFUSED,
			    "an EtcdMember %s exists that does not belong to EtcdCluster %s",
			    r.name, c->a->name);
		} else if (eo_member_adopted_pod_uid(members[i]) != NULL &&
			   strcmp(eo_member_adopted_pod_uid(members[i]), c->plan.m[i].pod_uid) !=
			       0) {
			/* the legacy Pod was recreated since the last run: adopt the one running */
			patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
					  EO_ANNOTATION_ADOPTED_POD_UID, c->plan.m[i].pod_uid);
			e = patch ? eo_kube_patch(c->kc, &r, patch, NULL, &ke) : EO_KUBE_ENOMEM;
			json_decref(patch);
			patch = NULL;
			if (e != EO_KUBE_OK)
				return kube_fail(c, e, &ke, "patch", EO_RESOURCE_MEMBERS);
		}
		if (!json_is_true(
			json_object_get(json_object_get(members[i], "status"), "isVoter"))) {
			patch = eo_migrate_member_status(&c->plan, i);
			e = patch ? eo_kube_patch_status(c->kc, &r, patch, NULL, &ke)
				  : EO_KUBE_ENOMEM;
			json_decref(patch);
			if (e != EO_KUBE_OK)
				return kube_fail(c, e, &ke, "patch", EO_RESOURCE_MEMBERS "/status");
		}
	}
	return 0;
}

static json_t *snapshot_object(struct mctx *c, const char *name)
{
	const struct margs *a = c->a;
	json_t *dest = NULL;

	if (a->snap_pvc != NULL) {
		const char *slash = strchr(a->snap_pvc, '/');
		char claim[EO_NAME_MAX];

		snprintf(claim, sizeof(claim), "%.*s",
			 (int)(slash ? (size_t)(slash - a->snap_pvc) : strlen(a->snap_pvc)),
			 a->snap_pvc);
		dest = json_pack("{s:{s:s}}", "pvc", "claimName", claim);
		if (dest != NULL && slash != NULL && slash[1] != '\0')
			json_object_set_new(json_object_get(dest, "pvc"), "subPath",
					    json_string(slash + 1));
	} else {
		dest = json_pack("{s:{s:s, s:s, s:{s:s}, s:b}}", "s3", "endpoint", a->s3_endpoint,
				 "bucket", a->s3_bucket, "credentialsSecretRef", "name",
				 a->s3_secret, "forcePathStyle", a->s3_path_style);
		if (dest != NULL && a->s3_key != NULL)
			json_object_set_new(json_object_get(dest, "s3"), "key",
					    json_string(a->s3_key));
		if (dest != NULL && a->s3_region != NULL)
			json_object_set_new(json_object_get(dest, "s3"), "region",
					    json_string(a->s3_region));
		if (dest != NULL && a->s3_insecure)
			json_object_set_new(json_object_get(dest, "s3"), "insecure", json_true());
	}
	if (dest == NULL)
		return NULL;
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}, s:o}}", "apiVersion",
			 EO_API_GROUP_VERSION, "kind", EO_KIND_SNAPSHOT, "metadata", "name", name,
			 "namespace", c->ns, "spec", "clusterRef", "name", c->a->name,
			 "destination", dest);
}

static int safety_snapshot(struct mctx *c, time_t deadline)
{
	char name[EO_NAME_MAX + 32];
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_SNAPSHOTS, c->ns, NULL};
	struct eo_kube_error ke = {0};
	json_t *snap = NULL;
	const char *v = NULL;
	char phase[32] = "";
	eo_kube_err e;
	int rc;

	snprintf(name, sizeof(name), "%s%s", c->a->name, EO_MIGRATE_SNAPSHOT_SUFFIX);
	if ((rc = get_opt(c, r.gv, r.plural, c->ns, name, &snap)) != 0)
		return rc;
	if (snap == NULL) {
		if (c->a->no_snapshot) {
			say(c, "no safety snapshot (--no-snapshot)");
			return 0;
		}
		snap = snapshot_object(c, name);
		if (snap == NULL)
			return failf(c, EO_PEXIT_FAILED, "out of memory");
		e = eo_kube_create(c->kc, &r, snap, NULL, &ke);
		json_decref(snap);
		snap = NULL;
		if (e != EO_KUBE_OK && e != EO_KUBE_EEXISTS)
			return kube_fail(c, e, &ke, "create", EO_RESOURCE_SNAPSHOTS);
		say(c, "created EtcdSnapshot %s; waiting for it to complete", name);
	}
	r.name = name;
	for (time_t start = time(NULL), next = 0;;) {
		if (snap == NULL && (rc = get_opt(c, r.gv, r.plural, c->ns, name, &snap)) != 0)
			return rc;
		if (snap == NULL)
			return failf(
			    c, EO_PEXIT_FAILED,
			    "EtcdSnapshot %s vanished while apply waited for it; run again", name);
		v = json_string_value(json_object_get(json_object_get(snap, "status"), "phase"));
		snprintf(phase, sizeof(phase), "%s", v ? v : "");
		if (strcmp(phase, "Complete") == 0) {
			say(c, "safety snapshot %s complete: %s", name,
			    json_string_value(json_object_get(
				json_object_get(json_object_get(snap, "status"), "artifact"),
				"uri")));
			json_decref(snap);
			return 0;
		}
		if (strcmp(phase, "Failed") == 0) {
			json_t *conds =
			    json_object_get(json_object_get(snap, "status"), "conditions");
			const char *why =
			    json_string_value(json_object_get(json_array_get(conds, 0), "message"));

			rc = failf(c, EO_PEXIT_FAILED,
				   "the safety snapshot %s failed (%s); the legacy cluster is "
				   "untouched: fix the destination, delete EtcdSnapshot %s and run "
				   "again, or roll back (docs/migration.md)",
				   name, why ? why : "see kubectl describe", name);
			json_decref(snap);
			return rc;
		}
		if (report_due(start, &next)) {
			char conds[1024];

			conditions_text(snap, conds, sizeof(conds));
			say(c,
			    "still waiting for the safety snapshot %s (%lds): phase %s%s%s; the "
			    "operator's snapshot Job takes it (kubectl -n %s describe etcdsnapshot "
			    "%s)",
			    name, (long)(time(NULL) - start), phase[0] ? phase : "none yet",
			    conds[0] ? "; " : "", conds, c->ns, name);
		}
		json_decref(snap);
		snap = NULL;
		if (expired(deadline))
			return failf(c, EO_PEXIT_FAILED,
				     "the safety snapshot %s did not complete in %lds (phase %s); "
				     "the legacy cluster is untouched: run again to keep waiting",
				     name, c->a->timeout_s, phase[0] ? phase : "none yet");
		eo_sleep_ms(POLL_MS);
	}
}

/* Saves the legacy webhook configurations in the migration ConfigMap, then deletes them. */
static int remove_legacy_webhooks(struct mctx *c)
{
	char cm[EO_NAME_MAX + 32];

	snprintf(cm, sizeof(cm), "%s%s", c->a->name, EO_MIGRATE_STATE_SUFFIX);
	for (size_t i = 0; i < c->wh.n; i++) {
		const struct eo_migrate_webhook *w = &c->wh.w[i];
		const char *plural = w->mutating ? "mutatingwebhookconfigurations"
						 : "validatingwebhookconfigurations";
		struct eo_kube_resource r = {ADMISSION_GV, plural, NULL, w->name};
		struct eo_kube_delete_opts d = {.uid = eo_meta_uid(w->obj),
						.grace_period_seconds = -1};
		struct eo_kube_error ke = {0};
		json_t *saved = NULL;
		char key[EO_NAME_MAX + 48], *text = NULL, what[EO_NAME_MAX + 48];
		eo_kube_err e;
		int rc;

		if (!w->legacy)
			continue;
		eo_migrate_webhook_key(w, key, sizeof(key));
		saved = eo_migrate_webhook_saved(w);
		text = saved ? eo_json_dumps(saved, JSON_COMPACT, NULL) : NULL;
		json_decref(saved);
		if (text == NULL)
			return failf(c, EO_PEXIT_FAILED, "out of memory");
		rc =
		    patch_obj(c, "v1", "configmaps", cm, json_pack("{s:{s:s}}", "data", key, text));
		free(text);
		if (rc != 0)
			return failf(c, rc,
				     "cannot save %s %s in ConfigMap %s (nothing deleted): %s",
				     plural, w->name, cm, c->msg);
		e = eo_kube_delete(c->kc, &r, &d, &ke);
		snprintf(what, sizeof(what), "%s \"%s\"", plural, w->name);
		if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND)
			return kube_fail(c, e, &ke, "delete", what);
		say(c, "saved %s %s in ConfigMap %s (key %s) and deleted it", plural, w->name, cm,
		    key);
	}
	return 0;
}

/* Patches away the finalizers of o other than the garbage collector's; why it failed in why. */
static void drop_foreign_finalizers(struct mctx *c, const struct eo_kube_resource *r,
				    const json_t *o, char *why, size_t cap)
{
	json_t *patch = eo_migrate_finalizers_patch(o);
	struct eo_kube_error ke = {0};

	if (patch == NULL)
		return;
	if (eo_kube_patch(c->kc, r, patch, NULL, &ke) == EO_KUBE_OK)
		say(c, "dropped the legacy finalizers of %s", r->name);
	else
		snprintf(why, cap, "removing its legacy finalizers was refused: %.400s",
			 ke.message);
	json_decref(patch);
}

/*
 * Says why o is still there: its finalizers, and whether the apiserver accepts an update of
 * it at all (an empty patch goes through admission like the garbage collector's removal of
 * "orphan": a webhook nobody answers refuses both).
 */
static void explain_deletion(struct mctx *c, const struct eo_kube_resource *r, const json_t *o,
			     const char *why, char *fins, size_t fcap, char *reason, size_t rcap)
{
	const json_t *f = NULL;
	json_t *probe = json_pack("{s:{}}", "metadata");
	struct eo_kube_error ke = {0};
	eo_kube_err e;
	size_t i;

	fins[0] = '\0';
	json_array_foreach(eo_meta_get(o, "finalizers"), i, f)
	    append_word(fins, fcap, json_string_value(f));
	e = probe ? eo_kube_patch(c->kc, r, probe, NULL, &ke) : EO_KUBE_ENOMEM;
	json_decref(probe);
	if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND)
		snprintf(reason, rcap,
			 "the apiserver refuses any update of it (%.400s), and the garbage "
			 "collector removes the \"orphan\" finalizer by an update, so it cannot "
			 "finish. A webhook covering etcdclusters.etcd.aenix.io whose service does "
			 "not answer does this: kubectl etcd migrate inspect lists them "
			 "(docs/migration.md)",
			 ke.message[0] ? ke.message : eo_kube_strerror(e));
	else
		snprintf(reason, rcap, "%s",
			 why[0]			  ? why
			 : strstr(fins, "orphan") ? "the garbage collector removes \"orphan\" once "
						    "it has taken the owner references off every "
						    "dependent (kube-controller-manager's log says "
						    "why if this lasts)"
						  : "the apiserver has not removed it yet");
}

/* Deletes gv/plural name with the dependents orphaned, and waits until it is gone. */
static int delete_orphan(struct mctx *c, const char *gv, const char *plural, const char *what,
			 time_t deadline)
{
	struct eo_kube_resource r = {gv, plural, c->ns, c->a->name};
	struct eo_kube_delete_opts d = {.propagation_policy = "Orphan", .grace_period_seconds = -1};
	struct eo_kube_error ke = {0};
	eo_kube_err e = eo_kube_delete(c->kc, &r, &d, &ke);
	bool said = false;
	time_t start = time(NULL), next = 0;

	if (e == EO_KUBE_ENOTFOUND)
		return 0;
	if (e != EO_KUBE_OK)
		return kube_fail(c, e, &ke, "delete", plural);
	for (;;) {
		json_t *o = NULL;
		int rc = get_opt(c, gv, plural, c->ns, c->a->name, &o);

		if (rc != 0)
			return rc;
		if (o == NULL)
			break;
		if (!said) {
			say(c, "deleting %s %s (orphaning its dependents)...", what, c->a->name);
			said = true;
		}
		/*
		 * The legacy operator is stopped: nobody else will drop its finalizers. The
		 * garbage collector's own ("orphan", which takes the owner references off the
		 * dependents before the object goes) must stay, or the dependents would be
		 * collected with it.
		 */
		char why[512] = "", fins[256], reason[1024];
		bool over = expired(deadline);

		drop_foreign_finalizers(c, &r, o, why, sizeof(why));
		if (report_due(start, &next) || over) {
			explain_deletion(c, &r, o, why, fins, sizeof(fins), reason, sizeof(reason));
			if (!over)
				say(c, "still waiting for %s %s to go (%lds; finalizers: %s): %s",
				    what, c->a->name, (long)(time(NULL) - start),
				    fins[0] ? fins : "none", reason);
		}
		json_decref(o);
		if (over)
			return failf(c, EO_PEXIT_FAILED,
				     "%s %s is still there after %lds (finalizers: %s): %s", what,
				     c->a->name, c->a->timeout_s, fins[0] ? fins : "none", reason);
		eo_sleep_ms(POLL_MS);
	}
	say(c, "deleted %s %s; its dependents are kept", what, c->a->name);
	return 0;
}

static int patch_obj(struct mctx *c, const char *gv, const char *plural, const char *name,
		     json_t *patch)
{
	struct eo_kube_resource r = {gv, plural, c->ns, name};
	struct eo_kube_error ke = {0};
	eo_kube_err e = patch ? eo_kube_patch(c->kc, &r, patch, NULL, &ke) : EO_KUBE_ENOMEM;
	char what[EO_NAME_MAX + 64];

	json_decref(patch);
	if (e == EO_KUBE_OK)
		return 0;
	snprintf(what, sizeof(what), "%s \"%s\"", plural, name);
	return kube_fail(c, e, &ke, "patch", what);
}

/* Hands each member's PVC and Pod to its EtcdMember (metadata only: nothing restarts). */
static int adopt_members(struct mctx *c, json_t *members[])
{
	for (size_t i = 0; i < c->plan.n; i++) {
		const char *uid = eo_meta_uid(members[i]);
		const char *names[2] = {c->plan.m[i].pvc, c->plan.m[i].name};
		const char *plurals[2] = {"persistentvolumeclaims", "pods"};

		for (size_t k = 0; k < 2; k++) {
			json_t *have = NULL;
			int rc = get_opt(c, "v1", plurals[k], c->ns, names[k], &have);

			if (rc != 0)
				return rc;
			if (have == NULL)
				return failf(c, EO_PEXIT_FAILED,
					     "%s %s vanished during the migration",
					     k ? "Pod" : "PVC", names[k]);
			if (k == 1 && strcmp(eo_meta_uid(have) ? eo_meta_uid(have) : "",
					     c->plan.m[i].pod_uid) != 0) {
				json_decref(have);
				return failf(c, EO_PEXIT_FAILED,
					     "Pod %s was replaced during the migration (its UID "
					     "changed); run again",
					     names[k]);
			}
			if (!eo_migrate_owned_by(have, uid)) {
				rc = patch_obj(c, "v1", plurals[k], names[k],
					       eo_migrate_adopt_patch(members[i]));
				if (rc != 0) {
					json_decref(have);
					return rc;
				}
				say(c, "%s %s now belongs to EtcdMember %s", k ? "Pod" : "PVC",
				    names[k], c->plan.m[i].name);
			}
			json_decref(have);
		}
	}
	return 0;
}

/* The Services and the legacy ConfigMap go to the EtcdCluster; the legacy PDB goes. */
static int adopt_cluster_objects(struct mctx *c)
{
	const char *uid = eo_cluster_uid(c->ours);
	char cm[EO_NAME_MAX + 32];
	struct {
		const char *plural, *name;
		bool controller;
	} objs[3] = {{"services", c->plan.headless, true},
		     {"services", c->a->name, false},
		     {"configmaps", cm, false}};
	json_t *pdb = NULL;
	int rc;

	snprintf(cm, sizeof(cm), "%s%s", c->a->name, EO_MIGRATE_LEGACY_STATE_SUFFIX);
	for (size_t i = 0; i < 3; i++) {
		json_t *have = NULL;

		if ((rc = get_opt(c, "v1", objs[i].plural, c->ns, objs[i].name, &have)) != 0)
			return rc;
		if (have == NULL)
			say(c, "warning: %s %s is missing; %s", objs[i].plural, objs[i].name,
			    i == 0 ? "the operator creates it"
			    : i == 1
				? "clients of the legacy client Service must use the Service "
				  "<name>-client"
				: "an adopted Pod whose container restarts cannot start until it "
				  "is rolled (change the spec to roll them)");
		if (have != NULL && !eo_migrate_owned_by(have, uid)) {
			rc = patch_obj(c, "v1", objs[i].plural, objs[i].name,
				       eo_migrate_owner_patch(c->ours, objs[i].controller));
			if (rc != 0) {
				json_decref(have);
				return rc;
			}
			say(c, "%s %s now belongs to EtcdCluster %s", objs[i].plural, objs[i].name,
			    c->a->name);
		}
		json_decref(have);
	}
	if ((rc = get_opt(c, "policy/v1", "poddisruptionbudgets", c->ns, c->a->name, &pdb)) != 0)
		return rc;
	if (pdb != NULL && !eo_migrate_owned_by(pdb, uid)) {
		struct eo_kube_resource r = {"policy/v1", "poddisruptionbudgets", c->ns,
					     c->a->name};
		struct eo_kube_delete_opts d = {.uid = eo_meta_uid(pdb),
						.grace_period_seconds = -1};
		struct eo_kube_error ke = {0};
		eo_kube_err e = eo_kube_delete(c->kc, &r, &d, &ke);

		if (e != EO_KUBE_OK && e != EO_KUBE_ENOTFOUND && e != EO_KUBE_ECONFLICT) {
			json_decref(pdb);
			return kube_fail(c, e, &ke, "delete", "poddisruptionbudgets");
		}
		say(c, "deleted the legacy PodDisruptionBudget %s (the operator makes its own)",
		    c->a->name);
	}
	json_decref(pdb);
	return 0;
}

static int release(struct mctx *c)
{
	json_t *patch =
	    json_pack("{s:{s:{s:n}}}", "metadata", "annotations", EO_ANNOTATION_MIGRATING);
	int rc = patch_obj(c, EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->a->name, patch);

	if (rc == 0)
		say(c, "released EtcdCluster %s to the operator", c->a->name);
	return rc;
}

/* After the release: the operator reports the cluster Available with every member ready. */
static int wait_available(struct mctx *c, time_t deadline)
{
	for (time_t start = time(NULL), next = 0;;) {
		json_t *o = NULL;
		const json_t *cond = NULL;
		bool avail = false;
		json_int_t ready = 0;
		size_t i;
		int rc =
		    get_opt(c, EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->ns, c->a->name, &o);

		if (rc != 0)
			return rc;
		json_array_foreach(json_object_get(json_object_get(o, "status"), "conditions"), i,
				   cond)
		{
			const char *t = json_string_value(json_object_get(cond, "type"));
			const char *s = json_string_value(json_object_get(cond, "status"));

			if (t && s && strcmp(t, "Available") == 0 && strcmp(s, "True") == 0)
				avail = true;
		}
		ready = json_integer_value(
		    json_object_get(json_object_get(o, "status"), "readyMembers"));
		if (!(avail && ready >= (json_int_t)c->plan.n) && report_due(start, &next)) {
			char conds[1024];

			conditions_text(o, conds, sizeof(conds));
			say(c,
			    "still waiting for EtcdCluster %s to be Available with %zu ready "
			    "member(s) (%lds): %lld ready; %s",
			    c->a->name, c->plan.n, (long)(time(NULL) - start), (long long)ready,
			    conds[0] ? conds : "no conditions yet (is the operator running?)");
		}
		json_decref(o);
		if (avail && ready >= (json_int_t)c->plan.n) {
			say(c, "EtcdCluster %s is Available with %lld ready member(s): migrated",
			    c->a->name, (long long)ready);
			return 0;
		}
		if (expired(deadline))
			return failf(c, EO_PEXIT_FAILED,
				     "the adopted cluster is not Available after %lds (kubectl get "
				     "etcdcluster.%s %s -n %s says why); etcd itself was not "
				     "touched",
				     c->a->timeout_s, EO_API_GROUP, c->a->name, c->ns);
		eo_sleep_ms(POLL_MS);
	}
}

static int apply(struct mctx *c)
{
	time_t deadline = time(NULL) + c->a->timeout_s;
	json_t *members[EO_MIGRATE_MAX_MEMBERS] = {0};
	int rc;

	if (c->plan.state == EO_MIGRATE_DONE) {
		say(c, "%s", c->plan.message);
		return EO_PEXIT_OK;
	}
	if (c->plan.state == EO_MIGRATE_REFUSED)
		return failf(c, EO_PEXIT_REFUSED, "%s", c->plan.message);
	if (c->wh_action == EO_MIGRATE_WEBHOOKS_REFUSE)
		return failf(c, EO_PEXIT_REFUSED, "%s; nothing was changed", c->wh_msg);
	say(c, "%s", c->plan.message);
	if (c->wh_action == EO_MIGRATE_WEBHOOKS_REMOVE)
		say(c, "%s", c->wh_msg);
	say_foreign_webhooks(c);
	if ((rc = save_state(c)) != 0 || (rc = ensure_cluster(c)) != 0 ||
	    (rc = ensure_members(c, members)) != 0 || (rc = safety_snapshot(c, deadline)) != 0)
		goto out;
	deadline = time(NULL) + c->a->timeout_s;
	if (c->wh_action == EO_MIGRATE_WEBHOOKS_REMOVE && (rc = remove_legacy_webhooks(c)) != 0)
		goto out;
	if ((rc = delete_orphan(c, EO_MIGRATE_LEGACY_GROUP_VERSION, EO_MIGRATE_LEGACY_PLURAL,
				"EtcdCluster.etcd.aenix.io", deadline)) != 0 ||
	    (rc = delete_orphan(c, "apps/v1", "statefulsets", "StatefulSet", deadline)) != 0 ||
	    (rc = adopt_members(c, members)) != 0 || (rc = adopt_cluster_objects(c)) != 0 ||
	    (rc = release(c)) != 0)
		goto out;
	deadline = time(NULL) + c->a->timeout_s;
	rc = wait_available(c, deadline);
out:
	for (size_t i = 0; i < EO_MIGRATE_MAX_MEMBERS; i++)
		json_decref(members[i]);
	return rc;
}

int eo_plugin_migrate_main(int argc, char *const *argv, FILE *out, FILE *errf)
{
	struct margs a;
	struct mctx *c = NULL;
	struct eo_kube_error ke = {0};
	struct eo_kube_client_opts o = {.user_agent = "kubectl-etcd", .proxy_from_env = true};
	eo_kube_config *cfg = NULL;
	char err[512];
	int rc;

	if (parse(argc, argv, &a, err, sizeof(err)) != 0) {
		fprintf(errf, "error: %s\n", err);
		return EO_PEXIT_USAGE;
	}
	if (a.help) {
		fputs(help_text, out);
		return EO_PEXIT_OK;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		fprintf(errf, "error: out of memory\n");
		return EO_PEXIT_FAILED;
	}
	c->a = &a;
	c->out = out;
	c->errf = errf;
	if (eo_kube_config_load(a.kubeconfig, a.context, &cfg, &ke) != EO_KUBE_OK) {
		rc = failf(c, EO_PEXIT_FAILED, "kubeconfig: %s", ke.message);
		goto out;
	}
	c->ns = a.ns ? a.ns : eo_kube_config_namespace(cfg);
	if (eo_kube_client_new(cfg, &o, &c->kc, &ke) != EO_KUBE_OK) {
		rc = failf(c, EO_PEXIT_FAILED, "kubernetes client: %s", ke.message);
		goto out;
	}
	if ((rc = gather(c)) != 0 || (rc = decide(c)) != 0)
		goto out;
	rc = a.apply ? apply(c) : inspect(c);
out:
	if (rc != 0 && c->msg[0])
		fprintf(errf, "error: %s\n", c->msg);
	eo_migrate_plan_free(&c->plan);
	reset(c);
	eo_kube_client_free(c->kc); /* it owns cfg */
	free(c);
	return rc;
}
