/*
 * plugin/migrate_run.h - `kubectl etcd migrate inspect|apply NAME` (docs/migration.md): the
 * I/O half of plugin/migrate.h. Reads the legacy objects with the user's kubeconfig, reaches
 * etcd through the apiserver's Pod proxy, and performs the adoption one idempotent step at
 * a time, so that a run interrupted anywhere is finished by running it again.
 * curl_global_init must have been called.
 */
#ifndef EO_PLUGIN_MIGRATE_RUN_H
#define EO_PLUGIN_MIGRATE_RUN_H

#include <stdio.h>

/* argv[0] is "migrate". Returns the exit code (plugin/args.h, enum eo_plugin_exit). */
int eo_plugin_migrate_main(int argc, char *const *argv, FILE *out, FILE *errf);

/* The help text of `kubectl etcd migrate`. */
const char *eo_plugin_migrate_help(void);

#endif
