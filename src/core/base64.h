/*
 * core/base64.h - base64 (RFC 4648 section 4, standard alphabet) on top of
 * OpenSSL's EVP_EncodeBlock/EVP_DecodeBlock, with the checks those two leave
 * to the caller: padding is validated and not counted in the decoded length,
 * '=' is accepted only at the end, and sizes are bounded.
 *
 * Two decoders share it: the etcd gateway (keys and values, lenient, as etcd
 * accepts) and kubeconfig *-data fields (strict, white space ignored, as
 * base64 -w76 writes them).
 */
#ifndef EO_CORE_BASE64_H
#define EO_CORE_BASE64_H

#include <stddef.h>

/* Largest input either function takes (the OpenSSL calls take an int). */
#define EO_BASE64_MAX ((size_t)1 << 30)

/*
 * Encodes len bytes with padding. Returns a malloc'd NUL-terminated string
 * (the caller frees it), or NULL when out of memory or len > EO_BASE64_MAX.
 */
char *eo_base64_encode(const void *data, size_t len);

enum {
	/* Skip ASCII white space anywhere (space, tab, CR, LF, VT, FF). */
	EO_BASE64_SPACE = 1u << 0,
	/* Also accept the URL-safe alphabet ('-' and '_' for '+' and '/') and
	 * missing or extra trailing padding. */
	EO_BASE64_LENIENT = 1u << 1,
};

/*
 * Decodes [s, s+len). *out receives a malloc'd buffer with a NUL after the
 * *out_len decoded bytes (not counted); the caller frees it. Empty input
 * decodes to an empty buffer. Non-zero bits after the last full byte are
 * ignored, as OpenSSL and Go's lenient decoders do.
 *
 * Returns 0, -EINVAL (a character outside the alphabet, '=' before the end,
 * a length that is not a whole number of groups: 4 characters, or 2-3 more
 * with EO_BASE64_LENIENT), -E2BIG (len > EO_BASE64_MAX) or -ENOMEM. On error
 * *out and *out_len are left alone. Temporary copies are cleansed, so the
 * decoder may be given secrets (kubeconfig keys).
 */
int eo_base64_decode(const char *s, size_t len, unsigned flags, unsigned char **out,
		     size_t *out_len);

#endif
