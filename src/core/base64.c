/*
 * core/base64.c - base64 through OpenSSL (see base64.h).
 */
#include "core/base64.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

char *eo_base64_encode(const void *data, size_t len)
{
	char *out;
	int n;

	if (len > EO_BASE64_MAX)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (out == NULL)
		return NULL;
	/* EVP_EncodeBlock writes no newlines and NUL-terminates. */
	n = EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	if (n < 0 || (size_t)n != (len + 2) / 3 * 4) {
		free(out);
		return NULL;
	}
	return out;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static void drop(char *p, size_t cap)
{
	if (p != NULL) {
		OPENSSL_cleanse(p, cap);
		free(p);
	}
}

int eo_base64_decode(const char *s, size_t len, unsigned flags, unsigned char **out,
		     size_t *out_len)
{
	size_t m = 0, pad = 0, cap = len + 4;
	char *clean = NULL;
	unsigned char *buf = NULL;
	int got, rc = -EINVAL;

	if (len > EO_BASE64_MAX)
		return -E2BIG;
	/* The copy holds the input without white space, URL-safe characters
	 * mapped to the standard ones, and (lenient) padding restored. */
	clean = malloc(cap);
	if (clean == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if ((flags & EO_BASE64_SPACE) && is_space(c))
			continue;
		if (flags & EO_BASE64_LENIENT)
			c = c == '-' ? '+' : c == '_' ? '/' : c;
		clean[m++] = c;
	}
	if (flags & EO_BASE64_LENIENT) {
		while (m > 0 && clean[m - 1] == '=')
			m--;
		if (m % 4 == 1)
			goto out;
		while (m % 4 != 0)
			clean[m++] = '=';
	}
	if (m % 4 != 0)
		goto out;
	while (pad < 2 && pad < m && clean[m - 1 - pad] == '=')
		pad++;
	/* EVP_DecodeBlock reads '=' as zero bits wherever it stands. */
	if (memchr(clean, '=', m - pad) != NULL)
		goto out;
	rc = -ENOMEM;
	buf = malloc(m / 4 * 3 + 1);
	if (buf == NULL)
		goto out;
	rc = -EINVAL;
	got = m > 0 ? EVP_DecodeBlock(buf, (const unsigned char *)clean, (int)m) : 0;
	if (got < 0 || (size_t)got != m / 4 * 3)
		goto out;
	*out_len = (size_t)got - pad;
	buf[*out_len] = '\0';
	*out = buf;
	buf = NULL;
	rc = 0;
out:
	drop(clean, cap);
	drop((char *)buf, m / 4 * 3 + 1);
	return rc;
}
