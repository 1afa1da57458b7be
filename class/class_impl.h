/*
 * class_impl.h: what the files of class/ share, not for outside use.
 *
 * class/ is split by concept, and no two of its files call each other:
 *   roster.c  reading a roster, folding names (no database)
 *   conn.c    the administrator's connection: every admin session is
 *             opened here, with search_path pinned to pg_catalog, pg_temp
 *   init.c    `class init`: hotrow_class, the students' roles and schemas
 *   drop.c    `class drop`: taking exactly that away again
 *   room.c    `class status`, `status --watch` and `grade`: reading
 *             hotrow_class.results
 *   rebuild.c `class grade --rebuild`: each submission checked afresh
 *   record.c  the student's side: class_record and class_submit, through
 *             the SECURITY DEFINER functions init made
 * init, drop, room and rebuild call roster.c and conn.c only; record.c
 * calls none of them.
 *
 * Every SQL text an admin session sends names its objects in full
 * (pg_catalog.quote_ident, hotrow_class.students): the search_path is
 * pinned anyway, and a qualified name says which object is meant.
 */
#ifndef HOTROW_CLASS_IMPL_H
#define HOTROW_CLASS_IMPL_H

#include <stddef.h>

struct class_opts;
struct kit_db;

#define CLASS_NAME_MAX 40

/* One roster name, folded (class_name) and as it was written. */
struct class_student {
	char name[CLASS_NAME_MAX + 1];
	char spelled[64];      /* the roster's text, cut to fit */
	size_t line;           /* its line in the roster */
};

/* Read a roster: one name a line, '#' starts a comment, blank lines
 * ignored. Two lines that fold to the same name (Ada and ada, mary-ann and
 * Mary Ann, or the same name twice) are refused, with both line numbers.
 * *out is malloc'ed (caller frees); 0, 1 (cannot read) or 2 (bad names,
 * each said on stderr; nothing returned). */
int class_roster_read(const char *path, struct class_student **out, size_t *n);

/* Open o->admin_url, which must be PostgreSQL, and pin the session's
 * search_path to pg_catalog, pg_temp before anything else runs (and stop
 * a statement of ours waiting behind a student's lock for long).
 * 0, or 1 (said) with *db NULL. */
int class_open_admin(const struct class_opts *o, struct kit_db **db);

/* Say what failed with the database's message, roll back; returns 1. */
int class_fail(struct kit_db *db, const char *what);

/* The first column of the first row of sql (with its parameters) as text
 * into out; 0, or -1 (no row, or the query failed). */
int class_query_text(struct kit_db *db, const char *sql, int nparams,
                     const char *const *params, char *out, size_t len);

/* The printf format of a student's URL, with %s for the role and then
 * the password: the server as the admin reaches it (host or socket
 * directory, port, database), or o->host instead of the host. 0, or -1
 * (said). */
int class_url_format(const struct class_opts *o, char *fmt, size_t len);

/* The integer sql returns, > 0 as 1 ("is there one?"); 0, 1, or -1. */
int class_exists(struct kit_db *db, const char *sql, const char *arg);

#endif
