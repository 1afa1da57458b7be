/*
 * sample.c: reading pg_locks, pg_stat_activity, pg_stat_database and
 * pg_stat_statements into one top_sample.
 *
 * Every query the sampler sends starts with the comment "hotrow top" or
 * is prepared under a name starting hotrow_, so pg_stat_statements can be
 * asked what the sampler itself costs and its own statements can be left
 * out of the top list. The session has a short
 * lock_timeout: looking up a row's key reads the user's table, and a
 * monitor must never queue behind an ALTER TABLE it is watching.
 *
 * The watched database is the users', and what they can create (types,
 * casts, operators, functions, row-level security policies) must never
 * run in the sampler's session, which may be a superuser's: the
 * search_path is pinned to pg_catalog, pg_temp, every function and
 * operator is pg_catalog's, a row's key is read as the column's own text
 * (the type's output function, which only a superuser can write; never a
 * cast), and row_security is off, so a policy is refused, not run.
 *
 * Its own queries must not show up as the server's commits: the session
 * keeps one transaction open (READ COMMITTED and read only, so it holds
 * no snapshot between statements and no transaction id), and each sample
 * runs inside a savepoint rolled back at its end, which lets go of every
 * lock the sample took. pg_stat_clear_snapshot() makes each sample read
 * the statistics afresh. Closing rolls the transaction back: one
 * rollback for the whole watch. When the server goes away (a restart),
 * the sampler says so and connects again, once a second, until it is
 * back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kit/db.h"
#include "kit/url.h"
#include "top/sample.h"
#include "util/clock.h"

#define TAG "/* hotrow top */ "
#define HISTORY 64               /* samples kept for the per-second rates */
#define KEY_CACHE 32
#define MAX_WAITS 1024           /* waits read per sample */
#define MAX_ROWS  128            /* contended rows sorted per sample */
#define RETRY_S   1.0            /* between attempts to reach a server that went away */

/* Every backend waiting for a row: on a tuple lock, or on a
 * transactionid lock (then the tuple lock it already holds names the
 * row). pg_locks is read once (each read of it locks the whole lock
 * table for a moment); the waits of other databases are dropped with the
 * backends' list, so pg_stat_activity is not read twice either. */
#define WAITS_SQL \
	"WITH l AS MATERIALIZED (SELECT pid, locktype, granted, relation, page, tuple," \
	" transactionid, waitstart FROM pg_catalog.pg_locks WHERE locktype IN ('tuple', 'transactionid'))" \
	" SELECT w.pid, w.locktype, coalesce(w.relation, t.relation)::pg_catalog.regclass::pg_catalog.text," \
	" coalesce(w.page, t.page), coalesce(w.tuple, t.tuple), w.transactionid," \
	" extract(epoch FROM pg_catalog.clock_timestamp() - w.waitstart) * 1000," \
	" extract(epoch FROM w.waitstart), pg_catalog.pg_blocking_pids(w.pid)::pg_catalog.text" \
	" FROM l w LEFT JOIN l t ON t.pid = w.pid AND t.locktype = 'tuple' AND t.granted" \
	" WHERE NOT w.granted"

#define BACKENDS_SQL \
	"SELECT pid, state, wait_event_type," \
	" extract(epoch FROM pg_catalog.clock_timestamp() - xact_start) * 1000, pg_catalog.left(query, 120)," \
	" datname = pg_catalog.current_database()" \
	" FROM pg_catalog.pg_stat_activity" \
	" WHERE backend_type = 'client backend' AND pid <> pg_catalog.pg_backend_pid() ORDER BY pid"

#define COUNTERS_SQL "SELECT pg_catalog.sum(xact_commit), pg_catalog.sum(xact_rollback)" \
	" FROM pg_catalog.pg_stat_database"

/* Prepared once: planning a query over pg_stat_activity costs more than
 * running it. pg_stat_statements counts each EXECUTE under the text of its
 * PREPARE, so the sampler's own statements are those tagged or prepared
 * under a hotrow_ name. */
/* MariaDB (InnoDB): the same picture from information_schema, read as the
 * URL's user (it needs the PROCESS privilege, as SHOW ENGINE INNODB STATUS
 * does). Every waiting transaction requests one record lock of
 * INNODB_LOCKS, which names the record (table, page, heap number) and its
 * key (lock_data); lock_table is `db`.`table`, either name free to hold
 * a dot, so the table is what follows the first "`.`". INNODB_LOCK_WAITS
 * says what is in its way: the holder
 * and the waiters queued ahead, so the front of a line is found by
 * following blockers as on PostgreSQL. A wait's age is its statement's
 * (PROCESSLIST.TIME_MS: trx_wait_started has whole seconds only). InnoDB
 * fills these tables from a cache it renews only when the last read is
 * over 0.1 s old, so a sample is up to 0.1 s stale at the default 200 ms.
 * Only record locks are rows: a wait for a table's lock (an INSERT ...
 * SELECT queued for the table's AUTO_INC lock) has no page nor record,
 * as pg_locks' relation waits are left out on PostgreSQL. Columns as
 * WAITS_SQL's, and a tenth: the record's index and key. */
#define MY_WAITS_SQL TAG \
	"SELECT r.trx_mysql_thread_id, 'record'," \
	" TRIM(TRAILING '`' FROM SUBSTRING(l.lock_table, LOCATE('`.`', l.lock_table) + 3))," \
	" l.lock_page, l.lock_rec, 0, coalesce(p.TIME_MS, 0), UNIX_TIMESTAMP(r.trx_wait_started)," \
	" (SELECT GROUP_CONCAT(b.trx_mysql_thread_id ORDER BY b.trx_started, b.trx_id)" \
	"  FROM information_schema.INNODB_LOCK_WAITS w" \
	"  JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id" \
	"  WHERE w.requesting_trx_id = r.trx_id)," \
	" CONCAT(l.lock_index, '=', coalesce(l.lock_data, '?'))" \
	" FROM information_schema.INNODB_TRX r" \
	" JOIN information_schema.INNODB_LOCKS l ON l.lock_id = r.trx_requested_lock_id" \
	" LEFT JOIN information_schema.PROCESSLIST p ON p.ID = r.trx_mysql_thread_id" \
	" WHERE l.lock_type = 'RECORD'"

/* Every client session but the sampler's, as BACKENDS_SQL's columns: a
 * session in Sleep with a transaction open is "idle in transaction". */
#define MY_BACKENDS_SQL TAG \
	"SELECT p.ID, CASE WHEN p.COMMAND = 'Sleep' AND t.trx_id IS NOT NULL THEN 'idle in transaction'" \
	"  WHEN p.COMMAND = 'Sleep' THEN 'idle' ELSE 'active' END," \
	" CASE WHEN t.trx_state = 'LOCK WAIT' THEN 'Lock' END," \
	" TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) / 1000, LEFT(p.INFO, 120)," \
	" CASE WHEN p.DB <=> DATABASE() THEN 't' ELSE 'f' END" \
	" FROM information_schema.PROCESSLIST p" \
	" LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID" \
	" WHERE p.ID <> CONNECTION_ID() AND p.COMMAND NOT IN ('Daemon', 'Binlog Dump')" \
	" AND p.USER <> 'system user' ORDER BY p.ID"

/* InnoDB's ends of transactions: Handler_commit counts every statement
 * on an InnoDB table that committed by itself too, reads included. */
#define MY_COUNTERS_SQL TAG \
	"SELECT sum(CASE WHEN VARIABLE_NAME = 'HANDLER_COMMIT' THEN VARIABLE_VALUE END)," \
	" sum(CASE WHEN VARIABLE_NAME = 'HANDLER_ROLLBACK' THEN VARIABLE_VALUE END)" \
	" FROM information_schema.GLOBAL_STATUS" \
	" WHERE VARIABLE_NAME IN ('HANDLER_COMMIT', 'HANDLER_ROLLBACK')"

#define PREPARE_SQL \
	"PREPARE hotrow_waits AS " WAITS_SQL ";" \
	"PREPARE hotrow_backends AS " BACKENDS_SQL ";" \
	"PREPARE hotrow_counters AS " COUNTERS_SQL

/* One lock wait as pg_locks shows it. */
struct wait {
	int pid;
	bool on_xid;
	char relation[64];
	int64_t page, tuple, xid;
	double wait_ms, start;       /* start: epoch seconds, identifies the wait */
	int blockers[8], nblockers;
	char key[64];                /* MariaDB: the record's "index=key", else "" */
};

struct backend {
	int pid;
	enum top_state state;
	char state_text[32];
	double xact_ms;              /* < 0: no transaction open */
	bool lock_wait;              /* waits on a lock (a holder may, too) */
	char query[96];              /* its statement, on one line */
	bool here;                   /* connected to the sampler's database */
};

struct point { double t; double commits, rollbacks, new_waits; };

struct key_entry { char relation[64]; int64_t page, tuple; char key[64]; bool used; };

struct top_sampler {
	struct kit_db *db;           /* NULL while the server is gone */
	bool my;                     /* MariaDB: information_schema, no transaction */
	char url[1024];              /* to connect again */
	char shown[512];             /* url with its password hidden */
	double gone_t;               /* when it went (now_s), < 0: here */
	double retry_t;              /* the last attempt to reach it */
	char gone_why[256];
	int reconnects;
	int pid;
	char server[64];
	char err[1100];
	int64_t t0_ns;
	int64_t seq;
	bool have_statements;
	char stmts_sql[512], own_sql[256];   /* the queries, schema filled in */
	double stmt_t;               /* when pg_stat_statements was last read */

	struct wait *waits;          /* this sample's, MAX_WAITS */
	int nwaits;
	struct backend *backends;    /* TOP_MAX_BACKENDS */
	struct top_lane *lanes;      /* MAX_ROWS, grouped before the cut */
	int nbackends;

	double *prev_starts;         /* the waits seen last sample: pid, start */
	int *prev_pids;
	int nprev;
	double new_waits_total;

	struct point hist[HISTORY];
	int nhist;
	double own_ms_first, own_calls_first, own_t_first;   /* pg_stat_statements */
	bool own_first_set;
	struct top_stmt stmts[TOP_MAX_STMTS];
	int nstmts;
	int64_t own_calls;
	double server_ms_per_s;

	struct key_entry keys[KEY_CACHE];
};

static double now_s(const struct top_sampler *ts)
{
	return (double)(util_now_ns() - ts->t0_ns) / 1e9;
}

/* A control character a user put in a table's name, a key or a query
 * (an escape sequence, say) must not reach the terminal: '?' instead. */
static char shown_char(char c)
{
	return (unsigned char)c < 0x20 || c == 0x7f ? '?' : c;
}

/* src into dst[len], cut to fit, always terminated, control characters
 * replaced. */
static void copy(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;
	for (size_t i = 0; i < n; i++)
		dst[i] = shown_char(src[i]);
	dst[n] = '\0';
}

/* src on one line: newlines and runs of blanks become one space. */
static void one_line(char *dst, size_t len, const char *src)
{
	size_t o = 0;
	for (const char *p = src ? src : ""; *p && o + 1 < len; p++) {
		bool blank = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
		if (blank && (o == 0 || dst[o - 1] == ' '))
			continue;
		dst[o++] = blank ? ' ' : shown_char(*p);
	}
	dst[o] = '\0';
}

static double num(const char *s)
{
	return s ? strtod(s, NULL) : 0;
}

/* A query with the sampler's tag, timed into *ms. */
static int query(struct top_sampler *ts, const char *sql, int nparams, const char *const *params,
                 kit_db_row_fn *row, void *arg, double *ms)
{
	double t = now_s(ts);
	int rc = kit_db_query(ts->db, sql, nparams, params, row, arg);
	*ms += (now_s(ts) - t) * 1000;
	if (rc != 0)
		snprintf(ts->err, sizeof ts->err, "%s", kit_db_errmsg(ts->db));
	return rc;
}

/* pg_stat_statements, in the schema %s the extension was created in. */
static const char STMTS_SQL[] = TAG
	"SELECT query, calls, total_exec_time, mean_exec_time FROM %s.pg_stat_statements"
	" WHERE dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())"
	" AND query NOT LIKE '/* hotrow top */%%' AND query NOT LIKE 'PREPARE hotrow\\_%%'"
	" ORDER BY total_exec_time DESC LIMIT 5";
static const char OWN_SQL[] = TAG
	"SELECT coalesce(sum(total_exec_time), 0), coalesce(sum(calls), 0)"
	" FROM %s.pg_stat_statements"
	" WHERE query LIKE '/* hotrow top */%%' OR query LIKE 'PREPARE hotrow\\_%%'";

/* ---- opening ---- */

static int take_text(void *arg, int ncols, const char *const *v)
{
	if (ncols > 0)
		snprintf(arg, 64, "%s", v[0] ? v[0] : "");   /* raw: names go back into SQL */
	return 0;
}

/* The session, pinned before anything else runs and its statements
 * prepared under the pinned path; then the transaction every sample lives
 * in (see the top of the file). */
static const char SESSION_SQL[] =
	TAG "SET search_path = pg_catalog, pg_temp; " TAG "SET row_security = off; "
	TAG "SET application_name = 'hotrow top'; " TAG "SET lock_timeout = '50ms'; "
	TAG "SET statement_timeout = '2s'; " TAG "SET idle_in_transaction_session_timeout = 0; "
	PREPARE_SQL;   /* one implicit transaction: the only commit the sampler makes */

/* Connect (again) and set the session up. 0, or -1 with ts->err set. */
static int connect_db(struct top_sampler *ts)
{
	kit_db_close(ts->db);
	ts->db = NULL;
	if (kit_db_open(&ts->db, ts->url) != 0) {
		/* libpq's message runs over several lines; the first says it all. */
		char first[300];
		snprintf(first, sizeof first, "%s", kit_db_errmsg(ts->db));
		first[strcspn(first, "\n")] = '\0';
		snprintf(ts->err, sizeof ts->err, "cannot reach %s (%s); start a server "
		         "(export HOTROW_PG_URL=$(scripts/pg up)) or fix the URL", ts->shown, first);
		kit_db_close(ts->db);
		ts->db = NULL;
		return -1;
	}
	char pid[64] = "", ext[64] = "";
	double ms = 0;
	ts->my = kit_db_engine(ts->db) == KIT_DB_MYSQL;
	if (ts->my) {
		/* Each sample is three statements in autocommit: they read only
		 * information_schema, which takes no row lock and counts in no
		 * Handler_commit. */
		if (query(ts, TAG "SELECT CONNECTION_ID()", 0, NULL, take_text, pid, &ms) != 0 ||
		    query(ts, TAG "SELECT CONCAT('MariaDB ', VERSION())", 0, NULL, take_text,
		          ts->server, &ms) != 0) {
			char why[400];
			snprintf(why, sizeof why, "%s", kit_db_errmsg(ts->db));
			snprintf(ts->err, sizeof ts->err, "%s: %s", ts->shown, why);
			kit_db_close(ts->db);
			ts->db = NULL;
			return -1;
		}
	} else if (kit_db_exec(ts->db, SESSION_SQL, 0, NULL) != 0 ||
	    kit_db_exec(ts->db, TAG "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY", 0, NULL) != 0 ||
	    query(ts, TAG "SELECT pg_catalog.pg_backend_pid()", 0, NULL, take_text, pid, &ms) != 0 ||
	    query(ts, TAG "SELECT 'PostgreSQL ' || pg_catalog.current_setting('server_version')", 0, NULL,
	          take_text, ts->server, &ms) != 0 ||
	    query(ts, TAG "SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
	          " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
	          " WHERE e.extname = 'pg_stat_statements'", 0, NULL, take_text, ext, &ms) != 0) {
		char why[400];
		snprintf(why, sizeof why, "%s", kit_db_errmsg(ts->db));
		snprintf(ts->err, sizeof ts->err, "%s: %s", ts->shown, why);
		kit_db_close(ts->db);
		ts->db = NULL;
		return -1;
	}
	ts->pid = atoi(pid);
	/* The view lives in the extension's schema, which need not be on the
	 * search_path. */
	ts->have_statements = ext[0] != '\0';
	snprintf(ts->stmts_sql, sizeof ts->stmts_sql, STMTS_SQL, ext);
	snprintf(ts->own_sql, sizeof ts->own_sql, OWN_SQL, ext);
	ts->stmt_t = -1e9;
	ts->server_ms_per_s = -1;
	ts->own_first_set = false;
	ts->nhist = 0;                   /* a restarted server's counters start again */
	ts->nprev = 0;
	memset(ts->keys, 0, sizeof ts->keys);
	return 0;
}

int top_sampler_open(struct top_sampler **out, const char *url, char *err, size_t errlen)
{
	*out = NULL;
	if (url == NULL || !strncmp(url, "sqlite:", 7)) {
		snprintf(err, errlen, "a PostgreSQL or MariaDB server is needed: give postgresql://... "
		         "or mysql://... (or export HOTROW_PG_URL=$(scripts/pg up))");
		return -1;
	}
	struct top_sampler *ts = calloc(1, sizeof *ts);
	if (ts == NULL || !(ts->waits = calloc(MAX_WAITS, sizeof *ts->waits)) ||
	    !(ts->backends = calloc(TOP_MAX_BACKENDS, sizeof *ts->backends)) ||
	    !(ts->lanes = calloc(MAX_ROWS, sizeof *ts->lanes)) ||
	    !(ts->prev_starts = calloc(MAX_WAITS, sizeof *ts->prev_starts)) ||
	    !(ts->prev_pids = calloc(MAX_WAITS, sizeof *ts->prev_pids)) ||
	    strlen(url) >= sizeof ts->url) {
		snprintf(err, errlen, ts ? "out of memory, or a URL too long" : "out of memory");
		top_sampler_close(ts);
		return -1;
	}
	ts->t0_ns = util_now_ns();
	ts->gone_t = -1;
	snprintf(ts->url, sizeof ts->url, "%s", url);
	kit_url_redact(url, ts->shown, sizeof ts->shown);
	if (connect_db(ts) != 0) {
		copy(err, errlen, ts->err);
		top_sampler_close(ts);
		return -1;
	}
	*out = ts;
	return 0;
}

void top_sampler_close(struct top_sampler *ts)
{
	if (ts == NULL)
		return;
	if (ts->db && kit_db_connected(ts->db) && !ts->my)
		kit_db_exec(ts->db, TAG "ROLLBACK", 0, NULL);
	kit_db_close(ts->db);
	explicit_bzero(ts->url, sizeof ts->url);
	free(ts->waits);
	free(ts->backends);
	free(ts->lanes);
	free(ts->prev_starts);
	free(ts->prev_pids);
	free(ts);
}

const char *top_sampler_error(const struct top_sampler *ts)
{
	return ts->err;
}

int top_sampler_pid(const struct top_sampler *ts)
{
	return ts->pid;
}

const char *top_state_name(enum top_state st)
{
	static const char *const names[] = {
		[TOP_IDLE] = "idle", [TOP_ACTIVE] = "active",
		[TOP_IDLE_IN_TX] = "idle in transaction", [TOP_LOCK_WAIT] = "lock wait",
		[TOP_IO_WAIT] = "I/O wait", [TOP_HOLDER] = "holds a row",
	};
	return st < TOP_NSTATES ? names[st] : "?";
}

/* ---- the waits ---- */

static int take_wait(void *arg, int ncols, const char *const *v)
{
	struct top_sampler *ts = arg;
	if (ncols < 9 || ts->nwaits >= MAX_WAITS)
		return 0;
	struct wait *w = &ts->waits[ts->nwaits++];
	memset(w, 0, sizeof *w);
	w->pid = atoi(v[0]);
	w->on_xid = v[1] && !strcmp(v[1], "transactionid");
	copy(w->relation, sizeof w->relation, v[2]);
	copy(w->key, sizeof w->key, ncols > 9 ? v[9] : NULL);
	w->page = v[3] ? atoll(v[3]) : -1;
	w->tuple = v[4] ? atoll(v[4]) : -1;
	w->xid = v[5] ? atoll(v[5]) : 0;
	w->wait_ms = v[6] ? num(v[6]) : 0;
	w->start = v[7] ? num(v[7]) : 0;
	/* "{123,456}" */
	for (const char *p = v[8] ? v[8] : ""; *p && w->nblockers < 8; ) {
		while (*p && (*p < '0' || *p > '9'))
			p++;
		if (!*p)
			break;
		char *end;
		w->blockers[w->nblockers++] = (int)strtol(p, &end, 10);
		p = end;
	}
	return 0;
}

/* ---- the backends ---- */

static int take_backend(void *arg, int ncols, const char *const *v)
{
	struct top_sampler *ts = arg;
	if (ncols < 6 || ts->nbackends >= TOP_MAX_BACKENDS)
		return 0;
	struct backend *b = &ts->backends[ts->nbackends++];
	b->here = v[5] && v[5][0] == 't';
	one_line(b->query, sizeof b->query, v[4]);
	const char *state = v[1] ? v[1] : "", *wait = v[2] ? v[2] : "";
	b->pid = atoi(v[0]);
	copy(b->state_text, sizeof b->state_text, state);
	b->xact_ms = v[3] ? num(v[3]) : -1;
	b->lock_wait = !strcmp(wait, "Lock");
	if (b->lock_wait)
		b->state = TOP_LOCK_WAIT;
	else if (!strcmp(wait, "IO"))
		b->state = TOP_IO_WAIT;
	else if (!strncmp(state, "idle in transaction", 19))
		b->state = TOP_IDLE_IN_TX;
	else if (!strcmp(state, "active"))
		b->state = TOP_ACTIVE;
	else
		b->state = TOP_IDLE;
	return 0;
}

static struct backend *backend(struct top_sampler *ts, int pid)
{
	for (int i = 0; i < ts->nbackends; i++)
		if (ts->backends[i].pid == pid)
			return &ts->backends[i];
	return NULL;
}

/* Keep the waits of backends connected to this database: in another
 * one, ::regclass would name the wrong table. */
static void drop_other_databases(struct top_sampler *ts)
{
	int k = 0;
	for (int i = 0; i < ts->nwaits; i++) {
		const struct backend *b = backend(ts, ts->waits[i].pid);
		if (b && b->here)
			ts->waits[k++] = ts->waits[i];
	}
	ts->nwaits = k;
}

/* ---- the lanes ---- */

/* The order a lane shows: the transactionid waiters first, longest
 * waiting first, then the tuple lock's waiters, oldest first (that lock's
 * queue is first come, first served). It is the order they lined up, not
 * who gets the row next: at the holder's commit every transactionid
 * waiter wakes at once and they race for it. */
static int by_queue(const void *a, const void *b)
{
	const struct top_waiter *x = a, *y = b;
	if (x->on_xid != y->on_xid)
		return x->on_xid ? -1 : 1;
	return (x->wait_ms < y->wait_ms) - (x->wait_ms > y->wait_ms);
}

static int by_waiting(const void *a, const void *b)
{
	const struct top_lane *x = a, *y = b;
	if (x->nwaiting != y->nwaiting)
		return y->nwaiting - x->nwaiting;
	return (x->oldest_wait_ms < y->oldest_wait_ms) - (x->oldest_wait_ms > y->oldest_wait_ms);
}

static const struct wait *waiting(const struct top_sampler *ts, int pid)
{
	for (int i = 0; i < ts->nwaits; i++)
		if (ts->waits[i].pid == pid)
			return &ts->waits[i];
	return NULL;
}

/* The backend at the front of w's line: follow the first blocker while it
 * waits itself. Under load a row's line is not one clean queue: when the
 * holder commits, the row gets a new version, and waiters that were
 * queued on the old version's tuple lock move on to wait for the new
 * holder's transaction without a tuple lock of their own. What they all
 * share is the transaction at the front, so that is what a lane is. */
static int front(const struct top_sampler *ts, const struct wait *w)
{
	int pid = w->nblockers ? w->blockers[0] : 0;
	for (int step = 0; step < 64 && pid; step++) {   /* a deadlock loops */
		const struct wait *next = waiting(ts, pid);
		if (!next || !next->nblockers)
			return pid;
		pid = next->blockers[0];
	}
	return pid;
}

/* Group the waits into lanes, one per holder, and name each lane's row
 * from the tuple lock of the waiter at the head of its line (or of any
 * waiter; a transaction number when none holds one). */
static void build_lanes(struct top_sampler *ts, struct top_sample *s,
                        struct top_lane *lanes, int max)
{
	int n = 0;
	for (int i = 0; i < ts->nwaits; i++) {
		const struct wait *w = &ts->waits[i];
		int holder = front(ts, w);
		struct top_lane *l = NULL;
		for (int j = 0; j < n && !l; j++)
			if (lanes[j].holder_pid == holder)
				l = &lanes[j];
		if (!l) {
			if (n == max)
				continue;
			l = &lanes[n++];
			memset(l, 0, sizeof *l);
			l->holder_pid = holder;
			l->page = l->tuple = -1;
		}
		bool head = w->on_xid && w->nblockers && w->blockers[0] == holder;
		if (w->tuple >= 0 && w->relation[0] && (l->tuple < 0 || head)) {
			copy(l->relation, sizeof l->relation, w->relation);
			l->page = w->page, l->tuple = w->tuple;
			copy(l->key, sizeof l->key, w->key);
		}
		if (w->on_xid && (head || !l->xid))
			l->xid = w->xid;
		l->nwaiting++;
		if (w->wait_ms > l->oldest_wait_ms)
			l->oldest_wait_ms = w->wait_ms;
		if (l->nwaiters < TOP_MAX_WAITERS)
			l->waiters[l->nwaiters++] = (struct top_waiter){ w->pid, w->on_xid, w->wait_ms };
	}
	for (int j = 0; j < n; j++) {
		struct top_lane *l = &lanes[j];
		qsort(l->waiters, (size_t)l->nwaiters, sizeof l->waiters[0], by_queue);
		struct backend *next = l->nwaiters ? backend(ts, l->waiters[0].pid) : NULL;
		if (next)
			copy(l->query, sizeof l->query, next->query);
		struct backend *h = l->holder_pid ? backend(ts, l->holder_pid) : NULL;
		if (h) {
			l->holder_age_ms = h->xact_ms;
			copy(l->holder_state, sizeof l->holder_state, h->state_text);
			h->state = TOP_HOLDER;
		}
	}
	qsort(lanes, (size_t)n, sizeof lanes[0], by_waiting);
	s->nlanes_total = n;
	s->nlanes = n < TOP_MAX_LANES ? n : TOP_MAX_LANES;
	memcpy(s->lanes, lanes, (size_t)s->nlanes * sizeof lanes[0]);
}

/* ---- the row's key ---- */

/* The primary key's columns of relation, quoted, comma separated. */
static const char PKEY_SQL[] = TAG
	"SELECT pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ',' ORDER BY k.i)"
	" FROM pg_catalog.pg_index x"
	" CROSS JOIN LATERAL pg_catalog.unnest(x.indkey) WITH ORDINALITY AS k(attnum, i)"
	" JOIN pg_catalog.pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum"
	" WHERE x.indrelid = $1::pg_catalog.regclass AND x.indisprimary";

/* The row's key columns, each as PostgreSQL writes the value out (the
 * type's output function; a user's type has a built-in one), joined. */
static int take_values(void *arg, int ncols, const char *const *v)
{
	char *out = arg;
	size_t o = 0;
	for (int i = 0; i < ncols && o + 1 < 64; i++)
		o += (size_t)snprintf(out + o, 64 - o, "%s%s", i ? "," : "", v[i] ? v[i] : "NULL");
	for (char *c = out; *c; c++)
		*c = shown_char(*c);
	return 1;
}

/* "id=1" for the row at (page, tuple), read by ctid (the version the
 * holder is replacing is still visible to us while it has not committed);
 * "" when there is no primary key, no such row, or no permission (the
 * lane then names the row by its ctid). Its own savepoint: a refusal
 * must not end the sample. The values are never cast: `id::text` would
 * run a cast a user can create for their own type. */
static void look_up_key(struct top_sampler *ts, struct top_lane *l, double *ms)
{
	for (int i = 0; i < KEY_CACHE; i++) {
		struct key_entry *e = &ts->keys[i];
		if (e->relation[0] && e->page == l->page && e->tuple == l->tuple &&
		    !strcmp(e->relation, l->relation)) {
			e->used = true;
			copy(l->key, sizeof l->key, e->key);
			return;
		}
	}
	char cols[64] = "", value[64] = "", sql[512], tid[48];
	const char *rel[] = { l->relation };
	snprintf(tid, sizeof tid, "(%lld,%lld)", (long long)l->page, (long long)l->tuple);
	const char *params[] = { tid };
	double t = now_s(ts);
	if (kit_db_exec(ts->db, TAG "SAVEPOINT hotrow_key", 0, NULL) != 0)
		return;
	if (kit_db_query(ts->db, PKEY_SQL, 1, rel, take_text, cols) == 0 && cols[0]) {
		snprintf(sql, sizeof sql, TAG "SELECT %s FROM ONLY %s"
		         " WHERE ctid OPERATOR(pg_catalog.=) $1::pg_catalog.tid", cols, l->relation);
		if (kit_db_query(ts->db, sql, 1, params, take_values, value) >= 0 && value[0]) {
			char key[160];       /* cut to l->key's size below */
			bool many = strchr(cols, ',') != NULL;
			snprintf(key, sizeof key, many ? "(%s)=(%s)" : "%s=%s", cols, value);
			copy(l->key, sizeof l->key, key);
		}
	}
	kit_db_exec(ts->db, TAG "ROLLBACK TO SAVEPOINT hotrow_key; " TAG "RELEASE SAVEPOINT hotrow_key",
	            0, NULL);
	*ms += (now_s(ts) - t) * 1000;
	for (int i = 0; i < KEY_CACHE; i++) {
		struct key_entry *e = &ts->keys[i];
		if (!e->relation[0]) {
			copy(e->relation, sizeof e->relation, l->relation);
			e->page = l->page, e->tuple = l->tuple, e->used = true;
			copy(e->key, sizeof e->key, l->key);
			return;
		}
	}
}

/* Entries for rows nobody waits on any more are dropped: the ctid may
 * hold another row later. */
static void forget_unused_keys(struct top_sampler *ts)
{
	for (int i = 0; i < KEY_CACHE; i++) {
		if (!ts->keys[i].used)
			ts->keys[i].relation[0] = '\0';
		ts->keys[i].used = false;
	}
}

/* ---- rates and statements ---- */

static int take_two(void *arg, int ncols, const char *const *v)
{
	double *out = arg;
	out[0] = ncols > 0 ? num(v[0]) : 0;
	out[1] = ncols > 1 ? num(v[1]) : 0;
	return 0;
}

/* Per-second rates over the newest stretch of history of at least a
 * second (the server publishes its counters about once a second). */
static void rates(struct top_sampler *ts, struct top_sample *s, struct point p)
{
	if (ts->nhist == HISTORY) {
		memmove(ts->hist, ts->hist + 1, (HISTORY - 1) * sizeof ts->hist[0]);
		ts->nhist--;
	}
	ts->hist[ts->nhist++] = p;
	s->commits_per_s = s->rollbacks_per_s = s->new_waits_per_s = -1;
	for (int i = ts->nhist - 2; i >= 0; i--) {
		double dt = p.t - ts->hist[i].t;
		if (dt < 1.0)
			continue;
		s->commits_per_s = (p.commits - ts->hist[i].commits) / dt;
		s->rollbacks_per_s = (p.rollbacks - ts->hist[i].rollbacks) / dt;
		s->new_waits_per_s = (p.new_waits - ts->hist[i].new_waits) / dt;
		break;
	}
}

static int take_stmt(void *arg, int ncols, const char *const *v)
{
	struct top_sampler *ts = arg;
	if (ncols < 4 || ts->nstmts >= TOP_MAX_STMTS)
		return 0;
	struct top_stmt *st = &ts->stmts[ts->nstmts++];
	one_line(st->query, sizeof st->query, v[0]);
	st->calls = atoll(v[1] ? v[1] : "0");
	st->total_ms = num(v[2]);
	st->mean_ms = num(v[3]);
	return 0;
}

/* Read pg_stat_statements about once a second: the top list does not move
 * faster than that, and the view walks every statement the server knows. */
static int statements(struct top_sampler *ts, double t, double *ms)
{
	if (!ts->have_statements || t - ts->stmt_t < 1.0)
		return 0;
	ts->stmt_t = t;
	ts->nstmts = 0;
	double own[2];
	if (query(ts, ts->stmts_sql, 0, NULL, take_stmt, ts, ms) != 0 ||
	    query(ts, ts->own_sql, 0, NULL, take_two, own, ms) != 0) {
		ts->have_statements = false;    /* dropped, or no permission: stop asking */
		return -1;
	}
	ts->own_calls = (int64_t)own[1];
	if (!ts->own_first_set) {
		ts->own_first_set = true;
		ts->own_ms_first = own[0], ts->own_t_first = t;
	} else if (t > ts->own_t_first) {
		ts->server_ms_per_s = (own[0] - ts->own_ms_first) / (t - ts->own_t_first);
	}
	return 0;
}

/* Waits seen now that were not there last time (same pid, same start). */
static int count_new_waits(struct top_sampler *ts)
{
	int fresh = 0;
	for (int i = 0; i < ts->nwaits; i++) {
		bool seen = false;
		for (int j = 0; j < ts->nprev && !seen; j++)
			seen = ts->prev_pids[j] == ts->waits[i].pid &&
			       ts->prev_starts[j] == ts->waits[i].start;
		fresh += !seen;
	}
	for (int i = 0; i < ts->nwaits; i++) {
		ts->prev_pids[i] = ts->waits[i].pid;
		ts->prev_starts[i] = ts->waits[i].start;
	}
	ts->nprev = ts->nwaits;
	return fresh;
}

/* The server is gone (or never answered): say so in ts->err and in s,
 * and try to reach it again at most once every RETRY_S. 0 when it is
 * back (the sample can go on), -1 while it is not. */
static int reach(struct top_sampler *ts, struct top_sample *s)
{
	double t = now_s(ts);
	if (ts->db && kit_db_connected(ts->db))
		return 0;
	if (ts->gone_t < 0) {
		ts->gone_t = t;
		ts->retry_t = t;
		snprintf(ts->gone_why, sizeof ts->gone_why, "%s",
		         ts->db ? kit_db_errmsg(ts->db) : "no connection");
		ts->gone_why[strcspn(ts->gone_why, "\n")] = '\0';
	} else if (t - ts->retry_t >= RETRY_S) {
		ts->retry_t = t;
		if (connect_db(ts) == 0) {
			ts->gone_t = -1;
			ts->reconnects++;
			return 0;
		}
	}
	s->gone_s = t - ts->gone_t;
	snprintf(ts->err, sizeof ts->err, "the server is gone (%.0f s): %s; trying again every %.0f s",
	         s->gone_s, ts->gone_why, RETRY_S);
	return -1;
}

static int take(struct top_sampler *ts, struct top_sample *s);
static int take_mysql(struct top_sampler *ts, struct top_sample *s);

/* What the lanes, the cells and the rates make of this sample's waits,
 * backends and counters, on either server. */
static void digest(struct top_sampler *ts, struct top_sample *s, const double counters[2],
                   double *ms)
{
	drop_other_databases(ts);
	build_lanes(ts, s, ts->lanes, MAX_ROWS);
	for (int i = 0; i < s->nlanes; i++)
		if (s->lanes[i].tuple >= 0 && !s->lanes[i].key[0] && !ts->my)
			look_up_key(ts, &s->lanes[i], ms);
	forget_unused_keys(ts);
	s->waiting_now = ts->nwaits;
	for (int i = 0; i < ts->nbackends; i++) {
		s->backend_state[i] = (uint8_t)ts->backends[i].state;
		s->nstate[ts->backends[i].state]++;
		s->lock_waits_now += ts->backends[i].lock_wait;
	}
	s->nbackends = ts->nbackends;
	ts->new_waits_total += count_new_waits(ts);
	rates(ts, s, (struct point){ s->t_s, counters[0], counters[1], ts->new_waits_total });
}

/* A sample of MariaDB: three reads of information_schema; its key comes
 * with the lock (lock_data), and there is no pg_stat_statements. */
static int take_mysql(struct top_sampler *ts, struct top_sample *s)
{
	double ms = 0, counters[2] = {0, 0};
	int rc = 0;
	if (query(ts, MY_WAITS_SQL, 0, NULL, take_wait, ts, &ms) != 0 ||
	    query(ts, MY_BACKENDS_SQL, 0, NULL, take_backend, ts, &ms) != 0 ||
	    query(ts, MY_COUNTERS_SQL, 0, NULL, take_two, counters, &ms) != 0)
		rc = -1;
	digest(ts, s, counters, &ms);
	if (!kit_db_connected(ts->db)) {
		reach(ts, s);
		rc = -1;
	}
	s->server_ms_per_s = -1;
	s->query_ms = ms;
	return rc;
}

int top_sampler_take(struct top_sampler *ts, struct top_sample *s)
{
	int rc = take(ts, s);
	for (char *c = ts->err; *c; c++)    /* the server's words may quote a name */
		*c = shown_char(*c);
	return rc;
}

static int take(struct top_sampler *ts, struct top_sample *s)
{
	double ms = 0, counters[2] = {0, 0};
	int rc = 0;

	memset(s, 0, sizeof *s);
	ts->err[0] = '\0';
	s->seq = ++ts->seq;
	s->t_s = now_s(ts);
	s->gone_s = -1;
	ts->nwaits = ts->nbackends = 0;
	if (reach(ts, s) != 0)
		return -1;
	s->reconnects = ts->reconnects;
	copy(s->server, sizeof s->server, ts->server);
	s->innodb = ts->my;
	if (ts->my)
		return take_mysql(ts, s);
	if (kit_db_exec(ts->db, TAG "SAVEPOINT hotrow_sample; " TAG "SELECT pg_catalog.pg_stat_clear_snapshot()",
	                0, NULL) != 0) {
		snprintf(ts->err, sizeof ts->err, "%s", kit_db_errmsg(ts->db));
		if (!kit_db_connected(ts->db))
			reach(ts, s);
		else   /* the transaction broke (it should not): start a new one */
			kit_db_exec(ts->db, TAG "ROLLBACK; " TAG "BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY",
			            0, NULL);
		return -1;
	}
	if (query(ts, TAG "EXECUTE hotrow_waits", 0, NULL, take_wait, ts, &ms) != 0 ||
	    query(ts, TAG "EXECUTE hotrow_backends", 0, NULL, take_backend, ts, &ms) != 0 ||
	    query(ts, TAG "EXECUTE hotrow_counters", 0, NULL, take_two, counters, &ms) != 0)
		rc = -1;
	digest(ts, s, counters, &ms);
	if (rc == 0 && statements(ts, s->t_s, &ms) != 0)
		rc = -1;
	/* every lock the sample took goes with the savepoint */
	if (kit_db_exec(ts->db, TAG "ROLLBACK TO SAVEPOINT hotrow_sample; "
	                TAG "RELEASE SAVEPOINT hotrow_sample", 0, NULL) != 0 && rc == 0) {
		snprintf(ts->err, sizeof ts->err, "%s", kit_db_errmsg(ts->db));
		rc = -1;
	}
	if (!kit_db_connected(ts->db)) {
		reach(ts, s);
		rc = -1;
	}
	s->have_statements = ts->have_statements;
	s->nstmts = ts->nstmts;
	memcpy(s->stmts, ts->stmts, sizeof s->stmts);
	s->server_ms_per_s = ts->server_ms_per_s;
	s->own_calls = ts->own_calls;
	s->query_ms = ms;
	return rc;
}
