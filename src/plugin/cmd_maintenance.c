/* `kubectl etcd defrag`, `compact`, `alarm` and `alarm disarm` (plugin/run.h). */
#include "plugin/internal.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "etcd/wire.h"

#define DEFRAG_TIMEOUT_MS 600000L

static const struct eo_plugin_col alarm_cols[] = {
    {"MEMBER", "member"},
    {"ID", "memberID"},
    {"ALARM", "alarm"},
};

int eo__plugin_cmd_defrag(struct eo__plugin_ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},
	    {"LEADER", "isLeader"},
	    {"DB SIZE BEFORE", "before"},
	    {"DB SIZE AFTER", "after"},
	};
	size_t idx[EO_PLUGIN_TARGETS_MAX], order[EO_PLUGIN_TARGETS_MAX], n, i;
	int64_t before[EO_PLUGIN_TARGETS_MAX];
	int leader = -1, rc = eo__plugin_pick_targets(c, idx, &n);
	json_t *doc, *rows;
	char b1[32], b2[32];

	if (rc != 0)
		return rc;
	for (i = 0; i < n; i++) {
		struct eo_etcd_status st = {0};

		rc = eo__plugin_member_status(c, c->t[idx[i]].name, &st);
		if (rc != 0)
			return rc; /* defragmenting around an unreachable member: refuse */
		before[i] = st.db_size;
		if (st.leader != 0 && st.leader == st.member_id)
			leader = (int)i;
		eo_etcd_status_clear(&st);
	}
	eo_plugin_defrag_order(n, leader, order);
	doc = eo__plugin_base_doc(c);
	rows = json_array();
	json_object_set_new(doc, "members", rows);
	for (i = 0; i < n; i++) {
		const char *name = c->t[idx[order[i]]].name;
		struct eo_etcd_status st = {0};
		char *body = NULL;
		size_t len = 0;

		rc = eo__plugin_etcd_call(c, name, "/v3/maintenance/defragment", "{}",
					  c->a->timeout_s ? 0 : DEFRAG_TIMEOUT_MS, &body, &len);
		free(body);
		if (rc != 0) {
			json_decref(doc);
			return rc;
		}
		rc = eo__plugin_member_status(c, name, &st);
		if (rc != 0) {
			json_decref(doc);
			return rc;
		}
		json_array_append_new(
		    rows,
		    json_pack("{s:s,s:b,s:s,s:s,s:I,s:I}", "name", name, "isLeader",
			      (int)order[i] == leader, "before",
			      eo_plugin_bytes(before[order[i]], b1, sizeof(b1)), "after",
			      eo_plugin_bytes(st.db_size, b2, sizeof(b2)), "dbSizeBefore",
			      (json_int_t)before[order[i]], "dbSizeAfter", (json_int_t)st.db_size));
		eo_etcd_status_clear(&st);
	}
	return eo__plugin_emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
}

int eo__plugin_cmd_compact(struct eo__plugin_ctx *c)
{
	int64_t rev = c->a->revision;
	char *body = NULL, *req, sentence[256];
	size_t len = 0;
	int rc;
	const char *via = NULL;

	if (rev == 0) {
		struct eo_etcd_range_opts ro = {.count_only = true};
		struct eo_etcd_range r = {0};

		req = eo_etcd_wire_req_range("kubectl-etcd", 12, &ro);
		if (!req)
			return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
		rc = eo__plugin_cluster_call(c, "/v3/kv/range", req, &body, &len, NULL);
		free(req);
		if (rc != 0)
			return rc;
		if (eo_etcd_wire_parse_range(body, len, &r) != EO_ETCD_OK || r.revision < 1) {
			eo_etcd_range_clear(&r);
			free(body);
			return eo__plugin_failf(c, EO_PEXIT_FAILED,
						"cannot read the current revision");
		}
		rev = r.revision;
		eo_etcd_range_clear(&r);
		free(body);
		body = NULL;
	}
	req = eo_etcd_wire_req_compact(rev, true);
	if (!req)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	rc = eo__plugin_cluster_call(c, "/v3/kv/compaction", req, &body, &len, &via);
	free(req);
	free(body);
	if (rc != 0)
		return rc;
	snprintf(sentence, sizeof(sentence), "compacted %s/%s up to revision %" PRId64, c->ns,
		 c->a->cluster, rev);
	return eo__plugin_emit(c,
			       json_pack("{s:s,s:s,s:I,s:b}", "cluster", c->a->cluster, "namespace",
					 c->ns, "revision", (json_int_t)rev, "physical", 1),
			       NULL, NULL, 0, sentence);
}

static int get_alarms(struct eo__plugin_ctx *c, json_t **alarms)
{
	char *body = NULL, *req = eo_etcd_wire_req_alarm("GET", NULL), err[256];
	size_t len = 0;
	int rc;

	if (!req)
		return eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
	rc = eo__plugin_cluster_call(c, "/v3/maintenance/alarm", req, &body, &len, NULL);
	free(req);
	if (rc != 0)
		return rc;
	if (eo_plugin_parse_alarms(body, len, alarms, err, sizeof(err)) != 0)
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "%s", err);
	free(body);
	return rc;
}

static json_t *alarm_rows(json_t *alarms, const struct eo_etcd_members *ms)
{
	json_t *rows = json_array(), *a;
	char hex[32], nb[32];
	size_t i;

	json_array_foreach(alarms, i, a)
	{
		uint64_t id = eo_plugin_alarm_member(a);

		json_array_append_new(rows,
				      json_pack("{s:s,s:s,s:O}", "member",
						eo__plugin_name_of(ms, id, nb, sizeof(nb)),
						"memberID", eo_plugin_id_hex(id, hex, sizeof(hex)),
						"alarm", json_object_get(a, "alarm")));
	}
	return rows;
}

int eo__plugin_cmd_alarm(struct eo__plugin_ctx *c, bool disarm)
{
	struct eo_etcd_members ms = {0};
	json_t *alarms = NULL, *doc, *a;
	size_t i;
	int rc = eo__plugin_member_list(c, &ms, NULL);
	const char *sentence = NULL;

	if (rc != 0)
		return rc;
	rc = get_alarms(c, &alarms);
	if (rc != 0)
		goto out;
	if (disarm) {
		json_array_foreach(alarms, i, a)
		{
			char *body = NULL, *req;
			size_t len = 0;

			req = eo_etcd_wire_req_alarm_name(
			    "DEACTIVATE", eo_plugin_alarm_member(a),
			    json_string_value(json_object_get(a, "alarm")));
			if (!req) {
				rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
				goto out;
			}
			rc = eo__plugin_cluster_call(c, "/v3/maintenance/alarm", req, &body, &len,
						     NULL);
			free(req);
			free(body);
			if (rc != 0)
				goto out;
		}
	}
	doc = eo__plugin_base_doc(c);
	json_object_set_new(doc, disarm ? "disarmed" : "alarms", alarm_rows(alarms, &ms));
	if (json_array_size(alarms) == 0)
		sentence = disarm ? "no alarm was raised; nothing to disarm" : "no alarms raised";
	else if (disarm)
		sentence = "disarmed the alarms above";
	rc = eo__plugin_emit(c, doc, disarm ? "disarmed" : "alarms",
			     json_array_size(alarms) ? alarm_cols : NULL, 3, sentence);
out:
	json_decref(alarms);
	eo_etcd_members_clear(&ms);
	return rc;
}
