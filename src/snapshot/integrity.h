/*
 * The integrity trailer of an etcd snapshot.
 *
 * etcd's Maintenance.Snapshot sends the bbolt database and then one more
 * message holding the 32-byte SHA-256 of every database byte before it.
 * Clients store both (etcdctl writes every blob verbatim), so a complete
 * snapshot file is "<db><sha256(db)>". etcdutl's restore recognises the
 * trailer by the file size: (size % 512) == 32 (a bbolt file is a whole
 * number of pages, so its own size is a multiple of 512), then compares the
 * trailer with the SHA-256 of the bytes before it.
 *
 * eo_snapcheck applies the same rule while the bytes stream past, with a
 * constant footprint: it hashes everything except a 32-byte tail window, and
 * at the end compares the window with the running hash. It also computes the
 * SHA-256 of the whole stream (trailer included), which is the checksum of
 * the stored object reported as "sha256:<hex>".
 *
 * Nothing here does I/O except eo_snapcheck_file, which reads a file in
 * bounded chunks.
 */
#ifndef EO_SNAPSHOT_INTEGRITY_H
#define EO_SNAPSHOT_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EO_SNAP_HASH_LEN    32
#define EO_SNAP_HASH_ALIGN  512
#define EO_SNAP_SHA_HEX_LEN (2 * EO_SNAP_HASH_LEN)

enum eo_snapcheck_result {
	EO_SNAPCHECK_OK = 0,
	EO_SNAPCHECK_NO_TRAILER, /* size % 512 != 32: truncated, padded or not a snapshot */
	EO_SNAPCHECK_MISMATCH,	 /* the trailer is not the SHA-256 of the bytes before it */
	EO_SNAPCHECK_ERROR,	 /* OpenSSL failed, or the checker was not initialised */
};

struct eo_snapcheck {
	void *all;  /* EVP_MD_CTX: at finish, a copy of body fed the window (every byte) */
	void *body; /* EVP_MD_CTX over every byte but the last 32 seen so far */
	unsigned char tail[EO_SNAP_HASH_LEN];
	size_t tail_len;
	uint64_t total;
	bool failed;
};

/* 0, or -1 when OpenSSL cannot set up the digests. */
int eo_snapcheck_init(struct eo_snapcheck *c);
void eo_snapcheck_feed(struct eo_snapcheck *c, const void *p, size_t n);
/*
 * Ends the stream: the verdict, and in sha_hex (EO_SNAP_SHA_HEX_LEN + 1
 * bytes, may be NULL) the SHA-256 of all bytes fed, lower-case hex. The
 * checker may only be freed afterwards.
 */
enum eo_snapcheck_result eo_snapcheck_finish(struct eo_snapcheck *c, char *sha_hex);
void eo_snapcheck_free(struct eo_snapcheck *c);

/* A short English description of a result; never NULL. */
const char *eo_snapcheck_strerror(enum eo_snapcheck_result r);

/*
 * Checks a snapshot file. Returns the verdict; *size and sha_hex (may be
 * NULL) receive the file's size and SHA-256. EO_SNAPCHECK_ERROR with err
 * filled on I/O errors.
 */
enum eo_snapcheck_result eo_snapcheck_file(const char *path, uint64_t *size, char *sha_hex,
					   char *err, size_t errcap);

#endif
