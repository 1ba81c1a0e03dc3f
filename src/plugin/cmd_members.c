/* `kubectl etcd members` and `kubectl etcd status` (plugin/run.h). */
#include "plugin/internal.h"

#include <stdbool.h>
#include <stdio.h>

int eo__plugin_cmd_members(struct eo__plugin_ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},	       {"ID", "id"},
	    {"STATUS", "status"},      {"ROLE", "role"},
	    {"PEER URLS", "peerURLs"}, {"CLIENT URLS", "clientURLs"},
	};
	struct eo_etcd_members ms = {0};
	char hex[32];
	json_t *doc, *rows;
	size_t i;
	int rc = eo__plugin_member_list(c, &ms, NULL);

	if (rc != 0)
		return rc;
	doc = eo__plugin_base_doc(c);
	rows = json_array();
	json_object_set_new(doc, "clusterID",
			    json_string(eo_plugin_id_hex(ms.cluster_id, hex, sizeof(hex))));
	for (i = 0; i < ms.n; i++) {
		const struct eo_etcd_member *m = &ms.v[i];

		json_array_append_new(
		    rows,
		    json_pack("{s:s,s:s,s:s,s:s,s:o,s:o}", "name", m->name ? m->name : "", "id",
			      eo_plugin_id_hex(m->id, hex, sizeof(hex)), "status",
			      m->name && m->name[0] ? "started" : "unstarted", "role",
			      m->is_learner ? "learner" : "voter", "peerURLs",
			      eo__plugin_str_array(m->peer_urls, m->n_peer_urls), "clientURLs",
			      eo__plugin_str_array(m->client_urls, m->n_client_urls)));
	}
	json_object_set_new(doc, "members", rows);
	eo_etcd_members_clear(&ms);
	return eo__plugin_emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
}

int eo__plugin_cmd_status(struct eo__plugin_ctx *c)
{
	static const struct eo_plugin_col cols[] = {
	    {"NAME", "name"},
	    {"ID", "id"},
	    {"VERSION", "version"},
	    {"DB SIZE", "dbSizeText"},
	    {"IN USE", "inUseText"},
	    {"LEADER", "isLeader"},
	    {"LEARNER", "isLearner"},
	    {"RAFT TERM", "raftTerm"},
	    {"RAFT INDEX", "raftIndex"},
	    {"ERRORS", "errors"},
	};
	size_t idx[EO_PLUGIN_TARGETS_MAX], n, i, failed = 0;
	json_t *doc, *rows;
	char hex[32], b1[32], b2[32], first[EO_PLUGIN_MSG_MAX] = "";
	int rc = eo__plugin_pick_targets(c, idx, &n), first_rc = 0;
	bool table = c->a->format == EO_PFMT_TABLE;

	if (rc != 0)
		return rc;
	doc = eo__plugin_base_doc(c);
	rows = json_array();
	for (i = 0; i < n; i++) {
		const struct eo_plugin_target *t = &c->t[idx[i]];
		struct eo_etcd_status st = {0};
		json_t *row, *errs;

		rc = eo__plugin_member_status(c, t->name, &st);
		if (rc != 0) {
			if (!first[0]) {
				snprintf(first, sizeof(first), "%s", c->msg);
				first_rc = rc;
			}
			failed++;
			json_array_append_new(
			    rows, table ? json_pack("{s:s,s:[s]}", "name", t->name, "errors",
						    "unreachable (see below)")
					: json_pack("{s:s,s:s}", "name", t->name, "error", c->msg));
			continue;
		}
		errs = eo__plugin_str_array(st.errors, st.n_errors);
		row = json_pack(
		    "{s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:b,s:b,s:I,s:I,s:I,s:o}", "name", t->name, "id",
		    eo_plugin_id_hex(st.member_id, hex, sizeof(hex)), "version", st.version,
		    "storageVersion", st.storage_version, "dbSize", (json_int_t)st.db_size,
		    "dbSizeInUse", (json_int_t)st.db_size_in_use, "dbSizeQuota",
		    (json_int_t)st.db_size_quota, "isLeader",
		    st.leader != 0 && st.leader == st.member_id, "isLearner", st.is_learner,
		    "raftTerm", (json_int_t)st.raft_term, "raftIndex", (json_int_t)st.raft_index,
		    "raftAppliedIndex", (json_int_t)st.raft_applied_index, "errors", errs);
		if (table) { /* sizes as etcdctl shows them; json and yaml keep the bytes */
			json_object_set_new(
			    row, "dbSizeText",
			    json_string(eo_plugin_bytes(st.db_size, b1, sizeof(b1))));
			json_object_set_new(
			    row, "inUseText",
			    json_string(eo_plugin_bytes(st.db_size_in_use, b2, sizeof(b2))));
		}
		json_array_append_new(rows, row);
		eo_etcd_status_clear(&st);
	}
	json_object_set_new(doc, "members", rows);
	rc = eo__plugin_emit(c, doc, "members", cols, sizeof(cols) / sizeof(cols[0]), NULL);
	if (rc != 0)
		return rc;
	if (failed)
		return eo__plugin_failf(c, first_rc,
					"%zu of %zu member(s) did not answer; first: %s", failed, n,
					first);
	return 0;
}
