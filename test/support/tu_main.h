/*
 * support/tu_main.h - the main() of a unit-test program: TU_MAIN(cmocka_unit_test(a), ...) runs
 * the tests given as one cmocka group named "tests" (as the hand-written mains did);
 * TU_MAIN_SETUP(setup, teardown, ...) the same with group setup and teardown functions. Include
 * it after <cmocka.h>.
 *
 * Test code only. Names use the TU_ prefix.
 */
#ifndef EO_TEST_TU_MAIN_H
#define EO_TEST_TU_MAIN_H

#define TU_MAIN_SETUP(setup, teardown, ...)                                                        \
	int main(void)                                                                             \
	{                                                                                          \
		const struct CMUnitTest tests[] = {__VA_ARGS__};                                   \
                                                                                                   \
		return cmocka_run_group_tests(tests, setup, teardown);                             \
	}

#define TU_MAIN(...) TU_MAIN_SETUP(NULL, NULL, __VA_ARGS__)

#endif
