/* `etcd-operator restore-rebuild` (agent/cli.h): rebuild the data dir with etcdutl. */
#include "agent/internal.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "api/restorefail.h"
#include "snapshot/store.h"

extern char **environ;

int eo__agent_rebuild(const struct eo__agent_opts *o)
{
	struct eo_log_ctx lc;
	char src[PATH_MAX], rebuild[PATH_MAX], from[PATH_MAX], to[PATH_MAX], err[1024];
	char *args[16];
	struct stat st;
	pid_t pid;
	int status, n = 0, e;

	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "restore-rebuild");
	if (!o->data_dir || !o->staging_dir || !o->member_name || !o->initial_cluster ||
	    !o->cluster_token || !o->peer_url) {
		fputs(eo__agent_usage_rebuild, stderr);
		return eo__agent_restore_fail(
		    o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
		    "--data-dir, --staging-dir, --name, --initial-cluster, "
		    "--initial-cluster-token and --initial-advertise-peer-urls are required");
	}
	if (o->member_id && o->member_id[0])
		return eo__agent_refuse_joined(o, &lc);
	if (eo__agent_data_dir_initialised(o->data_dir)) {
		eo_log_kv(EO_LOG_INFO, &lc, "the data dir is already initialised; nothing to do",
			  "data_dir", o->data_dir, NULL);
		if (!o->file)
			eo__agent_rm_rf(o->staging_dir);
		return 0;
	}
	snprintf(src, sizeof(src), "%s", o->file ? o->file : "");
	if (!o->file)
		snprintf(src, sizeof(src), "%s/%s", o->staging_dir, STAGED_NAME);
	if (stat(src, &st) != 0) {
		eo_errf(err, sizeof(err), "%s: %s (the restore step should have staged it)", src,
			strerror(errno));
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "no snapshot to restore", err);
	}
	if (eo__agent_mkdir_p(o->staging_dir, err, sizeof(err)) != 0)
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot create the staging directory", err);
	snprintf(rebuild, sizeof(rebuild), "%s/%s", o->staging_dir, REBUILD_NAME);
	if (eo__agent_rm_rf(rebuild) != 0) {
		eo_errf(err, sizeof(err), "remove %s: %s", rebuild, strerror(errno));
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot clear an earlier attempt", err);
	}
	args[n++] = (char *)o->etcdutl;
	args[n++] = "snapshot";
	args[n++] = "restore";
	args[n++] = src;
	args[n++] = "--data-dir";
	args[n++] = rebuild;
	args[n++] = "--name";
	args[n++] = (char *)o->member_name;
	args[n++] = "--initial-cluster";
	args[n++] = (char *)o->initial_cluster;
	args[n++] = "--initial-cluster-token";
	args[n++] = (char *)o->cluster_token;
	args[n++] = "--initial-advertise-peer-urls";
	args[n++] = (char *)o->peer_url;
	args[n] = NULL;
	eo_log_kv(EO_LOG_INFO, &lc, "rebuilding the data dir", "etcdutl", o->etcdutl, "snapshot",
		  src, "name", o->member_name, NULL);
	fflush(NULL);
	e = posix_spawnp(&pid, o->etcdutl, NULL, NULL, args, environ);
	if (e != 0) {
		snprintf(err, sizeof(err), "%s: %s", o->etcdutl, strerror(e));
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot run etcdutl", err);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
						      "waiting for etcdutl failed",
						      strerror(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, sizeof(err), "etcdutl snapshot restore exited with %s %d",
			 WIFEXITED(status) ? "status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		eo__agent_rm_rf(rebuild);
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_REBUILD_FAILED,
					      "rebuilding the data dir failed", err);
	}
	eo_errf(from, sizeof(from), "%s/member", rebuild);
	snprintf(to, sizeof(to), "%s/member", o->data_dir);
	if (eo__agent_mkdir_p(o->data_dir, err, sizeof(err)) != 0)
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot create the data dir", err);
	if (eo_fsync_dir(from) != 0 || rename(from, to) != 0 || eo_fsync_dir(o->data_dir) != 0) {
		eo_errf(err, sizeof(err), "move %s to %s: %s", from, to, strerror(errno));
		return eo__agent_restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					      "cannot put the rebuilt data dir in place", err);
	}
	eo__agent_rm_rf(rebuild);
	if (!o->file)
		eo__agent_rm_rf(o->staging_dir);
	else
		rmdir(o->staging_dir); /* only when empty: nothing else of ours is there */
	eo_log_kv(EO_LOG_INFO, &lc, "data dir rebuilt from the snapshot", "data_dir", o->data_dir,
		  NULL);
	return 0;
}
