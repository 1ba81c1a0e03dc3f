/*
 * obs/http.h - the metrics and health-probe HTTP servers (libmicrohttpd).
 *
 *   metrics address:  GET /metrics   Prometheus text 0.0.4 from a struct eo_metrics
 *   health address:   GET /healthz   200 "ok" while the process serves requests
 *                     GET /readyz    200 "ok" when the ready callback says so, else
 *                                    503 "not ready: <reason>"
 *
 * Anything else is 404; methods other than GET and HEAD are 405. If both addresses are the same
 * (and name a fixed port) one listener serves all three paths.
 *
 * Bind addresses use the Go/controller-runtime syntax: "host:port", ":port" (every interface,
 * IPv6 dual-stack when available, else IPv4), "[v6addr]:port"; port 0 asks the kernel for a free
 * port (read it back with eo_http_*_port()); "0" or "" disables that listener.
 *
 * Each listener runs one internal libmicrohttpd thread; callbacks (ready, metric collectors) run
 * on it and must be thread-safe.
 */
#ifndef EO_OBS_HTTP_H
#define EO_OBS_HTTP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "obs/metrics.h"

#define EO_BIND_HOST_MAX 256
/*
 * Connections each listener holds at once, in all and per client address: one address
 * holding slow connections cannot take the kubelet's probes' or Prometheus' places.
 */
#define EO_HTTP_CONNECTIONS_MAX	       32
#define EO_HTTP_CONNECTIONS_PER_IP_MAX 8

struct eo_bind_addr {
	bool disabled; /* "0" or "" */
	bool any;      /* empty host: every interface */
	char host[EO_BIND_HOST_MAX];
	uint16_t port; /* 0 = kernel picks */
};

/*
 * Parses a bind address (see above) without resolving names. Returns 0, or -1 with a message
 * in err (may be NULL) for malformed input: missing ':', a non-numeric or out-of-range port,
 * unbalanced brackets, an over-long host.
 */
int eo_bind_addr_parse(const char *s, struct eo_bind_addr *out, char *err, size_t errcap);

/* Readiness: true when ready; otherwise it may copy a short reason into reason[cap]. */
typedef bool (*eo_http_ready_fn)(void *ud, char *reason, size_t cap);

struct eo_http_config {
	const char *metrics_addr;   /* borrowed; NULL, "" or "0" disables */
	const char *health_addr;    /* borrowed; NULL, "" or "0" disables */
	struct eo_metrics *metrics; /* borrowed, must outlive the server */
	eo_http_ready_fn ready;	    /* NULL: /readyz always answers 503 */
	void *ready_ud;		    /* borrowed */
};

struct eo_http; /* opaque */

/*
 * Binds and starts the configured listeners. On success returns 0 and stores the server in
 * *out (free it with eo_http_stop()). On failure returns -1, writes a message such as
 * "metrics: bind 0.0.0.0:8080: Address already in use" into err, and leaves nothing running.
 */
int eo_http_start(const struct eo_http_config *cfg, struct eo_http **out, char *err, size_t errcap);
/* The bound port of each listener, or -1 if that listener is disabled. */
int eo_http_metrics_port(const struct eo_http *srv);
int eo_http_health_port(const struct eo_http *srv);
/* Stops the listeners (waits for their threads, closes sockets) and frees srv. NULL is a no-op. */
void eo_http_stop(struct eo_http *srv);

#endif /* EO_OBS_HTTP_H */
