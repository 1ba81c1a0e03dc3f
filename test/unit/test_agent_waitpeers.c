/* `etcd-operator wait-peers` (src/agent/waitpeers.c): which peers, when to start, the I/O. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "support/tu_main.h"

#include "agent/waitpeers.h"

#define SVC ".demo.default.svc.cluster.local"

/* The peers of an initial cluster: every entry but the member itself, host and port split. */
static void test_targets(void **state)
{
	static const struct {
		const char *cluster, *self;
		int rc;
		size_t n;
		const char *first_name, *first_host, *first_port;
	} cases[] = {
	    /* a joiner of a 3-member cluster: the two others, in order */
	    {"a=http://a" SVC ":2380,b=http://b" SVC ":2380,c=http://c" SVC ":2380", "c", 0, 2, "a",
	     "a" SVC, "2380"},
	    /* itself first: skipped */
	    {"c=https://c" SVC ":2380,a=https://a" SVC ":2380", "c", 0, 1, "a", "a" SVC, "2380"},
	    /* only itself (a seed that lost its data after the cluster bootstrapped) */
	    {"a=http://a" SVC ":2380", "a", 0, 0, NULL, NULL, NULL},
	    /* no port: etcd's peer port; a path is ignored */
	    {"a=http://10.0.0.1/x,b=http://b:2380", "b", 0, 1, "a", "10.0.0.1", "2380"},
	    /* IPv6 in brackets */
	    {"a=https://[fd00::1]:12380,b=http://b:2380", "b", 0, 1, "a", "fd00::1", "12380"},
	    {"a=http://[fd00::1],b=http://b:2380", "b", 0, 1, "a", "fd00::1", "2380"},
	    /* a member with two peer URLs appears twice: both tried */
	    {"a=http://x:1,a=http://y:2,b=http://b:2380", "b", 0, 2, "a", "x", "1"},
	    /* refused: not name=URL, no scheme, bad ports, no host, empty */
	    {"a", "b", -1, 0, NULL, NULL, NULL},
	    {"=http://a:2380", "b", -1, 0, NULL, NULL, NULL},
	    {"a=a:2380", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://a:99999", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://a:12x", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://a:", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://:2380", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://[fd00::1", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://[fd00::1]x", "b", -1, 0, NULL, NULL, NULL},
	    {"a=http://a:2380,", "b", -1, 1, "a", "a", "2380"},
	    {"", "b", -1, 0, NULL, NULL, NULL},
	    {NULL, "b", -1, 0, NULL, NULL, NULL},
	};
	struct eo_wait_peers t;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc =
		    eo_wait_peers_targets(cases[i].cluster, cases[i].self, &t, err, sizeof(err));

		if (rc != cases[i].rc || t.n != cases[i].n)
			fail_msg("case %zu (%s): rc %d n %zu, want rc %d n %zu", i,
				 cases[i].cluster ? cases[i].cluster : "(null)", rc, t.n,
				 cases[i].rc, cases[i].n);
		if (rc != 0)
			assert_true(strlen(err) > 0);
		if (cases[i].first_name == NULL)
			continue;
		assert_string_equal(t.v[0].name, cases[i].first_name);
		assert_string_equal(t.v[0].host, cases[i].first_host);
		assert_string_equal(t.v[0].port, cases[i].first_port);
	}
}

/* At most EO_WAIT_PEERS_MAX peers are kept; a host that does not fit is refused. */
static void test_targets_caps(void **state)
{
	char buf[4096], host[EO_WAIT_PEERS_HOST_MAX + 16];
	struct eo_wait_peers t;
	size_t len = 0;

	(void)state;
	for (int i = 0; i < EO_WAIT_PEERS_MAX + 4; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%sm%d=http://m%d:2380",
					i ? "," : "", i, i);
	assert_int_equal(eo_wait_peers_targets(buf, "self", &t, NULL, 0), 0);
	assert_int_equal(t.n, EO_WAIT_PEERS_MAX);
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	snprintf(buf, sizeof(buf), "a=http://%s:2380", host);
	assert_int_equal(eo_wait_peers_targets(buf, "self", &t, NULL, 0), -1);
}

/* The next step: start at once without peers or on an accept, else wait until the deadline. */
static void test_next(void **state)
{
	static const struct {
		size_t n;
		bool accepted;
		long elapsed, timeout;
		enum eo_wait_peers_step want;
	} cases[] = {
	    {0, false, 0, 30000, EO_WAIT_PEERS_START_NO_PEERS},
	    {0, false, 99999, 30000, EO_WAIT_PEERS_START_NO_PEERS},
	    {2, true, 0, 30000, EO_WAIT_PEERS_START_PEER},
	    {2, true, 40000, 30000, EO_WAIT_PEERS_START_PEER},
	    {2, false, 0, 30000, EO_WAIT_PEERS_RETRY},
	    {2, false, 29999, 30000, EO_WAIT_PEERS_RETRY},
	    {2, false, 30000, 30000, EO_WAIT_PEERS_START_TIMEOUT},
	    {2, false, 0, 0, EO_WAIT_PEERS_START_TIMEOUT},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (eo_wait_peers_next(cases[i].n, cases[i].accepted, cases[i].elapsed,
				       cases[i].timeout) != cases[i].want)
			fail_msg("case %zu", i);
}

static long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A listening socket on 127.0.0.1; its port in port. */
static int listener(char *port, size_t cap)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	snprintf(port, cap, "%d", ntohs(a.sin_port));
	return fd;
}

/*
 * The command: exits 0 at once when a peer listens, 0 after the timeout when none does (a
 * closed port: its listener closed), 2 on a usage error.
 */
static void test_main(void **state)
{
	char port[8], closed[8], cluster[256];
	char *ok_argv[] = {"wait-peers", "--name",    "self", "--initial-cluster",
			   cluster,	 "--timeout", "5",    NULL};
	char *bad_argv[] = {"wait-peers", "--name", "self", "--timeout", "x", NULL};
	int fd = listener(port, sizeof(port)), gone = listener(closed, sizeof(closed));
	long t0;

	(void)state;
	close(gone);
	snprintf(cluster, sizeof(cluster),
		 "self=http://127.0.0.1:%s,dead=http://127.0.0.1:%s,live=http://127.0.0.1:%s",
		 closed, closed, port);
	t0 = mono_ms();
	assert_int_equal(eo_agent_wait_peers_main(7, ok_argv), 0);
	assert_true(mono_ms() - t0 < 2000);
	close(fd);

	snprintf(cluster, sizeof(cluster), "self=http://127.0.0.1:%s,dead=http://127.0.0.1:%s",
		 port, closed);
	ok_argv[6] = "1";
	t0 = mono_ms();
	assert_int_equal(eo_agent_wait_peers_main(7, ok_argv), 0);
	assert_true(mono_ms() - t0 >= 1000);
	assert_true(mono_ms() - t0 < 4000);

	assert_int_equal(eo_agent_wait_peers_main(5, bad_argv), 2);
	ok_argv[6] = "601";
	assert_int_equal(eo_agent_wait_peers_main(7, ok_argv), 2);
}

TU_MAIN(test_targets, test_targets_caps, test_next, test_main)
