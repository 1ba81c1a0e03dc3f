/* Where a snapshot goes (store.h). */
#include "snapshot/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
		  bool replace, uint64_t part_size, unsigned parallel, char *err, size_t errcap)
{
	memset(u, 0, sizeof(*u));
	u->t = t;
	u->uid = uid;
	u->replace = replace;
	if (t->s3) {
		u->part_size = part_size ? part_size : EO_S3_DEFAULT_PART;
		u->parallel = parallel == 0			 ? EO_STORE_DEFAULT_PARALLEL
			      : parallel > EO_STORE_MAX_PARALLEL ? EO_STORE_MAX_PARALLEL
								 : parallel;
		for (unsigned i = 0; i < EO_STORE_MAX_PARALLEL; i++)
			u->parts[i].u = u;
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

/* The worker: one part from its slot's buffer, through its slot's client. */
static void *upload_part(void *arg)
{
	struct eo_store_part *p = arg;

	p->rc = eo_s3_mpu_part(p->s3, &p->u->mpu, p->number, p->buf, p->len, p->etag,
			       sizeof(p->etag), p->crc, p->err, sizeof(p->err));
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits for the slot's upload, if any, and records its ETag: 0, or -1 with its error. */
static int wait_part(struct eo_store_upload *u, struct eo_store_part *p, char *err, size_t errcap)
{
	uint64_t t0;

	if (!p->running)
		return 0;
	t0 = now_ms();
	pthread_join(p->thread, NULL);
	u->wait_ms += now_ms() - t0;
	p->running = false;
	if (p->rc != 0) {
		snprintf(err, errcap, "%s", p->err);
		return -1;
	}
	return eo_s3_mpu_set_etag(&u->mpu, p->number, p->etag, p->crc, err, errcap);
}

/* Waits for every upload under way; the first error wins. */
static int wait_all(struct eo_store_upload *u, char *err, size_t errcap)
{
	char e[512];
	int rc = 0;

	for (unsigned i = 0; i < u->parallel; i++) {
		/* Oldest first, so the error reported is the earliest part's. */
		struct eo_store_part *p = &u->parts[(u->next + i) % u->parallel];

		if (wait_part(u, p, e, sizeof(e)) != 0 && rc == 0) {
			snprintf(err, errcap, "%s", e);
			rc = -1;
		}
	}
	return rc;
}

/* The full buffer becomes the next part, uploaded by a worker; filling goes on. */
static int flush_part(struct eo_store_upload *u, char *err, size_t errcap)
{
	struct eo_store_part *p = &u->parts[u->next];
	unsigned char *t;
	int e;

	/* Slots are used in turn: this one holds the oldest upload. */
	if (wait_part(u, p, err, errcap) != 0)
		return -1;
	if (!u->mpu_started) {
		if (eo_s3_mpu_begin(u->t->s3, u->t->key, u->uid, &u->mpu, err, errcap) != 0)
			return -1;
		u->mpu_started = true;
	}
	if (!p->s3 && eo_s3_clone(u->t->s3, &p->s3, err, errcap) != 0)
		return -1;
	if (!p->buf && !(p->buf = malloc(u->part_size))) {
		snprintf(err, errcap, "cannot allocate a %llu-byte part buffer",
			 (unsigned long long)u->part_size);
		return -1;
	}
	if (eo_s3_mpu_reserve(&u->mpu, &p->number, err, errcap) != 0)
		return -1;
	t = p->buf;
	p->buf = u->buf;
	u->buf = t;
	p->len = u->len;
	u->len = 0;
	u->next = (u->next + 1) % u->parallel;
	e = pthread_create(&p->thread, NULL, upload_part, p);
	if (e != 0) {
		/* No thread: upload it here. */
		upload_part(p);
		if (p->rc != 0) {
			snprintf(err, errcap, "%s", p->err);
			return -1;
		}
		return eo_s3_mpu_set_etag(&u->mpu, p->number, p->etag, p->crc, err, errcap);
	}
	p->running = true;
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
	if (wait_all(u, err, errcap) != 0)
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
	(void)wait_all(u, err, sizeof(err));
	if (u->mpu_started) {
		if (eo_s3_mpu_abort(u->t->s3, &u->mpu, err, sizeof(err)) != 0)
			fprintf(stderr, "etcd-operator: aborting the multipart upload failed: %s\n",
				err);
		eo_s3_mpu_clear(&u->mpu);
		u->mpu_started = false;
	}
	free(u->buf);
	u->buf = NULL;
	for (unsigned i = 0; i < EO_STORE_MAX_PARALLEL; i++) {
		free(u->parts[i].buf);
		u->parts[i].buf = NULL;
		eo_s3_free(u->parts[i].s3);
		u->parts[i].s3 = NULL;
	}
}
