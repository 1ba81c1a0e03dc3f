/*
 * controller/config.h - the operator's configuration from command-line flags and environment.
 *
 * eo_flags_parse() is pure apart from reading the resolv.conf file named in its environment
 * (for --cluster-domain discovery): environment variables come through a callback, so tests
 * pass tables. Parsing is getopt_long_only(3) with every flag a long option, held to the rules
 * of Go's flag package, which the Go operators' manifests were written for: "-name" and
 * "--name" are the same, values go as "--name=value" or "--name value", booleans as "--name"
 * or "--name=true|false" (also 1/0, t/f, TRUE/FALSE, True/False) but never as a separate
 * argument, the last occurrence wins, "--" ends the flags, any other argument is an error,
 * and a flag must be written in full (getopt's abbreviations are refused).
 *
 * An empty value means "not set": the environment fallback or the default applies.
 *
 * struct eo_config holds fixed-size buffers only; it owns no heap memory and needs no cleanup.
 */
#ifndef EO_CONTROLLER_CONFIG_H
#define EO_CONTROLLER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "obs/log.h"

#define EO_CFG_ADDR_MAX	      128
#define EO_CFG_DNS_MAX	      254 /* a DNS subdomain (253) plus NUL */
#define EO_CFG_LABEL_MAX      64  /* a DNS label (63) plus NUL */
#define EO_CFG_IMAGE_MAX      512
#define EO_CFG_PATH_MAX	      4096
#define EO_CFG_NAMESPACES_MAX 64
#define EO_CFG_WORKERS_MAX    64
#define EO_CFG_COUNT_MAX      100000000 /* FLAG_COUNT values: 0 to this */

#define EO_DEFAULT_METRICS_ADDR		   ":8080"
#define EO_DEFAULT_HEALTH_ADDR		   ":8081"
#define EO_DEFAULT_LEADER_ELECTION_ID	   "aa20b3a9.etcd-operator.cozystack.io"
#define EO_DEFAULT_CLUSTER_DOMAIN	   "cluster.local"
#define EO_DEFAULT_ETCD_IMAGE_REPO	   "quay.io/coreos/etcd"
#define EO_DEFAULT_WORKERS		   4
#define EO_DEFAULT_SCHEDULE_MIN_INTERVAL_S 300
#define EO_DEFAULT_SCHEDULE_KEEP_LAST	   10
#define EO_DEFAULT_RESOLV_CONF		   "/etc/resolv.conf"
#define EO_OPERATOR_IMAGE_PLACEHOLDER	   "controller:latest"
#define EO_DEFAULT_POD_UID		   65532L
#define EO_CFG_POD_UID_AUTO		   (-1L)       /* --pod-run-as-user=auto */
#define EO_CFG_POD_UID_MAX		   2147483647L /* Kubernetes' int64 field, kept to int32 */

enum eo_domain_source {
	EO_DOMAIN_FROM_FLAG,
	EO_DOMAIN_FROM_RESOLV_CONF,
	EO_DOMAIN_DEFAULT,
};

struct eo_config {
	char metrics_bind_address[EO_CFG_ADDR_MAX];	 /* "0" disables */
	char health_probe_bind_address[EO_CFG_ADDR_MAX]; /* "0" disables */
	bool leader_elect;
	char leader_election_id[EO_CFG_DNS_MAX];
	char leader_election_namespace[EO_CFG_LABEL_MAX]; /* "": the operator's own namespace */
	char cluster_domain[EO_CFG_DNS_MAX];
	enum eo_domain_source cluster_domain_source;
	size_t nwatch_namespaces; /* 0: every namespace */
	char watch_namespaces[EO_CFG_NAMESPACES_MAX][EO_CFG_LABEL_MAX];
	char operator_image[EO_CFG_IMAGE_MAX];
	char etcd_image_repository[EO_CFG_IMAGE_MAX];
	char kubeconfig[EO_CFG_PATH_MAX]; /* "": in-cluster configuration */
	enum eo_log_level log_level;
	int workers;
	bool network_policy;	     /* default of spec.networkPolicy.enabled */
	bool peer_network_policy;    /* every cluster gets its peer-only NetworkPolicy */
	int schedule_min_interval_s; /* snapshot schedules firing more often are refused; 0 none */
	int schedule_default_keep_last; /* retention of a schedule that sets none; 0 keeps all */
	char operator_pod_labels[EO_CFG_ADDR_MAX * 4]; /* "k=v,...": the operator's Pods */
	long pod_run_as_user; /* --pod-run-as-user: a UID, or EO_CFG_POD_UID_AUTO */
};

enum eo_flags_status {
	EO_FLAGS_RUN,	  /* cfg is complete and valid */
	EO_FLAGS_HELP,	  /* -h/--help: print eo_flags_usage(), exit 0 */
	EO_FLAGS_VERSION, /* --version: print the version, exit 0 */
	EO_FLAGS_ERROR,	  /* err says why; exit 2 */
};

/* Returns the value of an environment variable or NULL; the string is borrowed. */
typedef const char *(*eo_getenv_fn)(void *ud, const char *name);

struct eo_flags_env {
	eo_getenv_fn getenv;	 /* NULL: no environment */
	void *ud;		 /* passed to getenv */
	const char *resolv_conf; /* NULL: EO_DEFAULT_RESOLV_CONF */
};

/* An eo_getenv_fn over the process environment (getenv(3)); ud is ignored. */
const char *eo_flags_process_env(void *ud, const char *name);

/*
 * Parses argv[1..argc-1] into cfg (fully overwritten). Environment fallbacks, used when the flag
 * is absent or empty: OPERATOR_IMAGE, ETCD_IMAGE_REPOSITORY, WATCH_NAMESPACE (comma list),
 * KUBECONFIG. On EO_FLAGS_ERROR a one-line message is in err (may be NULL).
 */
enum eo_flags_status eo_flags_parse(int argc, char *const argv[], const struct eo_flags_env *env,
				    struct eo_config *cfg, char *err, size_t errcap);

/* Writes the flag reference to f. */
void eo_flags_usage(FILE *f, const char *prog);

/*
 * The cluster DNS suffix from the last `search` line of a resolv.conf: the part after "svc." of
 * the first entry that has one ("ns.svc.cluster.local" gives "cluster.local"). Returns 0 and
 * fills out, or -1 if the file is missing, unreadable or has no such entry.
 */
int eo_cluster_domain_discover(const char *resolv_conf_path, char *out, size_t cap);

#endif /* EO_CONTROLLER_CONFIG_H */
