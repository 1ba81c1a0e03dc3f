/*
 * support/itest.h - small helpers shared by the integration tests (test/integration), which
 * run against a real etcd through test/integration/run.sh: a free loopback port, a process
 * started with its output in a log file, a monotonic clock in milliseconds, a sleep, and the
 * environment run.sh sets.
 *
 * Test code only (linked from build/libeotest.a, never into the operator). Names use the
 * itest_ prefix.
 */
#ifndef EO_TEST_ITEST_H
#define EO_TEST_ITEST_H

#include <stdint.h>
#include <sys/types.h>

/* A loopback TCP port that was free a moment ago, or -1. */
int itest_free_port(void);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t itest_mono_ms(void);

/* Sleeps ms milliseconds. */
void itest_sleep_ms(long ms);

/*
 * Starts argv[0] (a path) with argv in the background, its stdout and stderr appended to
 * logpath. Returns the pid, or -1.
 */
pid_t itest_spawn_logged(const char *const *argv, const char *logpath);

/*
 * The environment variable name, which run.sh sets; when it is unset or empty, says so on
 * stderr and exits with status 2.
 */
const char *itest_need_env(const char *name);

#endif
