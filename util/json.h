/*
 * json.h: the kit's one writer of text into JSON and XML documents.
 *
 * Every document the kit writes (`hotrow sim --json`, the grade's
 * results.json and junit.xml, the class's results.json, the benches) puts
 * its strings through this module, so nothing a student prints or names
 * can break the document or smuggle bytes into it:
 *   - a quote, a backslash and every control character is escaped (JSON)
 *     or written as an entity or replaced (XML 1.0 cannot hold most
 *     control characters even as &#N;);
 *   - bytes that are not UTF-8 (a lone continuation byte, an overlong
 *     form, a surrogate, a sequence cut short, a code point above
 *     U+10FFFF) become U+FFFD, one for each maximal ill-formed part, as
 *     Unicode recommends; well-formed UTF-8 passes through unchanged;
 *   - text cut to a byte budget (util_json_cut, util_json_copy) ends on a
 *     character boundary, never inside one.
 * Numbers need no escaping; util_json_num writes a value that is not
 * finite as null, which JSON has no number for. util/ depends on libc and
 * libm alone; engine/module.mk archives this object into the engine too.
 *
 * Interface:
 *   fputs("{\"name\": ", f); util_json_str(f, name); fputs("}", f);
 *   util_json_num(f, 2.5, "%.3f");
 *   fputs("<failure>", f); util_json_xml(f, text); fputs("</failure>", f);
 *   char first[300]; util_json_copy(first, sizeof first, text);
 * The writers never fail themselves; check ferror(f) or fclose(f).
 */
#ifndef HOTROW_UTIL_JSON_H
#define HOTROW_UTIL_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* s as a JSON string, quotes included; NULL writes null. */
void util_json_str(FILE *f, const char *s);

/* The n bytes at s as a JSON string (a NUL among them is escaped). */
void util_json_strn(FILE *f, const char *s, size_t n);

/* v with fmt ("%.3f", "%g"), or null when v is NaN or infinite. */
void util_json_num(FILE *f, double v, const char *fmt);

/* s as XML 1.0 character data, fit for an element or an attribute in
 * double quotes: & < > " as entities, tab and newline as they are, a carriage return
 * as &#13; (so a parser keeps it), C1 controls as &#xN;, other control
 * characters and ill-formed UTF-8 as U+FFFD. NULL writes nothing. */
void util_json_xml(FILE *f, const char *s);

/* The length, 1 to 4, of the well-formed UTF-8 character at s (at most n
 * bytes long), with its code point in *cp (cp may be NULL); or 0 when the
 * bytes there are not one, with *cp = U+FFFD and *bad the length of the
 * maximal ill-formed part to replace (1 to 3). n must be at least 1. */
size_t util_json_utf8(const char *s, size_t n, uint32_t *cp, size_t *bad);

/* The largest length, at most budget, of a prefix of the n bytes at s that
 * ends on a character boundary: a well-formed character that does not fit
 * whole is left out, and so is the start of one that the n bytes end
 * inside (the rest of it was cut off before). Other ill-formed bytes count
 * as characters of their own (the writers replace them). */
size_t util_json_cut(const char *s, size_t n, size_t budget);

/* How many continuation bytes (at most 3) open the n bytes at s: where
 * text cut at its start (the tail of an output) begins again. */
size_t util_json_resync(const char *s, size_t n);

/* Copy src into dst (size bytes, size >= 1), cut by util_json_cut so it
 * always ends with a NUL and never inside a character. Returns the length
 * copied; src is not changed. */
size_t util_json_copy(char *dst, size_t size, const char *src);

/* End s before a character that its last bytes only begin, as snprintf
 * leaves when it cuts text short. Returns the new length. */
size_t util_json_trim(char *s);

#endif
