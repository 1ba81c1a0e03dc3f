/*
 * Fuzz target: the etcd gateway reply parsers (src/etcd/wire.c). Their input comes from etcd
 * Pods in tenant namespaces.
 *
 * Input: byte 0 picks the parser, the rest is the reply body. Every parser runs on the body;
 * the selector only decides which scalar helper also gets it (u64, base64, error mapping with
 * an HTTP status from byte 0).
 *
 * Invariants: a parser that fails leaves its output cleared; a parsed member has a non-zero ID
 * and non-NULL strings; base64 (core/base64, lenient as the gateway reader) decoding of an
 * encoding gives the bytes back; parse_u64 agrees
 * with strtoull; the member list can be handed to the planner's helpers
 * (eo_plan_initial_cluster, eo_plan_find_etcd_member) and the client's endpoint roles.
 */
#include <errno.h>
#include <jansson.h>

#include "core/base64.h"
#include "etcd/client.h"
#include "etcd/internal.h"
#include "plan/plan.h"

#include "fuzz.h"

static void check_member(const struct eo_etcd_member *m)
{
	FUZZ_CHECK(m->id != 0, "member with ID 0");
	FUZZ_CHECK(m->name != NULL, "member without name");
	FUZZ_CHECK(m->n_peer_urls == 0 || m->peer_urls != NULL, "peer URLs missing");
	FUZZ_CHECK(m->n_client_urls == 0 || m->client_urls != NULL, "client URLs missing");
	for (size_t i = 0; i < m->n_peer_urls; i++)
		FUZZ_CHECK(m->peer_urls[i] != NULL, "peer URL %zu NULL", i);
	for (size_t i = 0; i < m->n_client_urls; i++)
		FUZZ_CHECK(m->client_urls[i] != NULL, "client URL %zu NULL", i);
}

static void check_members(const struct eo_etcd_members *ms)
{
	struct eo__etcd_ep eps[4];
	char buf[EO_PLAN_INITIAL_CLUSTER_MAX];

	FUZZ_CHECK(ms->n == 0 || ms->v != NULL, "members without array");
	for (size_t i = 0; i < ms->n; i++) {
		const struct eo_etcd_member *m = &ms->v[i];

		check_member(m);
		FUZZ_CHECK(eo_etcd_members_find(ms, m->id) != NULL, "member %zu not found", i);
		/* An empty peer URL names nothing: the lookup by URL skips it by design. */
		if (m->n_peer_urls > 0 && m->peer_urls[0][0] != '\0') {
			const struct eo_etcd_member *f =
			    eo_plan_find_etcd_member(ms, "fuzz-new", m->peer_urls[0]);

			FUZZ_CHECK(f != NULL, "member %zu not found by its peer URL", i);
			if (eo_plan_initial_cluster(ms, "fuzz-new", m->peer_urls[0], buf,
						    sizeof(buf)) == 0)
				FUZZ_CHECK(strlen(buf) < sizeof(buf), "initial cluster overflow");
			else
				FUZZ_CHECK(buf[0] == '\0', "failed initial cluster not emptied");
		}
	}
	/* The client's endpoint roles from a member list. */
	memset(eps, 0, sizeof(eps));
	for (size_t i = 0; i < 4; i++) {
		const char *u = i < ms->n && ms->v[i].n_client_urls > 0 ? ms->v[i].client_urls[0]
									: "http://x:2379";

		if (!eo__etcd_url_normalise(u, eps[i].url, sizeof(eps[i].url)))
			snprintf(eps[i].url, sizeof(eps[i].url), "http://x%zu:2379", i);
	}
	eo__etcd_learn_roles(eps, 4, ms);
	for (size_t i = 0; i < 4; i++)
		FUZZ_CHECK(eps[i].role <= EO__ETCD_ROLE_LEARNER, "role %d", (int)eps[i].role);
}

static void check_cleared(const void *p, size_t n, const char *what)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(b[i] == 0, "%s not cleared after a failure", what);
}

static void scalars(uint8_t sel, const char *s, size_t n)
{
	struct eo_etcd_detail d;
	unsigned char *dec = NULL, *dec2 = NULL;
	size_t dlen = 0, dlen2 = 0;
	uint64_t v = 0;
	char *enc = NULL;
	eo_etcd_err e;

	/* parse_u64 against strtoull on the same digits. */
	if (eo__etcd_parse_u64(s, n, &v)) {
		char tmp[32];
		unsigned long long w;

		FUZZ_CHECK(n > 0 && n <= 20, "u64 of %zu chars accepted", n);
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		errno = 0;
		w = strtoull(tmp, NULL, 10);
		FUZZ_CHECK(errno == 0 && w == v, "parse_u64(%s) = %llu, strtoull %llu", tmp,
			   (unsigned long long)v, w);
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK(s[i] >= '0' && s[i] <= '9', "non-digit accepted");
	}

	/* base64: whatever decodes re-encodes to bytes that decode the same. */
	if (eo_base64_decode(s, n, EO_BASE64_LENIENT, &dec, &dlen) == 0) {
		FUZZ_CHECK(dec[dlen] == '\0', "decoded base64 not terminated");
		FUZZ_CHECK(dlen <= n, "decoded longer than the text");
		enc = eo_base64_encode(dec, dlen);
		FUZZ_CHECK(enc != NULL, "encode failed");
		FUZZ_CHECK(eo_base64_decode(enc, strlen(enc), 0, &dec2, &dlen2) == 0,
			   "own encoding does not decode");
		FUZZ_CHECK(dlen2 == dlen && memcmp(dec, dec2, dlen) == 0, "base64 round trip");
		free(enc);
		free(dec2);
		free(dec);
	}
	/* Every byte string encodes and decodes back. */
	enc = eo_base64_encode(s, n);
	FUZZ_CHECK(enc != NULL, "encode failed");
	FUZZ_CHECK(eo_base64_decode(enc, strlen(enc), 0, &dec, &dlen) == 0,
		   "encoding does not decode");
	FUZZ_CHECK(dlen == n && memcmp(dec, s, n) == 0, "round trip of %zu bytes", n);
	free(enc);
	free(dec);

	/* prefix_end is greater than every key with the prefix. */
	if (eo__etcd_prefix_end(s, n, &dec, &dlen)) {
		if (!(dlen == 1 && dec[0] == 0)) {
			size_t m = dlen < n ? dlen : n;

			FUZZ_CHECK(dlen > 0 && dlen <= n, "prefix end of %zu bytes", dlen);
			FUZZ_CHECK(memcmp(dec, s, m) > 0, "prefix end not after the prefix");
		}
		free(dec);
	}

	/* Error mapping of a non-200 reply; whatever was in the detail before must not leak out. */
	memset(&d, 0xa5, sizeof(d));
	e = eo_etcd_wire_map_error(sel % 2 ? 400 + sel : 500 + sel, s, n, &d);
	FUZZ_CHECK(e != EO_ETCD_OK, "an error reply mapped to OK");
	FUZZ_CHECK(memchr(d.message, '\0', sizeof(d.message)) != NULL, "message not terminated");
	FUZZ_CHECK(d.grpc_code >= -1 && d.grpc_code <= 64, "grpc code %d", d.grpc_code);
	if (n < 256) {
		char tmp[256];

		memcpy(tmp, s, n);
		tmp[n] = '\0';
		(void)eo__etcd_map_grpc(sel - 1, tmp);
		(void)eo__etcd_is_learner_refusal(tmp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eo_etcd_members ms, ms2;
	struct eo_etcd_member added;
	struct eo_etcd_status st;
	struct eo_etcd_range rg;
	int64_t rev = 0;
	const char *body;
	uint8_t sel;

	if (size < 1)
		return 0;
	sel = data[0];
	body = (const char *)data + 1;
	size--;

	if (eo_etcd_wire_parse_members(body, size, &ms) == EO_ETCD_OK) {
		check_members(&ms);
		eo_etcd_members_clear(&ms);
	} else {
		check_cleared(&ms, sizeof(ms), "member list");
	}

	if (eo__etcd_parse_member_add(body, size, &added, sel & 1 ? &ms2 : NULL) == EO_ETCD_OK) {
		check_member(&added);
		if (sel & 1) {
			check_members(&ms2);
			eo_etcd_members_clear(&ms2);
		}
		eo_etcd_member_clear(&added);
	} else {
		check_cleared(&added, sizeof(added), "added member");
		if (sel & 1)
			check_cleared(&ms2, sizeof(ms2), "member list of an add");
	}

	if (eo_etcd_wire_parse_status(body, size, &st) == EO_ETCD_OK) {
		FUZZ_CHECK(memchr(st.version, '\0', sizeof(st.version)) != NULL, "version");
		FUZZ_CHECK(st.n_errors == 0 || st.errors != NULL, "errors missing");
		for (size_t i = 0; i < st.n_errors; i++)
			FUZZ_CHECK(st.errors[i] != NULL, "error %zu NULL", i);
		eo_etcd_status_clear(&st);
	} else {
		check_cleared(&st, sizeof(st), "status");
	}

	if (eo_etcd_wire_parse_range(body, size, &rg) == EO_ETCD_OK) {
		FUZZ_CHECK(rg.n == 0 || rg.kvs != NULL, "kvs missing");
		for (size_t i = 0; i < rg.n; i++) {
			FUZZ_CHECK(rg.kvs[i].key != NULL &&
				       rg.kvs[i].key[rg.kvs[i].key_len] == '\0',
				   "key %zu", i);
			FUZZ_CHECK(rg.kvs[i].value == NULL ||
				       rg.kvs[i].value[rg.kvs[i].value_len] == '\0',
				   "value %zu", i);
		}
		eo_etcd_range_clear(&rg);
	} else {
		check_cleared(&rg, sizeof(rg), "range");
	}

	{
		struct eo_etcd_alarms al;

		if (eo__etcd_parse_alarms(body, size, &al) == EO_ETCD_OK) {
			FUZZ_CHECK(al.n == 0 || al.v != NULL, "alarms missing");
			for (size_t i = 0; i < al.n; i++)
				FUZZ_CHECK(al.v[i].type <= EO_ETCD_ALARM_CORRUPT, "alarm %zu type",
					   i);
			eo_etcd_alarms_clear(&al);
		} else {
			check_cleared(&al, sizeof(al), "alarms");
		}
	}
	(void)eo__etcd_parse_put(body, size, &rev);
	scalars(sel, body, size);
	return 0;
}
