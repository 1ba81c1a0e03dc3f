/*
 * Fuzz target: the Status parsers of the watch path and of failed requests: eo_kube_watch_error
 * (the Status of a watch ERROR event, src/kube/watch.c) and eo_kube_status_parse (err.c). The
 * stream itself is decoded by kube/objstream.c, fuzzed by fuzz_objstream.
 *
 * Input: bytes 0 and 1 are ignored (kept so the committed inputs of the former line-splitter
 * target still replay); the rest is split on '\n', and every line is taken as the body of a
 * failed request and, when it is a JSON object, as the Status of an ERROR event.
 *
 * Invariants: neither maps to success; the reason and message are NUL-terminated.
 */
#include <jansson.h>

#include "kube/err.h"
#include "kube/watch.h"

#include "fuzz.h"

static void check_line(const char *line, size_t len)
{
	struct eo_kube_error err;
	json_t *obj = json_loadb(line, len, 0, NULL);
	eo_kube_err rc;

	if (json_is_object(obj)) {
		memset(&err, 0xa5, sizeof(err)); /* junk: every field must be set by the call */
		rc = eo_kube_watch_error(obj, &err);
		FUZZ_CHECK(rc != EO_KUBE_OK, "ERROR event mapped to OK");
		FUZZ_CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL,
			   "message not terminated");
	}
	json_decref(obj);
	memset(&err, 0xa5, sizeof(err));
	rc = eo_kube_status_parse(422, line, len, &err);
	FUZZ_CHECK(rc != EO_KUBE_OK, "a 422 mapped to OK");
	FUZZ_CHECK(memchr(err.reason, '\0', sizeof(err.reason)) != NULL, "reason not terminated");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	size_t b = 2;

	if (size < 2)
		return 0;
	while (b <= size) {
		const char *nl = b < size ? memchr(p + b, '\n', size - b) : NULL;
		size_t e = nl ? (size_t)(nl - p) : size;

		check_line(p + b, e - b);
		b = e + 1;
	}
	return 0;
}
