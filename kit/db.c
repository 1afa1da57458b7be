/*
 * db.c: kit/db.h over SQLite and libpq.
 *
 * Both engines take the same SQL with $1, $2, ... placeholders. SQLite
 * reads "$1" as a named parameter, so parameters are bound by name; a
 * value that is a plain decimal integer is bound as an integer (so LIMIT $1
 * and integer keys behave), anything else as text. PostgreSQL gets text
 * parameters through PQexecParams and converts them itself.
 *
 * MariaDB (mysql:// URLs) is kit/db_mysql.c, reached from the dispatch
 * points here (open, the statements, commit, the lock timeout).
 *
 * Errors are written once, into db->err, as "ENGINE: STATEMENT: CAUSE".
 */
#include "kit/db.h"
#include "kit/db_mysql.h"
#include "kit/failpoint.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/socket.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "kit/url.h"
#include "util/clock.h"

#define BUSY_TIMEOUT_MS 5000                  /* SQLite waits this long for a lock */
#define CONNECT_TIMEOUT "5"                   /* PostgreSQL, seconds */

/* The step failpoints (kit/failpoint.h) every statement passes. */
#define FP_STMT_FAILS "db-stmt-fails"
#define FP_REPLY_LOST "db-reply-lost"
#define FP_STMT_BUSY  "db-stmt-busy"

struct kit_db {
	enum kit_db_engine engine;
	sqlite3 *lite;                /* KIT_DB_SQLITE */
	PGconn *pg;                   /* KIT_DB_POSTGRES */
	struct kit_my *my;            /* KIT_DB_MYSQL */
	int64_t changes;              /* rows changed by the last exec */
	int64_t busy_since_ns;        /* SQLite busy handler: when waiting began */
	int64_t busy_timeout_ns;      /* ... and how long it may wait */
	kit_db_hook_fn *hook;
	void *hook_arg;
	const char *stmt;             /* the statement running, for LOCK_WAIT */
	char err[1024];
};

static void emit(struct kit_db *db, enum kit_db_event ev, const char *sql)
{
	if (db->hook)
		db->hook(db->hook_arg, ev, sql, util_now_ns());
}

/* Write "ENGINE: SQL: CAUSE" into db->err, the SQL on one line and cut
 * short if long; cause is trimmed of trailing newlines. */
static void set_err(struct kit_db *db, const char *sql, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(struct kit_db *db, const char *sql, const char *fmt, ...)
{
	char stmt[200], cause[700];
	size_t n = 0;
	bool space = false;

	for (const char *p = sql ? sql : ""; *p && n + 4 < sizeof stmt; p++) {
		if (isspace((unsigned char)*p)) {
			space = n > 0;
			continue;
		}
		if (space)
			stmt[n++] = ' ';
		space = false;
		stmt[n++] = *p;
	}
	if (sql && strlen(sql) > n + 8 && n + 4 >= sizeof stmt)
		memcpy(stmt + n - 3, "...", 3);
	stmt[n] = '\0';

	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cause, sizeof cause, fmt, ap);
	va_end(ap);
	for (size_t len = strlen(cause); len > 0 && isspace((unsigned char)cause[len - 1]); len--)
		cause[len - 1] = '\0';

	const char *engine = db->engine == KIT_DB_SQLITE ? "sqlite"
	                   : db->engine == KIT_DB_MYSQL ? "mariadb" : "postgres";
	if (stmt[0])
		snprintf(db->err, sizeof db->err, "%s: %s: %s", engine, stmt, cause);
	else
		snprintf(db->err, sizeof db->err, "%s: %s", engine, cause);
}

/* True when sql starts with the keyword word as a whole word: "END" is
 * COMMIT, "ENDLESS_TABLE" or "END_OF_DAY()" are not. */
static bool keyword(const char *sql, const char *word)
{
	size_t n = strlen(word);
	return strncasecmp(sql, word, n) == 0 && !isalnum((unsigned char)sql[n]) && sql[n] != '_';
}

/* Which transaction event, if any, a bare statement is: lets the hook see
 * BEGIN/COMMIT/ROLLBACK even when they are run through kit_db_exec. */
static int tx_event(const char *sql, enum kit_db_event *ev)
{
	while (isspace((unsigned char)*sql))
		sql++;
	if (keyword(sql, "BEGIN") || keyword(sql, "START TRANSACTION"))
		*ev = KIT_DB_TX_BEGIN;
	else if (keyword(sql, "COMMIT") || keyword(sql, "END"))
		*ev = KIT_DB_TX_COMMIT;
	else if (keyword(sql, "ROLLBACK") && !strcasestr(sql, " TO "))
		*ev = KIT_DB_TX_ROLLBACK;
	else
		return 0;
	return 1;
}

/* The one message for a statement given the wrong number of parameters,
 * on either engine. */
static int param_count_err(struct kit_db *db, const char *sql, int given, int used)
{
	set_err(db, sql, "%d parameter%s given, but the statement uses %d",
	        given, given == 1 ? "" : "s", used);
	return KIT_DB_ERR;
}

/* ---- SQLite ---- */

static int lite_code(struct kit_db *db)
{
	switch (sqlite3_errcode(db->lite) & 0xff) {
	case SQLITE_CONSTRAINT: return KIT_DB_CONSTRAINT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:     return KIT_DB_BUSY;
	default:                return KIT_DB_ERR;
	}
}

static int lite_fail(struct kit_db *db, const char *sql)
{
	set_err(db, sql, "%s", sqlite3_errmsg(db->lite));
	return lite_code(db);
}

/* Wait for a lock in short naps (SQLite's own handler sleeps up to 100 ms
 * at a time, which would hide the queue the labs measure), up to
 * busy_timeout_ns from the first call of this wait. */
static int lite_busy(void *arg, int count)
{
	struct kit_db *db = arg;
	int64_t t = util_now_ns();

	if (count == 0) {
		db->busy_since_ns = t;
		emit(db, KIT_DB_LOCK_WAIT, db->stmt ? db->stmt : "");
	}
	if (t - db->busy_since_ns > db->busy_timeout_ns)
		return 0;
	long nap_us = count < 10 ? 20 : count < 100 ? 100 : 1000;
	util_sleep_ns(nap_us * 1000);
	return 1;
}

int kit_db_plain_integer(const char *s)
{
	const char *p = s;
	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p) || (p[0] == '0' && p[1] != '\0'))
		return false;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	errno = 0;
	(void)strtoll(s, NULL, 10);
	return errno == 0;
}

/* Prepare sql (one statement) with its parameters into *out. */
static int lite_prepare(struct kit_db *db, const char *sql, int nparams,
                        const char *const *params, sqlite3_stmt **out)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;

	*out = NULL;
	if (sqlite3_prepare_v2(db->lite, sql, -1, &st, &tail) != SQLITE_OK)
		return lite_fail(db, sql);
	if (st == NULL) {
		set_err(db, sql, "no statement");
		return KIT_DB_ERR;
	}
	while (tail && isspace((unsigned char)*tail))
		tail++;
	if (tail && *tail && strcmp(tail, ";") != 0) {
		sqlite3_finalize(st);
		set_err(db, sql, "parameters need exactly one statement");
		return KIT_DB_ERR;
	}
	/* Refuse what libpq refuses, so a statement that is wrong on one
	 * engine is wrong on both: every parameter given must be used, and
	 * the statement may use no other. */
	int used = sqlite3_bind_parameter_count(st);
	if (used != nparams) {
		sqlite3_finalize(st);
		return param_count_err(db, sql, nparams, used);
	}
	for (int i = 1; i <= nparams; i++) {
		char name[16];
		snprintf(name, sizeof name, "$%d", i);
		int idx = sqlite3_bind_parameter_index(st, name);
		if (idx == 0) {
			sqlite3_finalize(st);
			set_err(db, sql, "parameter $%d is given but the statement does not use it", i);
			return KIT_DB_ERR;
		}
		const char *v = params[i - 1];
		int rc;
		if (v == NULL)
			rc = sqlite3_bind_null(st, idx);
		else if (kit_db_plain_integer(v))
			rc = sqlite3_bind_int64(st, idx, strtoll(v, NULL, 10));
		else
			rc = sqlite3_bind_text(st, idx, v, -1, SQLITE_TRANSIENT);
		if (rc != SQLITE_OK) {
			sqlite3_finalize(st);
			return lite_fail(db, sql);
		}
	}
	*out = st;
	return 0;
}

static int lite_open(struct kit_db *db, const char *path)
{
	int rc = sqlite3_open_v2(path, &db->lite,
	                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		set_err(db, NULL, "cannot open %s: %s", path,
		        db->lite ? sqlite3_errmsg(db->lite) : sqlite3_errstr(rc));
		return KIT_DB_ERR;
	}
	db->busy_timeout_ns = BUSY_TIMEOUT_MS * 1000000LL;
	sqlite3_busy_handler(db->lite, lite_busy, db);
	/* WAL lets readers run beside the one writer; NORMAL syncs the log at
	 * checkpoints, not at every commit (a crash may lose the last commits,
	 * never corrupt the file). */
	const char *setup = strcmp(path, ":memory:") == 0
		? "PRAGMA foreign_keys = ON"
		: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON";
	/* Connections opening a new file together race to switch it to WAL,
	 * and the loser may be told SQLITE_BUSY without its busy handler being
	 * asked: try again, within the same time a lock may take. */
	char *msg = NULL;
	int64_t t0 = util_now_ns();
	while ((rc = sqlite3_exec(db->lite, setup, NULL, NULL, &msg)) == SQLITE_BUSY &&
	       util_now_ns() - t0 < db->busy_timeout_ns) {
		sqlite3_free(msg);
		msg = NULL;
		util_sleep_ns(1000000);
	}
	if (rc != SQLITE_OK) {
		set_err(db, setup, "%s", msg ? msg : "failed");
		sqlite3_free(msg);
		return lite_code(db);
	}
	return 0;
}

static int lite_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	if (nparams == 0) {
		char *msg = NULL;
		if (sqlite3_exec(db->lite, sql, NULL, NULL, &msg) != SQLITE_OK) {
			set_err(db, sql, "%s", msg ? msg : sqlite3_errmsg(db->lite));
			sqlite3_free(msg);
			return lite_code(db);
		}
		db->changes = sqlite3_changes(db->lite);
		return 0;
	}
	sqlite3_stmt *st;
	int rc = lite_prepare(db, sql, nparams, params, &st);
	if (rc != 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE) {
		rc = lite_fail(db, sql);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	db->changes = sqlite3_changes(db->lite);
	return 0;
}

static int lite_query(struct kit_db *db, const char *sql, int nparams,
                      const char *const *params, kit_db_row_fn *row, void *arg)
{
	sqlite3_stmt *st;
	int rc = lite_prepare(db, sql, nparams, params, &st);
	if (rc != 0)
		return rc;
	int ncols = sqlite3_column_count(st);
	const char **vals = calloc((size_t)(ncols > 0 ? ncols : 0) + 1, sizeof *vals);  /* NULL after */
	if (vals == NULL) {
		sqlite3_finalize(st);
		set_err(db, sql, "out of memory");
		return KIT_DB_ERR;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < ncols; i++)
			vals[i] = (const char *)sqlite3_column_text(st, i);
		int stop = row(arg, ncols, vals);
		if (stop != 0) {
			free(vals);
			sqlite3_finalize(st);
			return stop;
		}
	}
	free(vals);
	if (rc != SQLITE_DONE) {
		rc = lite_fail(db, sql);
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

/* ---- PostgreSQL ---- */

static void pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;   /* NOTICEs (e.g. "drop cascades to ...") are not errors */
}

static int pg_code(const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (state == NULL)
		return KIT_DB_ERR;
	if (strncmp(state, "23", 2) == 0)
		return KIT_DB_CONSTRAINT;
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 ||
	    strcmp(state, "55P03") == 0)
		return KIT_DB_BUSY;
	return KIT_DB_ERR;
}

/* Record the failure of res (may be NULL) and return its code; clears res. */
static int pg_fail(struct kit_db *db, const char *sql, PGresult *res)
{
	const char *sev = res ? PQresultErrorField(res, PG_DIAG_SEVERITY) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	int given, used;
	/* The server's words for a parameter count mismatch; say it the way
	 * the SQLite side does. */
	if (msg && sscanf(msg, "bind message supplies %d parameters, but prepared statement \"\" requires %d",
	                  &given, &used) == 2) {
		PQclear(res);
		return param_count_err(db, sql, given, used);
	}
	if (sev && msg)
		set_err(db, sql, "%s: %s", sev, msg);
	else
		set_err(db, sql, "%s", PQerrorMessage(db->pg));
	int rc = pg_code(res);
	PQclear(res);
	return rc;
}

static int pg_open(struct kit_db *db, const char *url)
{
	/* connect_timeout first, so a setting inside url overrides it. */
	const char *keys[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *vals[] = { CONNECT_TIMEOUT, "hotrow", url, NULL };
	db->pg = PQconnectdbParams(keys, vals, 1);
	if (db->pg == NULL) {
		set_err(db, NULL, "out of memory");
		return KIT_DB_ERR;
	}
	if (PQstatus(db->pg) != CONNECTION_OK) {
		set_err(db, NULL, "cannot connect: %s", PQerrorMessage(db->pg));
		kit_url_scrub(db->err, url);   /* libpq may quote a piece of it */
		return KIT_DB_ERR;
	}
	PQsetNoticeProcessor(db->pg, pg_quiet, NULL);
	return 0;
}

static PGresult *pg_run(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	if (nparams == 0)
		return PQexec(db->pg, sql);
	return PQexecParams(db->pg, sql, nparams, NULL, params, NULL, NULL, 0);
}

static int pg_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	PGresult *res = pg_run(db, sql, nparams, params);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY)
		return pg_fail(db, sql, res);
	db->changes = strtoll(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

static int pg_query(struct kit_db *db, const char *sql, int nparams,
                    const char *const *params, kit_db_row_fn *row, void *arg)
{
	PGresult *res = pg_run(db, sql, nparams, params);
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
		return pg_fail(db, sql, res);
	int ncols = PQnfields(res), nrows = PQntuples(res);
	const char **vals = calloc((size_t)(ncols > 0 ? ncols : 0) + 1, sizeof *vals);  /* NULL after */
	if (vals == NULL) {
		PQclear(res);
		set_err(db, sql, "out of memory");
		return KIT_DB_ERR;
	}
	int stop = 0;
	for (int r = 0; r < nrows && stop == 0; r++) {
		for (int i = 0; i < ncols; i++)
			vals[i] = PQgetisnull(res, r, i) ? NULL : PQgetvalue(res, r, i);
		stop = row(arg, ncols, vals);
	}
	free(vals);
	PQclear(res);
	return stop;
}

/* ---- MariaDB: kit/db_mysql.c does the work, this adds the statement ---- */

static int my_done(struct kit_db *db, const char *sql, int rc, const char *cause)
{
	if (rc < 0)
		set_err(db, sql, "%s", cause);
	return rc;
}

static int my_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	char cause[700];
	return my_done(db, sql, kit_my_exec(db->my, sql, nparams, params, &db->changes,
	                                     cause, sizeof cause), cause);
}

static int my_query(struct kit_db *db, const char *sql, int nparams,
                    const char *const *params, kit_db_row_fn *row, void *arg)
{
	char cause[700];
	return my_done(db, sql, kit_my_query(db->my, sql, nparams, params, row, arg,
	                                      cause, sizeof cause), cause);
}

/* The one statement runner per engine, for the API below. */
static int engine_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	switch (db->engine) {
	case KIT_DB_SQLITE:   return lite_exec(db, sql, nparams, params);
	case KIT_DB_MYSQL:    return my_exec(db, sql, nparams, params);
	case KIT_DB_POSTGRES: break;
	}
	return pg_exec(db, sql, nparams, params);
}

static int engine_query(struct kit_db *db, const char *sql, int nparams,
                        const char *const *params, kit_db_row_fn *row, void *arg)
{
	switch (db->engine) {
	case KIT_DB_SQLITE:   return lite_query(db, sql, nparams, params, row, arg);
	case KIT_DB_MYSQL:    return my_query(db, sql, nparams, params, row, arg);
	case KIT_DB_POSTGRES: break;
	}
	return pg_query(db, sql, nparams, params, row, arg);
}

/* ---- the API ---- */

int kit_db_open(struct kit_db **out, const char *url)
{
	struct kit_db *db = calloc(1, sizeof *db);
	*out = db;
	if (db == NULL)
		return KIT_DB_ERR;
	if (url == NULL)
		url = "";
	if (strncmp(url, "sqlite:", 7) == 0) {
		db->engine = KIT_DB_SQLITE;
		if (url[7] == '\0') {
			set_err(db, NULL, "no file in \"%s\" (use sqlite:PATH or sqlite::memory:)", url);
			return KIT_DB_ERR;
		}
		return lite_open(db, url + 7);
	}
	if (kit_my_url(url)) {
		char cause[700];
		db->engine = KIT_DB_MYSQL;
		int rc = kit_my_open(&db->my, url, cause, sizeof cause);
		if (rc != 0) {
			set_err(db, NULL, "%s", cause);
			kit_url_scrub(db->err, url);
		}
		return rc;
	}
	db->engine = KIT_DB_POSTGRES;
	return pg_open(db, url);
}

void kit_db_close(struct kit_db *db)
{
	if (db == NULL)
		return;
	if (db->lite)
		sqlite3_close_v2(db->lite);
	if (db->pg)
		PQfinish(db->pg);
	kit_my_close(db->my);
	free(db);
}

enum kit_db_engine kit_db_engine(const struct kit_db *db)
{
	return db->engine;
}

const char *kit_db_errmsg(const struct kit_db *db)
{
	if (db == NULL)
		return "out of memory";
	return db->err;
}

int kit_db_connected(const struct kit_db *db)
{
	return db && (db->lite || (db->pg && PQstatus(db->pg) == CONNECTION_OK) ||
	              kit_my_connected(db->my));
}

/* True when the handle has a live connection; sets the error if not. */
static bool ready(struct kit_db *db, const char *sql)
{
	if (kit_db_connected(db))
		return true;
	/* The call that lost the connection said why: keep that, the first
	 * error, rather than this one (a ROLLBACK after it, say). */
	if ((!db->pg && !db->my) || !db->err[0])
		set_err(db, sql, "not connected");
	return false;
}

static bool in_tx(struct kit_db *db)
{
	if (db->engine == KIT_DB_SQLITE)
		return !sqlite3_get_autocommit(db->lite);
	if (db->engine == KIT_DB_MYSQL)
		return kit_my_in_tx(db->my) != 0;
	PGTransactionStatusType st = PQtransactionStatus(db->pg);
	return st == PQTRANS_INTRANS || st == PQTRANS_INERROR;
}

/* Roll back the open transaction, if any, keeping the error message and
 * passing no failpoint: what a server does when its connection drops. */
static void drop_tx(struct kit_db *db)
{
	if (!in_tx(db))
		return;
	char keep[sizeof db->err];
	memcpy(keep, db->err, sizeof keep);
	int rc = engine_exec(db, "ROLLBACK", 0, NULL);
	memcpy(db->err, keep, sizeof keep);
	if (rc == 0)
		emit(db, KIT_DB_TX_ROLLBACK, "ROLLBACK");
}

/* Every statement starts here: the hook sees it, then the failpoint
 * db-stmt-fails may refuse it. A refused statement did not run; it fails
 * the way a statement the server refuses does: a refused COMMIT or
 * ROLLBACK ends the transaction, and on PostgreSQL any refused statement
 * inside a transaction leaves it failed, so only ROLLBACK works next.
 * Returns 0 to run the statement. */
static int stmt_start(struct kit_db *db, const char *sql, bool tx)
{
	emit(db, tx ? KIT_DB_TX_STMT_START : KIT_DB_STMT_START, sql);
	db->stmt = sql;
	bool busy = false;
	if (kit_fp_hit(FP_STMT_FAILS) == 0) {
		if (kit_fp_hit(FP_STMT_BUSY) == 0)
			return 0;
		busy = true;
	}
	enum kit_db_event ev = KIT_DB_TX_BEGIN;
	if (tx_event(sql, &ev) && ev != KIT_DB_TX_BEGIN)
		drop_tx(db);
	else if (db->engine == KIT_DB_POSTGRES && in_tx(db))
		PQclear(PQexec(db->pg, "DO $$BEGIN RAISE EXCEPTION 'failpoint'; END$$"));
	else if (db->engine == KIT_DB_MYSQL && in_tx(db))
		kit_my_fail_tx(db->my);
	/* The messages name what such codes come from on a real server, so
	 * code that reads the message to pick its answer is caught out:
	 * "timeout" comes with KIT_DB_ERR too (a statement timeout, a
	 * connection's), "could not serialize" with KIT_DB_BUSY. */
	if (busy)
		set_err(db, sql, "refused before it ran, as a lock wait that timed out, a "
		        "Deadlock found when trying to get lock or a could not serialize access "
		        "due to concurrent update is (failpoint " FP_STMT_BUSY ")");
	else
		set_err(db, sql, "refused before it ran, as a canceling statement due to statement "
		        "timeout or a timeout expired is (failpoint " FP_STMT_FAILS ")");
	db->stmt = NULL;
	emit(db, tx ? KIT_DB_TX_STMT_END : KIT_DB_STMT_END, sql);
	return busy ? KIT_DB_BUSY : KIT_DB_ERR;
}

/* Every statement that ran ends here with its result rc: the hook sees
 * it, then the failpoint db-reply-lost may lose a successful answer. The
 * statement did run (an autocommit write or a COMMIT is kept), but the
 * caller hears KIT_DB_ERR, and an open transaction is rolled back, as the
 * server does when the connection drops. */
static int stmt_end(struct kit_db *db, const char *sql, bool tx, int rc)
{
	db->stmt = NULL;
	emit(db, tx ? KIT_DB_TX_STMT_END : KIT_DB_STMT_END, sql);
	if (rc != 0 || kit_fp_hit(FP_REPLY_LOST) == 0)
		return rc;
	bool open = in_tx(db);
	drop_tx(db);
	set_err(db, sql, "the statement ran, but its answer was lost (failpoint " FP_REPLY_LOST ")%s",
	        open ? "; the open transaction was rolled back, as when a connection drops" : "");
	return KIT_DB_ERR;
}

/* Close the connection as a failed network does (the servers only: an
 * embedded SQLite has none to lose). */
static void sever(struct kit_db *db)
{
	if (db->pg) {
		int fd = PQsocket(db->pg);
		if (fd >= 0)
			shutdown(fd, SHUT_RDWR);
		PQconsumeInput(db->pg);       /* libpq reads the end: CONNECTION_BAD */
	} else if (db->my) {
		kit_my_sever(db->my);
	}
}

/* The failpoints of a COMMIT that did commit, as the caller hears it:
 * "db-commit-reply-lost" loses its answer (the connection lives on);
 * "db-commit-conn-lost" loses the connection with it, so
 * kit_db_connected() says 0 from then on (on SQLite, which has no
 * connection, it is the first). Either way the caller hears KIT_DB_ERR
 * for a transaction that is in. */
static int committed_answer(struct kit_db *db, const char *sql)
{
	if (kit_fp_hit("db-commit-conn-lost") != 0) {
		sever(db);
		set_err(db, sql, "the connection broke before COMMIT's answer arrived (failpoint "
		        "db-commit-conn-lost): the transaction did commit");
		return KIT_DB_ERR;
	}
	if (kit_fp_hit("db-commit-reply-lost") != 0) {
		set_err(db, sql, "the connection broke before COMMIT's answer arrived "
		        "(failpoint db-commit-reply-lost): the transaction did commit");
		return KIT_DB_ERR;
	}
	return 0;
}

/* "db-commit-conn-gone": the connection breaks just before a COMMIT is
 * sent. The server never gets it and rolls the transaction back when it
 * sees the connection close; the caller hears KIT_DB_ERR, and on the
 * servers kit_db_connected() says 0 from then on. SQLite has no
 * connection to lose: its transaction is rolled back, its handle lives
 * on. Returns 0 when the failpoint did not fire. */
static int gone_before_commit(struct kit_db *db, const char *sql)
{
	if (!kit_db_connected(db) || kit_fp_hit("db-commit-conn-gone") == 0)
		return 0;
	if (db->engine == KIT_DB_SQLITE)
		drop_tx(db);
	else
		sever(db);
	set_err(db, sql, "the connection broke before COMMIT reached the database (failpoint "
	        "db-commit-conn-gone): the transaction was rolled back");
	return KIT_DB_ERR;
}

int kit_db_exec(struct kit_db *db, const char *sql, int nparams, const char *const *params)
{
	enum kit_db_event tx = KIT_DB_TX_BEGIN;
	bool is_tx = tx_event(sql, &tx);
	if (is_tx && tx == KIT_DB_TX_COMMIT && gone_before_commit(db, sql) != 0)
		return KIT_DB_ERR;
	if (!ready(db, sql))
		return KIT_DB_ERR;
	int rc = stmt_start(db, sql, false);
	if (rc != 0)
		return rc;
	rc = engine_exec(db, sql, nparams, params);
	rc = stmt_end(db, sql, false, rc);
	if (rc == 0 && is_tx)
		emit(db, tx, sql);
	/* A COMMIT sent as SQL loses its answer as kit_db_commit's does. */
	if (rc == 0 && is_tx && tx == KIT_DB_TX_COMMIT)
		rc = committed_answer(db, sql);
	return rc;
}

struct one_int {
	bool seen, range;
	int64_t value;
	char text[48];
};

/* A value past int64_t (a SUM of bigints on PostgreSQL is numeric, and
 * can pass it) is an error, not INT64_MAX or INT64_MIN read as if true. */
static int take_int(void *arg, int ncols, const char *const *values)
{
	struct one_int *o = arg;
	if (!o->seen) {
		o->seen = true;
		if (ncols > 0 && values[0]) {
			errno = 0;
			o->value = strtoll(values[0], NULL, 10);
			o->range = errno == ERANGE;
			snprintf(o->text, sizeof o->text, "%s", values[0]);
		}
	}
	return 0;
}

int kit_db_query_int(struct kit_db *db, const char *sql, int nparams,
                     const char *const *params, int64_t *out)
{
	struct one_int o = { false, false, 0, "" };
	int rc = kit_db_query(db, sql, nparams, params, take_int, &o);
	if (rc != 0)
		return rc;
	if (!o.seen) {
		set_err(db, sql, "no row");
		return KIT_DB_NOROW;
	}
	if (o.range) {
		set_err(db, sql, "the value %s does not fit in an int64_t", o.text);
		return KIT_DB_ERR;
	}
	*out = o.value;
	return 0;
}

int kit_db_query(struct kit_db *db, const char *sql, int nparams,
                 const char *const *params, kit_db_row_fn *row, void *arg)
{
	if (!ready(db, sql))
		return KIT_DB_ERR;
	int rc = stmt_start(db, sql, false);
	if (rc != 0)
		return rc;
	rc = engine_query(db, sql, nparams, params, row, arg);
	return stmt_end(db, sql, false, rc);
}

int64_t kit_db_changes(const struct kit_db *db)
{
	return db->changes;
}

/* BEGIN/ROLLBACK: the TX event fires when the statement is done (for
 * BEGIN IMMEDIATE on SQLite, once the write lock is held). */
static int run_tx(struct kit_db *db, const char *sql, enum kit_db_event ev)
{
	if (!ready(db, sql))
		return KIT_DB_ERR;
	int rc = stmt_start(db, sql, true);
	if (rc != 0)
		return rc;
	if (ev == KIT_DB_TX_ROLLBACK && db->engine == KIT_DB_SQLITE && !in_tx(db))
		rc = 0;   /* nothing to end: PostgreSQL only warns, so agree */
	else
		rc = engine_exec(db, sql, 0, NULL);
	rc = stmt_end(db, sql, true, rc);
	if (rc == 0)
		emit(db, ev, sql);
	return rc;
}

int kit_db_begin(struct kit_db *db)
{
	return run_tx(db, db->engine == KIT_DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN", KIT_DB_TX_BEGIN);
}

/* PostgreSQL answers COMMIT in a failed transaction with "ROLLBACK" and no
 * error; say so, or the caller would think its writes were kept. */
static int pg_commit(struct kit_db *db, bool *rolled_back)
{
	const char *sql = "COMMIT";
	PGresult *res = PQexec(db->pg, sql);
	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		return pg_fail(db, sql, res);
	*rolled_back = strcmp(PQcmdStatus(res), "ROLLBACK") == 0;
	PQclear(res);
	if (*rolled_back) {
		set_err(db, sql, "the transaction had already failed, so COMMIT rolled it back");
		return KIT_DB_ERR;
	}
	return 0;
}

/* MariaDB: a COMMIT after a busy error fails ("already failed"); the
 * transaction was rolled back by then. */
static int my_commit(struct kit_db *db, bool *rolled_back)
{
	char cause[700];
	int rc = kit_my_commit(db->my, cause, sizeof cause);
	if (rc != 0) {
		/* A failed COMMIT leaves nothing open on MariaDB: it rolled back. */
		set_err(db, "COMMIT", "%s", cause);
		*rolled_back = true;
	}
	return rc;
}

static int commit(struct kit_db *db)
{
	const char *sql = "COMMIT";
	bool rolled_back = false;
	if (!ready(db, sql))
		return KIT_DB_ERR;
	int rc = stmt_start(db, sql, true);
	if (rc != 0)
		return rc;
	switch (db->engine) {
	case KIT_DB_SQLITE:   rc = lite_exec(db, sql, 0, NULL); break;
	case KIT_DB_POSTGRES: rc = pg_commit(db, &rolled_back); break;
	case KIT_DB_MYSQL:    rc = my_commit(db, &rolled_back); break;
	}
	/* A busy COMMIT on SQLite leaves the transaction open: end it, so a
	 * failed commit means the same on both engines. */
	if (rc != 0)
		drop_tx(db);
	rc = stmt_end(db, sql, true, rc);
	if (rc == 0)
		emit(db, KIT_DB_TX_COMMIT, sql);
	else if (rolled_back)
		emit(db, KIT_DB_TX_ROLLBACK, sql);
	return rc;
}

int kit_db_commit(struct kit_db *db)
{
	if (gone_before_commit(db, "COMMIT") != 0)
		return KIT_DB_ERR;
	int rc = commit(db);
	if (rc == 0)
		rc = committed_answer(db, "COMMIT");
	return rc;
}

int kit_db_rollback(struct kit_db *db)
{
	return run_tx(db, "ROLLBACK", KIT_DB_TX_ROLLBACK);
}

int kit_db_set_lock_timeout(struct kit_db *db, int ms)
{
	if (ms < 0) {
		set_err(db, NULL, "lock timeout %d ms: give 0 (default) or more", ms);
		return KIT_DB_ERR;
	}
	if (db->engine == KIT_DB_SQLITE) {
		db->busy_timeout_ns = (ms ? ms : BUSY_TIMEOUT_MS) * 1000000LL;
		return 0;
	}
	char sql[64];
	snprintf(sql, sizeof sql, "SET lock_timeout = %d", ms);
	if (!ready(db, sql))
		return KIT_DB_ERR;
	int rc = stmt_start(db, sql, true);
	if (rc != 0)
		return rc;
	if (db->engine == KIT_DB_MYSQL) {
		char cause[700];
		rc = my_done(db, "SET SESSION innodb_lock_wait_timeout",
		             kit_my_set_lock_timeout(db->my, ms, cause, sizeof cause), cause);
	} else {
		rc = pg_exec(db, sql, 0, NULL);
	}
	return stmt_end(db, sql, true, rc);
}

int kit_db_lock_timeout(const struct kit_db *db)
{
	return db->engine == KIT_DB_SQLITE ? (int)(db->busy_timeout_ns / 1000000) : -1;
}

void kit_db_set_hook(struct kit_db *db, kit_db_hook_fn *hook, void *arg)
{
	db->hook = hook;
	db->hook_arg = arg;
}
