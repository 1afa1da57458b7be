/*
 * drop.c: `hotrow class drop` (see class.h): the students' roles, schemas
 * and records, and once none is left, what init changed on the server.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"

static int drop_student(struct kit_db *db, const char *name, const char *role)
{
	char sql[600];
	/* Their sessions first: an open transaction of theirs would make the
	 * DROP wait, and a role with sessions cannot go. */
	int64_t ended;
	if (kit_db_query_int(db, "SELECT pg_catalog.count(pg_catalog.pg_terminate_backend(pid))"
	                     " FROM pg_catalog.pg_stat_activity WHERE usename = $1",
	                     1, (const char *[]){role}, &ended) != 0)
		return class_fail(db, "cannot end the student's sessions");
	/* role is [a-z0-9_]: it comes from class_name through the registry.
	 * A role removed by hand leaves only the registry's row to remove. */
	int here = class_exists(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_roles"
	                        " WHERE rolname = $1", role);
	if (here < 0)
		return class_fail(db, "cannot read pg_roles");
	snprintf(sql, sizeof sql, here ? "DROP SCHEMA IF EXISTS %s CASCADE; DROP OWNED BY %s; DROP ROLE %s"
	         : "DROP SCHEMA IF EXISTS %s CASCADE", role, role, role);
	if (kit_db_begin(db) != 0 || kit_db_exec(db, sql, 0, NULL) != 0 ||
	    kit_db_exec(db, "DELETE FROM hotrow_class.students WHERE name = $1", 1,
	                (const char *[]){name}) != 0 ||
	    kit_db_commit(db) != 0) {
		char what[200];
		snprintf(what, sizeof what, "cannot remove %s (%s)", name, role);
		return class_fail(db, what);
	}
	printf("removed %s: role and schema %s%s\n", name, role,
	       ended ? ", after ending their sessions" : "");
	return 0;
}

static int add_name(void *arg, int ncols, const char *const *v)
{
	struct { struct class_student *s; size_t n, cap; } *w = arg;
	(void)ncols;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		void *p = realloc(w->s, w->cap * sizeof *w->s);
		if (!p)
			return 1;
		w->s = p;
	}
	memset(&w->s[w->n], 0, sizeof w->s[w->n]);
	snprintf(w->s[w->n++].name, CLASS_NAME_MAX + 1, "%s", v[0]);
	return 0;
}

static int run_undo(void *arg, int ncols, const char *const *v)
{
	struct kit_db *db = arg;
	(void)ncols;
	if (kit_db_exec(db, v[0], 0, NULL) != 0)
		return 1;
	printf("gave back: %s\n", v[0]);
	return 0;
}

/* The last student is gone: undo the database-wide changes, then the
 * registry. Only the undos init writes are run (GRANTs giving PUBLIC back
 * what it took); anything else in hotrow_class.changes was not written by
 * this kit, and then nothing is run. 0 or 1 (said). */
static int drop_registry(struct kit_db *db)
{
	int64_t unknown = 0;
	if (kit_db_query_int(db, "SELECT pg_catalog.count(*) FROM hotrow_class.changes"
	                     " WHERE undo <> 'GRANT CREATE ON SCHEMA public TO PUBLIC'"
	                     " AND undo <> 'GRANT CREATE ON DATABASE '"
	                     " || pg_catalog.quote_ident(pg_catalog.current_database()) || ' TO PUBLIC'",
	                     0, NULL, &unknown) != 0)
		return class_fail(db, "cannot read hotrow_class.changes");
	if (unknown > 0) {
		fprintf(stderr, "hotrow class: hotrow_class.changes holds a change this version "
		        "did not make; hotrow_class left in place\n");
		return 1;
	}
	if (kit_db_begin(db) != 0 ||
	    kit_db_query(db, "SELECT undo FROM hotrow_class.changes ORDER BY id DESC", 0, NULL,
	                 run_undo, db) != 0 ||
	    kit_db_exec(db, "DROP SCHEMA hotrow_class CASCADE", 0, NULL) != 0 ||
	    kit_db_commit(db) != 0)
		return class_fail(db, "cannot remove hotrow_class");
	printf("removed hotrow_class\n");
	return 0;
}

int class_drop(const struct class_opts *o, const char *roster, int yes)
{
	struct { struct class_student *s; size_t n, cap; } w = {0};
	int rc = 0;
	if (roster) {
		rc = class_roster_read(roster, &w.s, &w.n);
		if (rc != 0)
			return rc;
		w.cap = w.n;
	}
	struct kit_db *db;
	if (class_open_admin(o, &db) != 0) {
		free(w.s);
		return 1;
	}
	int made = class_exists(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace"
	                        " WHERE nspname = 'hotrow_class'", NULL);
	if (made <= 0) {
		printf("nothing to remove: hotrow class init has not been run on this database\n");
		free(w.s);
		kit_db_close(db);
		return made < 0 ? 1 : 0;
	}
	if (!roster && kit_db_query(db, "SELECT name FROM hotrow_class.students ORDER BY name",
	                            0, NULL, add_name, &w) != 0) {
		free(w.s);
		rc = class_fail(db, "cannot read hotrow_class.students");
		kit_db_close(db);
		return rc;
	}
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		char role[CLASS_NAME_MAX + 8];
		snprintf(role, sizeof role, "hr_%s", w.s[i].name);
		int known = class_exists(db, "SELECT pg_catalog.count(*) FROM hotrow_class.students"
		                         " WHERE name = $1", w.s[i].name);
		if (known < 0)
			rc = class_fail(db, "cannot read hotrow_class.students");
		else if (!known)
			printf("skipped %s: not a student of this class\n", w.s[i].name);
		else if (!yes)
			printf("would remove %s: role and schema %s, all they own in this database, "
			       "their results and submissions\n", w.s[i].name, role);
		else if (drop_student(db, w.s[i].name, role) != 0)
			rc = 1;
	}
	free(w.s);
	if (rc == 0 && yes && class_exists(db, "SELECT pg_catalog.count(*) FROM hotrow_class.students",
	                                   NULL) == 0)
		rc = drop_registry(db);
	if (!yes && rc == 0) {
		printf("nothing removed: add --yes to remove it\n");
		rc = 1;
	}
	kit_db_close(db);
	return rc;
}
