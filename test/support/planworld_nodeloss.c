/*
 * support/planworld_nodeloss.c - see planworld_nodeloss.h. Moved verbatim from
 * test_plan_nodeloss.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/conditions.h"
#include "api/member.h"
#include "api/names.h"
#include "api/timeutil.h"
#include "support/planworld_nodeloss.h"
#include "support/planworld_scale.h"

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

const char *const PWN_NAMES[PWN_MAXM] = {"demo-a", "demo-b", "demo-c", "demo-d"};

json_t *pwn_member(const char *name)
{
	const struct pws_m d = {.name = name, .voter = true};

	return pws_member(&d);
}

/* A Running Pod on node, ready or not, stamped with its member's Pod hash (no roll due). */
json_t *pwn_pod(const json_t *m, const char *node, bool ready)
{
	char h[EO_DESIRED_HASH_MAX];
	json_t *p = json_pack("{s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s}, s:{s:s, s:[{s:s, s:s}]}}",
			      "metadata", "name", eo_member_name(m), "namespace", "default", "uid",
			      "pod-uid", "annotations", EO_ANNOTATION_POD_HASH, "", "spec",
			      "nodeName", node, "status", "phase", "Running", "conditions", "type",
			      "Ready", "status", ready ? "True" : "False");

	assert_non_null(p);
	assert_int_equal(eo_desired_member_pod_hash(m, &OPTS, h, sizeof(h)), 0);
	json_object_set_new(json_object_get(json_object_get(p, "metadata"), "annotations"),
			    EO_ANNOTATION_POD_HASH, json_string(h));
	return p;
}

/* A Node whose Ready condition is ready ("True", "False", "Unknown") since since. */
json_t *pwn_node(const char *name, const char *ready, time_t since)
{
	char ts[EO_TIME_BUF];

	assert_int_equal(eo_time_format(since, ts, sizeof(ts)), 0);
	return json_pack("{s:{s:s, s:{}}, s:{}, s:{s:[{s:s, s:s, s:s}]}}", "metadata", "name", name,
			 "annotations", "spec", "status", "conditions", "type", "Ready", "status",
			 ready, "lastTransitionTime", ts);
}

/* n members, all ready voters on Ready nodes, all listed by etcd (the leader's list). */
void pwn_world_init(struct pwn_world *w, size_t n)
{
	char nn[24];

	memset(w, 0, sizeof(*w));
	w->cluster = pws_cluster((int)n);
	w->hsvc = eo_desired_headless_service(w->cluster);
	w->csvc = eo_desired_client_service(w->cluster);
	for (size_t i = 0; i < n; i++) {
		snprintf(nn, sizeof(nn), "n%zu", i);
		w->pm[i].member = pwn_member(PWN_NAMES[i]);
		w->pm[i].pod = pwn_pod(w->pm[i].member, nn, true);
		w->nodes[i] = pwn_node(nn, "True", PWS_T0 - 86400);
		w->nd[i].node = w->nodes[i];
		eo_desired_member_peer_url(w->peer[i], sizeof(w->peer[i]), &OPTS, PWN_NAMES[i],
					   "demo", "default", false);
		w->peer_p[i] = w->peer[i];
		w->ev[i] = (struct eo_etcd_member){.id = 0x100 + i,
						   .name = (char *)PWN_NAMES[i],
						   .peer_urls = &w->peer_p[i],
						   .n_peer_urls = 1};
	}
	w->n = n;
	w->etcd = (struct eo_etcd_members){.v = w->ev, .n = n, .cluster_id = 0x248adce0359142baULL};
	w->pdb = eo_desired_pdb(w->cluster, eo_desired_pdb_min_available((int)n, (int)n));
	json_object_set_new(
	    w->pdb, "status",
	    json_pack("{s:i, s:i}", "observedGeneration", 0, "disruptionsAllowed", n > 2 ? 1 : 0));
	w->in = pws_running_input(w->cluster, w->pm, n, w->hsvc, w->csvc, w->pdb, &w->etcd);
	w->in.nodes = w->nd;
	w->in.nodes_live = true;
}

void pwn_world_free(struct pwn_world *w)
{
	for (size_t i = 0; i < w->n; i++) {
		json_decref((json_t *)w->pm[i].member);
		json_decref((json_t *)w->pm[i].pod);
		json_decref(w->nodes[i]);
	}
	json_decref(w->cluster);
	json_decref(w->hsvc);
	json_decref(w->csvc);
	json_decref(w->pdb);
}

void pwn_done(struct pwn_world *w, struct eo_plan_result *r)
{
	eo_plan_result_clear(r);
	pwn_world_free(w);
}
