/*
 * test_json.c: the one JSON and XML text writer (util/json). Each test
 * writes through an in-memory stream and compares the exact bytes: escapes
 * of control characters, every class of ill-formed UTF-8 replaced by one
 * U+FFFD per maximal part, well-formed text untouched, and cuts at a byte
 * budget that never split a character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "util/json.h"

#define FFFD "\xef\xbf\xbd"

/* What the writer wrote for one input. */
struct out {
	char *buf;
	size_t len;
	FILE *f;
};

static void out_open(struct out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
}

/* Close the stream, compare with want (want_len bytes), free. */
static void out_check(struct out *o, const char *want, size_t want_len)
{
	assert_int_equal(fclose(o->f), 0);
	if (o->len != want_len || memcmp(o->buf, want, want_len) != 0)
		fail_msg("wrote '%.*s' (%zu bytes), want '%.*s' (%zu bytes)", (int)o->len, o->buf,
			 o->len, (int)want_len, want, want_len);
	free(o->buf);
}

static void json_is(const char *in, const char *want)
{
	struct out o;
	out_open(&o);
	util_json_str(o.f, in);
	out_check(&o, want, strlen(want));
}

static void xml_is(const char *in, const char *want)
{
	struct out o;
	out_open(&o);
	util_json_xml(o.f, in);
	out_check(&o, want, strlen(want));
}

static void str__ordinary_text_unchanged(void **state)
{
	(void)state;
	json_is("naive rows=4", "\"naive rows=4\"");
	json_is("", "\"\"");
	json_is(NULL, "null");
	/* well-formed UTF-8 of every length, the largest code point included */
	json_is("\xc2\xa0 \xce\xbb \xe2\x80\x93 \xe2\xa3\xbf \xef\xbf\xbd \xf0\x9f\x94\xa5 \xf4\x8f\xbf\xbf",
		"\"\xc2\xa0 \xce\xbb \xe2\x80\x93 \xe2\xa3\xbf \xef\xbf\xbd \xf0\x9f\x94\xa5 \xf4\x8f\xbf\xbf\"");
}

static void str__escapes_quotes_and_controls(void **state)
{
	(void)state;
	json_is("a\"b\\c", "\"a\\\"b\\\\c\"");
	json_is("l1\nl2\tx\ry", "\"l1\\nl2\\tx\\ry\"");
	json_is("\x01\x1b[2J\x1f\x7f", "\"\\u0001\\u001b[2J\\u001f\\u007f\"");
	/* C1 controls (U+0080..U+009F, e.g. U+009B, a terminal's CSI) */
	json_is("\xc2\x80\xc2\x9b\xc2\x9f\xc2\xa0", "\"\\u0080\\u009b\\u009f\xc2\xa0\"");
}

static void str__embedded_nul_escaped(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	util_json_strn(o.f, "a\0b", 3);
	out_check(&o, "\"a\\u0000b\"", 10);
}

static void str__lone_continuation_bytes(void **state)
{
	(void)state;
	json_is("a\x80z", "\"a" FFFD "z\"");
	json_is("\xbf\xbf", "\"" FFFD FFFD "\"");
}

static void str__overlong_forms(void **state)
{
	(void)state;
	json_is("\xc0\xaf", "\"" FFFD FFFD "\"");            /* '/' in two bytes */
	json_is("\xc1\xbf", "\"" FFFD FFFD "\"");
	json_is("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");   /* '/' in three */
	json_is("\xf0\x80\x80\xaf", "\"" FFFD FFFD FFFD FFFD "\"");
	json_is("\xc0\x80", "\"" FFFD FFFD "\"");            /* NUL in two: no \u0000 */
}

static void str__surrogates(void **state)
{
	(void)state;
	json_is("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");   /* U+D800 */
	json_is("\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");   /* U+DFFF */
	json_is("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");         /* U+D7FF is fine */
}

static void str__truncated_sequences(void **state)
{
	(void)state;
	json_is("\xe2\x82", "\"" FFFD "\"");                 /* one maximal part */
	json_is("\xe2\x82x", "\"" FFFD "x\"");
	json_is("\xf0\x9f\x94", "\"" FFFD "\"");
	json_is("\xf0\x9f\x94\"", "\"" FFFD "\\\"\"");       /* the quote still escaped */
	json_is("\xc3", "\"" FFFD "\"");
	json_is("\xc3\xc3\xa9", "\"" FFFD "\xc3\xa9\"");
}

static void str__above_u10ffff(void **state)
{
	(void)state;
	json_is("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");   /* U+110000 */
	json_is("\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	json_is("\xf8\x88\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD FFFD "\"");
	json_is("\xfe\xff", "\"" FFFD FFFD "\"");
}

static void num__not_finite_is_null(void **state)
{
	(void)state;
	struct out o;
	out_open(&o);
	util_json_num(o.f, 2.5, "%.3f");
	fputc(' ', o.f);
	util_json_num(o.f, NAN, "%.3f");
	fputc(' ', o.f);
	util_json_num(o.f, -INFINITY, "%g");
	out_check(&o, "2.500 null null", 15);
}

static void xml__entities_and_controls(void **state)
{
	(void)state;
	xml_is("a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c'");
	xml_is("l1\n\tx\ry", "l1\n\tx&#13;y");
	xml_is("\x01\x1b[0m\x7f", FFFD FFFD "[0m&#x7F;");
	xml_is("\xc2\x85", "&#x85;");
	xml_is("\xef\xbf\xbe\xef\xbf\xbf", FFFD FFFD);       /* U+FFFE, U+FFFF */
	xml_is("\xce\xbb\xf0\x9f\x94\xa5", "\xce\xbb\xf0\x9f\x94\xa5");
	xml_is(NULL, "");
}

static void xml__ill_formed_replaced(void **state)
{
	(void)state;
	xml_is("\x80\xc0\xaf\xed\xa0\x80\xe2\x82<\xf4\x90\x80\x80",
	       FFFD FFFD FFFD FFFD FFFD FFFD FFFD "&lt;" FFFD FFFD FFFD FFFD);
}

static void cut__never_inside_a_character(void **state)
{
	(void)state;
	const char *s = "a\xce\xbb\xe2\x80\x93\xf0\x9f\x94\xa5";   /* 1 + 2 + 3 + 4 bytes */
	size_t n = strlen(s);
	const size_t want[] = { 0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10, 10 };
	for (size_t b = 0; b <= n + 1; b++)
		assert_int_equal(util_json_cut(s, n, b), want[b]);
}

static void cut__ill_formed_bytes_are_their_own(void **state)
{
	(void)state;
	/* a lone continuation and an overlong lead are one byte each */
	assert_int_equal(util_json_cut("\x80\x80z", 3, 2), 2);
	assert_int_equal(util_json_cut("\xc0\xafz", 3, 1), 1);
	/* an ill-formed part inside the bytes is kept whole or not at all */
	assert_int_equal(util_json_cut("\xe2\x82x", 3, 1), 0);
	assert_int_equal(util_json_cut("\xe2\x82x", 3, 2), 2);
	/* a character the end of the bytes cut short is left out */
	assert_int_equal(util_json_cut("ab\xe2\x82", 4, 4), 2);
	assert_int_equal(util_json_cut("ab\xf0", 3, 10), 2);
}

static void resync__skips_a_cut_characters_rest(void **state)
{
	(void)state;
	assert_int_equal(util_json_resync("\x94\xa5z", 3), 2);
	assert_int_equal(util_json_resync("\x80\x80\x80\x80", 4), 3);
	assert_int_equal(util_json_resync("z\x80", 2), 0);
	assert_int_equal(util_json_resync("\xce\xbb", 2), 0);
	assert_int_equal(util_json_resync("", 0), 0);
}

static void copy__cuts_on_a_boundary(void **state)
{
	(void)state;
	char buf[5];
	memset(buf, 'x', sizeof buf);
	assert_int_equal(util_json_copy(buf, sizeof buf, "ab\xe2\x80\x93"), 2);
	assert_string_equal(buf, "ab");
	assert_int_equal(util_json_copy(buf, sizeof buf, "abc\xce\xbb"), 3);
	assert_string_equal(buf, "abc");
	assert_int_equal(util_json_copy(buf, sizeof buf, "\xce\xbb\xce\xbb"), 4);
	assert_string_equal(buf, "\xce\xbb\xce\xbb");
	assert_int_equal(util_json_copy(buf, 1, "abc"), 0);
	assert_string_equal(buf, "");
}

static void trim__drops_what_snprintf_cut(void **state)
{
	(void)state;
	char buf[6] = "abcd\xe2";   /* what snprintf leaves of "abcd–" in 6 bytes */
	assert_int_equal(util_json_trim(buf), 4);
	assert_string_equal(buf, "abcd");
	memcpy(buf, "a\xce\xbb\x80", 5);
	assert_int_equal(util_json_trim(buf), 4);   /* ill-formed, not cut: kept */
	assert_string_equal(buf, "a\xce\xbb\x80");
}

/* Any cut of any input, written, is well-formed UTF-8 with no control byte. */
static void str__every_cut_writes_valid_utf8(void **state)
{
	(void)state;
	const char *s = "x\xce\xbb\x80\xe2\x82\xf0\x9f\x94\xa5\xed\xa0\x80\x1b\xc0\xaf\xf4\x90";
	size_t n = strlen(s);
	for (size_t b = 0; b <= n; b++) {
		struct out o;
		out_open(&o);
		util_json_strn(o.f, s, util_json_cut(s, n, b));
		assert_int_equal(fclose(o.f), 0);
		for (size_t i = 0; i < o.len;) {
			size_t len = util_json_utf8(o.buf + i, o.len - i, NULL, NULL);
			assert_true(len > 0);
			assert_true((unsigned char)o.buf[i] >= 0x20);
			i += len;
		}
		free(o.buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(str__ordinary_text_unchanged),
		cmocka_unit_test(str__escapes_quotes_and_controls),
		cmocka_unit_test(str__embedded_nul_escaped),
		cmocka_unit_test(str__lone_continuation_bytes),
		cmocka_unit_test(str__overlong_forms),
		cmocka_unit_test(str__surrogates),
		cmocka_unit_test(str__truncated_sequences),
		cmocka_unit_test(str__above_u10ffff),
		cmocka_unit_test(num__not_finite_is_null),
		cmocka_unit_test(xml__entities_and_controls),
		cmocka_unit_test(xml__ill_formed_replaced),
		cmocka_unit_test(cut__never_inside_a_character),
		cmocka_unit_test(cut__ill_formed_bytes_are_their_own),
		cmocka_unit_test(resync__skips_a_cut_characters_rest),
		cmocka_unit_test(copy__cuts_on_a_boundary),
		cmocka_unit_test(trim__drops_what_snprintf_cut),
		cmocka_unit_test(str__every_cut_writes_valid_utf8),
	};
	return cmocka_run_group_tests_name("util_json", tests, NULL, NULL);
}
