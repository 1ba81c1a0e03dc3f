/*
 * agent/archive.h - `etcd-operator archive-agent`: continuous archiving of a cluster's
 * revisions into a directory (issue 20; archive.c has the layout and the loop), and
 * `etcd-operator archive-replay`: a snapshot file of the archived cluster at a chosen point
 * (replay.c).
 */
#ifndef EO_AGENT_ARCHIVE_H
#define EO_AGENT_ARCHIVE_H

#include <stddef.h>

#include "archive/manifest.h"

/* The subcommand (argv[0] is "archive-agent"): the process exit code. */
int eo_agent_archive_main(int argc, char **argv);

/* The subcommand `archive-replay` (replay.c): the process exit code. */
int eo_agent_replay_main(int argc, char **argv);

/*
 * Reads DIR/manifest.json into *m: 0 (an empty manifest when there is none), -1 with err
 * (unreadable, over EO_ARCHIVE_MANIFEST_BYTES, or refused by the parser).
 */
int eo_agent_archive_load(const char *dir, struct eo_archive_manifest *m, char *err, size_t errcap);

#endif
