/* check.c - the counters and lines of tests/unit/check.h. One set of
 * counters per program; lines go to stdout as they come. */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>

static unsigned npass, nfail, nskip, flags;

void check_init(unsigned f)
{
	flags = f;
}

int check_at(const char *file, int line, int ok, const char *fmt, ...)
{
	va_list ap;
	if (ok)
		npass++;
	else
		nfail++;
	if (ok && (flags & CHECK_QUIET))
		return 1;
	if (ok)
		printf("ok   ");
	else
		printf("FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok;
}

void check_skip(const char *fmt, ...)
{
	va_list ap;
	nskip++;
	printf("skip ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

unsigned check_passed(void)
{
	return npass;
}

unsigned check_failed(void)
{
	return nfail;
}

int check_report(void)
{
	if (flags & CHECK_SKIPS)
		printf("%u passed, %u failed, %u skipped\n", npass, nfail, nskip);
	else
		printf("%u passed, %u failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
