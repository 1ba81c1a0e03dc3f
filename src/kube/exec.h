/*
 * kube/exec.h - kubeconfig exec credential plugins (client.authentication.k8s.io/v1 and
 * v1beta1), as kubectl runs them. Internal to src/kube: config.c parses the user's exec
 * section into a struct eo__kube_exec and calls eo__kube_exec_run() when it needs credentials.
 *
 * The protocol (https://kubernetes.io/docs/reference/access-authn-authz/authentication/
 * #client-go-credential-plugins): the command runs with its args, the caller's environment
 * plus the section's env entries, and KUBERNETES_EXEC_INFO holding an ExecCredential
 * {apiVersion, kind, spec: {interactive, cluster (provideClusterInfo only)}}. Its stdin is the
 * terminal when it runs interactively, /dev/null otherwise; its stderr is ours (prompts, hints).
 * It prints an ExecCredential of the same apiVersion whose status carries a token and/or a
 * client certificate and key (PEM) and an optional expirationTimestamp.
 *
 * No message made here carries a token, a key or the plugin's output.
 */
#ifndef EO_KUBE_EXEC_H
#define EO_KUBE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kube/err.h"

/* Caps: the plugin's stdout, and how long it may run. */
#define EO_KUBE_EXEC_OUT_MAX	(1u << 20)
#define EO_KUBE_EXEC_TIMEOUT_MS (5 * 60 * 1000)

enum eo__kube_exec_mode {
	EO_KUBE_EXEC_IF_AVAILABLE = 0, /* interactiveMode: IfAvailable (the default) */
	EO_KUBE_EXEC_NEVER,	       /* Never */
	EO_KUBE_EXEC_ALWAYS,	       /* Always */
};

/* A user's exec section; every string owned (freed by eo__kube_exec_free). */
struct eo__kube_exec {
	char *user;	   /* the kubeconfig user's name, for messages */
	char *api_version; /* client.authentication.k8s.io/v1 or /v1beta1 */
	char **argv;	   /* command (resolved) then args, NULL-terminated */
	char **env;	   /* "NAME=value" entries, NULL-terminated */
	char *install_hint;
	enum eo__kube_exec_mode mode;
	bool provide_cluster_info;
};

/* What a run returned; token and key are secrets (eo__kube_exec_cred_clear wipes them). */
struct eo__kube_exec_cred {
	char *token;
	unsigned char *cert, *key;
	size_t cert_len, key_len;
	time_t expiry; /* 0: none given */
};

/* The cluster, for provideClusterInfo. */
struct eo__kube_exec_cluster {
	const char *server;
	const unsigned char *ca;
	size_t ca_len;
	bool insecure;
};

void eo__kube_exec_free(struct eo__kube_exec *x);
void eo__kube_exec_cred_clear(struct eo__kube_exec_cred *c);

/* True for the two apiVersions we speak. */
bool eo__kube_exec_version_ok(const char *api_version);

/*
 * The KUBERNETES_EXEC_INFO value: a new string the caller frees, or NULL on ENOMEM.
 * cluster is used only when x->provide_cluster_info.
 */
char *eo__kube_exec_info(const struct eo__kube_exec *x, bool interactive,
			 const struct eo__kube_exec_cluster *cluster);

/*
 * Parses a plugin's stdout into *cred (cleared first; freed by the caller with
 * eo__kube_exec_cred_clear). Checks apiVersion and kind against x, and that the status has a
 * token or a certificate with its key.
 */
eo_kube_err eo__kube_exec_parse(const struct eo__kube_exec *x, const char *out, size_t len,
				struct eo__kube_exec_cred *cred, struct eo_kube_error *err);

/* Runs the plugin once: decides interactive, builds the environment, launches, parses. */
eo_kube_err eo__kube_exec_run(const struct eo__kube_exec *x,
			      const struct eo__kube_exec_cluster *cluster,
			      struct eo__kube_exec_cred *cred, struct eo_kube_error *err);

/*
 * The one place a process is started (src/kube/exec_launch.c; the fuzz target wraps it).
 * argv[0] is looked up in PATH when it has no '/'; envp is the whole environment. stdin is
 * inherited when interactive, /dev/null otherwise; stderr is inherited. stdout is collected
 * into *out (NUL-terminated, at most max bytes; the caller wipes and frees it). Waits for the
 * exit at most timeout_ms; *exit_code is the exit status, or 128 + signal. A command that
 * cannot be started, a timeout or an overflow is an error (the child is killed).
 */
eo_kube_err eo__kube_exec_launch(char *const argv[], char *const envp[], bool interactive,
				 size_t max, long timeout_ms, char **out, size_t *len,
				 int *exit_code, struct eo_kube_error *err);

#endif
