/* `etcd-operator wait-peers` (waitpeers.h). */
#include "agent/waitpeers.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/internal.h"
#include "core/util.h"

#define INITIAL_CLUSTER_MAX 8192
#define CONNECT_MAX_MS	    1000 /* one connection attempt */
#define LOG_EVERY_MS	    5000 /* how often a waiting init container says so */

static void errf(char *err, size_t cap, const char *what, size_t pos)
{
	if (err != NULL && cap > 0)
		snprintf(err, cap, "--initial-cluster entry %zu: %s", pos + 1, what);
}

static int copy_span(char *dst, size_t cap, const char *s, size_t len)
{
	if (len == 0 || len >= cap)
		return -1;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 0;
}

/* scheme://host[:port][/path] into p->host and p->port. */
static int parse_url(const char *u, size_t len, struct eo_wait_peer *p, const char **why)
{
	const char *end = u + len, *sep = NULL, *h = NULL, *hend = NULL, *port = NULL;
	size_t plen = 0;

	if (len > 7 && strncmp(u, "http://", 7) == 0)
		h = u + 7;
	else if (len > 8 && strncmp(u, "https://", 8) == 0)
		h = u + 8;
	else {
		*why = "peer URL is not http:// or https://";
		return -1;
	}
	sep = memchr(h, '/', (size_t)(end - h));
	if (sep != NULL)
		end = sep;
	if (*h == '[') { /* [IPv6]:port */
		hend = memchr(h, ']', (size_t)(end - h));
		if (hend == NULL) {
			*why = "peer URL has an unclosed '['";
			return -1;
		}
		h++;
		port = hend + 1 < end && hend[1] == ':' ? hend + 2 : NULL;
		if (port == NULL && hend + 1 != end) {
			*why = "peer URL has text after ']'";
			return -1;
		}
	} else {
		hend = memchr(h, ':', (size_t)(end - h));
		if (hend == NULL)
			hend = end;
		else
			port = hend + 1;
	}
	if (copy_span(p->host, sizeof(p->host), h, (size_t)(hend - h)) != 0) {
		*why = "peer URL has no host, or one too long";
		return -1;
	}
	if (port == NULL) {
		snprintf(p->port, sizeof(p->port), "2380");
		return 0;
	}
	plen = (size_t)(end - port);
	if (plen == 0 || plen > 5 || strspn(port, "0123456789") < plen ||
	    copy_span(p->port, sizeof(p->port), port, plen) != 0 || atoi(p->port) < 1 ||
	    atoi(p->port) > 65535) {
		*why = "peer URL has a bad port";
		return -1;
	}
	return 0;
}

int eo_wait_peers_targets(const char *initial_cluster, const char *self, struct eo_wait_peers *out,
			  char *err, size_t errcap)
{
	const char *s = initial_cluster;
	size_t pos = 0;

	if (err != NULL && errcap > 0)
		err[0] = '\0';
	if (out == NULL)
		return -1;
	out->n = 0;
	if (!eo_present(s) || strlen(s) > INITIAL_CLUSTER_MAX) {
		errf(err, errcap, "empty or too long", 0);
		return -1;
	}
	for (;; pos++) {
		const char *comma = strchr(s, ','), *end = comma ? comma : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(end - s)), *why = NULL;
		struct eo_wait_peer p;

		if (eq == NULL || copy_span(p.name, sizeof(p.name), s, (size_t)(eq - s)) != 0) {
			errf(err, errcap, "not name=URL", pos);
			return -1;
		}
		if (parse_url(eq + 1, (size_t)(end - eq - 1), &p, &why) != 0) {
			errf(err, errcap, why, pos);
			return -1;
		}
		if ((self == NULL || strcmp(p.name, self) != 0) && out->n < EO_WAIT_PEERS_MAX)
			out->v[out->n++] = p;
		if (comma == NULL)
			return 0;
		s = comma + 1;
	}
}

enum eo_wait_peers_step eo_wait_peers_next(size_t n_peers, bool accepted, long elapsed_ms,
					   long timeout_ms)
{
	if (n_peers == 0)
		return EO_WAIT_PEERS_START_NO_PEERS;
	if (accepted)
		return EO_WAIT_PEERS_START_PEER;
	if (elapsed_ms >= timeout_ms)
		return EO_WAIT_PEERS_START_TIMEOUT;
	return EO_WAIT_PEERS_RETRY;
}

/* --- the I/O: one round of connection attempts -------------------------------------- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One non-blocking connect, at most ms. Returns 0 when accepted, else an errno value. */
static int try_addr(const struct addrinfo *a, int ms)
{
	struct pollfd pfd;
	int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
	int rc = 0, soerr = 0;
	socklen_t len = sizeof(soerr);

	if (fd < 0)
		return errno;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
		rc = errno;
		close(fd);
		return rc;
	}
	if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
		close(fd);
		return 0;
	}
	if (errno != EINPROGRESS) {
		rc = errno;
		close(fd);
		return rc;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	rc = poll(&pfd, 1, ms);
	if (rc == 0)
		rc = ETIMEDOUT;
	else if (rc < 0)
		rc = errno;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		rc = errno;
	else
		rc = soerr;
	close(fd);
	return rc;
}

/* Whether the peer accepts; why receives the reason it did not. */
static bool try_peer(const struct eo_wait_peer *p, int ms, char *why, size_t cap)
{
	struct addrinfo hints, *res = NULL;
	int gai, rc = ENOENT;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	gai = getaddrinfo(p->host, p->port, &hints, &res);
	if (gai != 0) {
		snprintf(why, cap, "%s", gai_strerror(gai));
		return false;
	}
	for (const struct addrinfo *a = res; a != NULL; a = a->ai_next)
		if ((rc = try_addr(a, ms)) == 0)
			break;
	freeaddrinfo(res);
	if (rc != 0)
		snprintf(why, cap, "%s", strerror(rc));
	return rc == 0;
}

static void usleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One round: every peer once, until one accepts. Returns whether one did (its index in *at). */
static bool round_of_tries(const struct eo_wait_peers *t, long deadline, char why[][128],
			   size_t *at)
{
	for (size_t i = 0; i < t->n; i++) {
		long left = deadline - now_ms();
		int ms = left < 1 ? 1 : left > CONNECT_MAX_MS ? CONNECT_MAX_MS : (int)left;

		if (try_peer(&t->v[i], ms, why[i], sizeof(why[i]))) {
			*at = i;
			return true;
		}
	}
	return false;
}

static int wait_loop(const char *name, const struct eo_wait_peers *t, long timeout_ms)
{
	long start = now_ms(), last_log = start, elapsed = 0;
	char why[EO_WAIT_PEERS_MAX][128];
	size_t at = 0;
	bool accepted = false;
	enum eo_wait_peers_step step = eo_wait_peers_next(t->n, false, 0, timeout_ms);

	memset(why, 0, sizeof(why));
	while (step == EO_WAIT_PEERS_RETRY) {
		accepted = round_of_tries(t, start + timeout_ms, why, &at);
		elapsed = now_ms() - start;
		step = eo_wait_peers_next(t->n, accepted, elapsed, timeout_ms);
		if (step != EO_WAIT_PEERS_RETRY)
			break;
		if (now_ms() - last_log >= LOG_EVERY_MS) {
			last_log = now_ms();
			printf("wait-peers: member %s: still waiting for a peer after %ld ms; "
			       "%s (%s:%s): %s\n",
			       name, elapsed, t->v[0].name, t->v[0].host, t->v[0].port, why[0]);
			fflush(stdout);
		}
		usleep_ms(EO_WAIT_PEERS_INTERVAL_MS);
	}
	switch (step) {
	case EO_WAIT_PEERS_START_PEER:
		printf("wait-peers: member %s: peer %s (%s:%s) accepts after %ld ms; starting "
		       "etcd\n",
		       name, t->v[at].name, t->v[at].host, t->v[at].port, elapsed);
		break;
	case EO_WAIT_PEERS_START_NO_PEERS:
		printf("wait-peers: member %s: no other member in the initial cluster; starting "
		       "etcd\n",
		       name);
		break;
	case EO_WAIT_PEERS_START_TIMEOUT:
	case EO_WAIT_PEERS_RETRY:
		printf("wait-peers: member %s: no peer accepted in %ld ms; starting etcd anyway "
		       "(it fails to join if the peers are gone)\n",
		       name, elapsed);
		for (size_t i = 0; i < t->n; i++)
			printf("wait-peers:   %s (%s:%s): %s\n", t->v[i].name, t->v[i].host,
			       t->v[i].port, why[i]);
		break;
	}
	fflush(stdout);
	return 0;
}

int eo_agent_wait_peers_main(int argc, char **argv)
{
	static const char usage[] =
	    "usage: etcd-operator wait-peers --name MEMBER --initial-cluster C [--timeout "
	    "SECONDS]\n"
	    "Waits until one peer of C other than MEMBER accepts a TCP connection on its peer\n"
	    "URL, or SECONDS (default 30, at most 600) have passed. Always exits 0 then: etcd\n"
	    "starts either way.\n";
	const char *name = NULL, *cluster = NULL, *timeout = NULL;
	struct eo_wait_peers t;
	char err[256];
	char *end = NULL;
	long secs = EO_WAIT_PEERS_DEFAULT_TIMEOUT;
	const struct eo__agent_flag flags[] = {
	    {"--name", &name}, {"--initial-cluster", &cluster}, {"--timeout", &timeout}};
	int rc;

	rc = eo__agent_flags(argc, argv, flags, sizeof(flags) / sizeof(flags[0]), true, usage);
	if (rc >= 0)
		return rc;
	if (timeout != NULL) {
		errno = 0;
		secs = strtol(timeout, &end, 10);
		if (errno != 0 || end == timeout || *end != '\0' || secs < 0 ||
		    secs > EO_WAIT_PEERS_MAX_TIMEOUT) {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!eo_present(name) || strlen(name) > 253 || cluster == NULL) {
		fputs(usage, stderr);
		return 2;
	}
	if (eo_wait_peers_targets(cluster, name, &t, err, sizeof(err)) != 0) {
		printf(
		    "wait-peers: member %s: cannot read the initial cluster (%s); starting etcd\n",
		    name, err);
		return 0;
	}
	if (t.n > 0)
		printf(
		    "wait-peers: member %s: waiting up to %ld s for one of %zu peer(s) to accept "
		    "on its peer port\n",
		    name, secs, t.n);
	fflush(stdout);
	return wait_loop(name, &t, secs * 1000);
}
