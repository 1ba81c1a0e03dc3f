/*
 * kube/config.c - kubeconfig (libyaml) and in-cluster configuration.
 */
#include "kube/config.h"
#include "core/base64.h"
#include "core/sleep.h"
#include "kube/exec.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

struct blob {
	unsigned char *data;
	size_t len;
};

/* A client certificate or key an exec plugin replaced: kept until the config is freed, since
 * a thread may still hold the borrowed pointer eo_kube_config_client_cert() gave it. */
struct retired {
	struct retired *next;
	struct blob b;
};

struct eo_kube_config {
	char *server;
	char *ns;
	struct blob ca;
	struct blob cert;
	struct blob key;
	bool insecure;
	char *token_file;	    /* NULL: token is static (or absent) */
	struct eo__kube_exec *exec; /* NULL: no exec credential plugin */

	pthread_mutex_t exec_mu; /* one plugin run at a time; taken before mu */
	pthread_mutex_t mu;	 /* guards the fields below (and cert, key with exec) */
	char *token;
	int64_t token_read_ms;
	bool token_stale;
	long refresh_ms;
	bool exec_ran;	    /* the plugin gave credentials once */
	time_t exec_expiry; /* 0: the credentials do not expire */
	struct retired *retired;
};

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
	pthread_mutex_init(&cfg->exec_mu, NULL);
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
	eo__kube_exec_free(cfg->exec);
	while (cfg->retired) {
		struct retired *r = cfg->retired;

		cfg->retired = r->next;
		blob_free(&r->b);
		free(r);
	}
	pthread_mutex_destroy(&cfg->mu);
	pthread_mutex_destroy(&cfg->exec_mu);
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

/* Moves *b to the retired list (caller holds mu); false on ENOMEM (b is then wiped). */
static bool retire(eo_kube_config *cfg, struct blob *b)
{
	struct retired *r;

	if (!b->data)
		return true;
	r = calloc(1, sizeof(*r));
	if (!r) {
		blob_free(b);
		return false;
	}
	r->b = *b;
	r->next = cfg->retired;
	cfg->retired = r;
	b->data = NULL;
	b->len = 0;
	return true;
}

/* Stores what the plugin returned (caller holds mu); c is left empty. */
static void exec_store(eo_kube_config *cfg, struct eo__kube_exec_cred *c)
{
	free_secret_str(cfg->token);
	cfg->token = c->token;
	c->token = NULL;
	/* A failed retire wipes the old blob: a reader between it and the swap below would only
	 * see an empty one. */
	retire(cfg, &cfg->cert);
	retire(cfg, &cfg->key);
	cfg->cert = (struct blob){c->cert, c->cert_len};
	cfg->key = (struct blob){c->key, c->key_len};
	c->cert = c->key = NULL;
	c->cert_len = c->key_len = 0;
	cfg->exec_expiry = c->expiry;
	cfg->exec_ran = true;
	cfg->token_stale = false;
}

/* Runs the exec plugin when it never ran, its credentials expired, or a 401 invalidated
 * them. */
static eo_kube_err exec_refresh(eo_kube_config *cfg, struct eo_kube_error *err)
{
	struct eo__kube_exec_cred c = {0};
	struct eo__kube_exec_cluster cl = {
	    .server = cfg->server,
	    .ca = cfg->ca.data,
	    .ca_len = cfg->ca.len,
	    .insecure = cfg->insecure,
	};
	eo_kube_err rc = EO_KUBE_OK;
	bool due;

	pthread_mutex_lock(&cfg->exec_mu);
	pthread_mutex_lock(&cfg->mu);
	due = !cfg->exec_ran || cfg->token_stale ||
	      (cfg->exec_expiry != 0 && time(NULL) >= cfg->exec_expiry);
	pthread_mutex_unlock(&cfg->mu);
	if (due) {
		rc = eo__kube_exec_run(cfg->exec, &cl, &c, err);
		if (rc == EO_KUBE_OK) {
			pthread_mutex_lock(&cfg->mu);
			exec_store(cfg, &c);
			pthread_mutex_unlock(&cfg->mu);
		}
		eo__kube_exec_cred_clear(&c);
	}
	pthread_mutex_unlock(&cfg->exec_mu);
	return rc;
}

bool eo_kube_config_token_renewable(const eo_kube_config *cfg)
{
	return cfg->token_file != NULL || cfg->exec != NULL;
}

eo_kube_err eo_kube_config_token(eo_kube_config *cfg, char **token, struct eo_kube_error *err)
{
	char *fresh = NULL;
	eo_kube_err rc = EO_KUBE_OK;
	int64_t now = eo_mono_ms();
	bool reread;

	*token = NULL;
	if (cfg->exec) {
		rc = exec_refresh(cfg, err);
		if (rc != EO_KUBE_OK)
			return rc;
	}
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

/* The client certificate and key may be replaced by an exec plugin run: read them under the
 * lock then (the old blobs stay allocated, see struct retired). */
static const unsigned char *cred_view(const eo_kube_config *cfg, const struct blob *b, size_t *len)
{
	pthread_mutex_t *mu = (pthread_mutex_t *)&cfg->mu;
	const unsigned char *p;

	if (!cfg->exec)
		return blob_view(b, len);
	pthread_mutex_lock(mu);
	p = blob_view(b, len);
	pthread_mutex_unlock(mu);
	return p;
}

const unsigned char *eo_kube_config_ca(const eo_kube_config *cfg, size_t *len)
{
	return blob_view(&cfg->ca, len);
}

const unsigned char *eo_kube_config_client_cert(const eo_kube_config *cfg, size_t *len)
{
	return cred_view(cfg, &cfg->cert, len);
}

const unsigned char *eo_kube_config_client_key(const eo_kube_config *cfg, size_t *len)
{
	return cred_view(cfg, &cfg->key, len);
}

void eo_kube_config_client_pair(const eo_kube_config *cfg, const unsigned char **cert,
				size_t *cert_len, const unsigned char **key, size_t *key_len)
{
	pthread_mutex_t *mu = (pthread_mutex_t *)&cfg->mu;

	if (cfg->exec)
		pthread_mutex_lock(mu);
	*cert = blob_view(&cfg->cert, cert_len);
	*key = blob_view(&cfg->key, key_len);
	if (cfg->exec)
		pthread_mutex_unlock(mu);
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

/* ---- the exec and auth-provider sections of a user ------------------ */

#define EXEC_LIST_MAX 256 /* args and env entries */

static eo_kube_err exec_mode(const char *s, const char *user, enum eo__kube_exec_mode *m,
			     struct eo_kube_error *err)
{
	if (!s || strcmp(s, "IfAvailable") == 0)
		*m = EO_KUBE_EXEC_IF_AVAILABLE;
	else if (strcmp(s, "Never") == 0)
		*m = EO_KUBE_EXEC_NEVER;
	else if (strcmp(s, "Always") == 0)
		*m = EO_KUBE_EXEC_ALWAYS;
	else
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\": exec interactiveMode must be Never, "
				    "IfAvailable or Always",
				    user);
	return EO_KUBE_OK;
}

/* argv: the command (relative paths with a '/' resolved against base_dir, as kubectl does),
 * then the args. */
static eo_kube_err exec_argv(yaml_document_t *doc, yaml_node_t *ex, const char *user,
			     const char *command, const char *base_dir, char ***out,
			     struct eo_kube_error *err)
{
	yaml_node_t *args = map_get(doc, ex, "args");
	size_t n = 0, k = 0;
	char **v;

	if (args && args->type == YAML_SEQUENCE_NODE)
		n = (size_t)(args->data.sequence.items.top - args->data.sequence.items.start);
	else if (args && !(args->type == YAML_SCALAR_NODE && args->data.scalar.length == 0))
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\": exec args must be a list", user);
	if (n > EXEC_LIST_MAX)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\": more than %d exec args", user,
				    EXEC_LIST_MAX);
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec args");
	*out = v;
	v[k++] = strchr(command, '/') ? resolve_path(base_dir, command) : strdup(command);
	if (!v[0])
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec command");
	for (size_t i = 0; i < n; i++) {
		const char *a =
		    scalar(doc, yaml_document_get_node(doc, args->data.sequence.items.start[i]));

		if (!a)
			return eo_kube_fail(
			    err, EO_KUBE_ECONFIG,
			    "kubeconfig: user \"%s\": exec args[%zu] is not a string", user, i);
		v[k] = strdup(a);
		if (!v[k++])
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec args");
	}
	return EO_KUBE_OK;
}

/* env: a list of {name, value} as "name=value". */
static eo_kube_err exec_env(yaml_document_t *doc, yaml_node_t *ex, const char *user, char ***out,
			    struct eo_kube_error *err)
{
	yaml_node_t *env = map_get(doc, ex, "env");
	size_t n = 0, k = 0;
	char **v;

	if (env && env->type == YAML_SEQUENCE_NODE)
		n = (size_t)(env->data.sequence.items.top - env->data.sequence.items.start);
	else if (env && !(env->type == YAML_SCALAR_NODE && env->data.scalar.length == 0))
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\": exec env must be a list", user);
	if (n > EXEC_LIST_MAX)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\": more than %d exec env entries", user,
				    EXEC_LIST_MAX);
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec env");
	*out = v;
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(doc, env->data.sequence.items.start[i]);
		const char *name = map_str(doc, e, "name");
		const char *val = scalar(doc, map_get(doc, e, "value"));

		if (!name || strchr(name, '=') != NULL)
			return eo_kube_fail(err, EO_KUBE_ECONFIG,
					    "kubeconfig: user \"%s\": exec env[%zu] needs a name "
					    "without '='",
					    user, i);
		if (asprintf(&v[k], "%s=%s", name, val ? val : "") < 0) {
			v[k] = NULL;
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec env");
		}
		k++;
	}
	return EO_KUBE_OK;
}

static eo_kube_err parse_exec(yaml_document_t *doc, yaml_node_t *ex, const char *user,
			      const char *base_dir, struct eo__kube_exec **out,
			      struct eo_kube_error *err)
{
	struct eo__kube_exec *x = calloc(1, sizeof(*x));
	const char *command = map_str(doc, ex, "command");
	const char *api = map_str(doc, ex, "apiVersion");
	const char *hint = map_str(doc, ex, "installHint");
	eo_kube_err rc;

	if (!x)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec");
	x->user = strdup(user);
	if (!x->user) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "exec");
		goto out;
	}
	if (!command) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "kubeconfig: user \"%s\": exec has no command", user);
		goto out;
	}
	if (!eo__kube_exec_version_ok(api)) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "kubeconfig: user \"%s\": exec apiVersion must be "
				  "client.authentication.k8s.io/v1 or /v1beta1",
				  user);
		goto out;
	}
	x->api_version = strdup(api);
	x->install_hint = hint ? strdup(hint) : NULL;
	if (!x->api_version || (hint && !x->install_hint)) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "exec");
		goto out;
	}
	x->provide_cluster_info = yaml_true(map_str(doc, ex, "provideClusterInfo"));
	rc = exec_mode(map_str(doc, ex, "interactiveMode"), user, &x->mode, err);
	if (rc == EO_KUBE_OK)
		rc = exec_argv(doc, ex, user, command, base_dir, &x->argv, err);
	if (rc == EO_KUBE_OK)
		rc = exec_env(doc, ex, user, &x->env, err);
out:
	if (rc == EO_KUBE_OK)
		*out = x;
	else
		eo__kube_exec_free(x);
	return rc;
}

/*
 * auth-provider: gcp and azure are gone from kubectl too; an oidc provider whose id-token is
 * already in the kubeconfig (kubectl keeps it there after a login) is used as a bearer token,
 * without refreshing it.
 */
static eo_kube_err auth_provider(yaml_document_t *doc, yaml_node_t *ap, const char *user,
				 eo_kube_config *cfg, struct eo_kube_error *err)
{
	const char *name = map_str(doc, ap, "name");
	const char *id_token = map_str(doc, map_get(doc, ap, "config"), "id-token");

	if (name && strcmp(name, "oidc") == 0 && id_token) {
		cfg->token = strdup(id_token);
		return cfg->token ? EO_KUBE_OK : eo_kube_fail(err, EO_KUBE_ENOMEM, "id-token");
	}
	return eo_kube_fail(err, EO_KUBE_ECONFIG,
			    "kubeconfig: user \"%s\" uses the auth-provider \"%.40s\", which "
			    "kubectl etcd does not support (kubectl itself dropped gcp and azure): "
			    "switch the user to an exec credential plugin (gke-gcloud-auth-plugin, "
			    "kubelogin, aws eks get-token)%s",
			    user, name ? name : "?",
			    name && strcmp(name, "oidc") == 0 ? ", or log in so that the oidc "
								"id-token is in the kubeconfig"
							      : "");
}

/* ---- kubeconfig files, one or merged ---------------------------------- */

/* One parsed kubeconfig file and the directory its relative paths resolve against. */
struct kc_file {
	yaml_document_t doc;
	const char *dir;
	bool loaded;
};

static yaml_node_t *kc_root(struct kc_file *f)
{
	yaml_node_t *r = f->loaded ? yaml_document_get_root_node(&f->doc) : NULL;

	return r && r->type == YAML_MAPPING_NODE ? r : NULL;
}

static void kc_files_free(struct kc_file *fs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fs[i].loaded) {
			scrub_document(&fs[i].doc);
			yaml_document_delete(&fs[i].doc);
		}
		fs[i].loaded = false;
	}
}

/* Parses yaml into f. An empty document is loaded with no root. */
static eo_kube_err kc_parse(const char *yaml, size_t len, struct kc_file *f,
			    struct eo_kube_error *err)
{
	yaml_parser_t parser;
	eo_kube_err rc = EO_KUBE_OK;

	if (len > EO_KUBE_CONFIG_FILE_MAX)
		return eo_kube_fail(err, EO_KUBE_ETOOLARGE, "kubeconfig is too large");
	if (!yaml_parser_initialize(&parser))
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "yaml parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)yaml, len);
	if (!yaml_parser_load(&parser, &f->doc))
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: yaml error at line %zu: %s",
				  parser.problem_mark.line + 1,
				  parser.problem ? parser.problem : "unknown");
	else
		f->loaded = true;
	scrub_parser(&parser);
	yaml_parser_delete(&parser);
	return rc;
}

/* The first file that sets current-context wins. */
static const char *kc_current_context(struct kc_file *fs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *c = map_str(&fs[i].doc, kc_root(&fs[i]), "current-context");

		if (kc_root(&fs[i]) && c)
			return c;
	}
	return NULL;
}

/* The first file that defines the named entry wins (its whole entry, no field merge). */
static yaml_node_t *kc_named(struct kc_file *fs, size_t n, const char *list, const char *field,
			     const char *name, struct kc_file **from)
{
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *root = kc_root(&fs[i]);
		yaml_node_t *e = root ? named_entry(&fs[i].doc, root, list, field, name) : NULL;

		if (e) {
			*from = &fs[i];
			return e;
		}
	}
	return NULL;
}

/* The user's credentials: certificate and key, token or tokenFile, else exec or an
 * auth-provider. Static credentials win over a plugin in the same user. */
static eo_kube_err load_user(yaml_document_t *doc, yaml_node_t *user, const char *user_name,
			     const char *base_dir, eo_kube_config *cfg, struct eo_kube_error *err)
{
	const char *token, *token_file;
	yaml_node_t *ex, *ap;
	eo_kube_err rc;

	rc = pick_blob(doc, user, "client-certificate-data", "client-certificate", base_dir,
		       &cfg->cert, err);
	if (rc != EO_KUBE_OK)
		return rc;
	rc = pick_blob(doc, user, "client-key-data", "client-key", base_dir, &cfg->key, err);
	if (rc != EO_KUBE_OK)
		return rc;
	if ((cfg->cert.len == 0) != (cfg->key.len == 0))
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\" needs both a client certificate "
				    "and a client key",
				    user_name);
	token = map_str(doc, user, "token");
	token_file = map_str(doc, user, "tokenFile");
	if (token) {
		cfg->token = strdup(token);
		if (!cfg->token)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "token");
	} else if (token_file) {
		cfg->token_file = resolve_path(base_dir, token_file);
		if (!cfg->token_file)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "tokenFile");
		rc = read_token_file(cfg->token_file, &cfg->token, err);
		if (rc != EO_KUBE_OK)
			return rc;
		cfg->token_read_ms = eo_mono_ms();
	}
	if (cfg->token || cfg->cert.len > 0)
		return EO_KUBE_OK;
	ex = map_get(doc, user, "exec");
	ap = map_get(doc, user, "auth-provider");
	if (ex && ex->type == YAML_MAPPING_NODE && ap && ap->type == YAML_MAPPING_NODE)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: user \"%s\" has both exec and auth-provider",
				    user_name);
	if (ex && ex->type == YAML_MAPPING_NODE)
		return parse_exec(doc, ex, user_name, base_dir, &cfg->exec, err);
	if (ap && ap->type == YAML_MAPPING_NODE)
		return auth_provider(doc, ap, user_name, cfg, err);
	return EO_KUBE_OK;
}

/* Builds the config of context (NULL: current-context) from the files, merged as kubectl
 * merges a KUBECONFIG list. */
static eo_kube_err kc_build(struct kc_file *fs, size_t n, const char *context, eo_kube_config **out,
			    struct eo_kube_error *err)
{
	eo_kube_config *cfg = NULL;
	struct kc_file *fctx = NULL, *fcl = NULL, *fuser = NULL;
	yaml_node_t *ctx, *cluster, *user = NULL;
	const char *ctx_name, *cluster_name, *user_name, *server, *ns;
	eo_kube_err rc = EO_KUBE_OK;

	ctx_name = context ? context : kc_current_context(fs, n);
	if (!ctx_name)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: no current-context and no context given");
	ctx = kc_named(fs, n, "contexts", "context", ctx_name, &fctx);
	if (!ctx)
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: context \"%s\" not found",
				    ctx_name);
	cluster_name = map_str(&fctx->doc, ctx, "cluster");
	user_name = map_str(&fctx->doc, ctx, "user");
	ns = map_str(&fctx->doc, ctx, "namespace");
	if (!cluster_name)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "kubeconfig: context \"%s\" has no cluster", ctx_name);
	cluster = kc_named(fs, n, "clusters", "cluster", cluster_name, &fcl);
	if (!cluster)
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: cluster \"%s\" not found",
				    cluster_name);
	if (user_name) {
		user = kc_named(fs, n, "users", "user", user_name, &fuser);
		if (!user)
			return eo_kube_fail(err, EO_KUBE_ECONFIG,
					    "kubeconfig: user \"%s\" not found", user_name);
	}

	cfg = config_alloc();
	if (!cfg)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "config");
	server = map_str(&fcl->doc, cluster, "server");
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
	cfg->insecure = yaml_true(map_str(&fcl->doc, cluster, "insecure-skip-tls-verify"));
	rc = pick_blob(&fcl->doc, cluster, "certificate-authority-data", "certificate-authority",
		       fcl->dir, &cfg->ca, err);
	if (rc != EO_KUBE_OK)
		goto out;
	if (user)
		rc = load_user(&fuser->doc, user, user_name, fuser->dir, cfg, err);
	if (rc != EO_KUBE_OK)
		goto out;
	*out = cfg;
	cfg = NULL;
	eo_kube_error_clear(err);
out:
	eo_kube_config_free(cfg);
	return rc;
}

eo_kube_err eo_kube_config_parse_kubeconfig(const char *yaml, size_t len, const char *base_dir,
					    const char *context, eo_kube_config **out,
					    struct eo_kube_error *err)
{
	struct kc_file f = {.dir = base_dir};
	eo_kube_err rc;

	*out = NULL;
	eo_kube_error_clear(err);
	rc = kc_parse(yaml, len, &f, err);
	if (rc == EO_KUBE_OK && !kc_root(&f))
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: top level is not a mapping");
	if (rc == EO_KUBE_OK)
		rc = kc_build(&f, 1, context, out, err);
	kc_files_free(&f, 1);
	return rc;
}

/* Reads path into *data and its directory into *dir (both freed by the caller; data wiped). */
static eo_kube_err read_kubeconfig(const char *path, char **data, size_t *len, char **dir,
				   struct eo_kube_error *err)
{
	char *slash;
	eo_kube_err rc;

	*dir = NULL;
	rc = eo_kube_read_file(path, EO_KUBE_CONFIG_FILE_MAX, data, len, err);
	if (rc != EO_KUBE_OK)
		return rc;
	*dir = strdup(path);
	if (!*dir)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "kubeconfig path");
	slash = strrchr(*dir, '/');
	if (slash)
		*(slash == *dir ? slash + 1 : slash) = '\0';
	else
		(*dir)[0] = '\0';
	return EO_KUBE_OK;
}

static void free_secret_buf(char *p, size_t len)
{
	if (p) {
		OPENSSL_cleanse(p, len);
		free(p);
	}
}

eo_kube_err eo_kube_config_load_kubeconfig(const char *path, const char *context,
					   eo_kube_config **out, struct eo_kube_error *err)
{
	char *data = NULL, *dir = NULL;
	size_t len = 0;
	eo_kube_err rc;

	*out = NULL;
	rc = read_kubeconfig(path, &data, &len, &dir, err);
	if (rc != EO_KUBE_OK)
		goto out;
	rc = eo_kube_config_parse_kubeconfig(data, len, dir, context, out, err);
	if (rc != EO_KUBE_OK && rc != EO_KUBE_EIO)
		eo_kube_error_prefix(err, path);
out:
	free_secret_buf(data, len);
	free(dir);
	return rc;
}

/* Loads one entry of a list into f (f->dir owned through *dir); a missing file is skipped. */
static eo_kube_err load_list_entry(const char *path, struct kc_file *f, char **dir,
				   struct eo_kube_error *err)
{
	char *data = NULL;
	size_t len = 0;
	eo_kube_err rc;

	if (access(path, F_OK) != 0 && errno == ENOENT)
		return EO_KUBE_OK;
	rc = read_kubeconfig(path, &data, &len, dir, err);
	if (rc == EO_KUBE_OK)
		rc = kc_parse(data, len, f, err);
	f->dir = *dir;
	if (rc == EO_KUBE_OK && f->loaded && yaml_document_get_root_node(&f->doc) && !kc_root(f))
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "kubeconfig: top level is not a mapping");
	if (rc != EO_KUBE_OK && rc != EO_KUBE_EIO)
		eo_kube_error_prefix(err, path);
	free_secret_buf(data, len);
	return rc;
}

eo_kube_err eo_kube_config_load_kubeconfig_list(const char *list, const char *context,
						eo_kube_config **out, struct eo_kube_error *err)
{
	struct kc_file fs[EO_KUBE_CONFIG_LIST_MAX];
	char *dirs[EO_KUBE_CONFIG_LIST_MAX] = {0};
	size_t n = 0, found = 0;
	const char *p = list;
	eo_kube_err rc = EO_KUBE_OK;

	*out = NULL;
	eo_kube_error_clear(err);
	memset(fs, 0, sizeof(fs));
	while (rc == EO_KUBE_OK && *p) {
		size_t l = strcspn(p, ":");
		char *path;

		if (l > 0) {
			if (n == EO_KUBE_CONFIG_LIST_MAX) {
				rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
						  "KUBECONFIG lists more than %d files",
						  EO_KUBE_CONFIG_LIST_MAX);
				break;
			}
			path = strndup(p, l);
			if (!path) {
				rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "KUBECONFIG");
				break;
			}
			rc = load_list_entry(path, &fs[n], &dirs[n], err);
			free(path);
			found += fs[n].loaded;
			n++;
		}
		p += l + (p[l] == ':');
	}
	if (rc == EO_KUBE_OK && found == 0)
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "KUBECONFIG: none of the listed files exists");
	if (rc == EO_KUBE_OK) {
		rc = kc_build(fs, n, context, out, err);
		if (rc != EO_KUBE_OK && rc != EO_KUBE_EIO)
			eo_kube_error_prefix(err, "KUBECONFIG");
	}
	kc_files_free(fs, n);
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
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
	cfg->token_read_ms = eo_mono_ms();
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
		/* A list is merged as kubectl merges it; a single file keeps its own messages. */
		if (strchr(env, ':'))
			return eo_kube_config_load_kubeconfig_list(env, context, out, err);
		return eo_kube_config_load_kubeconfig(env, context, out, err);
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
