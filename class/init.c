/*
 * init.c: `hotrow class init` (see class.h): hotrow_class with its tables
 * and functions, and a private place per student on the server.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"
#include "kit/url.h"

#define IDLE_TX_TIMEOUT "300s"   /* an open transaction left behind holds locks */
#define CLASS_STR_(x) #x
#define CLASS_STR(x) CLASS_STR_(x)

/* hotrow_class: only the administrator may create in it or read its
 * tables; students get USAGE (to call the functions below) and EXECUTE on
 * those functions, nothing else. */
static const char REGISTRY_SQL[] =
	"CREATE SCHEMA IF NOT EXISTS hotrow_class;"
	"REVOKE ALL ON SCHEMA hotrow_class FROM PUBLIC;"
	"CREATE TABLE IF NOT EXISTS hotrow_class.students ("
	" name text PRIMARY KEY, role text NOT NULL UNIQUE, password text NOT NULL,"
	" spelled text NOT NULL DEFAULT '', created_at timestamptz NOT NULL DEFAULT pg_catalog.now());"
	"CREATE TABLE IF NOT EXISTS hotrow_class.changes ("
	" id serial PRIMARY KEY, done text NOT NULL, undo text NOT NULL);"
	"CREATE TABLE IF NOT EXISTS hotrow_class.labs ("
	" name text PRIMARY KEY, max_score int NOT NULL CHECK (max_score >= 0));"
	/* What students report: passed of total at their last run. same_runs
	 * counts runs in a row with the same failing result; progress_at is
	 * when passed last went up (for class status --watch). */
	"CREATE TABLE IF NOT EXISTS hotrow_class.results ("
	" student text NOT NULL REFERENCES hotrow_class.students ON DELETE CASCADE,"
	" lab text NOT NULL REFERENCES hotrow_class.labs ON DELETE CASCADE,"
	" passed int NOT NULL, total int NOT NULL, runs int NOT NULL DEFAULT 1,"
	" same_runs int NOT NULL DEFAULT 1,"
	" at timestamptz NOT NULL DEFAULT pg_catalog.now(),"
	" progress_at timestamptz NOT NULL DEFAULT pg_catalog.now(),"
	" PRIMARY KEY (student, lab), CHECK (passed >= 0 AND passed <= total));"
	"CREATE TABLE IF NOT EXISTS hotrow_class.submissions ("
	" student text NOT NULL REFERENCES hotrow_class.students ON DELETE CASCADE,"
	" lab text NOT NULL REFERENCES hotrow_class.labs ON DELETE CASCADE,"
	" file text NOT NULL, body bytea NOT NULL,"
	" at timestamptz NOT NULL DEFAULT pg_catalog.now(), PRIMARY KEY (student, lab, file));"
	/* What class grade --rebuild measured: the only scores. */
	"CREATE TABLE IF NOT EXISTS hotrow_class.graded ("
	" student text NOT NULL REFERENCES hotrow_class.students ON DELETE CASCADE,"
	" lab text NOT NULL REFERENCES hotrow_class.labs ON DELETE CASCADE,"
	" passed int NOT NULL, total int NOT NULL, note text NOT NULL DEFAULT '',"
	" at timestamptz NOT NULL DEFAULT pg_catalog.now(), PRIMARY KEY (student, lab));"
	"CREATE SEQUENCE IF NOT EXISTS hotrow_class.places;"

	/* The calling student's name, from session_user (a student cannot
	 * change it: SET ROLE changes current_user only). Not granted. */
	"CREATE OR REPLACE FUNCTION hotrow_class.me() RETURNS text"
	" LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE who text;"
	" BEGIN"
	"  SELECT s.name INTO who FROM hotrow_class.students s WHERE s.role = session_user::text;"
	"  IF who IS NULL THEN"
	"   RAISE EXCEPTION 'hotrow: % is not a student of this class', session_user;"
	"  END IF;"
	"  RETURN who;"
	" END $f$;"
	/* A lab of the kit and its maximum, or an error. Not granted. */
	"CREATE OR REPLACE FUNCTION hotrow_class.lab_max(p_lab text) RETURNS int"
	" LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE cap int;"
	" BEGIN"
	"  IF p_lab IS NULL OR p_lab ~ '[[:cntrl:]]' THEN"
	"   RAISE EXCEPTION 'hotrow: a lab name holds no control characters';"
	"  END IF;"
	"  SELECT l.max_score INTO cap FROM hotrow_class.labs l WHERE l.name = p_lab;"
	"  IF cap IS NULL THEN"
	"   RAISE EXCEPTION 'hotrow: \"%\" is not a lab of this kit', pg_catalog.left(p_lab, 64);"
	"  END IF;"
	"  RETURN cap;"
	" END $f$;"
	"CREATE OR REPLACE FUNCTION hotrow_class.record(p_lab text, p_passed int, p_total int)"
	" RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE who text := hotrow_class.me(); cap int := hotrow_class.lab_max(p_lab);"
	" BEGIN"
	"  IF p_passed IS NULL OR p_total IS NULL OR p_passed < 0 OR p_passed > p_total"
	"     OR (cap > 0 AND p_total > cap) THEN"
	"   RAISE EXCEPTION 'hotrow: % of % checks is not a result of %', p_passed, p_total, p_lab;"
	"  END IF;"
	"  INSERT INTO hotrow_class.results AS r (student, lab, passed, total)"
	"  VALUES (who, p_lab, p_passed, p_total)"
	"  ON CONFLICT (student, lab) DO UPDATE SET passed = EXCLUDED.passed, total = EXCLUDED.total,"
	"   runs = r.runs + 1, at = pg_catalog.now(),"
	"   progress_at = CASE WHEN EXCLUDED.passed > r.passed THEN pg_catalog.now() ELSE r.progress_at END,"
	"   same_runs = CASE WHEN EXCLUDED.passed = r.passed AND EXCLUDED.total = r.total"
	"                     AND EXCLUDED.passed < EXCLUDED.total THEN r.same_runs + 1 ELSE 1 END;"
	" END $f$;"
	"CREATE OR REPLACE FUNCTION hotrow_class.submit_clear(p_lab text)"
	" RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE who text := hotrow_class.me(); cap int := hotrow_class.lab_max(p_lab);"
	" BEGIN"
	"  DELETE FROM hotrow_class.submissions s WHERE s.student = who AND s.lab = p_lab;"
	" END $f$;"
	"CREATE OR REPLACE FUNCTION hotrow_class.submit_file(p_lab text, p_file text, p_body bytea)"
	" RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE who text := hotrow_class.me(); cap int := hotrow_class.lab_max(p_lab);"
	"  files int; bytes bigint;"
	" BEGIN"
	"  IF p_file IS NULL OR p_file !~ '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,61}[.][ch]$' OR p_body IS NULL THEN"
	"   RAISE EXCEPTION 'hotrow: \"%\" is not an exercise file name', pg_catalog.left(p_file, 64);"
	"  END IF;"
	"  DELETE FROM hotrow_class.submissions s WHERE s.student = who AND s.lab = p_lab AND s.file = p_file;"
	"  SELECT pg_catalog.count(*), coalesce(pg_catalog.sum(pg_catalog.octet_length(s.body)), 0)"
	"   INTO files, bytes FROM hotrow_class.submissions s WHERE s.student = who AND s.lab = p_lab;"
	"  IF pg_catalog.octet_length(p_body) > " CLASS_STR(CLASS_SUBMIT_FILE_BYTES)
	"     OR files + 1 > " CLASS_STR(CLASS_SUBMIT_FILES)
	"     OR bytes + pg_catalog.octet_length(p_body) > " CLASS_STR(CLASS_SUBMIT_BYTES) " THEN"
	"   RAISE EXCEPTION 'hotrow: a submission holds at most " CLASS_STR(CLASS_SUBMIT_FILES)
	" files of " CLASS_STR(CLASS_SUBMIT_FILE_BYTES) " bytes, " CLASS_STR(CLASS_SUBMIT_BYTES) " in all';"
	"  END IF;"
	"  INSERT INTO hotrow_class.submissions (student, lab, file, body) VALUES (who, p_lab, p_file, p_body);"
	" END $f$;"
	/* A schema for one lab check, owned by the student; the checks make
	 * one per test and drop it (they may not create schemas themselves). */
	"CREATE OR REPLACE FUNCTION hotrow_class.new_schema() RETURNS text"
	" LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$"
	" DECLARE who text := hotrow_class.me(); r text := session_user::text; s text;"
	" BEGIN"
	"  IF (SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles o"
	"      ON o.oid = n.nspowner WHERE o.rolname = r) >= 64 THEN"
	"   RAISE EXCEPTION 'hotrow: % owns 64 schemas already; drop those left behind', r;"
	"  END IF;"
	"  s := 'lt_' || r || '_' || pg_catalog.nextval('hotrow_class.places');"
	"  IF EXISTS (SELECT FROM pg_catalog.pg_roles o WHERE o.rolname = s) THEN"
	"   RAISE EXCEPTION 'hotrow: % is a role''s name', s;"
	"  END IF;"
	"  EXECUTE pg_catalog.format('CREATE SCHEMA %I AUTHORIZATION %I', s, r);"
	"  RETURN s;"
	" END $f$;"
	"REVOKE ALL ON FUNCTION hotrow_class.me(), hotrow_class.lab_max(text),"
	" hotrow_class.record(text, int, int), hotrow_class.submit_clear(text),"
	" hotrow_class.submit_file(text, text, bytea), hotrow_class.new_schema() FROM PUBLIC";

/* 16 letters and digits from /dev/urandom: safe in a URL and in SQL. */
static int new_password(char out[17])
{
	static const char abc[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789";
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, raw, sizeof raw) != (ssize_t)sizeof raw) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (int i = 0; i < 16; i++)
		out[i] = abc[raw[i] % (sizeof abc - 1)];   /* 56 letters: a slight bias, 90 bits */
	out[16] = '\0';
	return 0;
}

/* What a student may use of hotrow_class, and no CREATE on the database
 * (a class made by an older kit gave it): run for every student on every
 * init, so a room made earlier is brought up to date too. */
static const char GRANTS_SQL[] =
	"DO $d$ DECLARE r text; BEGIN"
	" FOR r IN SELECT s.role FROM hotrow_class.students s ORDER BY s.role LOOP"
	"  EXECUTE pg_catalog.format('REVOKE CREATE ON DATABASE %I FROM %I', pg_catalog.current_database(), r);"
	"  EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA hotrow_class TO %I', r);"
	"  EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION hotrow_class.record(text, int, int),"
	"   hotrow_class.submit_clear(text), hotrow_class.submit_file(text, text, bytea),"
	"   hotrow_class.new_schema() TO %I', r);"
	" END LOOP; END $d$";

/* PUBLIC's privilege priv on the object the catalogue query names. */
static int public_has(struct kit_db *db, const char *acl_sql)
{
	return class_exists(db, acl_sql, NULL);
}

/* Take priv from PUBLIC when a server gives it, and note how to give it
 * back. 0, or 1 (said). */
static int take_from_public(struct kit_db *db, const char *acl_sql, const char *revoke,
                            const char *grant, const char *what)
{
	int open_now = public_has(db, acl_sql);
	if (open_now < 0)
		return class_fail(db, "cannot read the privileges of PUBLIC");
	if (!open_now)
		return 0;
	if (kit_db_exec(db, revoke, 0, NULL) != 0 ||
	    kit_db_exec(db, "INSERT INTO hotrow_class.changes (done, undo) VALUES ($1, $2)",
	                2, (const char *[]){revoke, grant}) != 0)
		return class_fail(db, revoke);
	fprintf(stderr, "hotrow class: took %s from PUBLIC (`hotrow class drop` gives it back)\n", what);
	return 0;
}

/* The registry, the kit's labs, and the database-wide changes, made once
 * (and brought up to date on every init). */
static int registry(const struct class_opts *o, struct kit_db *db)
{
	char dbname[200], revoke[300], grant[300];
	if (class_query_text(db, "SELECT pg_catalog.quote_ident(pg_catalog.current_database())",
	                     0, NULL, dbname, sizeof dbname) != 0)
		return class_fail(db, "cannot read the database's name");
	if (kit_db_begin(db) != 0 || kit_db_exec(db, REGISTRY_SQL, 0, NULL) != 0)
		return class_fail(db, "cannot make the schema hotrow_class");
	for (int i = 0; i < o->nlabs; i++) {
		char max[16];
		snprintf(max, sizeof max, "%d", o->labs[i].max);
		if (kit_db_exec(db, "INSERT INTO hotrow_class.labs (name, max_score) VALUES ($1, $2)"
		                " ON CONFLICT (name) DO UPDATE SET max_score = EXCLUDED.max_score",
		                2, (const char *[]){o->labs[i].name, max}) != 0)
			return class_fail(db, "cannot record the kit's labs");
	}
	/* PostgreSQL 15 and later give PUBLIC no CREATE on schema public;
	 * older servers do, and a database may have been given CREATE for
	 * PUBLIC by hand. Either would let a student make objects the
	 * administrator's sessions could find. */
	if (take_from_public(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace n,"
	                     " pg_catalog.aclexplode(coalesce(n.nspacl,"
	                     " pg_catalog.acldefault('n', n.nspowner))) a"
	                     " WHERE n.nspname = 'public' AND a.grantee = 0 AND a.privilege_type = 'CREATE'",
	                     "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
	                     "GRANT CREATE ON SCHEMA public TO PUBLIC", "CREATE on schema public") != 0)
		return 1;
	snprintf(revoke, sizeof revoke, "REVOKE CREATE ON DATABASE %s FROM PUBLIC", dbname);
	snprintf(grant, sizeof grant, "GRANT CREATE ON DATABASE %s TO PUBLIC", dbname);
	if (take_from_public(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_database d,"
	                     " pg_catalog.aclexplode(coalesce(d.datacl,"
	                     " pg_catalog.acldefault('d', d.datdba))) a"
	                     " WHERE d.datname = pg_catalog.current_database() AND a.grantee = 0"
	                     " AND a.privilege_type = 'CREATE'", revoke, grant,
	                     "CREATE on the database") != 0)
		return 1;
	if (kit_db_commit(db) != 0)
		return class_fail(db, "cannot make the schema hotrow_class");
	return 0;
}

/* Make one student's role and schema, in one transaction. */
static int add_student(const struct class_opts *o, struct kit_db *db, const struct class_student *st)
{
	char role[CLASS_NAME_MAX + 8], pw[17], sql[2048];
	snprintf(role, sizeof role, "hr_%s", st->name);
	int taken = class_exists(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_roles"
	                         " WHERE rolname = $1", role);
	if (taken == 0)
		taken = class_exists(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_namespace"
		                     " WHERE nspname = $1", role);
	if (taken < 0)
		return class_fail(db, "cannot read pg_roles");
	if (taken) {
		fprintf(stderr, "hotrow class: %s: a role or schema %s exists that class mode did not "
		        "make; left alone, and %s gets no place\n", st->name, role, st->name);
		return 1;
	}
	if (new_password(pw) != 0) {
		fprintf(stderr, "hotrow class: cannot read /dev/urandom: %s\n", strerror(errno));
		return 1;
	}
	if (kit_db_begin(db) != 0)
		return class_fail(db, "BEGIN");
	/* role is [a-z0-9_] (class_name), pw letters and digits: both are
	 * safe inside the statement as they are. */
	snprintf(sql, sizeof sql,
	         "CREATE ROLE %s LOGIN NOINHERIT PASSWORD '%s' CONNECTION LIMIT %d;"
	         "ALTER ROLE %s SET statement_timeout = %d;"
	         "ALTER ROLE %s SET idle_in_transaction_session_timeout = '" IDLE_TX_TIMEOUT "';"
	         "ALTER ROLE %s SET search_path = %s;"
	         "CREATE SCHEMA %s AUTHORIZATION %s",
	         role, pw, o->conn_limit, role, o->statement_timeout_ms, role, role, role,
	         role, role);
	if (kit_db_exec(db, sql, 0, NULL) != 0 ||
	    kit_db_exec(db, "INSERT INTO hotrow_class.students (name, role, password, spelled)"
	                " VALUES ($1, $2, $3, $4)", 4,
	                (const char *[]){st->name, role, pw, st->spelled}) != 0 ||
	    kit_db_commit(db) != 0) {
		char what[200];
		snprintf(what, sizeof what, "cannot make %s's place", st->name);
		return class_fail(db, what);
	}
	return 0;
}

struct listing {
	char fmt[600];
	FILE *out;
	int hide;                  /* stdout gets the URLs with passwords hidden */
};

static int print_student(void *arg, int ncols, const char *const *v)
{
	struct listing *l = arg;
	char url[1024], shown[1024];
	(void)ncols;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(url, sizeof url, l->fmt, v[1], v[2]);
#pragma GCC diagnostic pop
	printf("%s %s\n", v[0], l->hide ? kit_url_redact(url, shown, sizeof shown) : url);
	if (l->out)
		fprintf(l->out, "%s %s\n", v[0], url);
	return 0;
}

/* The room's connection limits against the server's: a full room past
 * max_connections gets "too many clients" in the middle of a lab. */
static void warn_connections(struct kit_db *db)
{
	int64_t total = 0, students = 0, cap = 0;
	if (kit_db_query_int(db, "SELECT pg_catalog.sum(r.rolconnlimit) FROM hotrow_class.students s"
	                     " JOIN pg_catalog.pg_roles r ON r.rolname = s.role", 0, NULL, &total) != 0 ||
	    kit_db_query_int(db, "SELECT pg_catalog.count(*) FROM hotrow_class.students", 0, NULL,
	                     &students) != 0 ||
	    kit_db_query_int(db, "SELECT pg_catalog.current_setting('max_connections')::int -"
	                     " pg_catalog.current_setting('superuser_reserved_connections')::int",
	                     0, NULL, &cap) != 0)
		return;
	if (total > cap)
		fprintf(stderr, "hotrow class: warning: %lld student(s) may open %lld connections in all, "
		        "more than the server's %lld (max_connections less the reserved ones); lower "
		        "--conn-limit for new students or raise max_connections\n",
		        (long long)students, (long long)total, (long long)cap);
}

/* A roster name already in the class under another spelling (Ada, then
 * ada in a later roster) is the same student only if the roster says so
 * the same way. 0 known as spelled, 1 new, -1 failed, 2 refused (said). */
static int known_as(struct kit_db *db, const char *roster, const struct class_student *st)
{
	char was[64] = "";
	int rc = class_query_text(db, "SELECT spelled FROM hotrow_class.students WHERE name = $1",
	                          1, (const char *[]){st->name}, was, sizeof was);
	if (rc != 0)
		return class_exists(db, "SELECT pg_catalog.count(*) FROM hotrow_class.students"
		                    " WHERE name = $1", st->name) == 0 ? 1 : -1;
	if (was[0] == '\0' || !strcmp(was, st->spelled))
		return 0;
	fprintf(stderr, "hotrow class: %s:%zu: '%s' is the student %s, made earlier as '%s'; "
	        "give this student a name of their own\n", roster, st->line, st->spelled, st->name, was);
	return 2;
}

int class_init(const struct class_opts *o, const char *roster, const char *out_path)
{
	struct class_student *names;
	size_t n;
	int rc = class_roster_read(roster, &names, &n);
	if (rc != 0)
		return rc;
	struct kit_db *db = NULL;
	struct listing l = { .hide = out_path != NULL || isatty(STDOUT_FILENO) };
	if (class_open_admin(o, &db) != 0 || registry(o, db) != 0 ||
	    class_url_format(o, l.fmt, sizeof l.fmt) != 0) {
		free(names);
		kit_db_close(db);
		return 1;
	}
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		int fresh = known_as(db, roster, &names[i]);
		if (fresh < 0)
			rc = class_fail(db, "cannot read hotrow_class.students");
		else if (fresh == 2)
			rc = 2;
		else if (fresh == 1 && add_student(o, db, &names[i]) != 0)
			rc = rc ? rc : 1;
		else
			added += fresh;
	}
	free(names);
	if (kit_db_exec(db, GRANTS_SQL, 0, NULL) != 0)
		rc = class_fail(db, "cannot grant the students the use of hotrow_class");
	warn_connections(db);

	/* The passwords go into the file, or to stdout when that is not a
	 * screen (> FILE); a terminal may be the room's projector. */
	if (out_path) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
		if (fd < 0 || fchmod(fd, 0600) != 0 || !(l.out = fdopen(fd, "w"))) {
			fprintf(stderr, "hotrow class: cannot write %s: %s\n", out_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			kit_db_close(db);
			return 1;
		}
	}
	if (kit_db_query(db, "SELECT name, role, password FROM hotrow_class.students ORDER BY name",
	                 0, NULL, print_student, &l) != 0)
		rc = class_fail(db, "cannot read hotrow_class.students");
	if (l.out && fclose(l.out) != 0) {
		fprintf(stderr, "hotrow class: cannot write %s: %s\n", out_path, strerror(errno));
		rc = 1;
	}
	fprintf(stderr, "hotrow class: %d student(s) added; each line is a student's HOTROW_PG_URL\n", added);
	if (l.hide)
		fprintf(stderr, "hotrow class: passwords are shown as ***; %s\n", out_path ?
		        "the file has them" : "run it again with --out FILE (or > FILE) for the URLs in full");
	kit_db_close(db);
	return rc;
}
