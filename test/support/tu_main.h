/*
 * support/tu_main.h - the main() of a unit-test program: TU_MAIN(test_a, test_b, ...) runs the
 * test functions named as one cmocka group named "tests", each test under its function's name
 * (as a hand-written main with cmocka_unit_test(test_a), ... did); TU_MAIN_SETUP(setup, teardown,
 * ...) the same with group setup and teardown functions. Include it after <cmocka.h>.
 *
 * Test code only. Names use the tu_/TU_ prefix.
 */
#ifndef EO_TEST_TU_MAIN_H
#define EO_TEST_TU_MAIN_H

#include <stddef.h>

/*
 * Runs fns[0..n) as the cmocka group "tests" with setup and teardown (either may be NULL);
 * names holds their names, comma separated, in the same order. Returns what cmocka returns.
 */
int tu_run_tests(const char *names, const CMUnitTestFunction *fns, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown);

#define TU_MAIN_SETUP(setup, teardown, ...)                                                        \
	int main(void)                                                                             \
	{                                                                                          \
		static const CMUnitTestFunction tu_fns_[] = {__VA_ARGS__};                         \
                                                                                                   \
		return tu_run_tests(#__VA_ARGS__, tu_fns_, sizeof(tu_fns_) / sizeof(tu_fns_[0]),   \
				    setup, teardown);                                              \
	}

#define TU_MAIN(...) TU_MAIN_SETUP(NULL, NULL, __VA_ARGS__)

#endif
