/*
 * Unit tests for plan/certs.c and its use in eo_plan_cluster: cert-manager not installed
 * (CertManagerNotInstalled, nothing created), missing or drifted Certificates (ensure),
 * an Issuer that does not exist (IssuerNotFound), Certificates being issued
 * (WaitingForCertificates: no member before its Secrets), a running cluster whose
 * Certificate is not Ready (Degraded=True CertificateNotReady, planning goes on), and a
 * cluster whose Certificates are all Ready (no cert-manager verdict at all); the per-cluster
 * CA: when a cluster gets one (a table over spec, Certificates seen and cluster ID: a running
 * cluster of an older operator keeps its issuer) and its Issuers and CA Certificate ensured.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "api/conditions.h"
#include "api/names.h"
#include "desired/certificate.h"
#include "plan/certs.h"
#include "plan/plan.h"
#include "support/testutil.h"
#include "support/tu_main.h"

#define T0 1780394400 /* 2026-06-02T10:00:00Z */

static const struct eo_desired_opts OPTS = {.cluster_domain = "cluster.local"};

#define TLS_FULL                                                                                   \
	"{'client':{'certManager':{'serverIssuerRef':{'name':'ca','kind':'Issuer'},"               \
	"'operatorClientIssuerRef':{'name':'ca','kind':'Issuer'}}},"                               \
	"'peer':{'certManager':{'issuerRef':{'name':'peer-ca','kind':'ClusterIssuer'}}}}"

static json_t *cluster(const char *status)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':'EtcdCluster',"
		 "'metadata':{'name':'demo','namespace':'default','uid':'c-uid','generation':1},"
		 "'spec':{'replicas':1,'version':'3.6.11','storage':{'size':'1Gi','medium':''},"
		 "'progressDeadlineSeconds':600,'tls':" TLS_FULL "},'status':%s}",
		 status != NULL ? status : "{}");
	return tu_jsonq(buf);
}

/* The desired Certificates (and CA Issuers) of c, Ready as given (NULL: no Ready condition). */
struct certs {
	json_t *obj[EO_CERT_ROLE_COUNT_];
	json_t *iss[EO_CA_ISSUER_COUNT_];
	struct eo_plan_certs seen;
};

static void certs_make_ca(struct certs *s, const json_t *c, bool pcc, const char *ready,
			  const char *msg)
{
	memset(s, 0, sizeof(*s));
	s->seen.installed = true;
	s->seen.per_cluster_ca = pcc;
	for (int i = 0; pcc && i < EO_CA_ISSUER_COUNT_; i++) {
		s->iss[i] = eo_desired_ca_issuer(c, (enum eo_ca_issuer)i);
		s->seen.issuer[i] = s->iss[i];
	}
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++) {
		s->seen.role[r].issuer_exists = -1;
		if (!eo_desired_certificate_wanted(c, (enum eo_cert_role)r, pcc))
			continue;
		s->obj[r] = eo_desired_certificate(c, (enum eo_cert_role)r, pcc, &OPTS);
		assert_non_null(s->obj[r]);
		if (ready != NULL)
			json_object_set_new(s->obj[r], "status",
					    json_pack("{s:[{s:s, s:s, s:s}]}", "conditions", "type",
						      "Ready", "status", ready, "message", msg));
		s->seen.role[r].have = s->obj[r];
	}
}

static void certs_make(struct certs *s, const json_t *c, const char *ready, const char *msg)
{
	certs_make_ca(s, c, false, ready, msg);
}

static void certs_free(struct certs *s)
{
	for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++)
		json_decref(s->obj[r]);
	for (int i = 0; i < EO_CA_ISSUER_COUNT_; i++)
		json_decref(s->iss[i]);
}

static const char *cond_reason(const json_t *st, const char *type)
{
	return eo_condition_reason(st, type);
}

/* --- eo_plan_certs, table-driven --- */

static void test_verdicts(void **state)
{
	static const struct {
		const char *what;
		bool installed;
		bool present;	   /* the Certificates exist */
		const char *ready; /* their Ready status, NULL: none yet */
		int issuer;	   /* issuer_exists of the peer Certificate */
		bool drift;	   /* the server Certificate's SANs were edited */
		enum eo_certs_verdict want;
		const char *msg_has;
	} cases[] = {
	    {"not installed", false, false, NULL, -1, false, EO_CERTS_NOT_INSTALLED,
	     "does not serve cert-manager.io/v1"},
	    {"none yet", true, false, NULL, -1, false, EO_CERTS_ENSURE, "ensuring"},
	    {"drifted", true, true, "True", -1, true, EO_CERTS_ENSURE, "ensuring"},
	    {"all ready", true, true, "True", -1, false, EO_CERTS_READY, ""},
	    {"issuing", true, true, NULL, 1, false, EO_CERTS_NOT_READY, "not issued yet"},
	    {"cert-manager says why", true, true, "False", 1, false, EO_CERTS_NOT_READY,
	     "Certificate demo-server is not Ready: the reason"},
	    {"issuer missing", true, true, "False", 0, false, EO_CERTS_ISSUER_MISSING,
	     "ClusterIssuer peer-ca referenced by Certificate demo-peer does not exist"},
	    {"issuer unknown", true, true, "False", -1, false, EO_CERTS_NOT_READY, "not Ready"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = cluster(NULL);
		struct certs s;
		enum eo_certs_verdict v = EO_CERTS_READY;
		char msg[EO_PLAN_CERTS_MSG_MAX];

		certs_make(&s, c, cases[i].ready, "the reason");
		s.seen.installed = cases[i].installed;
		if (!cases[i].present)
			for (int r = 0; r < EO_CERT_ROLE_COUNT_; r++)
				s.seen.role[r].have = NULL;
		s.seen.role[EO_CERT_PEER].issuer_exists = cases[i].issuer;
		if (cases[i].drift)
			json_object_set_new(json_object_get(s.obj[EO_CERT_SERVER], "spec"),
					    "dnsNames", tu_jsonq("['x']"));
		assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
		if (v != cases[i].want || strstr(msg, cases[i].msg_has) == NULL)
			fail_msg("%s: verdict %d (want %d), message '%s'", cases[i].what, (int)v,
				 (int)cases[i].want, msg);
		certs_free(&s);
		json_decref(c);
	}
}

/* Nothing observed reads as not installed. */
static void test_null_is_not_installed(void **state)
{
	json_t *c = cluster(NULL);
	enum eo_certs_verdict v = EO_CERTS_READY;
	char msg[EO_PLAN_CERTS_MSG_MAX];

	(void)state;
	assert_int_equal(eo_plan_certs(c, &OPTS, NULL, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_NOT_INSTALLED);
	json_decref(c);
}

/* --- the per-cluster CA --- */

/* A Certificate of the cluster with the given issuer (the mode reads only issuerRef). */
static json_t *leaf_from(const char *issuer, const char *kind)
{
	return json_pack("{s:s, s:{s:{s:s, s:s}}}", "kind", "Certificate", "spec", "issuerRef",
			 "name", issuer, "kind", kind);
}

/*
 * When a cluster gets a CA of its own. The rule that matters: a running cluster whose
 * Certificates an older operator made from the spec's issuer keeps that issuer (its members
 * trust that CA and nothing else), a new cluster gets its own CA.
 */
static void test_per_cluster_ca_mode(void **state)
{
	static const struct {
		const char *what;
		const char *ca_field; /* spec.tls.certificateAuthority, NULL: absent */
		bool ca_seen;	      /* the CA Certificate exists */
		const char *leaf;     /* issuer of the server Certificate seen, NULL: none */
		const char *leaf_kind;
		bool has_id; /* status.clusterID */
		bool want;
	} cases[] = {
	    {"new cluster", NULL, false, NULL, NULL, false, true},
	    {"new cluster, issuing", NULL, true, "demo-cluster-ca", "Issuer", false, true},
	    {"old operator's running cluster", NULL, false, "ca", "Issuer", true, false},
	    {"old operator's cluster not formed yet", NULL, false, "ca", "Issuer", false, false},
	    {"old cluster on a ClusterIssuer", NULL, false, "x", "ClusterIssuer", true, false},
	    {"ClusterIssuer named like the CA Issuer", NULL, false, "demo-cluster-ca",
	     "ClusterIssuer", true, false},
	    {"running, Certificates deleted", NULL, false, NULL, NULL, true, false},
	    {"running per-cluster, CA Certificate deleted", NULL, false, "demo-cluster-ca",
	     "Issuer", true, true},
	    {"running per-cluster, leaves deleted", NULL, true, NULL, NULL, true, true},
	    {"explicit Issuer", "Issuer", false, NULL, NULL, false, false},
	    {"explicit Issuer beats a CA seen", "Issuer", true, "demo-cluster-ca", "Issuer", false,
	     false},
	    {"explicit PerCluster", "PerCluster", false, NULL, NULL, false, true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = cluster(cases[i].has_id ? "{'clusterID':'abc'}" : NULL);
		json_t *leaf =
		    cases[i].leaf != NULL ? leaf_from(cases[i].leaf, cases[i].leaf_kind) : NULL;
		json_t *ca = json_pack("{s:s}", "kind", "Certificate");
		struct eo_plan_certs seen = {.installed = true};

		if (cases[i].ca_field != NULL)
			json_object_set_new(json_object_get(json_object_get(c, "spec"), "tls"),
					    "certificateAuthority", json_string(cases[i].ca_field));
		seen.role[EO_CERT_SERVER].have = leaf;
		seen.role[EO_CERT_CA].have = cases[i].ca_seen ? ca : NULL;
		if (eo_plan_certs_per_cluster_ca(c, &seen) != cases[i].want)
			fail_msg("%s: per-cluster CA %d, want %d", cases[i].what,
				 (int)!cases[i].want, (int)cases[i].want);
		json_decref(leaf);
		json_decref(ca);
		json_decref(c);
	}
	/* Nothing observed: a new cluster gets its own CA, a formed one keeps its issuer. */
	{
		json_t *c = cluster(NULL), *f = cluster("{'clusterID':'abc'}");

		assert_true(eo_plan_certs_per_cluster_ca(c, NULL));
		assert_false(eo_plan_certs_per_cluster_ca(f, NULL));
		json_decref(c);
		json_decref(f);
	}
}

/* Per cluster: the Issuers and the CA Certificate are wanted objects like the leaves. */
static void test_per_cluster_ca_verdicts(void **state)
{
	json_t *c = cluster(NULL);
	struct certs s;
	enum eo_certs_verdict v = EO_CERTS_READY;
	char msg[EO_PLAN_CERTS_MSG_MAX];

	(void)state;
	/* All there and Ready. */
	certs_make_ca(&s, c, true, "True", "ok");
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_READY);
	/* The CA Issuer missing: ensure (before anything else is looked at). */
	s.seen.issuer[EO_CA_ISSUER_CA] = NULL;
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_ENSURE);
	assert_non_null(strstr(msg, "cluster CA Issuers"));
	/* The bootstrap Issuer edited: ensure. */
	s.seen.issuer[EO_CA_ISSUER_CA] = s.iss[EO_CA_ISSUER_CA];
	json_object_set_new(s.iss[EO_CA_ISSUER_SELFSIGNED], "spec",
			    tu_jsonq("{'ca':{'secretName':'x'}}"));
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_ENSURE);
	certs_free(&s);
	/* The CA Certificate missing: ensure. */
	certs_make_ca(&s, c, true, "True", "ok");
	s.seen.role[EO_CERT_CA].have = NULL;
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_ENSURE);
	certs_free(&s);
	/* A leaf still from the spec's issuer while per cluster: patched onto the CA Issuer. */
	certs_make_ca(&s, c, true, "True", "ok");
	json_object_set_new(json_object_get(s.obj[EO_CERT_PEER], "spec"), "issuerRef",
			    tu_jsonq("{'name':'peer-ca','kind':'ClusterIssuer','group':"
				     "'cert-manager.io'}"));
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_ENSURE);
	certs_free(&s);
	/* The CA not issued yet: the leaves wait, and the message names the CA. */
	certs_make_ca(&s, c, true, "True", "ok");
	json_object_set_new(s.obj[EO_CERT_CA], "status",
			    tu_jsonq("{'conditions':[{'type':'Ready','status':'False',"
				     "'message':'Issuing'}]}"));
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_NOT_READY);
	assert_non_null(strstr(msg, "demo-cluster-ca"));
	certs_free(&s);
	/* In Issuer mode the same objects absent are no drift: nothing of the CA is wanted. */
	certs_make_ca(&s, c, false, "True", "ok");
	assert_int_equal(eo_plan_certs(c, &OPTS, &s.seen, &v, msg, sizeof(msg)), 0);
	assert_int_equal(v, EO_CERTS_READY);
	certs_free(&s);
	json_decref(c);
}

/* --- in eo_plan_cluster --- */

static void plan(const json_t *c, const struct eo_plan_certs *seen, const struct eo_plan_member *m,
		 size_t n, struct eo_plan_result *out)
{
	json_t *hs = eo_desired_headless_service(c), *cs = eo_desired_client_service(c);
	struct eo_plan_input in = {.cluster = c,
				   .members = m,
				   .n_members = n,
				   .headless_svc = hs,
				   .client_svc = cs,
				   .build = &OPTS,
				   .certs = seen,
				   .now = T0};

	assert_int_equal(eo_plan_cluster(&in, out), 0);
	json_decref(hs);
	json_decref(cs);
}

static void test_cluster_not_installed(void **state)
{
	json_t *c = cluster(NULL);
	struct eo_plan_certs seen = {.installed = false};
	struct eo_plan_result r;

	(void)state;
	plan(c, &seen, NULL, 0, &r);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_non_null(r.status);
	assert_string_equal(eo_condition_status(r.status, EO_COND_AVAILABLE), EO_COND_FALSE);
	assert_string_equal(cond_reason(r.status, EO_COND_AVAILABLE),
			    EO_REASON_CERT_MANAGER_NOT_INSTALLED);
	assert_string_equal(cond_reason(r.status, EO_COND_PROGRESSING),
			    EO_REASON_CERT_MANAGER_NOT_INSTALLED);
	assert_string_equal(r.event_type, "Warning");
	assert_string_equal(r.event_reason, EO_REASON_CERT_MANAGER_NOT_INSTALLED);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_CERTS_MISSING_MS);
	/* Nothing was latched: no target, no member name before cert-manager answers. */
	assert_null(json_object_get(r.status, "observed"));
	eo_plan_result_clear(&r);
	/* The same with nothing observed at all. */
	plan(c, NULL, NULL, 0, &r);
	assert_string_equal(cond_reason(r.status, EO_COND_AVAILABLE),
			    EO_REASON_CERT_MANAGER_NOT_INSTALLED);
	eo_plan_result_clear(&r);
	json_decref(c);
}

static void test_cluster_ensure(void **state)
{
	json_t *c = cluster(NULL);
	struct eo_plan_certs seen = {.installed = true};
	struct eo_plan_result r;

	(void)state;
	plan(c, &seen, NULL, 0, &r);
	assert_int_equal(r.action, EO_PLAN_ENSURE_CERTIFICATES);
	assert_string_equal(eo_plan_action_name(r.action), "ensure-certificates");
	assert_null(r.status); /* the next pass computes it */
	eo_plan_result_clear(&r);
	json_decref(c);
}

static void test_cluster_issuer_missing(void **state)
{
	json_t *c = cluster(NULL);
	struct certs s;
	struct eo_plan_result r;
	const json_t *avail;

	(void)state;
	certs_make(&s, c, "False", "Issuing certificate as Secret does not exist");
	s.seen.role[EO_CERT_PEER].issuer_exists = 0;
	plan(c, &s.seen, NULL, 0, &r);
	assert_int_equal(r.action, EO_PLAN_NONE);
	assert_string_equal(cond_reason(r.status, EO_COND_AVAILABLE), EO_REASON_ISSUER_NOT_FOUND);
	assert_string_equal(eo_condition_status(r.status, EO_COND_PROGRESSING), EO_COND_FALSE);
	avail = eo_condition_find(r.status, EO_COND_AVAILABLE);
	assert_non_null(strstr(json_string_value(json_object_get(avail, "message")),
			       "ClusterIssuer peer-ca referenced by Certificate demo-peer"));
	assert_string_equal(r.event_reason, EO_REASON_ISSUER_NOT_FOUND);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_CERTS_MS);
	eo_plan_result_clear(&r);
	certs_free(&s);
	json_decref(c);
}

static void test_cluster_waiting(void **state)
{
	json_t *c = cluster(NULL);
	struct certs s;
	struct eo_plan_result r;

	(void)state;
	certs_make(&s, c, NULL, NULL);
	for (int i = 0; i < EO_CERT_ROLE_COUNT_; i++)
		s.seen.role[i].issuer_exists = 1;
	plan(c, &s.seen, NULL, 0, &r);
	/* No seed member (so no Pod) before the Secrets exist. */
	assert_int_equal(r.action, EO_PLAN_WAIT);
	assert_string_equal(eo_condition_status(r.status, EO_COND_PROGRESSING), EO_COND_TRUE);
	assert_string_equal(cond_reason(r.status, EO_COND_PROGRESSING),
			    EO_REASON_WAITING_FOR_CERTIFICATES);
	assert_string_equal(cond_reason(r.status, EO_COND_AVAILABLE),
			    EO_REASON_WAITING_FOR_CERTIFICATES);
	assert_int_equal(r.requeue_ms, EO_PLAN_REQUEUE_CERTS_MS);
	eo_plan_result_clear(&r);
	certs_free(&s);
	json_decref(c);
}

/* Every Certificate Ready: the cert-manager part has nothing to say. */
static void test_cluster_ready(void **state)
{
	json_t *c = cluster(NULL);
	struct certs s;
	struct eo_plan_result r;
	const char *reasons[] = {EO_REASON_CERT_MANAGER_NOT_INSTALLED, EO_REASON_ISSUER_NOT_FOUND,
				 EO_REASON_WAITING_FOR_CERTIFICATES,
				 EO_REASON_CERTIFICATE_NOT_READY};

	(void)state;
	certs_make(&s, c, "True", "Certificate is up to date and has not expired");
	plan(c, &s.seen, NULL, 0, &r);
	assert_int_not_equal(r.action, EO_PLAN_ENSURE_CERTIFICATES);
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		const char *a = cond_reason(r.status, EO_COND_AVAILABLE);
		const char *p = cond_reason(r.status, EO_COND_PROGRESSING);

		assert_true(a == NULL || strcmp(a, reasons[i]) != 0);
		assert_true(p == NULL || strcmp(p, reasons[i]) != 0);
	}
	eo_plan_result_clear(&r);
	certs_free(&s);
	json_decref(c);
}

/* A running cluster keeps running; Degraded says which Certificate is not Ready. */
static void test_cluster_running_not_ready(void **state)
{
	json_t *c = cluster("{'clusterID':'abc','clusterToken':'t','observed':{'replicas':1,"
			    "'version':'3.6.11','storage':{'size':'1Gi','medium':''}}}");
	json_t *m =
	    tu_jsonq("{'apiVersion':'etcd-operator.cozystack.io/v1alpha2','kind':"
		     "'EtcdMember','metadata':{'name':'demo-aaaaa','namespace':'default',"
		     "'uid':'m-uid','ownerReferences':[{'apiVersion':'etcd-operator."
		     "cozystack.io/v1alpha2','kind':'EtcdCluster','name':'demo','uid':"
		     "'c-uid','controller':true}]},'spec':{'clusterName':'demo','version':"
		     "'3.6.11','bootstrap':true,'initialCluster':'demo-aaaaa=http://x:2380',"
		     "'clusterToken':'t'},'status':{'isVoter':true,'memberID':'1'}}");
	json_t *pod = tu_jsonq("{'metadata':{'name':'demo-aaaaa','namespace':'default','uid':'p'},"
			       "'status':{'phase':'Running','conditions':[{'type':'Ready','status':"
			       "'True'}]}}");
	json_t *pvc = tu_jsonq("{'metadata':{'name':'data-demo-aaaaa','namespace':'default',"
			       "'uid':'v'},'status':{'phase':'Bound'}}");
	struct eo_plan_member pm = {.member = m, .pod = pod, .pvc = pvc};
	struct certs s;
	struct eo_plan_result r;
	const json_t *deg;

	(void)state;
	certs_make(&s, c, "False", "the CA expired");
	s.seen.role[EO_CERT_SERVER].issuer_exists = 1;
	s.seen.role[EO_CERT_OPERATOR_CLIENT].issuer_exists = 1;
	s.seen.role[EO_CERT_PEER].issuer_exists = 1;
	plan(c, &s.seen, &pm, 1, &r);
	assert_non_null(r.status);
	assert_string_equal(eo_condition_status(r.status, EO_COND_DEGRADED), EO_COND_TRUE);
	assert_string_equal(cond_reason(r.status, EO_COND_DEGRADED),
			    EO_REASON_CERTIFICATE_NOT_READY);
	deg = eo_condition_find(r.status, EO_COND_DEGRADED);
	assert_non_null(strstr(json_string_value(json_object_get(deg, "message")),
			       "Certificate demo-server is not Ready: the CA expired"));
	/* Not a stop: Progressing is not the certificate's. */
	assert_true(cond_reason(r.status, EO_COND_PROGRESSING) == NULL ||
		    strcmp(cond_reason(r.status, EO_COND_PROGRESSING),
			   EO_REASON_WAITING_FOR_CERTIFICATES) != 0);
	eo_plan_result_clear(&r);
	certs_free(&s);
	json_decref(m);
	json_decref(pod);
	json_decref(pvc);
	json_decref(c);
}

/* The Ready reader. */
static void test_cert_ready(void **state)
{
	json_t *yes = tu_jsonq("{'status':{'conditions':[{'type':'Issuing','status':'False'},"
			       "{'type':'Ready','status':'True','message':'ok'}]}}");
	json_t *no = tu_jsonq("{'status':{'conditions':[{'type':'Ready','status':'False'}]}}");
	json_t *none = tu_jsonq("{'status':{}}");
	const char *m = NULL;

	(void)state;
	assert_true(eo_plan_cert_ready(yes, &m));
	assert_string_equal(m, "ok");
	assert_false(eo_plan_cert_ready(no, &m));
	assert_null(m);
	assert_false(eo_plan_cert_ready(none, &m));
	assert_false(eo_plan_cert_ready(NULL, NULL));
	json_decref(yes);
	json_decref(no);
	json_decref(none);
}

TU_MAIN(test_verdicts, test_null_is_not_installed, test_cluster_not_installed, test_cluster_ensure,
	test_cluster_issuer_missing, test_cluster_waiting, test_cluster_ready,
	test_cluster_running_not_ready, test_cert_ready, test_per_cluster_ca_mode,
	test_per_cluster_ca_verdicts)
