/*
 * `etcd-operator snapshot-prune` (agent/cli.h): delete what one scheduled snapshot stored, with
 * the store half in snapshot/prune.h.
 */
#include "agent/internal.h"

#include <stdio.h>
#include <string.h>

#include "api/snapshot.h"
#include "snapshot/prune.h"
#include "snapshot/store.h"

int eo__agent_prune(const struct eo__agent_opts *o)
{
	struct eo_log_ctx lc;
	char msg[2048], err[1024], key[1400];
	eo_s3 *s3 = NULL;
	int rc;

	if (!o->name || !o->name[0] || strchr(o->name, '/') || strlen(o->name) > 200 || !o->uid ||
	    !o->uid[0] || strlen(o->uid) >= EO_S3_UID_MAX) {
		fprintf(stderr,
			"etcd-operator: --snapshot-name and --snapshot-uid are required\n%s",
			eo__agent_usage_prune);
		return 2;
	}
	if (!!o->pvc_dir == !!(o->s3_endpoint || o->s3_bucket) ||
	    (o->s3_bucket && !o->s3_endpoint) || (o->s3_endpoint && !o->s3_bucket)) {
		fprintf(stderr, "etcd-operator: exactly one destination: --s3-endpoint and "
				"--s3-bucket, or --pvc-dir\n");
		return 2;
	}
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "snapshot-prune");
	eo_log_ctx_add(&lc, "snapshot", o->name);
	msg[0] = '\0';
	if (o->pvc_dir) {
		rc = eo_prune_file(o->pvc_dir, o->name, o->uid, msg, sizeof(msg));
	} else if (eo_snapshot_s3_key(key, sizeof(key), o->s3_key ? o->s3_key : "", o->name) != 0) {
		eo_errf(msg, sizeof(msg), "S3 key too long");
		rc = -1;
	} else if (eo__agent_make_s3(o, &s3, err, sizeof(err)) != 0) {
		eo_errf(msg, sizeof(msg), "S3 setup: %s", err);
		rc = -1;
	} else {
		rc = eo_prune_s3(s3, key, o->uid, msg, sizeof(msg));
	}
	eo_s3_free(s3);
	eo__agent_termination_log(o, msg, &lc);
	if (rc != 0)
		return eo__agent_fail(&lc, "prune failed", msg);
	eo_log_kv(EO_LOG_INFO, &lc, "prune done", "result", msg, NULL);
	printf("%s\n", msg);
	fflush(stdout);
	return 0;
}
