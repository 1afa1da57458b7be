/*
 * url.c: kit/url.h. The two shapes are scanned the way libpq reads them:
 * a URL's user part ends at the first '@' before any '/', and a conninfo
 * is KEY = VALUE pairs, a value quoted with '...' (backslash escapes) or
 * running to the next space.
 */
#include "kit/url.h"

#include <ctype.h>
#include <string.h>

#define HIDDEN "***"

#define MAX_PASSWORDS 4
#define MIN_SCRUB 4           /* shortest password kit_url_scrub looks for */
_Static_assert(MIN_SCRUB > sizeof HIDDEN - 1, "a scrubbed message must not grow");

/* The output being built: bytes past len are dropped, n counts them all. */
struct out {
	char *buf;
	size_t len, n;
	int hid;                      /* passwords hidden so far */
	const char *pw[MAX_PASSWORDS];   /* where they are in the input */
	size_t pwlen[MAX_PASSWORDS];
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, o->n++)
		if (o->n + 1 < o->len)
			o->buf[o->n] = s[i];
}

/* Put the password of n bytes at s: hidden unless empty. */
static void put_password(struct out *o, const char *s, size_t n)
{
	if (n == 0)
		return;
	put(o, HIDDEN, strlen(HIDDEN));
	if (o->hid < MAX_PASSWORDS) {
		o->pw[o->hid] = s;
		o->pwlen[o->hid] = n;
	}
	o->hid++;
}

/* A URL's query, from just after '?': password=... values hidden. */
static void query(struct out *o, const char *q)
{
	while (*q) {
		size_t n = strcspn(q, "&");
		const char *eq = memchr(q, '=', n);
		if (eq && eq - q == 8 && !strncmp(q, "password", 8)) {
			put(o, q, 9);
			put_password(o, eq + 1, n - 9);
		} else {
			put(o, q, n);
		}
		q += n;
		if (*q == '&')
			put(o, q++, 1);
	}
}

static void url(struct out *o, const char *u)
{
	const char *auth = strstr(u, "://") + 3;
	put(o, u, (size_t)(auth - u));
	size_t upto = strcspn(auth, "@/");
	const char *rest = auth;
	if (auth[upto] == '@') {
		const char *colon = memchr(auth, ':', upto);
		if (colon) {
			put(o, auth, (size_t)(colon - auth) + 1);
			put_password(o, colon + 1, (size_t)(auth + upto - colon - 1));
			put(o, "@", 1);
			rest = auth + upto + 1;
		}
	}
	const char *q = strchr(rest, '?');
	put(o, rest, q ? (size_t)(q - rest) + 1 : strlen(rest));
	if (q)
		query(o, q + 1);
}

/* Length of a conninfo value at v: quoted (to the closing quote) or bare
 * (to the next space), a backslash escaping the byte after it. */
static size_t value_len(const char *v)
{
	size_t i = 0;
	if (v[0] == '\'') {
		for (i = 1; v[i] && v[i] != '\''; i++)
			if (v[i] == '\\' && v[i + 1])
				i++;
		return v[i] ? i + 1 : i;
	}
	for (; v[i] && !isspace((unsigned char)v[i]); i++)
		if (v[i] == '\\' && v[i + 1])
			i++;
	return i;
}

/* A conninfo value may itself be a URL (dbname=postgresql://...). */
static int is_url(const char *v, size_t n)
{
	const char *sep = strstr(v, "://");
	return v[0] != '\'' && sep && sep < v + n;
}

static void url_value(struct out *o, const char *v, size_t n)
{
	char copy[1024];
	if (n >= sizeof copy) {
		put_password(o, NULL, n);   /* too long to read: hide it all */
		return;
	}
	memcpy(copy, v, n);
	copy[n] = '\0';
	int from = o->hid;
	url(o, copy);
	for (int i = from; i < o->hid && i < MAX_PASSWORDS; i++)
		o->pw[i] = v + (o->pw[i] - copy);   /* point into v: copy is about to go */
}

static void conninfo(struct out *o, const char *s)
{
	while (*s) {
		size_t sp = strspn(s, " \t\n\r\f\v");
		put(o, s, sp);
		s += sp;
		size_t k = strcspn(s, "= \t\n\r\f\v");
		int is_pw = k == 8 && !strncmp(s, "password", 8);
		put(o, s, k);
		s += k;
		sp = strspn(s, " \t\n\r\f\v");
		put(o, s, sp);
		s += sp;
		if (*s != '=')
			continue;               /* not KEY=VALUE: libpq refuses it anyway */
		put(o, s++, 1);
		sp = strspn(s, " \t\n\r\f\v");
		put(o, s, sp);
		s += sp;
		size_t v = value_len(s);
		if (is_pw && !(v == 2 && s[0] == '\''))   /* '' is an empty password */
			put_password(o, s, v);
		else if (is_url(s, v))
			url_value(o, s, v);
		else
			put(o, s, v);
		s += v;
	}
}

static struct out redact(const char *u, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	if (u == NULL)
		u = "";
	if (strstr(u, "://") && strcspn(u, " =") > (size_t)(strstr(u, "://") - u))
		url(&o, u);
	else
		conninfo(&o, u);
	if (len > 0)
		buf[o.n < len ? o.n : len - 1] = '\0';
	return o;
}

const char *kit_url_redact(const char *u, char *out, size_t len)
{
	redact(u, out, len);
	return out;
}

int kit_url_has_password(const char *u)
{
	char none[1];
	return redact(u, none, 0).hid > 0;
}

/* Replace each copy of the n bytes at pw in msg with HIDDEN, in place;
 * n > strlen(HIDDEN), so msg only gets shorter. */
static void replace_all(char *msg, const char *pw, size_t n)
{
	size_t h = strlen(HIDDEN);
	for (char *at = msg; (at = memmem(at, strlen(at), pw, n)) != NULL; at += h) {
		memmove(at + h, at + n, strlen(at + n) + 1);
		memcpy(at, HIDDEN, h);
	}
}

void kit_url_scrub(char *msg, const char *u)
{
	char none[1];
	struct out o = redact(u, none, 0);
	for (int i = 0; i < o.hid && i < MAX_PASSWORDS; i++) {
		const char *pw = o.pw[i];
		size_t n = o.pwlen[i];
		if (pw && pw[0] == '\'' && n >= 2) {   /* a quoted conninfo value */
			pw++;
			n -= 2;
		}
		/* A shorter one would hide letters of ordinary words too. */
		if (pw && n >= MIN_SCRUB)
			replace_all(msg, pw, n);
	}
}
