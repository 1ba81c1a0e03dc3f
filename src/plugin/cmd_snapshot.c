/*
 * `kubectl etcd snapshot` (plugin/run.h): a verified snapshot of one member, saved locally.
 */
#include "plugin/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/names.h"
#include "core/sleep.h"
#include "snapshot/etcdsnap.h"
#include "snapshot/filestore.h"
#include "snapshot/integrity.h"

#define SNAPSHOT_STALL_S 60L

struct snap {
	struct eo_filestore_writer w;
	struct eo_snapstream ss;
	struct eo_snapcheck check;
	char werr[256];
	FILE *progress; /* stderr when it is a terminal, else NULL */
	const char *member;
	int64_t start_ms, shown_ms;
};

/* Rewrites the progress line (bytes, rate) at most four times a second, or now when final. */
static void snap_progress(struct snap *s, bool final)
{
	int64_t now = eo_mono_ms();
	char line[256];

	if (!s->progress || (!final && now - s->shown_ms < 250))
		return;
	s->shown_ms = now;
	fprintf(s->progress, "\r%s\033[K%s",
		eo_plugin_progress(s->member, (int64_t)s->check.total, now - s->start_ms, line,
				   sizeof(line)),
		final ? "\n" : "");
	fflush(s->progress);
}

static int snap_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct snap *s = ud;

	eo_snapcheck_feed(&s->check, p, n);
	snap_progress(s, false);
	if (eo_filestore_write(&s->w, p, n, s->werr, sizeof(s->werr)) != 0) {
		snprintf(err, errcap, "writing the snapshot: %s", s->werr);
		return -1;
	}
	return 0;
}

static int snap_feed(void *ud, const char *p, size_t n)
{
	struct snap *s = ud;

	return eo_snapstream_feed(&s->ss, p, n);
}

int eo__plugin_cmd_snapshot(struct eo__plugin_ctx *c)
{
	struct snap *s = calloc(1, sizeof(*s));
	char dirbuf[4096], basebuf[4096], host[EO_NAME_MAX * 2 + 64], err[512];
	char sha[EO_SNAP_SHA_HEX_LEN + 1] = "", sentence[1024];
	struct eo_plugin_answer *ans = calloc(1, sizeof(*ans));
	size_t order[EO_PLUGIN_TARGETS_MAX], n;
	enum eo_snapcheck_result verdict;
	const char *member, *dir, *base;
	int rc, k;
	eo_kube_err e;

	if (!s || !ans) {
		free(s);
		free(ans);
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	}
	s->w.fd = s->w.dirfd = -1;
	if (c->a->member) {
		k = eo_plugin_target_find(c->t, c->nt, c->a->member);
		if (k < 0) {
			rc = eo__plugin_failf(c, EO_PEXIT_NOTFOUND,
					      "%s is not a member of cluster %s/%s", c->a->member,
					      c->ns, c->a->cluster);
			goto out;
		}
		member = c->t[k].name;
	} else {
		n = eo_plugin_query_order(c->t, c->nt, order);
		if (n == 0) {
			rc = eo__plugin_failf(c, EO_PEXIT_FAILED,
					      "no member of %s/%s has a running Pod", c->ns,
					      c->a->cluster);
			goto out;
		}
		member = c->t[order[0]].name;
	}
	if (strlen(c->a->path) >= sizeof(dirbuf)) {
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "snapshot path too long");
		goto out;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", c->a->path);
	snprintf(basebuf, sizeof(basebuf), "%s", c->a->path);
	dir = dirname(dirbuf);
	base = basename(basebuf);
	/* The temporary file .<name>.tmp-<pid>-<n> lands beside the target, mode 0600. */
	if (eo_filestore_begin(&s->w, dir, base, err, sizeof(err)) != 0 ||
	    fchmod(s->w.fd, 0600) != 0) {
		if (s->w.fd >= 0)
			snprintf(err, sizeof(err), "chmod: %s", strerror(errno));
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "cannot write the snapshot next to %s: %s",
				      c->a->path, err);
		goto out;
	}
	if (eo_snapstream_init(&s->ss, snap_sink, s) != 0 || eo_snapcheck_init(&s->check) != 0) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
		goto out;
	}
	s->member = member;
	s->progress = c->errf && isatty(fileno(c->errf)) ? c->errf : NULL;
	s->start_ms = s->shown_ms = eo_mono_ms();
	e = eo_plugin_reach_post(
	    &c->reach, member, eo__plugin_member_host(c, member, host, sizeof(host)),
	    "/v3/maintenance/snapshot", "{}", -1, SNAPSHOT_STALL_S, snap_feed, s, ans);
	snap_progress(s, true);
	if (s->werr[0]) {
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "%s", s->werr);
		goto out;
	}
	if (s->ss.failed) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "member %s: %s", member, s->ss.err);
		goto out;
	}
	if (e != EO_KUBE_OK) {
		rc = eo__plugin_call_failed(c, ans, member, "/v3/maintenance/snapshot", NULL);
		goto out;
	}
	if (eo_snapstream_finish(&s->ss) != 0) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "member %s: %s", member, s->ss.err);
		goto out;
	}
	verdict = eo_snapcheck_finish(&s->check, sha);
	if (verdict != EO_SNAPCHECK_OK) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "member %s: %s", member,
				      eo_snapcheck_strerror(verdict));
		goto out;
	}
	/* fsync, rename over an existing file, fsync the directory; removes the file on failure */
	if (eo_filestore_commit(&s->w, NULL, true, err, sizeof(err)) != 0) {
		rc = eo__plugin_failf(c, EO_PEXIT_LOCAL, "%s", err);
		goto out;
	}
	snprintf(sentence, sizeof(sentence),
		 "snapshot of member %s written to %s: %" PRIu64 " bytes, sha256 %s; etcd's "
		 "integrity hash verified",
		 member, c->a->path, s->check.total, sha);
	rc = eo__plugin_emit(c,
			     json_pack("{s:s,s:s,s:s,s:s,s:I,s:s,s:b,s:s}", "cluster",
				       c->a->cluster, "namespace", c->ns, "member", member, "path",
				       c->a->path, "size", (json_int_t)s->check.total, "sha256",
				       sha, "verified", 1, "storageVersion", s->ss.storage_version),
			     NULL, NULL, 0, sentence);
out:
	eo_filestore_abort(&s->w); /* removes the temporary file unless committed */
	eo_snapstream_free(&s->ss);
	eo_snapcheck_free(&s->check);
	free(ans);
	free(s);
	return rc;
}
