/*
 * kube/client.h - a small, thread-safe Kubernetes REST client over libcurl.
 *
 * Objects are jansson trees; there are no per-type structs. A resource is
 * addressed by struct eo_kube_resource. Every call is blocking, carries a
 * timeout, uses HTTP/1.1 and caps the response body.
 *
 * Ownership conventions (jansson style):
 *   - json_t arguments are borrowed: the client never keeps or frees them.
 *   - json_t **out results are new references the caller json_decref()s.
 *     Passing out == NULL discards the response body.
 *   - On failure *out is NULL and err (if not NULL) holds the HTTP status
 *     and the Kubernetes Status reason / message / code.
 *
 * Thread safety: one client may be used from any number of threads at once.
 * Each call takes an easy handle from a small pool (a handle, and with it
 * its kept-alive connections, is used by one thread at a time); TLS sessions
 * and DNS results are shared through a curl share handle.
 */
#ifndef EO_KUBE_CLIENT_H
#define EO_KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/config.h"
#include "kube/err.h"
#include "kube/objstream.h"

typedef struct eo_kube_client eo_kube_client;

/*
 * Where an object or a collection lives. All strings are borrowed.
 *   gv     "v1" (core group, served under /api) or "group/version"
 *          (served under /apis), e.g. "apps/v1".
 *   plural resource name, e.g. "pods".
 *   ns     namespace; NULL or "" for cluster-scoped resources and for lists
 *          across all namespaces.
 *   name   object name; NULL for the collection.
 */
struct eo_kube_resource {
	const char *gv;
	const char *plural;
	const char *ns;
	const char *name;
};

/* r with its namespace and name set (a resource constant stays a template). */
static inline struct eo_kube_resource eo_kube_res_at(struct eo_kube_resource r, const char *ns,
						     const char *name)
{
	r.ns = ns;
	r.name = name;
	return r;
}

#define EO_KUBE_CLIENT_POOL	   8 /* idle curl handles kept for reuse */
#define EO_KUBE_DEFAULT_TIMEOUT_MS 30000L
#define EO_KUBE_DEFAULT_MAX_BODY   (16u << 20)
/* Cap on a merged LIST: the pages' compact JSON may add up to this many bytes. */
#define EO_KUBE_LIST_MAX_BYTES (256u << 20)

struct eo_kube_client_opts {
	long timeout_ms;	 /* whole request; 0 = EO_KUBE_DEFAULT_TIMEOUT_MS */
	long connect_timeout_ms; /* 0 = 10 s */
	size_t max_body;	 /* response cap; 0 = EO_KUBE_DEFAULT_MAX_BODY */
	size_t max_list;	 /* merged LIST cap; 0 = EO_KUBE_LIST_MAX_BYTES */
	const char *user_agent;	 /* copied; NULL = "etcd-operator" */
	/*
	 * Honour the proxy environment (https_proxy, no_proxy...), as kubectl does: for the
	 * plugin. false (the operator): no proxy, whatever the environment says.
	 */
	bool proxy_from_env;
};

/*
 * Creates a client. The client takes ownership of cfg (also on failure) and
 * frees it in eo_kube_client_free(). opts may be NULL.
 */
eo_kube_err eo_kube_client_new(eo_kube_config *cfg, const struct eo_kube_client_opts *opts,
			       eo_kube_client **out, struct eo_kube_error *err);
void eo_kube_client_free(eo_kube_client *c);

/* The client's config (borrowed). */
eo_kube_config *eo_kube_client_config(eo_kube_client *c);

/*
 * Sets the whole-request timeout of the calls that start from now on (values below 1 ms
 * become 1 ms). Meant for a client that one thread uses for one purpose, such as the leader
 * elector, which bounds each request by the time left before its lease expires.
 */
void eo_kube_client_set_timeout(eo_kube_client *c, long timeout_ms);

/*
 * GET an API path that is not an object, e.g. the discovery document "/apis/cert-manager.io/v1"
 * (served to every authenticated user). EO_KUBE_ENOTFOUND when the path is not served.
 */
eo_kube_err eo_kube_get_path(eo_kube_client *c, const char *path, json_t **out,
			     struct eo_kube_error *err);

/* GET one object. */
eo_kube_err eo_kube_get(eo_kube_client *c, const struct eo_kube_resource *r, json_t **out,
			struct eo_kube_error *err);

struct eo_kube_list_opts {
	const char *label_selector;   /* NULL = none */
	const char *field_selector;   /* NULL = none */
	long limit;		      /* page size; 0 = no paging */
	const char *resource_version; /* NULL = most recent */
	size_t max_object; /* per-item cap; 0 = EO_KUBE_OBJECT_MAX (eo_kube_list: max_body) */
	bool keep_all;	   /* keep managedFields etc. (see kube/objstream.h) */
};

/*
 * LIST a collection page by page, decoding one item at a time (kube/objstream.h): cb gets
 * EO_KUBE_OS_ITEM for each object (borrowed for the call; managedFields and the
 * last-applied-configuration annotation dropped unless keep_all), EO_KUBE_OS_SKIP for an
 * item over max_object bytes or one that does not decode (the list goes on), EO_KUBE_OS_END
 * with each page's envelope (its metadata.resourceVersion is the list's after the last page)
 * and EO_KUBE_OS_RESTART when an expired continue token (410) makes the list start over once
 * without paging: everything seen before is void. No page has to fit in memory as a whole.
 * cb returning nonzero stops the list with ECANCELED. opts may be NULL.
 */
typedef eo_kube_objstream_cb eo_kube_list_cb;
eo_kube_err eo_kube_list_each(eo_kube_client *c, const struct eo_kube_resource *r,
			      const struct eo_kube_list_opts *opts, eo_kube_list_cb cb, void *ud,
			      struct eo_kube_error *err);

/*
 * LIST a collection, following `continue` tokens until the last page. *out
 * is one list object: apiVersion/kind of the response, metadata of the last
 * page (its resourceVersion is the list's) and all pages' items merged in
 * order. If a continue token expires (410) the list restarts once without
 * paging. A list whose items add up to more than EO_KUBE_LIST_MAX_BYTES of
 * compact JSON (the client's max_list) fails with EO_KUBE_ETOOLARGE, as does an
 * item over max_body (opts->max_object when set); objects are kept whole
 * (keep_all). Built on eo_kube_list_each(), which the informer uses.
 * opts may be NULL.
 */
eo_kube_err eo_kube_list(eo_kube_client *c, const struct eo_kube_resource *r,
			 const struct eo_kube_list_opts *opts, json_t **out,
			 struct eo_kube_error *err);

/*
 * POST obj to the collection of r (r->name is ignored; r->ns NULL means
 * obj's metadata.namespace). metadata.generateName works as usual; the
 * name the server picked is in *out. 409 AlreadyExists gives EO_KUBE_EEXISTS.
 */
eo_kube_err eo_kube_create(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
			   json_t **out, struct eo_kube_error *err);

/*
 * PUT obj (a full object). r->name / r->ns default to obj's metadata. When
 * obj carries metadata.resourceVersion the server rejects a stale write with
 * 409, returned as EO_KUBE_ECONFLICT: a normal outcome (re-read and retry).
 */
eo_kube_err eo_kube_update(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
			   json_t **out, struct eo_kube_error *err);

/* PUT obj to the status subresource; same rules as eo_kube_update(). */
eo_kube_err eo_kube_update_status(eo_kube_client *c, const struct eo_kube_resource *r, json_t *obj,
				  json_t **out, struct eo_kube_error *err);

/* JSON merge patch (application/merge-patch+json) on the object / on its
 * status subresource. A patch may carry metadata.resourceVersion as a
 * precondition. */
eo_kube_err eo_kube_patch(eo_kube_client *c, const struct eo_kube_resource *r, json_t *patch,
			  json_t **out, struct eo_kube_error *err);
eo_kube_err eo_kube_patch_status(eo_kube_client *c, const struct eo_kube_resource *r, json_t *patch,
				 json_t **out, struct eo_kube_error *err);

struct eo_kube_delete_opts {
	const char *propagation_policy; /* "Foreground", "Background", "Orphan"; NULL = default */
	const char *uid;		/* precondition; NULL = none */
	const char *resource_version;	/* precondition; NULL = none */
	long grace_period_seconds;	/* < 0 = server default */
};

/* DELETE one object. A precondition mismatch gives EO_KUBE_ECONFLICT, a
 * missing object EO_KUBE_ENOTFOUND. opts may be NULL. */
eo_kube_err eo_kube_delete(eo_kube_client *c, const struct eo_kube_resource *r,
			   const struct eo_kube_delete_opts *opts, struct eo_kube_error *err);

/*
 * Evicts one Pod through the Eviction API: POST a policy/v1 Eviction to
 * .../namespaces/<ns>/pods/<name>/eviction, with deleteOptions.preconditions.uid when uid is
 * not NULL. The apiserver checks the PodDisruptionBudgets that select the Pod atomically with
 * other evictions (a node drain): a disruption they do not allow is refused with 429
 * (EO_KUBE_ETHROTTLED, err->message says which budget), a normal outcome to retry later, never
 * retried here. A missing Pod gives EO_KUBE_ENOTFOUND, another Pod under that name (uid
 * mismatch) EO_KUBE_ECONFLICT. ns and name are required.
 */
eo_kube_err eo_kube_evict(eo_kube_client *c, const char *ns, const char *name, const char *uid,
			  struct eo_kube_error *err);

/*
 * Builds "<server>/api[s]/<gv>[/namespaces/<ns>]/<plural>[/<name>[/<sub>]]"
 * followed by a query built from params: a NULL-terminated array of
 * key, value pairs where pairs with a NULL value are skipped. Path segments
 * and query values are percent-encoded. Returns a heap string the caller
 * frees, or NULL on bad arguments / no memory.
 */
char *eo_kube_url(const char *server, const struct eo_kube_resource *r, const char *subresource,
		  const char *const *params);

/* Percent-encodes s (everything but RFC 3986 unreserved characters) into a
 * new heap string; NULL on no memory. */
char *eo_kube_escape(const char *s);

#endif
