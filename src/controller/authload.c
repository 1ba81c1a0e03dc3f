/*
 * controller/authload.c - the root password from spec.auth.rootCredentialsSecretRef. See
 * authload.h.
 */
#include "controller/authload.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cluster.h"
#include "core/base64.h"
#include "plan/auth.h"

#define PASSWORD_MAX 1024
#define VERIFIED_MAX 1024

/*
 * Which (cluster UID, password) pairs etcd accepted, as SHA-256 digests of "uid\0password",
 * in memory only (never written anywhere): a changed Secret or an operator restart makes the
 * pair unknown, so the next pass asks etcd again.
 */
static struct {
	pthread_mutex_t mu;
	unsigned char digest[VERIFIED_MAX][32];
	char uid[VERIFIED_MAX][64];
	size_t n, next;
} verified = {.mu = PTHREAD_MUTEX_INITIALIZER};

static bool digest_of(const char *uid, const char *password, unsigned char out[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;
	bool ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		  EVP_DigestUpdate(ctx, uid, strlen(uid) + 1) == 1 &&
		  EVP_DigestUpdate(ctx, password, strlen(password)) == 1 &&
		  EVP_DigestFinal_ex(ctx, out, &len) == 1 && len == 32;

	EVP_MD_CTX_free(ctx);
	return ok;
}

bool eo_authload_verified(const char *uid, const char *password)
{
	unsigned char d[32];
	bool found = false;

	if (uid == NULL || password == NULL || !digest_of(uid, password, d))
		return false;
	pthread_mutex_lock(&verified.mu);
	for (size_t i = 0; i < verified.n && !found; i++)
		found = strcmp(verified.uid[i], uid) == 0 && memcmp(verified.digest[i], d, 32) == 0;
	pthread_mutex_unlock(&verified.mu);
	OPENSSL_cleanse(d, sizeof(d));
	return found;
}

void eo_authload_mark_verified(const char *uid, const char *password)
{
	unsigned char d[32];
	size_t slot;

	if (uid == NULL || password == NULL || strlen(uid) >= sizeof(verified.uid[0]) ||
	    !digest_of(uid, password, d))
		return;
	pthread_mutex_lock(&verified.mu);
	for (slot = 0; slot < verified.n; slot++)
		if (strcmp(verified.uid[slot], uid) == 0)
			break;
	if (slot == verified.n) {
		if (verified.n < VERIFIED_MAX) {
			verified.n++;
		} else {
			slot = verified
				   .next; /* full: the oldest slot goes (that cluster asks again) */
			verified.next = (verified.next + 1) % VERIFIED_MAX;
		}
	}
	snprintf(verified.uid[slot], sizeof(verified.uid[slot]), "%s", uid);
	memcpy(verified.digest[slot], d, 32);
	pthread_mutex_unlock(&verified.mu);
	OPENSSL_cleanse(d, sizeof(d));
}

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
		return eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_NOT_FOUND, "",
		    "spec.auth.enabled is set but spec.auth.rootCredentialsSecretRef "
		    "names no Secret");
	e = eo_kube_get(kc, &r, &secret, err);
	if (e == EO_KUBE_ENOTFOUND)
		return eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_NOT_FOUND, name,
		    "the root credentials Secret %s/%s does not exist: create it "
		    "(type kubernetes.io/basic-auth, key \"password\")",
		    ns, name);
	if (e == EO_KUBE_EFORBIDDEN)
		return eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_NOT_FOUND, name,
		    "the operator may not read the root credentials Secret %s/%s "
		    "(forbidden: its ClusterRole needs get on secrets)",
		    ns, name);
	if (e != EO_KUBE_OK)
		return EO_TLSLOAD_ERROR;
	data = json_object_get(secret, "data");
	rc = decode(data, "password", &pw, &pw_len);
	if (rc > 0)
		res = eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_INVALID, name,
		    "the root credentials Secret %s/%s has no \"password\" (or it is "
		    "empty)",
		    ns, name);
	else if (rc < 0)
		res = eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_INVALID, name,
		    "the root credentials Secret %s/%s: \"password\" is not valid base64", ns,
		    name);
	else if (pw_len > PASSWORD_MAX || strlen((char *)pw) != pw_len)
		res = eo_tlsload_problemf(
		    p, EO_REASON_AUTH_SECRET_INVALID, name,
		    "the root credentials Secret %s/%s: \"password\" is longer than %d "
		    "bytes or holds a NUL byte",
		    ns, name, PASSWORD_MAX);
	if (res == EO_TLSLOAD_OK) {
		rc = decode(data, "username", &user, &user_len);
		if (rc < 0 || (rc == 0 && strcmp((char *)user, "root") != 0))
			res = eo_tlsload_problemf(
			    p, EO_REASON_AUTH_SECRET_INVALID, name,
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
	eo_tlsload_wipe_secret(secret);
	json_decref(secret);
	return res;
}

int eo_authload_cert_cn(const unsigned char *pem, size_t len, char *cn, size_t cap)
{
	BIO *bio = NULL;
	X509 *x = NULL;
	int rc = -1, n;

	if (cap > 0)
		cn[0] = '\0';
	if (pem == NULL || len == 0 || len > INT_MAX)
		return -1;
	bio = BIO_new_mem_buf(pem, (int)len);
	if (bio != NULL)
		x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	if (x != NULL) {
		n = X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn,
					      (int)cap);
		rc = n > 0 ? 1 : 0;
		if (n <= 0 && cap > 0)
			cn[0] = '\0';
	}
	X509_free(x);
	BIO_free(bio);
	return rc;
}
