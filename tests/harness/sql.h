/*
 * sql.h: what a statement is, read as a server reads it.
 *
 * A check's hook sees every statement the student's code sends, as the
 * student wrote it: "update posts ...", "\n  UPDATE posts ...", an
 * UPDATE after a comment and, on PostgreSQL and MariaDB, "(SELECT ...)"
 * are all what they look like to the server (its parser skips blanks,
 * comments and an opening parenthesis, and keywords have no case). A hook that compares the first
 * bytes with "UPDATE" miscounts them: it fails a right solution written
 * another way, or lets a wrong one by. These read the statement the
 * server's way.
 *
 *   if (lt_sql_is(sql, "UPDATE") && lt_sql_names(sql, "posts")) ...
 */
#ifndef HOTROW_TESTS_SQL_H
#define HOTROW_TESTS_SQL_H

#include <stdbool.h>

/* The statement's first word: sql past blanks, opening parentheses and
 * comments (-- to the end of the line, and slash-star to star-slash).
 * "" for NULL. */
const char *lt_sql_verb(const char *sql);

/* True when the statement's first words are words, in any case, each a
 * whole word ("SET" is not "SETTINGS"); a blank in words stands for any
 * blanks and comments ("START TRANSACTION"). False for NULL. */
bool lt_sql_is(const char *sql, const char *words);

/* True when sql has name as a whole word anywhere outside its comments,
 * in any case: a table or a column ("posts" in "UPDATE Posts SET", not in
 * "reposts" or in "-- then posts"; in a quoted name or string, yes). */
bool lt_sql_names(const char *sql, const char *name);

#endif
