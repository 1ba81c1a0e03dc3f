/* core/sleep.c - see sleep.h. */
#include "core/sleep.h"

#include <errno.h>
#include <time.h>

void eo_sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

	while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
