/* Where a snapshot goes (store.h). */
#include "agent/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eo_store_uri(const struct eo_store_target *t, char *buf, size_t cap)
{
	int n;

	if (t->s3)
		return eo_s3_uri(t->s3, t->key, buf, cap);
	n = snprintf(buf, cap, "file://%s/%s", t->dir, t->name);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int eo_store_guard(const struct eo_store_target *t, const char *uid, bool *replace, char *err,
		   size_t errcap)
{
	enum eo_guard_target target;
	char found[EO_S3_UID_MAX] = "", uri[2048], why[1024] = "";
	struct eo_s3_head h;

	*replace = false;
	if (eo_store_uri(t, uri, sizeof(uri)) != 0) {
		snprintf(err, errcap, "snapshot location too long");
		return -1;
	}
	if (t->s3) {
		if (eo_s3_head(t->s3, t->key, &h, why, sizeof(why)) == 0) {
			target = h.exists ? EO_TARGET_PRESENT : EO_TARGET_ABSENT;
			snprintf(found, sizeof(found), "%s", h.uid);
		} else {
			target = h.status == 403 ? EO_TARGET_FORBIDDEN : EO_TARGET_ERROR;
		}
	} else {
		target =
		    eo_filestore_probe(t->dir, t->name, found, sizeof(found), why, sizeof(why));
	}
	switch (eo_guard_decide(target, found, uid, uri, err, errcap)) {
	case EO_GUARD_WRITE_NEW:
		return 0;
	case EO_GUARD_OVERWRITE_OWN:
		*replace = true;
		return 0;
	case EO_GUARD_REFUSE:
		break;
	}
	if (why[0] && target == EO_TARGET_ERROR) {
		size_t l = strlen(err);

		snprintf(err + l, errcap - l, " (%s)", why);
	}
	return -1;
}

int eo_store_open(struct eo_store_upload *u, const struct eo_store_target *t, const char *uid,
		  bool replace, uint64_t part_size, char *err, size_t errcap)
{
	memset(u, 0, sizeof(*u));
	u->t = t;
	u->uid = uid;
	u->replace = replace;
	if (t->s3) {
		u->part_size = part_size ? part_size : EO_S3_DEFAULT_PART;
		u->buf = malloc(u->part_size);
		if (!u->buf) {
			snprintf(err, errcap, "cannot allocate a %llu-byte part buffer",
				 (unsigned long long)u->part_size);
			return -1;
		}
		return 0;
	}
	if (eo_filestore_begin(&u->fw, t->dir, t->name, err, errcap) != 0)
		return -1;
	u->fw_open = true;
	return 0;
}

/* The worker: one part from the spare buffer. Only it uses the S3 client while it runs. */
static void *upload_part(void *arg)
{
	struct eo_store_upload *u = arg;

	u->worker_rc = eo_s3_mpu_part(u->t->s3, &u->mpu, u->spare, u->worker_len, u->worker_err,
				      sizeof(u->worker_err));
	return NULL;
}

/* Waits for the part upload under way, if any: 0, or -1 with its error. */
static int wait_part(struct eo_store_upload *u, char *err, size_t errcap)
{
	if (!u->worker_running)
		return 0;
	pthread_join(u->worker, NULL);
	u->worker_running = false;
	if (u->worker_rc != 0) {
		snprintf(err, errcap, "%s", u->worker_err);
		return -1;
	}
	return 0;
}

/* The full buffer becomes the next part, uploaded by the worker; filling goes on. */
static int flush_part(struct eo_store_upload *u, char *err, size_t errcap)
{
	unsigned char *t;
	int e;

	if (wait_part(u, err, errcap) != 0)
		return -1;
	if (!u->mpu_started) {
		if (eo_s3_mpu_begin(u->t->s3, u->t->key, u->uid, &u->mpu, err, errcap) != 0)
			return -1;
		u->mpu_started = true;
	}
	if (!u->spare && !(u->spare = malloc(u->part_size))) {
		snprintf(err, errcap, "cannot allocate a %llu-byte part buffer",
			 (unsigned long long)u->part_size);
		return -1;
	}
	t = u->spare;
	u->spare = u->buf;
	u->buf = t;
	u->worker_len = u->len;
	u->len = 0;
	e = pthread_create(&u->worker, NULL, upload_part, u);
	if (e != 0) {
		/* No thread: upload it here. */
		upload_part(u);
		if (u->worker_rc != 0) {
			snprintf(err, errcap, "%s", u->worker_err);
			return -1;
		}
		return 0;
	}
	u->worker_running = true;
	return 0;
}

int eo_store_write(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct eo_store_upload *u = ud;
	const unsigned char *b = p;
	size_t take;

	u->written += n;
	if (!u->t->s3)
		return eo_filestore_write(&u->fw, p, n, err, errcap);
	while (n > 0) {
		take = u->part_size - u->len < n ? u->part_size - u->len : n;
		memcpy(u->buf + u->len, b, take);
		u->len += take;
		b += take;
		n -= take;
		/* A full buffer waits for more data: the last part may be this one. */
		if (u->len == u->part_size && n > 0 && flush_part(u, err, errcap) != 0)
			return -1;
	}
	if (u->len == u->part_size && u->mpu_started) {
		/* Keep at most one full buffer; flushing early is fine once multipart. */
		return flush_part(u, err, errcap);
	}
	return 0;
}

int eo_store_commit(struct eo_store_upload *u, char *err, size_t errcap)
{
	int rc;

	if (!u->t->s3) {
		rc = eo_filestore_commit(&u->fw, u->uid, u->replace, err, errcap);
		u->fw_open = false;
		return rc;
	}
	if (!u->mpu_started)
		return eo_s3_put(u->t->s3, u->t->key, u->buf, u->len, u->uid, err, errcap);
	if (u->len > 0 && flush_part(u, err, errcap) != 0)
		return -1;
	if (wait_part(u, err, errcap) != 0)
		return -1;
	if (eo_s3_mpu_complete(u->t->s3, &u->mpu, err, errcap) != 0)
		return -1;
	eo_s3_mpu_clear(&u->mpu);
	u->mpu_started = false;
	return 0;
}

void eo_store_abort(struct eo_store_upload *u)
{
	char err[512];

	if (u->fw_open)
		eo_filestore_abort(&u->fw);
	u->fw_open = false;
	(void)wait_part(u, err, sizeof(err));
	if (u->mpu_started) {
		if (eo_s3_mpu_abort(u->t->s3, &u->mpu, err, sizeof(err)) != 0)
			fprintf(stderr, "etcd-operator: aborting the multipart upload failed: %s\n",
				err);
		eo_s3_mpu_clear(&u->mpu);
		u->mpu_started = false;
	}
	free(u->buf);
	free(u->spare);
	u->buf = NULL;
	u->spare = NULL;
}
