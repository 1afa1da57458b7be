/*
 * conn.c: the administrator's connection to the class server (see
 * class_impl.h).
 *
 * A student on the class server can create objects: functions, types,
 * operators and casts in their own schema, views and triggers on their
 * own tables. Whatever an admin session resolves by name through its
 * search_path, or reads, could be one of those, and would then run with
 * the administrator's rights. So every admin session starts here: the
 * search_path is pinned to pg_catalog, pg_temp (the session's own
 * temporary schema, which no other session can write, last), and the SQL
 * of class/ names what it uses in full and reads only the catalogs and
 * the schema hotrow_class, which the administrator owns and no student can
 * create in.
 */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"
#include "kit/url.h"

/* Pinned with SET, a statement that resolves no name. A student's lock
 * (on their own schema, say) must not hold the instructor's command
 * forever: drop ends their sessions first, and everything else gives up
 * after lock_timeout with the server's message. */
#define PIN_SQL "SET search_path = pg_catalog, pg_temp; SET lock_timeout = '10s'"

int class_open_admin(const struct class_opts *o, struct kit_db **db)
{
	if (kit_db_open(db, o->admin_url) != 0 || kit_db_engine(*db) != KIT_DB_POSTGRES ||
	    kit_db_exec(*db, PIN_SQL, 0, NULL) != 0) {
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

struct text { char *out; size_t len; int got; };

static int first_text(void *arg, int ncols, const char *const *v)
{
	struct text *t = arg;
	snprintf(t->out, t->len, "%s", ncols > 0 && v[0] ? v[0] : "");
	t->got = 1;
	return 1;
}

int class_query_text(struct kit_db *db, const char *sql, int nparams,
                     const char *const *params, char *out, size_t len)
{
	struct text t = { out, len, 0 };
	int rc = kit_db_query(db, sql, nparams, params, first_text, &t);
	return t.got && (rc == 0 || rc == 1) ? 0 : -1;
}

int class_exists(struct kit_db *db, const char *sql, const char *arg)
{
	int64_t n = 0;
	if (kit_db_query_int(db, sql, arg ? 1 : 0, arg ? (const char *[]){arg} : NULL, &n) != 0)
		return -1;
	return n > 0;
}

/* The URL a student uses: the server as the admin reached it (its host or
 * socket directory, port and database), with the student's role and
 * password, or o->host instead of the host. The printf format into *fmt,
 * with two %s for role and password; 0 or -1 (said). */
int class_url_format(const struct class_opts *o, char *fmt, size_t len)
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
	if (strchr(host, '%') || strchr(PQdb(c), '%')) {
		fprintf(stderr, "hotrow class: a host or database name with %% in it cannot be a URL here\n");
		PQfinish(c);
		return -1;
	}
	if (host[0] == '/')
		snprintf(fmt, len, "postgresql://%%s:%%s@/%s?host=%s&port=%s", PQdb(c), host, PQport(c));
	else
		snprintf(fmt, len, "postgresql://%%s:%%s@%s:%s/%s", host, PQport(c), PQdb(c));
	PQfinish(c);
	return 0;
}

