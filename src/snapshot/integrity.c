/* The integrity trailer of an etcd snapshot (integrity.h). */
#include "snapshot/integrity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

int eo_snapcheck_init(struct eo_snapcheck *c)
{
	memset(c, 0, sizeof(*c));
	c->all = EVP_MD_CTX_new();
	c->body = EVP_MD_CTX_new();
	if (!c->all || !c->body || EVP_DigestInit_ex(c->all, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestInit_ex(c->body, EVP_sha256(), NULL) != 1) {
		eo_snapcheck_free(c);
		return -1;
	}
	return 0;
}

void eo_snapcheck_free(struct eo_snapcheck *c)
{
	EVP_MD_CTX_free(c->all);
	EVP_MD_CTX_free(c->body);
	c->all = c->body = NULL;
}

static void body_update(struct eo_snapcheck *c, const void *p, size_t n)
{
	if (n > 0 && EVP_DigestUpdate(c->body, p, n) != 1)
		c->failed = true;
}

void eo_snapcheck_feed(struct eo_snapcheck *c, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t spill;

	if (!c->all || n == 0)
		return;
	/* One digest pass: "all" is derived from "body" at the end (finish). */
	c->total += n;
	if (n >= EO_SNAP_HASH_LEN) {
		/* The old window and all but the last 32 new bytes are body. */
		body_update(c, c->tail, c->tail_len);
		body_update(c, b, n - EO_SNAP_HASH_LEN);
		memcpy(c->tail, b + n - EO_SNAP_HASH_LEN, EO_SNAP_HASH_LEN);
		c->tail_len = EO_SNAP_HASH_LEN;
		return;
	}
	/* Fewer than 32 new bytes: the oldest bytes of the window spill over. */
	spill = c->tail_len + n > EO_SNAP_HASH_LEN ? c->tail_len + n - EO_SNAP_HASH_LEN : 0;
	body_update(c, c->tail, spill);
	memmove(c->tail, c->tail + spill, c->tail_len - spill);
	c->tail_len -= spill;
	memcpy(c->tail + c->tail_len, b, n);
	c->tail_len += n;
}

static void to_hex(const unsigned char *d, size_t n, char *out)
{
	static const char hx[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[2 * n] = '\0';
}

enum eo_snapcheck_result eo_snapcheck_finish(struct eo_snapcheck *c, char *sha_hex)
{
	unsigned char all[EVP_MAX_MD_SIZE], body[EVP_MAX_MD_SIZE];
	unsigned int alen = 0, blen = 0;

	if (!c->all || c->failed)
		return EO_SNAPCHECK_ERROR;
	/* SHA-256 of every byte = the body's state fed the 32-byte window. */
	if (EVP_MD_CTX_copy_ex(c->all, c->body) != 1 ||
	    (c->tail_len > 0 && EVP_DigestUpdate(c->all, c->tail, c->tail_len) != 1) ||
	    EVP_DigestFinal_ex(c->all, all, &alen) != 1 ||
	    EVP_DigestFinal_ex(c->body, body, &blen) != 1 || alen != EO_SNAP_HASH_LEN)
		return EO_SNAPCHECK_ERROR;
	if (sha_hex)
		to_hex(all, alen, sha_hex);
	if (c->total % EO_SNAP_HASH_ALIGN != EO_SNAP_HASH_LEN || c->tail_len != EO_SNAP_HASH_LEN)
		return EO_SNAPCHECK_NO_TRAILER;
	if (CRYPTO_memcmp(body, c->tail, EO_SNAP_HASH_LEN) != 0)
		return EO_SNAPCHECK_MISMATCH;
	return EO_SNAPCHECK_OK;
}

const char *eo_snapcheck_strerror(enum eo_snapcheck_result r)
{
	switch (r) {
	case EO_SNAPCHECK_OK:
		return "integrity hash verified";
	case EO_SNAPCHECK_NO_TRAILER:
		return "no integrity hash at the end (size is not 32 bytes past a multiple of "
		       "512): "
		       "the snapshot is truncated or not an etcd snapshot";
	case EO_SNAPCHECK_MISMATCH:
		return "integrity hash mismatch: the snapshot is corrupted";
	case EO_SNAPCHECK_ERROR:
		break;
	}
	return "integrity check failed to run";
}

enum eo_snapcheck_result eo_snapcheck_file(const char *path, uint64_t *size, char *sha_hex,
					   char *err, size_t errcap)
{
	enum { CHUNK = 1 << 20 };
	struct eo_snapcheck c;
	enum eo_snapcheck_result r;
	unsigned char *buf = NULL;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errcap, "open %s: %s", path, strerror(errno));
		return EO_SNAPCHECK_ERROR;
	}
	buf = malloc(CHUNK);
	if (!buf || eo_snapcheck_init(&c) != 0) {
		snprintf(err, errcap, "out of memory");
		free(buf);
		close(fd);
		return EO_SNAPCHECK_ERROR;
	}
	for (;;) {
		n = read(fd, buf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		eo_snapcheck_feed(&c, buf, (size_t)n);
	}
	if (n < 0) {
		snprintf(err, errcap, "read %s: %s", path, strerror(errno));
		r = EO_SNAPCHECK_ERROR;
	} else {
		if (size)
			*size = c.total;
		r = eo_snapcheck_finish(&c, sha_hex);
		if (r != EO_SNAPCHECK_OK)
			snprintf(err, errcap, "%s: %s", path, eo_snapcheck_strerror(r));
	}
	eo_snapcheck_free(&c);
	free(buf);
	close(fd);
	return r;
}
