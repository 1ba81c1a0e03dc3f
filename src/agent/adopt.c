/* `etcd-operator adopt-data` (adopt.h). */
#include "agent/adopt.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/internal.h"

/* nftw() passes no user data: the walk's state, one walk at a time (a one-shot command). */
static struct {
	uid_t uid;
	gid_t gid;
	size_t changed;
	char *err;
	size_t errcap;
} walk;

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		snprintf(walk.err, walk.errcap, "cannot read %s", path);
		return -1;
	}
	if (st->st_uid == walk.uid && st->st_gid == walk.gid)
		return 0;
	if (lchown(path, walk.uid, walk.gid) != 0) {
		snprintf(walk.err, walk.errcap, "chown %s: %s", path, strerror(errno));
		return -1;
	}
	walk.changed++;
	return 0;
}

int eo_agent_adopt_dir(const char *dir, uid_t uid, gid_t gid, size_t *changed, char *err,
		       size_t errcap)
{
	struct stat st;
	int rc;

	if (err != NULL && errcap > 0)
		err[0] = '\0';
	if (dir == NULL || dir[0] == '\0' || err == NULL || errcap == 0)
		return -1;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errcap, "%s is not a directory", dir);
		return -1;
	}
	walk.uid = uid;
	walk.gid = gid;
	walk.changed = 0;
	walk.err = err;
	walk.errcap = errcap;
	rc = nftw(dir, visit, 16, FTW_PHYS | FTW_MOUNT);
	if (changed != NULL)
		*changed = walk.changed;
	if (rc != 0 && err[0] == '\0')
		snprintf(err, errcap, "walking %s: %s", dir, strerror(errno));
	return rc == 0 ? 0 : -1;
}

static int number(const char *s, long *out)
{
	char *end = NULL;

	errno = 0;
	*out = s ? strtol(s, &end, 10) : -1;
	return s != NULL && *s != '\0' && *end == '\0' && errno == 0 && *out >= 0 &&
		       *out <= 0x7fffffffL
		   ? 0
		   : -1;
}

int eo_agent_adopt_main(int argc, char **argv)
{
	static const char usage[] =
	    "usage: etcd-operator adopt-data --data-dir DIR --uid UID --gid GID\n"
	    "Gives DIR and everything under it to UID:GID (docs/migration.md).\n";
	const char *dir = NULL, *uid = NULL, *gid = NULL;
	char err[1200];
	long u = -1, g = -1;
	size_t changed = 0;
	const struct eo__agent_flag flags[] = {
	    {"--data-dir", &dir}, {"--uid", &uid}, {"--gid", &gid}};
	int rc;

	rc = eo__agent_flags(argc, argv, flags, sizeof(flags) / sizeof(flags[0]), false, usage);
	if (rc >= 0)
		return rc;
	if (dir == NULL || strlen(dir) > 1024 || number(uid, &u) != 0 || number(gid, &g) != 0) {
		fputs(usage, stderr);
		return 2;
	}
	if (eo_agent_adopt_dir(dir, (uid_t)u, (gid_t)g, &changed, err, sizeof(err)) != 0) {
		fprintf(stderr, "adopt-data: %s\n", err);
		return 1;
	}
	printf("adopt-data: %s: %zu entr%s given to %ld:%ld\n", dir, changed,
	       changed == 1 ? "y" : "ies", u, g);
	return 0;
}
