/* A TCP connection to a Pod's port through the apiserver (kube/portforward.h). */
#include "kube/portforward.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "kube/client_int.h"

#define WS_GUID	      "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_PROTOCOL   "v4.channel.k8s.io"
#define WS_IN_MAX     (1u << 20)	 /* one frame from the apiserver: the streams send 32 KiB */
#define WS_CHUNK      32768		 /* bytes read from the local end per frame */
#define IN_LIMIT      (WS_IN_MAX + 4096) /* a whole frame of WS_IN_MAX and its header */
#define HANDSHAKE_MAX 16384
#define ERRCHAN_MAX   1024
#define PUMP_POLL_MS  500
#define ACCEPT_MS     30000 /* unix-socket mode: the caller connects right after the open */
#define CH_DATA	      0
#define CH_ERROR      1

struct eo_kube_tunnel {
	CURL *h;
	curl_socket_t sock; /* the apiserver connection (TLS inside curl) */
	int fd[2];	    /* [0] the caller's end, [1] the pump's */
	int lfd;	    /* unix-socket mode: the listener until the caller connected */
	char *upath;	    /* its path (unlinked on close) */
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	bool stop;
	char errchan[ERRCHAN_MAX];
	size_t errchan_len;
	/*
	 * curl's error buffer for h. It lives as long as the handle: the pump's recv and send
	 * write their errors here after eo_kube_portforward returned (a buffer on the opener's
	 * stack was overwritten later, in whatever frame then held that stack).
	 */
	char curl_err[CURL_ERROR_SIZE];
	/* pump state */
	uint8_t *in; /* bytes from the apiserver not parsed yet */
	size_t in_len, in_cap;
	uint8_t *out; /* frames to the apiserver not sent yet */
	size_t out_len, out_off, out_cap;
	size_t data_skip, err_skip; /* port prefixes still to drop on each channel */
	bool peer_closed, local_eof;
};

/* ---- framing -------------------------------------------------------------------------- */

size_t eo_ws_frame(uint8_t opcode, const uint8_t mask[4], const uint8_t *prefix, size_t prefix_len,
		   const uint8_t *p, size_t n, uint8_t *out, size_t cap)
{
	size_t total = prefix_len + n, h = 0, i;

	if (cap < 14 || total > cap - 14)
		return 0;
	out[h++] = (uint8_t)(0x80 | (opcode & 0x0f));
	if (total < 126) {
		out[h++] = (uint8_t)(0x80 | total);
	} else if (total <= 0xffff) {
		out[h++] = 0x80 | 126;
		out[h++] = (uint8_t)(total >> 8);
		out[h++] = (uint8_t)total;
	} else {
		out[h++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			out[h++] = (uint8_t)((uint64_t)total >> (56 - 8 * i));
	}
	memcpy(out + h, mask, 4);
	h += 4;
	for (i = 0; i < total; i++) {
		uint8_t b = i < prefix_len ? prefix[i] : p[i - prefix_len];

		out[h + i] = b ^ mask[i & 3];
	}
	return h + total;
}

int eo_ws_parse(const uint8_t *p, size_t n, uint64_t max, struct eo_ws_parsed *f)
{
	size_t h = 2, i;
	uint64_t len;

	if (n < 2)
		return 0;
	memset(f, 0, sizeof(*f));
	if (p[0] & 0x70)
		return -1; /* no extension was negotiated */
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	f->masked = (p[1] & 0x80) != 0;
	len = p[1] & 0x7f;
	if (len == 126) {
		if (n < 4)
			return 0;
		len = ((uint64_t)p[2] << 8) | p[3];
		h = 4;
	} else if (len == 127) {
		if (n < 10)
			return 0;
		len = 0;
		for (i = 0; i < 8; i++)
			len = (len << 8) | p[2 + i];
		h = 10;
	}
	if ((f->opcode & 0x08) && (len > 125 || !f->fin))
		return -1;
	if (len > max)
		return -1;
	if (f->masked) {
		if (n < h + 4)
			return 0;
		memcpy(f->mask, p + h, 4);
		h += 4;
	}
	f->header_len = h;
	f->len = len;
	return n - h >= len ? 1 : 0;
}

void eo_ws_accept(const char *key, char out[64])
{
	unsigned char md[SHA_DIGEST_LENGTH];
	char buf[128];

	snprintf(buf, sizeof(buf), "%s%s", key, WS_GUID);
	SHA1((const unsigned char *)buf, strlen(buf), md);
	EVP_EncodeBlock((unsigned char *)out, md, SHA_DIGEST_LENGTH);
}

/* ---- I/O on the apiserver connection -------------------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int wait_sock(curl_socket_t s, short ev, long ms)
{
	struct pollfd p = {.fd = s, .events = ev};
	int r;

	do
		r = poll(&p, 1, (int)(ms < 0 ? 0 : ms));
	while (r < 0 && errno == EINTR);
	return r;
}

/* Sends all of p before deadline (a monotonic ms). 0 or -1. */
static int send_all(eo_kube_tunnel *t, const void *p, size_t n, long deadline)
{
	const char *q = p;

	while (n > 0) {
		size_t sent = 0;
		CURLcode cc = curl_easy_send(t->h, q, n, &sent);

		if (cc == CURLE_AGAIN) {
			if (now_ms() >= deadline ||
			    wait_sock(t->sock, POLLOUT, deadline - now_ms()) < 0)
				return -1;
			continue;
		}
		if (cc != CURLE_OK)
			return -1;
		q += sent;
		n -= sent;
	}
	return 0;
}

static bool header_has(const char *head, const char *name, const char *value)
{
	size_t nl = strlen(name);
	const char *l = strstr(head, "\r\n");

	while (l && l[2] != '\r') {
		const char *line = l + 2, *end = strstr(line, "\r\n");

		if (!end)
			break;
		if ((size_t)(end - line) > nl && strncasecmp(line, name, nl) == 0 &&
		    line[nl] == ':') {
			const char *v = line + nl + 1;

			while (*v == ' ' || *v == '\t')
				v++;
			return (size_t)(end - v) == strlen(value) &&
			       strncasecmp(v, value, (size_t)(end - v)) == 0;
		}
		l = end;
	}
	return false;
}

/*
 * The upgrade: request, then the answer's header. A non-101 answer is read whole (up to its
 * Content-Length within HANDSHAKE_MAX) and parsed as a Status into err.
 */
static eo_kube_err handshake(eo_kube_tunnel *t, const char *host, const char *path,
			     const char *token, const char *ua, long deadline,
			     struct eo_kube_error *err)
{
	uint8_t rnd[16];
	char key[32], accept[64], *req = NULL, *buf = NULL, *end = NULL;
	size_t len = 0;
	int n, status = 0;
	eo_kube_err rc = EO_KUBE_OK;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return eo_kube_fail(err, EO_KUBE_ETRANSPORT, "no randomness for the WebSocket key");
	EVP_EncodeBlock((unsigned char *)key, rnd, sizeof(rnd));
	n = asprintf(&req,
		     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
		     "Sec-WebSocket-Protocol: %s\r\n%s%s%s\r\n",
		     path, host, ua, key, WS_PROTOCOL, token ? "Authorization: Bearer " : "",
		     token ? token : "", token ? "\r\n" : "");
	if (n < 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "port-forward request");
	if (send_all(t, req, (size_t)n, deadline) != 0) {
		rc = eo_kube_fail(err, EO_KUBE_EUNAVAILABLE,
				  "port-forward: the apiserver connection failed while sending");
		goto out;
	}
	buf = malloc(HANDSHAKE_MAX + 1);
	if (!buf) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "port-forward answer");
		goto out;
	}
	while (!end) {
		size_t got = 0;
		CURLcode cc;

		if (len == HANDSHAKE_MAX) {
			rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL,
					  "port-forward: the upgrade answer is too long");
			goto out;
		}
		cc = curl_easy_recv(t->h, buf + len, HANDSHAKE_MAX - len, &got);
		if (cc == CURLE_AGAIN) {
			if (now_ms() >= deadline) {
				rc = eo_kube_fail(err, EO_KUBE_ETIMEOUT,
						  "port-forward: no answer to the upgrade in time");
				goto out;
			}
			wait_sock(t->sock, POLLIN, deadline - now_ms());
			continue;
		}
		if (cc != CURLE_OK || got == 0) {
			rc =
			    eo_kube_fail(err, EO_KUBE_EUNAVAILABLE,
					 "port-forward: the apiserver closed the connection during "
					 "the upgrade");
			goto out;
		}
		len += got;
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
		rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL, "port-forward: not an HTTP answer");
		goto out;
	}
	if (status != 101) {
		/* The Status body: what already arrived after the header (enough for a Status). */
		const char *body = end + 4;
		size_t blen = len - (size_t)(body - buf);
		long wait_until = now_ms() + 1000 < deadline ? now_ms() + 1000 : deadline;

		while (blen < 2 || body[blen - 1] != '}') {
			size_t got = 0;
			CURLcode cc;

			if (len == HANDSHAKE_MAX || now_ms() >= wait_until)
				break;
			cc = curl_easy_recv(t->h, buf + len, HANDSHAKE_MAX - len, &got);
			if (cc == CURLE_AGAIN) {
				wait_sock(t->sock, POLLIN, wait_until - now_ms());
				continue;
			}
			if (cc != CURLE_OK || got == 0)
				break;
			len += got;
			blen += got;
			buf[len] = '\0';
		}
		rc = eo_kube_status_parse(status, body, blen, err);
		if (rc == EO_KUBE_OK)
			rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL,
					  "port-forward: HTTP %d instead of an upgrade", status);
		goto out;
	}
	end[2] = '\0'; /* header_has reads up to the blank line */
	eo_ws_accept(key, accept);
	if (!header_has(buf, "Sec-WebSocket-Accept", accept)) {
		rc = eo_kube_fail(
		    err, EO_KUBE_EPROTOCOL,
		    "port-forward: the upgrade answer has no valid Sec-WebSocket-Accept");
		goto out;
	}
	/* Frames that came with the header. */
	t->in_len = len - (size_t)(end + 4 - buf);
	if (t->in_len > t->in_cap) {
		rc = eo_kube_fail(err, EO_KUBE_EPROTOCOL, "port-forward: early data too long");
		goto out;
	}
	memcpy(t->in, end + 4, t->in_len);
out:
	if (req) {
		OPENSSL_cleanse(req, (size_t)n); /* carries the bearer token */
		free(req);
	}
	free(buf);
	return rc;
}

/* ---- the pump -------------------------------------------------------------------------- */

static int queue_frame(eo_kube_tunnel *t, uint8_t op, const uint8_t *prefix, size_t plen,
		       const uint8_t *p, size_t n)
{
	uint8_t mask[4];
	size_t need = n + plen + 14, w;

	if (t->out_off == t->out_len)
		t->out_off = t->out_len = 0;
	if (t->out_cap - t->out_len < need) {
		size_t ncap = t->out_len + need;
		uint8_t *np;

		if (t->out_off > 0) {
			memmove(t->out, t->out + t->out_off, t->out_len - t->out_off);
			t->out_len -= t->out_off;
			t->out_off = 0;
		}
		if (t->out_cap - t->out_len < need) {
			np = realloc(t->out, ncap);
			if (!np)
				return -1;
			t->out = np;
			t->out_cap = ncap;
		}
	}
	if (RAND_bytes(mask, 4) != 1)
		return -1;
	w = eo_ws_frame(op, mask, prefix, plen, p, n, t->out + t->out_len, t->out_cap - t->out_len);
	if (w == 0)
		return -1;
	t->out_len += w;
	return 0;
}

static int write_local(eo_kube_tunnel *t, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(t->fd[1], p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void keep_error(eo_kube_tunnel *t, const uint8_t *p, size_t n)
{
	pthread_mutex_lock(&t->mu);
	if (n > sizeof(t->errchan) - 1 - t->errchan_len)
		n = sizeof(t->errchan) - 1 - t->errchan_len;
	memcpy(t->errchan + t->errchan_len, p, n);
	t->errchan_len += n;
	t->errchan[t->errchan_len] = '\0';
	pthread_mutex_unlock(&t->mu);
}

/* Handles the complete frames in t->in. 0 to go on, 1 when the peer closed, -1 on error. */
static int consume(eo_kube_tunnel *t)
{
	size_t off = 0;
	int rc = 0;

	while (rc == 0) {
		struct eo_ws_parsed f;
		uint8_t *pl;
		size_t i, n;
		int r = eo_ws_parse(t->in + off, t->in_len - off, WS_IN_MAX, &f);

		if (r == 0)
			break;
		if (r < 0)
			return -1;
		pl = t->in + off + f.header_len;
		n = (size_t)f.len;
		if (f.masked)
			for (i = 0; i < n; i++)
				pl[i] ^= f.mask[i & 3];
		switch (f.opcode) {
		case EO_WS_OP_BINARY:
		case EO_WS_OP_CONT: /* wsstream sends whole messages; take pieces as they come */
			if (n == 0)
				break;
			if (pl[0] == CH_DATA) {
				size_t skip = t->data_skip < n - 1 ? t->data_skip : n - 1;

				t->data_skip -= skip;
				if (n - 1 - skip > 0 &&
				    write_local(t, pl + 1 + skip, n - 1 - skip) != 0)
					rc = -1;
			} else if (pl[0] == CH_ERROR) {
				size_t skip = t->err_skip < n - 1 ? t->err_skip : n - 1;

				t->err_skip -= skip;
				if (n - 1 - skip > 0)
					keep_error(t, pl + 1 + skip, n - 1 - skip);
			}
			break;
		case EO_WS_OP_PING:
			if (queue_frame(t, EO_WS_OP_PONG, NULL, 0, pl, n) != 0)
				rc = -1;
			break;
		case EO_WS_OP_CLOSE:
			rc = 1;
			break;
		default: /* text (the base64 protocol, not negotiated), pong: ignored */
			break;
		}
		off += f.header_len + n;
	}
	memmove(t->in, t->in + off, t->in_len - off);
	t->in_len -= off;
	return rc;
}

static bool stopping(eo_kube_tunnel *t)
{
	bool s;

	pthread_mutex_lock(&t->mu);
	s = t->stop;
	pthread_mutex_unlock(&t->mu);
	return s;
}

/* Unix-socket mode: waits for the caller's one connection (ACCEPT_MS at most). 0 or -1. */
static int accept_local(eo_kube_tunnel *t)
{
	long until = now_ms() + ACCEPT_MS;

	while (!stopping(t) && now_ms() < until) {
		struct pollfd p = {.fd = t->lfd, .events = POLLIN};

		if (poll(&p, 1, PUMP_POLL_MS) > 0) {
			int fd = accept4(t->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				pthread_mutex_lock(&t->mu);
				t->fd[1] = fd;
				pthread_mutex_unlock(&t->mu);
				return 0;
			}
			if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
				return -1;
		}
	}
	return -1;
}

static void *pump(void *ud)
{
	eo_kube_tunnel *t = ud;
	uint8_t *chunk = malloc(WS_CHUNK);
	static const uint8_t ch_data = CH_DATA;
	int rc = chunk && (t->lfd < 0 || accept_local(t) == 0) ? consume(t) : -1;

	while (rc == 0 && !stopping(t)) {
		struct pollfd p[2] = {{.fd = t->sock, .events = POLLIN},
				      {.fd = t->fd[1], .events = 0}};
		bool pending = t->out_off < t->out_len;
		int r;

		if (pending)
			p[0].events |= POLLOUT;
		else if (!t->local_eof)
			p[1].events = POLLIN;
		r = poll(p, 2, PUMP_POLL_MS);
		if (r < 0 && errno != EINTR)
			break;
		/* Drain what curl has (TLS may hold decrypted bytes the socket does not show). */
		for (;;) {
			size_t got = 0;
			CURLcode cc;

			if (t->in_cap - t->in_len < 4096 && t->in_cap < IN_LIMIT) {
				size_t ncap = t->in_cap * 2 < IN_LIMIT ? t->in_cap * 2 : IN_LIMIT;
				uint8_t *np = realloc(t->in, ncap);

				if (!np) {
					rc = -1;
					break;
				}
				t->in = np;
				t->in_cap = ncap;
			}
			if (t->in_len == t->in_cap) { /* cannot be a frame eo_ws_parse accepts */
				rc = -1;
				break;
			}
			cc = curl_easy_recv(t->h, t->in + t->in_len, t->in_cap - t->in_len, &got);
			if (cc == CURLE_AGAIN)
				break;
			if (cc != CURLE_OK || got == 0) {
				t->peer_closed = true;
				break;
			}
			t->in_len += got;
			rc = consume(t);
			if (rc != 0)
				break;
		}
		if (rc != 0 || t->peer_closed)
			break;
		if (p[1].events && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = recv(t->fd[1], chunk, WS_CHUNK, 0);

			if (n > 0) {
				if (queue_frame(t, EO_WS_OP_BINARY, &ch_data, 1, chunk,
						(size_t)n) != 0)
					rc = -1;
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				/* The caller is done: say goodbye (status 1000). */
				static const uint8_t bye[2] = {0x03, 0xe8};

				t->local_eof = true;
				if (queue_frame(t, EO_WS_OP_CLOSE, NULL, 0, bye, 2) != 0)
					rc = -1;
			}
		}
		while (rc == 0 && t->out_off < t->out_len) {
			size_t sent = 0;
			CURLcode cc = curl_easy_send(t->h, t->out + t->out_off,
						     t->out_len - t->out_off, &sent);

			if (cc == CURLE_AGAIN)
				break;
			if (cc != CURLE_OK) {
				rc = -1;
				break;
			}
			t->out_off += sent;
		}
		if (t->local_eof && t->out_off == t->out_len)
			break; /* close sent; nothing else to do */
	}
	free(chunk);
	/* The caller reads EOF from here on. */
	if (t->fd[1] >= 0)
		shutdown(t->fd[1], SHUT_RDWR);
	return NULL;
}

/* ---- open / close ---------------------------------------------------------------------- */

eo_kube_err eo_kube_portforward(eo_kube_client *c, const char *ns, const char *pod, int port,
				long timeout_ms, const char *unix_path, eo_kube_tunnel **out,
				struct eo_kube_error *err)
{
	eo_kube_tunnel *t = calloc(1, sizeof(*t));
	const char *server = eo_kube_config_server(eo_kube_client_config(c));
	struct curl_slist *hdrs = NULL;
	char *path = NULL, *token = NULL, *host = NULL, *eh = NULL, *ep = NULL, *hostport = NULL;
	CURLU *u = NULL;
	long deadline;
	CURLcode cc;
	eo_kube_err rc;

	*out = NULL;
	if (!t)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "tunnel");
	t->fd[0] = t->fd[1] = t->lfd = -1;
	t->data_skip = t->err_skip = 2;
	pthread_mutex_init(&t->mu, NULL);
	if (timeout_ms <= 0)
		timeout_ms = eo__kube_client_connect_timeout_ms(c);
	deadline = now_ms() + timeout_ms;
	eh = eo_kube_escape(ns);
	ep = eo_kube_escape(pod);
	t->in_cap = 65536;
	t->in = malloc(t->in_cap);
	if (!eh || !ep || !t->in ||
	    asprintf(&path, "/api/v1/namespaces/%s/pods/%s/portforward?ports=%d", eh, ep, port) <
		0) {
		path = NULL;
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "tunnel");
		goto fail;
	}
	u = curl_url();
	if (!u || curl_url_set(u, CURLUPART_URL, server, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "the apiserver URL does not parse");
		goto fail;
	}
	{
		char *pp = NULL;

		if (curl_url_get(u, CURLUPART_PORT, &pp, 0) == CURLUE_OK && pp) {
			if (asprintf(&hostport, "%s:%s", host, pp) < 0)
				hostport = NULL;
			curl_free(pp);
		} else {
			hostport = strdup(host);
		}
		if (!hostport) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "tunnel");
			goto fail;
		}
	}
	rc = eo_kube_config_token(eo_kube_client_config(c), &token, err);
	if (rc != EO_KUBE_OK)
		goto fail;
	t->h = curl_easy_init();
	if (!t->h) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "curl handle");
		goto fail;
	}
	rc = eo__kube_easy_setup(c, t->h, NULL, &hdrs, false, err);
	if (rc != EO_KUBE_OK)
		goto fail;
	curl_easy_setopt(t->h, CURLOPT_URL, server);
	curl_easy_setopt(t->h, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(t->h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(t->h, CURLOPT_ERRORBUFFER, t->curl_err);
	cc = curl_easy_perform(t->h);
	if (cc != CURLE_OK) {
		rc = eo__kube_curl_err(cc, t->curl_err, false, err);
		goto fail;
	}
	if (curl_easy_getinfo(t->h, CURLINFO_ACTIVESOCKET, &t->sock) != CURLE_OK ||
	    t->sock == CURL_SOCKET_BAD) {
		rc = eo_kube_fail(err, EO_KUBE_ETRANSPORT, "port-forward: no connection");
		goto fail;
	}
	rc = handshake(t, hostport, path, token, "kubectl-etcd", deadline, err);
	if (rc != EO_KUBE_OK)
		goto fail;
	if (unix_path) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		if (strlen(unix_path) >= sizeof(sa.sun_path)) {
			rc = eo_kube_fail(err, EO_KUBE_EINVALID, "unix socket path too long");
			goto fail;
		}
		memcpy(sa.sun_path, unix_path, strlen(unix_path) + 1);
		t->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			rc = eo_kube_fail(err, EO_KUBE_EIO, "unix socket %s: %s", unix_path,
					  strerror(errno));
			goto fail;
		}
		t->upath = strdup(unix_path);
		if (!t->upath || listen(t->lfd, 1) != 0) {
			rc = eo_kube_fail(err, EO_KUBE_EIO, "unix socket %s: listen", unix_path);
			goto fail;
		}
	} else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t->fd) != 0) {
		rc = eo_kube_fail(err, EO_KUBE_EIO, "socketpair: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&t->th, NULL, pump, t) != 0) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "port-forward thread");
		goto fail;
	}
	t->started = true;
	eo_kube_error_clear(err);
	*out = t;
	rc = EO_KUBE_OK;
	goto done;
fail:
	eo_kube_tunnel_close(t);
done:
	eo__kube_headers_free(hdrs);
	if (token) {
		OPENSSL_cleanse(token, strlen(token));
		free(token);
	}
	curl_free(host);
	curl_url_cleanup(u);
	free(hostport);
	free(path);
	free(eh);
	free(ep);
	return rc;
}

int eo_kube_tunnel_fd(const eo_kube_tunnel *t)
{
	return t->fd[0];
}

const char *eo_kube_tunnel_error(eo_kube_tunnel *t, char *buf, size_t cap)
{
	pthread_mutex_lock(&t->mu);
	snprintf(buf, cap, "%s", t->errchan);
	pthread_mutex_unlock(&t->mu);
	return buf;
}

void eo_kube_tunnel_close(eo_kube_tunnel *t)
{
	if (!t)
		return;
	if (t->fd[0] >= 0)
		shutdown(t->fd[0], SHUT_WR); /* the pump sends the close frame */
	if (t->started) {
		struct timespec until;
		bool connected;

		pthread_mutex_lock(&t->mu);
		connected = t->fd[1] >= 0;
		if (!connected)
			t->stop = true; /* unix-socket mode, nobody connected: nothing to close */
		pthread_mutex_unlock(&t->mu);

		/* Give the close frame a moment to go out, then stop the pump regardless. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 2;
		if (pthread_timedjoin_np(t->th, NULL, &until) != 0) {
			pthread_mutex_lock(&t->mu);
			t->stop = true;
			pthread_mutex_unlock(&t->mu);
			pthread_join(t->th, NULL);
		}
	}
	if (t->fd[0] >= 0)
		close(t->fd[0]);
	if (t->fd[1] >= 0)
		close(t->fd[1]);
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->upath) {
		unlink(t->upath);
		free(t->upath);
	}
	if (t->h)
		curl_easy_cleanup(t->h);
	pthread_mutex_destroy(&t->mu);
	free(t->in);
	free(t->out);
	free(t);
}
