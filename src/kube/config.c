/*
 * kube/config.c - kubeconfig (libyaml) and in-cluster configuration.
 */
#include "kube/config.h"
#include "core/base64.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

struct blob {
	unsigned char *data;
	size_t len;
};

struct eo_kube_config {
	char *server;
	char *ns;
	struct blob ca;
	struct blob cert;
	struct blob key;
	bool insecure;
	char *token_file; /* NULL: token is static (or absent) */

	pthread_mutex_t mu; /* guards the fields below */
	char *token;
	int64_t token_read_ms;
	bool token_stale;
	long refresh_ms;
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void blob_free(struct blob *b)
{
	if (b->data) {
		/* Keys are secrets: scrub before freeing. */
		OPENSSL_cleanse(b->data, b->len);
		free(b->data);
	}
	b->data = NULL;
	b->len = 0;
}

static void free_secret_str(char *s)
{
	if (s) {
		OPENSSL_cleanse(s, strlen(s));
		free(s);
	}
}

static eo_kube_config *config_alloc(void)
{
	eo_kube_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return NULL;
	pthread_mutex_init(&cfg->mu, NULL);
	cfg->refresh_ms = EO_KUBE_TOKEN_REFRESH_MS;
	return cfg;
}

void eo_kube_config_free(eo_kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->ns);
	blob_free(&cfg->ca);
	blob_free(&cfg->cert);
	blob_free(&cfg->key);
	free(cfg->token_file);
	free_secret_str(cfg->token);
	pthread_mutex_destroy(&cfg->mu);
	free(cfg);
}

eo_kube_err eo_kube_read_file(const char *path, size_t max, char **data, size_t *len,
			      struct eo_kube_error *err)
{
	FILE *f = NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	eo_kube_err rc = EO_KUBE_OK;

	*data = NULL;
	*len = 0;
	f = fopen(path, "rb");
	if (!f) {
		rc = eo_kube_fail(err, EO_KUBE_EIO, "cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			char *nb;

			if (ncap - 1 > max) /* not "max + 1": max may be SIZE_MAX */
				ncap = max + 1;
			if (ncap <= n) {
				rc = eo_kube_fail(err, EO_KUBE_ETOOLARGE,
						  "%s is larger than %zu bytes", path, max);
				goto out;
			}
			/* Not realloc: it would leave the bytes read so far (a token, a key) in
			 * freed memory. Copy, then wipe the old buffer. */
			nb = malloc(ncap + 1);
			if (!nb) {
				rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "reading %s", path);
				goto out;
			}
			if (buf) {
				memcpy(nb, buf, n);
				OPENSSL_cleanse(buf, cap + 1);
				free(buf);
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				rc = eo_kube_fail(err, EO_KUBE_EIO, "cannot read %s", path);
				goto out;
			}
			break;
		}
		if (n > max) {
			rc = eo_kube_fail(err, EO_KUBE_ETOOLARGE, "%s is larger than %zu bytes",
					  path, max);
			goto out;
		}
	}
	if (!buf) {
		buf = malloc(1);
		if (!buf) {
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "reading %s", path);
			goto out;
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	buf = NULL;
out:
	if (f)
		fclose(f);
	if (buf) {
		OPENSSL_cleanse(buf, cap + 1);
		free(buf);
	}
	return rc;
}

/* Strips leading and trailing white space in place (tokens end in "\n"). */
void eo__kube_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (i) {
		memmove(s, s + i, n - i + 1);
		/* The last i bytes would still hold the end of the token: wipe them. */
		OPENSSL_cleanse(s + n - i + 1, i);
	}
}

/* ---- token cache ------------------------------------------------------ */

void eo_kube_config_set_token_refresh(eo_kube_config *cfg, long refresh_ms)
{
	pthread_mutex_lock(&cfg->mu);
	cfg->refresh_ms = refresh_ms > 0 ? refresh_ms : EO_KUBE_TOKEN_REFRESH_MS;
	pthread_mutex_unlock(&cfg->mu);
}

void eo_kube_config_token_invalidate(eo_kube_config *cfg)
{
	pthread_mutex_lock(&cfg->mu);
	cfg->token_stale = true;
	pthread_mutex_unlock(&cfg->mu);
}

/* Reads and trims the token file. Caller holds no lock. */
static eo_kube_err read_token_file(const char *path, char **out, struct eo_kube_error *err)
{
	char *data = NULL;
	size_t len = 0;
	eo_kube_err rc;

	rc = eo_kube_read_file(path, EO_KUBE_TOKEN_MAX, &data, &len, err);
	if (rc != EO_KUBE_OK)
		return rc;
	eo__kube_trim(data);
	if (data[0] == '\0') {
		free(data);
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "token file %s is empty", path);
	}
	*out = data;
	return EO_KUBE_OK;
}

eo_kube_err eo_kube_config_token(eo_kube_config *cfg, char **token, struct eo_kube_error *err)
{
	char *fresh = NULL;
	eo_kube_err rc = EO_KUBE_OK;
	int64_t now = mono_ms();
	bool reread;

	*token = NULL;
	pthread_mutex_lock(&cfg->mu);
	reread = cfg->token_file &&
		 (!cfg->token || cfg->token_stale || now - cfg->token_read_ms >= cfg->refresh_ms);
	pthread_mutex_unlock(&cfg->mu);

	/* The file is read without the lock; concurrent readers may both read it,
	 * which is harmless. */
	if (reread)
		rc = read_token_file(cfg->token_file, &fresh, err);

	pthread_mutex_lock(&cfg->mu);
	if (fresh) {
		free_secret_str(cfg->token);
		cfg->token = fresh;
		cfg->token_read_ms = now;
		cfg->token_stale = false;
	}
	if (cfg->token) {
		/* A failed re-read falls back to the token we already have. */
		rc = EO_KUBE_OK;
		*token = strdup(cfg->token);
		if (!*token)
			rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "copying token");
	}
	pthread_mutex_unlock(&cfg->mu);
	if (rc == EO_KUBE_OK)
		eo_kube_error_clear(err);
	return rc;
}

/* ---- accessors -------------------------------------------------------- */

const char *eo_kube_config_server(const eo_kube_config *cfg)
{
	return cfg->server;
}

const char *eo_kube_config_namespace(const eo_kube_config *cfg)
{
	return cfg->ns;
}

static const unsigned char *blob_view(const struct blob *b, size_t *len)
{
	if (len)
		*len = b->len;
	return b->len ? b->data : NULL;
}

const unsigned char *eo_kube_config_ca(const eo_kube_config *cfg, size_t *len)
{
	return blob_view(&cfg->ca, len);
}

const unsigned char *eo_kube_config_client_cert(const eo_kube_config *cfg, size_t *len)
{
	return blob_view(&cfg->cert, len);
}

const unsigned char *eo_kube_config_client_key(const eo_kube_config *cfg, size_t *len)
{
	return blob_view(&cfg->key, len);
}

bool eo_kube_config_insecure(const eo_kube_config *cfg)
{
	return cfg->insecure;
}

const char *eo_kube_config_token_file(const eo_kube_config *cfg)
{
	return cfg->token_file;
}

unsigned eo_kube_config_risks(const eo_kube_config *cfg)
{
	unsigned r = 0;

	if (cfg == NULL)
		return 0;
	if (strncmp(cfg->server, "http://", 7) == 0)
		r |= EO_KUBE_RISK_PLAIN_HTTP;
	else if (cfg->insecure)
		r |= EO_KUBE_RISK_INSECURE_TLS;
	return r;
}

unsigned eo_kube_config_risks_once(const eo_kube_config *cfg, atomic_uint *warned)
{
	unsigned r = eo_kube_config_risks(cfg);

	return r & ~atomic_fetch_or(warned, r);
}

const char *eo_kube_risk_text(unsigned risk)
{
	switch (risk) {
	case EO_KUBE_RISK_INSECURE_TLS:
		return "the kubeconfig sets insecure-skip-tls-verify: the API server's certificate "
		       "is "
		       "not verified, so anyone on the path can pose as it and read the bearer "
		       "token";
	case EO_KUBE_RISK_PLAIN_HTTP:
		return "the API server URL is plain http://: requests, Secrets read and the bearer "
		       "token travel unencrypted";
	default:
		return "unknown transport risk";
	}
}

/* ---- helpers for both loaders ----------------------------------------- */

/* Sets cfg->server from a URL, dropping trailing slashes. */
static eo_kube_err set_server(eo_kube_config *cfg, const char *url, struct eo_kube_error *err)
{
	size_t n = strlen(url);

	while (n > 0 && url[n - 1] == '/')
		n--;
	if (n == 0)
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "empty server URL");
	if (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "server URL must start with https:// or http://");
	cfg->server = strndup(url, n);
	if (!cfg->server)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "server URL");
	return EO_KUBE_OK;
}

/* Joins base_dir and a relative path; absolute paths are copied. */
static char *resolve_path(const char *base_dir, const char *p)
{
	char *out = NULL;

	if (p[0] == '/' || !base_dir || !base_dir[0])
		return strdup(p);
	if (asprintf(&out, "%s/%s", base_dir, p) < 0)
		return NULL;
	return out;
}

static eo_kube_err load_blob_file(struct blob *b, const char *base_dir, const char *path,
				  const char *what, struct eo_kube_error *err)
{
	char *full = resolve_path(base_dir, path);
	char *data = NULL;
	size_t len = 0;
	eo_kube_err rc;

	if (!full)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "%s path", what);
	rc = eo_kube_read_file(full, EO_KUBE_CONFIG_FILE_MAX, &data, &len, err);
	if (rc != EO_KUBE_OK) {
		/* Prefix the field name so the user knows which entry is wrong. */
		eo_kube_error_prefix(err, what);
		free(full);
		return rc;
	}
	free(full);
	b->data = (unsigned char *)data;
	b->len = len;
	return EO_KUBE_OK;
}

/* Decodes standard padded base64 (white space ignored) into b. */
static eo_kube_err load_blob_b64(struct blob *b, const char *text, const char *what,
				 struct eo_kube_error *err)
{
	size_t n = strlen(text), len = 0;
	unsigned char *out = NULL;
	int rc;

	if (n > EO_KUBE_CONFIG_FILE_MAX * 2)
		return eo_kube_fail(err, EO_KUBE_ETOOLARGE, "%s is too large", what);
	rc = eo_base64_decode(text, n, EO_BASE64_SPACE, &out, &len);
	if (rc == -ENOMEM)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "%s", what);
	if (rc != 0 || len == 0) {
		if (out) {
			OPENSSL_cleanse(out, len);
			free(out);
		}
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "%s: invalid base64", what);
	}
	b->data = out;
	b->len = len;
	return EO_KUBE_OK;
}

/* ---- kubeconfig (libyaml document API) ------------------------------- */

/*
 * A kubeconfig holds a token and key material inline: before libyaml frees them, wipe its
 * copies: every scalar of the document and the parser's input buffers.
 */
static void scrub_document(yaml_document_t *doc)
{
	yaml_node_t *n;

	for (n = doc->nodes.start; n != NULL && n < doc->nodes.top; n++)
		if (n->type == YAML_SCALAR_NODE && n->data.scalar.value != NULL)
			OPENSSL_cleanse(n->data.scalar.value, n->data.scalar.length);
}

static void scrub_parser(yaml_parser_t *p)
{
	if (p->raw_buffer.start != NULL && p->raw_buffer.end > p->raw_buffer.start)
		OPENSSL_cleanse(p->raw_buffer.start,
				(size_t)(p->raw_buffer.end - p->raw_buffer.start));
	if (p->buffer.start != NULL && p->buffer.end > p->buffer.start)
		OPENSSL_cleanse(p->buffer.start, (size_t)(p->buffer.end - p->buffer.start));
}

static const char *scalar(yaml_document_t *doc, yaml_node_t *n)
{
	(void)doc;
	if (!n || n->type != YAML_SCALAR_NODE)
		return NULL;
	return (const char *)n->data.scalar.value;
}

/* Value node of key in a mapping node, or NULL. */
static yaml_node_t *map_get(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;

	if (!map || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(doc, yaml_document_get_node(doc, p->key));

		if (k && strcmp(k, key) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

static const char *map_str(yaml_document_t *doc, yaml_node_t *map, const char *key)
{
	const char *s = scalar(doc, map_get(doc, map, key));

	return (s && s[0]) ? s : NULL;
}

/*
 * In a sequence of {name: X, <field>: {...}} entries (clusters, users,
 * contexts) returns the <field> mapping of the entry named name.
 */
static yaml_node_t *named_entry(yaml_document_t *doc, yaml_node_t *root, const char *list,
				const char *field, const char *name)
{
	yaml_node_t *seq = map_get(doc, root, list);
	yaml_node_item_t *it;

	if (!seq || seq->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
		yaml_node_t *e = yaml_document_get_node(doc, *it);
		const char *n = map_str(doc, e, "name");

		if (n && strcmp(n, name) == 0) {
			yaml_node_t *v = map_get(doc, e, field);

			/* An entry with an empty body is legal (e.g. user: {}). */
			return v ? v : e;
		}
	}
	return NULL;
}

static bool yaml_true(const char *s)
{
	return s && (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0);
}

/* Fills one blob from either <key>-data (base64) or <key> (a file path). */
static eo_kube_err pick_blob(yaml_document_t *doc, yaml_node_t *map, const char *data_key,
			     const char *file_key, const char *base_dir, struct blob *b,
			     struct eo_kube_error *err)
{
	const char *data = map_str(doc, map, data_key);
	const char *file = map_str(doc, map, file_key);

	if (data)
		return load_blob_b64(b, data, data_key, err);
	if (file)
		return load_blob_file(b, base_dir, file, file_key, err);
	return EO_KUBE_OK;
}

eo_kube_err eo_kube_config_parse_kubeconfig(const char *yaml, size_t len, const char *base_dir,
					    const char *context, eo_kube_config **out,
					    struct eo_kube_error *err)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	bool have_parser = false, have_doc = false;
	eo_kube_config *cfg = NULL;
	yaml_node_t *root, *ctx, *cluster, *user;
	const char *ctx_name, *cluster_name, *user_name, *server, *ns, *token, *token_file;
	eo_kube_err rc = EO_KUBE_OK;

	*out = NULL;
	eo_kube_error_clear(err);
	if (len > EO_KUBE_CONFIG_FILE_MAX) {
		rc = eo_kube_fail(err, EO_KUBE_ETOOLARGE, "kubeconfig is too large");
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "yaml parser");
		goto out;
	}
	have_parser = true;
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: yaml error at line %zu: %s",
				  parser.problem_mark.line + 1,
				  parser.problem ? parser.problem : "unknown");
		goto out;
	}
	have_doc = true;
	root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: top level is not a mapping");
		goto out;
	}

	ctx_name = context ? context : map_str(&doc, root, "current-context");
	if (!ctx_name) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "kubeconfig: no current-context and no context given");
		goto out;
	}
	ctx = named_entry(&doc, root, "contexts", "context", ctx_name);
	if (!ctx) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: context \"%s\" not found",
				  ctx_name);
		goto out;
	}
	cluster_name = map_str(&doc, ctx, "cluster");
	user_name = map_str(&doc, ctx, "user");
	ns = map_str(&doc, ctx, "namespace");
	if (!cluster_name) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: context \"%s\" has no cluster",
				  ctx_name);
		goto out;
	}
	cluster = named_entry(&doc, root, "clusters", "cluster", cluster_name);
	if (!cluster) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: cluster \"%s\" not found",
				  cluster_name);
		goto out;
	}
	user = NULL;
	if (user_name) {
		user = named_entry(&doc, root, "users", "user", user_name);
		if (!user) {
			rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: user \"%s\" not found",
					  user_name);
			goto out;
		}
	}

	cfg = config_alloc();
	if (!cfg) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "config");
		goto out;
	}
	server = map_str(&doc, cluster, "server");
	if (!server) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: cluster \"%s\" has no server",
				  cluster_name);
		goto out;
	}
	rc = set_server(cfg, server, err);
	if (rc != EO_KUBE_OK)
		goto out;
	cfg->ns = strdup(ns ? ns : "default");
	if (!cfg->ns) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "namespace");
		goto out;
	}
	cfg->insecure = yaml_true(map_str(&doc, cluster, "insecure-skip-tls-verify"));
	rc = pick_blob(&doc, cluster, "certificate-authority-data", "certificate-authority",
		       base_dir, &cfg->ca, err);
	if (rc != EO_KUBE_OK)
		goto out;

	if (user) {
		rc = pick_blob(&doc, user, "client-certificate-data", "client-certificate",
			       base_dir, &cfg->cert, err);
		if (rc != EO_KUBE_OK)
			goto out;
		rc = pick_blob(&doc, user, "client-key-data", "client-key", base_dir, &cfg->key,
			       err);
		if (rc != EO_KUBE_OK)
			goto out;
		if ((cfg->cert.len == 0) != (cfg->key.len == 0)) {
			rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
					  "kubeconfig: user \"%s\" needs both a client certificate "
					  "and a client key",
					  user_name);
			goto out;
		}
		token = map_str(&doc, user, "token");
		token_file = map_str(&doc, user, "tokenFile");
		if (token) {
			cfg->token = strdup(token);
			if (!cfg->token) {
				rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "token");
				goto out;
			}
		} else if (token_file) {
			cfg->token_file = resolve_path(base_dir, token_file);
			if (!cfg->token_file) {
				rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "tokenFile");
				goto out;
			}
			rc = read_token_file(cfg->token_file, &cfg->token, err);
			if (rc != EO_KUBE_OK)
				goto out;
			cfg->token_read_ms = mono_ms();
		}
		if (!cfg->token && cfg->cert.len == 0 &&
		    (map_get(&doc, user, "exec") || map_get(&doc, user, "auth-provider"))) {
			rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
					  "kubeconfig: user \"%s\" uses an exec or auth-provider "
					  "plugin, which is not supported; use a token or a client "
					  "certificate",
					  user_name);
			goto out;
		}
	}
	*out = cfg;
	cfg = NULL;
	eo_kube_error_clear(err);
out:
	if (have_doc) {
		scrub_document(&doc);
		yaml_document_delete(&doc);
	}
	if (have_parser) {
		scrub_parser(&parser);
		yaml_parser_delete(&parser);
	}
	eo_kube_config_free(cfg);
	return rc;
}

eo_kube_err eo_kube_config_load_kubeconfig(const char *path, const char *context,
					   eo_kube_config **out, struct eo_kube_error *err)
{
	char *data = NULL, *dir = NULL, *slash;
	size_t len = 0;
	eo_kube_err rc;

	*out = NULL;
	rc = eo_kube_read_file(path, EO_KUBE_CONFIG_FILE_MAX, &data, &len, err);
	if (rc != EO_KUBE_OK)
		goto out;
	dir = strdup(path);
	if (!dir) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "kubeconfig path");
		goto out;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		dir[0] = '\0';
	rc = eo_kube_config_parse_kubeconfig(data, len, dir, context, out, err);
	if (rc != EO_KUBE_OK && rc != EO_KUBE_EIO)
		eo_kube_error_prefix(err, path);
out:
	if (data) {
		OPENSSL_cleanse(data, len);
		free(data);
	}
	free(dir);
	return rc;
}

eo_kube_err eo_kube_config_in_cluster(const struct eo_kube_incluster_paths *paths,
				      eo_kube_config **out, struct eo_kube_error *err)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *token_path = EO_KUBE_SA_DIR "/token";
	const char *ca_path = EO_KUBE_SA_DIR "/ca.crt";
	const char *ns_path = EO_KUBE_SA_DIR "/namespace";
	eo_kube_config *cfg = NULL;
	char *url = NULL, *ns = NULL;
	size_t ns_len = 0;
	eo_kube_err rc = EO_KUBE_OK;

	*out = NULL;
	eo_kube_error_clear(err);
	if (paths && paths->token)
		token_path = paths->token;
	if (paths && paths->ca)
		ca_path = paths->ca;
	if (paths && paths->ns)
		ns_path = paths->ns;
	if (!host || !host[0] || !port || !port[0]) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
				  "must be set");
		goto out;
	}
	cfg = config_alloc();
	if (!cfg) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "config");
		goto out;
	}
	/* An IPv6 service address needs brackets in a URL. */
	if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port) <
	    0) {
		url = NULL;
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "server URL");
		goto out;
	}
	rc = set_server(cfg, url, err);
	if (rc != EO_KUBE_OK)
		goto out;
	rc = load_blob_file(&cfg->ca, NULL, ca_path, "in-cluster CA", err);
	if (rc != EO_KUBE_OK)
		goto out;
	cfg->token_file = strdup(token_path);
	if (!cfg->token_file) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "token path");
		goto out;
	}
	rc = read_token_file(cfg->token_file, &cfg->token, err);
	if (rc != EO_KUBE_OK)
		goto out;
	cfg->token_read_ms = mono_ms();
	if (eo_kube_read_file(ns_path, 4096, &ns, &ns_len, NULL) == EO_KUBE_OK) {
		eo__kube_trim(ns);
		if (ns[0] == '\0') {
			free(ns);
			ns = NULL;
		}
	}
	cfg->ns = ns ? ns : strdup("default");
	ns = NULL;
	if (!cfg->ns) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "namespace");
		goto out;
	}
	*out = cfg;
	cfg = NULL;
out:
	free(url);
	free(ns);
	eo_kube_config_free(cfg);
	return rc;
}

eo_kube_err eo_kube_config_load(const char *kubeconfig_path, const char *context,
				eo_kube_config **out, struct eo_kube_error *err)
{
	const char *env = getenv("KUBECONFIG");
	const char *home = getenv("HOME");
	char *path = NULL;
	eo_kube_err rc;

	if (kubeconfig_path && kubeconfig_path[0])
		return eo_kube_config_load_kubeconfig(kubeconfig_path, context, out, err);
	if (env && env[0]) {
		/* Only the first entry of a KUBECONFIG list is used (no merging). */
		path = strndup(env, strcspn(env, ":"));
		if (!path)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "KUBECONFIG");
		rc = eo_kube_config_load_kubeconfig(path, context, out, err);
		free(path);
		return rc;
	}
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return eo_kube_config_in_cluster(NULL, out, err);
	if (!home || !home[0])
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "no kubeconfig: set KUBECONFIG or run in a cluster");
	if (asprintf(&path, "%s/.kube/config", home) < 0)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "kubeconfig path");
	rc = eo_kube_config_load_kubeconfig(path, context, out, err);
	free(path);
	return rc;
}

eo_kube_err eo_kube_config_new(const char *server, const char *token, const char *ns,
			       eo_kube_config **out, struct eo_kube_error *err)
{
	eo_kube_config *cfg = config_alloc();
	eo_kube_err rc = EO_KUBE_OK;

	*out = NULL;
	eo_kube_error_clear(err);
	if (!cfg)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "config");
	rc = set_server(cfg, server, err);
	if (rc != EO_KUBE_OK)
		goto out;
	cfg->ns = strdup(ns ? ns : "default");
	if (!cfg->ns || (token && !(cfg->token = strdup(token)))) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "config");
		goto out;
	}
	*out = cfg;
	cfg = NULL;
out:
	eo_kube_config_free(cfg);
	return rc;
}
