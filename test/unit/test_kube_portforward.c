/* The WebSocket framing of kube/portforward.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kube/config.h"
#include "kube/portforward.h"

static void test_accept_rfc6455(void **state)
{
	char out[64];

	(void)state;
	/* The example of RFC 6455 section 1.3. */
	eo_ws_accept("dGhlIHNhbXBsZSBub25jZQ==", out);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

static void test_frame_roundtrip(void **state)
{
	static const size_t sizes[] = {0, 1, 124, 125, 126, 65534, 65535, 65536, 70000};
	static const uint8_t mask[4] = {0x11, 0x22, 0x33, 0x44}, ch = 0;
	size_t i, j, cap = 70000 + 32;
	uint8_t *p = malloc(cap), *f = malloc(cap);

	(void)state;
	assert_non_null(p);
	assert_non_null(f);
	for (i = 0; i < cap; i++)
		p[i] = (uint8_t)(i * 7);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct eo_ws_parsed pf;
		size_t n = sizes[i], len = eo_ws_frame(EO_WS_OP_BINARY, mask, &ch, 1, p, n, f, cap);
		size_t want_h = n + 1 < 126 ? 6 : n + 1 <= 0xffff ? 8 : 14;

		assert_int_equal(len, want_h + n + 1);
		assert_int_equal(f[0], 0x82);
		/* Every prefix of the frame is "need more". */
		assert_int_equal(eo_ws_parse(f, len - 1, 1u << 20, &pf), 0);
		assert_int_equal(eo_ws_parse(f, 1, 1u << 20, &pf), 0);
		assert_int_equal(eo_ws_parse(f, len, 1u << 20, &pf), 1);
		assert_int_equal(pf.opcode, EO_WS_OP_BINARY);
		assert_true(pf.fin && pf.masked);
		assert_int_equal(pf.header_len, want_h);
		assert_int_equal(pf.len, n + 1);
		for (j = 0; j < n + 1; j++) {
			uint8_t b = f[pf.header_len + j] ^ pf.mask[j & 3];

			if (b != (j == 0 ? ch : p[j - 1]))
				fail_msg("size %zu: byte %zu is %u", n, j, b);
		}
		/* Over the cap: refused, not waited for. */
		if (n > 10)
			assert_int_equal(eo_ws_parse(f, len, 10, &pf), -1);
	}
	/* Too small an output buffer. */
	assert_int_equal(eo_ws_frame(EO_WS_OP_BINARY, mask, NULL, 0, p, 100, f, 50), 0);
	free(p);
	free(f);
}

static void test_parse_server_frames(void **state)
{
	static const struct {
		const char *hex_name;
		uint8_t bytes[16];
		size_t n;
		int rc;
		uint8_t op;
		uint64_t len;
	} cases[] = {
	    {"unmasked binary 3", {0x82, 0x03, 0x00, 'h', 'i'}, 5, 1, EO_WS_OP_BINARY, 3},
	    {"close with status", {0x88, 0x02, 0x03, 0xe8}, 4, 1, EO_WS_OP_CLOSE, 2},
	    {"ping, no payload", {0x89, 0x00}, 2, 1, EO_WS_OP_PING, 0},
	    {"16-bit length, header cut", {0x82, 0x7e, 0x01}, 3, 0, 0, 0},
	    {"reserved bit", {0xc2, 0x00}, 2, -1, 0, 0},
	    {"control frame over 125", {0x89, 0x7e, 0x00, 0x7e}, 4, -1, 0, 0},
	    {"fragmented control frame", {0x09, 0x00}, 2, -1, 0, 0},
	    {"one byte", {0x82}, 1, 0, 0, 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct eo_ws_parsed f;
		int rc = eo_ws_parse(cases[i].bytes, cases[i].n, 1u << 20, &f);

		if (rc != cases[i].rc)
			fail_msg("%s: rc %d", cases[i].hex_name, rc);
		if (rc == 1 && (f.opcode != cases[i].op || f.len != cases[i].len || f.masked))
			fail_msg("%s: op %u len %llu", cases[i].hex_name, f.opcode,
				 (unsigned long long)f.len);
	}
}

/* ---- a tunnel against a small WebSocket server playing the apiserver --------------------- */

enum mode { ECHO, REFUSE, ERRCHAN, RESET };

struct srv {
	int lfd, port;
	enum mode mode;
	pthread_t th;
	char request[4096];
	int got_close; /* the client's close frame arrived */
};

static int read_full(int fd, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void send_frame(int fd, uint8_t op, const uint8_t *p, size_t n)
{
	uint8_t h[4] = {(uint8_t)(0x80 | op), 0, 0, 0};
	size_t hl = 2;

	if (n < 126) {
		h[1] = (uint8_t)n;
	} else {
		h[1] = 126;
		h[2] = (uint8_t)(n >> 8);
		h[3] = (uint8_t)n;
		hl = 4;
	}
	assert_int_equal(write(fd, h, hl), (ssize_t)hl);
	if (n)
		assert_int_equal(write(fd, p, n), (ssize_t)n);
}

static void *serve(void *ud)
{
	struct srv *s = ud;
	int fd = accept(s->lfd, NULL, NULL);
	size_t len = 0;
	char *key, resp[512], acc[64], k[64] = "";

	if (fd < 0)
		return NULL;
	while (!strstr(s->request, "\r\n\r\n") && len < sizeof(s->request) - 1) {
		ssize_t r = read(fd, s->request + len, sizeof(s->request) - 1 - len);

		if (r <= 0)
			break;
		len += (size_t)r;
		s->request[len] = '\0';
	}
	if (s->mode == REFUSE) {
		static const char body[] =
		    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
		    "\"message\":\"pods \\\"p\\\" is forbidden: cannot get resource "
		    "\\\"pods/portforward\\\"\",\"reason\":\"Forbidden\",\"code\":403}";

		snprintf(resp, sizeof(resp),
			 "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n\r\n%s",
			 strlen(body), body);
		assert_true(write(fd, resp, strlen(resp)) > 0);
		close(fd);
		return NULL;
	}
	key = strstr(s->request, "Sec-WebSocket-Key: ");
	if (key)
		sscanf(key + 19, "%63[^\r]", k);
	eo_ws_accept(k, acc);
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: v4.channel.k8s.io\r\n\r\n",
		 acc);
	assert_true(write(fd, resp, strlen(resp)) > 0);
	{
		/* Each channel's first message is the port, little-endian (2379 = 0x094b). */
		static const uint8_t d0[] = {0, 0x4b, 0x09}, e0[] = {1, 0x4b, 0x09};

		send_frame(fd, EO_WS_OP_BINARY, d0, 3);
		send_frame(fd, EO_WS_OP_BINARY, e0, 3);
	}
	if (s->mode == RESET) {
		/* Gone without a close frame: an RST, which curl reports as a receive error. */
		struct linger l = {.l_onoff = 1, .l_linger = 0};

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		close(fd);
		return NULL;
	}
	if (s->mode == ERRCHAN) {
		static const char msg[] =
		    "\001error forwarding port 2379 to pod p: connection refused";

		send_frame(fd, EO_WS_OP_BINARY, (const uint8_t *)msg, sizeof(msg) - 1);
		send_frame(fd, EO_WS_OP_CLOSE, NULL, 0);
		close(fd);
		return NULL;
	}
	for (;;) { /* ECHO: data back on channel 0, the first byte in a frame of its own */
		uint8_t h[14], m[4], buf[70000];
		uint64_t n;
		size_t i;

		if (read_full(fd, h, 2) != 0)
			break;
		n = h[1] & 0x7f;
		if (n == 126) {
			if (read_full(fd, h + 2, 2) != 0)
				break;
			n = ((uint64_t)h[2] << 8) | h[3];
		}
		if (!(h[1] & 0x80) || n > sizeof(buf) || read_full(fd, m, 4) != 0 ||
		    read_full(fd, buf, (size_t)n) != 0)
			break;
		for (i = 0; i < n; i++)
			buf[i] ^= m[i & 3];
		if ((h[0] & 0x0f) == EO_WS_OP_CLOSE) {
			uint8_t ch[2] = {(uint8_t)(0x80 | EO_WS_OP_CLOSE), 0};

			s->got_close = 1;
			/* The client may have closed its end after its close frame (EPIPE): best
			 * effort. */
			ssize_t w = write(fd, ch, sizeof(ch));

			(void)w;
			break;
		}
		if (n >= 2 && buf[0] == 0) {
			uint8_t first[2] = {0, buf[1]};

			send_frame(fd, EO_WS_OP_BINARY, first, 2);
			buf[1] = 0; /* channel byte of the rest */
			send_frame(fd, EO_WS_OP_BINARY, buf + 1, (size_t)n - 1);
		}
	}
	close(fd);
	return NULL;
}

static eo_kube_client *start(struct srv *s, enum mode mode)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	eo_kube_config *cfg = NULL;
	eo_kube_client *kc = NULL;
	char url[64];

	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->lfd >= 0);
	assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->lfd, 1), 0);
	assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&s->th, NULL, serve, s), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	assert_int_equal(eo_kube_config_new(url, "tok3n", "ns", &cfg, NULL), EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &kc, NULL), EO_KUBE_OK);
	return kc;
}

static void stop(struct srv *s, eo_kube_client *kc)
{
	pthread_join(s->th, NULL);
	close(s->lfd);
	eo_kube_client_free(kc);
}

static void test_tunnel_echo(void **state)
{
	struct srv s;
	eo_kube_client *kc = start(&s, ECHO);
	eo_kube_tunnel *t = NULL;
	struct eo_kube_error ke = {0};
	static uint8_t big[40000], back[40000];
	char ebuf[64];
	size_t got = 0, i;

	(void)state;
	assert_int_equal(eo_kube_portforward(kc, "ns", "p", 2379, 5000, NULL, &t, &ke), EO_KUBE_OK);
	assert_non_null(
	    strstr(s.request, "GET /api/v1/namespaces/ns/pods/p/portforward?ports=2379 "));
	assert_non_null(strstr(s.request, "Authorization: Bearer tok3n\r\n"));
	assert_non_null(strstr(s.request, "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n"));
	/* More than one read of the pump, and more than a 16-bit frame length can hold? No:
	 * 40000 bytes go as two frames of at most 32 KiB each, echoed back in pieces. */
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 13 + 1);
	assert_int_equal(write(eo_kube_tunnel_fd(t), big, sizeof(big)), (ssize_t)sizeof(big));
	while (got < sizeof(back)) {
		ssize_t r = read(eo_kube_tunnel_fd(t), back + got, sizeof(back) - got);

		assert_true(r > 0);
		got += (size_t)r;
	}
	/* The port prefix of the data channel is not part of the stream. */
	assert_memory_equal(back, big, sizeof(big));
	assert_string_equal(eo_kube_tunnel_error(t, ebuf, sizeof(ebuf)), "");
	eo_kube_tunnel_close(t);
	stop(&s, kc);
	assert_true(s.got_close);
}

static void test_tunnel_unix_socket(void **state)
{
	struct srv s;
	eo_kube_client *kc = start(&s, ECHO);
	eo_kube_tunnel *t = NULL;
	struct eo_kube_error ke = {0};
	char dir[] = "/tmp/pf-test-XXXXXX", path[64], back[6] = "";
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s", dir);
	assert_int_equal(eo_kube_portforward(kc, "ns", "p", 2379, 5000, path, &t, &ke), EO_KUBE_OK);
	assert_int_equal(eo_kube_tunnel_fd(t), -1);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, "hello", 5), 5);
	assert_int_equal(read_full(fd, (uint8_t *)back, 5), 0);
	assert_string_equal(back, "hello");
	close(fd); /* the caller's EOF ends the tunnel */
	eo_kube_tunnel_close(t);
	stop(&s, kc);
	assert_true(s.got_close);
	assert_int_equal(access(path, F_OK), -1); /* the socket file is gone */
	assert_int_equal(rmdir(dir), 0);
}

static void test_tunnel_refused_and_error_channel(void **state)
{
	struct srv s;
	eo_kube_client *kc = start(&s, REFUSE);
	eo_kube_tunnel *t = NULL;
	struct eo_kube_error ke = {0};
	char ebuf[128], c;

	(void)state;
	assert_int_equal(eo_kube_portforward(kc, "ns", "p", 2379, 5000, NULL, &t, &ke),
			 EO_KUBE_EFORBIDDEN);
	assert_null(t);
	assert_int_equal(ke.http_status, 403);
	assert_non_null(strstr(ke.message, "pods/portforward"));
	stop(&s, kc);

	kc = start(&s, ERRCHAN);
	assert_int_equal(eo_kube_portforward(kc, "ns", "p", 2379, 5000, NULL, &t, &ke), EO_KUBE_OK);
	/* The far side could not connect: EOF, and its words on the error channel. */
	assert_int_equal(read(eo_kube_tunnel_fd(t), &c, 1), 0);
	assert_string_equal(eo_kube_tunnel_error(t, ebuf, sizeof(ebuf)),
			    "error forwarding port 2379 to pod p: connection refused");
	eo_kube_tunnel_close(t);
	stop(&s, kc);
}

/* A deep frame over the stack where eo_kube_portforward's frame was. */
static int __attribute__((noinline)) deep(int n)
{
	volatile char pad[4096];

	memset((char *)pad, n, sizeof(pad));
	return n > 0 ? deep(n - 1) + pad[17] : pad[0];
}

/*
 * The connection reset after the open: the pump's receive fails and curl writes its error
 * text. That buffer must belong to the tunnel: one on the opener's stack was written after the
 * opener returned, over whatever frame held that stack then (seen as "stack smashing detected"
 * in the plugin's integration test; under ASan with detect_stack_use_after_return this test
 * reports the write).
 */
static void test_tunnel_reset_after_open(void **state)
{
	struct srv s;
	eo_kube_client *kc = start(&s, RESET);
	eo_kube_tunnel *t = NULL;
	struct eo_kube_error ke = {0};
	char c;
	int depth = deep(8);

	(void)state;
	assert_int_equal(eo_kube_portforward(kc, "ns", "p", 2379, 5000, NULL, &t, &ke), EO_KUBE_OK);
	pthread_join(s.th, NULL); /* the server reset the connection */
	depth += deep(8);	  /* the caller goes on using its stack while the pump fails */
	assert_int_equal(read(eo_kube_tunnel_fd(t), &c, 1), 0);
	depth += deep(8);
	eo_kube_tunnel_close(t);
	close(s.lfd);
	eo_kube_client_free(kc);
	assert_true(depth >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_accept_rfc6455),
	    cmocka_unit_test(test_frame_roundtrip),
	    cmocka_unit_test(test_parse_server_frames),
	    cmocka_unit_test(test_tunnel_echo),
	    cmocka_unit_test(test_tunnel_unix_socket),
	    cmocka_unit_test(test_tunnel_refused_and_error_channel),
	    cmocka_unit_test(test_tunnel_reset_after_open),
	};

	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	return cmocka_run_group_tests(tests, NULL, NULL);
}
