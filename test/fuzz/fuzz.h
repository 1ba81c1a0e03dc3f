/*
 * Shared helpers of the libFuzzer targets (test/fuzz/fuzz_*.c): an invariant check that aborts
 * with a message (so libFuzzer keeps the input as a crash), and a byte reader for the
 * structure-aware targets that build their input from the fuzzer's bytes.
 */
#ifndef EO_TEST_FUZZ_H
#define EO_TEST_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * True when FUZZ_SURVEY is set in the environment: a violated invariant is printed and the run
 * goes on, to list every kind of violation a target finds in one run (sanitizer reports still
 * stop it).
 */
static inline bool fuzz_survey(void)
{
	static int on = -1;

	if (on < 0)
		on = getenv("FUZZ_SURVEY") != NULL;
	return on != 0;
}

/* Abort with the failed condition and a message: libFuzzer saves the input. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz invariant violated at %s:%d: %s: ", __FILE__,        \
				__LINE__, #cond);                                                  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			if (!fuzz_survey())                                                        \
				abort();                                                           \
		}                                                                                  \
	} while (0)

/* Reads the input front to back; past the end every read gives 0. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz *f)
{
	uint8_t b;

	if (f->n == 0)
		return 0;
	b = *f->p++;
	f->n--;
	return b;
}

static inline bool fz_bool(struct fz *f)
{
	return (fz_u8(f) & 1) != 0;
}

/* A value in [0, n) (n >= 1). */
static inline unsigned fz_below(struct fz *f, unsigned n)
{
	return n > 0 ? fz_u8(f) % n : 0;
}

/* Copies the input into a NUL-terminated heap string (NULs inside stay). */
static inline char *fz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
