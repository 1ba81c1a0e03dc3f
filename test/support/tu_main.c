/*
 * support/tu_main.c - see tu_main.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/tu_main.h"

int tu_run_tests(const char *names, const CMUnitTestFunction *fns, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown)
{
	struct CMUnitTest *tests = calloc(n, sizeof(*tests));
	char *copy = strdup(names), *save = NULL, *tok;
	size_t i = 0;
	int rc;

	if (tests == NULL || copy == NULL) {
		free(tests);
		free(copy);
		return 1;
	}
	for (tok = strtok_r(copy, ", \t\n", &save); tok != NULL && i < n;
	     tok = strtok_r(NULL, ", \t\n", &save), i++)
		tests[i] = (struct CMUnitTest){.name = tok, .test_func = fns[i]};
	if (i != n || tok != NULL) {
		fprintf(stderr, "tu_run_tests: %zu functions, names \"%s\"\n", n, names);
		rc = 1;
	} else {
		rc = _cmocka_run_group_tests("tests", tests, n, setup, teardown);
	}
	free(tests);
	free(copy);
	return rc;
}
