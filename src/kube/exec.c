/*
 * kube/exec.c - the ExecCredential protocol of kubeconfig exec plugins (kube/exec.h).
 */
#include "kube/exec.h"
#include "api/timeutil.h"
#include "core/base64.h"

#include <jansson.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void eo__kube_exec_free(struct eo__kube_exec *x)
{
	if (!x)
		return;
	free(x->user);
	free(x->api_version);
	free_strv(x->argv);
	free_strv(x->env);
	free(x->install_hint);
	free(x);
}

void eo__kube_exec_cred_clear(struct eo__kube_exec_cred *c)
{
	if (c->token) {
		OPENSSL_cleanse(c->token, strlen(c->token));
		free(c->token);
	}
	if (c->key) {
		OPENSSL_cleanse(c->key, c->key_len);
		free(c->key);
	}
	free(c->cert);
	memset(c, 0, sizeof(*c));
}

bool eo__kube_exec_version_ok(const char *v)
{
	return v && (strcmp(v, "client.authentication.k8s.io/v1") == 0 ||
		     strcmp(v, "client.authentication.k8s.io/v1beta1") == 0);
}

static json_t *cluster_json(const struct eo__kube_exec_cluster *cl)
{
	json_t *o = json_object();
	char *ca = NULL;

	if (!o)
		return NULL;
	if (json_object_set_new(o, "server", json_string(cl->server ? cl->server : "")) != 0)
		goto fail;
	if (cl->insecure && json_object_set_new(o, "insecure-skip-tls-verify", json_true()) != 0)
		goto fail;
	if (cl->ca_len > 0) {
		ca = eo_base64_encode(cl->ca, cl->ca_len);
		if (!ca ||
		    json_object_set_new(o, "certificate-authority-data", json_string(ca)) != 0)
			goto fail;
		free(ca);
	}
	return o;
fail:
	free(ca);
	json_decref(o);
	return NULL;
}

char *eo__kube_exec_info(const struct eo__kube_exec *x, bool interactive,
			 const struct eo__kube_exec_cluster *cluster)
{
	json_t *o = NULL, *spec = NULL;
	char *s = NULL;

	o = json_pack("{s:s, s:s}", "apiVersion", x->api_version, "kind", "ExecCredential");
	spec = json_pack("{s:b}", "interactive", interactive);
	if (!o || !spec)
		goto out;
	if (x->provide_cluster_info && cluster) {
		json_t *cl = cluster_json(cluster);

		if (!cl || json_object_set_new(spec, "cluster", cl) != 0)
			goto out;
	}
	if (json_object_set(o, "spec", spec) != 0)
		goto out;
	s = json_dumps(o, JSON_COMPACT);
out:
	json_decref(spec);
	json_decref(o);
	return s;
}

/* Wipes a string value of the parsed tree in place (jansson keeps its own copy). */
static void wipe_str(json_t *v)
{
	if (json_is_string(v))
		OPENSSL_cleanse((char *)json_string_value(v), json_string_length(v));
}

static eo_kube_err take_status(const struct eo__kube_exec *x, json_t *st,
			       struct eo__kube_exec_cred *c, struct eo_kube_error *err)
{
	json_t *tok = json_object_get(st, "token");
	json_t *cert = json_object_get(st, "clientCertificateData");
	json_t *key = json_object_get(st, "clientKeyData");
	json_t *exp = json_object_get(st, "expirationTimestamp");
	bool has_cert = json_is_string(cert) && json_string_length(cert) > 0;
	bool has_key = json_is_string(key) && json_string_length(key) > 0;

	if (has_cert != has_key)
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "user \"%s\": exec plugin returned a client %s without its %s",
				    x->user, has_cert ? "certificate" : "key",
				    has_cert ? "key" : "certificate");
	if (json_is_string(tok) && json_string_length(tok) > 0) {
		c->token = strndup(json_string_value(tok), json_string_length(tok));
		if (!c->token)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec token");
	}
	if (has_cert) {
		c->cert_len = json_string_length(cert);
		c->key_len = json_string_length(key);
		c->cert = malloc(c->cert_len);
		c->key = malloc(c->key_len);
		if (!c->cert || !c->key)
			return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec client certificate");
		memcpy(c->cert, json_string_value(cert), c->cert_len);
		memcpy(c->key, json_string_value(key), c->key_len);
	}
	if (!c->token && !has_cert)
		return eo_kube_fail(
		    err, EO_KUBE_ECONFIG,
		    "user \"%s\": exec plugin returned neither a token nor a client "
		    "certificate and key",
		    x->user);
	if (exp && !json_is_null(exp)) {
		/* Only the timestamp's own text can be echoed: it is not a secret. */
		if (!json_is_string(exp) || eo_time_parse(json_string_value(exp), &c->expiry) != 0)
			return eo_kube_fail(err, EO_KUBE_ECONFIG,
					    "user \"%s\": exec plugin returned an invalid "
					    "status.expirationTimestamp",
					    x->user);
	}
	return EO_KUBE_OK;
}

eo_kube_err eo__kube_exec_parse(const struct eo__kube_exec *x, const char *out, size_t len,
				struct eo__kube_exec_cred *cred, struct eo_kube_error *err)
{
	json_t *root, *st;
	const char *v, *k;
	eo_kube_err rc;

	memset(cred, 0, sizeof(*cred));
	/* The parser's own message could quote the output: say only where it broke. */
	root = json_loadb(out, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return eo_kube_fail(err, EO_KUBE_ECONFIG,
				    "user \"%s\": exec plugin did not print an ExecCredential JSON "
				    "object",
				    x->user);
	}
	v = json_string_value(json_object_get(root, "apiVersion"));
	k = json_string_value(json_object_get(root, "kind"));
	st = json_object_get(root, "status");
	if (!k || strcmp(k, "ExecCredential") != 0) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "user \"%s\": exec plugin output is not kind ExecCredential",
				  x->user);
	} else if (!v || strcmp(v, x->api_version) != 0) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "user \"%s\": exec plugin is configured with apiVersion %s but "
				  "returned %.80s",
				  x->user, x->api_version,
				  v && eo__kube_exec_version_ok(v) ? v : "another one");
	} else if (!json_is_object(st)) {
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG,
				  "user \"%s\": exec plugin returned no status", x->user);
	} else {
		rc = take_status(x, st, cred, err);
	}
	if (json_is_object(st)) {
		wipe_str(json_object_get(st, "token"));
		wipe_str(json_object_get(st, "clientKeyData"));
	}
	json_decref(root);
	if (rc != EO_KUBE_OK)
		eo__kube_exec_cred_clear(cred);
	return rc;
}

/* environ minus the names x->env sets, then x->env, then KUBERNETES_EXEC_INFO. */
static char **build_env(const struct eo__kube_exec *x, const char *info)
{
	size_t n = 0, m = 0, k = 0;
	char **envp;

	for (char **e = environ; e && *e; e++)
		n++;
	for (char **e = x->env; e && *e; e++)
		m++;
	envp = calloc(n + m + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	for (char **e = environ; e && *e; e++) {
		size_t nl = strcspn(*e, "=");
		bool shadowed = strncmp(*e, "KUBERNETES_EXEC_INFO=", 21) == 0;

		for (char **f = x->env; !shadowed && f && *f; f++)
			shadowed = strncmp(*f, *e, nl + 1) == 0;
		if (!shadowed)
			envp[k++] = *e;
	}
	for (char **e = x->env; e && *e; e++)
		envp[k++] = *e;
	envp[k++] = (char *)info;
	envp[k] = NULL;
	return envp;
}

static bool decide_interactive(const struct eo__kube_exec *x, bool *interactive,
			       struct eo_kube_error *err)
{
	bool tty = isatty(STDIN_FILENO) == 1;

	*interactive = x->mode != EO_KUBE_EXEC_NEVER && tty;
	if (x->mode == EO_KUBE_EXEC_ALWAYS && !tty) {
		eo_kube_fail(err, EO_KUBE_ECONFIG,
			     "user \"%s\": exec plugin has interactiveMode Always but stdin is not "
			     "a terminal",
			     x->user);
		return false;
	}
	return true;
}

eo_kube_err eo__kube_exec_run(const struct eo__kube_exec *x,
			      const struct eo__kube_exec_cluster *cluster,
			      struct eo__kube_exec_cred *cred, struct eo_kube_error *err)
{
	char *json = NULL, *info = NULL, *out = NULL;
	char **envp = NULL;
	size_t len = 0;
	int code = 0;
	bool interactive = false;
	eo_kube_err rc;

	memset(cred, 0, sizeof(*cred));
	if (!decide_interactive(x, &interactive, err))
		return EO_KUBE_ECONFIG;
	json = eo__kube_exec_info(x, interactive, cluster);
	if (!json || asprintf(&info, "KUBERNETES_EXEC_INFO=%s", json) < 0) {
		info = NULL;
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "exec info");
		goto out;
	}
	envp = build_env(x, info);
	if (!envp) {
		rc = eo_kube_fail(err, EO_KUBE_ENOMEM, "exec environment");
		goto out;
	}
	rc = eo__kube_exec_launch(x->argv, envp, interactive, EO_KUBE_EXEC_OUT_MAX,
				  EO_KUBE_EXEC_TIMEOUT_MS, &out, &len, &code, err);
	if (rc == EO_KUBE_OK && code != 0)
		rc = eo_kube_fail(err, EO_KUBE_ECONFIG, "exit status %d", code);
	if (rc != EO_KUBE_OK) {
		char pre[256];

		snprintf(pre, sizeof(pre), "user \"%s\": exec plugin %s", x->user, x->argv[0]);
		eo_kube_error_prefix(err, pre);
		if (err && x->install_hint && rc != EO_KUBE_ENOMEM) {
			size_t ml = strlen(err->message);

			snprintf(err->message + ml, sizeof(err->message) - ml, " (%s)",
				 x->install_hint);
		}
		goto out;
	}
	rc = eo__kube_exec_parse(x, out, len, cred, err);
out:
	if (out) {
		OPENSSL_cleanse(out, len);
		free(out);
	}
	free(envp);
	free(info);
	free(json);
	return rc;
}
