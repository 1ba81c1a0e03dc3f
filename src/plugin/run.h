/*
 * plugin/run.h - kubectl-etcd's commands (the I/O half; the decisions are plugin/decide.h).
 *
 * Reads the EtcdCluster, its EtcdMembers and their Pods with the user's kubeconfig
 * (kube/config.h, kube/client.h) and reaches etcd through the apiserver's Pod proxy
 * (kube/raw.h): POST /api/v1/namespaces/<ns>/pods/<member>:2379/proxy/v3/... to etcd's JSON
 * gateway, parsed with the etcd client's parsers (etcd/wire.h). Snapshots are decoded and
 * verified with the agent's stream decoder and integrity checker (snapshot/etcdsnap.h,
 * snapshot/integrity.h). curl_global_init must have been called.
 */
#ifndef EO_PLUGIN_RUN_H
#define EO_PLUGIN_RUN_H

#include <stdio.h>

#include "plugin/args.h"

/* Runs a parsed command: the result on out, errors on errf. Returns the exit code. */
int eo_plugin_run(const struct eo_plugin_args *a, FILE *out, FILE *errf);

struct eo_plugin_completion;

/*
 * Prints the EtcdClusters of the completion's namespace (kubeconfig and context as given in
 * it) whose names start with prefix, one per line. Quiet on any failure: completion must not
 * print errors. Returns how many it printed.
 */
int eo_plugin_complete_clusters(const struct eo_plugin_completion *c, const char *prefix,
				FILE *out);

#endif
