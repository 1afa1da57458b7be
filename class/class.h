/*
 * class.h: class mode, one PostgreSQL server for a whole room.
 *
 * An instructor names a server they administer (ADMIN_URL, a superuser or
 * a role with CREATEROLE that owns the database) and a roster, one student
 * name a line. class_init gives each student
 *   - a login role hr_NAME with a generated password (16 characters from
 *     /dev/urandom), a connection limit, and a statement timeout and an
 *     idle-in-transaction timeout set on the role, so one runaway load test
 *     cannot starve the room;
 *   - a schema hr_NAME owned by that role, with nothing granted to PUBLIC
 *     (other students cannot use it, read it or create in it);
 *   - CREATE on the database, because the lab checks make a schema of their
 *     own per test (owned by the student, so private too);
 *   - a table hr_NAME.hotrow_results where `hotrow lab check` and `grade`
 *     record the student's results (class_record).
 * What it made, and the one database-wide change it may make (taking
 * CREATE on schema public away from PUBLIC, on servers older than
 * PostgreSQL 15 where PUBLIC still has it), are written in the schema
 * hotrow_class, which only the administrator can read; class_drop reads it
 * back and undoes exactly that, and nothing else.
 *
 * Interface:
 *   struct class_opts o = CLASS_OPTS_DEFAULT; o.admin_url = url; ...
 *   class_init(&o, roster_path, out_path);   // prints one URL per student
 *   class_status(&o); class_grade(&o, dir); class_drop(&o, roster_or_NULL, yes);
 *   class_record(getenv("HOTROW_PG_URL"), "01-hot-row", 5, 7);  // students
 * Each returns 0 on success, 1 when the work failed (the message is on
 * stderr), 2 for a bad roster name.
 */
#ifndef HOTROW_CLASS_H
#define HOTROW_CLASS_H

struct class_opts {
	const char *admin_url;       /* the server, as its administrator */
	const char *host;            /* the host students connect to, or NULL: the admin URL's */
	int conn_limit;              /* connections per student */
	int statement_timeout_ms;    /* per statement, set on the role */
};

#define CLASS_CONN_LIMIT 20
#define CLASS_STATEMENT_TIMEOUT_MS 60000
#define CLASS_OPTS_DEFAULT { NULL, NULL, CLASS_CONN_LIMIT, CLASS_STATEMENT_TIMEOUT_MS }

/* A roster name is 1-40 characters of a-z, 0-9 and _, starting with a
 * letter (upper case is folded, '-', '.' and ' ' become '_'). Writes the
 * folded name into out (at least 41 bytes); returns 0, or -1 when the name
 * cannot be a role name. */
int class_name(const char *line, char *out);

/* Create what is missing for each roster name; a student already made
 * keeps their role, password and schema untouched. Prints one line per
 * student, "NAME URL", and writes the same lines to out_path (mode 0600)
 * when it is not NULL. The printed URLs have their passwords hidden
 * (kit/url.h) when out_path is given or stdout is a terminal. */
int class_init(const struct class_opts *o, const char *roster, const char *out_path);

/* One row per student, one column per lab: checks passing of the checks
 * recorded, and the student's last activity. */
int class_status(const struct class_opts *o);

/* Every student's recorded results into DIR/results.json, Gradescope's
 * format: one test per student and lab, score = checks passing. */
int class_grade(const struct class_opts *o, const char *dir);

/* Remove the students named in roster (every student when NULL): their
 * schema, everything they own in this database, their role. When no
 * student is left, undo the database-wide change and remove hotrow_class.
 * Without yes, only says what it would remove and returns 1. */
int class_drop(const struct class_opts *o, const char *roster, int yes);

/* For the lab runner: when url names a class role (its schema has a
 * hotrow_results table), record that lab's checks; otherwise, or when the
 * server cannot be reached, do nothing. Never fails the caller: returns 1
 * when recorded, 0 when not a class role (or url is NULL or SQLite), -1 on
 * an error (said on stderr). */
int class_record(const char *url, const char *lab, int passed, int total);

#endif
