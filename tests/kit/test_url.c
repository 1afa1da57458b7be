/*
 * test_url.c: kit/url, the one place a database URL loses its password
 * before the kit prints it. Each case is a URL as a student or an
 * instructor writes it, and the line that may reach a projected screen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kit/url.h"

/* What kit_url_redact shows for url, checked against want. */
static void shows(const char *url, const char *want)
{
	char out[256];
	assert_ptr_equal(kit_url_redact(url, out, sizeof out), out);
	assert_string_equal(out, want);
	assert_int_equal(kit_url_has_password(url), strcmp(url ? url : "", want) != 0);
}

static void kit_url_redact__user_password(void **state)
{
	(void)state;
	shows("postgresql://student7:secret@host/db", "postgresql://student7:***@host/db");
	shows("postgres://u:p@h:5433/db?sslmode=require", "postgres://u:***@h:5433/db?sslmode=require");
	shows("postgresql://hr_alice:Ab3dE@/hotrow?host=/tmp/pg&port=5432",
	      "postgresql://hr_alice:***@/hotrow?host=/tmp/pg&port=5432");
	shows("redis://:sesame@127.0.0.1:6379/2", "redis://:***@127.0.0.1:6379/2");
}

static void kit_url_redact__query_password(void **state)
{
	(void)state;
	shows("postgresql://h/db?user=u&password=secret", "postgresql://h/db?user=u&password=***");
	shows("postgresql:///db?password=secret&host=/tmp", "postgresql:///db?password=***&host=/tmp");
	shows("postgresql://u:a@h/db?password=b", "postgresql://u:***@h/db?password=***");
}

static void kit_url_redact__conninfo(void **state)
{
	(void)state;
	shows("host=h user=u password=secret dbname=db", "host=h user=u password=*** dbname=db");
	shows("password = 'se cr\\'et' host=h", "password = *** host=h");
	shows("dbname=postgresql://u:pw@h/db", "dbname=postgresql://u:***@h/db");
	shows("password=secret", "password=***");
}

static void kit_url_redact__nothing_to_hide(void **state)
{
	(void)state;
	shows("postgresql:///postgres?host=/tmp", "postgresql:///postgres?host=/tmp");
	shows("postgresql://u@h/db", "postgresql://u@h/db");
	shows("postgresql://u:@h/db", "postgresql://u:@h/db");
	shows("host=/tmp dbname=x password=''", "host=/tmp dbname=x password=''");
	shows("postgresql://h/db/with@at", "postgresql://h/db/with@at");
	shows("sqlite:.hotrow/lab01.db", "sqlite:.hotrow/lab01.db");
	shows("", "");
	shows(NULL, "");
}

static void kit_url_redact__short_buffer(void **state)
{
	(void)state;
	char out[20];
	kit_url_redact("postgresql://u:secret@host/db", out, sizeof out);
	assert_string_equal(out, "postgresql://u:***@");
	assert_null(strstr(out, "secret"));
	kit_url_redact("x", out, 0);   /* nothing written, nothing read */
}

/* What kit_url_scrub leaves of msg for url, checked against want. */
static void scrubs(const char *msg, const char *url, const char *want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", msg);
	kit_url_scrub(buf, url);
	assert_string_equal(buf, want);
}

/* libpq quotes a bad piece of a URL back, password and all. */
static void kit_url_scrub__hides_a_quoted_password(void **state)
{
	(void)state;
	scrubs("cannot connect: invalid percent-encoded token: \"s3cr%zzet\"",
	       "postgresql://u:s3cr%zzet@/x?host=/tmp",
	       "cannot connect: invalid percent-encoded token: \"***\"");
	scrubs("secret1 and 'secret1' again", "host=h password='secret1'", "*** and '***' again");
	scrubs("bad value \"hunter22\"", "postgresql://h/db?password=hunter22", "bad value \"***\"");
	scrubs("token \"p4ss%zz\"", "dbname=postgresql://u:p4ss%zz@h/db", "token \"***\"");
	/* nothing to hide, or too short to look for */
	scrubs("no server at h", "postgresql://u:at@h/db", "no server at h");
	scrubs("no server at h", "postgresql://h/db", "no server at h");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kit_url_redact__user_password),
		cmocka_unit_test(kit_url_redact__query_password),
		cmocka_unit_test(kit_url_redact__conninfo),
		cmocka_unit_test(kit_url_redact__nothing_to_hide),
		cmocka_unit_test(kit_url_redact__short_buffer),
		cmocka_unit_test(kit_url_scrub__hides_a_quoted_password),
	};
	return cmocka_run_group_tests_name("kit_url", tests, NULL, NULL);
}
