/*
 * controller/config.c - command-line and environment configuration.
 */
#include "controller/config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "obs/http.h"

enum flag_kind {
	FLAG_STRING,
	FLAG_BOOL,
	FLAG_LOG_LEVEL,
	FLAG_INT,
	FLAG_COUNT, /* an int from 0 to EO_CFG_COUNT_MAX */
	FLAG_NAMESPACES,
	FLAG_POD_UID, /* "auto", or a UID from 1 to EO_CFG_POD_UID_MAX */
};

/* Offsets into struct eo_config keep the table declarative. */
struct flag_def {
	const char *name;
	enum flag_kind kind;
	size_t off;
	size_t cap;	 /* FLAG_STRING buffer size */
	const char *env; /* fallback when the flag is absent or empty */
	const char *def; /* default shown in usage; applied by config_defaults() */
	const char *help;
};

#define STR(field)                                                                                 \
	FLAG_STRING, offsetof(struct eo_config, field), sizeof(((struct eo_config *)0)->field)

static const struct flag_def flags[] = {
    {"metrics-bind-address", STR(metrics_bind_address), NULL, EO_DEFAULT_METRICS_ADDR,
     "Address the /metrics endpoint binds to (host:port, :port; \"0\" disables)."},
    {"health-probe-bind-address", STR(health_probe_bind_address), NULL, EO_DEFAULT_HEALTH_ADDR,
     "Address the /healthz and /readyz endpoints bind to (\"0\" disables)."},
    {"leader-elect", FLAG_BOOL, offsetof(struct eo_config, leader_elect), 0, NULL, "true",
     "Hold a Lease so that only one replica reconciles at a time."},
    {"leader-election-id", STR(leader_election_id), NULL, EO_DEFAULT_LEADER_ELECTION_ID,
     "Name of the leader-election Lease."},
    {"leader-election-namespace", STR(leader_election_namespace), NULL, "",
     "Namespace of the Lease (default: the namespace the operator runs in)."},
    {"cluster-domain", STR(cluster_domain), NULL, "",
     "Cluster DNS suffix (default: discovered from the search line of /etc/resolv.conf, "
     "else " EO_DEFAULT_CLUSTER_DOMAIN ")."},
    {"watch-namespace", FLAG_NAMESPACES, 0, 0, "WATCH_NAMESPACE", "",
     "Comma-separated namespaces to watch (default: all namespaces)."},
    {"operator-image", STR(operator_image), "OPERATOR_IMAGE", "",
     "Image of this operator, run by snapshot Jobs and restore init containers (required)."},
    {"etcd-image-repository", STR(etcd_image_repository), "ETCD_IMAGE_REPOSITORY",
     EO_DEFAULT_ETCD_IMAGE_REPO, "Repository of etcd images; members run <repository>:v<version>."},
    {"kubeconfig", STR(kubeconfig), "KUBECONFIG", "",
     "Path to a kubeconfig (default: the in-cluster service account)."},
    {"log-level", FLAG_LOG_LEVEL, offsetof(struct eo_config, log_level), 0, NULL, "info",
     "Least severe level logged: debug, info, warn or error."},
    {"zap-log-level", FLAG_LOG_LEVEL, offsetof(struct eo_config, log_level), 0, NULL, NULL,
     "Alias of --log-level, for manifests written for controller-runtime operators."},
    {"workers", FLAG_INT, offsetof(struct eo_config, workers), 0, NULL, "4",
     "Reconcile workers (1-64); one cluster is never reconciled by two at once."},
    {"network-policy", FLAG_BOOL, offsetof(struct eo_config, network_policy), 0, NULL, "false",
     "Give every EtcdCluster a NetworkPolicy unless its spec.networkPolicy.enabled says "
     "otherwise."},
    {"peer-network-policy", FLAG_BOOL, offsetof(struct eo_config, peer_network_policy), 0, NULL,
     "true",
     "Give every EtcdCluster the NetworkPolicy <cluster>.peer: its peer port accepts only "
     "its own members; the client and metrics ports stay open unless the cluster's own "
     "NetworkPolicy narrows them."},
    {"snapshot-schedule-min-interval-seconds", FLAG_COUNT,
     offsetof(struct eo_config, schedule_min_interval_s), 0, NULL, "300",
     "An EtcdSnapshotSchedule whose runs come closer together than this is refused "
     "(Ready=False/ScheduleTooFrequent); 0 allows any schedule."},
    {"snapshot-schedule-default-keep-last", FLAG_COUNT,
     offsetof(struct eo_config, schedule_default_keep_last), 0, NULL, "10",
     "Complete snapshots an EtcdSnapshotSchedule keeps when its spec.retention sets neither "
     "keepLast nor maxAge; 0 keeps them all."},
    {"pod-run-as-user", FLAG_POD_UID, offsetof(struct eo_config, pod_run_as_user), 0, NULL, "65532",
     "User, group and fsGroup of the Pods the operator builds (etcd members, snapshot and "
     "prune Jobs, the archiver); \"auto\" sets none of the three, so that the platform "
     "assigns them (OpenShift's restricted-v2 SCC). Non-root, seccomp RuntimeDefault and no "
     "capabilities in every case."},
    {"operator-pod-labels", STR(operator_pod_labels), NULL, "app.kubernetes.io/name=etcd-operator",
     "Labels of the operator's own Pods (k=v,k=v): the NetworkPolicies let these Pods, in the "
     "operator's namespace, reach the client port."},
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

const char *eo_flags_process_env(void *ud, const char *name)
{
	(void)ud;
	return getenv(name);
}

/* ------------------------------------------------------------------------------------------ */
/* Value parsing and validation                                                                */
/* ------------------------------------------------------------------------------------------ */

/* Go's strconv.ParseBool. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. */
static bool dns_label_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	}
	return true;
}

/* A DNS-1123 subdomain: dot-separated labels, at most 253 characters. */
static bool dns_subdomain_ok(const char *s)
{
	const char *dot;
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (;;) {
		dot = strchr(s, '.');
		if (!dns_label_ok(s, dot ? (size_t)(dot - s) : strlen(s)))
			return false;
		if (!dot)
			return true;
		s = dot + 1;
	}
}

static int copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (n >= cap)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static int parse_namespaces(struct eo_config *cfg, const char *list, char *err, size_t errcap)
{
	const char *p = list, *end;
	size_t n, i;

	cfg->nwatch_namespaces = 0;
	while (*p) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		/* Tolerate spaces around commas: "a, b". */
		while (n > 0 && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (n > 0) {
			if (!dns_label_ok(p, n)) {
				eo_set_err(err, errcap,
					   "invalid namespace \"%.*s\" in watch namespaces",
					   (int)(n > 64 ? 64 : n), p);
				return -1;
			}
			for (i = 0; i < cfg->nwatch_namespaces; i++) {
				if (strlen(cfg->watch_namespaces[i]) == n &&
				    memcmp(cfg->watch_namespaces[i], p, n) == 0)
					break;
			}
			if (i == cfg->nwatch_namespaces) {
				if (cfg->nwatch_namespaces >= EO_CFG_NAMESPACES_MAX) {
					eo_set_err(err, errcap, "more than %d watch namespaces",
						   EO_CFG_NAMESPACES_MAX);
					return -1;
				}
				memcpy(cfg->watch_namespaces[i], p, n);
				cfg->watch_namespaces[i][n] = '\0';
				cfg->nwatch_namespaces++;
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* resolv.conf                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* The suffix after "svc." in one search entry, lower-cased, without trailing dots. */
static int domain_from_entry(const char *tok, size_t n, char *out, size_t cap)
{
	size_t i, start = 0;
	bool found = false;

	for (i = 0; i + 4 <= n; i++) {
		if ((i == 0 || tok[i - 1] == '.') && strncmp(tok + i, "svc.", 4) == 0) {
			start = i + 4;
			found = true;
			break;
		}
	}
	if (!found)
		return -1;
	while (n > start && tok[n - 1] == '.')
		n--;
	if (n <= start || n - start >= cap)
		return -1;
	for (i = start; i < n; i++)
		out[i - start] = (char)tolower((unsigned char)tok[i]);
	out[n - start] = '\0';
	return dns_subdomain_ok(out) ? 0 : -1;
}

int eo_cluster_domain_discover(const char *path, char *out, size_t cap)
{
	char line[1024];
	char search[1024] = "";
	bool have_search = false;
	const char *p, *tok;
	size_t total = 0, n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -1;
	/* resolv.conf is tiny; stop after 64 KiB of anything else. */
	while (total < 65536 && fgets(line, sizeof(line), f)) {
		n = strlen(line);
		total += n;
		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			int c;

			/* Skip the rest of an over-long line. */
			while ((c = fgetc(f)) != EOF && c != '\n')
				total++;
			continue;
		}
		p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, "search", 6) == 0 && (p[6] == ' ' || p[6] == '\t')) {
			/* Like the resolver, the last search line wins. */
			snprintf(search, sizeof(search), "%s", p + 6);
			have_search = true;
		}
	}
	fclose(f);
	if (!have_search)
		return -1;
	p = search;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p || *p == '#' || *p == ';')
			return -1;
		tok = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
		if (domain_from_entry(tok, (size_t)(p - tok), out, cap) == 0)
			return 0;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Parsing                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void config_defaults(struct eo_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	/* String defaults come from the table, so usage and behaviour cannot disagree. */
	for (size_t i = 0; i < NFLAGS; i++)
		if (flags[i].kind == FLAG_STRING && flags[i].def != NULL)
			(void)copy_str((char *)cfg + flags[i].off, flags[i].cap, flags[i].def);
	cfg->leader_elect = true;
	cfg->log_level = EO_LOG_INFO;
	cfg->workers = EO_DEFAULT_WORKERS;
	cfg->peer_network_policy = true;
	cfg->schedule_min_interval_s = EO_DEFAULT_SCHEDULE_MIN_INTERVAL_S;
	cfg->schedule_default_keep_last = EO_DEFAULT_SCHEDULE_KEEP_LAST;
	cfg->pod_run_as_user = EO_DEFAULT_POD_UID;
}

/* A whole number from lo to hi in val into *out; -1 otherwise. */
static int parse_range(const char *val, long lo, long hi, long *out)
{
	char *end = NULL;
	long v = strtol(val, &end, 10);

	if (end == val || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* --pod-run-as-user: "auto" (EO_CFG_POD_UID_AUTO) or a non-root UID; -1 with err otherwise. */
static int pod_uid_flag(const struct flag_def *fd, const char *val, long *out, char *err,
			size_t errcap)
{
	if (strcmp(val, "auto") == 0) {
		*out = EO_CFG_POD_UID_AUTO;
		return 0;
	}
	if (parse_range(val, 1, EO_CFG_POD_UID_MAX, out) != 0) {
		eo_set_err(err, errcap,
			   "invalid value \"%.64s\" for --%s (auto, or a user ID from 1 to %ld: "
			   "the Pods run as non-root)",
			   val, fd->name, (long)EO_CFG_POD_UID_MAX);
		return -1;
	}
	return 0;
}

/* A whole number from lo to hi for --name into *out; -1 with err set otherwise. */
static int int_flag(const struct flag_def *fd, const char *val, long lo, long hi, int *out,
		    char *err, size_t errcap)
{
	long v;

	if (parse_range(val, lo, hi, &v) != 0) {
		eo_set_err(err, errcap, "invalid value \"%.64s\" for --%s (%ld-%ld)", val, fd->name,
			   lo, hi);
		return -1;
	}
	*out = (int)v;
	return 0;
}

/* Applies one flag value; the watch-namespace list is only recorded in ns_list[0]. */
static int apply(struct eo_config *cfg, const struct flag_def *fd, const char *val,
		 const char *ns_list[1], char *err, size_t errcap)
{
	char *base = (char *)cfg;

	switch (fd->kind) {
	case FLAG_STRING:
		if (copy_str(base + fd->off, fd->cap, val) != 0) {
			eo_set_err(err, errcap, "value of --%s is too long (max %zu bytes)",
				   fd->name, fd->cap - 1);
			return -1;
		}
		return 0;
	case FLAG_BOOL:
		if (parse_bool(val, (bool *)(base + fd->off)) != 0) {
			eo_set_err(err, errcap, "invalid boolean value \"%.64s\" for --%s", val,
				   fd->name);
			return -1;
		}
		return 0;
	case FLAG_LOG_LEVEL:
		if (eo_log_level_parse(val, (enum eo_log_level *)(base + fd->off)) != 0) {
			eo_set_err(
			    err, errcap,
			    "invalid value \"%.64s\" for --%s (use debug, info, warn or error)",
			    val, fd->name);
			return -1;
		}
		return 0;
	case FLAG_INT:
		return int_flag(fd, val, 1, EO_CFG_WORKERS_MAX, (int *)(base + fd->off), err,
				errcap);
	case FLAG_COUNT:
		return int_flag(fd, val, 0, EO_CFG_COUNT_MAX, (int *)(base + fd->off), err, errcap);
	case FLAG_POD_UID:
		return pod_uid_flag(fd, val, (long *)(base + fd->off), err, errcap);
	case FLAG_NAMESPACES:
		/* Parsed after the loop, once the environment fallback is known. */
		ns_list[0] = val;
		return 0;
	}
	return -1;
}

static const char *env_get(const struct eo_flags_env *env, const char *name)
{
	const char *v;

	if (!env || !env->getenv)
		return NULL;
	v = env->getenv(env->ud, name);
	return v && *v ? v : NULL;
}

/* An image repository: no whitespace, no digest, and no tag (a ':' after the last '/';
 * an earlier ':' is a registry port, as in registry.local:5000/etcd). */
static bool repository_ok(const char *repo)
{
	const char *slash = strrchr(repo, '/');
	const char *colon = strrchr(repo, ':');

	if (strpbrk(repo, " \t\r\n@"))
		return false;
	return !colon || (slash && colon < slash);
}

static int validate(struct eo_config *cfg, const struct eo_flags_env *env, char *err, size_t errcap)
{
	struct eo_bind_addr ba;
	char perr[192];
	const char *rc_path;
	size_t n;

	if (eo_bind_addr_parse(cfg->metrics_bind_address, &ba, perr, sizeof(perr)) != 0) {
		eo_set_err(err, errcap, "--metrics-bind-address: %s", perr);
		return -1;
	}
	if (eo_bind_addr_parse(cfg->health_probe_bind_address, &ba, perr, sizeof(perr)) != 0) {
		eo_set_err(err, errcap, "--health-probe-bind-address: %s", perr);
		return -1;
	}
	if (!dns_subdomain_ok(cfg->leader_election_id)) {
		eo_set_err(err, errcap, "--leader-election-id \"%.64s\" is not a valid Lease name",
			   cfg->leader_election_id);
		return -1;
	}
	if (cfg->leader_election_namespace[0] &&
	    !dns_label_ok(cfg->leader_election_namespace, strlen(cfg->leader_election_namespace))) {
		eo_set_err(err, errcap,
			   "--leader-election-namespace \"%.64s\" is not a namespace name",
			   cfg->leader_election_namespace);
		return -1;
	}

	if (cfg->cluster_domain[0]) {
		/* "cluster.local." is written often enough to accept. */
		n = strlen(cfg->cluster_domain);
		while (n > 0 && cfg->cluster_domain[n - 1] == '.')
			cfg->cluster_domain[--n] = '\0';
		for (n = 0; cfg->cluster_domain[n]; n++)
			cfg->cluster_domain[n] =
			    (char)tolower((unsigned char)cfg->cluster_domain[n]);
		if (!dns_subdomain_ok(cfg->cluster_domain)) {
			eo_set_err(err, errcap, "--cluster-domain \"%.64s\" is not a DNS name",
				   cfg->cluster_domain);
			return -1;
		}
		cfg->cluster_domain_source = EO_DOMAIN_FROM_FLAG;
	} else {
		rc_path = env && env->resolv_conf ? env->resolv_conf : EO_DEFAULT_RESOLV_CONF;
		if (eo_cluster_domain_discover(rc_path, cfg->cluster_domain,
					       sizeof(cfg->cluster_domain)) == 0) {
			cfg->cluster_domain_source = EO_DOMAIN_FROM_RESOLV_CONF;
		} else {
			snprintf(cfg->cluster_domain, sizeof(cfg->cluster_domain), "%s",
				 EO_DEFAULT_CLUSTER_DOMAIN);
			cfg->cluster_domain_source = EO_DOMAIN_DEFAULT;
		}
	}

	/* Snapshot Jobs and restore init containers run this image; refuse to start without it
	 * rather than create Pods that can never pull. */
	if (!cfg->operator_image[0]) {
		eo_set_err(
		    err, errcap,
		    "the operator image is not set: pass --operator-image or set OPERATOR_IMAGE "
		    "to the image this operator runs from");
		return -1;
	}
	if (strcmp(cfg->operator_image, EO_OPERATOR_IMAGE_PLACEHOLDER) == 0) {
		eo_set_err(err, errcap,
			   "the operator image is the placeholder \"%s\": set OPERATOR_IMAGE (or "
			   "--operator-image) to the image this operator runs from",
			   EO_OPERATOR_IMAGE_PLACEHOLDER);
		return -1;
	}
	if (strpbrk(cfg->operator_image, " \t\r\n")) {
		eo_set_err(err, errcap, "--operator-image must not contain whitespace");
		return -1;
	}
	if (!repository_ok(cfg->etcd_image_repository)) {
		eo_set_err(
		    err, errcap,
		    "--etcd-image-repository \"%.64s\" must be a repository without tag or digest",
		    cfg->etcd_image_repository);
		return -1;
	}
	return 0;
}

/* getopt_long's val for flags[i] is OPT_BASE + i; the three commands follow the table. */
enum { OPT_BASE = 256, OPT_HELP = OPT_BASE + (int)NFLAGS, OPT_H, OPT_VERSION, NOPTS = NFLAGS + 3 };

/* The option table for getopt_long_only(3): every flag is a long option, so "-name" and
 * "--name" are the same; booleans take an optional "=value" and never the next argument. */
static void long_options(struct option opts[NOPTS + 1])
{
	size_t i;

	for (i = 0; i < NFLAGS; i++)
		opts[i] = (struct option){flags[i].name,
					  flags[i].kind == FLAG_BOOL ? optional_argument
								     : required_argument,
					  NULL, OPT_BASE + (int)i};
	/* "-h" must match "h" exactly, not be an ambiguous prefix of "help" and
	 * "health-probe-bind-address". A value given to them is ignored, as before. */
	opts[i++] = (struct option){"help", optional_argument, NULL, OPT_HELP};
	opts[i++] = (struct option){"h", optional_argument, NULL, OPT_H};
	opts[i++] = (struct option){"version", optional_argument, NULL, OPT_VERSION};
	opts[i] = (struct option){NULL, 0, NULL, 0};
}

/* The flag name as written in tok ("-name", "--name" or either with "=value"). */
static const char *written_name(const char *tok, size_t *n)
{
	const char *name = tok + (tok[0] == '-' && tok[1] == '-' ? 2 : tok[0] == '-' ? 1 : 0);

	*n = strcspn(name, "=");
	return name;
}

/*
 * Environment fallbacks for the flags that were absent or empty (seen false): 0, or -1 with
 * err naming the variable.
 */
static int env_fallbacks(struct eo_config *cfg, const struct eo_flags_env *env, const bool *seen,
			 const char **ns_list, char *err, size_t errcap)
{
	const char *ev;
	size_t i;

	for (i = 0; i < NFLAGS; i++) {
		if (seen[i] || !flags[i].env)
			continue;
		ev = env_get(env, flags[i].env);
		if (!ev)
			continue;
		if (flags[i].kind == FLAG_NAMESPACES) {
			ns_list[0] = ev;
		} else if (apply(cfg, &flags[i], ev, ns_list, err, errcap) != 0) {
			/* Name the variable, not the flag, in the message. */
			eo_set_err(err, errcap, "environment variable %s is too long",
				   flags[i].env);
			return -1;
		}
	}
	return 0;
}

/* An explicitly empty flag falls back to the default, as documented. */
static void empty_defaults(struct eo_config *cfg)
{
	if (!cfg->metrics_bind_address[0])
		snprintf(cfg->metrics_bind_address, sizeof(cfg->metrics_bind_address), "%s",
			 EO_DEFAULT_METRICS_ADDR);
	if (!cfg->health_probe_bind_address[0])
		snprintf(cfg->health_probe_bind_address, sizeof(cfg->health_probe_bind_address),
			 "%s", EO_DEFAULT_HEALTH_ADDR);
	if (!cfg->leader_election_id[0])
		snprintf(cfg->leader_election_id, sizeof(cfg->leader_election_id), "%s",
			 EO_DEFAULT_LEADER_ELECTION_ID);
	if (!cfg->etcd_image_repository[0])
		snprintf(cfg->etcd_image_repository, sizeof(cfg->etcd_image_repository), "%s",
			 EO_DEFAULT_ETCD_IMAGE_REPO);
}

enum eo_flags_status eo_flags_parse(int argc, char *const argv[], const struct eo_flags_env *env,
				    struct eo_config *cfg, char *err, size_t errcap)
{
	struct option opts[NOPTS + 1];
	bool seen[NFLAGS] = {false};
	const char *ns_list[1] = {NULL};
	const struct flag_def *fd;
	const char *name, *val;
	size_t i, nlen;
	int c, tok;

	config_defaults(cfg);
	if (err && errcap)
		err[0] = '\0';
	long_options(opts);
	/* "+": stop at the first argument that is not a flag (Go's rule); ":": report a
	 * missing value as ':' rather than printing; no short options at all. */
	optind = 0; /* full re-initialisation (glibc), so parse may run more than once */
	opterr = 0;
	for (;;) {
		tok = optind > 0 ? optind : 1;
		c = getopt_long_only(argc, argv, "+:", opts, NULL);
		if (c == -1)
			break;
		name = written_name(argv[tok], &nlen);
		if (c == '?' || c == ':') {
			if (c == ':' && optopt >= OPT_BASE && optopt < OPT_HELP) {
				eo_set_err(err, errcap, "flag needs an argument: --%s",
					   flags[optopt - OPT_BASE].name);
			} else if (nlen == 0 || name[0] == '-' || name[0] == '=') {
				eo_set_err(err, errcap, "bad flag syntax: %.64s", argv[tok]);
			} else {
				eo_set_err(err, errcap, "unknown flag: --%.*s",
					   (int)(nlen > 64 ? 64 : nlen), name);
			}
			return EO_FLAGS_ERROR;
		}
		/* getopt accepts unambiguous abbreviations; Go's flag package does not. */
		for (i = 0; opts[i].name != NULL && opts[i].val != c; i++)
			;
		if (opts[i].name == NULL || strlen(opts[i].name) != nlen ||
		    strncmp(opts[i].name, name, nlen) != 0) {
			eo_set_err(err, errcap, "unknown flag: --%.*s",
				   (int)(nlen > 64 ? 64 : nlen), name);
			return EO_FLAGS_ERROR;
		}
		if (c == OPT_HELP || c == OPT_H)
			return EO_FLAGS_HELP;
		if (c == OPT_VERSION)
			return EO_FLAGS_VERSION;
		fd = &flags[c - OPT_BASE];
		val = optarg != NULL ? optarg : "true"; /* only a boolean has no value */
		if (apply(cfg, fd, val, ns_list, err, errcap) != 0)
			return EO_FLAGS_ERROR;
		seen[fd - flags] = val[0] != '\0';
	}
	if (optind < argc) {
		eo_set_err(err, errcap, "unexpected argument \"%.64s\"", argv[optind]);
		return EO_FLAGS_ERROR;
	}

	if (env_fallbacks(cfg, env, seen, ns_list, err, errcap) != 0)
		return EO_FLAGS_ERROR;
	empty_defaults(cfg);
	if (ns_list[0] && parse_namespaces(cfg, ns_list[0], err, errcap) != 0)
		return EO_FLAGS_ERROR;
	if (validate(cfg, env, err, errcap) != 0)
		return EO_FLAGS_ERROR;
	return EO_FLAGS_RUN;
}

void eo_flags_usage(FILE *f, const char *prog)
{
	char lhs[64];
	size_t i;

	fprintf(f, "Usage: %s [flags]\n\n", prog ? prog : "etcd-operator");
	fprintf(f, "Runs the etcd-operator controller manager.\n\nFlags:\n");
	for (i = 0; i < NFLAGS; i++) {
		const struct flag_def *fd = &flags[i];

		snprintf(lhs, sizeof(lhs), "--%s%s", fd->name,
			 fd->kind == FLAG_BOOL ? "" : " value");
		fprintf(f, "  %-36s %s", lhs, fd->help);
		if (fd->def && fd->def[0])
			fprintf(f, " (default %s)", fd->def);
		if (fd->env)
			fprintf(f, " [env %s]", fd->env);
		fputc('\n', f);
	}
	fprintf(f, "  %-36s %s\n", "--version", "Print the version and exit.");
	fprintf(f, "  %-36s %s\n", "-h, --help", "Print this help and exit.");
	fprintf(f,
		"\nFlags may be written -name or --name; values as --name=value or --name value.\n"
		"Exit status: 0 after a clean shutdown, 1 on a runtime failure, 2 on bad usage.\n");
}
