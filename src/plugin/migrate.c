/* `kubectl etcd migrate`, the pure half (plugin/migrate.h). */
#include "plugin/migrate.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "api/conditions.h"
#include "api/member.h"
#include "api/meta.h"
#include "core/json.h"
#include "core/util.h"
#include "desired/desired.h"
#include "plan/plan.h"

/* Flags the legacy operator always gives etcd; they have an equivalent here (or none needed). */
static const char *const legacy_fixed[] = {
    "--name",
    "--listen-metrics-urls",
    "--listen-peer-urls",
    "--listen-client-urls",
    "--initial-advertise-peer-urls",
    "--data-dir",
    "--advertise-client-urls",
    "--peer-auto-tls",
    "--quota-backend-bytes",
    "--snapshot-count",
    "--auto-compaction-mode",
    "--auto-compaction-retention",
    NULL,
};

static const json_t *at(const json_t *root, const char *a, const char *b, const char *c)
{
	const json_t *v = json_object_get(root, a);

	if (b != NULL)
		v = json_object_get(v, b);
	if (c != NULL)
		v = json_object_get(v, c);
	return v;
}

static const char *str(const json_t *root, const char *a, const char *b, const char *c)
{
	return json_string_value(at(root, a, b, c));
}

__attribute__((format(printf, 2, 3))) static void refuse(struct eo_migrate_plan *p, const char *fmt,
							 ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	p->state = EO_MIGRATE_REFUSED;
}

__attribute__((format(printf, 2, 3))) static void change(struct eo_migrate_plan *p, const char *fmt,
							 ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(p->changes, json_string(buf));
}

static bool pod_ready(const json_t *pod)
{
	const char *phase = str(pod, "status", "phase", NULL);

	if (phase == NULL || strcmp(phase, "Running") != 0 || eo_meta_is_deleting(pod))
		return false;
	return eo_condition_is_true(json_object_get(pod, "status"), "Ready");
}

static const json_t *find_named(const json_t *arr, const char *name)
{
	const json_t *o = NULL;
	size_t i;

	json_array_foreach(arr, i, o)
	{
		const char *n = eo_meta_name(o);

		if (n != NULL && strcmp(n, name) == 0)
			return o;
	}
	return NULL;
}

static const json_t *etcd_container(const json_t *pod_spec)
{
	return eo_json_named(json_object_get(pod_spec, "containers"), "etcd");
}

/* The value of --flag in the container's command and args: "" for a bare flag, NULL absent. */
static const char *flag(const json_t *ctr, const char *name)
{
	static const char *const lists[] = {"command", "args"};
	size_t len = strlen(name);

	for (size_t l = 0; l < 2; l++) {
		const json_t *v = NULL;
		size_t i;

		json_array_foreach(json_object_get(ctr, lists[l]), i, v)
		{
			const char *a = json_string_value(v);

			if (a == NULL || strncmp(a, name, len) != 0)
				continue;
			if (a[len] == '=')
				return a + len + 1;
			if (a[len] == '\0')
				return "";
		}
	}
	return NULL;
}

static bool fixed_flag(const char *arg)
{
	for (size_t i = 0; legacy_fixed[i] != NULL; i++) {
		size_t len = strlen(legacy_fixed[i]);

		if (strncmp(arg, legacy_fixed[i], len) == 0 &&
		    (arg[len] == '=' || arg[len] == '\0'))
			return true;
	}
	return false;
}

/* "X.Y.Z" from an image reference "...:vX.Y.Z" (or "X.Y.Z"); false when it is not one. */
static bool image_version(const char *image, char *buf, size_t n)
{
	const char *tag = NULL, *slash = NULL;
	int dots = 0;

	if (!eo_present(image) || strchr(image, '@') != NULL)
		return false;
	slash = strrchr(image, '/');
	tag = strrchr(slash != NULL ? slash : image, ':');
	if (tag == NULL)
		return false;
	tag++;
	if (*tag == 'v')
		tag++;
	if (!isdigit((unsigned char)*tag) || strlen(tag) >= n)
		return false;
	for (const char *p = tag; *p; p++) {
		if (*p == '.') {
			if (p[1] == '.' || p[1] == '\0')
				return false;
			dots++;
		} else if (!isdigit((unsigned char)*p)) {
			return false;
		}
	}
	if (dots != 2)
		return false;
	snprintf(buf, n, "%s", tag);
	return true;
}

static bool valid_version(const char *v)
{
	char img[64], out[32];

	if (!eo_present(v) || strlen(v) >= sizeof(out))
		return false;
	snprintf(img, sizeof(img), "etcd:%s", v);
	return image_version(img, out, sizeof(out)) && strcmp(out, v) == 0;
}

/* The mount path of the Pod's data volume in the etcd container. */
static const char *data_mount(const json_t *ctr)
{
	const json_t *m = eo_json_named(json_object_get(ctr, "volumeMounts"), "data");

	return json_string_value(json_object_get(m, "mountPath"));
}

static const char *claim_of(const json_t *pod)
{
	const json_t *v = eo_json_named(at(pod, "spec", "volumes", NULL), "data");

	return v != NULL ? str(v, "persistentVolumeClaim", "claimName", NULL) : NULL;
}

static bool legacy_tls(const json_t *legacy)
{
	const json_t *tls = at(legacy, "spec", "security", "tls");
	const char *k = NULL;
	json_t *v = NULL;

	json_object_foreach((json_t *)tls, k, v)
	{
		if (eo_present(json_string_value(v)))
			return true;
	}
	return false;
}

/* Checks the legacy side and the running cluster; fills p->m. false when refused. */
static bool check_running(const struct eo_migrate_observed *in, struct eo_migrate_plan *p,
			  json_int_t replicas)
{
	const json_t *sts = in->sts;

	if (in->sts_live &&
	    json_integer_value(at(sts, "status", "readyReplicas", NULL)) != replicas) {
		refuse(
		    p,
		    "cluster %s/%s is not healthy: StatefulSet %s has %lld of %lld replicas ready; "
		    "migrate a healthy cluster only",
		    in->ns, in->name, in->name,
		    (long long)json_integer_value(at(sts, "status", "readyReplicas", NULL)),
		    (long long)replicas);
		return false;
	}
	for (json_int_t i = 0; i < replicas; i++) {
		struct eo_migrate_member *m = &p->m[i];
		const json_t *pod = NULL;
		const char *claim = NULL, *uid = NULL;
		char want[EO_NAME_MAX];

		snprintf(m->name, sizeof(m->name), "%s-%lld", in->name, (long long)i);
		pod = find_named(in->pods, m->name);
		if (pod == NULL) {
			refuse(p, "cluster %s/%s is not healthy: Pod %s is missing", in->ns,
			       in->name, m->name);
			return false;
		}
		if (!pod_ready(pod)) {
			refuse(p, "cluster %s/%s is not healthy: Pod %s is not ready", in->ns,
			       in->name, m->name);
			return false;
		}
		claim = claim_of(pod);
		if (eo_name_member_pvc(want, sizeof(want), m->name) != 0 || claim == NULL ||
		    strcmp(claim, want) != 0) {
			refuse(
			    p,
			    "Pod %s keeps its data on %s%s, not on a PVC named %s: this operator "
			    "cannot adopt it",
			    m->name, claim ? "PVC " : "", claim ? claim : "no PVC", want);
			return false;
		}
		if (find_named(in->pvcs, claim) == NULL) {
			refuse(p, "PVC %s of Pod %s is missing", claim, m->name);
			return false;
		}
		uid = eo_meta_uid(pod);
		snprintf(m->pvc, sizeof(m->pvc), "%s", claim);
		snprintf(m->pod_uid, sizeof(m->pod_uid), "%s", uid ? uid : "");
		if (in->status_ok != NULL && !in->status_ok[i]) {
			refuse(p,
			       "cluster %s/%s is not healthy: member %s did not answer its status",
			       in->ns, in->name, m->name);
			return false;
		}
		if (in->n_alarms != NULL && in->n_alarms[i] > 0) {
			refuse(p,
			       "cluster %s/%s is not healthy: member %s reports %zu alarm(s) "
			       "(kubectl etcd alarm list works once adopted; disarm them first)",
			       in->ns, in->name, m->name, in->n_alarms[i]);
			return false;
		}
	}
	p->n = (size_t)replicas;
	if (in->etcd == NULL) {
		refuse(p, "cluster %s/%s is not healthy: no member answered the member list (%s)",
		       in->ns, in->name, in->etcd_error ? in->etcd_error : "unreachable");
		return false;
	}
	if (in->etcd->n != (size_t)replicas) {
		refuse(p,
		       "cluster %s/%s is not healthy: etcd lists %zu member(s) but the StatefulSet "
		       "has %lld",
		       in->ns, in->name, in->etcd->n, (long long)replicas);
		return false;
	}
	for (size_t j = 0; j < in->etcd->n; j++) {
		const struct eo_etcd_member *em = &in->etcd->v[j];
		size_t k;

		if (em->is_learner || !eo_present(em->name) || em->n_peer_urls == 0) {
			refuse(p,
			       "cluster %s/%s is not healthy: etcd member %" PRIx64
			       " is %s; migrate a settled cluster only",
			       in->ns, in->name, em->id,
			       em->is_learner ? "a learner" : "not started");
			return false;
		}
		for (k = 0; k < p->n && strcmp(p->m[k].name, em->name) != 0; k++)
			;
		if (k == p->n) {
			refuse(p, "etcd member %s has no Pod of StatefulSet %s", em->name,
			       in->name);
			return false;
		}
		p->m[k].id = em->id;
	}
	return true;
}

/* spec.options from the running etcd's flags; notes what is dropped. */
static json_t *options_of(const json_t *ctr, struct eo_migrate_plan *p)
{
	json_t *o = json_object();
	const char *v = NULL;
	char *end = NULL;
	long long n;
	static const char *const lists[] = {"command", "args"};

	if (o == NULL)
		return NULL;
	if ((v = flag(ctr, "--quota-backend-bytes")) != NULL && eo_present(v)) {
		n = strtoll(v, &end, 10);
		if (*end == '\0' && n > 0)
			json_object_set_new(o, "quotaBackendBytes", json_integer(n));
	}
	if ((v = flag(ctr, "--snapshot-count")) != NULL && eo_present(v)) {
		n = strtoll(v, &end, 10);
		if (*end == '\0' && n > 0)
			json_object_set_new(o, "snapshotCount", json_integer(n));
	}
	if ((v = flag(ctr, "--auto-compaction-mode")) != NULL && eo_present(v))
		json_object_set_new(o, "autoCompactionMode", json_string(v));
	if ((v = flag(ctr, "--auto-compaction-retention")) != NULL && eo_present(v))
		json_object_set_new(o, "autoCompactionRetention", json_string(v));
	for (size_t l = 0; l < 2; l++) {
		const json_t *a = NULL;
		size_t i;

		json_array_foreach(json_object_get(ctr, lists[l]), i, a)
		{
			const char *s = json_string_value(a);

			if (s != NULL && strncmp(s, "--", 2) == 0 && !fixed_flag(s))
				change(
				    p,
				    "etcd flag %s is not carried over: the adopted members keep it "
				    "until they are rolled, new and rolled members run without it",
				    s);
		}
	}
	return o;
}

/* The EtcdCluster of this operator that takes the legacy cluster over. */
static json_t *cluster_object(const struct eo_migrate_observed *in, struct eo_migrate_plan *p,
			      const json_t *ctr, json_int_t replicas)
{
	const json_t *tpl = at(in->sts, "spec", "template", "spec");
	const json_t *vct = json_array_get(at(in->sts, "spec", "volumeClaimTemplates", NULL), 0);
	const char *size = NULL;
	const char *cls = str(vct, "spec", "storageClassName", NULL);
	const json_t *res = json_object_get(ctr, "resources");
	json_t *c = NULL, *spec = NULL, *storage = NULL, *ann = NULL, *opts = NULL;
	static const char *const passthrough[] = {
	    "affinity",		"tolerations", "nodeSelector", "topologySpreadConstraints",
	    "imagePullSecrets", NULL,
	};

	size =
	    json_string_value(json_object_get(at(vct, "spec", "resources", "requests"), "storage"));
	if (cls == NULL) {
		const json_t *pvc = find_named(in->pvcs, p->m[0].pvc);

		cls = str(pvc, "spec", "storageClassName", NULL);
	}
	if (!eo_present(size)) {
		refuse(p, "StatefulSet %s asks for no storage size in its volume claim template",
		       in->name);
		return NULL;
	}
	c = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}}", "apiVersion", EO_API_GROUP_VERSION,
		      "kind", EO_KIND_CLUSTER, "metadata", "name", in->name, "namespace", in->ns,
		      "annotations", EO_ANNOTATION_MIGRATING, "true",
		      EO_ANNOTATION_HEADLESS_SERVICE_NAME, p->headless);
	spec = json_pack("{s:I, s:s}", "replicas", (json_int_t)replicas, "version", p->version);
	storage = json_pack("{s:s}", "size", size);
	opts = options_of(ctr, p);
	if (c == NULL || spec == NULL || storage == NULL || opts == NULL)
		goto fail;
	ann = eo_meta_get(c, "annotations");
	if (p->peer_auto_tls)
		json_object_set_new(ann, EO_ANNOTATION_PEER_AUTO_TLS, json_string("true"));
	if (cls != NULL)
		json_object_set_new(storage, "storageClassName", json_string(cls));
	json_object_set_new(spec, "storage", storage);
	storage = NULL;
	if (json_object_size(opts) > 0)
		json_object_set(spec, "options", opts);
	if (json_object_size(json_object_get(res, "requests")) > 0 ||
	    json_object_size(json_object_get(res, "limits")) > 0)
		json_object_set_new(spec, "resources", json_deep_copy(res));
	else
		change(p, "the legacy Pods set no resources; new and rolled Pods get this "
			  "operator's default requests (100m CPU, 128Mi memory)");
	for (size_t i = 0; passthrough[i] != NULL; i++) {
		const json_t *v = json_object_get(tpl, passthrough[i]);

		if (v != NULL && (json_object_size(v) > 0 || json_array_size(v) > 0))
			json_object_set_new(spec, passthrough[i], json_deep_copy(v));
	}
	if (eo_present(json_string_value(json_object_get(tpl, "priorityClassName"))))
		json_object_set(spec, "priorityClassName",
				json_object_get(tpl, "priorityClassName"));
	json_object_set_new(c, "spec", spec);
	json_decref(opts);
	return c;
fail:
	json_decref(c);
	json_decref(spec);
	json_decref(storage);
	json_decref(opts);
	snprintf(p->message, sizeof(p->message), "out of memory");
	return NULL;
}

static void notes(const struct eo_migrate_observed *in, struct eo_migrate_plan *p,
		  const json_t *ctr)
{
	const char *image = json_string_value(json_object_get(ctr, "image"));
	char repo[512];
	const char *colon = NULL;

	change(p,
	       "EtcdCluster.etcd.aenix.io %s and StatefulSet %s are deleted with their "
	       "dependents orphaned; the legacy objects are saved in ConfigMap %s%s",
	       in->name, in->name, in->name, EO_MIGRATE_STATE_SUFFIX);
	change(p,
	       "%zu EtcdMember(s) %s-0..%zu adopt the running Pods and PVCs as they are: etcd is "
	       "not restarted and its data is not touched",
	       p->n, in->name, p->n - 1);
	change(p,
	       "the adopted Pods are replaced by this operator's Pods only when the target "
	       "changes (a rolling update, one member at a time), on the same PVCs (data in "
	       "subPath \"%s\")",
	       p->subpath);
	change(p,
	       "Service %s (headless) is taken over; Service %s (the legacy client Service) and "
	       "ConfigMap %s%s are kept and deleted with the new EtcdCluster",
	       p->headless, in->name, in->name, EO_MIGRATE_LEGACY_STATE_SUFFIX);
	change(p,
	       "new client Service %s-client (voting members only); PodDisruptionBudget %s "
	       "is replaced by this operator's",
	       in->name, in->name);
	if (image != NULL && (colon = strrchr(image, ':')) != NULL &&
	    (size_t)(colon - image) < sizeof(repo)) {
		snprintf(repo, sizeof(repo), "%.*s", (int)(colon - image), image);
		if (strcmp(repo, EO_DEFAULT_ETCD_IMAGE_REPOSITORY) != 0)
			change(p,
			       "the legacy Pods run image repository %s: new and rolled Pods use "
			       "the operator's --etcd-image-repository",
			       repo);
	}
}

int eo_migrate_plan(const struct eo_migrate_observed *in, struct eo_migrate_plan *p)
{
	const json_t *legacy = in->legacy, *sts = in->sts, *ctr = NULL, *pod0 = NULL;
	const char *v = NULL, *mount = NULL, *datadir = NULL, *svc = NULL;
	json_int_t replicas;
	size_t len = 0;

	memset(p, 0, sizeof(*p));
	p->changes = json_array();
	if (p->changes == NULL || in->ns == NULL || in->name == NULL) {
		snprintf(p->message, sizeof(p->message), "out of memory");
		return -1;
	}
	if (in->ours != NULL && !eo_cluster_migrating(in->ours)) {
		if (eo_cluster_annotation(in->ours, EO_ANNOTATION_HEADLESS_SERVICE_NAME) != NULL) {
			p->state = EO_MIGRATE_DONE;
			snprintf(p->message, sizeof(p->message),
				 "cluster %s/%s was migrated already: EtcdCluster.%s %s manages it",
				 in->ns, in->name, EO_API_GROUP, in->name);
			return 0;
		}
		refuse(p,
		       "an EtcdCluster.%s named %s exists in %s and was not made by kubectl etcd "
		       "migrate; nothing was changed",
		       EO_API_GROUP, in->name, in->ns);
		return 0;
	}
	if (legacy == NULL) {
		refuse(p,
		       "no EtcdCluster.etcd.aenix.io %s in namespace %s (nor a saved copy in "
		       "ConfigMap %s%s)",
		       in->name, in->ns, in->name, EO_MIGRATE_STATE_SUFFIX);
		return 0;
	}
	if (in->operator_dep != NULL &&
	    (json_integer_value(at(in->operator_dep, "status", "readyReplicas", NULL)) > 0 ||
	     json_integer_value(at(in->operator_dep, "spec", "replicas", NULL)) > 0)) {
		refuse(
		    p,
		    "the legacy operator is still running (Deployment %s/%s: %lld ready of %lld); "
		    "stop it first (kubectl -n %s scale deployment %s --replicas=0) so that it "
		    "does not fight over the cluster; nothing was changed",
		    eo_meta_namespace(in->operator_dep), eo_meta_name(in->operator_dep),
		    (long long)json_integer_value(
			at(in->operator_dep, "status", "readyReplicas", NULL)),
		    (long long)json_integer_value(at(in->operator_dep, "spec", "replicas", NULL)),
		    eo_meta_namespace(in->operator_dep), eo_meta_name(in->operator_dep));
		return 0;
	}
	if (legacy_tls(legacy) || json_is_true(at(legacy, "spec", "security", "enableAuth"))) {
		refuse(p,
		       "cluster %s/%s uses TLS certificates or etcd auth "
		       "(spec.security): its migration is not supported yet; nothing was changed",
		       in->ns, in->name);
		return 0;
	}
	if (at(legacy, "spec", "storage", "emptyDir") != NULL) {
		refuse(p,
		       "cluster %s/%s keeps its data in emptyDir volumes: this operator adopts "
		       "PVC-backed members only (migrate by restoring a snapshot into a new "
		       "EtcdCluster instead); nothing was changed",
		       in->ns, in->name);
		return 0;
	}
	if (sts == NULL) {
		refuse(p,
		       "StatefulSet %s of cluster %s/%s is missing (nor saved in ConfigMap %s%s)",
		       in->name, in->ns, in->name, in->name, EO_MIGRATE_STATE_SUFFIX);
		return 0;
	}
	replicas = json_is_integer(at(sts, "spec", "replicas", NULL))
		       ? json_integer_value(at(sts, "spec", "replicas", NULL))
		       : 1;
	if (replicas < 1 || replicas > EO_MIGRATE_MAX_MEMBERS) {
		refuse(p, "StatefulSet %s has %lld replicas: only 1 to %d members can be adopted",
		       in->name, (long long)replicas, EO_MIGRATE_MAX_MEMBERS);
		return 0;
	}
	if (!check_running(in, p, replicas))
		return 0;

	pod0 = find_named(in->pods, p->m[0].name);
	ctr = etcd_container(json_object_get(pod0, "spec"));
	if (ctr == NULL) {
		refuse(p, "Pod %s has no container named etcd", p->m[0].name);
		return 0;
	}
	if (eo_present(in->version)) {
		if (!valid_version(in->version)) {
			refuse(p, "--etcd-version %s is not a version X.Y.Z", in->version);
			return 0;
		}
		snprintf(p->version, sizeof(p->version), "%s", in->version);
	} else if (!image_version(json_string_value(json_object_get(ctr, "image")), p->version,
				  sizeof(p->version))) {
		refuse(p,
		       "cannot tell the etcd version from image %s; give it with --etcd-version "
		       "X.Y.Z",
		       json_string_value(json_object_get(ctr, "image")));
		return 0;
	}
	if (flag(ctr, "--peer-cert-file") != NULL || flag(ctr, "--cert-file") != NULL ||
	    ((v = flag(ctr, "--listen-client-urls")) != NULL && strncmp(v, "https", 5) == 0)) {
		refuse(p,
		       "Pod %s runs etcd with TLS certificates: its migration is not supported "
		       "yet; nothing was changed",
		       p->m[0].name);
		return 0;
	}
	p->peer_auto_tls = flag(ctr, "--peer-auto-tls") != NULL;
	svc = str(sts, "spec", "serviceName", NULL);
	if (!eo_present(svc) || !eo_name_is_dns1035_label(svc, EO_DNS_LABEL_MAX)) {
		refuse(p, "StatefulSet %s names no headless Service", in->name);
		return 0;
	}
	snprintf(p->headless, sizeof(p->headless), "%s", svc);
	mount = data_mount(ctr);
	datadir = flag(ctr, "--data-dir");
	if (!eo_present(mount) || !eo_present(datadir) || (len = strlen(mount)) == 0 ||
	    strncmp(datadir, mount, len) != 0 || (datadir[len] != '\0' && datadir[len] != '/') ||
	    strstr(datadir + len, "..") != NULL || strlen(datadir + len) >= sizeof(p->subpath)) {
		refuse(p, "Pod %s: etcd's data dir %s is not on its data volume (%s)", p->m[0].name,
		       datadir ? datadir : "(unset)", mount ? mount : "not mounted");
		return 0;
	}
	snprintf(p->subpath, sizeof(p->subpath), "%s",
		 datadir[len] == '/' ? datadir + len + 1 : "");
	while (len = strlen(p->subpath), len > 0 && p->subpath[len - 1] == '/')
		p->subpath[len - 1] = '\0';

	eo_plan_format_id(in->etcd->cluster_id, p->cluster_id, sizeof(p->cluster_id));
	v = str(in->state_cm, "data", "ETCD_INITIAL_CLUSTER_TOKEN", NULL);
	if (eo_present(v))
		snprintf(p->token, sizeof(p->token), "%s", v);
	else
		snprintf(p->token, sizeof(p->token), "%s-%s", in->name, in->ns);
	len = 0;
	for (size_t j = 0; j < in->etcd->n; j++) {
		const struct eo_etcd_member *em = &in->etcd->v[j];
		int w = snprintf(p->initial_cluster + len, sizeof(p->initial_cluster) - len,
				 "%s%s=%s", j ? "," : "", em->name, em->peer_urls[0]);

		if (w < 0 || (size_t)w >= sizeof(p->initial_cluster) - len) {
			refuse(p, "the member list is too long");
			return 0;
		}
		len += (size_t)w;
	}
	notes(in, p, ctr);
	p->cluster = cluster_object(in, p, ctr, replicas);
	if (p->cluster == NULL)
		return p->state == EO_MIGRATE_REFUSED ? 0 : -1;
	p->state = EO_MIGRATE_ADOPTABLE;
	snprintf(p->message, sizeof(p->message),
		 "cluster %s/%s (%zu member(s), etcd %s, cluster ID %s) can be adopted", in->ns,
		 in->name, p->n, p->version, p->cluster_id);
	return 0;
}

void eo_migrate_plan_free(struct eo_migrate_plan *p)
{
	if (p == NULL)
		return;
	json_decref(p->cluster);
	json_decref(p->changes);
	p->cluster = NULL;
	p->changes = NULL;
}

json_t *eo_migrate_member_object(const json_t *ours, const struct eo_migrate_plan *p, size_t i)
{
	json_t *m = NULL, *md = NULL, *ann = NULL, *spec = NULL;

	if (ours == NULL || p == NULL || i >= p->n)
		return NULL;
	m = eo_desired_joining_member(ours, p->m[i].name);
	md = json_object_get(m, "metadata");
	spec = json_object_get(m, "spec");
	if (m == NULL || md == NULL || spec == NULL)
		goto fail;
	ann = json_object_get(md, "annotations");
	if (ann == NULL) {
		ann = json_object();
		if (ann == NULL || json_object_set_new(md, "annotations", ann) != 0)
			goto fail;
	}
	if (json_object_set_new(ann, EO_ANNOTATION_HEADLESS_SERVICE_NAME,
				json_string(p->headless)) != 0 ||
	    json_object_set_new(ann, EO_ANNOTATION_ADOPTED_POD_UID, json_string(p->m[i].pod_uid)) !=
		0 ||
	    (eo_present(p->subpath) && json_object_set_new(ann, EO_ANNOTATION_DATA_DIR_SUBPATH,
							   json_string(p->subpath)) != 0) ||
	    json_object_set_new(spec, "initialCluster", json_string(p->initial_cluster)) != 0)
		goto fail;
	return m;
fail:
	json_decref(m);
	return NULL;
}

json_t *eo_migrate_member_status(const struct eo_migrate_plan *p, size_t i)
{
	char id[24];

	if (p == NULL || i >= p->n)
		return NULL;
	eo_plan_format_id(p->m[i].id, id, sizeof(id));
	return json_pack("{s:{s:s, s:b}}", "status", "memberID", id, "isVoter", 1);
}

json_t *eo_migrate_cluster_status(const struct eo_migrate_plan *p)
{
	if (p == NULL || !eo_present(p->cluster_id))
		return NULL;
	return json_pack("{s:{s:s, s:s}}", "status", "clusterID", p->cluster_id, "clusterToken",
			 p->token);
}

json_t *eo_migrate_adopt_patch(const json_t *member)
{
	json_t *labels = eo_desired_member_labels(member, false);
	json_t *ref = eo_desired_owner_ref(member);

	if (labels == NULL || ref == NULL) {
		json_decref(labels);
		json_decref(ref);
		return NULL;
	}
	return json_pack("{s:{s:o, s:[o]}}", "metadata", "labels", labels, "ownerReferences", ref);
}

json_t *eo_migrate_owner_patch(const json_t *ours, bool controller)
{
	json_t *ref = eo_desired_owner_ref(ours);
	json_t *labels = eo_desired_cluster_labels(ours, eo_cluster_name(ours));

	if (ref == NULL || labels == NULL) {
		json_decref(ref);
		json_decref(labels);
		return NULL;
	}
	if (!controller) {
		json_object_set_new(ref, "controller", json_false());
		json_object_set_new(ref, "blockOwnerDeletion", json_false());
	}
	return json_pack("{s:{s:o, s:[o]}}", "metadata", "labels", labels, "ownerReferences", ref);
}

json_t *eo_migrate_finalizers_patch(const json_t *obj)
{
	const json_t *fins = eo_meta_get(obj, "finalizers");
	json_t *keep = json_array(), *f = NULL;
	size_t i;

	if (keep == NULL)
		return NULL;
	json_array_foreach(fins, i, f)
	{
		const char *name = json_string_value(f);

		if (name != NULL &&
		    (strcmp(name, "orphan") == 0 || strcmp(name, "foregroundDeletion") == 0))
			json_array_append(keep, f);
	}
	if (json_array_size(keep) == json_array_size(fins)) {
		json_decref(keep);
		return NULL;
	}
	return json_pack("{s:{s:o}}", "metadata", "finalizers", keep);
}

bool eo_migrate_owned_by(const json_t *obj, const char *uid)
{
	return eo_meta_owned_by(obj, uid);
}

/* ---- the legacy release's admission webhooks --------------------------------------------- */

static const char *or_else(const char *s, const char *dflt)
{
	return s != NULL ? s : dflt;
}

static bool has_str(const json_t *arr, const char *a, const char *b)
{
	const json_t *v = NULL;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);

		if (s != NULL && (strcmp(s, a) == 0 || (b != NULL && strcmp(s, b) == 0)))
			return true;
	}
	return false;
}

/* A rule of hook that reaches etcdclusters.etcd.aenix.io (wildcards included). */
static bool covers_legacy(const json_t *hook)
{
	const json_t *rule = NULL;
	size_t i;

	json_array_foreach(json_object_get(hook, "rules"), i, rule)
	{
		const json_t *res = json_object_get(rule, "resources");

		if (has_str(json_object_get(rule, "apiGroups"), "etcd.aenix.io", "*") &&
		    (has_str(res, EO_MIGRATE_LEGACY_PLURAL, "*") ||
		     has_str(res, EO_MIGRATE_LEGACY_PLURAL "/*", "*/*")))
			return true;
	}
	return false;
}

bool eo_migrate_service_selects(const json_t *svc, const json_t *dep)
{
	const json_t *sel = at(svc, "spec", "selector", NULL);
	const json_t *labels = at(dep, "spec", "template", "metadata");
	const char *k = NULL;
	const json_t *v = NULL;

	labels = json_object_get(labels, "labels");
	if (!json_is_object(sel) || json_object_size(sel) == 0)
		return false;
	json_object_foreach((json_t *)sel, k, v)
	{
		const char *have = json_string_value(json_object_get(labels, k));

		if (have == NULL || !json_is_string(v) || strcmp(have, json_string_value(v)) != 0)
			return false;
	}
	return true;
}

static bool legacy_service(const json_t *hook, const json_t *dep, const json_t *services)
{
	const json_t *ref = at(hook, "clientConfig", "service", NULL);
	const char *ns = str(ref, "namespace", NULL, NULL), *name = str(ref, "name", NULL, NULL);
	const char *dep_ns = eo_meta_namespace(dep);
	const json_t *svc = NULL;
	size_t i;

	if (dep == NULL || ns == NULL || name == NULL || dep_ns == NULL || strcmp(ns, dep_ns) != 0)
		return false;
	json_array_foreach(services, i, svc)
	{
		const char *n = eo_meta_name(svc);

		if (n != NULL && strcmp(n, name) == 0)
			return eo_migrate_service_selects(svc, dep);
	}
	return false;
}

static void append(char *buf, size_t cap, const char *s)
{
	size_t len = strlen(buf);

	if (len < cap)
		snprintf(buf + len, cap - len, "%s%.*s", len ? ", " : "", (int)(cap - len), s);
}

static void find_in(const json_t *items, bool mutating, const json_t *dep, const json_t *services,
		    struct eo_migrate_webhooks *out)
{
	const json_t *cfg = NULL;
	size_t i;

	json_array_foreach(items, i, cfg)
	{
		struct eo_migrate_webhook w = {.obj = cfg, .mutating = mutating, .legacy = true};
		const json_t *hook = NULL;
		size_t k, covering = 0;

		snprintf(w.name, sizeof(w.name), "%s", or_else(eo_meta_name(cfg), ""));
		json_array_foreach(json_object_get(cfg, "webhooks"), k, hook)
		{
			const char *fp = str(hook, "failurePolicy", NULL, NULL);
			const json_t *ref = at(hook, "clientConfig", "service", NULL);

			if (!covers_legacy(hook))
				continue;
			covering++;
			append(w.hooks, sizeof(w.hooks),
			       or_else(str(hook, "name", NULL, NULL), "?"));
			if (fp == NULL || strcmp(fp, "Fail") == 0)
				w.fail = true;
			if (w.service[0] == '\0' && ref != NULL)
				snprintf(w.service, sizeof(w.service), "%.253s/%.253s",
					 or_else(str(ref, "namespace", NULL, NULL), ""),
					 or_else(str(ref, "name", NULL, NULL), ""));
			if (!legacy_service(hook, dep, services))
				w.legacy = false;
		}
		if (covering == 0)
			continue;
		if (out->n == EO_MIGRATE_MAX_WEBHOOKS) {
			out->truncated = true;
			return;
		}
		out->n_legacy += w.legacy;
		out->w[out->n++] = w;
	}
}

void eo_migrate_find_webhooks(const json_t *mutating, const json_t *validating, const json_t *dep,
			      const json_t *services, struct eo_migrate_webhooks *out)
{
	memset(out, 0, sizeof(*out));
	find_in(mutating, true, dep, services, out);
	find_in(validating, false, dep, services, out);
}

static const char *webhook_kind(const struct eo_migrate_webhook *w)
{
	return w->mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration";
}

/* "Kind name (webhooks a, b; Service ns/svc; failurePolicy Fail)" for each of the legacy ones. */
static void list_legacy(const struct eo_migrate_webhooks *w, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (size_t i = 0; i < w->n; i++) {
		char one[EO_NAME_MAX + EO_MIGRATE_HOOKS_MAX + 2 * EO_NAME_MAX + 96];

		if (!w->w[i].legacy)
			continue;
		snprintf(one, sizeof(one), "%s %s (webhook %s; Service %s; failurePolicy %s)",
			 webhook_kind(&w->w[i]), w->w[i].name, w->w[i].hooks, w->w[i].service,
			 w->w[i].fail ? "Fail" : "Ignore");
		append(buf, cap, one);
	}
}

enum eo_migrate_webhook_action eo_migrate_webhooks_decide(const struct eo_migrate_webhooks *w,
							  bool consent, const char *ns,
							  const char *name, char *msg, size_t cap)
{
	char list[EO_MIGRATE_MSG_MAX];

	msg[0] = '\0';
	if (w->n_legacy == 0)
		return EO_MIGRATE_WEBHOOKS_NONE;
	list_legacy(w, list, sizeof(list));
	if (consent) {
		snprintf(
		    msg, cap,
		    "the legacy operator's admission webhooks cover etcdclusters.etcd.aenix.io "
		    "and nothing answers them while it is stopped: apply saves them in "
		    "ConfigMap %s/%s%s (for a rollback) and deletes them before it deletes "
		    "the legacy EtcdCluster (" EO_MIGRATE_WEBHOOKS_FLAG "): %s",
		    ns, name, EO_MIGRATE_STATE_SUFFIX, list);
		return EO_MIGRATE_WEBHOOKS_REMOVE;
	}
	snprintf(msg, cap,
		 "the legacy operator's admission webhooks cover etcdclusters.etcd.aenix.io: %s. "
		 "Nothing answers them while the legacy operator is stopped, so the garbage "
		 "collector could never finish the orphaning delete of the legacy EtcdCluster "
		 "(its removal of the \"orphan\" finalizer is an update they refuse). Run apply "
		 "with " EO_MIGRATE_WEBHOOKS_FLAG ": it saves them in ConfigMap %s%s for a "
		 "rollback and deletes them",
		 list, name, EO_MIGRATE_STATE_SUFFIX);
	return EO_MIGRATE_WEBHOOKS_REFUSE;
}

void eo_migrate_webhook_key(const struct eo_migrate_webhook *w, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s.%s.json",
		 w->mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations",
		 w->name);
}

json_t *eo_migrate_webhook_saved(const struct eo_migrate_webhook *w)
{
	json_t *o = json_deep_copy(w->obj), *md = NULL;
	static const char *const drop[] = {
	    "uid",	     "resourceVersion", "generation",	     "creationTimestamp",
	    "managedFields", "selfLink",	"deletionTimestamp", NULL};

	if (o == NULL)
		return NULL;
	json_object_set_new(o, "apiVersion", json_string("admissionregistration.k8s.io/v1"));
	json_object_set_new(o, "kind", json_string(webhook_kind(w)));
	md = json_object_get(o, "metadata");
	for (size_t i = 0; drop[i] != NULL; i++)
		json_object_del(md, drop[i]);
	return o;
}
