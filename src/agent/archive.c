/*
 * `etcd-operator archive-agent` (agent/archive.h): continuous archiving of one etcd
 * cluster into a directory (a mounted PVC), issue 20 item 1.
 *
 * Layout of the directory:
 *
 *   manifest.json             archive/manifest.h, replaced atomically (temp file, fsync,
 *                             rename) after every change
 *   bases/base-<rev>.db       base snapshots, <rev> the revision the member had applied just
 *                             before the stream began (20 digits): a lower bound of what the
 *                             snapshot holds, so the watch starts right after it and a
 *                             replay skips what the snapshot already has (it reads the
 *                             snapshot's own revision when it restores it)
 *   segments/<a>-<b>.seg.z    segments (archive/segment.h), written in place: a crash
 *                             leaves a .partial file that the next run replaces
 *
 * The loop: load the manifest; resume the watch after the end of the newest recoverable
 * window, or take a base snapshot from the leader when there is none. Each watch response
 * becomes whole revisions in the open segment; a segment is closed after --segment-seconds
 * or --segment-bytes, and then (and only then) listed in the manifest. A watch cancelled for
 * compaction (the archiver was away longer than the cluster keeps history) is a gap: it is
 * recorded, and a new base starts a new window. A dropped stream is resumed after the last
 * archived revision at the next endpoint. Retention (--retention-seconds) prunes what
 * archive/manifest.h's eo_archive_retention says, at most once a minute.
 *
 * Status: with --status-addr the agent serves GET /status, a small read-only JSON of what
 * the operator reports in the EtcdArchive's status (archive.h has the fields). With
 * --password-env the etcd root password is taken from that environment variable (the
 * variable is cleansed at once; never an argument, never logged).
 *
 * Memory: one watch line (capped) plus one open segment's compression state, whatever the
 * write rate. A thread closes an idle segment on time; a mutex keeps it and the watch from
 * writing at once.
 */
#include "agent/archive.h"
#include "agent/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "archive/fromwatch.h"
#include "archive/manifest.h"
#include "archive/segment.h"
#include "core/sleep.h"
#include "etcd/client.h"
#include "etcd/watch.h"
#include "obs/http.h"
#include "obs/log.h"
#include "snapshot/etcdsnap.h"
#include "snapshot/contract.h"
#include "snapshot/filestore.h"

#define MAX_EPS		   32
#define MANIFEST_NAME	   "manifest.json"
#define BASES_DIR	   "bases"
#define SEGMENTS_DIR	   "segments"
#define RETENTION_EVERY_MS 60000
#define RETRY_MS	   1000

struct arch_opts {
	const char *endpoints[MAX_EPS];
	size_t n_eps;
	const char *cacert, *cert, *key, *dir;
	const char *status_addr; /* NULL: no status server */
	const char *password;	 /* NULL: none */
	long segment_s, retention_s, max_s;
	size_t segment_bytes;
	int64_t until_revision;
};

struct arch {
	const struct arch_opts *o;
	struct eo_log_ctx lc;
	char seg_dir[1100], base_dir[1100];
	struct eo_archive_manifest m;
	struct eo_archive_writer *w;
	pthread_mutex_t mu;
	int64_t last;		/* last revision archived (in a closed or the open segment) */
	int64_t cluster_rev;	/* the newest header revision seen */
	int64_t last_retention; /* eo_mono_ms of the last retention pass */
	int64_t last_upload_ms; /* wall time the last segment or base was listed, 0: none */
	int64_t pending_ms;	/* wall time the oldest revision not yet listed came, 0: none */
	int64_t started_ms;	/* wall time the run began */
	int64_t listed_rev;	/* the newest revision the manifest lists */
	bool stop;
	char fail[1200]; /* the tick thread's failure, "" when none */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	(void)sig;
	stop_signal = 1;
}

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char usage[] =
    "usage: etcd-operator archive-agent --endpoint URL [--endpoint URL...]\n"
    "         [--cacert F --cert F --key F] --dir DIR [--segment-seconds N]\n"
    "         [--segment-bytes N] [--retention-seconds N] [--until-revision R]\n"
    "         [--max-seconds N] [--status-addr HOST:PORT] [--password-env NAME]\n"
    "Archives every revision of the cluster into DIR: base snapshots under bases/, the\n"
    "watched revisions in segments under segments/ (closed after 5 s or 8 MiB by\n"
    "default), listed in DIR/manifest.json once closed. Resumes after the newest\n"
    "recoverable revision of the manifest; a compacted watch is recorded as a gap and a new\n"
    "base is taken. --retention-seconds prunes bases and segments that no point of the\n"
    "window needs. --until-revision and --max-seconds end the run (tests, drills);\n"
    "SIGTERM closes the open segment and ends it. --status-addr :PORT serves GET /status\n"
    "(JSON: the newest window, lag, last upload). --password-env NAME reads the etcd root\n"
    "password from that environment variable.\n";

/* ---- manifest ------------------------------------------------------------------- */

int eo_agent_archive_load(const char *dir, struct eo_archive_manifest *m, char *err, size_t errcap)
{
	char path[1200];
	FILE *f;
	char *buf;
	long len;
	size_t got;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, MANIFEST_NAME);
	f = fopen(path, "rb");
	if (f == NULL) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errcap, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
	    (size_t)len > EO_ARCHIVE_MANIFEST_BYTES || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		snprintf(err, errcap, "%s: unreadable or larger than %zu bytes", path,
			 EO_ARCHIVE_MANIFEST_BYTES);
		return -1;
	}
	buf = malloc((size_t)len + 1);
	if (buf == NULL) {
		fclose(f);
		snprintf(err, errcap, "out of memory for the manifest");
		return -1;
	}
	got = fread(buf, 1, (size_t)len, f);
	fclose(f);
	if (got != (size_t)len) {
		free(buf);
		snprintf(err, errcap, "%s: short read", path);
		return -1;
	}
	rc = eo_archive_manifest_parse(buf, got, m, err, errcap);
	free(buf);
	return rc == 0 ? 0 : -1;
}

static int save_manifest(struct arch *a, char *err, size_t errcap)
{
	struct eo_filestore_writer fw = {0};
	char *text = eo_archive_manifest_dump(&a->m);
	int rc;

	if (text == NULL) {
		snprintf(err, errcap, "out of memory for the manifest");
		return -1;
	}
	rc = eo_filestore_begin(&fw, a->o->dir, MANIFEST_NAME, err, errcap);
	if (rc == 0)
		rc = eo_filestore_write(&fw, text, strlen(text), err, errcap);
	if (rc == 0)
		rc = eo_filestore_commit(&fw, NULL, true, err, errcap);
	if (rc != 0)
		eo_filestore_abort(&fw);
	free(text);
	return rc;
}

/* ---- base snapshots --------------------------------------------------------------- */

static int fw_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	return eo_filestore_write(ud, p, n, err, errcap);
}

/*
 * The leader's endpoint index and its applied revision, or -1 with err when no endpoint
 * answered as the leader. With a password, token receives the leader's auth token for the
 * snapshot stream ("" when etcd has no auth on).
 */
static int find_leader(const struct arch_opts *o, int64_t *revision, char *token, size_t tokcap,
		       char *err, size_t errcap)
{
	size_t i;

	snprintf(err, errcap, "no endpoint answered as the leader");
	for (i = 0; i < o->n_eps; i++) {
		const char *eps[1] = {o->endpoints[i]};
		struct eo_etcd_config cfg = {.endpoints = eps,
					     .n_endpoints = 1,
					     .ca_file = o->cacert,
					     .cert_file = o->cert,
					     .key_file = o->key,
					     .password = o->password};
		struct eo_etcd_detail d = {0};
		struct eo_etcd_status st = {0};
		eo_etcd_client *c = NULL;
		eo_etcd_err e = eo_etcd_client_new(&cfg, &c, &d);
		bool leader;

		if (e == EO_ETCD_OK)
			e = eo_etcd_status(c, o->endpoints[i], &st, &d);
		leader = e == EO_ETCD_OK && st.leader != 0 && st.leader == st.member_id;
		token[0] = '\0';
		if (leader && o->password != NULL && eo_etcd_client_token(c) == NULL) {
			e = eo_etcd_authenticate(c, o->endpoints[i], &d);
			if (e != EO_ETCD_OK &&
			    strstr(d.message, "authentication is not enabled") != NULL)
				e = EO_ETCD_OK; /* no auth on: the stream needs no token */
			leader = e == EO_ETCD_OK;
		}
		if (leader && eo_etcd_client_token(c) != NULL)
			snprintf(token, tokcap, "%s", eo_etcd_client_token(c));
		if (e != EO_ETCD_OK)
			snprintf(err, errcap, "%s: %s %s", o->endpoints[i], eo_etcd_strerror(e),
				 d.message);
		*revision = st.revision;
		eo_etcd_status_clear(&st);
		eo_etcd_client_free(c);
		if (leader)
			return (int)i;
	}
	return -1;
}

/* A base snapshot from the leader, stored and added to the manifest (saved). */
static int take_base(struct arch *a, int64_t *base_rev, char *err, size_t errcap)
{
	struct eo_filestore_writer fw = {0};
	struct eo_snapfetch_result res = {0};
	struct eo_archive_base b = {0};
	char name[EO_ARCHIVE_SEG_NAME_MAX], revbuf[32], sizebuf[32];
	int64_t rev = 0;
	char token[4200];
	int l = find_leader(a->o, &rev, token, sizeof(token), err, errcap);
	struct eo_snapfetch_opts fo = {0};
	int rc;

	if (l < 0) {
		explicit_bzero(token, sizeof(token));
		return -1;
	}
	snprintf(name, sizeof(name), "base-%020" PRId64 ".db", rev);
	fo = (struct eo_snapfetch_opts){.endpoint = a->o->endpoints[l],
					.ca_file = a->o->cacert,
					.cert_file = a->o->cert,
					.key_file = a->o->key,
					.auth_token = token[0] != '\0' ? token : NULL};
	if (eo_filestore_begin(&fw, a->base_dir, name, err, errcap) != 0) {
		explicit_bzero(token, sizeof(token));
		return -1;
	}
	rc = eo_snapshot_fetch(&fo, fw_sink, &fw, &res, err, errcap);
	explicit_bzero(token, sizeof(token));
	if (rc != 0 || eo_filestore_commit(&fw, NULL, true, err, errcap) != 0) {
		eo_filestore_abort(&fw);
		return -1;
	}
	snprintf(b.name, sizeof(b.name), "%s", name);
	b.revision = rev;
	b.time_ms = wall_ms();
	if (eo_archive_manifest_add_base(&a->m, &b) != 0) {
		snprintf(err, errcap, "the manifest refused base %s", name);
		return -1;
	}
	if (save_manifest(a, err, errcap) != 0)
		return -1;
	a->last_upload_ms = b.time_ms;
	a->listed_rev = rev;
	snprintf(revbuf, sizeof(revbuf), "%" PRId64, rev);
	snprintf(sizebuf, sizeof(sizebuf), "%" PRIu64, res.size);
	eo_log_kv(EO_LOG_INFO, &a->lc, "base snapshot stored", "name", name, "revision", revbuf,
		  "size", sizebuf, "endpoint", a->o->endpoints[l], NULL);
	*base_rev = rev;
	return 0;
}

/* ---- segments ----------------------------------------------------------------------- */

static int on_closed(void *ud, const struct eo_archive_seg_info *info, char *err, size_t errcap)
{
	struct arch *a = ud;
	struct eo_archive_seg s = {0};
	char first[32], last[32], recs[32], size[32], lag[32];

	snprintf(s.name, sizeof(s.name), "%s", info->name);
	s.first_revision = info->first_revision;
	s.last_revision = info->last_revision;
	s.first_received_ms = info->first_received_ms;
	s.last_received_ms = info->last_received_ms;
	s.size = info->size;
	s.crc32 = info->file_crc;
	if (eo_archive_manifest_add_seg(&a->m, &s) != 0) {
		snprintf(err, errcap, "the manifest refused segment %s", info->name);
		return -1;
	}
	if (save_manifest(a, err, errcap) != 0)
		return -1;
	a->last_upload_ms = wall_ms();
	/* What came after this segment waits in the next one, from its first receive time. */
	a->pending_ms = 0;
	a->listed_rev = info->last_revision;
	snprintf(first, sizeof(first), "%" PRId64, info->first_revision);
	snprintf(last, sizeof(last), "%" PRId64, info->last_revision);
	snprintf(recs, sizeof(recs), "%" PRIu64, info->records);
	snprintf(size, sizeof(size), "%" PRIu64, info->size);
	snprintf(lag, sizeof(lag), "%" PRId64,
		 a->cluster_rev > info->last_revision ? a->cluster_rev - info->last_revision : 0);
	eo_log_kv(EO_LOG_INFO, &a->lc, "segment archived", "name", info->name, "first_revision",
		  first, "last_revision", last, "revisions", recs, "size", size, "lag_revisions",
		  lag, NULL);
	return 0;
}

static int add_rev(void *ud, const struct eo_archive_rev *rev, char *err, size_t errcap)
{
	struct arch *a = ud;
	int rc = eo_archive_writer_add(a->w, rev, err, errcap);

	/* A revision the writer holds open: the lag counts from when the oldest one came. */
	if (rc == 0 && a->pending_ms == 0 && rev->revision > a->listed_rev)
		a->pending_ms = rev->received_ms;
	return rc;
}

/* Drops the entries retention marked, and their files. */
static void drop_marked(struct arch *a, const bool *pb, const bool *ps, const bool *pg)
{
	char path[1300];
	size_t i, k;

	for (i = k = 0; i < a->m.n_bases; i++) {
		if (!pb[i]) {
			a->m.bases[k++] = a->m.bases[i];
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", a->base_dir, a->m.bases[i].name);
		if (unlink(path) != 0 && errno != ENOENT)
			eo_log_kv(EO_LOG_WARN, &a->lc, "cannot remove a pruned base", "path", path,
				  "error", strerror(errno), NULL);
	}
	a->m.n_bases = k;
	for (i = k = 0; i < a->m.n_segs; i++) {
		if (!ps[i]) {
			a->m.segs[k++] = a->m.segs[i];
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", a->seg_dir, a->m.segs[i].name);
		if (unlink(path) != 0 && errno != ENOENT)
			eo_log_kv(EO_LOG_WARN, &a->lc, "cannot remove a pruned segment", "path",
				  path, "error", strerror(errno), NULL);
	}
	a->m.n_segs = k;
	for (i = k = 0; i < a->m.n_gaps; i++)
		if (!pg[i])
			a->m.gaps[k++] = a->m.gaps[i];
	a->m.n_gaps = k;
}

/*
 * Retention: the manifest without what the window no longer needs is saved first, then the
 * files go, so a crash between the two leaves stray files, never a manifest naming missing
 * ones.
 */
static int retention(struct arch *a, char *err, size_t errcap)
{
	bool *pb, *ps, *pg;
	size_t nb = a->m.n_bases, ns = a->m.n_segs, i, n = 0;
	int rc = 0;

	if (a->o->retention_s <= 0 || nb == 0)
		return 0;
	pb = calloc(nb + 1, sizeof(bool));
	ps = calloc(ns + 1, sizeof(bool));
	pg = calloc(a->m.n_gaps + 1, sizeof(bool));
	if (pb && ps && pg) {
		eo_archive_retention(&a->m, wall_ms() - (int64_t)a->o->retention_s * 1000, pb, ps,
				     pg);
		for (i = 0; i < nb; i++)
			n += pb[i];
		for (i = 0; i < ns; i++)
			n += ps[i];
		if (n > 0) {
			char nbuf[32];

			drop_marked(a, pb, ps, pg);
			rc = save_manifest(a, err, errcap);
			snprintf(nbuf, sizeof(nbuf), "%zu", n);
			eo_log_kv(EO_LOG_INFO, &a->lc, "pruned outside the retention window",
				  "objects", nbuf, NULL);
		}
	} else {
		snprintf(err, errcap, "out of memory for retention");
		rc = -1;
	}
	free(pb);
	free(ps);
	free(pg);
	return rc;
}

/* The tick thread: closes an idle segment on time, runs retention once a minute. */
static void *ticker(void *ud)
{
	struct arch *a = ud;
	char err[1024];

	for (;;) {
		eo_sleep_ms(200);
		pthread_mutex_lock(&a->mu);
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		if (a->fail[0] == '\0' &&
		    eo_archive_writer_tick(a->w, wall_ms(), err, sizeof(err)) != 0)
			snprintf(a->fail, sizeof(a->fail), "closing a segment: %s", err);
		if (a->fail[0] == '\0' && eo_mono_ms() - a->last_retention >= RETENTION_EVERY_MS) {
			a->last_retention = eo_mono_ms();
			if (retention(a, err, sizeof(err)) != 0)
				snprintf(a->fail, sizeof(a->fail), "retention: %s", err);
		}
		pthread_mutex_unlock(&a->mu);
	}
}

/* ---- the watch -------------------------------------------------------------------- */

static int on_watch(void *ud, const struct eo_etcd_watch_resp *r, char *err, size_t errcap)
{
	struct arch *a = ud;
	int rc;

	pthread_mutex_lock(&a->mu);
	if (r->revision > a->cluster_rev)
		a->cluster_rev = r->revision;
	if (a->fail[0] != '\0') {
		snprintf(err, errcap, "%s", a->fail);
		pthread_mutex_unlock(&a->mu);
		return -1;
	}
	rc = eo_archive_from_watch(r, wall_ms(), add_rev, a, &a->last, err, errcap);
	pthread_mutex_unlock(&a->mu);
	if (rc != 0)
		return -1;
	if (stop_signal)
		return 1;
	return a->o->until_revision > 0 && a->last >= a->o->until_revision ? 1 : 0;
}

/* Records a gap after the last archived revision and takes a new base. */
static int compacted(struct arch *a, int64_t compact_rev, char *err, size_t errcap)
{
	struct eo_archive_gap g = {.after_revision = a->last, .detected_ms = wall_ms()};
	char after[32], comp[32];
	int64_t base = 0;

	snprintf(after, sizeof(after), "%" PRId64, a->last);
	snprintf(comp, sizeof(comp), "%" PRId64, compact_rev);
	eo_log_kv(EO_LOG_WARN, &a->lc,
		  "the watch was compacted away: recording a gap and taking a new base",
		  "last_archived", after, "compact_revision", comp, NULL);
	if (eo_archive_writer_flush(a->w, err, errcap) != 0 ||
	    take_base(a, &base, err, errcap) != 0)
		return -1;
	g.resumed_revision = base;
	if (eo_archive_manifest_add_gap(&a->m, &g) != 0 || save_manifest(a, err, errcap) != 0) {
		snprintf(err, errcap, "cannot record the gap after revision %" PRId64, a->last);
		return -1;
	}
	a->last = base;
	return 0;
}

/* Watches from a->last + 1 until the run ends; 0 when it ended as asked. */
static int watch_loop(struct arch *a, char *err, size_t errcap)
{
	int64_t t_end = a->o->max_s > 0 ? eo_mono_ms() + a->o->max_s * 1000 : 0;
	size_t ep = 0;

	for (;;) {
		const char *eps[1] = {a->o->endpoints[ep % a->o->n_eps]};
		struct eo_etcd_config cfg = {.endpoints = eps,
					     .n_endpoints = 1,
					     .ca_file = a->o->cacert,
					     .cert_file = a->o->cert,
					     .key_file = a->o->key,
					     .password = a->o->password};
		struct eo_etcd_watch_opts wo = {
		    .cfg = &cfg, .start_revision = a->last + 1, .max_duration_ms = 10000};
		struct eo_etcd_watch_result res = {0};
		struct eo_etcd_detail d = {0};
		eo_etcd_err e;
		int rc = 0;

		if (stop_signal || (a->o->until_revision > 0 && a->last >= a->o->until_revision) ||
		    (t_end > 0 && eo_mono_ms() >= t_end))
			return 0;
		if (t_end > 0 && t_end - eo_mono_ms() < wo.max_duration_ms)
			wo.max_duration_ms = (long)(t_end - eo_mono_ms());
		e = eo_etcd_watch(&wo, on_watch, a, &res, &d);
		pthread_mutex_lock(&a->mu);
		if (a->fail[0] != '\0') {
			snprintf(err, errcap, "%s", a->fail);
			rc = -1;
		} else if (e == EO_ETCD_COMPACTED) {
			rc = compacted(a, res.compact_revision, err, errcap);
		} else if (e == EO_ETCD_INTERNAL) {
			snprintf(err, errcap, "%s", d.message);
			rc = -1;
		}
		pthread_mutex_unlock(&a->mu);
		if (rc != 0)
			return -1;
		if (e != EO_ETCD_OK && e != EO_ETCD_COMPACTED && e != EO_ETCD_TIMEOUT) {
			eo_log_kv(EO_LOG_WARN, &a->lc, "the watch ended; resuming", "endpoint",
				  eps[0], "error", eo_etcd_strerror(e), "detail", d.message, NULL);
			ep++;
			eo_sleep_ms(RETRY_MS);
		}
	}
}

/* ---- the status server ------------------------------------------------------------ */

/* The /status document (agent/archive.h); malloc'd, NULL when out of memory. */
static char *status_json(struct arch *a)
{
	struct eo_archive_window w;
	json_t *doc;
	char *text = NULL;
	int64_t now = wall_ms();

	pthread_mutex_lock(&a->mu);
	doc = json_pack(
	    "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s}", "clusterRevision",
	    (json_int_t)a->cluster_rev, "archivedRevision", (json_int_t)a->listed_rev,
	    "lagRevisions",
	    (json_int_t)(a->cluster_rev > a->listed_rev ? a->cluster_rev - a->listed_rev : 0),
	    "lagSeconds",
	    (json_int_t)(a->pending_ms > 0 && now > a->pending_ms ? (now - a->pending_ms) / 1000
								  : 0),
	    "lastUploadMs", (json_int_t)a->last_upload_ms, "startedMs", (json_int_t)a->started_ms,
	    "bases", (json_int_t)a->m.n_bases, "segments", (json_int_t)a->m.n_segs, "gaps",
	    (json_int_t)a->m.n_gaps, "error", a->fail);
	if (doc != NULL && eo_archive_window_latest(&a->m, &w))
		json_object_set_new(
		    doc, "window",
		    json_pack("{s:I, s:I, s:I, s:I}", "fromRevision", (json_int_t)w.from_revision,
			      "fromMs", (json_int_t)w.from_ms, "toRevision",
			      (json_int_t)w.to_revision, "toMs", (json_int_t)w.to_ms));
	pthread_mutex_unlock(&a->mu);
	if (doc != NULL)
		text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

static enum MHD_Result status_respond(struct MHD_Connection *conn, unsigned code, char *body,
				      enum MHD_ResponseMemoryMode mode, const char *ctype)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(body), body, mode);
	enum MHD_Result ret;

	if (resp == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result status_handle(void *cls, struct MHD_Connection *conn, const char *url,
				     const char *method, const char *version,
				     const char *upload_data, size_t *upload_data_size,
				     void **con_cls)
{
	char *body;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return status_respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n",
				      MHD_RESPMEM_PERSISTENT, "text/plain");
	if (strcmp(url, "/status") != 0)
		return status_respond(conn, MHD_HTTP_NOT_FOUND, "not found\n",
				      MHD_RESPMEM_PERSISTENT, "text/plain");
	body = status_json(cls);
	if (body == NULL)
		return status_respond(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n",
				      MHD_RESPMEM_PERSISTENT, "text/plain");
	return status_respond(conn, MHD_HTTP_OK, body, MHD_RESPMEM_MUST_FREE, "application/json");
}

/* The status listener on every interface at the address's port; NULL with err. */
static struct MHD_Daemon *status_start(struct arch *a, char *err, size_t errcap)
{
	struct eo_bind_addr ba;
	struct MHD_Daemon *d;

	if (eo_bind_addr_parse(a->o->status_addr, &ba, err, errcap) != 0)
		return NULL;
	if (ba.disabled)
		return NULL;
	/* Dual stack where the node has IPv6 (an IPv6-only Pod network), else IPv4. */
	for (int v6 = 1; v6 >= 0; v6--) {
		d = MHD_start_daemon(
		    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (v6 ? MHD_USE_DUAL_STACK : 0),
		    ba.port, NULL, NULL, status_handle, a, MHD_OPTION_CONNECTION_LIMIT, (unsigned)8,
		    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
		if (d != NULL)
			break;
	}
	if (d == NULL)
		snprintf(err, errcap, "--status-addr %s: cannot listen", a->o->status_addr);
	return d;
}

/* ---- the run ------------------------------------------------------------------------ */

static int mkdir_one(const char *p, char *err, size_t errcap)
{
	if (mkdir(p, 0750) != 0 && errno != EEXIST) {
		snprintf(err, errcap, "%s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

/* Where the watch starts: after the newest window's end, or after a new base. */
static int start_point(struct arch *a, char *err, size_t errcap)
{
	struct eo_archive_window w;
	char rev[32];

	if (eo_archive_window_latest(&a->m, &w)) {
		a->last = w.to_revision;
		a->listed_rev = w.to_revision;
		snprintf(rev, sizeof(rev), "%" PRId64, w.to_revision);
		eo_log_kv(EO_LOG_INFO, &a->lc, "resuming after the newest archived revision",
			  "revision", rev, NULL);
		return 0;
	}
	return take_base(a, &a->last, err, errcap);
}

static int run(const struct arch_opts *o)
{
	struct eo_archive_writer_opts wo = {0};
	struct arch a = {.o = o};
	pthread_t tick;
	struct MHD_Daemon *status = NULL;
	bool ticking = false;
	char err[2048] = "";
	int rc = 1;

	eo_log_ctx_init(&a.lc);
	eo_log_ctx_add(&a.lc, "component", "archive-agent");
	pthread_mutex_init(&a.mu, NULL);
	snprintf(a.seg_dir, sizeof(a.seg_dir), "%s/%s", o->dir, SEGMENTS_DIR);
	snprintf(a.base_dir, sizeof(a.base_dir), "%s/%s", o->dir, BASES_DIR);
	wo = (struct eo_archive_writer_opts){.dir = a.seg_dir,
					     .max_age_ms = o->segment_s * 1000,
					     .max_bytes = o->segment_bytes,
					     .codec = EO_ARCHIVE_CODEC_ZLIB};
	a.last_retention = eo_mono_ms();
	a.started_ms = wall_ms();
	if (mkdir_one(o->dir, err, sizeof(err)) != 0 || mkdir_one(a.seg_dir, err, sizeof(err)) ||
	    mkdir_one(a.base_dir, err, sizeof(err)) != 0 ||
	    eo_agent_archive_load(o->dir, &a.m, err, sizeof(err)) != 0 ||
	    start_point(&a, err, sizeof(err)) != 0 ||
	    eo_archive_writer_new(&wo, on_closed, &a, &a.w, err, sizeof(err)) != 0)
		goto out;
	if (pthread_create(&tick, NULL, ticker, &a) != 0) {
		snprintf(err, sizeof(err), "cannot start the segment timer");
		goto out;
	}
	ticking = true;
	if (o->status_addr != NULL && (status = status_start(&a, err, sizeof(err))) == NULL &&
	    err[0] != '\0')
		goto out;
	if (watch_loop(&a, err, sizeof(err)) != 0)
		goto out;
	pthread_mutex_lock(&a.mu);
	rc = eo_archive_writer_flush(a.w, err, sizeof(err)) == 0 ? 0 : 1;
	pthread_mutex_unlock(&a.mu);
out:
	if (status != NULL)
		MHD_stop_daemon(status);
	if (ticking) {
		pthread_mutex_lock(&a.mu);
		a.stop = true;
		pthread_mutex_unlock(&a.mu);
		pthread_join(tick, NULL);
	}
	if (rc != 0)
		eo_log_kv(EO_LOG_ERROR, &a.lc, "archiving stopped", "error", err, NULL);
	else
		eo_log_kv(EO_LOG_INFO, &a.lc, "archiving ended", NULL);
	eo_archive_writer_free(a.w);
	eo_archive_manifest_clear(&a.m);
	pthread_mutex_destroy(&a.mu);
	return rc;
}

/* ---- flags -------------------------------------------------------------------------- */

int eo_agent_archive_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"endpoint", required_argument, NULL, 'e'},
	    {"cacert", required_argument, NULL, 'a'},
	    {"cert", required_argument, NULL, 'c'},
	    {"key", required_argument, NULL, 'k'},
	    {"dir", required_argument, NULL, 'd'},
	    {"segment-seconds", required_argument, NULL, 's'},
	    {"segment-bytes", required_argument, NULL, 'b'},
	    {"retention-seconds", required_argument, NULL, 'r'},
	    {"until-revision", required_argument, NULL, 'u'},
	    {"max-seconds", required_argument, NULL, 'm'},
	    {"status-addr", required_argument, NULL, 'S'},
	    {"password-env", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct arch_opts o = {.segment_s = 5};
	const char *password_env = NULL;
	char password[1100] = "";
	int64_t n = 0;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (o.n_eps == MAX_EPS) {
				fprintf(stderr, "etcd-operator: at most %d --endpoint\n", MAX_EPS);
				return 2;
			}
			o.endpoints[o.n_eps++] = optarg;
			break;
		case 'a':
			o.cacert = optarg;
			break;
		case 'c':
			o.cert = optarg;
			break;
		case 'k':
			o.key = optarg;
			break;
		case 'd':
			o.dir = optarg;
			break;
		case 's':
		case 'r':
		case 'm':
			if (!eo__agent_parse_i64(optarg, 1, 100L * 365 * 86400, &n)) {
				fprintf(stderr, "etcd-operator: %s needs whole seconds > 0\n%s",
					argv[optind - 1], usage);
				return 2;
			}
			*(c == 's' ? &o.segment_s : c == 'r' ? &o.retention_s : &o.max_s) = n;
			break;
		case 'b':
			if (!eo__agent_parse_i64(optarg, 4096, 1L << 30, &n)) {
				fprintf(stderr, "etcd-operator: --segment-bytes: 4096 to 1 GiB\n");
				return 2;
			}
			o.segment_bytes = (size_t)n;
			break;
		case 'u':
			if (!eo__agent_parse_i64(optarg, 1, INT64_MAX, &n)) {
				fprintf(stderr,
					"etcd-operator: --until-revision needs a revision\n");
				return 2;
			}
			o.until_revision = n;
			break;
		case 'S':
			o.status_addr = optarg;
			break;
		case 'P':
			password_env = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc || o.n_eps == 0 || o.dir == NULL || strlen(o.dir) > 1024) {
		fputs(usage, stderr);
		return 2;
	}
	if (password_env != NULL) {
		eo__agent_take_password(password_env, password, sizeof(password));
		if (password[0] != '\0')
			o.password = password;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "etcd-operator: curl_global_init failed\n");
		return 1;
	}
	rc = run(&o);
	explicit_bzero(password, sizeof(password));
	curl_global_cleanup();
	return rc;
}
