/*
 * etcd-operator - the controller manager.
 *
 * main() owns process-wide concerns: flags, logging, signals, the metrics and health servers.
 * run_manager() owns the controllers: the Kubernetes client, informers, leader election and
 * reconcile workers plug in there.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "agent/cli.h"
#include "controller/config.h"
#include "controller/manager.h"
#include "core/version.h"
#include "obs/http.h"
#include "obs/log.h"
#include "obs/metrics.h"
#include "obs/ready.h"

struct manager {
	const struct eo_config *cfg;	/* borrowed */
	struct eo_operator_metrics *om; /* borrowed */
	struct eo_ready *ready;		/* borrowed; /readyz reports it */
	int stop_fd;			/* signalfd: readable once shutdown is requested */
	sigset_t stop_signals;
};

/*
 * Waits for a shutdown signal. Returns the signal number, or -1 if the descriptor failed.
 * After the first signal the default disposition is restored, so a second SIGTERM/SIGINT ends a
 * stuck shutdown at once.
 */
static int wait_for_stop(struct manager *m)
{
	struct signalfd_siginfo si;
	struct pollfd pfd = {.fd = m->stop_fd, .events = POLLIN};
	ssize_t n;

	for (;;) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		n = read(m->stop_fd, &si, sizeof(si));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n != (ssize_t)sizeof(si))
			return -1;
		pthread_sigmask(SIG_UNBLOCK, &m->stop_signals, NULL);
		return (int)si.ssi_signo;
	}
}

/*
 * run_manager - the controllers (controller/manager.h):
 *   1. the Kubernetes client from cfg->kubeconfig (or the in-cluster service account);
 *   2. informers for EtcdCluster, EtcdMember and the owned Pods, PVCs and Services (the owned
 *      kinds filtered by app.kubernetes.io/managed-by=etcd-operator), per watched namespace;
 *   3. once every cache has synced, /readyz turns ready - readiness is about the caches, not
 *      leadership, so a standby replica becomes ready too and rollouts complete;
 *   4. with cfg->leader_elect, the Lease cfg->leader_election_id; only the leader runs workers,
 *      and losing the Lease ends the process (exit 1) so no two replicas act;
 *   5. cfg->workers reconcile workers per controller;
 *   6. on stop_fd: not ready, queues shut, workers joined, Lease released, informers stopped.
 * Returns 0 after a clean shutdown, 1 on a fatal error.
 */
static int run_manager(struct manager *m)
{
	struct eo_log_ctx lc;
	eo_manager *mgr = NULL;
	int sig, rc = 1;

	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "manager");
	eo_ready_set(m->ready, false, "informer caches not synced yet");
	mgr = eo_manager_new(m->cfg, m->om, m->ready);
	if (mgr == NULL)
		return 1;
	if (eo_manager_start(mgr, 120000) != 0)
		goto out;

	sig = wait_for_stop(m);
	if (sig < 0) {
		eo_logf(EO_LOG_ERROR, &lc, "waiting for signals failed: %s", strerror(errno));
		goto out;
	}
	eo_ready_set(m->ready, false, "shutting down");
	eo_log_kv(EO_LOG_INFO, &lc, "shutdown requested", "signal",
		  sig == SIGTERM  ? "SIGTERM"
		  : sig == SIGINT ? "SIGINT"
				  : "other",
		  NULL);
	rc = 0;
out:
	eo_ready_set(m->ready, false, "shutting down");
	eo_manager_stop(mgr);
	eo_manager_free(mgr);
	return rc;
}

static void join_namespaces(const struct eo_config *cfg, char *buf, size_t cap)
{
	size_t i, len = 0;
	int n;

	buf[0] = '\0';
	if (cfg->nwatch_namespaces == 0) {
		snprintf(buf, cap, "*");
		return;
	}
	for (i = 0; i < cfg->nwatch_namespaces && len < cap; i++) {
		n = snprintf(buf + len, cap - len, "%s%s", i ? "," : "", cfg->watch_namespaces[i]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

static const char *domain_source(enum eo_domain_source s)
{
	switch (s) {
	case EO_DOMAIN_FROM_FLAG:
		return "flag";
	case EO_DOMAIN_FROM_RESOLV_CONF:
		return "resolv.conf";
	case EO_DOMAIN_DEFAULT:
		return "default";
	}
	return "unknown";
}

int main(int argc, char **argv)
{
	static struct eo_config cfg;
	struct eo_flags_env env = {.getenv = eo_flags_process_env};
	struct eo_operator_metrics om;
	struct eo_metrics *reg = NULL;
	struct eo_http *http = NULL;
	struct eo_ready ready;
	struct manager m = {.stop_fd = -1};
	struct eo_http_config hc;
	char err[512], nsbuf[1024], mport[16], hport[16], podui[24];
	int rc = 1;

	/* The agent subcommands (snapshot Jobs, restore init containers) run instead. */
	rc = eo_agent_main(argc, argv);
	if (rc >= 0)
		return rc;
	rc = 1;

	/* Two glibc malloc arenas instead of eight per core: the informer and worker threads
	 * decode short-lived JSON trees, and each extra arena keeps its own partly used pages
	 * resident (see docs/benchmarks.md). MALLOC_ARENA_MAX in the environment still wins. */
	if (getenv("MALLOC_ARENA_MAX") == NULL)
		mallopt(M_ARENA_MAX, 2);

	switch (eo_flags_parse(argc, argv, &env, &cfg, err, sizeof(err))) {
	case EO_FLAGS_RUN:
		break;
	case EO_FLAGS_HELP:
		eo_flags_usage(stdout, "etcd-operator");
		return 0;
	case EO_FLAGS_VERSION:
		printf("etcd-operator %s\n", EO_VERSION);
		return 0;
	case EO_FLAGS_ERROR:
		fprintf(stderr, "etcd-operator: %s\nRun 'etcd-operator --help' for usage.\n", err);
		return 2;
	}
	eo_log_set_level(cfg.log_level);
	eo_ready_init(&ready, "starting");

	/*
	 * Block the stop signals before any thread exists, so every thread inherits the mask and
	 * only the signalfd sees them. SIGPIPE from a closed peer must never kill the process.
	 */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&m.stop_signals);
	sigaddset(&m.stop_signals, SIGTERM);
	sigaddset(&m.stop_signals, SIGINT);
	if (pthread_sigmask(SIG_BLOCK, &m.stop_signals, NULL) != 0) {
		eo_log_kv(EO_LOG_ERROR, NULL, "blocking signals failed", NULL);
		goto out;
	}
	m.stop_fd = signalfd(-1, &m.stop_signals, SFD_CLOEXEC);
	if (m.stop_fd < 0) {
		eo_logf(EO_LOG_ERROR, NULL, "signalfd failed: %s", strerror(errno));
		goto out;
	}

	reg = eo_metrics_new();
	if (!reg || eo_operator_metrics_init(&om, reg, EO_VERSION) != 0) {
		eo_log_kv(EO_LOG_ERROR, NULL, "metrics registry setup failed", NULL);
		goto out;
	}
	hc = (struct eo_http_config){
	    .metrics_addr = cfg.metrics_bind_address,
	    .health_addr = cfg.health_probe_bind_address,
	    .metrics = reg,
	    .ready = eo_ready_check,
	    .ready_ud = &ready,
	};
	if (eo_http_start(&hc, &http, err, sizeof(err)) != 0) {
		eo_log_kv(EO_LOG_ERROR, NULL, "starting HTTP servers failed", "error", err, NULL);
		goto out;
	}

	join_namespaces(&cfg, nsbuf, sizeof(nsbuf));
	snprintf(mport, sizeof(mport), "%d", eo_http_metrics_port(http));
	snprintf(hport, sizeof(hport), "%d", eo_http_health_port(http));
	if (cfg.pod_run_as_user == EO_CFG_POD_UID_AUTO)
		snprintf(podui, sizeof(podui), "auto");
	else
		snprintf(podui, sizeof(podui), "%ld", cfg.pod_run_as_user);
	eo_log_kv(EO_LOG_INFO, NULL, "starting etcd-operator", "version", EO_VERSION,
		  "metrics_bind_address", cfg.metrics_bind_address, "metrics_port", mport,
		  "health_probe_bind_address", cfg.health_probe_bind_address, "health_port", hport,
		  "leader_elect", cfg.leader_elect ? "true" : "false", "leader_election_id",
		  cfg.leader_election_id, "cluster_domain", cfg.cluster_domain,
		  "cluster_domain_source", domain_source(cfg.cluster_domain_source),
		  "watch_namespaces", nsbuf, "operator_image", cfg.operator_image,
		  "etcd_image_repository", cfg.etcd_image_repository, "pod_run_as_user", podui,
		  "kubeconfig", cfg.kubeconfig[0] ? cfg.kubeconfig : "in-cluster", NULL);

	m.cfg = &cfg;
	m.om = &om;
	m.ready = &ready;
	rc = run_manager(&m);
out:
	eo_http_stop(http);
	eo_metrics_free(reg);
	eo_ready_destroy(&ready);
	if (m.stop_fd >= 0)
		close(m.stop_fd);
	eo_log_kv(rc == 0 ? EO_LOG_INFO : EO_LOG_ERROR, NULL, "etcd-operator stopped", "exit_code",
		  rc == 0 ? "0" : "1", NULL);
	return rc;
}
