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

int main(int argc, char **argv)
{
	struct eo_plugin_args a;
	char err[512];
	int rc;

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
