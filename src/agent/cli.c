/* The agent subcommands of the operator binary (cli.h). */
#include "agent/cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "agent/etcdsnap.h"
#include "agent/filestore.h"
#include "agent/integrity.h"
#include "agent/prune.h"
#include "agent/s3.h"
#include "agent/store.h"
#include "agent/trust.h"
#include "agent/adopt.h"
#include "agent/dataguard.h"
#include "api/restorefail.h"
#include "api/snapshot.h"
#include "core/json.h"
#include "core/version.h"
#include "desired/snapshot_job.h"
#include "etcd/client.h"
#include "obs/log.h"

extern char **environ;

#define MAX_ENDPOINTS 32
#define STAGED_NAME   "snapshot.db"
#define REBUILD_NAME  "rebuild"
#define FREE_MARGIN   (16ull * 1024 * 1024)

struct opts {
	const char *endpoints[MAX_ENDPOINTS];
	size_t nendpoints;
	const char *cacert, *cert, *key;
	const char *name, *uid;
	const char *s3_endpoint, *s3_bucket, *s3_key, *s3_region, *s3_ca, *cred_dir;
	bool path_style, s3_insecure;
	const char *expected_checksum;
	uint64_t part_size;
	unsigned parallel;
	const char *pvc_dir;
	const char *termination_log;
	long stall_s;
	const char *data_dir, *staging_dir, *file, *install_self;
	const char *etcdutl, *member_name, *initial_cluster, *cluster_token, *peer_url;
	const char *member_id; /* restore: refuse when set (the member already joined) */
};

enum {
	O_ENDPOINT = 256,
	O_CACERT,
	O_CERT,
	O_KEY,
	O_NAME,
	O_UID,
	O_S3_ENDPOINT,
	O_S3_BUCKET,
	O_S3_KEY,
	O_S3_REGION,
	O_S3_CA,
	O_S3_PATH_STYLE,
	O_S3_INSECURE,
	O_EXPECTED_CHECKSUM,
	O_S3_PART_SIZE,
	O_S3_PARALLEL,
	O_CRED_DIR,
	O_PVC_DIR,
	O_TERMLOG,
	O_STALL,
	O_DATA_DIR,
	O_STAGING_DIR,
	O_FILE,
	O_INSTALL_SELF,
	O_ETCDUTL,
	O_MEMBER_NAME,
	O_INITIAL_CLUSTER,
	O_CLUSTER_TOKEN,
	O_PEER_URL,
	O_MEMBER_ID,
	O_HELP,
};

static const struct option all_options[] = {
    {"endpoint", required_argument, NULL, O_ENDPOINT},
    {"cacert", required_argument, NULL, O_CACERT},
    {"cert", required_argument, NULL, O_CERT},
    {"key", required_argument, NULL, O_KEY},
    {"snapshot-name", required_argument, NULL, O_NAME},
    {"snapshot-uid", required_argument, NULL, O_UID},
    {"s3-endpoint", required_argument, NULL, O_S3_ENDPOINT},
    {"s3-bucket", required_argument, NULL, O_S3_BUCKET},
    {"s3-key", required_argument, NULL, O_S3_KEY},
    {"s3-region", required_argument, NULL, O_S3_REGION},
    {"s3-ca-file", required_argument, NULL, O_S3_CA},
    {"s3-force-path-style", no_argument, NULL, O_S3_PATH_STYLE},
    {"s3-insecure", no_argument, NULL, O_S3_INSECURE},
    {"expected-checksum", required_argument, NULL, O_EXPECTED_CHECKSUM},
    {"s3-part-size", required_argument, NULL, O_S3_PART_SIZE},
    {"s3-parallel", required_argument, NULL, O_S3_PARALLEL},
    {"credentials-dir", required_argument, NULL, O_CRED_DIR},
    {"pvc-dir", required_argument, NULL, O_PVC_DIR},
    {"termination-log", required_argument, NULL, O_TERMLOG},
    {"stall-timeout", required_argument, NULL, O_STALL},
    {"data-dir", required_argument, NULL, O_DATA_DIR},
    {"staging-dir", required_argument, NULL, O_STAGING_DIR},
    {"file", required_argument, NULL, O_FILE},
    {"install-self", required_argument, NULL, O_INSTALL_SELF},
    {"etcdutl", required_argument, NULL, O_ETCDUTL},
    {"name", required_argument, NULL, O_MEMBER_NAME},
    {"initial-cluster", required_argument, NULL, O_INITIAL_CLUSTER},
    {"initial-cluster-token", required_argument, NULL, O_CLUSTER_TOKEN},
    {"initial-advertise-peer-urls", required_argument, NULL, O_PEER_URL},
    {"member-id", required_argument, NULL, O_MEMBER_ID},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0},
};

static const char usage_snapshot[] =
    "usage: etcd-operator snapshot-agent --snapshot-name NAME --snapshot-uid UID\n"
    "         --endpoint URL [--endpoint URL...] [--cacert F --cert F --key F]\n"
    "         (--s3-endpoint URL --s3-bucket B [--s3-key PREFIX] [--s3-region R]\n"
    "          [--s3-force-path-style] [--s3-insecure] [--s3-ca-file F]\n"
    "          [--s3-part-size BYTES] [--s3-parallel N] [--credentials-dir DIR]\n"
    "          | --pvc-dir DIR) [--termination-log PATH] [--stall-timeout SECONDS]\n"
    "Takes a snapshot from the first voter among the endpoints that is current (the\n"
    "leader, or a follower that knows the leader and has applied what the leader had\n"
    "committed when the agent started), verifies its integrity hash and stores it as\n"
    "<prefix>/<name>.db (S3) or <dir>/<name>.db. A plain http:// S3 endpoint needs\n"
    "--s3-insecure. S3 credentials: files AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY in\n"
    "--credentials-dir, else the environment variables of those names.\n"
    "Prints {\"uri\",\"sizeBytes\",\"checksum\",\"revision\"} as the last line on stdout.\n";

static const char usage_restore[] =
    "usage: etcd-operator restore-agent --data-dir DIR --staging-dir DIR\n"
    "         (--s3-endpoint URL --s3-bucket B --s3-key KEY [--s3-region R]\n"
    "          [--s3-force-path-style] [--s3-insecure] [--s3-ca-file F]\n"
    "          [--credentials-dir DIR] | --file PATH)\n"
    "         [--expected-checksum sha256:HEX] [--install-self DIR] [--member-id ID]\n"
    "Refuses when given a member ID (a member that joined never restores again).\n"
    "Does nothing when DIR/member exists. Otherwise checks the source (HeadObject),\n"
    "the free space (2x the snapshot for S3, 1x for a file), downloads an S3 object to\n"
    "STAGING/" STAGED_NAME ", verifies the integrity hash and, when given, that the\n"
    "SHA-256 of the file is the expected checksum. A plain http:// S3 endpoint needs\n"
    "--s3-insecure. --install-self copies this binary and its libraries to DIR for the\n"
    "restore-rebuild step.\n";

static const char usage_rebuild[] =
    "usage: etcd-operator restore-rebuild --data-dir DIR --staging-dir DIR [--file PATH]\n"
    "         --name N --initial-cluster C --initial-cluster-token T\n"
    "         --initial-advertise-peer-urls U [--etcdutl PATH] [--member-id ID]\n"
    "Refuses when given a member ID. Does nothing when DIR/member exists. Otherwise\n"
    "runs 'etcdutl snapshot restore' on the staged snapshot (or PATH) into\n"
    "STAGING/" REBUILD_NAME ", moves its member directory into DIR and removes the\n"
    "staging directory.\n";

static const char usage_prune[] =
    "usage: etcd-operator snapshot-prune --snapshot-name NAME --snapshot-uid UID\n"
    "         (--s3-endpoint URL --s3-bucket B [--s3-key PREFIX] [--s3-region R]\n"
    "          [--s3-force-path-style] [--s3-insecure] [--s3-ca-file F]\n"
    "          [--credentials-dir DIR] | --pvc-dir DIR) [--termination-log PATH]\n"
    "Deletes <prefix>/<name>.db (S3) or <dir>/<name>.db and its .uid stamp, only when\n"
    "the stored snapshot is stamped with UID. Anything else is left in place.\n";

/* A path option with a ".." segment: refused, it would leave the volume, prefix or bucket. */
static int dot_dot(const char *flag)
{
	fprintf(stderr, "etcd-operator: %s must not contain a '..' path segment\n", flag);
	return 2;
}

static int parse_opts(int argc, char **argv, struct opts *o, const char *usage)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->etcdutl = "etcdutl";
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "", all_options, NULL)) != -1) {
		switch (c) {
		case O_ENDPOINT:
			if (o->nendpoints == MAX_ENDPOINTS) {
				fprintf(stderr, "etcd-operator: at most %d --endpoint\n",
					MAX_ENDPOINTS);
				return 2;
			}
			o->endpoints[o->nendpoints++] = optarg;
			break;
		case O_CACERT:
			o->cacert = optarg;
			break;
		case O_CERT:
			o->cert = optarg;
			break;
		case O_KEY:
			o->key = optarg;
			break;
		case O_NAME:
			o->name = optarg;
			break;
		case O_UID:
			o->uid = optarg;
			break;
		case O_S3_ENDPOINT:
			o->s3_endpoint = optarg;
			break;
		case O_S3_BUCKET:
			o->s3_bucket = optarg;
			break;
		case O_S3_KEY:
			if (eo_path_has_dot_dot(optarg))
				return dot_dot("--s3-key");
			o->s3_key = optarg;
			break;
		case O_S3_REGION:
			o->s3_region = optarg;
			break;
		case O_S3_CA:
			o->s3_ca = optarg;
			break;
		case O_S3_PATH_STYLE:
			o->path_style = true;
			break;
		case O_S3_INSECURE:
			o->s3_insecure = true;
			break;
		case O_EXPECTED_CHECKSUM:
			o->expected_checksum = optarg;
			break;
		case O_S3_PART_SIZE:
			errno = 0;
			o->part_size = strtoull(optarg, &end, 10);
			if (errno || *end || o->part_size < EO_S3_MIN_PART ||
			    o->part_size > EO_S3_MAX_PART) {
				fprintf(
				    stderr,
				    "etcd-operator: --s3-part-size must be a byte count between "
				    "%llu and %llu\n",
				    (unsigned long long)EO_S3_MIN_PART,
				    (unsigned long long)EO_S3_MAX_PART);
				return 2;
			}
			break;
		case O_S3_PARALLEL:
			errno = 0;
			o->parallel = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || o->parallel < 1 ||
			    o->parallel > EO_STORE_MAX_PARALLEL) {
				fprintf(stderr,
					"etcd-operator: --s3-parallel must be between 1 and %d\n",
					EO_STORE_MAX_PARALLEL);
				return 2;
			}
			break;
		case O_CRED_DIR:
			o->cred_dir = optarg;
			break;
		case O_PVC_DIR:
			if (eo_path_has_dot_dot(optarg))
				return dot_dot("--pvc-dir");
			o->pvc_dir = optarg;
			break;
		case O_TERMLOG:
			o->termination_log = optarg;
			break;
		case O_STALL:
			o->stall_s = strtol(optarg, &end, 10);
			if (*end || o->stall_s <= 0) {
				fprintf(stderr,
					"etcd-operator: --stall-timeout must be seconds > 0\n");
				return 2;
			}
			break;
		case O_DATA_DIR:
			o->data_dir = optarg;
			break;
		case O_STAGING_DIR:
			o->staging_dir = optarg;
			break;
		case O_FILE:
			if (eo_path_has_dot_dot(optarg))
				return dot_dot("--file");
			o->file = optarg;
			break;
		case O_INSTALL_SELF:
			o->install_self = optarg;
			break;
		case O_ETCDUTL:
			o->etcdutl = optarg;
			break;
		case O_MEMBER_NAME:
			o->member_name = optarg;
			break;
		case O_INITIAL_CLUSTER:
			o->initial_cluster = optarg;
			break;
		case O_CLUSTER_TOKEN:
			o->cluster_token = optarg;
			break;
		case O_PEER_URL:
			o->peer_url = optarg;
			break;
		case O_MEMBER_ID:
			o->member_id = optarg;
			break;
		case O_HELP:
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "etcd-operator: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	return -1;
}

static int mkdir_p(const char *path, char *err, size_t errcap);

static int fail(const struct eo_log_ctx *lc, const char *msg, const char *err)
{
	eo_log_kv(EO_LOG_ERROR, lc, msg, "error", err, NULL);
	return 1;
}

static void write_termination_log(const struct opts *o, const char *line,
				  const struct eo_log_ctx *lc)
{
	int fd;

	if (!o->termination_log)
		return;
	fd = open(o->termination_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || eo_write_all(fd, line, strlen(line)) != 0)
		eo_log_kv(EO_LOG_WARN, lc, "cannot write the termination log", "path",
			  o->termination_log, "error", strerror(errno), NULL);
	if (fd >= 0)
		close(fd);
}

/* Prints the result line and writes it to the termination log when asked. */
static int report(const struct opts *o, json_t *j, const struct eo_log_ctx *lc)
{
	char *line = eo_json_dumps(j, JSON_COMPACT, NULL);

	if (!line)
		return fail(lc, "cannot format the result", "out of memory");
	printf("%s\n", line);
	fflush(stdout);
	write_termination_log(o, line, lc);
	free(line);
	return 0;
}

/*
 * A restore step failed: logs it and leaves {"reason","message"} in the termination log
 * (api/restorefail.h), from which the EtcdCluster's condition is made. Returns 1.
 */
static int restore_fail(const struct opts *o, const struct eo_log_ctx *lc, const char *reason,
			const char *what, const char *err)
{
	char msg[EO_RESTORE_MESSAGE_MAX], doc[EO_RESTORE_FAILURE_MAX];

	eo_log_kv(EO_LOG_ERROR, lc, what, "reason", reason, "error", err, NULL);
	snprintf(msg, sizeof(msg), "%s: %s", what, err);
	if (eo_restore_failure_format(doc, sizeof(doc), reason, msg) == 0)
		write_termination_log(o, doc, lc);
	return 1;
}

/* Seconds since t0 (CLOCK_MONOTONIC) and this process's peak resident memory, for the logs. */
static void usage_fields(const struct timespec *t0, char *secs, size_t scap, char *rss, size_t rcap)
{
	struct timespec t1;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(secs, scap, "%.3f",
		 (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		snprintf(rss, rcap, "%ld", ru.ru_maxrss);
	else
		snprintf(rss, rcap, "unknown");
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The S3 client: 0; -1 when the credentials cannot be read; -2 for bad S3 settings. */
static int make_s3(const struct opts *o, eo_s3 **s3, char *err, size_t errcap)
{
	char ak[EO_S3_CRED_MAX], sk[EO_S3_CRED_MAX], tok[EO_S3_CRED_MAX];
	struct eo_s3_config c;
	int rc;

	if (eo_s3_load_credentials(o->cred_dir, ak, sk, tok, err, errcap) != 0) {
		explicit_bzero(sk, sizeof(sk));
		explicit_bzero(tok, sizeof(tok));
		return -1;
	}
	c = (struct eo_s3_config){
	    .endpoint = o->s3_endpoint,
	    .bucket = o->s3_bucket,
	    .region = o->s3_region,
	    .path_style = o->path_style,
	    .access_key = ak,
	    .secret_key = sk,
	    .session_token = tok,
	    .ca_file = o->s3_ca,
	    .stall_timeout_s = o->stall_s,
	    .insecure = o->s3_insecure,
	};
	rc = eo_s3_new(&c, s3, err, errcap) == 0 ? 0 : -2;
	explicit_bzero(sk, sizeof(sk));
	explicit_bzero(tok, sizeof(tok));
	return rc;
}

/*
 * The etcd root password of a cluster with spec.auth (desired/snapshot_job.h), copied out of
 * the environment, whose copy is cleansed at once; "" when not set. Never logged.
 */
static void take_password(char *buf, size_t cap)
{
	char *v = getenv(EO_SNAPSHOT_ENV_PASSWORD);

	buf[0] = '\0';
	if (v == NULL)
		return;
	snprintf(buf, cap, "%s", v);
	explicit_bzero(v, strlen(v));
}

/*
 * Status of one endpoint into *m (m->answered false, err saying why, when it did not answer),
 * with its store revision and database size. With want_token and a password (spec.auth), a
 * voter's token for the snapshot stream lands in token ("" when etcd has no auth on); a
 * refused password counts as no answer.
 */
static void probe_member(const struct opts *o, const char *endpoint, const char *password,
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
 * (agent/trust.h); false when no endpoint answered as the leader.
 */
static bool find_leader(const struct opts *o, const char *password, struct eo_snap_member *leader,
			const struct eo_log_ctx *lc)
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

static int snapshot_agent_run(const struct opts *o, const char *password, char *token,
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
		fputs(usage_snapshot, stderr);
		return fail(&lc, "invalid arguments",
			    "--snapshot-name, --snapshot-uid and --endpoint are required");
	}
	if (!!o->pvc_dir == !!(o->s3_endpoint || o->s3_bucket))
		return fail(&lc, "invalid arguments",
			    "exactly one destination: --s3-endpoint/--s3-bucket or --pvc-dir");
	if (o->s3_bucket) {
		if (make_s3(o, &s3, err, sizeof(err)) != 0)
			return fail(&lc, "S3 setup failed", err);
		if (eo_snapshot_s3_key(key, sizeof(key), o->s3_key ? o->s3_key : "", o->name) !=
		    0) {
			eo_s3_free(s3);
			return fail(&lc, "invalid arguments", "S3 key too long");
		}
		t.s3 = s3;
		t.key = key;
	} else {
		snprintf(file, sizeof(file), "%s%s", o->name, EO_SNAPSHOT_FILE_SUFFIX);
		t.dir = o->pvc_dir;
		t.name = file;
		/* destination.pvc.subPath need not exist yet on the claim. */
		if (mkdir_p(o->pvc_dir, err, sizeof(err)) != 0)
			return fail(&lc, "cannot create the snapshot directory", err);
	}
	eo_store_uri(&t, uri, sizeof(uri));
	eo_log_ctx_add(&lc, "uri", uri);

	if (eo_store_guard(&t, o->uid, &replace, err, sizeof(err)) != 0) {
		fail(&lc, "refusing to write the snapshot", err);
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
				fail(&lc, "free-space check failed", err);
				goto out;
			}
			if (free_bytes < (uint64_t)db_size + FREE_MARGIN) {
				snprintf(err, sizeof(err),
					 "%s has %llu bytes free; the snapshot needs about %lld: "
					 "give the "
					 "volume more room",
					 o->pvc_dir, (unsigned long long)free_bytes,
					 (long long)db_size);
				fail(&lc, "not enough space for the snapshot", err);
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
			fail(&lc, "cannot start writing", err);
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
		t_stream = mono_ms();
		if (eo_snapshot_fetch(&fo, eo_store_write, &up, &res, err, sizeof(err)) != 0) {
			eo_store_abort(&up);
			eo_log_kv(EO_LOG_WARN, &lc, "snapshot failed; nothing was stored",
				  "endpoint", ep, "error", err, NULL);
			note_skip(skipped, sizeof(skipped), err);
			continue;
		}
		stream_ms = mono_ms() - t_stream;
		if (eo_store_commit(&up, err, sizeof(err)) != 0) {
			eo_store_abort(&up);
			fail(&lc, "storing the snapshot failed; nothing was stored", err);
			goto out;
		}
		commit_ms = mono_ms() - t_stream - stream_ms;
		wait_ms = up.wait_ms;
		eo_store_abort(&up);
		stored = true;
	}
	if (!stored) {
		fail(&lc, "no current voter delivered a complete snapshot", skipped);
		goto out;
	}
	snprintf(sizebuf, sizeof(sizebuf), "%llu", (unsigned long long)res.size);
	snprintf(checksum, sizeof(checksum), "sha256:%s", res.sha256);
	usage_fields(&t0, secs, sizeof(secs), rss, sizeof(rss));
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
	rc = j ? report(o, j, &lc) : fail(&lc, "cannot format the result", "out of memory");
	json_decref(j);
out:
	eo_s3_free(s3);
	return rc;
}

/* The snapshot agent; the password and the token it buys are cleansed on every way out. */
static int snapshot_agent(const struct opts *o)
{
	char password[1100], token[4200];
	int rc;

	take_password(password, sizeof(password));
	rc = snapshot_agent_run(o, password, token, sizeof(token));
	explicit_bzero(password, sizeof(password));
	explicit_bzero(token, sizeof(token));
	return rc;
}

/* ---- restore ------------------------------------------------------------------ */

static bool data_dir_initialised(const char *data_dir)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/member", data_dir);
	return stat(path, &st) == 0;
}

static int mkdir_p(const char *path, char *err, size_t errcap)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
		snprintf(err, errcap, "path too long");
		return -1;
	}
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0750) != 0 && errno != EEXIST)
			goto bad;
		*p = '/';
	}
	if (mkdir(buf, 0750) != 0 && errno != EEXIST)
		goto bad;
	return 0;
bad:
	eo_errf(err, errcap, "mkdir %s: %s", buf, strerror(errno));
	return -1;
}

static int copy_file(const char *src, const char *dstdir, const char *name, char *err,
		     size_t errcap)
{
	struct eo_filestore_writer w;
	char buf[65536];
	ssize_t n;
	int fd;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errcap, "open %s: %s", src, strerror(errno));
		return -1;
	}
	if (eo_filestore_begin(&w, dstdir, name, err, errcap) != 0) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (eo_filestore_write(&w, buf, (size_t)n, err, errcap) != 0)
			goto bad;
	if (n < 0) {
		snprintf(err, errcap, "read %s: %s", src, strerror(errno));
		goto bad;
	}
	if (fchmod(w.fd, 0755) != 0) {
		snprintf(err, errcap, "chmod: %s", strerror(errno));
		goto bad;
	}
	close(fd);
	return eo_filestore_commit(&w, NULL, true, err, errcap);
bad:
	close(fd);
	eo_filestore_abort(&w);
	return -1;
}

/*
 * Copies this binary to DIR/bin and the libraries beside it (PREFIX/lib, as
 * the image lays them out) to DIR/lib, so a container of another image can
 * start it through DIR/lib/ld-linux-*.so.
 */
static int install_self(const char *dir, char *err, size_t errcap)
{
	char exe[PATH_MAX], tmp[PATH_MAX], prefix[PATH_MAX], sub[PATH_MAX], src[PATH_MAX * 2];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(err, errcap, "readlink /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	/* Not in place: snprintf from a buffer into itself is undefined (glibc empties it). */
	snprintf(tmp, sizeof(tmp), "%s", exe);
	snprintf(prefix, sizeof(prefix), "%s", dirname(dirname(tmp)));
	snprintf(sub, sizeof(sub), "%s/bin", dir);
	if (mkdir_p(sub, err, errcap) != 0 ||
	    copy_file(exe, sub, "etcd-operator", err, errcap) != 0)
		return -1;
	snprintf(src, sizeof(src), "%s/lib", prefix);
	d = opendir(src);
	if (!d)
		return 0; /* a development build: the system's libraries */
	snprintf(sub, sizeof(sub), "%s/lib", dir);
	if (mkdir_p(sub, err, errcap) != 0) {
		closedir(d);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(src, sizeof(src), "%s/lib/%s", prefix, de->d_name);
		if (copy_file(src, sub, de->d_name, err, errcap) != 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

struct checked_sink {
	struct eo_snapcheck check;
	struct eo_store_upload *up;
	int write_errno; /* errno of a failed write to the staging file, 0 if none */
};

static int check_and_store(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct checked_sink *c = ud;

	eo_snapcheck_feed(&c->check, p, n);
	errno = 0;
	if (eo_store_write(c->up, p, n, err, errcap) != 0) {
		c->write_errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int need_space(const struct opts *o, const char *dir, uint64_t need, const char *why,
		      struct eo_log_ctx *lc)
{
	uint64_t free_bytes;
	char err[1024];

	if (eo_fs_free_bytes(dir, &free_bytes, err, sizeof(err)) != 0)
		return restore_fail(o, lc, EO_REASON_RESTORE_FAILED, "free-space check failed",
				    err);
	if (free_bytes < need) {
		snprintf(err, sizeof(err),
			 "the data volume has %llu bytes free; %s needs about %llu: make "
			 "spec.storage.size larger and recreate the cluster",
			 (unsigned long long)free_bytes, why, (unsigned long long)need);
		return restore_fail(o, lc, EO_REASON_RESTORE_VOLUME_TOO_SMALL,
				    "restore volume too small", err);
	}
	return 0;
}

/*
 * A restore runs once, before the member joins: a Pod that names the member's etcd ID
 * (--member-id) is one of a member that already joined, and restoring the old snapshot there
 * would start a second cluster under the same IDs. Refuse (fail closed).
 */
static int refuse_joined(const struct opts *o, const struct eo_log_ctx *lc)
{
	char err[256];

	snprintf(err, sizeof(err),
		 "the member already joined etcd as member %.64s; a restore never runs again "
		 "on it (its lost data is replaced by a new member, not by the old snapshot)",
		 o->member_id);
	return restore_fail(o, lc, EO_REASON_RESTORE_FAILED, "refusing to restore", err);
}

static int restore_agent(const struct opts *o)
{
	struct eo_log_ctx lc;
	struct eo_store_target t = {0};
	struct eo_store_upload up = {0};
	struct checked_sink cs = {.up = &up};
	struct eo_s3_head h;
	enum eo_snapcheck_result v;
	eo_s3 *s3 = NULL;
	char err[2048], uri[2048], sha[EO_SNAP_SHA_HEX_LEN + 1], checksum[80], staged[PATH_MAX];
	char secs[32], rss[32], why[512];
	struct timespec t0;
	uint64_t size = 0, got;
	int rc = 1;
	json_t *j;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	eo_log_ctx_init(&lc);
	eo_log_ctx_add(&lc, "component", "restore-agent");
	if (!o->data_dir || !o->staging_dir) {
		fputs(usage_restore, stderr);
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
				    "--data-dir and --staging-dir are required");
	}
	if (!!o->file == !!(o->s3_endpoint || o->s3_bucket) || (o->s3_bucket && !o->s3_key)) {
		fputs(usage_restore, stderr);
		return restore_fail(
		    o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
		    "exactly one source: --s3-endpoint/--s3-bucket/--s3-key or --file");
	}
	if (o->member_id && o->member_id[0])
		return refuse_joined(o, &lc);
	if (o->expected_checksum && !eo_snapshot_checksum_well_formed(o->expected_checksum)) {
		eo_errf(err, sizeof(err),
			"--expected-checksum %.100s: want sha256:<64 lower-case hex>",
			o->expected_checksum);
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments", err);
	}
	if (o->install_self && install_self(o->install_self, err, sizeof(err)) != 0)
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				    "cannot install the agent for the rebuild step", err);
	if (data_dir_initialised(o->data_dir)) {
		eo_log_kv(EO_LOG_INFO, &lc, "the data dir is already initialised; nothing to do",
			  "data_dir", o->data_dir, NULL);
		return 0;
	}
	if (mkdir_p(o->data_dir, err, sizeof(err)) != 0)
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot create the data dir",
				    err);
	snprintf(staged, sizeof(staged), "%s/%s", o->staging_dir, STAGED_NAME);
	if (o->file) {
		/* A PVC source: verify in place; only the rebuild takes data-volume space. */
		struct stat fst;
		bool have_stat = stat(o->file, &fst) == 0;

		eo_log_ctx_add(&lc, "source", o->file);

		if (!have_stat && (errno == ENOENT || errno == ENOTDIR)) {
			eo_errf(err, sizeof(err), "%s does not exist on the source claim", o->file);
			return restore_fail(o, &lc, EO_REASON_RESTORE_OBJECT_MISSING,
					    "restore object missing", err);
		}
		/* Cheap check first: too small a volume fails before the file is hashed. */
		if (have_stat && need_space(o, o->data_dir, (uint64_t)fst.st_size + FREE_MARGIN,
					    "rebuilding the data dir", &lc) != 0)
			return 1;
		v = eo_snapcheck_file(o->file, &size, sha, err, sizeof(err));
		if (v == EO_SNAPCHECK_ERROR)
			return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					    "cannot read the snapshot", err);
		if (v != EO_SNAPCHECK_OK) {
			eo_errf(err, sizeof(err), "%s: %s", o->file, eo_snapcheck_strerror(v));
			return restore_fail(o, &lc, EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
					    "the snapshot is not usable; etcd will not start on it",
					    err);
		}
		if (eo_checksum_check(o->expected_checksum, sha, why, sizeof(why)) != 0) {
			eo_errf(err, sizeof(err), "%s: %s", o->file, why);
			return restore_fail(o, &lc, EO_REASON_RESTORE_CHECKSUM_MISMATCH,
					    "the snapshot is not the expected one; etcd will not "
					    "start on it",
					    err);
		}
		snprintf(staged, sizeof(staged), "%s", o->file);
		snprintf(uri, sizeof(uri), "file://%s", o->file);
		goto done;
	}
	/* Unreadable credentials are the Secret's fault; a bad endpoint or bucket is not. */
	switch (make_s3(o, &s3, err, sizeof(err))) {
	case 0:
		break;
	case -1:
		return restore_fail(o, &lc, EO_REASON_RESTORE_ACCESS_DENIED,
				    "cannot read the S3 credentials", err);
	default:
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "S3 setup failed", err);
	}
	eo_s3_uri(s3, o->s3_key, uri, sizeof(uri));
	eo_log_ctx_add(&lc, "source", uri);
	if (eo_s3_head(s3, o->s3_key, &h, err, sizeof(err)) != 0) {
		restore_fail(o, &lc,
			     h.status == 401 || h.status == 403
				 ? EO_REASON_RESTORE_ACCESS_DENIED
				 : EO_REASON_RESTORE_SOURCE_UNREACHABLE,
			     "cannot look up the snapshot", err);
		goto out;
	}
	if (!h.exists) {
		eo_errf(err, sizeof(err), "%s does not exist (HeadObject answered 404)", uri);
		restore_fail(o, &lc, EO_REASON_RESTORE_OBJECT_MISSING, "restore object missing",
			     err);
		goto out;
	}
	if (mkdir_p(o->staging_dir, err, sizeof(err)) != 0) {
		restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
			     "cannot create the staging directory", err);
		goto out;
	}
	if (need_space(o, o->staging_dir, 2 * h.size + FREE_MARGIN,
		       "staging the snapshot and rebuilding the data dir (2x the snapshot)",
		       &lc) != 0)
		goto out;
	t.dir = o->staging_dir;
	t.name = STAGED_NAME;
	if (eo_snapcheck_init(&cs.check) != 0) {
		restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot set up SHA-256", "OpenSSL");
		goto out;
	}
	if (eo_store_open(&up, &t, NULL, true, 0, 0, err, sizeof(err)) != 0) {
		restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot stage the snapshot", err);
		goto out_check;
	}
	if (eo_s3_get(s3, o->s3_key, check_and_store, &cs, &got, err, sizeof(err)) != 0) {
		restore_fail(o, &lc,
			     cs.write_errno == ENOSPC || cs.write_errno == EDQUOT
				 ? EO_REASON_RESTORE_VOLUME_TOO_SMALL
			     : cs.write_errno != 0 ? EO_REASON_RESTORE_FAILED
						   : EO_REASON_RESTORE_SOURCE_UNREACHABLE,
			     "downloading the snapshot failed", err);
		goto out_abort;
	}
	v = eo_snapcheck_finish(&cs.check, sha);
	if (v != EO_SNAPCHECK_OK) {
		eo_errf(err, sizeof(err), "%s: %s", uri, eo_snapcheck_strerror(v));
		restore_fail(o, &lc, EO_REASON_RESTORE_SNAPSHOT_CORRUPT,
			     "the snapshot is not usable; etcd will not start on it", err);
		goto out_abort;
	}
	if (eo_checksum_check(o->expected_checksum, sha, why, sizeof(why)) != 0) {
		eo_errf(err, sizeof(err), "%s: %s", uri, why);
		restore_fail(o, &lc, EO_REASON_RESTORE_CHECKSUM_MISMATCH,
			     "the snapshot is not the expected one; etcd will not start on it",
			     err);
		goto out_abort;
	}
	if (eo_store_commit(&up, err, sizeof(err)) != 0) {
		restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "staging the snapshot failed", err);
		goto out_abort;
	}
	size = got;
	eo_store_abort(&up);
	eo_snapcheck_free(&cs.check);
done:
	snprintf(checksum, sizeof(checksum), "sha256:%s", sha);
	usage_fields(&t0, secs, sizeof(secs), rss, sizeof(rss));
	eo_log_kv(EO_LOG_INFO, &lc, "snapshot staged and verified", "staged", staged, "checksum",
		  checksum, "seconds", secs, "peak_rss_kb", rss, NULL);
	j = json_pack("{s:s, s:s, s:I, s:s}", "uri", uri, "staged", staged, "sizeBytes",
		      (json_int_t)size, "checksum", checksum);
	rc = j ? report(o, j, &lc) : fail(&lc, "cannot format the result", "out of memory");
	json_decref(j);
	goto out;
out_abort:
	eo_store_abort(&up);
out_check:
	eo_snapcheck_free(&cs.check);
out:
	eo_s3_free(s3);
	return rc;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

static int rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int restore_rebuild(const struct opts *o)
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
		fputs(usage_rebuild, stderr);
		return restore_fail(
		    o, &lc, EO_REASON_RESTORE_FAILED, "invalid arguments",
		    "--data-dir, --staging-dir, --name, --initial-cluster, "
		    "--initial-cluster-token and --initial-advertise-peer-urls are required");
	}
	if (o->member_id && o->member_id[0])
		return refuse_joined(o, &lc);
	if (data_dir_initialised(o->data_dir)) {
		eo_log_kv(EO_LOG_INFO, &lc, "the data dir is already initialised; nothing to do",
			  "data_dir", o->data_dir, NULL);
		if (!o->file)
			rm_rf(o->staging_dir);
		return 0;
	}
	snprintf(src, sizeof(src), "%s", o->file ? o->file : "");
	if (!o->file)
		snprintf(src, sizeof(src), "%s/%s", o->staging_dir, STAGED_NAME);
	if (stat(src, &st) != 0) {
		eo_errf(err, sizeof(err), "%s: %s (the restore step should have staged it)", src,
			strerror(errno));
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "no snapshot to restore",
				    err);
	}
	if (mkdir_p(o->staging_dir, err, sizeof(err)) != 0)
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				    "cannot create the staging directory", err);
	snprintf(rebuild, sizeof(rebuild), "%s/%s", o->staging_dir, REBUILD_NAME);
	if (rm_rf(rebuild) != 0) {
		eo_errf(err, sizeof(err), "remove %s: %s", rebuild, strerror(errno));
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
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
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot run etcdutl", err);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
					    "waiting for etcdutl failed", strerror(errno));
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, sizeof(err), "etcdutl snapshot restore exited with %s %d",
			 WIFEXITED(status) ? "status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		rm_rf(rebuild);
		return restore_fail(o, &lc, EO_REASON_RESTORE_REBUILD_FAILED,
				    "rebuilding the data dir failed", err);
	}
	eo_errf(from, sizeof(from), "%s/member", rebuild);
	snprintf(to, sizeof(to), "%s/member", o->data_dir);
	if (mkdir_p(o->data_dir, err, sizeof(err)) != 0)
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED, "cannot create the data dir",
				    err);
	if (eo_fsync_dir(from) != 0 || rename(from, to) != 0 || eo_fsync_dir(o->data_dir) != 0) {
		eo_errf(err, sizeof(err), "move %s to %s: %s", from, to, strerror(errno));
		return restore_fail(o, &lc, EO_REASON_RESTORE_FAILED,
				    "cannot put the rebuilt data dir in place", err);
	}
	rm_rf(rebuild);
	if (!o->file)
		rm_rf(o->staging_dir);
	else
		rmdir(o->staging_dir); /* only when empty: nothing else of ours is there */
	eo_log_kv(EO_LOG_INFO, &lc, "data dir rebuilt from the snapshot", "data_dir", o->data_dir,
		  NULL);
	return 0;
}

/* ---- prune (agent/prune.h) ------------------------------------------------------ */

static int prune_agent(const struct opts *o)
{
	struct eo_log_ctx lc;
	char msg[2048], err[1024], key[1400];
	eo_s3 *s3 = NULL;
	int rc;

	if (!o->name || !o->name[0] || strchr(o->name, '/') || strlen(o->name) > 200 || !o->uid ||
	    !o->uid[0] || strlen(o->uid) >= EO_S3_UID_MAX) {
		fprintf(stderr,
			"etcd-operator: --snapshot-name and --snapshot-uid are required\n%s",
			usage_prune);
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
	} else if (make_s3(o, &s3, err, sizeof(err)) != 0) {
		eo_errf(msg, sizeof(msg), "S3 setup: %s", err);
		rc = -1;
	} else {
		rc = eo_prune_s3(s3, key, o->uid, msg, sizeof(msg));
	}
	eo_s3_free(s3);
	write_termination_log(o, msg, &lc);
	if (rc != 0)
		return fail(&lc, "prune failed", msg);
	eo_log_kv(EO_LOG_INFO, &lc, "prune done", "result", msg, NULL);
	printf("%s\n", msg);
	fflush(stdout);
	return 0;
}

int eo_agent_main(int argc, char **argv)
{
	int (*run)(const struct opts *) = NULL;
	const char *usage = NULL;
	struct opts o;
	int rc;

	if (argc < 2)
		return -1;
	if (strcmp(argv[1], "adopt-data") == 0) /* agent/adopt.h */
		return eo_agent_adopt_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "data-guard") == 0) /* agent/dataguard.h */
		return eo_agent_data_guard_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "snapshot-agent") == 0) {
		run = snapshot_agent;
		usage = usage_snapshot;
	} else if (strcmp(argv[1], "restore-agent") == 0) {
		run = restore_agent;
		usage = usage_restore;
	} else if (strcmp(argv[1], "restore-rebuild") == 0) {
		run = restore_rebuild;
		usage = usage_rebuild;
	} else if (strcmp(argv[1], "snapshot-prune") == 0) {
		run = prune_agent;
		usage = usage_prune;
	} else {
		return -1;
	}
	rc = parse_opts(argc - 1, argv + 1, &o, usage);
	if (rc >= 0)
		return rc;
	if ((o.data_dir && strlen(o.data_dir) > 1024) ||
	    (o.staging_dir && strlen(o.staging_dir) > 1024) || (o.file && strlen(o.file) > 1024) ||
	    (o.pvc_dir && strlen(o.pvc_dir) > 1024)) {
		fprintf(stderr, "etcd-operator: paths must be at most 1024 bytes long\n");
		return 2;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "etcd-operator: curl_global_init failed\n");
		return 1;
	}
	eo_log_kv(EO_LOG_INFO, NULL, "agent starting", "subcommand", argv[1], "version", EO_VERSION,
		  NULL);
	rc = run(&o);
	curl_global_cleanup();
	return rc;
}
