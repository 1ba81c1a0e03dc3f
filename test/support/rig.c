/*
 * support/rig.c - the act-layer test rig (support/rig.h).
 */
#include "api/meta.h"
#include "support/rig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/names.h"

static const char *const PLURALS[RIG_KINDS] = {
    [RIG_CLUSTERS] = EO_PLURAL_CLUSTERS,
    [RIG_MEMBERS] = EO_PLURAL_MEMBERS,
    [RIG_PODS] = "pods",
    [RIG_PVCS] = "persistentvolumeclaims",
    [RIG_SERVICES] = "services",
    [RIG_PDBS] = "poddisruptionbudgets",
    [RIG_NODES] = "nodes",
    [RIG_NETPOLS] = "networkpolicies",
    [RIG_SNAPSHOTS] = EO_PLURAL_SNAPSHOTS,
    [RIG_JOBS] = "jobs",
    [RIG_SCHEDULES] = EO_PLURAL_SCHEDULES,
    [RIG_DEFRAGS] = EO_PLURAL_DEFRAGS,
    [RIG_DEFRAG_SCHEDULES] = EO_PLURAL_DEFRAG_SCHEDULES,
};

/* The clocks (ctl.now takes no argument): one rig at a time. */
static time_t rig_t0;

static time_t frozen_now(void)
{
	return rig_t0;
}

static int64_t frozen_ms(void *ud)
{
	(void)ud;
	return (int64_t)rig_t0 * 1000;
}

/* Each log entry: how many MemberRemove calls etcd had received by then. */
static void count_removes(void *ud, json_t *entry)
{
	json_object_set_new(
	    entry, "removes",
	    json_integer((json_int_t)eo_fake_etcd_count(ud, "cluster/member/remove")));
}

const char *rig_plural(enum rig_kind kind)
{
	return PLURALS[kind];
}

static struct eo_cache_set one(eo_kube_cache *c)
{
	return (struct eo_cache_set){{c}, 1};
}

void rig_start(struct rig *r, time_t t0)
{
	memset(r, 0, sizeof(*r));
	rig_t0 = t0;
	r->api = fs_start();
	r->etcd = eo_fake_etcd_start();
	assert_non_null(r->etcd);
	fs_on_request(r->api, count_removes, r->etcd);
	assert_int_equal(eo_kube_config_new(fs_url(r->api), NULL, NULL, &r->cfg, NULL), EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(r->cfg, NULL, &r->kc, NULL), EO_KUBE_OK);
	r->rec = eo_kube_recorder_new(
	    r->kc, t0 != 0 ? &(struct eo_kube_recorder_opts){.now_ms = frozen_ms} : NULL);
	assert_non_null(r->rec);
	for (size_t i = 0; i < RIG_KINDS; i++) {
		r->caches[i] = eo_kube_cache_new(EO_LABEL_CLUSTER);
		assert_non_null(r->caches[i]);
	}
	r->ctl = (struct eo_controller){
	    .kc = r->kc,
	    .rec = r->rec,
	    .clusters = one(r->caches[RIG_CLUSTERS]),
	    .members = one(r->caches[RIG_MEMBERS]),
	    .pods = one(r->caches[RIG_PODS]),
	    .pvcs = one(r->caches[RIG_PVCS]),
	    .services = one(r->caches[RIG_SERVICES]),
	    .pdbs = one(r->caches[RIG_PDBS]),
	    .snapshots = one(r->caches[RIG_SNAPSHOTS]),
	    .jobs = one(r->caches[RIG_JOBS]),
	    .schedules = one(r->caches[RIG_SCHEDULES]),
	    .defrags = one(r->caches[RIG_DEFRAGS]),
	    .defrag_schedules = one(r->caches[RIG_DEFRAG_SCHEDULES]),
	    .netpols = one(r->caches[RIG_NETPOLS]),
	    .operator_image = "localhost/etcd-operator:dev",
	    .build = {.cluster_domain = "cluster.local"},
	    .etcd_timeout_ms = 2000,
	    .now = t0 != 0 ? frozen_now : NULL,
	    .etcd_connect_to = eo_fake_etcd_connect_to(r->etcd),
	};
}

void rig_watch_nodes(struct rig *r)
{
	r->ctl.nodes = one(r->caches[RIG_NODES]);
}

void rig_stop(struct rig *r)
{
	eo_kube_recorder_free(r->rec);
	eo_kube_client_free(r->kc);
	fs_stop(r->api);
	eo_fake_etcd_stop(r->etcd);
	for (size_t i = 0; i < RIG_KINDS; i++)
		eo_kube_cache_free(r->caches[i]);
	memset(r, 0, sizeof(*r));
}

void rig_cache_put(struct rig *r, enum rig_kind kind, json_t *o)
{
	assert_non_null(o);
	assert_int_equal(eo_kube_cache_upsert(r->caches[kind], o, NULL), EO_KUBE_OK);
	json_decref(o);
}

void rig_store_put(struct rig *r, enum rig_kind kind, json_t *o)
{
	fs_put(r->api, PLURALS[kind], o);
}

void rig_put(struct rig *r, enum rig_kind kind, json_t *o)
{
	assert_non_null(o);
	assert_int_equal(eo_kube_cache_upsert(r->caches[kind], o, NULL), EO_KUBE_OK);
	fs_put(r->api, PLURALS[kind], o);
}

json_t *rig_stored(struct rig *r, enum rig_kind kind, const char *name)
{
	return fs_get(r->api, PLURALS[kind], name);
}

json_t *rig_cached(struct rig *r, enum rig_kind kind, const char *name)
{
	return eo_kube_cache_get(r->caches[kind], kind == RIG_NODES ? NULL : "default", name);
}

void rig_sync(struct rig *r, enum rig_kind kind)
{
	json_t *have = fs_list(r->api, PLURALS[kind]), *cached, *o, *live;
	size_t i;

	json_array_foreach(have, i, o)
	{
		assert_int_equal(eo_kube_cache_upsert(r->caches[kind], o, NULL), EO_KUBE_OK);
	}
	json_decref(have);
	cached = eo_kube_cache_list(r->caches[kind], NULL);
	json_array_foreach(cached, i, o)
	{
		live = fs_get(r->api, PLURALS[kind], eo_meta_name(o));
		if (live == NULL)
			eo_kube_cache_remove(r->caches[kind], eo_meta_namespace(o), eo_meta_name(o),
					     NULL);
		json_decref(live);
	}
	json_decref(cached);
}

void rig_sync_defrag(struct rig *r)
{
	rig_sync(r, RIG_CLUSTERS);
	rig_sync(r, RIG_MEMBERS);
	rig_sync(r, RIG_DEFRAGS);
}
