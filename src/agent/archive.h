/*
 * agent/archive.h - `etcd-operator archive-agent`: continuous archiving of a cluster's
 * revisions into a directory (issue 20). See archive.c for the layout and the loop.
 */
#ifndef EO_AGENT_ARCHIVE_H
#define EO_AGENT_ARCHIVE_H

/* The subcommand (argv[0] is "archive-agent"): the process exit code. */
int eo_agent_archive_main(int argc, char **argv);

#endif
