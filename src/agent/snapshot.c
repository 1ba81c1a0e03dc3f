/*
 * `etcd-operator snapshot-agent` (agent/cli.h): take a snapshot from a current voter and
 * store it.
 */
#include "agent/internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/snapshot.h"
#include "etcd/client.h"
#include "snapshot/contract.h"
#include "snapshot/store.h"
#include "snapshot/trust.h"

/*
 * Status of one endpoint into *m (m->answered false, err saying why, when it did not answer),
 * with its store revision and database size. With want_token and a password (spec.auth), a
 * voter's token for the snapshot stream lands in token ("" when etcd has no auth on); a
 * refused password counts as no answer.
 */
static void probe_member(const struct eo__agent_opts *o, const char *endpoint, const char *password,
			 bool want_token, struct eo_snap_member *m, int64_t *revision,
			 int64_t *db_size, char *token, size_t tokcap, char *err, size_t errcap)
{
	const char *eps[1] = {endpoint};
	struct eo_etcd_config cfg = {
	    .endpoints = eps,
	    .n_endpoints = 1,
	    .ca_file = o->cacert,
	    .cert_file = o->cert,
	    .key_file = o->key,
	    .password = password != NULL && password[0] != '\0' ? password : NULL,
	};
	struct eo_etcd_detail d = {0};
	struct eo_etcd_status st = {0};
	eo_etcd_client *c = NULL;
	eo_etcd_err e;

	memset(m, 0, sizeof(*m));
	token[0] = '\0';
	e = eo_etcd_client_new(&cfg, &c, &d);
	if (e == EO_ETCD_OK)
		e = eo_etcd_status(c, endpoint, &st, &d);
	if (e == EO_ETCD_OK && want_token && !st.is_learner && cfg.password != NULL &&
	    eo_etcd_client_token(c) == NULL) {
		e = eo_etcd_authenticate(c, endpoint, &d);
		if (e != EO_ETCD_OK && strstr(d.message, "authentication is not enabled") != NULL)
			e = EO_ETCD_OK; /* no auth on: the stream needs no token */
	}
	if (e == EO_ETCD_OK && want_token && eo_etcd_client_token(c) != NULL)
		snprintf(token, tokcap, "%s", eo_etcd_client_token(c));
	if (e != EO_ETCD_OK) {
		snprintf(err, errcap, "%s: %s%s%s", endpoint, eo_etcd_strerror(e),
			 d.message[0] ? ": " : "", d.message);
	} else {
		*m = (struct eo_snap_member){
		    .answered = true,
		    .is_learner = st.is_learner,
		    .cluster_id = st.cluster_id,
		    .member_id = st.member_id,
		    .leader = st.leader,
		    .raft_term = st.raft_term,
		    .raft_index = st.raft_index,
		    .raft_applied_index = st.raft_applied_index,
		};
		*revision = st.revision;
		*db_size = st.db_size;
	}
	eo_etcd_status_clear(&st);
	eo_etcd_client_free(c);
}

/*
 * The leader's answer among the endpoints, read before any candidate is asked again
 * (snapshot/trust.h); false when no endpoint answered as the leader.
 */
static bool find_leader(const struct eo__agent_opts *o, const char *password,
			struct eo_snap_member *leader, const struct eo_log_ctx *lc)
{
	struct eo_snap_member m[MAX_ENDPOINTS];
	char err[1024], tok[8], lid[32], idx[32];
	int64_t rev = 0, size = 0;
	size_t i;
	int l;

	for (i = 0; i < o->nendpoints; i++) {
		probe_member(o, o->endpoints[i], password, false, &m[i], &rev, &size, tok,
			     sizeof(tok), err, sizeof(err));
		if (!m[i].answered)
			eo_log_kv(EO_LOG_WARN, lc, "an endpoint did not answer Status", "endpoint",
				  o->endpoints[i], "error", err, NULL);
	}
	l = eo_snap_find_leader(m, o->nendpoints);
	if (l < 0)
		return false;
	*leader = m[l];
	snprintf(lid, sizeof(lid), "%llx", (unsigned long long)leader->member_id);
	snprintf(idx, sizeof(idx), "%llu", (unsigned long long)leader->raft_index);
	eo_log_kv(EO_LOG_INFO, lc, "the leader answered", "endpoint", o->endpoints[l], "leader",
		  lid, "commit_index", idx, NULL);
	return true;
}

/* Appends "what" to the summary of skipped endpoints sum[cap] ("; " between), cut when full. */
static void note_skip(char *sum, size_t cap, const char *what)
{
	size_t len = strlen(sum), n;

	if (len > 0 && len + 2 < cap) {
		memcpy(sum + len, "; ", 2);
		len += 2;
	}
	if (len + 1 >= cap)
		return;
	n = strnlen(what, cap - len - 1);
	memcpy(sum + len, what, n);
	sum[len + n] = '\0';
}

static int snapshot_agent_run(const struct eo__agent_opts *o, const char *password, char *token,
			      size_t tokcap)
{
	struct eo_log_ctx lc;
	struct eo_store_target t = {0};
	struct eo_store_upload up;
	struct eo_snapfetch_opts fo;
	struct eo_snapfetch_result res;
	eo_s3 *s3 = NULL;
	char err[2048], key[1024], file[300], uri[2048], sizebuf[32], checksum[80];
	char secs[32], rss[32], waited[32], stream[32], commit[32];
	struct timespec t0;
	char why[512], revbuf[32], skipped[2048] = "";
	struct eo_snap_member leader = {0}, cand = {0};
	int64_t db_size = 0, revision = 0;
	uint64_t free_bytes, part, wait_ms = 0, t_stream = 0, stream_ms = 0, commit_ms = 0;
	bool replace, stored = false, have_leader;
	size_t i;
	int rc = 1;
	json_t *j;

	token[0] = '\0';
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "snapshot-agent");
	if (o->name)
		eo_log_ctx_add(&lc, "snapshot", o->name);
	if (!o->name || !o->name[0] || !o->uid || !o->uid[0] || o->nendpoints == 0) {
		fputs(eo__agent_usage_snapshot, stderr);
		return eo__agent_fail(
		    &lc, "invalid arguments",
		    "--snapshot-name, --snapshot-uid and --endpoint are required");
	}
	if (!!o->pvc_dir == !!(o->s3_endpoint || o->s3_bucket))
		return eo__agent_fail(
		    &lc, "invalid arguments",
		    "exactly one destination: --s3-endpoint/--s3-bucket or --pvc-dir");
	if (o->s3_bucket) {
		if (eo__agent_make_s3(o, &s3, err, sizeof(err)) != 0)
			return eo__agent_fail(&lc, "S3 setup failed", err);
		if (eo_snapshot_s3_key(key, sizeof(key), o->s3_key ? o->s3_key : "", o->name) !=
		    0) {
			eo_s3_free(s3);
			return eo__agent_fail(&lc, "invalid arguments", "S3 key too long");
		}
		t.s3 = s3;
		t.key = key;
	} else {
		snprintf(file, sizeof(file), "%s%s", o->name, EO_SNAPSHOT_FILE_SUFFIX);
		t.dir = o->pvc_dir;
		t.name = file;
		/* destination.pvc.subPath need not exist yet on the claim. */
		if (eo__agent_mkdir_p(o->pvc_dir, err, sizeof(err)) != 0)
			return eo__agent_fail(&lc, "cannot create the snapshot directory", err);
	}
	eo_store_uri(&t, uri, sizeof(uri));
	eo_log_ctx_add(&lc, "uri", uri);

	if (eo_store_guard(&t, o->uid, &replace, err, sizeof(err)) != 0) {
		eo__agent_fail(&lc, "refusing to write the snapshot", err);
		goto out;
	}
	if (replace)
		eo_log_kv(EO_LOG_INFO, &lc,
			  "the target holds an earlier attempt of this snapshot; "
			  "replacing it",
			  NULL);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	have_leader = find_leader(o, password, &leader, &lc);
	for (i = 0; i < o->nendpoints && !stored; i++) {
		const char *ep = o->endpoints[i];

		probe_member(o, ep, password, true, &cand, &revision, &db_size, token, tokcap, err,
			     sizeof(err));
		if (!cand.answered) {
			eo_log_kv(EO_LOG_WARN, &lc, "skipping an endpoint", "endpoint", ep, "error",
				  err, NULL);
			note_skip(skipped, sizeof(skipped), err);
			continue;
		}
		if (!eo_snap_member_fresh(&cand, have_leader ? &leader : NULL, why, sizeof(why))) {
			eo_log_kv(EO_LOG_WARN, &lc, "skipping a member that may not be current",
				  "endpoint", ep, "reason", why, NULL);
			snprintf(err, sizeof(err), "%s %s", ep, why);
			note_skip(skipped, sizeof(skipped), err);
			continue;
		}
		if (!s3) {
			if (eo_fs_free_bytes(o->pvc_dir, &free_bytes, err, sizeof(err)) != 0) {
				eo__agent_fail(&lc, "free-space check failed", err);
				goto out;
			}
			if (free_bytes < (uint64_t)db_size + FREE_MARGIN) {
				snprintf(err, sizeof(err),
					 "%s has %llu bytes free; the snapshot needs about %lld: "
					 "give the "
					 "volume more room",
					 o->pvc_dir, (unsigned long long)free_bytes,
					 (long long)db_size);
				eo__agent_fail(&lc, "not enough space for the snapshot", err);
				goto out;
			}
		}
		part = eo_s3_part_size((uint64_t)db_size, o->part_size);
		snprintf(sizebuf, sizeof(sizebuf), "%lld", (long long)db_size);
		snprintf(revbuf, sizeof(revbuf), "%lld", (long long)revision);
		eo_log_kv(EO_LOG_INFO, &lc, "taking the snapshot", "endpoint", ep, "db_size",
			  sizebuf, "revision", revbuf, NULL);
		if (eo_store_open(&up, &t, o->uid, replace, part, o->parallel, err, sizeof(err)) !=
		    0) {
			eo__agent_fail(&lc, "cannot start writing", err);
			goto out;
		}
		fo = (struct eo_snapfetch_opts){
		    .endpoint = ep,
		    .ca_file = o->cacert,
		    .cert_file = o->cert,
		    .key_file = o->key,
		    .auth_token = token[0] != '\0' ? token : NULL,
		    .stall_timeout_s = o->stall_s,
		};
		t_stream = eo__agent_mono_ms();
		if (eo_snapshot_fetch(&fo, eo_store_write, &up, &res, err, sizeof(err)) != 0) {
			eo_store_abort(&up);
			eo_log_kv(EO_LOG_WARN, &lc, "snapshot failed; nothing was stored",
				  "endpoint", ep, "error", err, NULL);
			note_skip(skipped, sizeof(skipped), err);
			continue;
		}
		stream_ms = eo__agent_mono_ms() - t_stream;
		if (eo_store_commit(&up, err, sizeof(err)) != 0) {
			eo_store_abort(&up);
			eo__agent_fail(&lc, "storing the snapshot failed; nothing was stored", err);
			goto out;
		}
		commit_ms = eo__agent_mono_ms() - t_stream - stream_ms;
		wait_ms = up.wait_ms;
		eo_store_abort(&up);
		stored = true;
	}
	if (!stored) {
		eo__agent_fail(&lc, "no current voter delivered a complete snapshot", skipped);
		goto out;
	}
	snprintf(sizebuf, sizeof(sizebuf), "%llu", (unsigned long long)res.size);
	snprintf(checksum, sizeof(checksum), "sha256:%s", res.sha256);
	eo__agent_usage_fields(&t0, secs, sizeof(secs), rss, sizeof(rss));
	/*
	 * stream_ms: the read of the stream (store_wait_ms of it waiting for S3 part uploads:
	 * then S3 was the bottleneck); commit_ms: after it, the last parts and the completion
	 * (S3), or the fsync and rename (directory).
	 */
	snprintf(waited, sizeof(waited), "%llu", (unsigned long long)wait_ms);
	snprintf(stream, sizeof(stream), "%llu", (unsigned long long)stream_ms);
	snprintf(commit, sizeof(commit), "%llu", (unsigned long long)commit_ms);
	eo_log_kv(EO_LOG_INFO, &lc, "snapshot stored", "size", sizebuf, "checksum", checksum,
		  "revision", revbuf, "storage_version", res.storage_version, "seconds", secs,
		  "peak_rss_kb", rss, "stream_ms", stream, "store_wait_ms", waited, "commit_ms",
		  commit, NULL);
	/* revision: what the member had applied just before the stream began (a lower bound). */
	j = json_pack("{s:s, s:I, s:s, s:I}", "uri", uri, "sizeBytes", (json_int_t)res.size,
		      "checksum", checksum, "revision", (json_int_t)revision);
	rc = j ? eo__agent_report(o, j, &lc)
	       : eo__agent_fail(&lc, "cannot format the result", "out of memory");
	json_decref(j);
out:
	eo_s3_free(s3);
	return rc;
}

/* The snapshot agent; the password and the token it buys are cleansed on every way out. */
int eo__agent_snapshot(const struct eo__agent_opts *o)
{
	char password[1100], token[4200];
	int rc;

	eo__agent_take_password(EO_SNAPSHOT_ENV_PASSWORD, password, sizeof(password));
	rc = snapshot_agent_run(o, password, token, sizeof(token));
	explicit_bzero(password, sizeof(password));
	explicit_bzero(token, sizeof(token));
	return rc;
}
