/*
 * etcd/types.c - result texts and the clear/find helpers of the plain etcd
 * types (etcd/types.h). Pure: no I/O.
 */
#include "etcd/types.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

static const char *const err_text[EO_ETCD_ERR_COUNT_] = {
    [EO_ETCD_OK] = "ok",
    [EO_ETCD_UNAVAILABLE] = "etcd unavailable",
    [EO_ETCD_TIMEOUT] = "etcd request timed out",
    [EO_ETCD_NOTFOUND] = "member not found",
    [EO_ETCD_KEY_NOT_FOUND] = "key not found",
    [EO_ETCD_LEARNER_NOT_READY] = "learner not yet in sync with the leader",
    [EO_ETCD_NOT_LEARNER] = "member is not a learner",
    [EO_ETCD_TOO_MANY_LEARNERS] = "too many learner members",
    [EO_ETCD_UNHEALTHY_CLUSTER] = "cluster too unhealthy for reconfiguration",
    [EO_ETCD_PEER_URL_EXISTS] = "member with these peer URLs already exists",
    [EO_ETCD_LEARNER] = "request not supported by a learner endpoint",
    [EO_ETCD_NOSPACE] = "etcd database space exceeded",
    [EO_ETCD_COMPACTED] = "revision compacted",
    [EO_ETCD_AUTH] = "etcd authentication or permission error",
    [EO_ETCD_INVALID] = "invalid argument",
    [EO_ETCD_UNSUPPORTED] = "etcd v3 gateway not available",
    [EO_ETCD_INTERNAL] = "etcd internal error",
    [EO_ETCD_PROTOCOL] = "unexpected response from etcd",
    [EO_ETCD_TOOBIG] = "etcd response too large",
    [EO_ETCD_TRANSPORT] = "transport error",
    [EO_ETCD_NOMEM] = "out of memory",
};

const char *eo_etcd_strerror(eo_etcd_err err)
{
	return EO_ENUM_NAME(err_text, err, "unknown etcd error");
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void eo_etcd_member_clear(struct eo_etcd_member *m)
{
	if (m == NULL)
		return;
	free(m->name);
	free_strings(m->peer_urls, m->n_peer_urls);
	free_strings(m->client_urls, m->n_client_urls);
	memset(m, 0, sizeof(*m));
}

void eo_etcd_members_clear(struct eo_etcd_members *ms)
{
	if (ms == NULL)
		return;
	for (size_t i = 0; i < ms->n; i++)
		eo_etcd_member_clear(&ms->v[i]);
	free(ms->v);
	memset(ms, 0, sizeof(*ms));
}

const struct eo_etcd_member *eo_etcd_members_find(const struct eo_etcd_members *ms, uint64_t id)
{
	for (size_t i = 0; ms != NULL && i < ms->n; i++)
		if (ms->v[i].id == id)
			return &ms->v[i];
	return NULL;
}

void eo_etcd_status_clear(struct eo_etcd_status *st)
{
	if (st == NULL)
		return;
	free_strings(st->errors, st->n_errors);
	memset(st, 0, sizeof(*st));
}

void eo_etcd_alarms_clear(struct eo_etcd_alarms *a)
{
	if (a == NULL)
		return;
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static const char *const names[] = {
    [EO_ETCD_ALARM_NONE] = "NONE",
    [EO_ETCD_ALARM_NOSPACE] = "NOSPACE",
    [EO_ETCD_ALARM_CORRUPT] = "CORRUPT",
};

const char *eo_etcd_alarm_name(enum eo_etcd_alarm_type t)
{
	return EO_ENUM_NAME(names, t, "NONE");
}
