/*
 * Unit tests for snapshot/prune.c, the PVC half of `etcd-operator snapshot-prune`: one table
 * row per state of <dir>/<name>.db and its .uid stamp, in a temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "support/tu_main.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cli.h"
#include "snapshot/prune.h"

struct row {
	const char *what;
	const char *data;  /* content of snap.db, NULL: absent */
	const char *stamp; /* content of snap.db.uid, NULL: absent */
	int rc;
	const char *msg; /* substring of the message */
	bool data_left, stamp_left;
};

static const struct row rows[] = {
    {"ours: file and stamp deleted", "db", "uid-1\n", 0, "deleted file://", false, false},
    {"another snapshot's stamp: kept", "db", "uid-2\n", 0, "another snapshot's UID", true, true},
    {"no stamp: kept", "db", NULL, 0, "has no UID stamp", true, false},
    {"nothing stored", NULL, NULL, 0, "nothing stored", false, false},
    {"our orphan stamp (an earlier prune stopped): removed", NULL, "uid-1", 0, "stamp removed",
     false, false},
    {"a foreign orphan stamp: left", NULL, "uid-2", 0, "nothing stored", false, true},
};

static void put(const char *dir, const char *file, const char *content)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static bool exists(const char *dir, const char *file)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return stat(path, &st) == 0;
}

static void test_prune_file(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[] = "/tmp/eo-prune-XXXXXX", msg[1024] = "", path[512];
		int rc;

		assert_non_null(mkdtemp(dir));
		put(dir, "other.db", "keep me");
		if (rows[i].data != NULL)
			put(dir, "snap.db", rows[i].data);
		if (rows[i].stamp != NULL)
			put(dir, "snap.db.uid", rows[i].stamp);
		rc = eo_prune_file(dir, "snap", "uid-1", msg, sizeof(msg));
		if (rc != rows[i].rc || strstr(msg, rows[i].msg) == NULL)
			fail_msg("%s: rc %d msg '%s'", rows[i].what, rc, msg);
		if (exists(dir, "snap.db") != rows[i].data_left ||
		    exists(dir, "snap.db.uid") != rows[i].stamp_left)
			fail_msg("%s: data %d stamp %d left", rows[i].what, exists(dir, "snap.db"),
				 exists(dir, "snap.db.uid"));
		assert_true(exists(dir, "other.db")); /* nothing else is touched */
		unlink((snprintf(path, sizeof(path), "%s/snap.db", dir), path));
		unlink((snprintf(path, sizeof(path), "%s/snap.db.uid", dir), path));
		unlink((snprintf(path, sizeof(path), "%s/other.db", dir), path));
		assert_int_equal(rmdir(dir), 0);
	}
}

static void test_prune_file_bad_args(void **state)
{
	char msg[256];

	(void)state;
	assert_int_equal(eo_prune_file("/tmp", "../x", "u", msg, sizeof(msg)), -1);
	assert_int_equal(eo_prune_file("/tmp", "", "u", msg, sizeof(msg)), -1);
	assert_int_equal(eo_prune_file("/tmp", "x", "", msg, sizeof(msg)), -1);
	assert_int_equal(eo_prune_file("/nonexistent-eo-dir", "x", "u", msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "nothing stored"));
}

static void test_usage(void **state)
{
	char *a1[] = {"etcd-operator", "snapshot-prune", "--snapshot-name", "x", NULL};
	char *a2[] = {
	    "etcd-operator", "snapshot-prune", "--snapshot-name", "x", "--snapshot-uid", "u", NULL};
	char *a3[] = {"etcd-operator",
		      "snapshot-prune",
		      "--snapshot-name",
		      "x",
		      "--snapshot-uid",
		      "u",
		      "--pvc-dir",
		      "/tmp",
		      "--s3-bucket",
		      "b",
		      NULL};

	(void)state;
	/* Through the shared agent entry point, like the Job runs it. */
	assert_int_equal(eo_agent_main(4, a1), 2);
	assert_int_equal(eo_agent_main(6, a2), 2);  /* no destination */
	assert_int_equal(eo_agent_main(10, a3), 2); /* two destinations */
}

TU_MAIN(test_prune_file, test_prune_file_bad_args, test_usage)
