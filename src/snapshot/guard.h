/*
 * The overwrite guard: may the agent write a snapshot under a name where
 * something may already be stored?
 *
 * Every stored snapshot is stamped with the UID of its EtcdSnapshot (S3 user
 * metadata, or a "<name>.db.uid" file beside a PVC snapshot). Before writing,
 * the agent looks at the target (HeadObject, stat) and decides:
 *
 *   target                                   decision
 *   absent (HEAD 404, ENOENT)                 write
 *   present, stamped with our UID             write (a retry of the same snapshot)
 *   present, other UID or no stamp            refuse: not ours
 *   unknown (HEAD 403)                        refuse: fail closed, a 403 may hide
 *                                             an existing object
 *   unknown (any other error)                 refuse
 *
 * An empty UID of our own is refused too: without it a retry could not be
 * told from a foreign object.
 */
#ifndef EO_SNAPSHOT_GUARD_H
#define EO_SNAPSHOT_GUARD_H

#include <stddef.h>

enum eo_guard_target {
	EO_TARGET_ABSENT,
	EO_TARGET_PRESENT,
	EO_TARGET_FORBIDDEN, /* the store refused to say (S3 403) */
	EO_TARGET_ERROR,     /* the look-up failed otherwise */
};

enum eo_guard_decision {
	EO_GUARD_WRITE_NEW,	/* nothing there */
	EO_GUARD_OVERWRITE_OWN, /* our own earlier attempt */
	EO_GUARD_REFUSE,
};

/*
 * existing_uid: the stamp found on a present target (NULL or "" when none).
 * On REFUSE, msg receives the reason (mentioning `where`, e.g. the URI).
 */
enum eo_guard_decision eo_guard_decide(enum eo_guard_target target, const char *existing_uid,
				       const char *our_uid, const char *where, char *msg,
				       size_t cap);

#endif
