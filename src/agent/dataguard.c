/* `etcd-operator data-guard` (dataguard.h). */
#include "agent/dataguard.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/internal.h"
#include "core/util.h"

#define PATH_CAP 1100

static bool wal_name(const char *n)
{
	size_t len = strlen(n);

	return len > 4 && strcmp(n + len - 4, ".wal") == 0;
}

enum eo_data_wal eo_data_guard_probe(const char *data_dir, char *err, size_t errcap)
{
	char path[PATH_CAP];
	struct dirent *e = NULL;
	DIR *d = NULL;
	bool found = false;

	if (err != NULL && errcap > 0)
		err[0] = '\0';
	if (!eo_present(data_dir) ||
	    snprintf(path, sizeof(path), "%s/member/wal", data_dir) >= (int)sizeof(path)) {
		if (err != NULL)
			snprintf(err, errcap, "bad data dir");
		return EO_DATA_WAL_UNKNOWN;
	}
	if ((d = opendir(path)) == NULL) {
		if (errno == ENOENT || errno == ENOTDIR)
			return EO_DATA_WAL_ABSENT;
		if (err != NULL)
			snprintf(err, errcap, "%s: %s", path, strerror(errno));
		return EO_DATA_WAL_UNKNOWN;
	}
	errno = 0;
	while (!found && (e = readdir(d)) != NULL)
		found = wal_name(e->d_name);
	if (!found && errno != 0) {
		if (err != NULL)
			snprintf(err, errcap, "%s: %s", path, strerror(errno));
		closedir(d);
		return EO_DATA_WAL_UNKNOWN;
	}
	closedir(d);
	return found ? EO_DATA_WAL_PRESENT : EO_DATA_WAL_ABSENT;
}

enum eo_data_guard_decision eo_data_guard_decide(const char *member, const char *member_id,
						 const char *data_dir, enum eo_data_wal wal,
						 const char *detail, char *msg, size_t cap)
{
	const char *m = eo_present(member) ? member : "(unnamed)";

	if (msg != NULL && cap > 0)
		msg[0] = '\0';
	if (!eo_present(member_id) || wal == EO_DATA_WAL_PRESENT)
		return EO_DATA_GUARD_START;
	if (wal == EO_DATA_WAL_ABSENT) {
		if (msg != NULL)
			snprintf(
			    msg, cap,
			    "data directory has no WAL: member %s (etcd member ID %s) finds no "
			    "write-ahead log under %s/member/wal; it never starts under its "
			    "member ID without its data (the operator replaces it)",
			    m, member_id, data_dir ? data_dir : "");
		return EO_DATA_GUARD_REFUSE_NO_WAL;
	}
	if (msg != NULL)
		snprintf(msg, cap,
			 "cannot read the data directory of member %s (etcd member ID %s): %s; "
			 "refusing to start etcd until it can be checked",
			 m, member_id, eo_present(detail) ? detail : "unknown error");
	return EO_DATA_GUARD_REFUSE_UNKNOWN;
}

static void termination_log(const char *path, const char *msg)
{
	FILE *f = NULL;

	if (!eo_present(path) || (f = fopen(path, "w")) == NULL)
		return;
	fprintf(f, "%s\n", msg);
	fclose(f);
}

int eo_agent_data_guard_main(int argc, char **argv)
{
	static const char usage[] =
	    "usage: etcd-operator data-guard --data-dir DIR [--member-id ID] [--name MEMBER]\n"
	    "         [--termination-log PATH]\n"
	    "With a member ID, refuses (exit 3) when DIR/member/wal holds no *.wal file: a\n"
	    "member etcd knows never starts without its data. Without one, does nothing.\n";
	const char *dir = NULL, *id = NULL, *name = NULL, *tlog = NULL;
	char msg[1600], err[1200] = "";
	enum eo_data_wal wal;
	const struct eo__agent_flag flags[] = {{"--data-dir", &dir},
					       {"--member-id", &id},
					       {"--name", &name},
					       {"--termination-log", &tlog}};
	int rc;

	rc = eo__agent_flags(argc, argv, flags, sizeof(flags) / sizeof(flags[0]), true, usage);
	if (rc >= 0)
		return rc;
	if (!eo_present(dir) || strlen(dir) > 1024 || (id != NULL && strlen(id) > 64) ||
	    (name != NULL && strlen(name) > 253)) {
		fputs(usage, stderr);
		return 2;
	}
	wal = eo_present(id) ? eo_data_guard_probe(dir, err, sizeof(err)) : EO_DATA_WAL_ABSENT;
	switch (eo_data_guard_decide(name, id, dir, wal, err, msg, sizeof(msg))) {
	case EO_DATA_GUARD_START:
		printf("data-guard: %s: %s\n", dir,
		       eo_present(id) ? "the write-ahead log is there; starting"
				      : "no member ID (the member has not joined yet); starting");
		return 0;
	case EO_DATA_GUARD_REFUSE_NO_WAL:
		fprintf(stderr, "data-guard: %s\n", msg);
		termination_log(tlog, msg);
		return EO_DATA_GUARD_EXIT_NO_WAL;
	case EO_DATA_GUARD_REFUSE_UNKNOWN:
		break;
	}
	fprintf(stderr, "data-guard: %s\n", msg);
	termination_log(tlog, msg);
	return 1;
}
