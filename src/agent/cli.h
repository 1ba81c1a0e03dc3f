/*
 * The agent subcommands of the operator binary:
 *
 *   etcd-operator snapshot-agent  ...  take a snapshot from a voter, store it
 *   etcd-operator restore-agent   ...  stage a snapshot on the data volume
 *   etcd-operator restore-rebuild ...  rebuild the data dir with etcdutl
 *   etcd-operator snapshot-prune  ...  delete what one scheduled snapshot stored
 *                                      (snapshot/prune.h)
 *   etcd-operator adopt-data      ...  chown an adopted member's data dir
 *                                      (agent/adopt.h)
 *   etcd-operator data-guard      ...  refuse a data dir without its WAL for a
 *                                      member with an ID (agent/dataguard.h)
 *   etcd-operator wait-peers      ...  wait, bounded, until a peer of a joining
 *                                      member accepts (agent/waitpeers.h)
 *
 * main() calls eo_agent_main() first: it returns -1 when argv[1] is not an
 * agent subcommand (the controller manager runs as before), otherwise the
 * process exit code. `etcd-operator <subcommand> --help` lists the flags;
 * docs/operations.md describes what each one does.
 */
#ifndef EO_AGENT_CLI_H
#define EO_AGENT_CLI_H

int eo_agent_main(int argc, char **argv);

#endif
