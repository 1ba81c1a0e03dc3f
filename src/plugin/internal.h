/*
 * plugin/internal.h - what kubectl-etcd's commands (plugin/run.h) share: the per-run context
 * and the helpers that load the cluster, call a member's etcd through the apiserver and write
 * the output. Only the files of src/plugin that run commands include it.
 *
 *   run.c              the helpers below and eo_plugin_run's dispatch
 *   cmd_members.c      members, status
 *   cmd_maintenance.c  defrag, compact, alarm, alarm disarm
 *   cmd_leader.c       forfeit-leadership
 *   cmd_snapshot.c     snapshot
 *   cmd_scale.c        add-member, remove-member
 *   cmd_report.c       report
 *
 * Every command returns the process exit code (EO_PEXIT_*), with c->msg saying why when it
 * is not 0.
 */
#ifndef EO_PLUGIN_INTERNAL_H
#define EO_PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "etcd/types.h"
#include "kube/client.h"
#include "plugin/args.h"
#include "plugin/decide.h"
#include "plugin/reach.h"
#include "plugin/render.h"

/* One run of a command: its arguments, the cluster as loaded, the way to its members. */
struct eo__plugin_ctx {
	const struct eo_plugin_args *a;
	FILE *out;
	FILE *errf;
	eo_kube_client *kc;
	const char *ns;
	json_t *cluster, *members, *pods;
	struct eo_plugin_target t[EO_PLUGIN_TARGETS_MAX];
	size_t nt;
	struct eo_plugin_reach reach;
	long timeout_ms;
	char msg[EO_PLUGIN_MSG_MAX];
};

/* Sets c->msg from fmt; returns code. */
__attribute__((format(printf, 3, 4))) int eo__plugin_failf(struct eo__plugin_ctx *c, int code,
							   const char *fmt, ...);

/* ---- etcd through the apiserver (run.c) ---------------------------------------------- */

/* The host member's certificate is checked for (tunnel only). */
const char *eo__plugin_member_host(struct eo__plugin_ctx *c, const char *member, char *buf,
				   size_t cap);
/* A failed call: c->msg and the exit code; *etcd_said when etcd itself refused. */
int eo__plugin_call_failed(struct eo__plugin_ctx *c, const struct eo_plugin_answer *ans,
			   const char *member, const char *route, bool *etcd_said);
/* POST body to route on member's etcd; *resp (caller frees) on success. The exit code. */
int eo__plugin_etcd_call(struct eo__plugin_ctx *c, const char *member, const char *route,
			 const char *body, long timeout_ms, char **resp, size_t *len);
/* Runs route on the first member that answers (query order). */
int eo__plugin_cluster_call(struct eo__plugin_ctx *c, const char *route, const char *body,
			    char **resp, size_t *len, const char **via);
/* spec.auth.enabled: a token from the first member that answers (query order). */
int eo__plugin_login(struct eo__plugin_ctx *c);
int eo__plugin_member_list(struct eo__plugin_ctx *c, struct eo_etcd_members *ms, const char **via);
int eo__plugin_member_status(struct eo__plugin_ctx *c, const char *member,
			     struct eo_etcd_status *st);
/* A member's name from the list, else its ID in hex. */
const char *eo__plugin_name_of(const struct eo_etcd_members *ms, uint64_t id, char *buf,
			       size_t cap);
/* The targets a per-member command works on: --member, or every member. */
int eo__plugin_pick_targets(struct eo__plugin_ctx *c, size_t *idx, size_t *n);

/* ---- output (run.c) ------------------------------------------------------------------ */

/* Renders doc (consumed) in the chosen format to c->out. */
int eo__plugin_emit(struct eo__plugin_ctx *c, json_t *doc, const char *rows_key,
		    const struct eo_plugin_col *cols, size_t ncols, const char *sentence);
/* {"cluster","namespace"}. */
json_t *eo__plugin_base_doc(struct eo__plugin_ctx *c);
json_t *eo__plugin_str_array(char **v, size_t n);

/* ---- the commands (cmd_*.c) ------------------------------------------------------------ */

int eo__plugin_cmd_members(struct eo__plugin_ctx *c);
int eo__plugin_cmd_status(struct eo__plugin_ctx *c);
int eo__plugin_cmd_defrag(struct eo__plugin_ctx *c);
int eo__plugin_cmd_compact(struct eo__plugin_ctx *c);
int eo__plugin_cmd_alarm(struct eo__plugin_ctx *c, bool disarm);
int eo__plugin_cmd_forfeit(struct eo__plugin_ctx *c);
int eo__plugin_cmd_snapshot(struct eo__plugin_ctx *c);
int eo__plugin_cmd_scale(struct eo__plugin_ctx *c);
int eo__plugin_cmd_report(struct eo__plugin_ctx *c);

#endif
