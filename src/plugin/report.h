/*
 * plugin/report.h - `kubectl etcd report`: what a bug report about one cluster needs, in one
 * tar.gz (docs/kubectl-etcd.md). The collection is in plugin/cmd_report.c; this module holds the
 * pure parts (which events and operator log lines belong to the cluster, the summary, what is
 * left out of Pods) and the small archive writer (ustar entries through zlib).
 *
 * No Secret is read for the report (a cluster with spec.auth still needs its root credentials
 * to ask etcd for its status, as every command does; they are not written); Pod env values are
 * replaced by "(left out)".
 */
#ifndef EO_PLUGIN_REPORT_H
#define EO_PLUGIN_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/strbuf.h"

#define EO_PLUGIN_REPORT_LOG_MAX (8u << 20) /* operator log lines kept, all pods */

/* "etcd-report-<ns>-<cluster>-<YYYYMMDDTHHMMSSZ>.tar.gz" */
void eo_plugin_report_name(const char *ns, const char *cluster, time_t now, char *out, size_t cap);

/* A logfmt line of the operator about this cluster: it carries cluster=<ns>/<name> as a
 * whole value. */
bool eo_plugin_log_line_matches(const char *line, size_t len, const char *ns, const char *cluster);

/* An Event about the cluster or one of its objects (named <cluster> or <cluster>-...). */
bool eo_plugin_event_matches(const json_t *ev, const char *cluster);

/* Removes what a report must not carry from a list of objects, in place: metadata.
 * managedFields, and the value of every env entry of every container of a Pod. */
void eo_plugin_report_scrub(json_t *list);

/* The first file of the archive: the cluster's phase, conditions and members, and one line per
 * part that could not be collected (notes: "\n"-separated, may be ""). */
void eo_plugin_report_summary(const json_t *cluster, const json_t *members, const char *notes,
			      struct eo_strbuf *out);

/* A tar.gz being written: entries are regular files, mode 0644, owned by root. */
struct eo_plugin_tar;

/* Creates path (O_EXCL, 0600). NULL with a message in err. */
struct eo_plugin_tar *eo_plugin_tar_open(const char *path, char *err, size_t errcap);
int eo_plugin_tar_add(struct eo_plugin_tar *t, const char *name, const void *data, size_t len,
		      time_t mtime, char *err, size_t errcap);
/* Writes the end blocks and closes; on failure (or with abandon) removes the file. Frees t. */
int eo_plugin_tar_close(struct eo_plugin_tar *t, bool abandon, char *err, size_t errcap);

#endif
