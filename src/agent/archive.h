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

/*
 * GET /status of `archive-agent --status-addr :PORT` (what the operator polls, read-only; the
 * operator's archiver listens on EO_ARCHIVE_STATUS_PORT, snapshot/contract.h):
 *
 *   {"clusterRevision": newest header revision the watch saw,
 *    "archivedRevision": newest revision the manifest lists,
 *    "lagRevisions": clusterRevision - archivedRevision (>= 0),
 *    "lagSeconds": age of the oldest received revision not yet listed (0: none waits),
 *    "lastUploadMs": Unix ms the last segment or base was listed (0: none this run),
 *    "startedMs": Unix ms the run began, "bases", "segments", "gaps": counts,
 *    "error": "" or why the run is failing,
 *    "window": {"fromRevision","fromMs","toRevision","toMs"}  (absent: nothing recoverable)}
 */
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
