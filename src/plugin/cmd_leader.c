/* `kubectl etcd forfeit-leadership` (plugin/run.h): move the leadership off a member. */
#include "plugin/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sleep.h"
#include "etcd/wire.h"

#define LEADER_WAIT_TRIES    20
#define LEADER_WAIT_SLEEP_MS 500

/* The leader's ID as the running members see it (0: none known). */
static uint64_t find_leader(struct eo__plugin_ctx *c)
{
	size_t order[EO_PLUGIN_TARGETS_MAX], n, i;

	n = eo_plugin_query_order(c->t, c->nt, order);
	for (i = 0; i < n; i++) {
		struct eo_etcd_status st = {0};
		uint64_t l;

		if (eo__plugin_member_status(c, c->t[order[i]].name, &st) != 0)
			continue;
		l = st.leader;
		eo_etcd_status_clear(&st);
		if (l)
			return l;
	}
	return 0;
}

int eo__plugin_cmd_forfeit(struct eo__plugin_ctx *c)
{
	struct eo_etcd_members ms = {0};
	const char *running[EO_PLUGIN_TARGETS_MAX];
	size_t nrun = 0, i;
	uint64_t leader, target = 0, now = 0;
	char hex1[32], hex2[32], nb1[32], nb2[32], *req, *body = NULL, sentence[512];
	const char *lname;
	size_t len = 0;
	int rc = eo__plugin_member_list(c, &ms, NULL), k;

	if (rc != 0)
		return rc;
	for (i = 0; i < c->nt; i++)
		if (c->t[i].running)
			running[nrun++] = c->t[i].name;
	leader = find_leader(c);
	k = eo_plugin_forfeit_target(&ms, leader, c->a->to, running, nrun, &target, c->msg,
				     sizeof(c->msg));
	if (k != 0) {
		/* --to names nothing etcd knows: not found when no EtcdMember has that name. */
		rc = k == -2 && eo_plugin_target_find(c->t, c->nt, c->a->to) < 0 ? EO_PEXIT_NOTFOUND
										 : EO_PEXIT_REFUSED;
		goto out;
	}
	lname = eo__plugin_name_of(&ms, leader, nb1, sizeof(nb1));
	k = eo_plugin_target_find(c->t, c->nt, lname);
	if (k < 0 || !c->t[k].running) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "the leader %s has no running Pod to ask",
				      lname);
		goto out;
	}
	req = eo_etcd_wire_req_move_leader(target);
	if (!req) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED, "out of memory");
		goto out;
	}
	rc = eo__plugin_etcd_call(c, lname, "/v3/maintenance/transfer-leadership", req, 0, &body,
				  &len);
	free(req);
	free(body);
	if (rc != 0)
		goto out;
	for (i = 0; i < LEADER_WAIT_TRIES; i++) {
		now = find_leader(c);
		if (now && now != leader)
			break;
		eo_sleep_ms(LEADER_WAIT_SLEEP_MS);
	}
	if (now != target) {
		rc = eo__plugin_failf(c, EO_PEXIT_FAILED,
				      "etcd accepted the transfer but the leader is now %s, not %s",
				      eo__plugin_name_of(&ms, now, nb2, sizeof(nb2)),
				      eo__plugin_name_of(&ms, target, hex2, sizeof(hex2)));
		goto out;
	}
	snprintf(sentence, sizeof(sentence), "leadership moved from %s (%s) to %s (%s)", lname,
		 eo_plugin_id_hex(leader, hex1, sizeof(hex1)),
		 eo__plugin_name_of(&ms, target, nb2, sizeof(nb2)),
		 eo_plugin_id_hex(target, hex2, sizeof(hex2)));
	{
		json_t *doc = eo__plugin_base_doc(c);

		json_object_set_new(doc, "previousLeader", json_string(lname));
		json_object_set_new(doc, "leader",
				    json_string(eo__plugin_name_of(&ms, target, nb2, sizeof(nb2))));
		rc = eo__plugin_emit(c, doc, NULL, NULL, 0, sentence);
	}
out:
	eo_etcd_members_clear(&ms);
	return rc;
}
