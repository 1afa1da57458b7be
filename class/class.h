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
 *   - no CREATE on the database: the lab checks get a schema of their own
 *     per test from hotrow_class.new_schema(), owned by the student.
 * Everything class mode keeps lives in the schema hotrow_class, owned by
 * the administrator: the students and their passwords, the kit's labs and
 * their checks, each student's results (hotrow_class.results), their
 * submitted exercise files, and the database-wide changes init made
 * (taking CREATE on the database and on schema public from PUBLIC where a
 * server gave it), which class_drop reads back and undoes, and nothing
 * else. Students write there only through SECURITY DEFINER functions
 * (record, submit_clear, submit_file, new_schema) that check who calls
 * (session_user), the lab (one of the kit's) and the numbers.
 *
 * The administrator's sessions never run what a student made: the
 * search_path is pinned to pg_catalog, pg_temp, every name is qualified,
 * and they read only the catalogs and hotrow_class. What a student
 * reports from their own machine (class_record) is self-reported and is
 * shown as such; a score comes only from class_rebuild, which builds and
 * checks each submission in a fresh copy of the kit as that student.
 *
 * Interface:
 *   struct class_opts o = CLASS_OPTS_DEFAULT; o.admin_url = url; ...
 *   class_init(&o, roster_path, out_path);   // prints one URL per student
 *   class_status(&o); class_watch(&o, frames);
 *   class_rebuild(&o); class_grade(&o, dir); class_drop(&o, roster_or_NULL, yes);
 *   class_record(getenv("HOTROW_PG_URL"), "01-hot-row", 5, 7);  // students
 *   class_submit(getenv("HOTROW_PG_URL"), "01-hot-row", "exercises/01-hot-row");
 * Each returns 0 on success, 1 when the work failed (the message is on
 * stderr), 2 for a bad roster.
 */
#ifndef HOTROW_CLASS_H
#define HOTROW_CLASS_H

/* A lab of the kit and how many checks it has (its maximum). */
struct class_lab {
	const char *name;            /* "01-hot-row" */
	int max;                     /* checks expected; 0 when unknown */
};

struct class_opts {
	const char *admin_url;       /* the server, as its administrator */
	const char *host;            /* the host students connect to, or NULL: the admin URL's */
	int conn_limit;              /* connections per student */
	int statement_timeout_ms;    /* per statement, set on the role */
	const struct class_lab *labs;   /* init: the kit's labs */
	int nlabs;
	const char *kit_root;        /* rebuild: the instructor's kit tree */
	const char *self;            /* rebuild: the hotrow binary that grades */
	int interval_s;              /* watch: seconds between frames */
	int stuck_min;               /* watch: no progress for this long is stuck */
};

#define CLASS_CONN_LIMIT 20
#define CLASS_STATEMENT_TIMEOUT_MS 60000
#define CLASS_OPTS_DEFAULT { NULL, NULL, CLASS_CONN_LIMIT, CLASS_STATEMENT_TIMEOUT_MS, \
                             NULL, 0, NULL, NULL, 5, 10 }

/* The most a submission may hold: files, bytes per file, bytes in all. */
#define CLASS_SUBMIT_FILES 16
#define CLASS_SUBMIT_FILE_BYTES 65536
#define CLASS_SUBMIT_BYTES 262144

/* A roster name is 1-40 characters of a-z, 0-9 and _, starting with a
 * letter (upper case is folded, '-', '.' and ' ' become '_'). Writes the
 * folded name into out (at least 41 bytes); returns 0, or -1 when the name
 * cannot be a role name. */
int class_name(const char *line, char *out);

/* Create what is missing for each roster name; a student already made
 * keeps their role, password and schema untouched. Records o->labs as the
 * kit's labs. Prints one line per student, "NAME URL", and writes the same
 * lines to out_path (mode 0600) when it is not NULL. The printed URLs have
 * their passwords hidden (kit/url.h) when out_path is given or stdout is a
 * terminal. Warns when the room's connection limits add up to more than
 * the server's max_connections. */
int class_init(const struct class_opts *o, const char *roster, const char *out_path);

/* One row per student, one column per lab of the kit: the checks passing
 * the student last reported (self-reported), the graded score when there
 * is one, and the student's last activity. A student whose records cannot
 * be read is named as such; the others are shown. */
int class_status(const struct class_opts *o);

/* The status as a live table, redrawn every o->interval_s seconds, with
 * the students who look stuck highlighted (no progress for o->stuck_min
 * minutes, or the same failing result three runs in a row). frames > 0
 * prints that many frames as plain text and returns (for tests and logs);
 * 0 runs until q or a signal, and restores the terminal on every exit. */
int class_watch(const struct class_opts *o, int frames);

/* Every student and every lab of the kit into DIR/results.json,
 * Gradescope's format: score = checks passing in class_rebuild's run, of
 * the lab's maximum (0 of it when never graded). What the student
 * reported is in the output text, marked self-reported, never the score. */
int class_grade(const struct class_opts *o, const char *dir);

/* For every submission (class_submit), in a fresh copy of o->kit_root with
 * the student's files in place: `o->self lab grade LAB` as that student
 * (their role and a schema of theirs, not the administrator), and its
 * score into hotrow_class.graded. Prints one line per submission. */
int class_rebuild(const struct class_opts *o);

/* Remove the students named in roster (every student when NULL): their
 * schema, everything they own in this database, their role, their
 * records. When no student is left, undo the database-wide changes and
 * remove hotrow_class. Without yes, only says what it would remove and
 * returns 1. */
int class_drop(const struct class_opts *o, const char *roster, int yes);

/* For the lab runner: when url names a class role, record that lab's
 * checks (self-reported) through hotrow_class.record; otherwise, or when
 * the server cannot be reached, do nothing. Never fails the caller:
 * returns 1 when recorded, 0 when not a class role (or url is NULL or
 * SQLite), -1 on an error (said on stderr). */
int class_record(const char *url, const char *lab, int passed, int total);

/* The student's side of grading: the regular *.c and *.h files of dir
 * (their exercise of lab) into the class database, replacing what they
 * submitted before; refused (nothing stored) past the CLASS_SUBMIT_* caps.
 * 0, or 1 (said). */
int class_submit(const char *url, const char *lab, const char *dir);

#endif
