/* Shell completion for kubectl-etcd (plugin/complete.h). */
#include "plugin/complete.h"

#include <string.h>

/* First words of the commands, in the help's order. */
static const char *const commands[] = {
    "members",	"status",     "defrag",	       "compact", "alarm",   "forfeit-leadership",
    "snapshot", "add-member", "remove-member", "report",  "version", "completion",
};
static const char *const alarm_sub[] = {"list", "disarm"};
static const char *const shells[] = {"bash", "zsh"};
static const char *const formats[] = {"table", "json", "yaml"};
static const char *const flag_names[] = {
    "--namespace", "--cluster", "--output",  "--kubeconfig", "--context",
    "--member",	   "--to",	"--timeout", "--help",	     "--version",
};
/* Flags that take the next word as their value. */
static const char *const valued[] = {"-n",	 "--namespace", "-c",		"--cluster",
				     "-o",	 "--output",	"--kubeconfig", "--context",
				     "--member", "--to",	"--timeout"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool in(const char *const *set, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set[i], s) == 0)
			return true;
	return false;
}

static void offer(struct eo_plugin_completion *c, const char *const *set, size_t n,
		  const char *word)
{
	for (size_t i = 0; i < n && c->n < EO_PLUGIN_COMPLETE_MAX; i++)
		if (strncmp(set[i], word, strlen(word)) == 0)
			c->cand[c->n++] = set[i];
}

void eo_plugin_complete(const char *const *words, size_t n, struct eo_plugin_completion *c)
{
	const char *pos[8], *word = n ? words[n - 1] : "", *prev = n > 1 ? words[n - 2] : "";
	size_t npos = 0, need;
	bool has_cluster_flag = false;

	memset(c, 0, sizeof(*c));
	c->directive = EO_PLUGIN_DIRECTIVE_NOFILE;
	/* The words before the one being completed: positionals and the flags that matter. */
	for (size_t i = 0; i + 1 < n; i++) {
		const char *w = words[i];

		if (in(valued, N(valued), w) && i + 2 < n) {
			const char *v = words[++i];

			if (strcmp(w, "-n") == 0 || strcmp(w, "--namespace") == 0)
				c->ns = v;
			else if (strcmp(w, "--kubeconfig") == 0)
				c->kubeconfig = v;
			else if (strcmp(w, "--context") == 0)
				c->context = v;
			else if (strcmp(w, "-c") == 0 || strcmp(w, "--cluster") == 0)
				has_cluster_flag = true;
		} else if (strncmp(w, "--namespace=", 12) == 0) {
			c->ns = w + 12;
		} else if (strncmp(w, "--kubeconfig=", 13) == 0) {
			c->kubeconfig = w + 13;
		} else if (strncmp(w, "--context=", 10) == 0) {
			c->context = w + 10;
		} else if (strncmp(w, "--cluster=", 10) == 0) {
			has_cluster_flag = true;
		} else if (w[0] != '-' && npos < N(pos)) {
			pos[npos++] = w;
		}
	}
	if (strcmp(prev, "-o") == 0 || strcmp(prev, "--output") == 0) {
		offer(c, formats, N(formats), word);
		return;
	}
	if (strcmp(prev, "-c") == 0 || strcmp(prev, "--cluster") == 0) {
		c->clusters = true;
		return;
	}
	if (in(valued, N(valued), prev)) {
		/* A namespace, a member, a timeout: nothing to offer; a kubeconfig: files. */
		if (strcmp(prev, "--kubeconfig") == 0)
			c->directive = EO_PLUGIN_DIRECTIVE_DEFAULT;
		return;
	}
	if (word[0] == '-') {
		offer(c, flag_names, N(flag_names), word);
		return;
	}
	if (npos == 0) {
		offer(c, commands, N(commands), word);
		return;
	}
	if (strcmp(pos[0], "completion") == 0) {
		if (npos == 1)
			offer(c, shells, N(shells), word);
		return;
	}
	if (strcmp(pos[0], "alarm") == 0 && npos == 1) {
		offer(c, alarm_sub, N(alarm_sub), word);
		return;
	}
	if (strcmp(pos[0], "version") == 0)
		return;
	need = strcmp(pos[0], "alarm") == 0 ? 2 : 1; /* words of the command */
	if (npos == need && !has_cluster_flag) {
		c->clusters = true;
		return;
	}
	if (strcmp(pos[0], "snapshot") == 0 && npos == need + (has_cluster_flag ? 0 : 1))
		c->directive = EO_PLUGIN_DIRECTIVE_DEFAULT; /* the local file */
}

static const char bash_script[] =
    "# bash completion for kubectl-etcd: source <(kubectl etcd completion bash)\n"
    "# (`kubectl etcd ...` completes through kubectl itself and kubectl_complete-etcd,\n"
    "# see docs/kubectl-etcd.md)\n"
    "_kubectl_etcd() {\n"
    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} out directive\n"
    "\tout=$(kubectl-etcd __complete \"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null) || return\n"
    "\tdirective=${out##*:}\n"
    "\tout=${out%:*}\n"
    "\tCOMPREPLY=($(compgen -W \"$out\" -- \"$cur\"))\n"
    "\tif [ ${#COMPREPLY[@]} -eq 0 ] && [ \"$directive\" = 0 ]; then\n"
    "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "\tfi\n"
    "}\n"
    "complete -F _kubectl_etcd kubectl-etcd\n";

static const char zsh_script[] =
    "#compdef kubectl-etcd\n"
    "# zsh completion for kubectl-etcd: source <(kubectl etcd completion zsh)\n"
    "# (`kubectl etcd ...` completes through kubectl itself and kubectl_complete-etcd,\n"
    "# see docs/kubectl-etcd.md)\n"
    "_kubectl_etcd() {\n"
    "\tlocal -a out\n"
    "\tout=(\"${(@f)$(kubectl-etcd __complete \"${(@)words[2,CURRENT]}\" 2>/dev/null)}\")\n"
    "\tlocal directive=${out[-1]#:}\n"
    "\tout=(\"${(@)out[1,-2]}\")\n"
    "\tif (( ${#out} )); then\n"
    "\t\tcompadd -- \"${out[@]}\"\n"
    "\telif [[ $directive == 0 ]]; then\n"
    "\t\t_files\n"
    "\tfi\n"
    "}\n"
    "if (( $+functions[compdef] )); then compdef _kubectl_etcd kubectl-etcd; fi\n";

const char *eo_plugin_completion_script(const char *shell)
{
	if (shell && strcmp(shell, "bash") == 0)
		return bash_script;
	if (shell && strcmp(shell, "zsh") == 0)
		return zsh_script;
	return NULL;
}
