/*
 * snapshot/contract.h - what the operator's snapshot Job and the snapshot agent both rely on.
 *
 * A cluster with spec.auth.enabled: the Job (desired/snapshot_job.h) sets the environment
 * variable EO_SNAPSHOT_ENV_PASSWORD of the agent from the key "password" of
 * spec.auth.rootCredentialsSecretRef; the agent (agent/snapshot.c) copies it out of its
 * environment, cleanses the environment's copy and authenticates as root with it. Never an
 * argument, never logged.
 */
#ifndef EO_SNAPSHOT_CONTRACT_H
#define EO_SNAPSHOT_CONTRACT_H

#define EO_SNAPSHOT_ENV_PASSWORD "EO_ETCD_ROOT_PASSWORD"

/*
 * The archiver of an EtcdArchive (desired/archive.h runs `archive-agent --status-addr
 * :EO_ARCHIVE_STATUS_PORT`): the port of its read-only GET /status (agent/archive.h), its
 * readiness probe and what the operator polls through the Pod IP.
 */
#define EO_ARCHIVE_STATUS_PORT 8086

#endif
