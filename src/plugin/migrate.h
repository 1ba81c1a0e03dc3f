/*
 * plugin/migrate.h - `kubectl etcd migrate`: adopting a cluster of the legacy operator
 * (etcd.aenix.io/v1alpha1, a StatefulSet "<name>" with Pods "<name>-N" and PVCs
 * "data-<name>-N") in place, as an EtcdCluster of this operator (docs/migration.md).
 *
 * The pure half: from the objects read (struct eo_migrate_observed) it decides whether the
 * cluster may be adopted (healthy, legacy operator stopped, a spec this operator can carry)
 * and builds what is written: the EtcdCluster, one EtcdMember per running member (named
 * after its Pod, so the Pod "<member>" and the PVC "data-<member>" keep their names), and
 * the metadata patches that hand the Pods, PVCs and Services over. No I/O here; the steps
 * and their order are in plugin/migrate_run.c.
 */
#ifndef EO_PLUGIN_MIGRATE_H
#define EO_PLUGIN_MIGRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "api/names.h"
#include "etcd/types.h"

#define EO_MIGRATE_LEGACY_GROUP_VERSION "etcd.aenix.io/v1alpha1"
#define EO_MIGRATE_LEGACY_PLURAL	"etcdclusters"
/* The legacy operator's Deployment as its release manifest installs it. */
#define EO_MIGRATE_LEGACY_OPERATOR_NS	"etcd-operator-system"
#define EO_MIGRATE_LEGACY_OPERATOR_NAME "etcd-operator-controller-manager"
/* ConfigMap "<name>-etcd-migration": the legacy objects as they were, for re-runs and rollback. */
#define EO_MIGRATE_STATE_SUFFIX "-etcd-migration"
/* ConfigMap "<name>-cluster-state" the legacy Pods read their environment from. */
#define EO_MIGRATE_LEGACY_STATE_SUFFIX "-cluster-state"
/* EtcdSnapshot "<name>-pre-migration": the safety snapshot. */
#define EO_MIGRATE_SNAPSHOT_SUFFIX "-pre-migration"
#define EO_MIGRATE_MAX_MEMBERS	   9
#define EO_MIGRATE_MSG_MAX	   1024
#define EO_MIGRATE_IC_MAX	   4096

struct eo_migrate_observed {
	const char *ns, *name;
	const json_t *legacy;	    /* the legacy EtcdCluster, live or as saved; NULL: none */
	const json_t *sts;	    /* its StatefulSet, live or as saved; NULL: none */
	bool sts_live;		    /* the StatefulSet still exists (else: already orphaned) */
	const json_t *pods;	    /* array: the Pods "<name>-N" found */
	const json_t *pvcs;	    /* array: their PVCs found */
	const json_t *operator_dep; /* the legacy operator's Deployment; NULL: not found */
	const json_t *state_cm;	    /* "<name>-cluster-state"; NULL: not found */
	const struct eo_etcd_members *etcd; /* NULL: no member answered */
	const char *etcd_error;		    /* why etcd did not answer */
	/* per Pod (same order as pods): the member's status answered, and its alarms */
	const bool *status_ok;
	const size_t *n_alarms;
	const json_t *ours;  /* this operator's EtcdCluster "<name>"; NULL: none yet */
	const char *version; /* --etcd-version: overrides the version read from the image */
};

struct eo_migrate_member {
	char name[EO_NAME_MAX]; /* the Pod's, the etcd member's and the new EtcdMember's name */
	char pvc[EO_NAME_MAX];
	char pod_uid[EO_NAME_MAX];
	uint64_t id;
};

enum eo_migrate_state {
	EO_MIGRATE_REFUSED = 0, /* out->message says why; nothing may be changed */
	EO_MIGRATE_ADOPTABLE,	/* may be adopted (or the adoption resumed) */
	EO_MIGRATE_DONE,	/* already adopted and released: nothing to do */
};

struct eo_migrate_plan {
	enum eo_migrate_state state;
	json_t *cluster; /* the EtcdCluster to create (new ref) */
	char version[32];
	char headless[EO_NAME_MAX];
	char subpath[EO_NAME_MAX]; /* "" when etcd's data dir is the volume's root */
	bool peer_auto_tls;
	char cluster_id[24];
	char token[EO_NAME_MAX];
	char initial_cluster[EO_MIGRATE_IC_MAX];
	struct eo_migrate_member m[EO_MIGRATE_MAX_MEMBERS];
	size_t n;
	json_t *changes; /* array of strings: what the migration changes or drops */
	char message[EO_MIGRATE_MSG_MAX];
};

/* Decides; 0, or -1 on a malformed input or out of memory (message set). */
int eo_migrate_plan(const struct eo_migrate_observed *in, struct eo_migrate_plan *out);
void eo_migrate_plan_free(struct eo_migrate_plan *p);

/*
 * The EtcdMember adopting member i, built as this operator builds a joining member
 * (desired/desired.h) from ours (the created EtcdCluster, with its uid and status), then
 * marked adopted: named after the Pod, its initial cluster the running membership, the
 * annotations of api/names.h. New reference, NULL on failure.
 */
json_t *eo_migrate_member_object(const json_t *ours, const struct eo_migrate_plan *p, size_t i);

/* Status patch of an adopted EtcdMember: memberID and isVoter (a voter: refused otherwise). */
json_t *eo_migrate_member_status(const struct eo_migrate_plan *p, size_t i);

/* Status patch of the EtcdCluster: the running cluster's ID and token. */
json_t *eo_migrate_cluster_status(const struct eo_migrate_plan *p);

/*
 * Merge patch handing a Pod or PVC to member (an EtcdMember with uid): this operator's
 * labels added (the legacy ones kept), the owner references replaced by the member's.
 */
json_t *eo_migrate_adopt_patch(const json_t *member);

/*
 * Merge patch handing a Service or ConfigMap to the EtcdCluster ours: controller true for
 * the headless Service the operator then maintains, false for what it only keeps (the
 * legacy client Service, the legacy state ConfigMap) so that it goes with the cluster.
 */
json_t *eo_migrate_owner_patch(const json_t *ours, bool controller);

/*
 * Merge patch dropping the finalizers of a legacy object being deleted, except the garbage
 * collector's ("orphan", "foregroundDeletion"): the legacy operator that would remove its
 * own is stopped, while "orphan" is what keeps the dependents. NULL when nothing to drop.
 */
json_t *eo_migrate_finalizers_patch(const json_t *obj);

/* True when obj's owner references name the object with this uid. */
bool eo_migrate_owned_by(const json_t *obj, const char *uid);

/* ---- the legacy release's admission webhooks --------------------------------------------- */

/*
 * The legacy release registers a mutating and a validating webhook for its EtcdClusters
 * (failurePolicy Fail) served by the legacy operator. Stopped, nothing answers them, and the
 * garbage collector's removal of the "orphan" finalizer (an UPDATE) is refused forever: the
 * migration's orphaning delete never ends. apply removes them with the user's consent
 * (--remove-legacy-webhooks), after saving them in the migration ConfigMap for a rollback.
 */
#define EO_MIGRATE_MAX_WEBHOOKS	 8
#define EO_MIGRATE_HOOKS_MAX	 256
#define EO_MIGRATE_WEBHOOKS_FLAG "--remove-legacy-webhooks"

struct eo_migrate_webhook {
	const json_t *obj; /* the configuration as read (borrowed) */
	bool mutating;	   /* Mutating-, else ValidatingWebhookConfiguration */
	char name[EO_NAME_MAX];
	char hooks[EO_MIGRATE_HOOKS_MAX];  /* its webhooks covering the legacy EtcdClusters */
	char service[2 * EO_NAME_MAX + 2]; /* "ns/name" they call; "" for a URL */
	bool legacy; /* every covering webhook calls a Service of the legacy operator */
	bool fail;   /* one of them has failurePolicy Fail (the v1 default) */
};

struct eo_migrate_webhooks {
	struct eo_migrate_webhook w[EO_MIGRATE_MAX_WEBHOOKS];
	size_t n, n_legacy;
	bool truncated; /* more configurations covered the group than w holds */
};

/* True when Service svc selects the Pods of Deployment dep (a non-empty selector they match). */
bool eo_migrate_service_selects(const json_t *svc, const json_t *dep);

/*
 * Finds the webhook configurations (items of a mutating and a validating list) with a webhook
 * whose rules cover etcdclusters.etcd.aenix.io; legacy when each such webhook calls a Service
 * in dep's namespace that selects dep's Pods (services: the items of that namespace's
 * Services). dep NULL: none is legacy.
 */
void eo_migrate_find_webhooks(const json_t *mutating, const json_t *validating, const json_t *dep,
			      const json_t *services, struct eo_migrate_webhooks *out);

enum eo_migrate_webhook_action {
	EO_MIGRATE_WEBHOOKS_NONE = 0, /* no legacy webhook in the way */
	EO_MIGRATE_WEBHOOKS_REMOVE,   /* consent given: save, then delete them */
	EO_MIGRATE_WEBHOOKS_REFUSE,   /* no consent: apply refuses before changing anything */
};

/* What apply does about them; msg says it (names every configuration) or is "". */
enum eo_migrate_webhook_action eo_migrate_webhooks_decide(const struct eo_migrate_webhooks *w,
							  bool consent, const char *ns,
							  const char *name, char *msg, size_t cap);

/* ConfigMap key under which configuration i is saved: "<plural>.<name>.json". */
void eo_migrate_webhook_key(const struct eo_migrate_webhook *w, char *buf, size_t cap);

/* The configuration as saved for a rollback: no uid, resourceVersion, managedFields... (new ref).
 */
json_t *eo_migrate_webhook_saved(const struct eo_migrate_webhook *w);

#endif
