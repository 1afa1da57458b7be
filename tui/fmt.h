/*
 * fmt.h: numbers the way a person reads them aloud.
 *
 * Thousands separators ("2,000"), durations that pick their unit
 * ("0.25 ms", "2 ms", "1.5 s", "4 min"), rates ("500/s"). Every function
 * writes into the caller's buffer, always NUL-terminated, and returns it,
 * so calls nest inside one printf.
 *
 * Interface:
 *   char a[32], b[32];
 *   printf("%s at %s", tui_fmt_rate(a, sizeof a, 2000), tui_fmt_ms(b, sizeof b, 2));
 */
#ifndef HOTROW_TUI_FMT_H
#define HOTROW_TUI_FMT_H

#include <stddef.h>
#include <stdint.h>

/* 1234567 -> "1,234,567"; negative numbers keep their sign. */
char *tui_fmt_int(char *buf, size_t len, int64_t n);
/* A count rounded to an integer below 10,000, else "12.3k", "4.5M". */
char *tui_fmt_short(char *buf, size_t len, double n);
/* Per-second rate: "2,000/s", "0.5/s". */
char *tui_fmt_rate(char *buf, size_t len, double per_s);
/* Milliseconds with a fitting unit: "0.25 ms", "2 ms", "1.5 s", "4.2 min". */
char *tui_fmt_ms(char *buf, size_t len, double ms);
/* Seconds: "0.013 s", "2.5 s", "3 min". */
char *tui_fmt_s(char *buf, size_t len, double s);
/* A number with 2 significant-ish decimals: 4 -> "4.0", 0.4 -> "0.40". */
char *tui_fmt_ratio(char *buf, size_t len, double x);

#endif
