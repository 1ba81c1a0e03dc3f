/*
 * controller/authload.c - the root password from spec.auth.rootCredentialsSecretRef. See
 * authload.h.
 */
#include "controller/authload.h"

#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "core/base64.h"
#include "plan/auth.h"

#define PASSWORD_MAX 1024

void eo_auth_creds_clear(struct eo_auth_creds *c)
{
	if (c == NULL)
		return;
	if (c->password != NULL) {
		OPENSSL_cleanse(c->password, strlen(c->password));
		free(c->password);
	}
	c->password = NULL;
}

static enum eo_tlsload_result problem(struct eo_tlsload_problem *p, const char *reason,
				      const char *secret, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static enum eo_tlsload_result problem(struct eo_tlsload_problem *p, const char *reason,
				      const char *secret, const char *fmt, ...)
{
	va_list ap;

	p->reason = reason;
	snprintf(p->secret, sizeof(p->secret), "%s", secret);
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	return EO_TLSLOAD_PROBLEM;
}

static void wipe_secret(json_t *secret)
{
	const char *k = NULL;
	json_t *v = NULL;

	json_object_foreach(json_object_get(secret, "data"), k, v)
	{
		if (json_is_string(v))
			OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
	}
}

/* Decodes data[key]: 1 absent or empty, 0 decoded (NUL-terminated), -1 not base64. */
static int decode(const json_t *data, const char *key, unsigned char **out, size_t *len)
{
	json_t *v = json_object_get(data, key);
	unsigned char *raw = NULL, *s = NULL;
	size_t n = 0;

	*out = NULL;
	*len = 0;
	if (!json_is_string(v) || json_string_length(v) == 0)
		return 1;
	if (eo_base64_decode(json_string_value(v), json_string_length(v), EO_BASE64_SPACE, &raw,
			     &n) != 0)
		return -1;
	s = malloc(n + 1);
	if (s != NULL) {
		memcpy(s, raw, n);
		s[n] = '\0';
	}
	OPENSSL_cleanse(raw, n);
	free(raw);
	if (s == NULL)
		return -1;
	*out = s;
	*len = n;
	return n == 0 ? 1 : 0;
}

static void wipe_free(unsigned char *p, size_t n)
{
	if (p != NULL)
		OPENSSL_cleanse(p, n);
	free(p);
}

enum eo_tlsload_result eo_authload(eo_kube_client *kc, const json_t *cluster,
				   struct eo_auth_creds *out, struct eo_tlsload_problem *p,
				   struct eo_kube_error *err)
{
	const char *ns = eo_cluster_namespace(cluster), *name = eo_cluster_auth_secret(cluster);
	struct eo_kube_resource r = {"v1", "secrets", ns, name};
	json_t *secret = NULL, *data;
	unsigned char *pw = NULL, *user = NULL;
	size_t pw_len = 0, user_len = 0;
	enum eo_tlsload_result res = EO_TLSLOAD_OK;
	eo_kube_err e;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(p, 0, sizeof(*p));
	if (!eo_cluster_auth_enabled(cluster))
		return EO_TLSLOAD_OK;
	if (name == NULL || name[0] == '\0')
		return problem(p, EO_REASON_AUTH_SECRET_NOT_FOUND, "",
			       "spec.auth.enabled is set but spec.auth.rootCredentialsSecretRef "
			       "names no Secret");
	e = eo_kube_get(kc, &r, &secret, err);
	if (e == EO_KUBE_ENOTFOUND)
		return problem(p, EO_REASON_AUTH_SECRET_NOT_FOUND, name,
			       "the root credentials Secret %s/%s does not exist: create it "
			       "(type kubernetes.io/basic-auth, key \"password\")",
			       ns, name);
	if (e == EO_KUBE_EFORBIDDEN)
		return problem(p, EO_REASON_AUTH_SECRET_NOT_FOUND, name,
			       "the operator may not read the root credentials Secret %s/%s "
			       "(forbidden: its ClusterRole needs get on secrets)",
			       ns, name);
	if (e != EO_KUBE_OK)
		return EO_TLSLOAD_ERROR;
	data = json_object_get(secret, "data");
	rc = decode(data, "password", &pw, &pw_len);
	if (rc > 0)
		res = problem(p, EO_REASON_AUTH_SECRET_INVALID, name,
			      "the root credentials Secret %s/%s has no \"password\" (or it is "
			      "empty)",
			      ns, name);
	else if (rc < 0)
		res = problem(p, EO_REASON_AUTH_SECRET_INVALID, name,
			      "the root credentials Secret %s/%s: \"password\" is not valid base64",
			      ns, name);
	else if (pw_len > PASSWORD_MAX || strlen((char *)pw) != pw_len)
		res = problem(p, EO_REASON_AUTH_SECRET_INVALID, name,
			      "the root credentials Secret %s/%s: \"password\" is longer than %d "
			      "bytes or holds a NUL byte",
			      ns, name, PASSWORD_MAX);
	if (res == EO_TLSLOAD_OK) {
		rc = decode(data, "username", &user, &user_len);
		if (rc < 0 || (rc == 0 && strcmp((char *)user, "root") != 0))
			res = problem(p, EO_REASON_AUTH_SECRET_INVALID, name,
				      "the root credentials Secret %s/%s: \"username\" must be "
				      "\"root\" (or absent): the operator manages etcd's root user "
				      "only",
				      ns, name);
	}
	if (res == EO_TLSLOAD_OK) {
		out->password = (char *)pw;
		pw = NULL;
	}
	wipe_free(pw, pw_len);
	wipe_free(user, user_len);
	wipe_secret(secret);
	json_decref(secret);
	return res;
}
