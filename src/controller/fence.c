/*
 * controller/fence.c - the leader-lease check before etcd membership changes. See fence.h.
 */
#include "controller/fence.h"

#include <stdio.h>
#include <string.h>

#include "obs/log.h"

bool eo_fence_allows(const struct eo_fence *f, char *why, size_t cap)
{
	long margin, left;

	if (f == NULL || f->held_for_ms == NULL)
		return true;
	margin = f->margin_ms > 0 ? f->margin_ms : EO_FENCE_DEFAULT_MARGIN_MS;
	left = f->held_for_ms(f->ud);
	if (left >= margin)
		return true;
	if (why != NULL && cap > 0)
		snprintf(why, cap,
			 "leader lease held for %ld ms more, below the %ld ms a membership "
			 "change needs; not sending it",
			 left, margin);
	return false;
}

/* Checks the fence; on refusal fills detail, logs, and returns false. */
static bool check(const struct eo_fence *f, const char *what, struct eo_etcd_detail *detail)
{
	char why[EO_ETCD_MSG_MAX];

	if (eo_fence_allows(f, why, sizeof(why)))
		return true;
	if (detail != NULL) {
		memset(detail, 0, sizeof(*detail));
		detail->grpc_code = -1;
		snprintf(detail->message, sizeof(detail->message), "%s", why);
	}
	eo_log_kv(EO_LOG_WARN, NULL, "etcd membership change refused: leader lease not held",
		  "call", what, "detail", why, NULL);
	return false;
}

eo_etcd_err eo_fenced_member_add(const struct eo_fence *f, eo_etcd_client *c,
				 const char *const *peer_urls, size_t n_peer_urls, bool as_learner,
				 struct eo_etcd_member *added, struct eo_etcd_members *members,
				 struct eo_etcd_detail *detail)
{
	if (!check(f, "MemberAdd", detail))
		return EO_ETCD_UNAVAILABLE;
	return eo_etcd_member_add(c, peer_urls, n_peer_urls, as_learner, added, members, detail);
}

eo_etcd_err eo_fenced_member_promote(const struct eo_fence *f, eo_etcd_client *c, uint64_t id,
				     struct eo_etcd_members *members, struct eo_etcd_detail *detail)
{
	if (!check(f, "MemberPromote", detail))
		return EO_ETCD_UNAVAILABLE;
	return eo_etcd_member_promote(c, id, members, detail);
}

eo_etcd_err eo_fenced_member_remove(const struct eo_fence *f, eo_etcd_client *c, uint64_t id,
				    struct eo_etcd_members *members, struct eo_etcd_detail *detail)
{
	if (!check(f, "MemberRemove", detail))
		return EO_ETCD_UNAVAILABLE;
	return eo_etcd_member_remove(c, id, members, detail);
}
