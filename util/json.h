/*
 * json.h: the kit's one JSON string writer.
 *
 * Every JSON document the kit writes (the grade's results.json; offered to
 * `hotrow sim --json` and the benches) puts its strings through
 * util_json_str, so a quote, a backslash, a newline or a control byte in
 * a check's message or a name never breaks the document. Bytes of 0x80
 * and above are copied as they are (UTF-8 passes through). Numbers need
 * no escaping; util_json_num writes a non-finite value as null, which JSON
 * has no number for. Header-only; see util/clock.h for why.
 *
 * Interface:
 *   fputs("{\"name\": ", f); util_json_str(f, name); fputs("}", f);
 *   util_json_num(f, 2.5, "%.3f");
 */
#ifndef HOTROW_UTIL_JSON_H
#define HOTROW_UTIL_JSON_H

#include <math.h>
#include <stdio.h>

/* "s" with quotes and escapes; NULL writes null. */
static inline void util_json_str(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* v with fmt ("%.3f", "%g"), or null when v is NaN or infinite. */
static inline void util_json_num(FILE *f, double v, const char *fmt)
{
	if (isfinite(v))
		fprintf(f, fmt, v);
	else
		fputs("null", f);
}

#endif
