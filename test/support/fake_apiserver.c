/*
 * support/fake_apiserver.c - libmicrohttpd based fake apiserver for tests.
 */
#include "support/fake_apiserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_BODY_MAX (16u << 20)
#define FAKE_LOG_MAX  (64u << 20)

struct eo_kube_fake {
	struct MHD_Daemon *d;
	eo_kube_fake_handler handler;
	void *ud;
	char url[64];

	pthread_mutex_t mu;
	pthread_cond_t cond;
	char *log; /* everything pushed, append-only */
	size_t log_len, log_cap;
	unsigned gen; /* bumped by close_streams */
	bool stopping;
	int open_streams;
};

/* Per request: created by the URI log callback, freed on completion. */
struct req_ctx {
	char *raw_uri;
	char *body;
	size_t body_len, body_cap;
	bool too_big;
	bool started; /* the first call only announces the headers */
};

/* Per response body reader. */
struct reader {
	eo_kube_fake *f;
	char *body;
	size_t body_len, off;
	bool stream;
	size_t log_off;
	unsigned gen;
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct req_ctx *rc = calloc(1, sizeof(*rc));

	(void)cls;
	(void)conn;
	if (rc)
		rc->raw_uri = strdup(uri);
	return rc;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct req_ctx *rc = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (rc) {
		free(rc->raw_uri);
		free(rc->body);
		free(rc);
	}
	*con_cls = NULL;
}

static ssize_t read_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reader *r = cls;
	eo_kube_fake *f = r->f;
	ssize_t n = 0;

	(void)pos;
	if (r->off < r->body_len) {
		size_t k = r->body_len - r->off;

		if (k > max)
			k = max;
		memcpy(buf, r->body + r->off, k);
		r->off += k;
		return (ssize_t)k;
	}
	if (!r->stream)
		return MHD_CONTENT_READER_END_OF_STREAM;
	/* Blocking here is allowed: every connection has its own thread. */
	pthread_mutex_lock(&f->mu);
	while (r->log_off == f->log_len && r->gen == f->gen && !f->stopping) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&f->cond, &f->mu, &ts);
	}
	if (r->log_off < f->log_len) {
		size_t k = f->log_len - r->log_off;

		if (k > max)
			k = max;
		memcpy(buf, f->log + r->log_off, k);
		r->log_off += k;
		n = (ssize_t)k;
	} else {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	}
	pthread_mutex_unlock(&f->mu);
	return n;
}

static void reader_free(void *cls)
{
	struct reader *r = cls;

	if (r->stream) {
		pthread_mutex_lock(&r->f->mu);
		r->f->open_streams--;
		pthread_mutex_unlock(&r->f->mu);
	}
	free(r->body);
	free(r);
}

const char *eo_kube_fake_arg(const struct eo_kube_fake_request *rq, const char *key)
{
	return MHD_lookup_connection_value(rq->conn_, MHD_GET_ARGUMENT_KIND, key);
}

const char *eo_kube_fake_header(const struct eo_kube_fake_request *rq, const char *key)
{
	return MHD_lookup_connection_value(rq->conn_, MHD_HEADER_KIND, key);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	eo_kube_fake *f = cls;
	struct req_ctx *rc = *con_cls;
	struct eo_kube_fake_request rq;
	struct eo_kube_fake_response rs = {0};
	struct reader *r = NULL;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)version;
	if (!rc)
		return MHD_NO;
	if (!rc->started) {
		rc->started = true;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;

		if (rc->body_len + n > FAKE_BODY_MAX) {
			rc->too_big = true;
		} else {
			if (rc->body_len + n + 1 > rc->body_cap) {
				size_t cap = (rc->body_len + n + 1) * 2;
				char *nb = realloc(rc->body, cap);

				if (!nb)
					return MHD_NO;
				rc->body = nb;
				rc->body_cap = cap;
			}
			memcpy(rc->body + rc->body_len, upload_data, n);
			rc->body_len += n;
			rc->body[rc->body_len] = '\0';
		}
		*upload_data_size = 0;
		return MHD_YES;
	}

	rq.method = method;
	rq.path = url;
	rq.raw_uri = rc->raw_uri ? rc->raw_uri : url;
	rq.body = rc->body ? rc->body : "";
	rq.body_len = rc->body_len;
	rq.conn_ = conn;
	if (rc->too_big) {
		rs.status = 413;
	} else {
		f->handler(f->ud, &rq, &rs);
	}

	r = calloc(1, sizeof(*r));
	if (!r) {
		free(rs.body);
		return MHD_NO;
	}
	r->f = f;
	r->body = rs.body;
	r->body_len = rs.body ? strlen(rs.body) : 0;
	r->stream = rs.stream;
	if (r->stream) {
		pthread_mutex_lock(&f->mu);
		r->log_off = f->log_len;
		r->gen = f->gen;
		f->open_streams++;
		pthread_mutex_unlock(&f->mu);
	}
	resp = MHD_create_response_from_callback(r->stream ? MHD_SIZE_UNKNOWN : r->body_len, 4096,
						 read_cb, r, reader_free);
	if (!resp) {
		reader_free(r);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type",
				rs.content_type ? rs.content_type : "application/json");
	ret = MHD_queue_response(conn, rs.status ? (unsigned)rs.status : 200u, resp);
	MHD_destroy_response(resp);
	return ret;
}

eo_kube_fake *eo_kube_fake_start(eo_kube_fake_handler handler, void *ud)
{
	eo_kube_fake *f = calloc(1, sizeof(*f));
	struct sockaddr_in sa;
	const union MHD_DaemonInfo *info;

	if (!f)
		return NULL;
	f->handler = handler;
	f->ud = ud;
	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cond, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->d =
	    MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, 0,
			     NULL, NULL, on_request, f, MHD_OPTION_SOCK_ADDR, &sa,
			     MHD_OPTION_URI_LOG_CALLBACK, uri_log, f, MHD_OPTION_NOTIFY_COMPLETED,
			     completed, f, MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
	if (!f->d)
		goto fail;
	info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
	if (!info || info->port == 0)
		goto fail;
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", (unsigned)info->port);
	return f;
fail:
	eo_kube_fake_stop(f);
	return NULL;
}

void eo_kube_fake_stop(eo_kube_fake *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->mu);
	if (f->d)
		MHD_stop_daemon(f->d);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->mu);
	free(f->log);
	free(f);
}

const char *eo_kube_fake_url(const eo_kube_fake *f)
{
	return f->url;
}

void eo_kube_fake_push(eo_kube_fake *f, const char *text)
{
	size_t n = strlen(text);

	pthread_mutex_lock(&f->mu);
	if (f->log_len + n <= FAKE_LOG_MAX) {
		if (f->log_len + n > f->log_cap) {
			size_t cap = (f->log_len + n) * 2;
			char *nl = realloc(f->log, cap);

			if (!nl)
				goto out;
			f->log = nl;
			f->log_cap = cap;
		}
		memcpy(f->log + f->log_len, text, n);
		f->log_len += n;
		pthread_cond_broadcast(&f->cond);
	}
out:
	pthread_mutex_unlock(&f->mu);
}

void eo_kube_fake_close_streams(eo_kube_fake *f)
{
	pthread_mutex_lock(&f->mu);
	f->gen++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->mu);
}

int eo_kube_fake_open_streams(eo_kube_fake *f)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->open_streams;
	pthread_mutex_unlock(&f->mu);
	return n;
}
