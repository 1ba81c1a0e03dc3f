/* The command line of kubectl-etcd (plugin/args.h). */
#include "plugin/args.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POSITIONAL 8
#define NAME_MAX_LEN   253
#define NS_MAX_LEN     63

static const struct {
	enum eo_plugin_cmd cmd;
	const char *word;  /* first word */
	const char *word2; /* second word, or NULL */
} cmds[] = {
    {EO_PCMD_MEMBERS, "members", NULL},
    {EO_PCMD_STATUS, "status", NULL},
    {EO_PCMD_DEFRAG, "defrag", NULL},
    {EO_PCMD_COMPACT, "compact", NULL},
    {EO_PCMD_ALARM_LIST, "alarm", "list"},
    {EO_PCMD_ALARM_DISARM, "alarm", "disarm"},
    {EO_PCMD_FORFEIT_LEADERSHIP, "forfeit-leadership", NULL},
    {EO_PCMD_SNAPSHOT, "snapshot", NULL},
    {EO_PCMD_ADD_MEMBER, "add-member", NULL},
    {EO_PCMD_REMOVE_MEMBER, "remove-member", NULL},
    {EO_PCMD_VERSION, "version", NULL},
    {EO_PCMD_REPORT, "report", NULL},
};

const char *eo_plugin_cmd_name(enum eo_plugin_cmd c)
{
	static char two[40];
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (cmds[i].cmd != c)
			continue;
		if (!cmds[i].word2)
			return cmds[i].word;
		snprintf(two, sizeof(two), "%s %s", cmds[i].word, cmds[i].word2);
		return two;
	}
	return "";
}

/* getopt_long's val of the flags without a letter; the others use their letter. */
enum { O_KUBECONFIG = 256, O_CONTEXT, O_MEMBER, O_TO, O_TIMEOUT, O_VERSION };

/* "-": arguments come back in order (flags go anywhere); ":": a missing value is ':'. */
static const char plugin_shorts[] = "-:hn:o:c:";

static const struct option plugin_opts[] = {
    {"namespace", required_argument, NULL, 'n'},
    {"kubeconfig", required_argument, NULL, O_KUBECONFIG},
    {"context", required_argument, NULL, O_CONTEXT},
    {"output", required_argument, NULL, 'o'},
    {"cluster", required_argument, NULL, 'c'},
    {"member", required_argument, NULL, O_MEMBER},
    {"to", required_argument, NULL, O_TO},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, O_VERSION},
    {NULL, 0, NULL, 0},
};

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* A DNS-1123 label/subdomain-ish object name: [a-z0-9.-], starts and ends alphanumeric. */
static bool valid_name(const char *s, size_t max)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > max)
		return false;
	for (i = 0; i < n; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (!alnum && ch != '-' && ch != '.')
			return false;
		if ((i == 0 || i == n - 1) && !alnum)
			return false;
	}
	return true;
}

static int set_flag(struct eo_plugin_args *a, int f, const char *name, const char *v, char *err,
		    size_t cap)
{
	char *end = NULL;
	long long x;

	switch (f) {
	case 'n':
		if (!valid_name(v, NS_MAX_LEN) || strchr(v, '.'))
			return fail(err, cap, "invalid namespace \"%.80s\"", v);
		a->ns = v;
		break;
	case O_KUBECONFIG:
		if (!v[0])
			return fail(err, cap, "%s needs a path", name);
		a->kubeconfig = v;
		break;
	case O_CONTEXT:
		a->context = v[0] ? v : NULL;
		break;
	case 'o':
		if (strcmp(v, "table") == 0 || strcmp(v, "wide") == 0)
			a->format = EO_PFMT_TABLE;
		else if (strcmp(v, "json") == 0)
			a->format = EO_PFMT_JSON;
		else if (strcmp(v, "yaml") == 0)
			a->format = EO_PFMT_YAML;
		else
			return fail(err, cap,
				    "unknown output format \"%.40s\" (table, json or yaml)", v);
		break;
	case 'c':
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid cluster name \"%.80s\"", v);
		a->cluster = v;
		break;
	case O_MEMBER:
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid member name \"%.80s\"", v);
		a->member = v;
		break;
	case O_TO:
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid member name \"%.80s\"", v);
		a->to = v;
		break;
	case O_TIMEOUT:
		errno = 0;
		x = strtoll(v, &end, 10);
		if (errno || end == v || (*end && strcmp(end, "s") != 0) || x < 1 || x > 3600)
			return fail(err, cap,
				    "--timeout wants seconds from 1 to 3600, not \"%.40s\"", v);
		a->timeout_s = (long)x;
		break;
	case 'h':
		a->help = true;
		break;
	case O_VERSION:
		a->version = true;
		break;
	}
	return 0;
}

/* A word starting "--": the flag of opts written exactly (getopt also takes "--names"). */
static void long_step(const char *w, int c, const struct option *opts, struct eo_popt *o)
{
	size_t n = strcspn(w + 2, "="), i;

	for (i = 0; opts[i].name != NULL; i++)
		if (strlen(opts[i].name) == n && strncmp(opts[i].name, w + 2, n) == 0)
			break;
	if (opts[i].name == NULL) {
		o->kind = EO_POPT_UNKNOWN;
		snprintf(o->shown, sizeof(o->shown), "%.*s", (int)(n > 58 ? 60 : n + 2), w);
		return;
	}
	snprintf(o->shown, sizeof(o->shown), "--%.60s", opts[i].name);
	o->val = opts[i].val;
	/* with an exact name, '?' is "--help=x": a value given to a flag that takes none */
	o->kind = c == ':' ? EO_POPT_NO_VALUE : c == '?' ? EO_POPT_TAKES_NONE : EO_POPT_FLAG;
}

/* A word of one or more letters ("-n", "-nNS", "-hn"); pflag reads "-n=NS" as NS. */
static void short_step(char *const *argv, const char *w, int c, struct eo_popt *o)
{
	const char *eq = strchr(w, '=');

	if (c == '?' && optopt == '=' && eq != NULL && eq > w + 1) {
		o->kind = EO_POPT_TAKES_NONE; /* "-h=x" */
		o->val = (unsigned char)eq[-1];
	} else {
		o->kind = c == '?' ? EO_POPT_UNKNOWN : c == ':' ? EO_POPT_NO_VALUE : EO_POPT_FLAG;
		o->val = c == '?' || c == ':' ? optopt : c;
	}
	snprintf(o->shown, sizeof(o->shown), "-%c", o->val);
	o->in = strlen(w) > 2 && o->kind == EO_POPT_UNKNOWN ? w : NULL;
	if (o->kind == EO_POPT_FLAG && o->arg != NULL && o->arg != argv[optind - 1] &&
	    o->arg[0] == '=')
		o->arg++;
}

void eo_plugin_getopt(int argc, char *const *argv, const char *shorts, const struct option *opts,
		      struct eo_popt *o)
{
	const char *w;
	int tok, c;

	if (!o->started) {
		optind = 0; /* glibc: full re-initialisation, so a parser can run again */
		opterr = 0; /* the callers word their own errors */
		o->started = true;
	}
	tok = optind > 0 ? optind : 1; /* the word getopt looks at (a flag's, not its value's) */
	c = getopt_long(argc, argv, shorts, opts, NULL);
	o->arg = optarg;
	o->in = NULL;
	o->shown[0] = '\0';
	if (c == -1) {
		o->kind = EO_POPT_END;
		o->rest = optind;
		return;
	}
	if (c == 1) {
		o->kind = EO_POPT_ARG;
		return;
	}
	w = argv[tok];
	if (w[0] == '-' && w[1] == '-')
		long_step(w, c, opts, o);
	else
		short_step(argv, w, c, o);
}

struct positional {
	const char *v[MAX_POSITIONAL];
	size_t n;
};

static int add_positional(struct positional *p, const char *s, char *err, size_t cap)
{
	if (p->n == MAX_POSITIONAL)
		return fail(err, cap, "too many arguments (at \"%.40s\")", s);
	p->v[p->n++] = s;
	return 0;
}

/* Every flag into a; the other words, in order, into p. */
static int parse_flags(int argc, char *const *argv, struct eo_plugin_args *a, struct positional *p,
		       char *err, size_t cap)
{
	struct eo_popt o = {0};
	int i;

	for (;;) {
		eo_plugin_getopt(argc, argv, plugin_shorts, plugin_opts, &o);
		switch (o.kind) {
		case EO_POPT_END: /* after "--": arguments only */
			for (i = o.rest; i < argc; i++)
				if (add_positional(p, argv[i], err, cap) != 0)
					return -1;
			return 0;
		case EO_POPT_ARG:
			if (add_positional(p, o.arg, err, cap) != 0)
				return -1;
			break;
		case EO_POPT_FLAG:
			if (set_flag(a, o.val, o.shown, o.arg ? o.arg : "", err, cap) != 0)
				return -1;
			break;
		case EO_POPT_UNKNOWN:
			if (o.in)
				return fail(err, cap,
					    "unknown flag \"%s\" in \"%.60s\" (see --help)",
					    o.shown, o.in);
			return fail(err, cap, "unknown flag \"%s\" (see --help)", o.shown);
		case EO_POPT_NO_VALUE:
			return fail(err, cap, "%s needs a value", o.shown);
		case EO_POPT_TAKES_NONE:
			return fail(err, cap, "%s takes no value", o.shown);
		}
	}
}

/* The command: one word, or two for alarm; *used says how many. */
static int find_command(struct eo_plugin_args *a, const struct positional *p, size_t *used,
			char *err, size_t cap)
{
	size_t k;

	*used = 0;
	if (p->n == 0)
		return 0;
	for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		if (strcmp(cmds[k].word, p->v[0]) != 0)
			continue;
		if (!cmds[k].word2) {
			a->cmd = cmds[k].cmd;
			*used = 1;
			return 0;
		}
		if (p->n > 1 && strcmp(cmds[k].word2, p->v[1]) == 0) {
			a->cmd = cmds[k].cmd;
			*used = 2;
			return 0;
		}
	}
	if (strcmp(p->v[0], "alarm") == 0 && !a->help)
		return fail(err, cap, "%s needs a subcommand: list or disarm", "alarm");
	if (strcmp(p->v[0], "help") == 0)
		a->help = true;
	else if (strcmp(p->v[0], "alarm") != 0)
		return fail(err, cap, "unknown command \"%.60s\" (see --help)", p->v[0]);
	return 0;
}

/* The command's own arguments, from p->v[*i]. */
static int command_args(struct eo_plugin_args *a, const struct positional *p, size_t *i, char *err,
			size_t cap)
{
	char *end = NULL;
	long long r;

	switch (a->cmd) {
	case EO_PCMD_SNAPSHOT:
		if (*i >= p->n)
			return fail(err, cap, "%s", "snapshot needs the path of the file to write");
		a->path = p->v[(*i)++];
		if (!a->path[0])
			return fail(err, cap, "%s", "snapshot needs a non-empty path");
		break;
	case EO_PCMD_REPORT:
		if (*i < p->n) {
			a->path = p->v[(*i)++];
			if (!a->path[0])
				return fail(err, cap, "%s", "report needs a non-empty path");
		}
		break;
	case EO_PCMD_REMOVE_MEMBER:
		if (*i >= p->n)
			return fail(err, cap, "%s",
				    "remove-member needs the name of the member to remove");
		if (!valid_name(p->v[*i], NAME_MAX_LEN))
			return fail(err, cap, "invalid member name \"%.80s\"", p->v[*i]);
		a->remove_name = p->v[(*i)++];
		break;
	case EO_PCMD_COMPACT:
		if (*i < p->n) {
			errno = 0;
			r = strtoll(p->v[*i], &end, 10);
			if (errno || end == p->v[*i] || *end || r < 1)
				return fail(err, cap,
					    "compact wants a positive revision, not \"%.40s\"",
					    p->v[*i]);
			a->revision = r;
			(*i)++;
		}
		break;
	default:
		break;
	}
	return 0;
}

int eo_plugin_parse_args(int argc, char *const *argv, struct eo_plugin_args *a, char *err,
			 size_t errcap)
{
	struct positional p = {.n = 0};
	size_t used;

	memset(a, 0, sizeof(*a));
	err[0] = '\0';
	if (parse_flags(argc, argv, a, &p, err, errcap) != 0 ||
	    find_command(a, &p, &used, err, errcap) != 0)
		return -1;
	if (a->help || a->version)
		return 0;
	if (a->cmd == EO_PCMD_NONE)
		return fail(err, errcap, "%s", "no command given (see --help)");
	if (a->cmd == EO_PCMD_VERSION) {
		if (p.n > used)
			return fail(err, errcap, "version takes no argument (\"%.60s\")",
				    p.v[used]);
		return 0;
	}
	if (!a->cluster) {
		if (p.n <= used)
			return fail(err, errcap, "%s: which cluster? give its name (see --help)",
				    eo_plugin_cmd_name(a->cmd));
		if (!valid_name(p.v[used], NAME_MAX_LEN))
			return fail(err, errcap, "invalid cluster name \"%.80s\"", p.v[used]);
		a->cluster = p.v[used++];
	}
	if (command_args(a, &p, &used, err, errcap) != 0)
		return -1;
	if (used < p.n)
		return fail(err, errcap, "unexpected argument \"%.60s\"", p.v[used]);
	if (a->member && a->cmd != EO_PCMD_STATUS && a->cmd != EO_PCMD_DEFRAG &&
	    a->cmd != EO_PCMD_SNAPSHOT)
		return fail(err, errcap, "--member applies to status, defrag and snapshot, not %s",
			    eo_plugin_cmd_name(a->cmd));
	if (a->to && a->cmd != EO_PCMD_FORFEIT_LEADERSHIP)
		return fail(err, errcap, "--to applies to forfeit-leadership, not %s",
			    eo_plugin_cmd_name(a->cmd));
	return 0;
}

static const char overview[] =
    "kubectl etcd - day-2 operations on etcd clusters managed by etcd-operator\n"
    "\n"
    "Usage: kubectl etcd <command> CLUSTER [args] [flags]\n"
    "\n"
    "Commands:\n"
    "  members              list the cluster's etcd members\n"
    "  status               status of every member (leader, version, database size)\n"
    "  defrag               defragment every member's database, the leader last\n"
    "  compact [REVISION]   compact the key history up to REVISION (default: now)\n"
    "  alarm list           list the raised alarms (NOSPACE, CORRUPT)\n"
    "  alarm disarm         clear every raised alarm\n"
    "  forfeit-leadership   move the leadership to another voting member\n"
    "  snapshot PATH        stream a snapshot to the local file PATH and verify it\n"
    "  add-member           add one member (raises spec.replicas by one)\n"
    "  remove-member MEMBER remove MEMBER (lowers spec.replicas when the operator\n"
    "                       would remove exactly that member; refuses otherwise)\n"
    "  report [PATH]        collect what a bug report needs into one tar.gz\n"
    "  version              print the plugin's version\n"
    "  completion bash|zsh  print a shell completion script (docs/kubectl-etcd.md)\n"
    "\n"
    "Flags:\n"
    "  -n, --namespace NS   the cluster's namespace (default: the kubeconfig's)\n"
    "  -c, --cluster NAME   the cluster, instead of the first argument\n"
    "  -o, --output FORMAT  table (default), json or yaml\n"
    "      --kubeconfig P   kubeconfig file (default: $KUBECONFIG, ~/.kube/config)\n"
    "      --context NAME   kubeconfig context (default: current-context)\n"
    "      --timeout SEC    per etcd call (default 30; snapshot: stall limit 60)\n"
    "  -h, --help           help (also per command: kubectl etcd members --help)\n"
    "      --version        print the plugin's version\n"
    "\n"
    "etcd is reached through the apiserver's Pod proxy: no route into the cluster is needed.\n"
    "Exit codes: 0 ok, 1 failed, 2 usage, 3 not found, 4 forbidden, 5 refused, 6 local file.\n";

static const struct {
	enum eo_plugin_cmd cmd;
	const char *text;
} helps[] = {
    {EO_PCMD_MEMBERS,
     "Usage: kubectl etcd members CLUSTER [-n NS] [-o table|json|yaml]\n\n"
     "Lists etcd's members as etcd itself sees them (read through one reachable\n"
     "voting member): name, member ID, started or not, voter or learner, peer and\n"
     "client URLs.\n"},
    {EO_PCMD_STATUS,
     "Usage: kubectl etcd status CLUSTER [--member M] [-n NS] [-o table|json|yaml]\n\n"
     "Asks every member (or only M) for its status: version, database size and\n"
     "size in use, whether it is the leader or a learner, raft term and index, and\n"
     "its errors (alarms). A member that cannot be reached is shown with the reason\n"
     "and the command exits 1.\n"},
    {EO_PCMD_DEFRAG,
     "Usage: kubectl etcd defrag CLUSTER [--member M] [-n NS] [-o ...]\n\n"
     "Defragments each member's database in turn, the leader last (a member blocks\n"
     "while it defragments). Stops at the first failure.\n"},
    {EO_PCMD_COMPACT, "Usage: kubectl etcd compact CLUSTER [REVISION] [-n NS] [-o ...]\n\n"
		      "Compacts the key history up to REVISION (default: the current revision),\n"
		      "physically (it returns once the members have applied it).\n"},
    {EO_PCMD_ALARM_LIST, "Usage: kubectl etcd alarm list CLUSTER [-n NS] [-o ...]\n\n"
			 "Lists the alarms raised in the cluster (member and alarm type).\n"},
    {EO_PCMD_ALARM_DISARM,
     "Usage: kubectl etcd alarm disarm CLUSTER [-n NS] [-o ...]\n\n"
     "Clears every raised alarm. Clear NOSPACE only after freeing space (compact,\n"
     "defrag, or a larger quota); it is raised again otherwise.\n"},
    {EO_PCMD_FORFEIT_LEADERSHIP,
     "Usage: kubectl etcd forfeit-leadership CLUSTER [--to MEMBER] [-n NS] [-o ...]\n\n"
     "Moves the leadership from the current leader to MEMBER (default: another\n"
     "started voting member), e.g. before maintenance on the leader's node.\n"},
    {EO_PCMD_SNAPSHOT,
     "Usage: kubectl etcd snapshot CLUSTER PATH [--member M] [-n NS] [-o ...]\n\n"
     "Streams a snapshot from one voting member (M, or the first reachable voter)\n"
     "into PATH: written to a temporary file next to PATH, fsynced and renamed into\n"
     "place only once etcd's appended SHA-256 integrity hash verified. An existing\n"
     "PATH is replaced. The file restores with etcdutl snapshot restore or an\n"
     "EtcdCluster's spec.restore.\n"},
    {EO_PCMD_ADD_MEMBER,
     "Usage: kubectl etcd add-member CLUSTER [-n NS] [-o ...]\n\n"
     "Adds one member the operator's way: raises the EtcdCluster's spec.replicas\n"
     "by one; the operator creates the EtcdMember, adds it as a learner and\n"
     "promotes it. Refused for a paused cluster and while a change is in flight.\n"},
    {EO_PCMD_REMOVE_MEMBER,
     "Usage: kubectl etcd remove-member CLUSTER MEMBER [-n NS] [-o ...]\n\n"
     "Removes MEMBER the operator's way: lowers spec.replicas by one, which the\n"
     "operator carries out on the member it picks (never joined, then learners,\n"
     "then not-ready voters, then the newest). It is done only when that pick is\n"
     "MEMBER and the removal keeps a quorum; otherwise it is refused with the\n"
     "reason (deleting an EtcdMember by hand makes the operator replace it).\n"},
    {EO_PCMD_VERSION, "Usage: kubectl etcd version | kubectl etcd --version\n"},
    {EO_PCMD_REPORT,
     "Usage: kubectl etcd report CLUSTER [PATH] [-n NS] [-o ...]\n\n"
     "Writes one tar.gz (default: ./etcd-report-<ns>-<cluster>-<time>.tar.gz) with what a\n"
     "bug report needs: summary.txt (conditions, members), the EtcdCluster, its EtcdMembers\n"
     "and Pods, the Events about them, the operator's log lines about this cluster, and\n"
     "etcd's member list and status of every member. No Secret is read into it; Pod env\n"
     "values are left out. What could not be collected (RBAC, an unreachable member) is\n"
     "listed in summary.txt and on stderr; the archive is written anyway.\n"},
};

const char *eo_plugin_help(enum eo_plugin_cmd c)
{
	size_t i;

	for (i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
		if (helps[i].cmd == c)
			return helps[i].text;
	return overview;
}
