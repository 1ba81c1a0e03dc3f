/*
 * kubectl-etcd's mTLS path against a real etcd: plugin/reach.h through kube/portforward.h.
 *
 * A small WebSocket server plays the apiserver's pods/portforward (subprotocol
 * v4.channel.k8s.io: port prefixes, channel bytes) and bridges the data channel to a TLS etcd
 * started here with --client-cert-auth. Through it the plugin's transport runs HTTPS with the
 * client certificate of the test PKI: status, a streamed snapshot verified by the agent's
 * decoder and integrity check, etcd's own refusal, a server certificate from another CA
 * refused, and etcd auth: a token from /v3/auth/authenticate sent as Grpc-Metadata-Token.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snapshot/etcdsnap.h"
#include "snapshot/integrity.h"
#include "core/strbuf.h"
#include "etcd/wire.h"
#include "kube/config.h"
#include "kube/portforward.h"
#include "plugin/reach.h"
#include "support/itest.h"

extern char **environ;

/* ---- the bridge ------------------------------------------------------------------------ */

struct bridge {
	int lfd, port, target;
	pthread_t th;
	int stop;
	int tunnels; /* upgrades served */
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

static int write_full(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A server frame: unmasked, binary, channel byte then data. */
static int send_chan(int fd, uint8_t op, int ch, const uint8_t *p, size_t n)
{
	uint8_t h[4];
	size_t hl = 2, total = n + (ch >= 0 ? 1 : 0);

	h[0] = (uint8_t)(0x80 | op);
	if (total < 126) {
		h[1] = (uint8_t)total;
	} else {
		h[1] = 126;
		h[2] = (uint8_t)(total >> 8);
		h[3] = (uint8_t)total;
		hl = 4;
	}
	if (write_full(fd, h, hl) != 0)
		return -1;
	if (ch >= 0) {
		uint8_t c = (uint8_t)ch;

		if (write_full(fd, &c, 1) != 0)
			return -1;
	}
	return n ? write_full(fd, p, n) : 0;
}

static void *bridge_conn(void *ud)
{
	int fd = (int)(intptr_t)ud, tcp = -1;
	char req[4096] = "", k[64] = "", acc[64], resp[256], *key;
	uint8_t *buf = NULL;
	size_t len = 0;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	static const uint8_t port[2] = {0x4b, 0x09};

	while (!strstr(req, "\r\n\r\n") && len < sizeof(req) - 1) {
		ssize_t r = read(fd, req + len, sizeof(req) - 1 - len);

		if (r <= 0)
			goto out;
		len += (size_t)r;
		req[len] = '\0';
	}
	key = strstr(req, "Sec-WebSocket-Key: ");
	if (!key || !strstr(req, "/portforward?ports=2379 ") || !strstr(req, "v4.channel.k8s.io"))
		goto out;
	sscanf(key + 19, "%63[^\r]", k);
	eo_ws_accept(k, acc);
	snprintf(resp, sizeof(resp),
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: "
		 "Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		 acc);
	if (write_full(fd, (const uint8_t *)resp, strlen(resp)) != 0 ||
	    send_chan(fd, 0x2, 0, port, 2) != 0 || send_chan(fd, 0x2, 1, port, 2) != 0)
		goto out;
	/* The Pod's port 2379 is the test etcd's port. */
	a.sin_port = htons((uint16_t)atoi(getenv("EO_TEST_BRIDGE_TARGET")));
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	if (tcp < 0 || connect(tcp, (struct sockaddr *)&a, sizeof(a)) != 0) {
		static const char msg[] = "error forwarding port 2379: connection refused";

		send_chan(fd, 0x2, 1, (const uint8_t *)msg, sizeof(msg) - 1);
		send_chan(fd, 0x8, -1, NULL, 0);
		goto out;
	}
	/* One buffer per connection: connections run in threads of their own. */
	buf = malloc(70000);
	if (buf == NULL)
		goto out;
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = tcp, .events = POLLIN}};

		if (poll(p, 2, 1000) < 0)
			break;
		if (p[0].revents) {
			uint8_t h[8], m[4];
			uint64_t n;
			size_t i;

			if (read_full(fd, h, 2) != 0)
				break;
			n = h[1] & 0x7f;
			if (n == 126) {
				if (read_full(fd, h + 2, 2) != 0)
					break;
				n = ((uint64_t)h[2] << 8) | h[3];
			} else if (n == 127) {
				break; /* the client sends 32 KiB at most */
			}
			if (!(h[1] & 0x80) || read_full(fd, m, 4) != 0 ||
			    read_full(fd, buf, (size_t)n) != 0)
				break;
			for (i = 0; i < n; i++)
				buf[i] ^= m[i & 3];
			if ((h[0] & 0x0f) == 0x8)
				break;
			if (n > 1 && buf[0] == 0 && write_full(tcp, buf + 1, (size_t)n - 1) != 0)
				break;
		}
		if (p[1].revents) {
			ssize_t r = read(tcp, buf, 32768);

			if (r <= 0) {
				send_chan(fd, 0x8, -1, NULL, 0);
				break;
			}
			if (send_chan(fd, 0x2, 0, buf, (size_t)r) != 0)
				break;
		}
	}
out:
	free(buf);
	if (tcp >= 0)
		close(tcp);
	close(fd);
	return NULL;
}

static void *bridge_accept(void *ud)
{
	struct bridge *b = ud;

	for (;;) {
		int fd = accept(b->lfd, NULL, NULL);
		pthread_t th;

		if (fd < 0)
			break;
		b->tunnels++;
		if (pthread_create(&th, NULL, bridge_conn, (void *)(intptr_t)fd) == 0)
			pthread_detach(th);
		else
			close(fd);
	}
	return NULL;
}

static void bridge_start(struct bridge *b, int target)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	char t[16];

	memset(b, 0, sizeof(*b));
	b->target = target;
	snprintf(t, sizeof(t), "%d", target);
	setenv("EO_TEST_BRIDGE_TARGET", t, 1);
	b->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(b->lfd >= 0);
	assert_int_equal(bind(b->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(b->lfd, 16), 0);
	assert_int_equal(getsockname(b->lfd, (struct sockaddr *)&a, &al), 0);
	b->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(&b->th, NULL, bridge_accept, b), 0);
}

static void bridge_stop(struct bridge *b)
{
	shutdown(b->lfd, SHUT_RDWR);
	close(b->lfd);
	pthread_join(b->th, NULL);
}

/* ---- etcd ------------------------------------------------------------------------------ */

static const char *need_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !v[0])
		fail_msg("%s is not set; run this test through test/integration/run.sh", name);
	return v;
}

static unsigned char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	unsigned char *buf = malloc(65536);

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, 65536, f);
	fclose(f);
	return buf;
}

static int collect(void *ud, const char *p, size_t n)
{
	struct eo_strbuf *b = ud;

	eo_strbuf_add_n(b, p, n);
	return b->failed ? -1 : 0;
}

/* POSTs body to route through r; the answer in *b (reset first). */
static eo_kube_err post(struct eo_plugin_reach *r, const char *route, const char *body,
			struct eo_strbuf *b, struct eo_plugin_answer *ans)
{
	eo_strbuf_free(b);
	*b = (struct eo_strbuf)EO_STRBUF_INIT(1u << 20);
	return eo_plugin_reach_post(r, "m-0", "127.0.0.1", route, body, 10000, 0, collect, b, ans);
}

struct snap {
	struct eo_snapstream ss;
	struct eo_snapcheck check;
};

static int snap_sink(void *ud, const void *p, size_t n, char *err, size_t errcap)
{
	struct snap *s = ud;

	(void)err;
	(void)errcap;
	eo_snapcheck_feed(&s->check, p, n);
	return 0;
}

static int snap_feed(void *ud, const char *p, size_t n)
{
	struct snap *s = ud;

	return eo_snapstream_feed(&s->ss, p, n);
}

static void test_mtls_through_the_tunnel(void **state)
{
	const char *etcd = need_env("EO_ITEST_ETCD"), *work = need_env("EO_ITEST_WORKDIR");
	const char *tls = need_env("EO_ITEST_TLS_DIR"), *flags = getenv("EO_ITEST_ETCD_FLAGS");
	char url[64], peer[64], initial[96], datadir[512], logpath[512], ca[512], crt[512],
	    key[512], kurl[64], sha[EO_SNAP_SHA_HEX_LEN + 1];
	int cport = itest_free_port();
	struct bridge br;
	struct eo_plugin_reach r;
	struct eo_plugin_answer ans;
	struct eo_strbuf b = EO_STRBUF_INIT(1u << 20);
	struct eo_etcd_status st = {0};
	eo_kube_config *cfg = NULL;
	eo_kube_client *kc = NULL;
	pid_t pid = -1;
	eo_kube_err e = EO_KUBE_EUNAVAILABLE;
	struct snap *s = calloc(1, sizeof(*s));
	int i, status;

	(void)state;
	(void)flags;
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", cport);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", itest_free_port());
	snprintf(initial, sizeof(initial), "t=%s", peer);
	snprintf(datadir, sizeof(datadir), "%s/tunnel.etcd", work);
	snprintf(logpath, sizeof(logpath), "%s/tunnel.log", work);
	snprintf(ca, sizeof(ca), "%s/ca.crt", tls);
	snprintf(crt, sizeof(crt), "%s/server.crt", tls);
	snprintf(key, sizeof(key), "%s/server.key", tls);
	{
		const char *argv[] = {etcd,
				      "--name=t",
				      "--data-dir",
				      datadir,
				      "--listen-client-urls",
				      url,
				      "--advertise-client-urls",
				      url,
				      "--listen-peer-urls",
				      peer,
				      "--initial-advertise-peer-urls",
				      peer,
				      "--initial-cluster",
				      initial,
				      "--initial-cluster-state=new",
				      "--cert-file",
				      crt,
				      "--key-file",
				      key,
				      "--trusted-ca-file",
				      ca,
				      "--client-cert-auth",
				      NULL};

		pid = itest_spawn_logged(argv, logpath);
		assert_true(pid > 0);
	}
	bridge_start(&br, cport);
	snprintf(kurl, sizeof(kurl), "http://127.0.0.1:%d", br.port);
	assert_int_equal(eo_kube_config_new(kurl, "t", "ns", &cfg, NULL), EO_KUBE_OK);
	assert_int_equal(eo_kube_client_new(cfg, NULL, &kc, NULL), EO_KUBE_OK);
	memset(&r, 0, sizeof(r));
	r.kc = kc;
	r.ns = "ns";
	r.path = EO_PPATH_TUNNEL;
	r.ca = slurp(tls, "ca.crt", &r.ca_len);
	r.cert = slurp(tls, "client.crt", &r.cert_len);
	r.key = slurp(tls, "client.key", &r.key_len);

	/* Status through the tunnel, once etcd is up. */
	for (i = 0; i < 200; i++) {
		e = post(&r, "/v3/maintenance/status", "{}", &b, &ans);
		if (e == EO_KUBE_OK)
			break;
		itest_sleep_ms(100);
	}
	if (e != EO_KUBE_OK)
		fail_msg("status through the tunnel: %s (%s; far side: %s)", eo_kube_strerror(e),
			 ans.ke.message, ans.farside);
	assert_int_equal(eo_etcd_wire_parse_status(b.p, b.len, &st), EO_ETCD_OK);
	assert_string_equal(st.version, need_env("EO_ITEST_VERSION"));
	eo_etcd_status_clear(&st);
	assert_true(br.tunnels >= 1);

	/* etcd's refusal comes back as its HTTP answer. */
	assert_int_equal(post(&r, "/v3/kv/compaction", "{\"revision\":\"99999\"}", &b, &ans),
			 EO_KUBE_EHTTP);
	assert_int_equal(ans.res.http_status >= 400, 1);
	assert_non_null(strstr(ans.res.errbody, "revision"));

	/* A snapshot streams through whole and verifies. */
	for (i = 0; i < 50; i++)
		assert_int_equal(
		    post(&r, "/v3/kv/put", "{\"key\":\"a2V5\",\"value\":\"dmFsdWU=\"}", &b, &ans),
		    EO_KUBE_OK);
	assert_non_null(s);
	assert_int_equal(eo_snapstream_init(&s->ss, snap_sink, s), 0);
	assert_int_equal(eo_snapcheck_init(&s->check), 0);
	e = eo_plugin_reach_post(&r, "m-0", "127.0.0.1", "/v3/maintenance/snapshot", "{}", -1, 30,
				 snap_feed, s, &ans);
	assert_int_equal(e, EO_KUBE_OK);
	assert_int_equal(eo_snapstream_finish(&s->ss), 0);
	assert_int_equal(eo_snapcheck_finish(&s->check, sha), EO_SNAPCHECK_OK);
	assert_true(s->check.total > 16384);
	eo_snapstream_free(&s->ss);
	eo_snapcheck_free(&s->check);

	/* Another CA: etcd's certificate is not trusted, nothing is sent. */
	{
		unsigned char *good = r.ca;
		size_t good_len = r.ca_len;

		r.ca = slurp(tls, "other-ca.crt", &r.ca_len);
		e = post(&r, "/v3/maintenance/status", "{}", &b, &ans);
		assert_int_equal(e, EO_KUBE_ETRANSPORT);
		assert_true(ans.transport[0] != '\0');
		free(r.ca);
		r.ca = good;
		r.ca_len = good_len;
	}

	/* Auth: root with a password, auth on; without a token etcd refuses, with one it serves. */
	assert_int_equal(post(&r, "/v3/auth/role/add", "{\"name\":\"root\"}", &b, &ans),
			 EO_KUBE_OK);
	assert_int_equal(
	    post(&r, "/v3/auth/user/add",
		 "{\"name\":\"root\",\"password\":\"pw-1\",\"options\":{\"no_password\":false}}",
		 &b, &ans),
	    EO_KUBE_OK);
	assert_int_equal(
	    post(&r, "/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}", &b, &ans),
	    EO_KUBE_OK);
	assert_int_equal(post(&r, "/v3/auth/enable", "{}", &b, &ans), EO_KUBE_OK);
	assert_int_equal(post(&r, "/v3/kv/range", "{\"key\":\"a2V5\"}", &b, &ans), EO_KUBE_EHTTP);
	r.password = strdup("wrong");
	assert_int_equal(eo_plugin_reach_login(&r, "m-0", "127.0.0.1", 10000, &ans), EO_KUBE_EHTTP);
	assert_non_null(strstr(ans.res.errbody, "authentication failed"));
	assert_null(r.token);
	free(r.password);
	r.password = strdup("pw-1");
	assert_int_equal(eo_plugin_reach_login(&r, "m-0", "127.0.0.1", 10000, &ans), EO_KUBE_OK);
	assert_non_null(r.token);
	assert_int_equal(post(&r, "/v3/kv/range", "{\"key\":\"a2V5\"}", &b, &ans), EO_KUBE_OK);
	assert_non_null(strstr(b.p, "\"kvs\""));

	eo_strbuf_free(&b);
	eo_plugin_reach_close(&r);
	eo_kube_client_free(kc);
	bridge_stop(&br);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mtls_through_the_tunnel),
	};

	signal(SIGPIPE, SIG_IGN); /* as kubectl-etcd does: a peer gone is an error, not a death */
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
