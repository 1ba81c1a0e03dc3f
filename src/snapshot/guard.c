/* The overwrite guard (guard.h). */
#include "snapshot/guard.h"

#include <stdio.h>
#include <string.h>

enum eo_guard_decision eo_guard_decide(enum eo_guard_target target, const char *existing_uid,
				       const char *our_uid, const char *where, char *msg,
				       size_t cap)
{
	if (!our_uid || !our_uid[0]) {
		snprintf(msg, cap, "%s: no snapshot UID given; refusing to write without one",
			 where);
		return EO_GUARD_REFUSE;
	}
	switch (target) {
	case EO_TARGET_ABSENT:
		return EO_GUARD_WRITE_NEW;
	case EO_TARGET_PRESENT:
		if (existing_uid && strcmp(existing_uid, our_uid) == 0)
			return EO_GUARD_OVERWRITE_OWN;
		if (existing_uid && existing_uid[0])
			snprintf(
			    msg, cap,
			    "%s already exists and belongs to another snapshot (UID %s); "
			    "refusing to overwrite it: use another snapshot name or destination",
			    where, existing_uid);
		else
			snprintf(msg, cap,
				 "%s already exists and was not written by this snapshot (no UID "
				 "stamp); refusing to overwrite it: use another snapshot name or "
				 "destination",
				 where);
		return EO_GUARD_REFUSE;
	case EO_TARGET_FORBIDDEN:
		snprintf(msg, cap,
			 "%s: the store answered 403 to the existence check, which may hide an "
			 "existing object; refusing (fail closed): grant the credentials "
			 "s3:ListBucket so a missing key answers 404",
			 where);
		return EO_GUARD_REFUSE;
	case EO_TARGET_ERROR:
		break;
	}
	snprintf(msg, cap, "%s: cannot tell whether it already exists; refusing to write", where);
	return EO_GUARD_REFUSE;
}
