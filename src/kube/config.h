/*
 * kube/config.h - where the apiserver is and how to authenticate to it.
 *
 * A config comes from a kubeconfig file (the subset an operator needs:
 * current-context or a named context, the context namespace, the cluster
 * server / CA / insecure flag, and the user's client certificate, key and
 * bearer token, inline or from files, or an exec credential plugin), from a
 * KUBECONFIG list of files merged as kubectl merges them, or from the in-cluster
 * service account.
 *
 * An exec plugin (kube/exec.h) runs at the first eo_kube_config_token(), again once the
 * credentials it returned expire (status.expirationTimestamp) and after
 * eo_kube_config_token_invalidate(). It may return a client certificate and key: they then
 * change with each run, and the pointers eo_kube_config_client_cert()/_key() handed out
 * earlier stay valid (the old copies are kept until the config is freed).
 *
 * All file contents (CA, certificate, key) are read into memory when the
 * config is loaded, so errors surface early. The bearer token is different:
 * service-account tokens rotate, so a token that came from a file is re-read
 * every token_refresh_ms (60 s by default) and after
 * eo_kube_config_token_invalidate() (the client calls it on a 401).
 *
 * Error messages name the field and the file path but never contain a token,
 * key material or certificate data.
 *
 * Every copy of the token and of the client key that this module makes is wiped
 * (OPENSSL_cleanse) before it is freed: the cached token, the file buffers (grown without
 * realloc), libyaml's document and input buffers of a kubeconfig, and the copies
 * eo_kube_config_token() hands out once the caller frees them as it must (client.c and
 * watch.c do, and wipe the Authorization header lines too).
 *
 * A loaded config is immutable except for the token cache, which is guarded
 * by an internal mutex: it may be shared by several threads.
 */
#ifndef EO_KUBE_CONFIG_H
#define EO_KUBE_CONFIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/err.h"

typedef struct eo_kube_config eo_kube_config;

/* Caps on what we read from disk. */
#define EO_KUBE_CONFIG_FILE_MAX (4u << 20) /* kubeconfig, CA, cert, key */
#define EO_KUBE_TOKEN_MAX	(64u << 10)

#define EO_KUBE_TOKEN_REFRESH_MS 60000

/* Default in-cluster locations. */
#define EO_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Overrides of the in-cluster file paths (for tests); NULL members mean the
 * default path under EO_KUBE_SA_DIR. */
struct eo_kube_incluster_paths {
	const char *token;
	const char *ca;
	const char *ns;
};

/*
 * Loads a kubeconfig file. context selects a context by name; NULL means
 * current-context. Relative file paths in the kubeconfig are resolved
 * against the directory of path. On success *out is a new config the caller
 * frees with eo_kube_config_free().
 */
eo_kube_err eo_kube_config_load_kubeconfig(const char *path, const char *context,
					   eo_kube_config **out, struct eo_kube_error *err);

/*
 * A KUBECONFIG list: file names separated by ':' (empty entries and missing files are
 * skipped, at least one must exist), merged as kubectl merges them: the first file that sets
 * current-context wins, and for each named context, cluster and user the first file that
 * defines it wins, whole (its fields are not merged with a later definition). Relative paths
 * resolve against the directory of the file the entry came from.
 */
#define EO_KUBE_CONFIG_LIST_MAX 32
eo_kube_err eo_kube_config_load_kubeconfig_list(const char *list, const char *context,
						eo_kube_config **out, struct eo_kube_error *err);

/* Same, from a kubeconfig held in memory. base_dir (may be NULL = current
 * directory) resolves relative file paths. */
eo_kube_err eo_kube_config_parse_kubeconfig(const char *yaml, size_t len, const char *base_dir,
					    const char *context, eo_kube_config **out,
					    struct eo_kube_error *err);

/*
 * In-cluster config: server from KUBERNETES_SERVICE_HOST / _PORT, CA, token
 * and namespace from the service-account directory. paths may be NULL.
 * A missing namespace file gives namespace "default"; a missing token or CA
 * is an error.
 */
eo_kube_err eo_kube_config_in_cluster(const struct eo_kube_incluster_paths *paths,
				      eo_kube_config **out, struct eo_kube_error *err);

/*
 * The usual lookup order: an explicit kubeconfig path if given, else
 * $KUBECONFIG (a list is merged), else in-cluster when KUBERNETES_SERVICE_HOST
 * is set, else ~/.kube/config.
 */
eo_kube_err eo_kube_config_load(const char *kubeconfig_path, const char *context,
				eo_kube_config **out, struct eo_kube_error *err);

/* A plain config for tests and tools: server URL, optional static token
 * (copied), optional namespace (NULL = "default"). */
eo_kube_err eo_kube_config_new(const char *server, const char *token, const char *ns,
			       eo_kube_config **out, struct eo_kube_error *err);

void eo_kube_config_free(eo_kube_config *cfg);

/* Borrowed views, valid while cfg lives. */
const char *eo_kube_config_server(const eo_kube_config *cfg);	 /* no trailing slash */
const char *eo_kube_config_namespace(const eo_kube_config *cfg); /* never NULL */
/* PEM blobs; NULL (and *len = 0) when not configured. */
const unsigned char *eo_kube_config_ca(const eo_kube_config *cfg, size_t *len);
const unsigned char *eo_kube_config_client_cert(const eo_kube_config *cfg, size_t *len);
const unsigned char *eo_kube_config_client_key(const eo_kube_config *cfg, size_t *len);
/* Both at once, so that an exec plugin's refresh between two calls cannot pair a certificate
 * with another run's key. */
void eo_kube_config_client_pair(const eo_kube_config *cfg, const unsigned char **cert,
				size_t *cert_len, const unsigned char **key, size_t *key_len);
bool eo_kube_config_insecure(const eo_kube_config *cfg);
/* Path of the token file, or NULL when the token is static or absent. */
const char *eo_kube_config_token_file(const eo_kube_config *cfg);

/*
 * Transport risks of a config, as bits: EO_KUBE_RISK_PLAIN_HTTP when the server URL is
 * http:// (nothing is encrypted; insecure-skip-tls-verify is then moot), else
 * EO_KUBE_RISK_INSECURE_TLS when insecure-skip-tls-verify is set. 0 for a verified https
 * server (and for NULL).
 */
#define EO_KUBE_RISK_INSECURE_TLS 0x1u
#define EO_KUBE_RISK_PLAIN_HTTP	  0x2u
unsigned eo_kube_config_risks(const eo_kube_config *cfg);

/*
 * The risks of cfg not yet in *warned, which gets them added (atomically): what a caller
 * warns about so that each risk is told once per *warned (per process with a static one),
 * however many clients it builds.
 */
unsigned eo_kube_config_risks_once(const eo_kube_config *cfg, atomic_uint *warned);

/* One sentence (static) for one risk bit. */
const char *eo_kube_risk_text(unsigned risk);

/* Sets how often a file token is re-read (ms, > 0). */
void eo_kube_config_set_token_refresh(eo_kube_config *cfg, long refresh_ms);

/*
 * The bearer token to send now. *token is a new heap string the caller
 * wipes (OPENSSL_cleanse over strlen) and frees, and never logs, or NULL when no token is
 * configured. A token file is re-read when the cached copy is older than the refresh interval or
 * was invalidated; if re-reading fails but an older token exists, the older token is returned.
 */
eo_kube_err eo_kube_config_token(eo_kube_config *cfg, char **token, struct eo_kube_error *err);

/* Forces the next eo_kube_config_token() to re-read the token file or re-run the exec
 * plugin. */
void eo_kube_config_token_invalidate(eo_kube_config *cfg);

/* True when a retry after a 401 may get other credentials (a token file or an exec plugin). */
bool eo_kube_config_token_renewable(const eo_kube_config *cfg);

/*
 * Reads a whole file into a NUL-terminated heap buffer of at most max bytes
 * (plus the NUL). Used by the config loader; exposed for the other kube
 * modules. The message in err names the path only.
 */
eo_kube_err eo_kube_read_file(const char *path, size_t max, char **data, size_t *len,
			      struct eo_kube_error *err);

/*
 * Strips leading and trailing white space in place and wipes the bytes the shift left
 * behind past the new end, so no piece of a token stays beyond the terminator. Internal to
 * src/kube (token and namespace files); exposed for the tests.
 */
void eo__kube_trim(char *s);

#endif
