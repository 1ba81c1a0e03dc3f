/*
 * core/sleep.h - sleeping a number of milliseconds, resumed after a signal.
 */
#ifndef EO_CORE_SLEEP_H
#define EO_CORE_SLEEP_H

/* Sleeps ms milliseconds (nothing when ms <= 0), the whole time even when a signal arrives. */
void eo_sleep_ms(long ms);

#endif
