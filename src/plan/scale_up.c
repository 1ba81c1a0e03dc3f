/*
 * plan/scale_up.c - scale up, one member at a time: a new member is created under its recorded
 * name, added to etcd as a learner once every voter is ready, and given its initial cluster
 * from etcd's member list. Part of the cluster planner (plan/plan.h, plan/internal.h).
 */
#include <stdio.h>
#include <string.h>

#include "api/member.h"
#include "plan/internal.h"

int eo_plan_initial_cluster(const struct eo_etcd_members *list, const char *member_name,
			    const char *peer_url, char *buf, size_t n)
{
	const struct eo_etcd_member *self = NULL;
	size_t len = 0;

	if (buf == NULL || n == 0)
		return -1;
	buf[0] = '\0';
	if (list == NULL || !eo_present(member_name) || !eo_present(peer_url))
		return -1;
	self = eo_plan_find_etcd_member(list, member_name, peer_url);
	if (self == NULL)
		return -1;
	for (size_t i = 0; i < list->n; i++) {
		const struct eo_etcd_member *m = &list->v[i];
		const char *name = m == self ? member_name : m->name;
		int w;

		if (!eo_present(name) || m->n_peer_urls == 0)
			continue; /* another member that never started: it cannot be named */
		for (size_t j = 0; j < m->n_peer_urls; j++) {
			w = snprintf(buf + len, n - len, "%s%s=%s", len ? "," : "", name,
				     m->peer_urls[j]);
			if (w < 0 || (size_t)w >= n - len) {
				buf[0] = '\0';
				return -1;
			}
			len += (size_t)w;
		}
	}
	return 0;
}

/* 5. A joining member that etcd already knows: give it its initial cluster. */
bool eo__plan_step_set_initial_cluster(struct eo__plan_ctx *x, const struct eo_plan_member *pending)
{
	char peer[EO_DESIRED_URL_MAX];

	if (pending == NULL || eo__plan_etcd_entry(x, pending->member) == NULL)
		return !x->ok;
	if (eo__plan_peer_url_of(x, pending->member, peer, sizeof(peer)) != 0)
		return true;
	if (eo_plan_initial_cluster(x->in->etcd, eo_member_name(pending->member), peer,
				    x->out->initial_cluster,
				    sizeof(x->out->initial_cluster)) != 0) {
		x->ok = false;
		return true;
	}
	eo__plan_msgf(x,
		      "completing pending scale-up member before further action: member %s: "
		      "setting its initial cluster from etcd's member list",
		      eo_member_name(pending->member));
	x->out->action = EO_PLAN_SET_INITIAL_CLUSTER;
	x->out->member = pending->member;
	return true;
}

/*
 * 7. Scale up: everything that votes must be ready before the next member joins; a pending
 * member is added to etcd as a learner, else a new member is created.
 */
void eo__plan_step_scale_up(struct eo__plan_ctx *x, const struct eo__plan_counts *c,
			    int32_t desired, const struct eo_plan_member *pending)
{
	struct eo_plan_result *out = x->out;

	if (pending == NULL && (int32_t)c->n >= desired) {
		out->action = EO_PLAN_NONE;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return;
	}
	if (x->held && pending == NULL && (int32_t)c->n >= x->held_size) {
		/* Past the deadline: back up to the members it had, never beyond. */
		eo__plan_msgf(
		    x,
		    "past status.progressDeadline: not growing beyond the %d member(s) the "
		    "cluster had when it passed; edit the spec to resume",
		    x->held_size);
		out->action = EO_PLAN_NONE;
		out->requeue_ms = EO_PLAN_REQUEUE_STEADY_MS;
		return;
	}
	if (c->ready < c->n - c->pending) {
		eo__plan_msgf(
		    x,
		    "waiting for existing members to become Ready before next scale-up step "
		    "(not ready: %s)",
		    c->not_ready);
		eo__plan_wait_for(x, EO_PLAN_REQUEUE_SHORT_MS);
		return;
	}
	if (pending != NULL) {
		if (eo__plan_peer_url_of(x, pending->member, out->peer_url,
					 sizeof(out->peer_url)) != 0)
			return;
		eo__plan_msgf(x, "adding member %s to etcd as a learner",
			      eo_member_name(pending->member));
		eo__plan_voter_endpoints(x);
		out->action = EO_PLAN_ADD_LEARNER;
		out->member = pending->member;
		out->requeue_ms = EO_PLAN_REQUEUE_SHORT_MS;
		return;
	}
	eo__plan_msgf(x, "scaling up from %zu to %d member(s): creating a member", c->n, desired);
	eo__plan_create_named(x, EO_PLAN_CREATE_MEMBER);
}
