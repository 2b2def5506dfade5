/* check.h - the one check and report helper of Loom's C test programs
 * (tests/unit/test_*.c, tests/directed/test_directed.c,
 * tests/driver/test_driver.c; tests/unit/check.c is linked into each).
 *
 * A program counts passes, failures and skips, prints a line per check
 * ("ok   WHAT", "FAIL file:line: WHAT", "skip WHAT"; with CHECK_QUIET only
 * the failures and skips) and ends with check_report()'s line
 * "N passed, M failed" (", K skipped" with CHECK_SKIPS), the line
 * tests/run.sh takes each suite's counts from:
 *
 *	int main(void)
 *	{
 *		check_init(CHECK_SKIPS);
 *		CHECK(f(1) == 2, "f(1) = %d", f(1));
 *		return check_report();
 *	} */
#ifndef LOOM_TEST_CHECK_H
#define LOOM_TEST_CHECK_H

/* check_init's flags */
enum {
	CHECK_QUIET = 1, /* print failures and skips only, not the passes */
	CHECK_SKIPS = 2, /* the report line counts the skips too */
};

/* how this program reports (0: every check printed, no skip count) */
void check_init(unsigned flags);

/* One check: a pass when ok is true, else a failure; the message is a
 * printf format. Returns ok as 0 / 1. */
#define CHECK(ok, ...) check_at(__FILE__, __LINE__, !!(ok), __VA_ARGS__)
/* a failure found by the caller's own test (no pass counted otherwise) */
#define CHECK_FAIL(...) check_at(__FILE__, __LINE__, 0, __VA_ARGS__)
int check_at(const char *file, int line, int ok, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* a case not run, with the reason: "skip WHAT" */
void check_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* the counts so far */
unsigned check_passed(void);
unsigned check_failed(void);

/* Prints "N passed, M failed" (", K skipped" with CHECK_SKIPS); returns
 * the exit status: 1 when a check failed, else 0. */
int check_report(void);

#endif
