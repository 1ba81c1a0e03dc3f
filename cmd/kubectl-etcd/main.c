/*
 * kubectl-etcd - the kubectl plugin for clusters managed by etcd-operator
 * (docs/kubectl-etcd.md). kubectl runs it as `kubectl etcd ...` when it is on PATH.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "core/version.h"
#include "plugin/args.h"
#include "plugin/complete.h"
#include "plugin/migrate_run.h"
#include "plugin/run.h"

/* stdout could not take the output (a full disk, a closed pipe): say so, exit 6. */
static int flushed(int rc)
{
	if ((fflush(stdout) != 0 || ferror(stdout)) && rc == EO_PEXIT_OK) {
		fprintf(stderr, "error: writing the output: %s\n", strerror(errno));
		return EO_PEXIT_LOCAL;
	}
	return rc; /* a failed command said why already */
}

/* kubectl-etcd __complete ARGS... WORD (plugin/complete.h). */
static int complete(int n, char **words)
{
	struct eo_plugin_completion c;
	const char *word = n > 0 ? words[n - 1] : "";

	eo_plugin_complete((const char *const *)words, (size_t)n, &c);
	for (size_t i = 0; i < c.n; i++)
		printf("%s\n", c.cand[i]);
	if (c.clusters && curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK) {
		eo_plugin_complete_clusters(&c, word, stdout);
		curl_global_cleanup();
	}
	printf(":%d\n", c.directive);
	return flushed(EO_PEXIT_OK);
}

int main(int argc, char **argv)
{
	struct eo_plugin_args a;
	const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	char err[512];
	int rc;

	/* kubectl (1.26+) completes `kubectl etcd ...` by running kubectl_complete-etcd. */
	if (strcmp(self, "kubectl_complete-etcd") == 0)
		return complete(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "__complete") == 0)
		return complete(argc - 2, argv + 2);
	if (argc > 1 && strcmp(argv[1], "completion") == 0) {
		const char *script = eo_plugin_completion_script(argc == 3 ? argv[2] : NULL);

		if (!script) {
			fprintf(stderr, "error: completion wants one shell: bash or zsh\n");
			return EO_PEXIT_USAGE;
		}
		fputs(script, stdout);
		return flushed(EO_PEXIT_OK);
	}

	if (argc > 1 && strcmp(argv[1], "migrate") == 0) {
		/* Its own command line (plugin/migrate_run.h): the cluster is a legacy one. */
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			fprintf(stderr, "error: libcurl initialisation failed\n");
			return EO_PEXIT_FAILED;
		}
		rc = eo_plugin_migrate_main(argc - 1, argv + 1, stdout, stderr);
		fflush(stdout);
		curl_global_cleanup();
		return rc;
	}
	if (eo_plugin_parse_args(argc, argv, &a, err, sizeof(err)) != 0) {
		fprintf(stderr, "error: %s\n", err);
		return EO_PEXIT_USAGE;
	}
	if (a.version || a.cmd == EO_PCMD_VERSION) {
		printf("kubectl-etcd %s\n", EO_VERSION);
		return flushed(EO_PEXIT_OK);
	}
	if (a.help) {
		fputs(eo_plugin_help(a.cmd), stdout);
		return flushed(EO_PEXIT_OK);
	}
	/* A closed connection (OpenSSL writes with write(2) on the tunnel's apiserver
	 * connection) or a closed stdout is an error to report, not a signal to die of. */
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "error: libcurl initialisation failed\n");
		return EO_PEXIT_FAILED;
	}
	rc = flushed(eo_plugin_run(&a, stdout, stderr));
	curl_global_cleanup();
	return rc;
}
