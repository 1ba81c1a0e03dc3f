/*
 * plugin/complete.h - shell completion for kubectl-etcd (pure: no I/O).
 *
 *   kubectl etcd completion bash|zsh   prints a script that completes `kubectl-etcd ...`
 *   kubectl-etcd __complete ARGS... WORD
 *
 * __complete follows cobra's protocol, which kubectl (1.26 and later) speaks to a plugin's
 * completion helper `kubectl_complete-etcd` (kubectl-etcd answers as that helper when it is
 * called by that name, e.g. through a symlink): one candidate per line, then ":<directive>"
 * (4: no file completion, 0: the shell's default, file names).
 */
#ifndef EO_PLUGIN_COMPLETE_H
#define EO_PLUGIN_COMPLETE_H

#include <stdbool.h>
#include <stddef.h>

#define EO_PLUGIN_COMPLETE_MAX	    64
#define EO_PLUGIN_DIRECTIVE_DEFAULT 0
#define EO_PLUGIN_DIRECTIVE_NOFILE  4

/* What the word being completed is. */
struct eo_plugin_completion {
	const char *cand[EO_PLUGIN_COMPLETE_MAX]; /* static candidates matching the word */
	size_t n;
	bool clusters;	/* the word is a cluster name: list the EtcdClusters too */
	int directive;	/* EO_PLUGIN_DIRECTIVE_* */
	const char *ns; /* -n/--namespace given before the word, or NULL (borrowed) */
	const char *kubeconfig, *context; /* likewise */
};

/*
 * words[0..n-1] are the arguments after the command name, the last being the word to complete
 * (possibly ""). Fills *c.
 */
void eo_plugin_complete(const char *const *words, size_t n, struct eo_plugin_completion *c);

/* The completion script of a shell ("bash" or "zsh"), or NULL. Static. */
const char *eo_plugin_completion_script(const char *shell);

#endif
