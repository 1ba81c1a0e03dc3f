/*
 * Endpoint bookkeeping for the etcd client: URL normalisation, the order in
 * which endpoints are tried, and learner marks learnt from member lists.
 * Pure functions over an array of endpoint records; the clock is an argument.
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "etcd/internal.h"

bool eo__etcd_url_normalise(const char *in, char *out, size_t cap)
{
	size_t len, scheme_len;

	if (in == NULL || cap == 0)
		return false;
	if (strncasecmp(in, "http://", 7) == 0)
		scheme_len = 7;
	else if (strncasecmp(in, "https://", 8) == 0)
		scheme_len = 8;
	else
		return false;
	len = strnlen(in, cap);
	if (len >= cap)
		return false;
	while (len > scheme_len && in[len - 1] == '/')
		len--;
	if (len == scheme_len)
		return false; /* no host */
	for (size_t i = scheme_len; i < len; i++)
		if (in[i] == '/' || in[i] == '?' || in[i] == '#' || isspace((unsigned char)in[i]))
			return false; /* a path would be silently glued to /v3/... */
	for (size_t i = 0; i < len; i++)
		out[i] = i < scheme_len ? (char)tolower((unsigned char)in[i]) : in[i];
	out[len] = '\0';
	return true;
}

size_t eo__etcd_find_ep(const struct eo__etcd_ep *eps, size_t n, const char *url)
{
	char norm[EO_ETCD_URL_MAX];

	if (!eo__etcd_url_normalise(url, norm, sizeof(norm)))
		return n;
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(eps[i].url, norm) == 0)
			return i;
	return n;
}

static bool recently_failed(const struct eo__etcd_ep *ep, int64_t now_ms, int64_t backoff_ms)
{
	return ep->failed_at_ms != 0 && now_ms - ep->failed_at_ms < backoff_ms;
}

size_t eo__etcd_select(const struct eo__etcd_ep *eps, size_t n, bool need_voter, int64_t now_ms,
		       int64_t backoff_ms, size_t *order)
{
	size_t k = 0, first_failed;

	/* Healthy endpoints first, in the configured order. */
	for (size_t i = 0; i < n; i++) {
		if (need_voter && eps[i].role == EO__ETCD_ROLE_LEARNER)
			continue;
		if (!recently_failed(&eps[i], now_ms, backoff_ms))
			order[k++] = i;
	}
	/* Then the recently failed ones, the longest-failed first: it is the
	 * likeliest to be back. Insertion sort; endpoint lists are tiny. */
	first_failed = k;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (need_voter && eps[i].role == EO__ETCD_ROLE_LEARNER)
			continue;
		if (!recently_failed(&eps[i], now_ms, backoff_ms))
			continue;
		j = k++;
		while (j > first_failed && eps[order[j - 1]].failed_at_ms > eps[i].failed_at_ms) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	return k;
}

void eo__etcd_learn_roles(struct eo__etcd_ep *eps, size_t n, const struct eo_etcd_members *ms)
{
	for (size_t m = 0; ms != NULL && m < ms->n; m++) {
		const struct eo_etcd_member *mem = &ms->v[m];

		for (size_t u = 0; u < mem->n_client_urls; u++) {
			size_t i = eo__etcd_find_ep(eps, n, mem->client_urls[u]);

			if (i < n)
				eps[i].role =
				    mem->is_learner ? EO__ETCD_ROLE_LEARNER : EO__ETCD_ROLE_VOTER;
		}
	}
}
