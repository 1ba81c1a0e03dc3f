/*
 * Fuzz target: kubeconfig parsing (src/kube/config.c over libyaml), including inline base64
 * blobs and files named by the kubeconfig.
 *
 * Input: byte 0 bit 0 picks the context (current-context, or the context named "fuzz"); the
 * rest is the kubeconfig. Relative paths resolve against a scratch directory holding a CA
 * file, a token file and an empty file; fopen is wrapped (linked with --wrap=fopen) so that
 * nothing outside that directory is ever opened (no /dev/tty, no FIFO that would block).
 *
 * An exec credential plugin is never started: eo__kube_exec_launch is wrapped too (linked with
 * --wrap=eo__kube_exec_launch). The stand-in answers with the value of the FUZZ_OUT entry of the
 * environment it is given (the exec section's env, so the input chooses the plugin's output) and
 * exits with FUZZ_RC.
 *
 * Invariants: success gives a server URL without a trailing slash and a namespace; a client
 * certificate comes with a key; error messages never carry the value of a token or of an
 * inline certificate or key of the input (found with libyaml's event parser; values that also
 * appear as another scalar, a name for instance, are not counted). For an exec plugin: its
 * argv[0] is set; KUBERNETES_EXEC_INFO is in its environment once, an ExecCredential of the
 * section's apiVersion with a boolean spec.interactive; a token it returned is the token handed
 * out; its token and key never appear in an error message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <jansson.h>
#include <yaml.h>

#include "kube/config.h"
#include "kube/err.h"
#include "kube/exec.h"

#include "fuzz.h"

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

static char dir[64];

FILE *__wrap_fopen(const char *path, const char *mode)
{
	size_t n = strlen(dir);

	/* Only files directly in the scratch directory, and no "..". */
	if (n == 0 || strncmp(path, dir, n) != 0 || path[n] != '/' || strstr(path, "..") != NULL ||
	    strchr(path + n + 1, '/') != NULL) {
		errno = EACCES;
		return NULL;
	}
	return __real_fopen(path, mode);
}

/* What the stand-in plugin handed out during the current input. */
static struct {
	int runs;
	char *token; /* status.token of the last answer */
	char *secrets[8];
	size_t n;
} plug;

static void plug_reset(void)
{
	free(plug.token);
	for (size_t i = 0; i < plug.n; i++)
		free(plug.secrets[i]);
	memset(&plug, 0, sizeof(plug));
}

static const char *env_get(char *const envp[], const char *name, int *count)
{
	size_t n = strlen(name);
	const char *v = NULL;

	*count = 0;
	for (size_t i = 0; envp[i]; i++) {
		if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=') {
			v = envp[i] + n + 1;
			(*count)++;
		}
	}
	return v;
}

static void check_exec_info(const char *info, int count)
{
	json_t *j, *spec;
	const char *v, *k;

	FUZZ_CHECK(count == 1, "KUBERNETES_EXEC_INFO set %d times", count);
	j = json_loads(info, 0, NULL);
	FUZZ_CHECK(json_is_object(j), "KUBERNETES_EXEC_INFO is not a JSON object: %s", info);
	v = json_string_value(json_object_get(j, "apiVersion"));
	k = json_string_value(json_object_get(j, "kind"));
	spec = json_object_get(j, "spec");
	FUZZ_CHECK(eo__kube_exec_version_ok(v), "exec info apiVersion: %s", info);
	FUZZ_CHECK(k && strcmp(k, "ExecCredential") == 0, "exec info kind: %s", info);
	FUZZ_CHECK(json_is_boolean(json_object_get(spec, "interactive")),
		   "exec info spec.interactive: %s", info);
	json_decref(j);
}

/* Remembers the token and key of an answer as secrets (long enough to be told apart). */
static void note_answer(const char *out)
{
	json_t *j = json_loads(out, 0, NULL);
	json_t *st = json_object_get(j, "status");
	const char *tok = json_string_value(json_object_get(st, "token"));
	const char *keys[] = {tok, json_string_value(json_object_get(st, "clientKeyData"))};

	free(plug.token);
	plug.token = tok ? strdup(tok) : NULL;
	for (size_t i = 0; i < 2; i++)
		if (keys[i] && strlen(keys[i]) >= 16 && plug.n < 8)
			plug.secrets[plug.n++] = strdup(keys[i]);
	json_decref(j);
}

eo_kube_err __wrap_eo__kube_exec_launch(char *const argv[], char *const envp[], bool interactive,
					size_t max, long timeout_ms, char **out, size_t *len,
					int *exit_code, struct eo_kube_error *err);
eo_kube_err __wrap_eo__kube_exec_launch(char *const argv[], char *const envp[], bool interactive,
					size_t max, long timeout_ms, char **out, size_t *len,
					int *exit_code, struct eo_kube_error *err)
{
	const char *answer, *rc, *info;
	int count;

	(void)interactive;
	(void)timeout_ms;
	FUZZ_CHECK(argv[0] != NULL && argv[0][0] != '\0', "exec without a command");
	info = env_get(envp, "KUBERNETES_EXEC_INFO", &count);
	check_exec_info(info ? info : "", count);
	answer = env_get(envp, "FUZZ_OUT", &count);
	rc = env_get(envp, "FUZZ_RC", &count);
	plug.runs++;
	if (!answer)
		return eo_kube_fail(err, EO_KUBE_ECONFIG, "cannot be started: %s",
				    strerror(ENOENT));
	if (strlen(answer) > max)
		return eo_kube_fail(err, EO_KUBE_ETOOLARGE, "printed more than %zu bytes", max);
	note_answer(answer);
	*out = strdup(answer);
	if (!*out)
		return eo_kube_fail(err, EO_KUBE_ENOMEM, "exec output");
	*len = strlen(answer);
	*exit_code = rc ? atoi(rc) : 0;
	return EO_KUBE_OK;
}

static void put(const char *name, const char *text)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = __real_fopen(p, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/eo-fuzz-kubeconfig.XXXXXX");
	if (mkdtemp(dir) == NULL)
		abort();
	put("ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
	put("token", "  s3cr3t-file-token\n");
	put("empty", "");
	return 0;
}

static void cleanup(void) __attribute__((destructor));
static void cleanup(void)
{
	const char *names[] = {"ca.pem", "token", "empty"};
	char p[128];

	if (dir[0] == '\0')
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

#define MAX_SECRETS 8

struct secrets {
	char *v[MAX_SECRETS];
	size_t n;
};

static bool secret_key(const char *k)
{
	return strcmp(k, "token") == 0 || strcmp(k, "client-key-data") == 0 ||
	       strcmp(k, "client-certificate-data") == 0;
}

/*
 * The values of the secret keys of the document, minus those that also appear as another
 * scalar. Only values that look like key material or tokens (16 bytes or more, no white
 * space) count, so that a fixed word of an error message is not taken for a secret. Scalars
 * alternate key/value in mappings only; a simple parity walk per mapping level is enough for the
 * scalars the config reads.
 */
static void find_secrets(const char *yaml, size_t len, struct secrets *s)
{
	yaml_parser_t p;
	yaml_event_t ev;
	char *others[64];
	size_t n_others = 0;
	bool after_secret_key = false;

	memset(s, 0, sizeof(*s));
	if (!yaml_parser_initialize(&p))
		return;
	yaml_parser_set_input_string(&p, (const unsigned char *)yaml, len);
	for (;;) {
		if (!yaml_parser_parse(&p, &ev))
			break;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_SCALAR_EVENT) {
			const char *v = (const char *)ev.data.scalar.value;

			if (after_secret_key && strlen(v) >= 16 && strpbrk(v, " \t\r\n") == NULL &&
			    s->n < MAX_SECRETS)
				s->v[s->n++] = strdup(v);
			else if (n_others < 64)
				others[n_others++] = strdup(v);
			after_secret_key = !after_secret_key && secret_key(v);
		} else {
			after_secret_key = false;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	for (size_t i = 0; i < s->n; i++) {
		for (size_t j = 0; j < n_others && s->v[i] != NULL; j++) {
			if (others[j] != NULL && strstr(others[j], s->v[i]) != NULL) {
				free(s->v[i]);
				s->v[i] = NULL;
			}
		}
	}
	for (size_t j = 0; j < n_others; j++)
		free(others[j]);
}

static void check_no_secret(const struct secrets *s, const char *message)
{
	for (size_t i = 0; i < s->n; i++)
		FUZZ_CHECK(s->v[i] == NULL || strstr(message, s->v[i]) == NULL,
			   "secret value in the message: %s", message);
}

/* The plugin's token and key, unless the input also has them outside its answer (a user name
 * or a command may legitimately be quoted). */
static void check_no_plugin_secret(const char *yaml, const char *message)
{
	for (size_t i = 0; i < plug.n; i++) {
		const char *first = strstr(yaml, plug.secrets[i]);
		bool elsewhere = first && strstr(first + 1, plug.secrets[i]) != NULL;

		FUZZ_CHECK(elsewhere || strstr(message, plug.secrets[i]) == NULL,
			   "exec plugin secret in the message: %s", message);
	}
}

static void free_secrets(struct secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eo_kube_error err;
	struct secrets sec;
	eo_kube_config *cfg = NULL;
	const char *ctx;
	char *yaml;
	eo_kube_err rc;

	if (size < 1)
		return 0;
	ctx = data[0] & 1 ? "fuzz" : NULL;
	yaml = fz_strdup(data + 1, size - 1);
	find_secrets(yaml, size - 1, &sec);
	memset(&err, 0xa5, sizeof(err)); /* junk: a failure must set the message */
	rc = eo_kube_config_parse_kubeconfig(yaml, size - 1, dir, ctx, &cfg, &err);
	if (rc != EO_KUBE_OK) {
		FUZZ_CHECK(cfg == NULL, "failed parse returned a config");
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL,
			   "message not terminated");
		check_no_secret(&sec, err.message);
	} else {
		const char *server = eo_kube_config_server(cfg);
		size_t ca_len = 0, cert_len = 0, key_len = 0;
		char *token = NULL;

		FUZZ_CHECK(cfg != NULL, "success without a config");
		FUZZ_CHECK(server != NULL && server[0] != '\0', "no server");
		FUZZ_CHECK(server[strlen(server) - 1] != '/', "server %s ends in '/'", server);
		FUZZ_CHECK(eo_kube_config_namespace(cfg) != NULL, "no namespace");
		(void)eo_kube_config_ca(cfg, &ca_len);
		(void)eo_kube_config_client_cert(cfg, &cert_len);
		(void)eo_kube_config_client_key(cfg, &key_len);
		FUZZ_CHECK((cert_len == 0) == (key_len == 0), "certificate without key");
		(void)eo_kube_config_insecure(cfg);
		eo_kube_config_token_invalidate(cfg);
		rc = eo_kube_config_token(cfg, &token, &err);
		if (rc != EO_KUBE_OK) {
			check_no_secret(&sec, err.message);
			check_no_plugin_secret(yaml, err.message);
		} else if (token != NULL) {
			FUZZ_CHECK(token[0] != '\0', "empty token");
		}
		if (rc == EO_KUBE_OK && plug.runs > 0 && plug.token && plug.token[0])
			FUZZ_CHECK(token && strcmp(token, plug.token) == 0,
				   "the token handed out is not the plugin's");
		(void)eo_kube_config_client_cert(cfg, &cert_len);
		(void)eo_kube_config_client_key(cfg, &key_len);
		FUZZ_CHECK((cert_len == 0) == (key_len == 0), "exec certificate without key");
		free(token);
		eo_kube_config_free(cfg);
	}
	free_secrets(&sec);
	plug_reset();
	free(yaml);
	return 0;
}
