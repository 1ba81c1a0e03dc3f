/* `etcd-operator adopt-data` (src/agent/adopt.c): a data tree given to etcd's user. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/tu_main.h"

#include "agent/adopt.h"
#include "agent/internal.h"

static char root[64];

static void path(char *buf, size_t n, const char *rel)
{
	snprintf(buf, n, "%s/%s", root, rel);
}

static void owner(const char *rel, uid_t *u, gid_t *g)
{
	char p[256];
	struct stat st;

	path(p, sizeof(p), rel);
	assert_int_equal(lstat(p, &st), 0);
	*u = st.st_uid;
	*g = st.st_gid;
}

/* member/snap/db, member/wal/0.wal and a link pointing outside the tree */
static void make_tree(void)
{
	char p[256];
	FILE *f = NULL;

	snprintf(root, sizeof(root), "/tmp/eo-adopt-XXXXXX");
	assert_non_null(mkdtemp(root));
	path(p, sizeof(p), "member");
	assert_int_equal(mkdir(p, 0700), 0);
	path(p, sizeof(p), "member/snap");
	assert_int_equal(mkdir(p, 0700), 0);
	path(p, sizeof(p), "member/wal");
	assert_int_equal(mkdir(p, 0700), 0);
	path(p, sizeof(p), "member/snap/db");
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	path(p, sizeof(p), "member/wal/0.wal");
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	path(p, sizeof(p), "member/outside");
	assert_int_equal(symlink("/etc/hostname", p), 0);
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_gives_tree(void **state)
{
	char err[256];
	size_t changed = 99;
	uid_t u;
	gid_t g;
	struct stat etc;

	(void)state;
	make_tree();
	/* already the owner's: nothing to change */
	assert_int_equal(eo_agent_adopt_dir(root, getuid(), getgid(), &changed, err, sizeof(err)),
			 0);
	assert_int_equal(changed, 0);
	assert_int_equal(stat("/etc/hostname", &etc), 0);
	if (geteuid() == 0) {
		assert_int_equal(eo_agent_adopt_dir(root, 65532, 65532, &changed, err, sizeof(err)),
				 0);
		assert_int_equal(changed, 7); /* root, member, snap, wal, db, 0.wal, the link */
		owner("member/wal/0.wal", &u, &g);
		assert_int_equal(u, 65532);
		assert_int_equal(g, 65532);
		owner("member/outside", &u, &g);
		assert_int_equal(u, 65532);
		/* the link's target is not touched */
		{
			struct stat now;

			assert_int_equal(stat("/etc/hostname", &now), 0);
			assert_int_equal(now.st_uid, etc.st_uid);
		}
		/* a second start: nothing left to do */
		assert_int_equal(eo_agent_adopt_dir(root, 65532, 65532, &changed, err, sizeof(err)),
				 0);
		assert_int_equal(changed, 0);
	} else {
		/* without CAP_CHOWN the walk stops at the first entry and says so */
		assert_int_equal(eo_agent_adopt_dir(root, 65532, 65532, &changed, err, sizeof(err)),
				 -1);
		assert_non_null(strstr(err, "chown"));
	}
	remove_tree();
}

static void test_bad_input(void **state)
{
	char err[256];
	char *argv_missing[] = {"adopt-data", "--data-dir", "/tmp", "--uid", "1", NULL};
	char *argv_bad[] = {"adopt-data", "--data-dir", "/tmp", "--uid", "x", "--gid", "1", NULL};

	(void)state;
	assert_int_equal(eo_agent_adopt_dir("/nonexistent/eo", 1, 1, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is not a directory"));
	assert_int_equal(eo_agent_adopt_dir("/etc/hostname", 1, 1, NULL, err, sizeof(err)), -1);
	assert_int_equal(eo_agent_adopt_main(5, argv_missing), 2);
	assert_int_equal(eo_agent_adopt_main(7, argv_bad), 2);
}

/* eo__agent_flags: the small subcommands' "--flag VALUE" parser. */
static void test_flag_pairs(void **state)
{
	const char *dir = NULL, *uid = NULL;
	const struct eo__agent_flag flags[] = {{"--data-dir", &dir}, {"--uid", &uid}};
	char *ok[] = {"x", "--uid", "7", "--data-dir", "/d"};
	char *help[] = {"x", "--help"};
	char *unknown[] = {"x", "--gid", "1"};
	char *bare[] = {"x", "--uid"};

	(void)state;
	assert_int_equal(eo__agent_flags(5, ok, flags, 2, true, "u\n"), -1);
	assert_string_equal(dir, "/d");
	assert_string_equal(uid, "7");
	assert_int_equal(eo__agent_flags(2, help, flags, 2, true, "u\n"), 0);
	assert_int_equal(eo__agent_flags(2, help, flags, 2, false, "u\n"), 2);
	assert_int_equal(eo__agent_flags(3, unknown, flags, 2, true, "u\n"), 2);
	assert_int_equal(eo__agent_flags(2, bare, flags, 2, true, "u\n"), 2);
}

TU_MAIN(test_gives_tree, test_bad_input, test_flag_pairs)
