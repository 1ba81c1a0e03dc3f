/*
 * core/sleep.h - sleeping a number of milliseconds, resumed after a signal.
 */
#ifndef EO_CORE_SLEEP_H
#define EO_CORE_SLEEP_H

#include <pthread.h>
#include <time.h>

/* Sleeps ms milliseconds (nothing when ms <= 0), the whole time even when a signal arrives. */
void eo_sleep_ms(long ms);

/* The CLOCK_MONOTONIC time ms milliseconds from now (for pthread_cond_timedwait). */
struct timespec eo_mono_deadline_ms(long ms);

/* Initialises cond to time its waits on CLOCK_MONOTONIC. */
void eo_cond_init_monotonic(pthread_cond_t *cond);

#endif
