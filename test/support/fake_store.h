/*
 * support/fake_store.h - a stateful fake apiserver for the act-layer tests, on the fake HTTP
 * server (support/fake_apiserver.h). Names use the fs_ prefix.
 *
 * Objects are kept by "plural/name" (the namespace is not part of the key; a path without a
 * resource, such as a discovery document, is kept by its path). It answers as the apiserver
 * does, as far as the operator's requests go:
 * - GET: the object, 404 when there is none (a collection GET finds nothing: 404);
 * - POST: creates the body as sent (409 AlreadyExists when the name is taken); events are
 *   answered 201 and only logged; pods/<name>/eviction deletes the Pod (409 on a UID
 *   precondition that does not hold, 429 while fs_refuse_evictions is on);
 * - PATCH (FS_PATCH_MERGE, the default): an RFC 7386 merge patch, 409 when its
 *   metadata.resourceVersion or metadata.uid is not the stored one; the status subresource
 *   takes only status, the object itself everything but status; the resourceVersion goes up
 *   (one counter for the store, from 101); answers the object;
 * - DELETE: 404 when gone, 409 when preconditions.uid is not the stored UID.
 * Every request is logged, in order, as {method, path, plural, name, sub, body, uid (the
 * stored object's, when there was one)}; a POST's name is its body's metadata.name, and its
 * path ends with it.
 *
 * Thread-safe: the server answers on its own threads. The log (fs_log, fs_nth) is read
 * between reconciles, when no request is in flight.
 */
#ifndef EO_TEST_FAKE_STORE_H
#define EO_TEST_FAKE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef struct fs_store fs_store;

/* Starts the server with an empty store; fails the test when it cannot. */
fs_store *fs_start(void);
void fs_stop(fs_store *s); /* NULL is fine */
/* "http://127.0.0.1:<port>" (borrowed). */
const char *fs_url(const fs_store *s);

/* --- objects --- */

/* Stores o (stolen) as plural/<its metadata.name>, replacing what was there. */
void fs_put(fs_store *s, const char *plural, json_t *o);
/* Stores o (stolen) under the key the request path names (a discovery document too). */
void fs_put_path(fs_store *s, const char *path, json_t *o);
/* A copy of the stored object (caller decrefs), or NULL. */
json_t *fs_get(fs_store *s, const char *plural, const char *name);
/* Number of stored objects of plural (NULL: all). */
size_t fs_size(fs_store *s, const char *plural);
/* New array of copies of the stored objects of plural, by name. */
json_t *fs_list(fs_store *s, const char *plural);

/* --- behaviour a test chooses --- */

enum fs_patch_mode {
	FS_PATCH_MERGE, /* as above */
	FS_PATCH_ECHO,	/* answers the stored object unchanged (404 when gone) */
	FS_PATCH_EMPTY, /* answers {} whatever the object */
};
/* How PATCHes of plural (NULL: every plural without a mode of its own) are answered. */
void fs_patch_mode(fs_store *s, const char *plural, enum fs_patch_mode m);
/* Requests method plural/name (name NULL: any) answer status (0: no longer). */
void fs_fail(fs_store *s, const char *method, const char *plural, const char *name, int status);
/* Evictions answer 429 (a PodDisruptionBudget allows none). */
void fs_refuse_evictions(fs_store *s, bool on);
/* Called with each new log entry (under the store's lock), to add fields of its own. */
void fs_on_request(fs_store *s, void (*cb)(void *ud, json_t *entry), void *ud);

/* --- the request log --- */

/* The log (borrowed array of entries). */
json_t *fs_log(fs_store *s);
/* Entry i, or NULL. */
json_t *fs_nth(fs_store *s, size_t i);
/* The body of an entry (NULL when none). */
json_t *fs_body(const json_t *entry);
/*
 * Entries with this method, plural, name and sub (name, sub NULL: any; sub "": the object
 * itself); *last (when not NULL) the last such entry / its body.
 */
size_t fs_count(fs_store *s, const char *method, const char *plural, const char *name,
		const char *sub, json_t **last);
size_t fs_count_body(fs_store *s, const char *method, const char *plural, const char *name,
		     const char *sub, json_t **last_body);
/* Entries with this method whose path starts with prefix (is prefix, when exact). */
size_t fs_count_path(fs_store *s, const char *method, const char *prefix, bool exact,
		     json_t **last_body);
/* New array of the bodies of the entries with this method (NULL: any) and plural. */
json_t *fs_bodies(fs_store *s, const char *method, const char *plural);
/* Index of the first (fs_find) / last (fs_find_last) matching entry at or after from;
 * SIZE_MAX when there is none. */
size_t fs_find(fs_store *s, size_t from, const char *method, const char *plural, const char *name,
	       const char *sub);
size_t fs_find_last(fs_store *s, const char *method, const char *plural, const char *name,
		    const char *sub);

#endif
