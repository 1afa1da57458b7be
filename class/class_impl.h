/*
 * class_impl.h: what the files of class/ share, not for outside use.
 */
#ifndef HOTROW_CLASS_IMPL_H
#define HOTROW_CLASS_IMPL_H

#include <stddef.h>

struct class_opts;
struct kit_db;

#define CLASS_NAME_MAX 40

/* Read a roster: one name a line, '#' starts a comment, blank lines and
 * repeats ignored. *names is malloc'ed (caller frees); 0, 1 (cannot read)
 * or 2 (a bad name, said on stderr; nothing returned). */
int class_roster_read(const char *path, char (**names)[CLASS_NAME_MAX + 1], size_t *n);

/* Open o->admin_url, which must be PostgreSQL; 1 (said) on failure. */
int class_open_admin(const struct class_opts *o, struct kit_db **db);

/* Say what failed with the database's message, roll back; returns 1. */
int class_fail(struct kit_db *db, const char *what);

/* The first column of the first row of sql as text into out; 0 or -1. */
int class_query_text(struct kit_db *db, const char *sql, char *out, size_t len);

#endif
