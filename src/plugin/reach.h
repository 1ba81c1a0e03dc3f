/*
 * plugin/reach.h - how kubectl-etcd reaches a member's etcd, through the apiserver only.
 *
 *   plaintext client API     the Pod proxy: POST .../pods/<member>:2379/proxy/v3/...
 *   server TLS (no mTLS)     the Pod proxy over HTTPS: .../pods/https:<member>:2379/proxy/...
 *                            (the apiserver does not verify etcd's certificate on that hop)
 *   mTLS                     a port-forward tunnel (kube/portforward.h) with TLS end to end
 *                            from the workstation: the operator's client certificate and key
 *                            from the cluster's operator client Secret, etcd's certificate
 *                            verified against ca.crt of its server Secret, for the host the
 *                            member advertises (--advertise-client-urls of its Pod)
 *
 * With spec.auth.enabled the root password is read from spec.auth.rootCredentialsSecretRef,
 * exchanged once for a token (/v3/auth/authenticate) and the token goes with every call as
 * gRPC metadata (Grpc-Metadata-Token), which the apiserver's proxy passes on. Neither the
 * password nor the token is printed; both are cleansed when freed.
 */
#ifndef EO_PLUGIN_REACH_H
#define EO_PLUGIN_REACH_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kube/client.h"
#include "kube/raw.h"

enum eo_plugin_path {
	EO_PPATH_PROXY = 0, /* http through pods/proxy */
	EO_PPATH_PROXY_TLS, /* https through pods/proxy */
	EO_PPATH_TUNNEL,    /* TLS with a client certificate through pods/portforward */
};

/* The path a cluster's spec.tls.client calls for (pure). */
enum eo_plugin_path eo_plugin_path_of(const json_t *cluster);

/* "pods/proxy" or "pods/portforward": the subresource a path uses (for messages and RBAC). */
const char *eo_plugin_path_subresource(enum eo_plugin_path p);

struct eo_plugin_reach {
	eo_kube_client *kc; /* borrowed */
	const char *ns;	    /* borrowed */
	enum eo_plugin_path path;
	unsigned char *ca, *cert, *key; /* PEM, tunnel only; key cleansed on free */
	size_t ca_len, cert_len, key_len;
	char *password; /* spec.auth root password until login; cleansed */
	char *token;	/* etcd auth token after login; cleansed */
};

/* One call's outcome, beyond the exit code. */
struct eo_plugin_answer {
	eo_kube_err e;		    /* EO_KUBE_OK: a 2xx answer went whole to the sink */
	struct eo_kube_error ke;    /* the apiserver's or the transport's detail */
	bool tunnel_refused;	    /* the apiserver refused the port-forward (ke says why) */
	bool aborted;		    /* the sink stopped the transfer */
	char transport[256];	    /* the tunnel's TLS or HTTP failure (curl's words) */
	char farside[256];	    /* what the runtime said on the tunnel's error channel */
	struct eo_kube_raw_res res; /* http_status and the error body */
};

/*
 * Reads what the cluster's path needs: for the tunnel ca.crt of the server Secret, tls.crt and
 * tls.key of the operator client Secret; with spec.auth.enabled the root password. 0, or an
 * exit code with msg (a missing or unreadable Secret, naming it and the RBAC to ask for).
 */
int eo_plugin_reach_open(struct eo_plugin_reach *r, eo_kube_client *kc, const json_t *cluster,
			 const char *ns, char *msg, size_t cap);

/*
 * Exchanges the root password for a token at member (/v3/auth/authenticate) and keeps it for
 * the calls that follow; a cluster without spec.auth.enabled has nothing to do (EO_KUBE_OK).
 * A 2xx answer without a token is EO_KUBE_EPROTOCOL.
 */
eo_kube_err eo_plugin_reach_login(struct eo_plugin_reach *r, const char *member, const char *host,
				  long timeout_ms, struct eo_plugin_answer *ans);

/* Frees and cleanses. */
void eo_plugin_reach_close(struct eo_plugin_reach *r);

/*
 * POSTs body (JSON) to route on member (host: the name its certificate is checked for; NULL:
 * <member>, for the proxy paths) and streams a 2xx answer to sink. timeout_ms bounds the call
 * (< 0: none), stall_s aborts when nothing arrives for that long (0: no such limit). The
 * auth token, when there is one, goes with it. Returns ans->e.
 */
eo_kube_err eo_plugin_reach_post(struct eo_plugin_reach *r, const char *member, const char *host,
				 const char *route, const char *body, long timeout_ms, long stall_s,
				 eo_kube_raw_sink sink, void *ud, struct eo_plugin_answer *ans);

#endif
