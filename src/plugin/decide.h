/*
 * plugin/decide.h - kubectl-etcd's decisions, and the two gateway answers it reads its own way
 * (an authenticate token, refused with an embedded NUL; an alarm list, with any alarm name
 * kept). Its request bodies come from the etcd client's wire format (etcd/wire.h). Pure: no
 * I/O.
 *
 * The commands read the EtcdCluster, its EtcdMembers and their Pods through the apiserver,
 * turn them into targets (one per member, with what its Pod says), and reach a member's etcd
 * through the apiserver's Pod proxy. Everything decided from those observations lives here so
 * that table tests can drive it: which member to ask, in which order to defragment, where to
 * move the leadership, whether add-member/remove-member may patch spec.replicas or must
 * refuse, and how a failed apiserver or proxy answer reads to the user (and its exit code).
 */
#ifndef EO_PLUGIN_DECIDE_H
#define EO_PLUGIN_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "etcd/types.h"
#include "kube/err.h"
#include "plan/plan.h"
#include "plugin/args.h"

#define EO_PLUGIN_MSG_MAX     1024
#define EO_PLUGIN_TARGETS_MAX 64

/* One EtcdMember of the cluster and what its Pod says (pointers borrowed from the lists). */
struct eo_plugin_target {
	const char *name; /* the EtcdMember, its Pod and its etcd member name */
	const json_t *member;
	const json_t *pod; /* NULL: no Pod */
	bool running;	   /* Pod phase Running and not being deleted (eo_plan_pod_running) */
	bool ready;	   /* running and Ready (eo_plan_pod_ready) */
	bool voter;	   /* EtcdMember status.isVoter */
};

/*
 * Targets from an EtcdMember list and a Pod list (objects with "items"; the Pod of a member is
 * the one with its name), sorted by name. Returns how many (at most cap), or -1 when the lists
 * are malformed.
 */
int eo_plugin_targets(const json_t *members, const json_t *pods, struct eo_plugin_target *out,
		      size_t cap);

/* Index of the target named name, or -1. */
int eo_plugin_target_find(const struct eo_plugin_target *t, size_t n, const char *name);

/*
 * The order in which to ask members for a cluster-wide answer (member list, alarms,
 * compaction, the current revision): running ready voters, then running voters, then other
 * running members; members without a running Pod are left out. Writes indexes into order and
 * returns how many.
 */
size_t eo_plugin_query_order(const struct eo_plugin_target *t, size_t n, size_t *order);

/*
 * Why the cluster cannot be operated on now, or NULL when it can: a paused cluster
 * (spec.replicas 0) has no running etcd. msg receives the full explanation.
 */
const char *eo_plugin_paused(const json_t *cluster, char *msg, size_t cap);

/*
 * Defragmentation order: every index in 0..n-1 with leader (an index, or -1 when unknown)
 * moved last; the others keep their order.
 */
void eo_plugin_defrag_order(size_t n, int leader, size_t *order);

/*
 * Where forfeit-leadership moves the leadership: to (a member name, NULL for "any") must be a
 * started voter other than the leader; by default the first started voter (in member-list
 * order) that is not the leader and, when running is given (names of members whose Pod runs,
 * nrunning of them), whose Pod runs. 0 with *target; -1 with msg when the move is refused
 * (no leader known, to is the leader or a learner, no other voter); -2 with msg when to is
 * not a started member of etcd's member list.
 */
int eo_plugin_forfeit_target(const struct eo_etcd_members *ms, uint64_t leader, const char *to,
			     const char *const *running, size_t nrunning, uint64_t *target,
			     char *msg, size_t cap);

enum eo_plugin_scale {
	EO_PSCALE_PATCH = 0,  /* *patch is the merge patch to apply to the EtcdCluster */
	EO_PSCALE_PAUSED,     /* replicas 0: resume first */
	EO_PSCALE_IN_FLIGHT,  /* spec.replicas differs from the latched target, or not all ready */
	EO_PSCALE_NOT_FOUND,  /* remove-member: no such EtcdMember in the cluster */
	EO_PSCALE_LAST,	      /* remove-member on a one-member cluster: pause instead */
	EO_PSCALE_NOT_VICTIM, /* the operator would remove another member */
	EO_PSCALE_NO_QUORUM,  /* the removal would not keep a quorum */
};

/*
 * add-member (remove == NULL) or remove-member remove. members are the cluster's EtcdMembers
 * with their Pods (plan/plan.h, for the operator's own victim choice and quorum rule). On
 * EO_PSCALE_PATCH *patch is a new merge patch {"metadata":{"resourceVersion":...},"spec":
 * {"replicas":N}} (the resourceVersion makes a concurrent edit fail with a conflict) and msg
 * says what will happen; otherwise msg says why not and what to do instead.
 */
enum eo_plugin_scale eo_plugin_scale_decide(const json_t *cluster,
					    const struct eo_plan_member *members, size_t n,
					    const char *remove, json_t **patch, char *msg,
					    size_t cap);

/* Exit code of a refusal (EO_PEXIT_NOTFOUND for NOT_FOUND, EO_PEXIT_REFUSED otherwise). */
enum eo_plugin_exit eo_plugin_scale_exit(enum eo_plugin_scale s);

/*
 * A failed apiserver call about resource (e.g. "etcdclusters.etcd-operator.cozystack.io
 * \"a\"") done with verb ("get", "list", "patch", ...) in namespace ns: msg and the exit code.
 * 401/403 name the verb and resource to grant; 404 says what was not found.
 */
enum eo_plugin_exit eo_plugin_kube_failure(eo_kube_err e, const struct eo_kube_error *ke,
					   const char *verb, const char *resource, const char *ns,
					   char *msg, size_t cap);

/* A failed call to a member's etcd, as the transport saw it (plugin/reach.h). */
struct eo_plugin_call_failure {
	eo_kube_err e;
	const struct eo_kube_error *ke;
	long http_status; /* 0: no HTTP answer */
	const char *body; /* the answer's body: the apiserver's Status or etcd's error */
	size_t len;
	bool tunnel;	     /* through pods/portforward (else pods/proxy) */
	bool tunnel_refused; /* the apiserver refused the port-forward itself */
	const char *farside; /* the tunnel's error channel ("" or NULL: nothing) */
};

/*
 * What a failed call to member's etcd (path is the etcd route) means: the apiserver's refusal
 * (a Kubernetes Status: forbidden, the Pod not found, the member unreachable), etcd's own
 * gateway error ({"error","code","message"}: *etcd_said set, another member would say the
 * same), or a transport failure. msg and the exit code. etcd_said may be NULL.
 */
enum eo_plugin_exit eo_plugin_call_failure(const struct eo_plugin_call_failure *f,
					   const char *member, const char *ns, const char *path,
					   bool *etcd_said, char *msg, size_t cap);

/*
 * The host a member's certificate is checked for: the one of the --advertise-client-urls
 * argument of its Pod's etcd container (what the operator dials), else
 * <member>.<cluster>.<ns>.svc. 0, or -1 when it does not fit.
 */
int eo_plugin_member_host(const json_t *pod, const char *member, const char *cluster,
			  const char *ns, char *out, size_t cap);

/* ---- member IDs, and the gateway answers read the plugin's way -------------------------- */

/* Member IDs as etcdctl prints them: lower-case hex without padding. Returns out. */
char *eo_plugin_id_hex(uint64_t id, char *out, size_t cap);

/* The token of an authenticate answer (malloc'd; NULL when absent, over max or not a header
 * value). The parsed copy is cleansed. */
char *eo_plugin_parse_token(const char *body, size_t len, size_t max);

/*
 * The answer to an alarm request: *out a new array of {"memberID": <u64 as JSON integer or
 * string>, "alarm": "NOSPACE"|"CORRUPT"|...} in the order etcd gave them. 0 or -1 (malformed).
 */
int eo_plugin_parse_alarms(const char *body, size_t len, json_t **out, char *err, size_t cap);

/* The member ID of an alarm entry (as parsed above). */
uint64_t eo_plugin_alarm_member(const json_t *alarm);

#endif
