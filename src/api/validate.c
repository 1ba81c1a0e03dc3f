#include "api/validate.h"

#include <stdarg.h>
#include <stdio.h>

int eo__fail(char *msg, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (msg != NULL && n > 0) {
		va_start(ap, fmt);
		vsnprintf(msg, n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void eo__clear(char *msg, size_t n)
{
	if (msg != NULL && n > 0)
		msg[0] = '\0';
}
