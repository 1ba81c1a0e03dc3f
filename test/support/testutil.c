/*
 * support/testutil.c - helpers shared by the unit tests (testutil.h).
 */
#include "support/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

json_t *tu_json(const char *text)
{
	json_error_t err;
	json_t *v = json_loads(text, 0, &err);

	if (v == NULL)
		fail_msg("bad test JSON (%s, column %d): %s", err.text, err.column, text);
	return v;
}

json_t *tu_jsonq(const char *text)
{
	char *s = strdup(text);
	json_t *v;

	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	v = tu_json(s);
	free(s);
	return v;
}

void tu_assert_json_equal(const json_t *got, const json_t *want, const char *what)
{
	char *g, *w;

	if (got == NULL || want == NULL) {
		if (got != want)
			fail_msg("%s: %s is NULL", what, got == NULL ? "got" : "want");
		return;
	}
	if (json_equal(got, want))
		return;
	g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
	w = json_dumps(want, JSON_SORT_KEYS | JSON_COMPACT);
	print_error("%s differs:\n got  %s\n want %s\n", what, g ? g : "?", w ? w : "?");
	free(g);
	free(w);
	fail_msg("%s: JSON differs", what);
}

void tu_assert_json_text_equal(const char *got, const char *want)
{
	json_t *g = tu_json(got), *w = tu_json(want);

	tu_assert_json_equal(g, w, "JSON text");
	json_decref(g);
	json_decref(w);
}

int64_t tu_clock_now(void *ud)
{
	return *(int64_t *)ud;
}

static atomic_int alloc_count, alloc_fail_at;

static void *failing_malloc(size_t n)
{
	int at = atomic_load(&alloc_fail_at);

	if (atomic_fetch_add(&alloc_count, 1) + 1 == at)
		return NULL;
	return malloc(n);
}

void tu_json_alloc_fail_at(int n)
{
	atomic_store(&alloc_count, 0);
	atomic_store(&alloc_fail_at, n);
	if (n > 0)
		json_set_alloc_funcs(failing_malloc, free);
	else
		json_set_alloc_funcs(malloc, free);
}

int tu_json_alloc_count(void)
{
	return atomic_load(&alloc_count);
}

char *tu_status_body(int code, const char *reason, const char *message)
{
	json_t *j =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
		      "status", code < 300 ? "Success" : "Failure", "reason", reason ? reason : "",
		      "message", message ? message : "", "code", code);
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return s;
}

void tu_write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	if (dir != NULL)
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	else
		snprintf(path, sizeof(path), "%s", name);
	f = fopen(path, "w");
	if (f == NULL)
		fail_msg("cannot write %s", path);
	if (fputs(text, f) == EOF) {
		fclose(f);
		fail_msg("cannot write %s", path);
	}
	if (fclose(f) != 0)
		fail_msg("cannot write %s", path);
}

void tu_golden(const char *path, const json_t *obj)
{
	json_error_t e;
	json_t *want = NULL;

	assert_non_null(obj);
	if (getenv("EO_UPDATE_GOLDEN") != NULL) {
		assert_int_equal(json_dump_file(obj, path, JSON_INDENT(2) | JSON_SORT_KEYS), 0);
		return;
	}
	want = json_load_file(path, 0, &e);
	if (want == NULL)
		fail_msg("cannot read %s: %s", path, e.text);
	if (!json_equal(want, obj)) {
		char *got = json_dumps(obj, JSON_INDENT(2) | JSON_SORT_KEYS);

		fprintf(stderr, "%s differs; got:\n%s\n", path, got ? got : "(null)");
		free(got);
		json_decref(want);
		fail_msg("golden mismatch: %s", path);
	}
	json_decref(want);
}

/* The container's field, else the Pod's. */
static const json_t *sc_field(const json_t *ctr_sc, const json_t *pod_sc, const char *key)
{
	const json_t *v = json_object_get(ctr_sc, key);

	return v != NULL ? v : json_object_get(pod_sc, key);
}

static void assert_restricted_container(const json_t *ctr, const json_t *pod_sc, const char *what)
{
	const char *name = json_string_value(json_object_get(ctr, "name"));
	const json_t *sc = json_object_get(ctr, "securityContext");
	const json_t *drop = json_object_get(json_object_get(sc, "capabilities"), "drop");
	const json_t *seccomp = sc_field(sc, pod_sc, "seccompProfile");
	bool drops_all = false;
	size_t i;
	json_t *v;

	name = name ? name : "(unnamed)";
	if (!json_is_true(sc_field(sc, pod_sc, "runAsNonRoot")))
		fail_msg("%s container %s: runAsNonRoot is not true", what, name);
	if (!json_is_false(json_object_get(sc, "allowPrivilegeEscalation")))
		fail_msg("%s container %s: allowPrivilegeEscalation is not false", what, name);
	if (!json_is_true(json_object_get(sc, "readOnlyRootFilesystem")))
		fail_msg("%s container %s: readOnlyRootFilesystem is not true", what, name);
	json_array_foreach(drop, i, v) drops_all |=
	    json_string_value(v) != NULL && strcmp(json_string_value(v), "ALL") == 0;
	if (!drops_all)
		fail_msg("%s container %s: capabilities do not drop ALL", what, name);
	if (json_object_get(json_object_get(sc, "capabilities"), "add") != NULL)
		fail_msg("%s container %s: adds capabilities", what, name);
	if (json_is_true(json_object_get(sc, "privileged")))
		fail_msg("%s container %s: privileged", what, name);
	if (json_string_value(json_object_get(seccomp, "type")) == NULL ||
	    strcmp(json_string_value(json_object_get(seccomp, "type")), "RuntimeDefault") != 0)
		fail_msg("%s container %s: seccompProfile is not RuntimeDefault", what, name);
}

void tu_assert_restricted_pod_spec(const json_t *pod_spec, const char *what)
{
	const json_t *pod_sc = json_object_get(pod_spec, "securityContext");
	const json_t *ctrs = json_object_get(pod_spec, "containers");
	size_t i;
	json_t *c;

	if (json_array_size(ctrs) == 0)
		fail_msg("%s: no containers", what);
	if (json_is_true(json_object_get(pod_spec, "hostNetwork")) ||
	    json_is_true(json_object_get(pod_spec, "hostPID")) ||
	    json_is_true(json_object_get(pod_spec, "hostIPC")))
		fail_msg("%s: shares a host namespace", what);
	json_array_foreach(ctrs, i, c) assert_restricted_container(c, pod_sc, what);
	json_array_foreach(json_object_get(pod_spec, "initContainers"), i, c)
	    assert_restricted_container(c, pod_sc, what);
}

void tu_validate_cases(tu_validate_fn *validate, const struct tu_vcase *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tu_vcase *c = &cases[i];
		json_t *obj = tu_jsonq(c->obj);
		json_t *old = c->old ? tu_jsonq(c->old) : NULL;
		json_t *copy = json_deep_copy(obj);
		char msg[512] = "untouched";
		int rc = validate(obj, old, msg, sizeof(msg));

		if (c->msg == NULL && (rc != 0 || msg[0] != '\0'))
			fail_msg("%s: rejected: %s", c->what, msg);
		if (c->msg != NULL && (rc != -1 || strncmp(msg, c->msg, strlen(c->msg)) != 0))
			fail_msg("%s: rc %d msg \"%s\", want \"%s\"", c->what, rc, msg, c->msg);
		/* Validation never modifies its input. */
		if (!json_equal(obj, copy))
			fail_msg("%s: input modified", c->what);
		/* A NULL message buffer is fine. */
		if (validate(obj, old, NULL, 0) != rc)
			fail_msg("%s: without a message buffer rc differs", c->what);
		json_decref(copy);
		json_decref(obj);
		json_decref(old);
	}
}
