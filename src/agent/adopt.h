/*
 * `etcd-operator adopt-data`: make the data directory of a member adopted from the legacy
 * operator (docs/migration.md) readable by etcd as this operator runs it.
 *
 * The legacy Pods ran etcd as root, so the files on the adopted PVC belong to root with
 * etcd's 0700/0600 modes; this operator's etcd runs as UID/GID 65532, and fsGroup does not
 * reach every volume type (hostPath-backed local volumes). Run as an init container of an
 * adopted member's Pod (root, CAP_CHOWN and CAP_DAC_OVERRIDE only, both admitted by the
 * baseline Pod Security level), it gives every entry under --data-dir (symbolic links
 * themselves, never what they point at; nothing outside the directory's file system) to
 * --uid:--gid. Modes are left alone. Entries that already belong to them are not touched, so
 * every later start is a walk and nothing more.
 */
#ifndef EO_AGENT_ADOPT_H
#define EO_AGENT_ADOPT_H

#include <stddef.h>
#include <sys/types.h>

/* argv[0] is "adopt-data". Returns the process exit code (2 for usage errors). */
int eo_agent_adopt_main(int argc, char **argv);

/*
 * Gives dir and everything under it to uid:gid. 0, or -1 with a message in err; *changed
 * (may be NULL) counts the entries whose owner changed.
 */
int eo_agent_adopt_dir(const char *dir, uid_t uid, gid_t gid, size_t *changed, char *err,
		       size_t errcap);

#endif
