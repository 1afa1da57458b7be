/*
 * admin.c: `hotrow class init` and `drop`, the instructor's side of class
 * mode (see class.h): make a private place per student, remember what was
 * made in hotrow_class, and take exactly that away again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"
#include "kit/url.h"

#define IDLE_TX_TIMEOUT "300s"   /* an open transaction left behind holds locks */

int class_name(const char *line, char *out)
{
	size_t n = 0;
	for (const char *p = line; *p; p++) {
		char c = *p;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (c == '-' || c == '.' || c == ' ')
			c = '_';
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return -1;
		if (n == CLASS_NAME_MAX)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	return n > 0 && out[0] >= 'a' && out[0] <= 'z' ? 0 : -1;
}

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

int class_roster_read(const char *path, char (**names)[CLASS_NAME_MAX + 1], size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "hotrow class: cannot read the roster %s: %s\n", path, strerror(errno));
		return 1;
	}
	char line[256];
	size_t cap = 0, lineno = 0;
	int rc = 0;
	*names = NULL;
	*n = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		line[strcspn(line, "#\r\n")] = '\0';
		char *s = line, *e = line + strlen(line);
		while (*s == ' ' || *s == '\t')
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (*s == '\0')
			continue;
		char name[CLASS_NAME_MAX + 1];
		if (class_name(s, name) != 0 || strlen(name) > CLASS_NAME_MAX - 4) {
			fprintf(stderr, "hotrow class: %s:%zu: '%s' is not a name (1-%d letters, digits "
			        "and _, starting with a letter)\n", path, lineno, s, CLASS_NAME_MAX - 4);
			rc = 2;
			continue;
		}
		int dup = 0;
		for (size_t i = 0; i < *n; i++)
			dup |= !strcmp((*names)[i], name);
		if (dup)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 32;
			void *p = realloc(*names, cap * sizeof **names);
			if (!p) {
				rc = 1;
				break;
			}
			*names = p;
		}
		memcpy((*names)[(*n)++], name, sizeof name);
	}
	fclose(f);
	if (rc == 0 && *n == 0) {
		fprintf(stderr, "hotrow class: the roster %s names nobody\n", path);
		rc = 2;
	}
	if (rc != 0) {
		free(*names);
		*names = NULL;
	}
	return rc;
}

int class_open_admin(const struct class_opts *o, struct kit_db **db)
{
	if (kit_db_open(db, o->admin_url) != 0 || kit_db_engine(*db) != KIT_DB_POSTGRES) {
		fprintf(stderr, "hotrow class: %s\n", kit_db_engine(*db) == KIT_DB_POSTGRES ?
		        kit_db_errmsg(*db) : "--db must name a PostgreSQL server (class mode is PostgreSQL only)");
		kit_db_close(*db);
		*db = NULL;
		return 1;
	}
	return 0;
}

int class_fail(struct kit_db *db, const char *what)
{
	fprintf(stderr, "hotrow class: %s: %s\n", what, kit_db_errmsg(db));
	kit_db_rollback(db);
	return 1;
}

/* The URL a student uses: the server as the admin reached it (its host or
 * socket directory, port and database), with the student's role and
 * password, or o->host instead of the host. */
static int student_url(const struct class_opts *o, const char *role, const char *pw,
                       char *out, size_t len)
{
	PGconn *c = PQconnectdb(o->admin_url);
	if (PQstatus(c) != CONNECTION_OK) {
		char msg[1024];
		snprintf(msg, sizeof msg, "%s", PQerrorMessage(c));
		kit_url_scrub(msg, o->admin_url);
		fprintf(stderr, "hotrow class: %s", msg);
		PQfinish(c);
		return -1;
	}
	const char *host = o->host ? o->host : PQhost(c);
	if (host[0] == '/')
		snprintf(out, len, "postgresql://%s:%s@/%s?host=%s&port=%s", role, pw, PQdb(c), host, PQport(c));
	else
		snprintf(out, len, "postgresql://%s:%s@%s:%s/%s", role, pw, host, PQport(c), PQdb(c));
	PQfinish(c);
	return 0;
}

static int exists(struct kit_db *db, const char *sql, const char *arg)
{
	int64_t n = 0;
	if (kit_db_query_int(db, sql, arg ? 1 : 0, arg ? (const char *[]){arg} : NULL, &n) != 0)
		return -1;
	return n > 0;
}

/* The registry, and the one database-wide change, made once. */
static int registry(struct kit_db *db)
{
	if (kit_db_begin(db) != 0 ||
	    kit_db_exec(db,
	                "CREATE SCHEMA IF NOT EXISTS hotrow_class;"
	                "CREATE TABLE IF NOT EXISTS hotrow_class.students ("
	                " name text PRIMARY KEY, role text NOT NULL, password text NOT NULL,"
	                " created_at timestamptz NOT NULL DEFAULT now());"
	                "CREATE TABLE IF NOT EXISTS hotrow_class.changes ("
	                " id serial PRIMARY KEY, done text NOT NULL, undo text NOT NULL)", 0, NULL) != 0)
		return class_fail(db, "cannot make the schema hotrow_class");
	/* PostgreSQL 15 and later give PUBLIC no CREATE on schema public; older
	 * servers do, and then any student could create tables everyone sees. */
	int open_public = exists(db,
		"SELECT count(*) FROM pg_namespace n,"
		" aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a"
		" WHERE n.nspname = 'public' AND a.grantee = 0 AND a.privilege_type = 'CREATE'", NULL);
	if (open_public < 0)
		return class_fail(db, "cannot read schema public's privileges");
	if (open_public &&
	    (kit_db_exec(db, "REVOKE CREATE ON SCHEMA public FROM PUBLIC", 0, NULL) != 0 ||
	     kit_db_exec(db, "INSERT INTO hotrow_class.changes (done, undo) VALUES"
	                 " ('REVOKE CREATE ON SCHEMA public FROM PUBLIC',"
	                 "  'GRANT CREATE ON SCHEMA public TO PUBLIC')", 0, NULL) != 0))
		return class_fail(db, "cannot take CREATE on schema public from PUBLIC");
	if (kit_db_commit(db) != 0)
		return class_fail(db, "cannot make the schema hotrow_class");
	if (open_public)
		fprintf(stderr, "hotrow class: took CREATE on schema public from PUBLIC "
		        "(`hotrow class drop` gives it back)\n");
	return 0;
}

/* Make one student's role and schema, in one transaction. */
static int add_student(const struct class_opts *o, struct kit_db *db, const char *name)
{
	char role[CLASS_NAME_MAX + 8], pw[17], sql[2048], dbname[200];
	snprintf(role, sizeof role, "hr_%s", name);
	int taken = exists(db, "SELECT count(*) FROM pg_roles WHERE rolname = $1", role);
	if (taken < 0)
		return class_fail(db, "cannot read pg_roles");
	if (taken == 0)
		taken = exists(db, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", role);
	if (taken) {
		fprintf(stderr, "hotrow class: %s: a role or schema %s exists that class mode did not "
		        "make; left alone, and %s gets no place\n", name, role, name);
		return 1;
	}
	if (new_password(pw) != 0) {
		fprintf(stderr, "hotrow class: cannot read /dev/urandom: %s\n", strerror(errno));
		return 1;
	}
	if (class_query_text(db, "SELECT quote_ident(current_database())", dbname, sizeof dbname) != 0)
		return class_fail(db, "cannot read the database's name");
	if (kit_db_begin(db) != 0)
		return class_fail(db, "BEGIN");
	snprintf(sql, sizeof sql,
	         "CREATE ROLE %s LOGIN NOINHERIT PASSWORD '%s' CONNECTION LIMIT %d;"
	         "ALTER ROLE %s SET statement_timeout = %d;"
	         "ALTER ROLE %s SET idle_in_transaction_session_timeout = '" IDLE_TX_TIMEOUT "';"
	         "ALTER ROLE %s SET search_path = %s;"
	         "CREATE SCHEMA %s AUTHORIZATION %s;"
	         "GRANT CONNECT, CREATE ON DATABASE %s TO %s;"
	         "CREATE TABLE %s.hotrow_results (lab text PRIMARY KEY, passed int NOT NULL,"
	         " total int NOT NULL, runs int NOT NULL DEFAULT 1,"
	         " at timestamptz NOT NULL DEFAULT now());"
	         "GRANT SELECT, INSERT, UPDATE ON %s.hotrow_results TO %s",
	         role, pw, o->conn_limit, role, o->statement_timeout_ms, role, role, role,
	         role, role, dbname, role, role, role, role);
	if (kit_db_exec(db, sql, 0, NULL) != 0 ||
	    kit_db_exec(db, "INSERT INTO hotrow_class.students (name, role, password) VALUES ($1, $2, $3)",
	                3, (const char *[]){name, role, pw}) != 0 ||
	    kit_db_commit(db) != 0) {
		char what[200];
		snprintf(what, sizeof what, "cannot make %s's place", name);
		return class_fail(db, what);
	}
	return 0;
}

struct listing {
	const struct class_opts *o;
	FILE *out;
	int hide;                  /* stdout gets the URLs with passwords hidden */
	int rc;
};

static int print_student(void *arg, int ncols, const char *const *v)
{
	struct listing *l = arg;
	char url[1024], shown[1024];
	(void)ncols;
	if (student_url(l->o, v[1], v[2], url, sizeof url) != 0) {
		l->rc = 1;
		return 1;
	}
	printf("%s %s\n", v[0], l->hide ? kit_url_redact(url, shown, sizeof shown) : url);
	if (l->out)
		fprintf(l->out, "%s %s\n", v[0], url);
	return 0;
}

int class_init(const struct class_opts *o, const char *roster, const char *out_path)
{
	char (*names)[CLASS_NAME_MAX + 1];
	size_t n;
	int rc = class_roster_read(roster, &names, &n);
	if (rc != 0)
		return rc;
	struct kit_db *db;
	if (class_open_admin(o, &db) != 0 || registry(db) != 0) {
		free(names);
		kit_db_close(db);
		return 1;
	}
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		int known = exists(db, "SELECT count(*) FROM hotrow_class.students WHERE name = $1", names[i]);
		if (known < 0) {
			rc = class_fail(db, "cannot read hotrow_class.students");
			break;
		}
		if (known)
			continue;
		if (add_student(o, db, names[i]) != 0)
			rc = 1;
		else
			added++;
	}
	free(names);

	/* The passwords go into the file, or to stdout when that is not a
	 * screen (> FILE); a terminal may be the room's projector. */
	struct listing l = { o, NULL, out_path != NULL || isatty(STDOUT_FILENO), 0 };
	if (out_path) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || fchmod(fd, 0600) != 0 || !(l.out = fdopen(fd, "w"))) {
			fprintf(stderr, "hotrow class: cannot write %s: %s\n", out_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			kit_db_close(db);
			return 1;
		}
	}
	if (kit_db_query(db, "SELECT name, role, password FROM hotrow_class.students ORDER BY name",
	                 0, NULL, print_student, &l) != 0 && !l.rc)
		rc = class_fail(db, "cannot read hotrow_class.students");
	if (l.out && fclose(l.out) != 0)
		l.rc = 1;
	fprintf(stderr, "hotrow class: %d student(s) added; each line is a student's HOTROW_PG_URL\n", added);
	if (l.hide)
		fprintf(stderr, "hotrow class: passwords are shown as ***; %s\n", out_path ?
		        "the file has them" : "run it again with --out FILE (or > FILE) for the URLs in full");
	kit_db_close(db);
	return rc ? rc : l.rc;
}

static int drop_student(struct kit_db *db, const char *name, const char *role)
{
	char sql[600];
	/* Their sessions first: an open transaction of theirs would make the
	 * DROP wait, and a role with sessions cannot go. */
	snprintf(sql, sizeof sql,
	         "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '%s'", role);
	int64_t ended;
	if (kit_db_query_int(db, sql, 0, NULL, &ended) != 0)
		return class_fail(db, "cannot end the student's sessions");
	snprintf(sql, sizeof sql,
	         "DROP SCHEMA IF EXISTS %s CASCADE; DROP OWNED BY %s; DROP ROLE %s;"
	         "DELETE FROM hotrow_class.students WHERE name = '%s'", role, role, role, name);
	if (kit_db_begin(db) != 0 || kit_db_exec(db, sql, 0, NULL) != 0 || kit_db_commit(db) != 0) {
		char what[200];
		snprintf(what, sizeof what, "cannot remove %s (%s)", name, role);
		return class_fail(db, what);
	}
	printf("removed %s: role and schema %s%s\n", name, role,
	       ended ? ", after ending their sessions" : "");
	return 0;
}

struct victims {
	char (*names)[CLASS_NAME_MAX + 1];
	size_t n, cap;
};

static int add_victim(void *arg, int ncols, const char *const *v)
{
	struct victims *w = arg;
	(void)ncols;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		void *p = realloc(w->names, w->cap * sizeof *w->names);
		if (!p)
			return 1;
		w->names = p;
	}
	snprintf(w->names[w->n++], CLASS_NAME_MAX + 1, "%s", v[0]);
	return 0;
}

int class_drop(const struct class_opts *o, const char *roster, int yes)
{
	struct victims w = {0};
	int rc = 0;
	if (roster) {
		size_t n;
		rc = class_roster_read(roster, &w.names, &n);
		if (rc != 0)
			return rc;
		w.n = w.cap = n;
	}
	struct kit_db *db;
	if (class_open_admin(o, &db) != 0) {
		free(w.names);
		return 1;
	}
	int made = exists(db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'hotrow_class'", NULL);
	if (made <= 0) {
		printf("nothing to remove: hotrow class init has not been run on this database\n");
		free(w.names);
		kit_db_close(db);
		return made < 0 ? 1 : 0;
	}
	if (!roster && kit_db_query(db, "SELECT name FROM hotrow_class.students ORDER BY name",
	                            0, NULL, add_victim, &w) != 0) {
		free(w.names);
		rc = class_fail(db, "cannot read hotrow_class.students");
		kit_db_close(db);
		return rc;
	}
	for (size_t i = 0; i < w.n && rc == 0; i++) {
		char role[CLASS_NAME_MAX + 8];
		snprintf(role, sizeof role, "hr_%s", w.names[i]);
		int known = exists(db, "SELECT count(*) FROM hotrow_class.students WHERE name = $1", w.names[i]);
		if (known < 0) {
			rc = class_fail(db, "cannot read hotrow_class.students");
		} else if (!known) {
			printf("skipped %s: not a student of this class\n", w.names[i]);
		} else if (!yes) {
			printf("would remove %s: role and schema %s, and all they own in this database\n",
			       w.names[i], role);
		} else if (drop_student(db, w.names[i], role) != 0) {
			rc = 1;
		}
	}
	free(w.names);
	int left = exists(db, "SELECT count(*) FROM hotrow_class.students", NULL);
	if (rc == 0 && left == 0 && yes) {
		/* The last student is gone: undo the database-wide change (the
		 * only one init makes), then the registry. */
		int undo = exists(db, "SELECT count(*) FROM hotrow_class.changes WHERE undo ="
		                  " 'GRANT CREATE ON SCHEMA public TO PUBLIC'", NULL);
		int other = exists(db, "SELECT count(*) FROM hotrow_class.changes WHERE undo <>"
		                   " 'GRANT CREATE ON SCHEMA public TO PUBLIC'", NULL);
		if (undo < 0 || other < 0)
			rc = class_fail(db, "cannot read hotrow_class.changes");
		else if (other > 0) {
			fprintf(stderr, "hotrow class: hotrow_class.changes holds a change this version "
			        "did not make; hotrow_class left in place\n");
			rc = 1;
		} else if (kit_db_begin(db) != 0 ||
		           (undo && kit_db_exec(db, "GRANT CREATE ON SCHEMA public TO PUBLIC", 0, NULL) != 0) ||
		           kit_db_exec(db, "DROP SCHEMA hotrow_class CASCADE", 0, NULL) != 0 ||
		           kit_db_commit(db) != 0) {
			rc = class_fail(db, "cannot remove hotrow_class");
		} else {
			printf("removed hotrow_class%s\n", undo ? "; gave CREATE on schema public back to PUBLIC" : "");
		}
	}
	if (!yes && rc == 0) {
		printf("nothing removed: add --yes to remove it\n");
		rc = 1;
	}
	kit_db_close(db);
	return rc;
}
