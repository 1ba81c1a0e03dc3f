/*
 * The agent subcommands of the operator binary (cli.h): their option table, usage texts,
 * parsing and dispatch. Each subcommand is in its own file (agent/internal.h).
 */
#include "agent/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "agent/adopt.h"
#include "agent/archive.h"
#include "agent/dataguard.h"
#include "agent/internal.h"
#include "agent/waitpeers.h"
#include "api/snapshot.h"
#include "core/version.h"
#include "snapshot/store.h"

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

const char eo__agent_usage_snapshot[] =
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

const char eo__agent_usage_restore[] =
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
    "restore-rebuild step; with no source it does only that (an archive restore, where\n"
    "archive-replay writes STAGING/" STAGED_NAME ").\n";

const char eo__agent_usage_rebuild[] =
    "usage: etcd-operator restore-rebuild --data-dir DIR --staging-dir DIR [--file PATH]\n"
    "         --name N --initial-cluster C --initial-cluster-token T\n"
    "         --initial-advertise-peer-urls U [--etcdutl PATH] [--member-id ID]\n"
    "Refuses when given a member ID. Does nothing when DIR/member exists. Otherwise\n"
    "runs 'etcdutl snapshot restore' on the staged snapshot (or PATH) into\n"
    "STAGING/" REBUILD_NAME ", moves its member directory into DIR and removes the\n"
    "staging directory.\n";

const char eo__agent_usage_prune[] =
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

/* The flags that only set a string, and the path flags that must not contain "..". */
static const struct {
	int code;
	size_t off;
	const char *no_dot_dot; /* the flag's name when checked, else NULL */
} str_opts[] = {
    {O_CACERT, offsetof(struct eo__agent_opts, cacert), NULL},
    {O_CERT, offsetof(struct eo__agent_opts, cert), NULL},
    {O_KEY, offsetof(struct eo__agent_opts, key), NULL},
    {O_NAME, offsetof(struct eo__agent_opts, name), NULL},
    {O_UID, offsetof(struct eo__agent_opts, uid), NULL},
    {O_S3_ENDPOINT, offsetof(struct eo__agent_opts, s3_endpoint), NULL},
    {O_S3_BUCKET, offsetof(struct eo__agent_opts, s3_bucket), NULL},
    {O_S3_KEY, offsetof(struct eo__agent_opts, s3_key), "--s3-key"},
    {O_S3_REGION, offsetof(struct eo__agent_opts, s3_region), NULL},
    {O_S3_CA, offsetof(struct eo__agent_opts, s3_ca), NULL},
    {O_EXPECTED_CHECKSUM, offsetof(struct eo__agent_opts, expected_checksum), NULL},
    {O_CRED_DIR, offsetof(struct eo__agent_opts, cred_dir), NULL},
    {O_PVC_DIR, offsetof(struct eo__agent_opts, pvc_dir), "--pvc-dir"},
    {O_TERMLOG, offsetof(struct eo__agent_opts, termination_log), NULL},
    {O_DATA_DIR, offsetof(struct eo__agent_opts, data_dir), NULL},
    {O_STAGING_DIR, offsetof(struct eo__agent_opts, staging_dir), NULL},
    {O_FILE, offsetof(struct eo__agent_opts, file), "--file"},
    {O_INSTALL_SELF, offsetof(struct eo__agent_opts, install_self), NULL},
    {O_ETCDUTL, offsetof(struct eo__agent_opts, etcdutl), NULL},
    {O_MEMBER_NAME, offsetof(struct eo__agent_opts, member_name), NULL},
    {O_INITIAL_CLUSTER, offsetof(struct eo__agent_opts, initial_cluster), NULL},
    {O_CLUSTER_TOKEN, offsetof(struct eo__agent_opts, cluster_token), NULL},
    {O_PEER_URL, offsetof(struct eo__agent_opts, peer_url), NULL},
    {O_MEMBER_ID, offsetof(struct eo__agent_opts, member_id), NULL},
};

/* A string flag of str_opts: 0 when set, 2 when refused, -1 when c is not one of them. */
static int set_str_opt(struct eo__agent_opts *o, int c, const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(str_opts) / sizeof(str_opts[0]); i++) {
		if (str_opts[i].code != c)
			continue;
		if (str_opts[i].no_dot_dot && eo_path_has_dot_dot(v))
			return dot_dot(str_opts[i].no_dot_dot);
		*(const char **)((char *)o + str_opts[i].off) = v;
		return 0;
	}
	return -1;
}

/* The flags with a number or a count: 0 when set, 2 when refused, -1 when c is none of them. */
static int set_num_opt(struct eo__agent_opts *o, int c, const char *v)
{
	char *end;

	switch (c) {
	case O_ENDPOINT:
		if (o->nendpoints == MAX_ENDPOINTS) {
			fprintf(stderr, "etcd-operator: at most %d --endpoint\n", MAX_ENDPOINTS);
			return 2;
		}
		o->endpoints[o->nendpoints++] = v;
		return 0;
	case O_S3_PART_SIZE:
		errno = 0;
		o->part_size = strtoull(v, &end, 10);
		if (errno || *end || o->part_size < EO_S3_MIN_PART ||
		    o->part_size > EO_S3_MAX_PART) {
			fprintf(stderr,
				"etcd-operator: --s3-part-size must be a byte count between "
				"%llu and %llu\n",
				(unsigned long long)EO_S3_MIN_PART,
				(unsigned long long)EO_S3_MAX_PART);
			return 2;
		}
		return 0;
	case O_S3_PARALLEL:
		errno = 0;
		o->parallel = (unsigned)strtoul(v, &end, 10);
		if (errno || *end || o->parallel < 1 || o->parallel > EO_STORE_MAX_PARALLEL) {
			fprintf(stderr, "etcd-operator: --s3-parallel must be between 1 and %d\n",
				EO_STORE_MAX_PARALLEL);
			return 2;
		}
		return 0;
	case O_STALL:
		o->stall_s = strtol(v, &end, 10);
		if (*end || o->stall_s <= 0) {
			fprintf(stderr, "etcd-operator: --stall-timeout must be seconds > 0\n");
			return 2;
		}
		return 0;
	default:
		return -1;
	}
}

static int parse_opts(int argc, char **argv, struct eo__agent_opts *o, const char *usage)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->etcdutl = "etcdutl";
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "", all_options, NULL)) != -1) {
		switch (c) {
		case O_S3_PATH_STYLE:
			o->path_style = true;
			break;
		case O_S3_INSECURE:
			o->s3_insecure = true;
			break;
		case O_HELP:
			fputs(usage, stdout);
			return 0;
		default:
			rc = set_str_opt(o, c, optarg);
			if (rc < 0)
				rc = set_num_opt(o, c, optarg);
			if (rc > 0)
				return rc;
			if (rc < 0) {
				fputs(usage, stderr);
				return 2;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "etcd-operator: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	return -1;
}

int eo_agent_main(int argc, char **argv)
{
	int (*run)(const struct eo__agent_opts *) = NULL;
	const char *usage = NULL;
	struct eo__agent_opts o;
	int rc;

	if (argc < 2)
		return -1;
	if (strcmp(argv[1], "adopt-data") == 0) /* agent/adopt.h */
		return eo_agent_adopt_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "data-guard") == 0) /* agent/dataguard.h */
		return eo_agent_data_guard_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "wait-peers") == 0) /* agent/waitpeers.h */
		return eo_agent_wait_peers_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "archive-agent") == 0) /* agent/archive.h */
		return eo_agent_archive_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "archive-replay") == 0) /* agent/archive.h */
		return eo_agent_replay_main(argc - 1, argv + 1);
	if (strcmp(argv[1], "snapshot-agent") == 0) {
		run = eo__agent_snapshot;
		usage = eo__agent_usage_snapshot;
	} else if (strcmp(argv[1], "restore-agent") == 0) {
		run = eo__agent_restore;
		usage = eo__agent_usage_restore;
	} else if (strcmp(argv[1], "restore-rebuild") == 0) {
		run = eo__agent_rebuild;
		usage = eo__agent_usage_rebuild;
	} else if (strcmp(argv[1], "snapshot-prune") == 0) {
		run = eo__agent_prune;
		usage = eo__agent_usage_prune;
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
