/*
 * archive/fromwatch.h - a watch response (etcd/watch.h) as archived revisions (segment.h).
 *
 * etcd gives every event of one revision (a txn's puts and deletes) the same mod_revision
 * and never splits a revision over two responses, so each run of events with one
 * mod_revision is one archived revision, handed on in the response's order.
 */
#ifndef EO_ARCHIVE_FROMWATCH_H
#define EO_ARCHIVE_FROMWATCH_H

#include <stddef.h>
#include <stdint.h>

#include "archive/segment.h"
#include "etcd/watch.h"

/*
 * Calls fn once per revision of r, stamped received_ms. 0; ENOMEM; EORDER when a revision
 * is not above the one before (in r, or *last on entry); ECALLBACK when fn refused (its
 * message in err). *last (in: the last revision handed on before, 0 for none) receives the
 * last revision handed on.
 */
int eo_archive_from_watch(const struct eo_etcd_watch_resp *r, int64_t received_ms,
			  eo_archive_rev_fn fn, void *ud, int64_t *last, char *err, size_t errcap);

#endif
