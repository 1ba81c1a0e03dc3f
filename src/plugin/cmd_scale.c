/*
 * `kubectl etcd add-member` and `remove-member` (plugin/run.h): spec.replicas through the
 * operator.
 */
#include "plugin/internal.h"

#include <stdio.h>

#include "api/names.h"

int eo__plugin_cmd_scale(struct eo__plugin_ctx *c)
{
	struct eo_plan_member pm[EO_PLUGIN_TARGETS_MAX];
	struct eo_kube_resource r = {EO_API_GROUP_VERSION, EO_PLURAL_CLUSTERS, c->ns,
				     c->a->cluster};
	struct eo_kube_error ke = {0};
	enum eo_plugin_scale s;
	json_t *patch = NULL;
	char res[EO_NAME_MAX + 64];
	size_t i;
	eo_kube_err e;

	for (i = 0; i < c->nt; i++) {
		pm[i].member = c->t[i].member;
		pm[i].pod = c->t[i].pod;
		pm[i].pvc = NULL;
	}
	s = eo_plugin_scale_decide(c->cluster, pm, c->nt,
				   c->a->cmd == EO_PCMD_REMOVE_MEMBER ? c->a->remove_name : NULL,
				   &patch, c->msg, sizeof(c->msg));
	if (s != EO_PSCALE_PATCH)
		return (int)eo_plugin_scale_exit(s);
	e = eo_kube_patch(c->kc, &r, patch, NULL, &ke);
	json_decref(patch);
	if (e == EO_KUBE_ECONFLICT)
		return eo__plugin_failf(
		    c, EO_PEXIT_FAILED,
		    "EtcdCluster %s/%s changed while we decided; nothing was changed, run "
		    "the command again",
		    c->ns, c->a->cluster);
	if (e != EO_KUBE_OK) {
		snprintf(res, sizeof(res), "%s \"%s\"", EO_RESOURCE_CLUSTERS, c->a->cluster);
		return (int)eo_plugin_kube_failure(e, &ke, "patch", res, c->ns, c->msg,
						   sizeof(c->msg));
	}
	{
		char sentence[EO_PLUGIN_MSG_MAX];

		snprintf(sentence, sizeof(sentence), "%s", c->msg);
		c->msg[0] = '\0';
		return eo__plugin_emit(
		    c,
		    json_pack("{s:s,s:s,s:s,s:s}", "cluster", c->a->cluster, "namespace", c->ns,
			      "action", eo_plugin_cmd_name(c->a->cmd), "message", sentence),
		    NULL, NULL, 0, sentence);
	}
}
