/*
 * labtest.h: the harness every lab's cmocka suite shares.
 *
 * Each test runs once per database engine, in a place of its own:
 * SQLite in a fresh file under $TMPDIR, PostgreSQL in a fresh schema of the
 * server named by HOTROW_PG_URL (the URL handed to the test has the
 * search_path set, so every connection opened from it, in any thread, lands
 * in that schema). Teardown removes the file or drops the schema.
 *
 * Without HOTROW_PG_URL, PostgreSQL tests are skipped and one line starting
 * "NOTICE" says how to enable them; with HOTROW_REQUIRE_PG=1 a missing
 * server fails them instead, and a URL that is set but does not answer
 * always fails them (a typo must not pass as "skipped"). MariaDB is the
 * same with HOTROW_MYSQL_URL and HOTROW_REQUIRE_MYSQL: a database of the
 * test's own on that server, dropped at teardown (labtest_mysql.c).
 * HOTROW_LAB_ONLY=sqlite, =postgres or =mysql runs one engine's tests and skips the others
 * quietly (`hotrow lab check NN --db URL` uses it). HOTROW_LAB_CHECKS="f g"
 * runs only the checks of functions f and g and skips the rest quietly
 * (make test runs each mutant's Caught-By checks first). HOTROW_LAB_ORDER="f g"
 * runs the checks of f and g first, in that order, then the rest in suite
 * order (scripts/mutate puts the likeliest killers first). In both lists a
 * word is a check function's name or one entry's ("f/postgres"), separated
 * by blanks or commas. Under `hotrow lab`,
 * HOTROW_LAB_SKIP (check names, one a line) says instead which checks
 * skip: those whose engines the runner did not give; every other one runs.
 *
 * Interface:
 *   static void like__counts(void **state) {
 *       struct labtest *t = *state;           // t->url, t->engine
 *       struct kit_db *db = labtest_db(t);    // opened, closed at teardown
 *       ...
 *       lt_expect_int(got, want, "likes after 8 threads x 1000");
 *   }
 *   const struct CMUnitTest tests[] = { LABTEST_BOTH(like__counts) };
 *   return labtest_main("01-hot-row", tests);
 *
 * Failures print "expected W, got G: WHAT" in decimal, and hint tags
 * ("HINT: <tag>") that `hotrow lab check` maps to hints.md.
 *
 * The report channel: when HOTROW_REPORT_FD names an open descriptor (the
 * runner sets it), the verdicts go there, one line each, and never through
 * stdout, where the code under test prints too; each line starts with
 * HOTROW_REPORT_TOKEN and a space when the runner gave one (lines without
 * it are not the harness's), then:
 *   start NAME          a check begins
 *   detail TEXT         a line of its failure message (lt_fail)
 *   hint TAG            a hint tag of its failure
 *   notice TEXT         a line for the student, outside any check
 *   say TEXT            a line the check shows beside its verdict (lt_say)
 *   threads N           the check started N threads (the kit's too): the
 *                       runner runs it again under ThreadSanitizer
 *   end NAME pass|fail|skip
 * A check with a start and no end did not finish: the process died in it;
 * one that sent a detail failed, whatever its end says; a skip counts only
 * when the runner did not give the check's engine (runner/check.h).
 */
#ifndef HOTROW_LABTEST_H
#define HOTROW_LABTEST_H

#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kit/db.h"
#include "kit/store.h"

struct labtest {
	enum kit_db_engine engine;
	char url[1024];            /* this test's own database (file or schema) */
	struct kit_db *db;         /* opened lazily by labtest_db() */
	char place[256];           /* file path or schema name, for teardown */
	char store_url[1200];      /* the test's store: "mem:", or Redis under a namespace of its own */
};

/* setup/teardown for one engine; used by LABTEST_BOTH. */
int labtest_setup_sqlite(void **state);
int labtest_setup_pg(void **state);
int labtest_setup_mysql(void **state);
int labtest_teardown(void **state);

/* SQLite as above, with a real Redis as the store: HOTROW_REDIS_URL under
 * a namespace of the test's own, emptied at teardown. Without
 * HOTROW_REDIS_URL these tests are skipped with a notice; with
 * HOTROW_REQUIRE_REDIS=1, or a URL that does not answer, they fail. */
int labtest_setup_redis(void **state);

/* A new handle on the test's store (in-process unless the setup chose
 * Redis); the caller frees it. Fails the test if it cannot be opened. */
struct kit_store *labtest_store(struct labtest *t);

/* The test's connection, opened on first use (fails the test if it cannot). */
struct kit_db *labtest_db(struct labtest *t);
/* Another connection to the same place, for another thread; caller closes. */
struct kit_db *labtest_connect(struct labtest *t);
/* The same with the server's own defaults: the connections above turn
 * synchronous_commit off for speed (a check counts, it does not crash the
 * server); this one leaves every setting as the server gives it, as a
 * pool's connection in production has them. */
struct kit_db *labtest_connect_as_served(struct labtest *t);

/* A load's settings for this check's database (kit/load.h): its defaults,
 * with t's URL, `threads` threads of `iterations` calls each, and no
 * progress line. */
struct kit_load_config;
void labtest_load_config(struct labtest *t, struct kit_load_config *c, int threads, int iterations);

/* Run the check named check again, alone, on t's engine, in a fresh copy
 * of this test program, where its calls are the process's first: a block
 * the code allocates once for the whole process (a buffer or a statement
 * text kept from its first call on) is left over there, where here an
 * earlier check made it long ago. 1 when that run passed, 0 when it
 * failed, crashed or ran past 60 s, -1 when it could not be started (no
 * fork, or no exec of /proc/self/exe). Inside that run
 * labtest_fresh_run() is true: the check then does not start another. */
int labtest_rerun_fresh(const struct labtest *t, const char *check);
bool labtest_fresh_run(void);
/* At the end of the check named check: run it again that way, and fail
 * this check, with hint, when that run fails, quoting the first failure
 * it printed; kept says what a process keeps from its first call on
 * that only that run sees ("a block kept in a static and reused").
 * Inside the fresh run, and when no fresh run can start (a note says
 * so), it does nothing. */
void labtest_expect_fresh_at(const char *file, int line, const struct labtest *t,
                             const char *check, const char *hint, const char *kept);
#define labtest_expect_fresh(t, check, hint, kept) \
	labtest_expect_fresh_at(__FILE__, __LINE__, t, check, hint, kept)
/* What the fresh run finds, the two kinds most checks look for. */
#define LT_KEPT_BLOCK "a block kept from the first call on (in a static or a _Thread_local, " \
	"reused by later calls) is never freed"
#define LT_KEPT_SETTING "a setting sent once, at the process's first call (behind a static " \
	"flag, \"set the connection up once\"), stays on that connection for good, and the " \
	"connections opened after it never get it"
/* "sqlite", "postgres" or "mysql": t's engine as HOTROW_LAB_ONLY names it
 * ("sqlite" for NULL, a check with no database). */
const char *labtest_engine_word(const struct labtest *t);

/* db's last error message, or, when a call failed without one (a function
 * still a TODO returns an error code and says nothing), a nudge saying so. */
const char *labtest_why(struct kit_db *db);

/* Run a statement on the test's connection; fail the test with the
 * database's message if it fails. */
void labtest_exec(struct labtest *t, const char *sql);
int64_t labtest_int(struct labtest *t, const char *sql);

/* The order a table's rows were inserted in, for a check that the code
 * under test writes them in an order of its own (sorted ids, say): the
 * number of distinct keys whose first row came before key's. SQLite's
 * rowid counts insertions (when the key is no INTEGER PRIMARY KEY), and a
 * fresh PostgreSQL table's rows lie in its heap in the order they came
 * (ctid). InnoDB keeps rows in key order, so on MariaDB
 * labtest_insert_order_watch(), called once after the table is created
 * and before the code under test writes, adds a BEFORE INSERT trigger
 * that writes down each row in the order it comes (a row of INSERT ... ON
 * DUPLICATE KEY UPDATE fires it whether it is then inserted or updated);
 * elsewhere it does nothing. table and column are the test's own names. */
void labtest_insert_order_watch(struct labtest *t, const char *table, const char *column);
int64_t labtest_insert_rank(struct labtest *t, const char *table, const char *column,
                            int64_t key);

/* MariaDB: wait until information_schema.INNODB_TRX shows exactly n
 * transactions in LOCK WAIT whose session is in the test's database, at
 * most 15 s; returns the last count read (n once it came). InnoDB renews
 * INNODB_TRX, INNODB_LOCKS and INNODB_LOCK_WAITS together, and only when
 * nobody on the server read them in the last 0.1 s: the reads here are 150
 * to 400 ms apart, at random, so that they neither keep the picture stale
 * themselves nor fall in step with another client polling the same way.
 * Once the count came, a read of those tables (the code under test's)
 * sees the line as it is. -1 if the query failed (labtest_why() of
 * labtest_db() says why). It asserts nothing: the caller lets its sessions
 * go before it says what was missing. */
int64_t labtest_innodb_waiters(struct labtest *t, int64_t n);
/* After labtest_innodb_waiters() gave up: a line saying what the server
 * counted live meanwhile ("" when it did not give up). */
const char *labtest_innodb_note(void);

/* One statement on a connection of its own, in a thread, to stage a
 * session that holds or waits while the check looks:
 *   struct lt_statement s = { .url = t->url, .sql = "INSERT ..." };
 *   atomic_init(&s.id, 0);
 *   pthread_create(&s.th, NULL, lt_run_statement, &s);
 *   ... atomic_load(&s.id) > 0: its session is connected ...
 *   pthread_join(s.th, NULL);         s.rc: the statement's result
 * On a server only: id is the session's pg_backend_pid() or
 * CONNECTION_ID(), -1 if it could not connect (SQLite has no session id:
 * it stays 0). */
struct lt_statement {
	const char *url, *sql;
	_Atomic int64_t id;
	int rc;
	pthread_t th;
};
void *lt_run_statement(void *arg);

#define LABTEST_SQLITE(f) cmocka_unit_test_setup_teardown(f, labtest_setup_sqlite, labtest_teardown)
#define LABTEST_PG(f)     cmocka_unit_test_setup_teardown(f, labtest_setup_pg, labtest_teardown)
/* Two entries: "f" on SQLite and "f" on PostgreSQL (names get a suffix). */
#define LABTEST_BOTH(f) \
	{ #f "/sqlite", f, labtest_setup_sqlite, labtest_teardown, NULL }, \
	{ #f "/postgres", f, labtest_setup_pg, labtest_teardown, NULL }
#define LABTEST_MYSQL(f)  { #f "/mysql", f, labtest_setup_mysql, labtest_teardown, NULL }
/* Three entries: "f" on SQLite, PostgreSQL and MariaDB; the test reads
 * t->engine (or kit_db_engine()) where the SQL differs. */
#define LABTEST_ALL(f) LABTEST_BOTH(f), LABTEST_MYSQL(f)

/* cmocka's skip(), remembered so the report says "skip", not "fail". */
void labtest_skip(const char *file, int line);
#undef skip
#define skip() labtest_skip(__FILE__, __LINE__)

/* Skip the running check, saying why (on the report channel, or stdout). */
#define lt_skip(why) do { labtest_say_why_skipped(why); skip(); } while (0)
void labtest_say_why_skipped(const char *why);
/* Two entries: "f/mem" (the in-process store) and "f/redis" (a real one),
 * both on SQLite. */
#define LABTEST_STORES(f) \
	{ #f "/mem", f, labtest_setup_sqlite, labtest_teardown, NULL }, \
	{ #f "/redis", f, labtest_setup_redis, labtest_teardown, NULL }

/* A line shown beside the check's verdict, pass or fail (a prediction
 * beside the measurement): on the report channel when there is one, else
 * on stdout as it was. */
void lt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Decimal comparisons with a readable message and an optional hint tag. */
void lt_fail(const char *file, int line, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define lt_expect_int(got, want, what) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (g_ != w_) lt_fail(__FILE__, __LINE__, NULL, "expected %lld, got %lld: %s", w_, g_, what); \
} while (0)
#define lt_expect_int_hint(got, want, what, hint) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (g_ != w_) lt_fail(__FILE__, __LINE__, hint, "expected %lld, got %lld: %s", w_, g_, what); \
} while (0)
#define lt_expect(cond, hint, ...) do { \
	if (!(cond)) lt_fail(__FILE__, __LINE__, hint, __VA_ARGS__); \
} while (0)

/* Run the group with the lab's name; prints the PostgreSQL notice once. */
int labtest_run(const char *lab, const struct CMUnitTest *tests, size_t n);
#define labtest_main(lab, tests) labtest_run(lab, tests, sizeof(tests) / sizeof((tests)[0]))

#endif
