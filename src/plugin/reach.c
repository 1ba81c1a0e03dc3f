/* How kubectl-etcd reaches a member's etcd (plugin/reach.h). */
#include "plugin/reach.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "api/cluster.h"
#include "api/names.h"
#include "core/base64.h"
#include "core/strbuf.h"
#include "etcd/wire.h"
#include "kube/portforward.h"
#include "plugin/decide.h"

#define TOKEN_MAX  4096
#define LOGIN_BODY (64u << 10)

enum eo_plugin_path eo_plugin_path_of(const json_t *cluster)
{
	struct eo_cluster_tls t;

	eo_cluster_tls(cluster, &t);
	if (t.client == EO_TLS_NONE)
		return EO_PPATH_PROXY;
	return t.client_mtls ? EO_PPATH_TUNNEL : EO_PPATH_PROXY_TLS;
}

const char *eo_plugin_path_subresource(enum eo_plugin_path p)
{
	return p == EO_PPATH_TUNNEL ? "pods/portforward" : "pods/proxy";
}

static void wipe_free(void *p, size_t n)
{
	if (p) {
		OPENSSL_cleanse(p, n);
		free(p);
	}
}

static void wipe_str(char *s)
{
	if (s)
		wipe_free(s, strlen(s));
}

/* Cleanses every base64 value of the Secret's data in place (the object is freed next). */
static void wipe_secret(json_t *secret)
{
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(secret, "data"), k, v)
	{
		if (json_is_string(v))
			OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
	}
}

/*
 * GETs Secret ns/name and decodes the keys asked for (keys[i] into out[i], lens[i]); a key
 * missing, or the Secret missing or forbidden, is an exit code with msg.
 */
static int read_secret(eo_kube_client *kc, const char *ns, const char *name, const char *what,
		       const char *const *keys, unsigned char **out, size_t *lens, size_t nkeys,
		       char *msg, size_t cap)
{
	struct eo_kube_resource r = {"v1", "secrets", ns, name};
	struct eo_kube_error ke = {0};
	json_t *secret = NULL;
	char res[EO_NAME_MAX + 32];
	size_t i;
	int rc = 0;
	eo_kube_err e = eo_kube_get(kc, &r, &secret, &ke);

	if (e != EO_KUBE_OK) {
		snprintf(res, sizeof(res), "secrets \"%s\" (%s)", name, what);
		return (int)eo_plugin_kube_failure(e, &ke, "get", res, ns, msg, cap);
	}
	for (i = 0; i < nkeys && rc == 0; i++) {
		const json_t *v = json_object_get(json_object_get(secret, "data"), keys[i]);

		if (!json_is_string(v) ||
		    eo_base64_decode(json_string_value(v), json_string_length(v), 0, &out[i],
				     &lens[i]) != 0 ||
		    lens[i] == 0) {
			snprintf(msg, cap, "Secret %s/%s (%s) has no usable %s", ns, name, what,
				 keys[i]);
			rc = EO_PEXIT_FAILED;
		}
	}
	if (rc != 0)
		for (i = 0; i < nkeys; i++) {
			wipe_free(out[i], lens[i]);
			out[i] = NULL;
			lens[i] = 0;
		}
	wipe_secret(secret);
	json_decref(secret);
	return rc;
}

int eo_plugin_reach_open(struct eo_plugin_reach *r, eo_kube_client *kc, const json_t *cluster,
			 const char *ns, char *msg, size_t cap)
{
	char name[EO_NAME_MAX + 32];
	int rc;

	memset(r, 0, sizeof(*r));
	r->kc = kc;
	r->ns = ns;
	r->path = eo_plugin_path_of(cluster);
	if (r->path == EO_PPATH_TUNNEL) {
		static const char *const ca_keys[] = {"ca.crt"};
		static const char *const op_keys[] = {"tls.crt", "tls.key"};
		unsigned char *op[2] = {NULL, NULL};
		size_t oplen[2] = {0, 0};

		if (eo_cluster_server_secret_name(cluster, name, sizeof(name)) != 0) {
			snprintf(msg, cap, "spec.tls.client names no usable server Secret");
			return EO_PEXIT_FAILED;
		}
		rc = read_secret(kc, ns, name, "server TLS: its ca.crt verifies etcd", ca_keys,
				 &r->ca, &r->ca_len, 1, msg, cap);
		if (rc != 0)
			return rc;
		if (eo_cluster_operator_client_secret_name(cluster, name, sizeof(name)) != 0) {
			snprintf(msg, cap,
				 "spec.tls.client names no usable operator client Secret");
			return EO_PEXIT_FAILED;
		}
		rc = read_secret(kc, ns, name, "the operator's client certificate", op_keys, op,
				 oplen, 2, msg, cap);
		if (rc != 0)
			return rc;
		r->cert = op[0];
		r->cert_len = oplen[0];
		r->key = op[1];
		r->key_len = oplen[1];
	}
	if (eo_cluster_auth_enabled(cluster)) {
		static const char *const pw_keys[] = {"password"};
		const char *sec = eo_cluster_auth_secret(cluster);
		unsigned char *pw = NULL;
		size_t pwlen = 0;

		if (!sec) {
			snprintf(msg, cap, "spec.auth.enabled but no rootCredentialsSecretRef");
			return EO_PEXIT_FAILED;
		}
		rc = read_secret(kc, ns, sec, "etcd root credentials", pw_keys, &pw, &pwlen, 1, msg,
				 cap);
		if (rc != 0)
			return rc;
		if (memchr(pw, '\0', pwlen)) {
			wipe_free(pw, pwlen);
			snprintf(msg, cap, "Secret %s/%s: the password holds a NUL byte", ns, sec);
			return EO_PEXIT_FAILED;
		}
		r->password = (char *)pw; /* eo_base64_decode NUL-terminates */
	}
	return 0;
}

void eo_plugin_reach_close(struct eo_plugin_reach *r)
{
	wipe_free(r->ca, r->ca_len);
	wipe_free(r->cert, r->cert_len);
	wipe_free(r->key, r->key_len);
	wipe_str(r->password);
	wipe_str(r->token);
	memset(r, 0, sizeof(*r));
}

/* ---- the tunnel: libcurl over the port-forward's local socket ---------------------------- */

static void set_blob(CURL *h, CURLoption opt, unsigned char *p, size_t n)
{
	struct curl_blob b = {.data = p, .len = n, .flags = CURL_BLOB_COPY};

	curl_easy_setopt(h, opt, &b);
}

static eo_kube_err tunnel_post(struct eo_plugin_reach *r, const char *member, const char *host,
			       const char *route, const char *body, struct curl_slist *hdrs,
			       long timeout_ms, long stall_s, struct eo_kube_raw_io *io,
			       struct eo_plugin_answer *ans)
{
	eo_kube_tunnel *t = NULL;
	char *url = NULL, errbuf[CURL_ERROR_SIZE] = "", dir[4096], sock[4200];
	const char *tmp = getenv("TMPDIR");
	eo_kube_err e;
	CURLcode cc;

	/* The tunnel's local end: a Unix socket in a directory of our own (mode 0700). */
	if (snprintf(dir, sizeof(dir), "%s/kubectl-etcd-XXXXXX", tmp && tmp[0] ? tmp : "/tmp") >=
		(int)sizeof(dir) - 8 ||
	    !mkdtemp(dir))
		return eo_kube_fail(&ans->ke, EO_KUBE_EIO,
				    "cannot make a private directory in %s: %s",
				    tmp && tmp[0] ? tmp : "/tmp", strerror(errno));
	snprintf(sock, sizeof(sock), "%s/t", dir);
	e = eo_kube_portforward(r->kc, r->ns, member, EO_PORT_CLIENT,
				timeout_ms > 0 && timeout_ms < 15000 ? timeout_ms : 15000, sock, &t,
				&ans->ke);
	if (e != EO_KUBE_OK) {
		rmdir(dir);
		ans->tunnel_refused = ans->ke.http_status != 0;
		ans->res.http_status = ans->ke.http_status;
		return e;
	}
	io->h = curl_easy_init();
	if (!io->h || asprintf(&url, "https://%s:%d%s", host, EO_PORT_CLIENT, route) < 0) {
		url = NULL;
		e = eo_kube_fail(&ans->ke, EO_KUBE_ENOMEM, "tunnel request");
		goto out;
	}
	/* No DNS, no network: the connection is the tunnel; TLS checks the URL's host. */
	curl_easy_setopt(io->h, CURLOPT_URL, url);
	curl_easy_setopt(io->h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(io->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(io->h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(io->h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(io->h, CURLOPT_USERAGENT, "kubectl-etcd");
	set_blob(io->h, CURLOPT_CAINFO_BLOB, r->ca, r->ca_len);
	set_blob(io->h, CURLOPT_SSLCERT_BLOB, r->cert, r->cert_len);
	curl_easy_setopt(io->h, CURLOPT_SSLCERTTYPE, "PEM");
	set_blob(io->h, CURLOPT_SSLKEY_BLOB, r->key, r->key_len);
	curl_easy_setopt(io->h, CURLOPT_SSLKEYTYPE, "PEM");
	curl_easy_setopt(io->h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(io->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(io->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(io->h, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 0L);
	if (stall_s > 0) {
		curl_easy_setopt(io->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(io->h, CURLOPT_LOW_SPEED_TIME, stall_s);
	}
	curl_easy_setopt(io->h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(io->h, CURLOPT_WRITEFUNCTION, eo_kube_raw_write);
	curl_easy_setopt(io->h, CURLOPT_WRITEDATA, io);
	cc = curl_easy_perform(io->h);
	if (!io->status_known)
		curl_easy_getinfo(io->h, CURLINFO_RESPONSE_CODE, &ans->res.http_status);
	if (cc != CURLE_OK) {
		snprintf(ans->transport, sizeof(ans->transport), "%s",
			 errbuf[0] ? errbuf : curl_easy_strerror(cc));
		e = io->aborted			     ? EO_KUBE_ECANCELED
		    : cc == CURLE_OPERATION_TIMEDOUT ? EO_KUBE_ETIMEOUT
						     : EO_KUBE_ETRANSPORT;
		eo_kube_fail(&ans->ke, e, "%s", ans->transport);
	} else if (ans->res.http_status < 200 || ans->res.http_status >= 300) {
		e = EO_KUBE_EHTTP;
		eo_kube_fail(&ans->ke, e, "HTTP %ld", ans->res.http_status);
		ans->ke.http_status = (int)ans->res.http_status;
	} else {
		e = EO_KUBE_OK;
	}
out:
	if (io->h)
		curl_easy_cleanup(io->h); /* closes curl's copy of the socket */
	io->h = NULL;
	/* The runtime's word on a refused connection (it arrives before the tunnel's EOF). */
	if (e != EO_KUBE_OK)
		eo_kube_tunnel_error(t, ans->farside, sizeof(ans->farside));
	eo_kube_tunnel_close(t); /* removes the socket file */
	rmdir(dir);
	free(url);
	return e;
}

eo_kube_err eo_plugin_reach_post(struct eo_plugin_reach *r, const char *member, const char *host,
				 const char *route, const char *body, long timeout_ms, long stall_s,
				 eo_kube_raw_sink sink, void *ud, struct eo_plugin_answer *ans)
{
	char *tokline = NULL, path[1024];
	const char *extra[2] = {NULL, NULL};
	struct curl_slist *hdrs = NULL, *n;

	memset(ans, 0, sizeof(*ans));
	if (r->token) {
		if (asprintf(&tokline, "Grpc-Metadata-Token: %s", r->token) < 0)
			return ans->e = eo_kube_fail(&ans->ke, EO_KUBE_ENOMEM, "headers");
		extra[0] = tokline;
	}
	if (r->path == EO_PPATH_TUNNEL) {
		struct eo_kube_raw_io io = {.sink = sink, .ud = ud, .res = &ans->res};

		n = curl_slist_append(hdrs, "Content-Type: application/json");
		if (n && tokline)
			n = curl_slist_append(n, tokline);
		if (!n) {
			ans->e = eo_kube_fail(&ans->ke, EO_KUBE_ENOMEM, "headers");
		} else {
			hdrs = n;
			ans->e = tunnel_post(r, member, host ? host : member, route, body, hdrs,
					     timeout_ms, stall_s, &io, ans);
			ans->aborted = io.aborted;
		}
		for (n = hdrs; n; n = n->next)
			OPENSSL_cleanse(n->data, strlen(n->data));
		curl_slist_free_all(hdrs);
	} else {
		struct eo_kube_raw_req req = {"POST",  path, "application/json", body, timeout_ms,
					      stall_s, extra};

		snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s%s:%d/proxy%s", r->ns,
			 r->path == EO_PPATH_PROXY_TLS ? "https:" : "", member, EO_PORT_CLIENT,
			 route);
		ans->e = eo_kube_raw(r->kc, &req, sink, ud, &ans->res, &ans->ke);
		ans->aborted = ans->e == EO_KUBE_ECANCELED;
	}
	wipe_str(tokline);
	return ans->e;
}

static int collect(void *ud, const char *p, size_t n)
{
	struct eo_strbuf *b = ud;

	eo_strbuf_add_n(b, p, n);
	return b->failed ? -1 : 0;
}

eo_kube_err eo_plugin_reach_login(struct eo_plugin_reach *r, const char *member, const char *host,
				  long timeout_ms, struct eo_plugin_answer *ans)
{
	struct eo_strbuf b = EO_STRBUF_INIT(LOGIN_BODY);
	char *req, *tok;
	eo_kube_err e;

	memset(ans, 0, sizeof(*ans));
	if (!r->password)
		return EO_KUBE_OK;
	req = eo_etcd_wire_req_name_password("root", r->password, false);
	if (!req)
		return ans->e = eo_kube_fail(&ans->ke, EO_KUBE_ENOMEM, "authenticate request");
	e = eo_plugin_reach_post(r, member, host, "/v3/auth/authenticate", req, timeout_ms, 0,
				 collect, &b, ans);
	wipe_str(req);
	if (e == EO_KUBE_OK) {
		tok = b.p ? eo_plugin_parse_token(b.p, b.len, TOKEN_MAX) : NULL;
		if (!tok) {
			e = ans->e = eo_kube_fail(&ans->ke, EO_KUBE_EPROTOCOL,
						  "etcd's authenticate answer carries no token");
		} else {
			wipe_str(r->token);
			r->token = tok;
		}
	}
	if (b.p)
		OPENSSL_cleanse(b.p, b.len);
	eo_strbuf_free(&b);
	return e;
}
