/*
 * labtest_mysql.c: the harness's MariaDB (InnoDB) engine (labtest.h).
 *
 * labtest.c includes this file at its end, so it shares the harness's
 * private helpers (notice, report, the place names) without another
 * object in every test's link line; it is not compiled on its own.
 *
 * Each test gets a database of its own on the server named by
 * HOTROW_MYSQL_URL, "lt_<host>_<pid>_<seq>_<time>", and a URL naming it, so
 * every connection opened from that URL, in any thread, lands there;
 * teardown drops it. Databases left by a run that died are dropped at the
 * next start, as the PostgreSQL schemas are. Without HOTROW_MYSQL_URL the
 * MariaDB checks are skipped with a NOTICE; with HOTROW_REQUIRE_MYSQL=1 (or
 * a URL that does not answer) they fail.
 */

#include "util/clock.h"

static const char *my_url;          /* HOTROW_MYSQL_URL, when usable */

struct my_ids {
	int64_t id[64];
	int n;
};

/* base with its database (the path after host/) replaced by name. */
static bool my_with_database(char *out, size_t len, const char *base, const char *name)
{
	const char *auth = strstr(base, "://");
	const char *slash = auth ? strchr(auth + 3, '/') : NULL;
	if (slash == NULL)
		return false;
	const char *rest = slash + 1 + strcspn(slash + 1, "?");
	int n = snprintf(out, len, "%.*s/%s%s", (int)(slash - base), base, name, rest);
	return n > 0 && (size_t)n < len;
}

static int my_stale_database(void *arg, int ncols, const char *const *values)
{
	unsigned tag;
	long pid;
	(void)ncols;
	if (sscanf(values[0], "lt_%x_%ld_", &tag, &pid) == 2 && tag == host_tag() && process_gone(pid))
		snprintf((char *)arg, 256, "%s", values[0]);
	return 0;
}

/* The admin connection: the server's own URL, waiting at most 10 s for a
 * table a leaked connection still holds (lock_wait_timeout is the
 * metadata lock's wait, in seconds). NULL, with a message, if it fails. */
static struct kit_db *my_admin(void)
{
	struct kit_db *admin;
	if (kit_db_open(&admin, my_url) != 0 ||
	    kit_db_exec(admin, "SET SESSION lock_wait_timeout = 10", 0, NULL) != 0) {
		print_error("%s\n", kit_db_errmsg(admin));
		kit_db_close(admin);
		return NULL;
	}
	return admin;
}

static void my_sweep(void)
{
	struct kit_db *admin = my_admin();
	for (int i = 0; admin && i < 50; i++) {
		char name[256] = "", sql[300];
		kit_db_query(admin, "SELECT schema_name FROM information_schema.schemata "
		             "WHERE schema_name LIKE 'lt\\_%'", 0, NULL, my_stale_database, name);
		if (name[0] == '\0')
			break;
		snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS `%s`", name);
		if (kit_db_exec(admin, sql, 0, NULL) != 0)
			break;
	}
	kit_db_close(admin);
}

int labtest_setup_mysql(void **state)
{
	if (my_url == NULL) {
		/* Reached only when MariaDB is required or named but unreachable. */
		print_error("MariaDB is required (HOTROW_REQUIRE_MYSQL=1 or HOTROW_MYSQL_URL set) but "
		            "HOTROW_MYSQL_URL is unset or does not answer; start one with `make mysql-up`\n");
		report("detail", "MariaDB is required here but the server cannot be used (see the notice above)");
		return -1;
	}
	struct labtest *t = new_labtest(KIT_DB_MYSQL);
	snprintf(t->place, sizeof t->place, "lt_%06x_%ld_%d_%ld", host_tag(), (long)getpid(),
	         ++place_seq, (long)(time(NULL) % 100000));
	if (!my_with_database(t->url, sizeof t->url, my_url, t->place)) {
		print_error("HOTROW_MYSQL_URL has no /DATABASE to replace\n");
		free(t);
		return -1;
	}
	struct kit_db *admin = my_admin();
	char sql[300];
	snprintf(sql, sizeof sql, "CREATE DATABASE `%s`", t->place);
	if (admin == NULL || kit_db_exec(admin, sql, 0, NULL) != 0) {
		if (admin)
			print_error("%s\n", kit_db_errmsg(admin));
		kit_db_close(admin);
		free(t);
		return -1;
	}
	kit_db_close(admin);
	*state = t;
	return 0;
}

static int my_add_id(void *arg, int ncols, const char *const *values)
{
	struct my_ids *ids = arg;
	(void)ncols;
	if (values[0] && ids->n < (int)(sizeof ids->id / sizeof ids->id[0]))
		ids->id[ids->n++] = strtoll(values[0], NULL, 10);
	return 0;
}

/* End every session still in the test's database (a check that failed
 * half way, or a student's leaked connection, may hold a row or a table):
 * otherwise DROP DATABASE would wait for their locks. The database's name
 * is the test's own, so they are all the test's. */
static void my_kill_leftovers(struct kit_db *admin, const char *place)
{
	struct my_ids ids = { 0 };
	const char *params[] = { place };
	char sql[64];
	kit_db_query(admin, "SELECT ID FROM information_schema.PROCESSLIST"
	             " WHERE DB = $1 AND ID <> CONNECTION_ID()", 1, params, my_add_id, &ids);
	for (int i = 0; i < ids.n; i++) {
		snprintf(sql, sizeof sql, "KILL %lld", (long long)ids.id[i]);
		kit_db_exec(admin, sql, 0, NULL);          /* gone already: fine */
	}
}

/* Drop the test's database; -1 (said) if that fails. */
static int my_teardown(struct labtest *t)
{
	struct kit_db *admin = my_admin();
	char sql[300];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS `%s`", t->place);
	if (admin)
		my_kill_leftovers(admin, t->place);
	if (admin == NULL || kit_db_exec(admin, sql, 0, NULL) != 0) {
		if (admin)
			print_error("teardown: %s\n", kit_db_errmsg(admin));
		kit_db_close(admin);
		return -1;
	}
	kit_db_close(admin);
	return 0;
}

static char my_note[300];

/* Why INNODB_TRX did not come to n: the server's own count of row-lock
 * waits now (every client's, read live) beside the table's. */
static void my_note_stale(struct labtest *t, int64_t seen, int64_t n)
{
	int64_t live = -1;
	kit_db_query_int(labtest_db(t), "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
	                 " WHERE VARIABLE_NAME = 'INNODB_ROW_LOCK_CURRENT_WAITS'", 0, NULL, &live);
	snprintf(my_note, sizeof my_note, "INNODB_TRX showed %lld of this test's sessions in LOCK "
	         "WAIT for 15 s, not %lld; the server counts %lld row-lock waits now, every client's "
	         "(Innodb_row_lock_current_waits): InnoDB renews INNODB_TRX only when nobody read it "
	         "in the last 0.1 s", (long long)seen, (long long)n, (long long)live);
}

const char *labtest_innodb_note(void)
{
	return my_note;
}

int64_t labtest_innodb_waiters(struct labtest *t, int64_t n)
{
	const char *sql = "SELECT count(*) FROM information_schema.INNODB_TRX r"
		" JOIN information_schema.PROCESSLIST p ON p.ID = r.trx_mysql_thread_id"
		" WHERE r.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()";
	int64_t seen, deadline = util_now_ns() + 15 * 1000000000LL;
	unsigned jitter = (unsigned)getpid() ^ (unsigned)util_now_ns();
	my_note[0] = '\0';
	for (;;) {
		if (kit_db_query_int(labtest_db(t), sql, 0, NULL, &seen) != 0)
			return -1;
		if (seen == n)
			return seen;
		if (util_now_ns() > deadline) {
			my_note_stale(t, seen, n);
			return seen;
		}
		jitter = jitter * 1103515245u + 12345u;
		util_sleep_ns((150 + (int64_t)(jitter >> 16) % 250) * 1000000);
	}
}

/* At the start of a run: is the server there? Says so once; true when the
 * MariaDB checks may run (or must, and will fail). wanted: some test of the
 * group is a MariaDB one and HOTROW_LAB_ONLY allows it. */
static void my_prepare(bool wanted)
{
	const char *url = getenv("HOTROW_MYSQL_URL");
	if (!wanted)
		return;
	if (url && *url) {
		struct kit_db *db;
		if (kit_db_open(&db, url) == 0) {
			my_url = url;
			my_sweep();
		} else {
			notice("MariaDB checks fail: HOTROW_MYSQL_URL is set but %s", kit_db_errmsg(db));
		}
		kit_db_close(db);
	} else if (!env_is("HOTROW_REQUIRE_MYSQL", "1")) {
		notice("MariaDB checks skipped: set HOTROW_MYSQL_URL "
		       "(export HOTROW_MYSQL_URL=$(scripts/mysql up)) to run them");
	}
}

/* A MariaDB check that cannot run and need not: skipped quietly. */
static bool my_off(void)
{
	const char *url = getenv("HOTROW_MYSQL_URL");
	return my_url == NULL && !(url && *url) && !env_is("HOTROW_REQUIRE_MYSQL", "1");
}
