/*
 * etcd/tlscheck.c - checks of TLS material. See tlscheck.h.
 */
#include "etcd/tlscheck.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

static int fail(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (msg != NULL && n > 0) {
		va_start(ap, fmt);
		vsnprintf(msg, n, fmt, ap);
		va_end(ap);
	}
	ERR_clear_error(); /* the thread's queue is shared with libcurl */
	return -1;
}

/* Never asks for a passphrase (the default callback would read the terminal). */
static int no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

static BIO *mem_bio(const void *data, size_t len)
{
	if (data == NULL || len == 0 || len > INT_MAX)
		return NULL;
	return BIO_new_mem_buf(data, (int)len);
}

/* Every certificate of a PEM bundle; NULL when none parses (or out of memory). */
static STACK_OF(X509) * read_certs(const void *pem, size_t len)
{
	BIO *b = mem_bio(pem, len);
	STACK_OF(X509) *sk = NULL;
	X509 *x = NULL;

	if (b == NULL || (sk = sk_X509_new_null()) == NULL) {
		BIO_free(b);
		return NULL;
	}
	while ((x = PEM_read_bio_X509(b, NULL, no_password, NULL)) != NULL) {
		if (sk_X509_push(sk, x) == 0) {
			X509_free(x);
			break;
		}
	}
	BIO_free(b);
	ERR_clear_error(); /* the end of the bundle reads as an error */
	if (sk_X509_num(sk) == 0) {
		sk_X509_free(sk);
		return NULL;
	}
	return sk;
}

int eo_tls_check_ca(const void *ca, size_t ca_len, char *msg, size_t n)
{
	STACK_OF(X509) *sk = read_certs(ca, ca_len);

	if (sk == NULL)
		return fail(msg, n, "ca.crt holds no PEM certificate");
	sk_X509_pop_free(sk, X509_free);
	return 0;
}

static void time_text(const ASN1_TIME *t, char *buf, size_t n)
{
	BIO *b = BIO_new(BIO_s_mem());
	int len = 0;

	buf[0] = '\0';
	if (b != NULL && ASN1_TIME_print(b, t) == 1 && (len = BIO_read(b, buf, (int)n - 1)) > 0)
		buf[len] = '\0';
	BIO_free(b);
}

static const char *role_name(enum eo_tls_role role)
{
	switch (role) {
	case EO_TLS_ROLE_SERVER:
		return "server";
	case EO_TLS_ROLE_PEER:
		return "peer";
	default:
		return "client";
	}
}

static int check_usage(X509 *leaf, enum eo_tls_role role, char *msg, size_t n)
{
	uint32_t xku;
	bool server, client;

	if ((X509_get_extension_flags(leaf) & EXFLAG_XKUSAGE) == 0)
		return 0; /* no extended key usage: every usage allowed */
	xku = X509_get_extended_key_usage(leaf);
	server = (xku & XKU_SSL_SERVER) != 0;
	client = (xku & XKU_SSL_CLIENT) != 0;
	if (role != EO_TLS_ROLE_CLIENT && !server)
		return fail(msg, n,
			    "the %s certificate lacks the serverAuth extended key usage (it needs "
			    "serverAuth and clientAuth)",
			    role_name(role));
	if (!client)
		return fail(msg, n,
			    "the %s certificate lacks the clientAuth extended key usage (%s)",
			    role_name(role),
			    role == EO_TLS_ROLE_SERVER
				? "etcd presents it as a client certificate to itself"
			    : role == EO_TLS_ROLE_PEER ? "peers present it to each other"
						       : "the operator presents it to etcd");
	return 0;
}

static int check_chain(X509 *leaf, STACK_OF(X509) * chain, const void *ca, size_t ca_len,
		       time_t now, enum eo_tls_role role, char *msg, size_t n)
{
	STACK_OF(X509) *roots = read_certs(ca, ca_len);
	X509_STORE *store = NULL;
	X509_STORE_CTX *ctx = NULL;
	int rc = -1, i;

	if (roots == NULL)
		return fail(msg, n, "ca.crt holds no PEM certificate");
	store = X509_STORE_new();
	ctx = X509_STORE_CTX_new();
	if (store == NULL || ctx == NULL)
		goto oom;
	for (i = 0; i < sk_X509_num(roots); i++)
		if (X509_STORE_add_cert(store, sk_X509_value(roots, i)) != 1)
			goto oom;
	if (X509_STORE_CTX_init(ctx, store, leaf, chain) != 1)
		goto oom;
	/* As Go (etcd) does: any certificate of the bundle is a trust anchor. */
	X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(ctx), X509_V_FLAG_PARTIAL_CHAIN);
	X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), now);
	if (X509_verify_cert(ctx) == 1)
		rc = 0;
	else
		rc = fail(msg, n, "the %s certificate does not chain to the CA bundle: %s",
			  role_name(role),
			  X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
	goto out;
oom:
	rc = fail(msg, n, "out of memory checking the %s certificate", role_name(role));
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	sk_X509_pop_free(roots, X509_free);
	return rc;
}

int eo_tls_check_pair(enum eo_tls_role role, const void *cert, size_t cert_len, const void *key,
		      size_t key_len, const void *ca, size_t ca_len, time_t now, char *msg,
		      size_t n)
{
	STACK_OF(X509) *certs = read_certs(cert, cert_len);
	BIO *kb = NULL;
	EVP_PKEY *pkey = NULL;
	X509 *leaf = NULL;
	char when[64];
	int rc = -1;

	if (certs == NULL)
		return fail(msg, n, "tls.crt holds no PEM certificate");
	leaf = sk_X509_shift(certs); /* the rest are intermediates */
	kb = mem_bio(key, key_len);
	if (kb != NULL)
		pkey = PEM_read_bio_PrivateKey(kb, NULL, no_password, NULL);
	BIO_free(kb);
	if (pkey == NULL) {
		rc = fail(msg, n, "tls.key holds no unencrypted PEM private key");
		goto out;
	}
	if (X509_check_private_key(leaf, pkey) != 1) {
		rc = fail(msg, n, "tls.key is not the private key of the certificate in tls.crt");
		goto out;
	}
	if (X509_cmp_time(X509_get0_notAfter(leaf), &now) < 0) {
		time_text(X509_get0_notAfter(leaf), when, sizeof(when));
		rc = fail(msg, n, "the %s certificate expired on %s", role_name(role), when);
		goto out;
	}
	if (X509_cmp_time(X509_get0_notBefore(leaf), &now) > 0) {
		time_text(X509_get0_notBefore(leaf), when, sizeof(when));
		rc = fail(msg, n, "the %s certificate is not valid before %s", role_name(role),
			  when);
		goto out;
	}
	if (check_usage(leaf, role, msg, n) != 0)
		goto out;
	if (ca != NULL && check_chain(leaf, certs, ca, ca_len, now, role, msg, n) != 0)
		goto out;
	rc = 0;
out:
	EVP_PKEY_free(pkey);
	X509_free(leaf);
	sk_X509_pop_free(certs, X509_free);
	ERR_clear_error();
	return rc;
}

int eo_tls_cert_not_after(const void *cert, size_t cert_len, time_t *out)
{
	BIO *b = mem_bio(cert, cert_len);
	X509 *x = b != NULL ? PEM_read_bio_X509(b, NULL, no_password, NULL) : NULL;
	struct tm tm;
	int rc = -1;

	if (x != NULL && ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1) {
		*out = timegm(&tm);
		rc = 0;
	}
	X509_free(x);
	BIO_free(b);
	ERR_clear_error();
	return rc;
}
