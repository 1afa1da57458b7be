/*
 * url.h: a database or store URL as the kit prints it, password hidden.
 *
 * Whatever the kit prints about a database (the runner's "PostgreSQL: ..."
 * line, a driver's or `hotrow top`'s error, the lines `hotrow class init`
 * shows on a projected screen) goes through kit_url_redact first, so a
 * student's or instructor's password never reaches a screen. The user,
 * host, port and database stay, so the line still says which server.
 *
 * Interface:
 *   char shown[512];
 *   printf("PostgreSQL: %s\n", kit_url_redact(url, shown, sizeof shown));
 * Three places hold a password and all three are hidden: USER:PASSWORD@
 * in a URL (postgresql://, postgres://, redis://), password=... in its
 * query string, and a password setting in a libpq conninfo
 * ("host=h password=secret", quoted or not).
 */
#ifndef HOTROW_KIT_URL_H
#define HOTROW_KIT_URL_H

#include <stddef.h>

/* Copy url into out (len bytes; always terminated when len > 0, cut short
 * if it does not fit) with each password replaced by "***"; an empty
 * password stays empty. url NULL gives "". Returns out, for printf. */
const char *kit_url_redact(const char *url, char *out, size_t len);

/* 1 when url carries a non-empty password (kit_url_redact changes it). */
int kit_url_has_password(const char *url);

/* Replace each copy of one of url's passwords in msg with "***", in place
 * (msg only gets shorter): for a library's message that quotes a piece of
 * the URL back ("invalid percent-encoded token"). Passwords under 4 bytes
 * are left alone: they would hide pieces of ordinary words. */
void kit_url_scrub(char *msg, const char *url);

#endif
