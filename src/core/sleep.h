/*
 * core/sleep.h - sleeping a number of milliseconds, resumed after a signal; the monotonic clock.
 */
#ifndef EO_CORE_SLEEP_H
#define EO_CORE_SLEEP_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Sleeps ms milliseconds (nothing when ms <= 0), the whole time even when a signal arrives. */
void eo_sleep_ms(long ms);

/* CLOCK_MONOTONIC in milliseconds (for timeouts and durations, never for wall time). */
int64_t eo_mono_ms(void);

/* The CLOCK_MONOTONIC time ms milliseconds from now (for pthread_cond_timedwait). */
struct timespec eo_mono_deadline_ms(long ms);

/* Initialises cond to time its waits on CLOCK_MONOTONIC. */
void eo_cond_init_monotonic(pthread_cond_t *cond);

#endif
