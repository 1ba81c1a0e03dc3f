/*
 * plugin/args.h - the command line of kubectl-etcd (pure: no I/O, no environment).
 *
 *   kubectl etcd <command> [CLUSTER] [ARGS] [flags]
 *
 * The cluster is the first positional argument after the command (after `alarm list` /
 * `alarm disarm` for the alarm commands), or --cluster/-c NAME, in which case every
 * positional argument belongs to the command. Flags may come anywhere; "--" ends them.
 * A flag takes its value as "--flag=value", "--flag value", "-f value", "-fvalue" or "-f=value"
 * (kubectl's pflag rule); letters combine ("-hn NS"). Long flags are written in full.
 * Strings in struct eo_plugin_args point into argv (borrowed).
 */
#ifndef EO_PLUGIN_ARGS_H
#define EO_PLUGIN_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum eo_plugin_cmd {
	EO_PCMD_NONE = 0, /* only --help / --version */
	EO_PCMD_MEMBERS,
	EO_PCMD_STATUS,
	EO_PCMD_DEFRAG,
	EO_PCMD_COMPACT,
	EO_PCMD_ALARM_LIST,
	EO_PCMD_ALARM_DISARM,
	EO_PCMD_FORFEIT_LEADERSHIP,
	EO_PCMD_SNAPSHOT,
	EO_PCMD_ADD_MEMBER,
	EO_PCMD_REMOVE_MEMBER,
	EO_PCMD_VERSION,
	EO_PCMD_REPORT,
	EO_PCMD_COUNT_
};

enum eo_plugin_format { EO_PFMT_TABLE = 0, EO_PFMT_JSON, EO_PFMT_YAML };

struct eo_plugin_args {
	enum eo_plugin_cmd cmd;
	const char *cluster;	/* NULL: not given (an error for every command but version) */
	const char *ns;		/* -n/--namespace; NULL: the kubeconfig context's namespace */
	const char *kubeconfig; /* --kubeconfig; NULL: $KUBECONFIG, ~/.kube/config */
	const char *context;	/* --context; NULL: current-context */
	enum eo_plugin_format format;
	const char *member;	 /* --member: status/defrag/snapshot against one member */
	const char *to;		 /* --to: forfeit-leadership's new leader */
	const char *path;	 /* snapshot: the local file; report: the archive (or NULL) */
	const char *remove_name; /* remove-member: the EtcdMember */
	int64_t revision;	 /* compact: 0 = the current revision */
	long timeout_s;		 /* --timeout (seconds) per etcd call; 0 = default */
	bool help;		 /* -h/--help: print help for cmd (or the overview) */
	bool version;		 /* --version */
};

/* Exit codes of kubectl-etcd (docs/kubectl-etcd.md). */
enum eo_plugin_exit {
	EO_PEXIT_OK = 0,
	EO_PEXIT_FAILED = 1,	/* etcd or the apiserver failed the operation; unreachable member */
	EO_PEXIT_USAGE = 2,	/* bad command line */
	EO_PEXIT_NOTFOUND = 3,	/* no such cluster, namespace or member */
	EO_PEXIT_FORBIDDEN = 4, /* the apiserver refused (401/403): credentials or RBAC */
	EO_PEXIT_REFUSED = 5,	/* refused by kubectl-etcd: paused cluster, operator's model */
	EO_PEXIT_LOCAL = 6,	/* local file error (snapshot path) */
};

/* "members", "alarm list", ...; "" for EO_PCMD_NONE. Never NULL. */
const char *eo_plugin_cmd_name(enum eo_plugin_cmd c);

/*
 * Parses argv[1..argc-1]. 0 on success, else -1 with a one-line message in err (exit with
 * EO_PEXIT_USAGE). Help and version requests succeed without the other checks.
 */
int eo_plugin_parse_args(int argc, char *const *argv, struct eo_plugin_args *a, char *err,
			 size_t errcap);

/*
 * One step of getopt_long(3) over a command line of kubectl-etcd (eo_plugin_parse_args and
 * `kubectl etcd migrate`'s parser). shorts starts with "-:" (words come back in order, a
 * missing value as ':'); booleans in opts are no_argument. Start from a zeroed struct
 * eo_popt and call until the kind is not EO_POPT_FLAG or EO_POPT_ARG, or is EO_POPT_END.
 * Refuses what getopt accepts and pflag does not: an abbreviated long flag is unknown, and
 * "-n=NS" is NS, not "=NS".
 */
struct option;
enum eo_popt_kind {
	EO_POPT_END,	    /* no more flags: argv[rest..] are arguments (after "--") */
	EO_POPT_ARG,	    /* arg: the next argument */
	EO_POPT_FLAG,	    /* val: the option's val; arg: its value, NULL for a boolean */
	EO_POPT_UNKNOWN,    /* shown: "--frob" or "-x"; in: the word "-hx" when a letter of it */
	EO_POPT_NO_VALUE,   /* shown wants a value and the command line ended */
	EO_POPT_TAKES_NONE, /* shown is a boolean given a value ("--help=x", "-h=x") */
};
struct eo_popt {
	enum eo_popt_kind kind;
	int val, rest;
	const char *arg, *in;
	char shown[64]; /* the flag as the user wrote it, "-n" or "--namespace" */
	bool started;
};
void eo_plugin_getopt(int argc, char *const *argv, const char *shorts, const struct option *opts,
		      struct eo_popt *o);

/* The help text of a command (EO_PCMD_NONE: the overview). Static; never NULL. */
const char *eo_plugin_help(enum eo_plugin_cmd c);

#endif
