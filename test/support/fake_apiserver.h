/*
 * support/fake_apiserver.h - an in-process HTTP server (libmicrohttpd) that
 * plays the apiserver in tests.
 *
 * The test supplies a handler that sees each request (method, decoded path,
 * raw request URI, query arguments, headers, body) and fills a response.
 * A response may turn into a stream that stays open after its body and then
 * carries lines the test pushes with eo_kube_fake_push(), which is how watch
 * tests feed events; eo_kube_fake_close_streams() ends the open streams, as
 * an apiserver ending a watch would.
 *
 * The handler runs on the server's connection threads, possibly several at
 * once; it must do its own locking for shared state.
 */
#ifndef EO_TEST_FAKE_APISERVER_H
#define EO_TEST_FAKE_APISERVER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct eo_kube_fake eo_kube_fake;

struct eo_kube_fake_request {
	const char *method;
	const char *path;    /* decoded path, no query */
	const char *raw_uri; /* as sent: path plus escaped query */
	const char *body;    /* NUL-terminated; "" when none */
	size_t body_len;
	void *conn_; /* internal */
};

struct eo_kube_fake_response {
	int status;		  /* 200 when left 0 */
	char *body;		  /* heap string the server frees; NULL = empty */
	const char *content_type; /* static; NULL = application/json */
	bool stream;		  /* keep open after body, deliver pushed lines */
};

typedef void (*eo_kube_fake_handler)(void *ud, const struct eo_kube_fake_request *rq,
				     struct eo_kube_fake_response *rs);

/* Starts a server on 127.0.0.1 and an ephemeral port. NULL on failure. */
eo_kube_fake *eo_kube_fake_start(eo_kube_fake_handler handler, void *ud);

/* Ends all streams and stops the server (joins its threads). NULL is fine. */
void eo_kube_fake_stop(eo_kube_fake *f);

/* "http://127.0.0.1:<port>" (borrowed). */
const char *eo_kube_fake_url(const eo_kube_fake *f);

/* Decoded query argument / request header of rq, or NULL. */
const char *eo_kube_fake_arg(const struct eo_kube_fake_request *rq, const char *key);
const char *eo_kube_fake_header(const struct eo_kube_fake_request *rq, const char *key);

/* Appends text to every stream that is open now or opens later in this
 * generation (streams see what was pushed after they opened). */
void eo_kube_fake_push(eo_kube_fake *f, const char *text);

/* Ends the streams open now (they finish sending what was pushed). */
void eo_kube_fake_close_streams(eo_kube_fake *f);

/* Number of streams currently open. */
int eo_kube_fake_open_streams(eo_kube_fake *f);

#endif
