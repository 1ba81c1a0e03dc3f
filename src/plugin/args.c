/* The command line of kubectl-etcd (plugin/args.h). */
#include "plugin/args.h"

#include <errno.h>
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

enum flag {
	F_NONE,
	F_NS,
	F_KUBECONFIG,
	F_CONTEXT,
	F_OUTPUT,
	F_CLUSTER,
	F_MEMBER,
	F_TO,
	F_TIMEOUT,
	F_HELP,
	F_VERSION,
};

static const struct {
	enum flag f;
	const char *lng;
	char shrt;
	bool value;
} flags[] = {
    {F_NS, "namespace", 'n', true},
    {F_KUBECONFIG, "kubeconfig", 0, true},
    {F_CONTEXT, "context", 0, true},
    {F_OUTPUT, "output", 'o', true},
    {F_CLUSTER, "cluster", 'c', true},
    {F_MEMBER, "member", 0, true},
    {F_TO, "to", 0, true},
    {F_TIMEOUT, "timeout", 0, true},
    {F_HELP, "help", 'h', false},
    {F_VERSION, "version", 0, false},
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

static int set_flag(struct eo_plugin_args *a, enum flag f, const char *name, const char *v,
		    char *err, size_t cap)
{
	char *end = NULL;
	long long x;

	switch (f) {
	case F_NS:
		if (!valid_name(v, NS_MAX_LEN) || strchr(v, '.'))
			return fail(err, cap, "invalid namespace \"%.80s\"", v);
		a->ns = v;
		break;
	case F_KUBECONFIG:
		if (!v[0])
			return fail(err, cap, "%s needs a path", name);
		a->kubeconfig = v;
		break;
	case F_CONTEXT:
		a->context = v[0] ? v : NULL;
		break;
	case F_OUTPUT:
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
	case F_CLUSTER:
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid cluster name \"%.80s\"", v);
		a->cluster = v;
		break;
	case F_MEMBER:
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid member name \"%.80s\"", v);
		a->member = v;
		break;
	case F_TO:
		if (!valid_name(v, NAME_MAX_LEN))
			return fail(err, cap, "invalid member name \"%.80s\"", v);
		a->to = v;
		break;
	case F_TIMEOUT:
		errno = 0;
		x = strtoll(v, &end, 10);
		if (errno || end == v || (*end && strcmp(end, "s") != 0) || x < 1 || x > 3600)
			return fail(err, cap,
				    "--timeout wants seconds from 1 to 3600, not \"%.40s\"", v);
		a->timeout_s = (long)x;
		break;
	case F_HELP:
		a->help = true;
		break;
	case F_VERSION:
		a->version = true;
		break;
	case F_NONE:
		break;
	}
	return 0;
}

int eo_plugin_parse_args(int argc, char *const *argv, struct eo_plugin_args *a, char *err,
			 size_t errcap)
{
	const char *pos[MAX_POSITIONAL];
	size_t npos = 0, i, k, used;
	bool flags_done = false;
	int ai;

	memset(a, 0, sizeof(*a));
	err[0] = '\0';
	for (ai = 1; ai < argc; ai++) {
		const char *s = argv[ai], *val = NULL, *eq;
		enum flag f = F_NONE;
		bool wants = false;
		char shown[64];

		if (flags_done || s[0] != '-' || s[1] == '\0') {
			if (npos == MAX_POSITIONAL)
				return fail(err, errcap, "too many arguments (at \"%.40s\")", s);
			pos[npos++] = s;
			continue;
		}
		if (strcmp(s, "--") == 0) {
			flags_done = true;
			continue;
		}
		if (s[1] == '-') {
			size_t nl;

			eq = strchr(s + 2, '=');
			nl = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);
			for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				if (strlen(flags[k].lng) == nl &&
				    strncmp(flags[k].lng, s + 2, nl) == 0)
					break;
			if (k == sizeof(flags) / sizeof(flags[0]))
				return fail(err, errcap, "unknown flag \"%.60s\" (see --help)", s);
			f = flags[k].f;
			wants = flags[k].value;
			snprintf(shown, sizeof(shown), "--%s", flags[k].lng);
			if (eq) {
				if (!wants)
					return fail(err, errcap, "%s takes no value", shown);
				val = eq + 1;
			}
		} else {
			for (k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				if (flags[k].shrt && flags[k].shrt == s[1])
					break;
			if (k == sizeof(flags) / sizeof(flags[0]))
				return fail(err, errcap, "unknown flag \"%.60s\" (see --help)", s);
			f = flags[k].f;
			wants = flags[k].value;
			snprintf(shown, sizeof(shown), "-%c", s[1]);
			if (s[2]) {
				if (!wants)
					return fail(err, errcap,
						    "unknown flag \"%.60s\" (see --help)", s);
				val = s[2] == '=' ? s + 3 : s + 2;
			}
		}
		if (wants && !val) {
			if (ai + 1 >= argc)
				return fail(err, errcap, "%s needs a value", shown);
			val = argv[++ai];
		}
		if (set_flag(a, f, shown, val ? val : "", err, errcap) != 0)
			return -1;
	}

	/* The command: one word, or two for alarm. */
	used = 0;
	if (npos > 0) {
		for (k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
			if (strcmp(cmds[k].word, pos[0]) != 0)
				continue;
			if (!cmds[k].word2) {
				a->cmd = cmds[k].cmd;
				used = 1;
				break;
			}
			if (npos > 1 && strcmp(cmds[k].word2, pos[1]) == 0) {
				a->cmd = cmds[k].cmd;
				used = 2;
				break;
			}
		}
		if (a->cmd == EO_PCMD_NONE) {
			if (strcmp(pos[0], "alarm") == 0 && !a->help)
				return fail(err, errcap, "%s needs a subcommand: list or disarm",
					    "alarm");
			if (strcmp(pos[0], "help") == 0) {
				a->help = true;
				return 0;
			}
			if (strcmp(pos[0], "alarm") != 0)
				return fail(err, errcap, "unknown command \"%.60s\" (see --help)",
					    pos[0]);
		}
	}
	if (a->help || a->version)
		return 0;
	if (a->cmd == EO_PCMD_NONE)
		return fail(err, errcap, "%s", "no command given (see --help)");
	if (a->cmd == EO_PCMD_VERSION) {
		if (npos > used)
			return fail(err, errcap, "version takes no argument (\"%.60s\")",
				    pos[used]);
		return 0;
	}
	if (!a->cluster) {
		if (npos <= used)
			return fail(err, errcap, "%s: which cluster? give its name (see --help)",
				    eo_plugin_cmd_name(a->cmd));
		if (!valid_name(pos[used], NAME_MAX_LEN))
			return fail(err, errcap, "invalid cluster name \"%.80s\"", pos[used]);
		a->cluster = pos[used++];
	}
	/* The command's own arguments. */
	i = used;
	switch (a->cmd) {
	case EO_PCMD_SNAPSHOT:
		if (i >= npos)
			return fail(err, errcap, "%s",
				    "snapshot needs the path of the file to write");
		a->path = pos[i++];
		if (!a->path[0])
			return fail(err, errcap, "%s", "snapshot needs a non-empty path");
		break;
	case EO_PCMD_REPORT:
		if (i < npos) {
			a->path = pos[i++];
			if (!a->path[0])
				return fail(err, errcap, "%s", "report needs a non-empty path");
		}
		break;
	case EO_PCMD_REMOVE_MEMBER:
		if (i >= npos)
			return fail(err, errcap, "%s",
				    "remove-member needs the name of the member to remove");
		if (!valid_name(pos[i], NAME_MAX_LEN))
			return fail(err, errcap, "invalid member name \"%.80s\"", pos[i]);
		a->remove_name = pos[i++];
		break;
	case EO_PCMD_COMPACT:
		if (i < npos) {
			char *end = NULL;
			long long r;

			errno = 0;
			r = strtoll(pos[i], &end, 10);
			if (errno || end == pos[i] || *end || r < 1)
				return fail(err, errcap,
					    "compact wants a positive revision, not \"%.40s\"",
					    pos[i]);
			a->revision = r;
			i++;
		}
		break;
	default:
		break;
	}
	if (i < npos)
		return fail(err, errcap, "unexpected argument \"%.60s\"", pos[i]);
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
