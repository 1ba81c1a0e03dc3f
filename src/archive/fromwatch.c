/* archive/fromwatch.h */
#include "archive/fromwatch.h"

#include <stdio.h>
#include <stdlib.h>

static struct eo_archive_event to_event(const struct eo_etcd_watch_event *we)
{
	bool del = we->type == EO_ETCD_EVENT_DELETE;

	return (struct eo_archive_event){
	    .type = del ? EO_ARCHIVE_DELETE : EO_ARCHIVE_PUT,
	    .key = we->kv.key,
	    .key_len = we->kv.key_len,
	    .value = del ? NULL : we->kv.value,
	    .value_len = del ? 0 : we->kv.value_len,
	    .create_revision = we->kv.create_revision,
	    .mod_revision = we->kv.mod_revision,
	    .version = we->kv.version,
	    .lease = we->kv.lease,
	};
}

int eo_archive_from_watch(const struct eo_etcd_watch_resp *r, int64_t received_ms,
			  eo_archive_rev_fn fn, void *ud, int64_t *last, char *err, size_t errcap)
{
	struct eo_archive_event *ev;
	size_t i = 0;
	int rc = 0;

	if (r->n == 0)
		return 0;
	ev = calloc(r->n, sizeof(*ev));
	if (ev == NULL) {
		snprintf(err, errcap, "out of memory for %zu events", r->n);
		return EO_ARCHIVE_ENOMEM;
	}
	while (i < r->n && rc == 0) {
		struct eo_archive_rev rev = {.revision = r->events[i].kv.mod_revision,
					     .received_ms = received_ms,
					     .events = ev};

		if (rev.revision <= *last) {
			snprintf(err, errcap, "watch revision %lld after %lld",
				 (long long)rev.revision, (long long)*last);
			rc = EO_ARCHIVE_EORDER;
			break;
		}
		while (i < r->n && r->events[i].kv.mod_revision == rev.revision)
			ev[rev.n++] = to_event(&r->events[i++]);
		if (fn(ud, &rev, err, errcap) != 0) {
			rc = EO_ARCHIVE_ECALLBACK;
			break;
		}
		*last = rev.revision;
	}
	free(ev);
	return rc;
}
