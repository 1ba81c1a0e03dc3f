/*
 * kube/portforward.h - a TCP connection to a Pod's port through the apiserver (pods/portforward).
 *
 * What `kubectl port-forward` does, for one connection and without a listening port: a
 * WebSocket upgrade of GET /api/v1/namespaces/<ns>/pods/<pod>/portforward?ports=<port> with the
 * client's credentials (subprotocol v4.channel.k8s.io, which the kubelet's streaming server,
 * and the container runtimes built on it, speak: every binary message starts with its channel,
 * 0 = data, 1 = error; the first message of each channel carries the port, little-endian). The
 * caller gets one end of a local socket pair that behaves like the connection to the Pod's
 * port: what it writes reaches the port, what the port sends can be read, EOF either way ends
 * the tunnel. A thread moves the bytes; nothing listens on the network.
 *
 * The process should ignore SIGPIPE: OpenSSL writes to the apiserver connection with write(2),
 * and an apiserver that went away must be an error, not a signal.
 *
 * The workstation needs a route to the apiserver only. RBAC: pods/portforward, verb "get"
 * (the WebSocket GET) and "create" (the apiserver checks create on WebSocket upgrades since
 * Kubernetes 1.35; older apiservers map the GET to "get" only).
 */
#ifndef EO_KUBE_PORTFORWARD_H
#define EO_KUBE_PORTFORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"

typedef struct eo_kube_tunnel eo_kube_tunnel;

/*
 * Opens the tunnel to ns/pod:port; timeout_ms bounds the connection and the upgrade (0: the
 * client's connect timeout). A refused upgrade is the apiserver's Status in err (403: RBAC,
 * 404: no such Pod, ...).
 *
 * The local end is one end of a socket pair (eo_kube_tunnel_fd) when unix_path is NULL;
 * otherwise a Unix socket listening at unix_path (put it in a directory only the caller can
 * enter), whose first connection, within 30 s, is the tunnel's local end: that is for
 * libcurl's CURLOPT_UNIX_SOCKET_PATH (libcurl 7.88 connects even a socket handed to it as
 * already connected, so it cannot be given the pair's end). The socket file is removed on
 * close.
 */
eo_kube_err eo_kube_portforward(eo_kube_client *c, const char *ns, const char *pod, int port,
				long timeout_ms, const char *unix_path, eo_kube_tunnel **out,
				struct eo_kube_error *err);

/* The local end without unix_path: a connected stream socket (owned by the tunnel; do not
 * close it); -1 in unix-socket mode. */
int eo_kube_tunnel_fd(const eo_kube_tunnel *t);

/*
 * What the far side said on the error channel (the runtime could not connect to the port,
 * ...), "" when nothing. Stable once the local end saw EOF.
 */
const char *eo_kube_tunnel_error(eo_kube_tunnel *t, char *buf, size_t cap);

/* Ends the tunnel (closing the WebSocket) and frees it. NULL is fine. */
void eo_kube_tunnel_close(eo_kube_tunnel *t);

/* ---- the WebSocket framing, exposed for tests ------------------------------------------- */

#define EO_WS_OP_CONT	0x0
#define EO_WS_OP_TEXT	0x1
#define EO_WS_OP_BINARY 0x2
#define EO_WS_OP_CLOSE	0x8
#define EO_WS_OP_PING	0x9
#define EO_WS_OP_PONG	0xA

/*
 * Writes a final client frame (masked with mask[4]) of opcode around prefix (0 or 1 byte,
 * prefix_len) then p[n] into out[cap]. Returns the frame's length, or 0 when cap is too small.
 * The header takes at most 14 bytes.
 */
size_t eo_ws_frame(uint8_t opcode, const uint8_t mask[4], const uint8_t *prefix, size_t prefix_len,
		   const uint8_t *p, size_t n, uint8_t *out, size_t cap);

struct eo_ws_parsed {
	uint8_t opcode;
	int fin;
	size_t header_len; /* bytes before the payload */
	uint64_t len;	   /* payload length */
	uint8_t mask[4];   /* valid when masked */
	int masked;
};

/*
 * Parses the frame header at p[n]: 1 with *f filled when the whole frame (header and payload)
 * is in p[n], 0 when more bytes are needed, -1 when the header is invalid (reserved bits, a
 * control frame over 125 bytes, a length over max).
 */
int eo_ws_parse(const uint8_t *p, size_t n, uint64_t max, struct eo_ws_parsed *f);

/* The Sec-WebSocket-Accept value for key (RFC 6455: base64(SHA-1(key + GUID))). */
void eo_ws_accept(const char *key, char out[64]);

#endif
