/*
 * test_inside.c: Lab 08's checks, on PostgreSQL and, where the effect
 * exists there, on SQLite.
 *
 * The engine's effects are checked by their trend against a baseline
 * measured in the same check (a held snapshot against none, a deferred key
 * against an immediate one), with wide margins, never against absolute
 * times. PostgreSQL's statistics are asynchronous: every connection that
 * did the work flushes them (pg_stat_force_next_flush()) before they are
 * read.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kit/load.h"
#include "labs/08-engine/inside.h"
#include "tests/harness/beside.h"
#include "tests/harness/alloc.h"
#include "tests/harness/deadline.h"
#include "tests/harness/gate.h"
#include "tests/harness/labtest.h"
#include "tests/harness/locks.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"
#include "tests/harness/steps.h"
#include "tests/labs/08-engine/contracts.h"
#include "tests/labs/08-engine/promises.h"
#include "tests/labs/08-engine/races.h"
#include "tests/labs/08-engine/sleeps.h"
#include "util/clock.h"

#define THREADS 8

static void make_counter(struct labtest *t)
{
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (1); INSERT INTO posts (id) VALUES (1)");
}

static int64_t counter(struct labtest *t)
{
	return labtest_int(t, "SELECT n FROM counters WHERE id = 1");
}

/* A text column's value, for kit_db_query. */
static int show_level(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 40, "%s", ncols > 0 && values[0] ? values[0] : "");
	return 0;
}

/* n autocommit increments of counter 1 from db, then its statistics flushed. */
static void bump(struct kit_db *db, int n)
{
	char sql[200];
	int rc = 0;
	if (kit_db_engine(db) == KIT_DB_SQLITE) {
		for (int i = 0; i < n && rc == 0; i++)
			rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = 1", 0, NULL);
	} else {
		/* A DO block that commits each update: n transactions in one round trip. */
		snprintf(sql, sizeof sql, "DO $$ BEGIN FOR i IN 1..%d LOOP"
		         " UPDATE counters SET n = n + 1 WHERE id = 1; COMMIT; END LOOP; END $$", n);
		rc = kit_db_exec(db, sql, 0, NULL);
		if (rc == 0)
			rc = kit_db_exec(db, "SELECT pg_stat_force_next_flush()", 0, NULL);
	}
	if (rc != 0)
		fail_msg("%d updates of the counter: %s", n, kit_db_errmsg(db));
}

static void versions(struct kit_db *db, struct inside_versions *v, const char *when)
{
	int rc = inside_versions(db, 1, v);
	lt_expect(rc == 0, "versions", "expected inside_versions() to return 0 %s, got %d: %s",
	          when, rc, labtest_why(db));
}

/* ---- §2 Versions ---- */

/* Another backend of this database whose transaction holds the cleanup
 * horizon back (a snapshot or a transaction id of its own). */
/* Another session's snapshot in this database, or a transaction id held
 * in any database: a snapshot taken while that transaction runs (this
 * check's own, VACUUM's) keeps every version it could still need to see,
 * so pruning here waits for it too (Lab 07's minute-long wait, run on
 * the same server, is one). */
/* Another connection with a transaction open (begin: "BEGIN" or "BEGIN
 * ISOLATION LEVEL REPEATABLE READ") that has run sql (a read of counter
 * 1, or SELECT 1, which reads no table): its snapshot holds what the
 * check needs held. who names it in a failure. */
static struct kit_db *reading(struct labtest *t, const char *begin, const char *sql,
                              const char *who)
{
	struct kit_db *db = labtest_connect(t);
	int64_t seen;
	if (kit_db_exec(db, begin, 0, NULL) != 0 || kit_db_query_int(db, sql, 0, NULL, &seen) != 0)
		fail_msg("%s: %s", who, kit_db_errmsg(db));
	return db;
}

static bool horizon_held_elsewhere(struct labtest *t)
{
	return labtest_int(t, "SELECT count(*) FROM pg_stat_activity WHERE"
	                      " pid <> pg_backend_pid() AND (backend_xid IS NOT NULL OR"
	                      " (datname = current_database() AND backend_xmin IS NOT NULL))") > 0;
}

/* The check, with n updates before the old snapshot and n more under
 * it; what it expects grows with n (a page holds some 180 versions of
 * the counter's row: n / 500 pages is well under half of what they
 * fill). */
static void keeps_versions(void **state, int n_updates)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct inside_versions free_, held, vacuumed;
	char when[80];
	int64_t n = n_updates;
	make_counter(t);

	snprintf(when, sizeof when, "after %d updates", n_updates);
	bump(db, n_updates);
	versions(db, &free_, when);
	/* Another session's transaction (a suite beside this one, a backend
	 * still starting) can hold the cleanup horizon back for a moment; then
	 * pruning waits, and the chain is long for a reason that is not this
	 * test's. A few more updates a little later let it prune; an answer
	 * that stays long is the answer. Once another session is seen
	 * holding the horizon past five tries, the next lines take over;
	 * while nobody holds it, up to twenty tries (the chain is pruned
	 * on the next updates once the holder has gone). */
	for (int i = 0; i < 20 && free_.buffers > 5; i++) {
		if (i >= 5 && horizon_held_elsewhere(t))
			break;              /* held for long: measured on counter 2 below */
		util_sleep(0.3);
		bump(db, 200);
		versions(db, &free_, when);
	}
	/* A neighbour that holds the horizon longer than that (a class's
	 * shared server: a student's open transaction in another schema)
	 * keeps the chain long whatever this code does. Then the short
	 * chain is measured on counter 2, which was never updated: it needs
	 * no pruning, so its buffers are the ones a pruned row needs. */
	int64_t short_chain = free_.buffers;
	if (free_.buffers > 5 && horizon_held_elsewhere(t)) {
		struct inside_versions fresh;
		labtest_exec(t, "INSERT INTO counters (id) VALUES (2)");
		int rc = inside_versions(db, 2, &fresh);
		lt_expect(rc == 0, "versions", "expected inside_versions() of counter 2 to return 0, "
		          "got %d: %s", rc, labtest_why(db));
		short_chain = fresh.buffers;
		lt_say("another session holds the cleanup horizon back: reading counter 1 touches %"
		       PRId64 " buffers before this check's snapshot; counter 2, never updated, %"
		       PRId64, free_.buffers, fresh.buffers);
	}

	/* The held half starts from an empty table. Versions the first half
	 * left unpruned (another session held the horizon, then let go)
	 * would be pruned by the updates under the snapshot, and the room
	 * they free would take the new versions in: no page more, although
	 * every one of them is kept. TRUNCATE leaves no such room. */
	labtest_exec(t, "TRUNCATE counters; INSERT INTO counters (id) VALUES (1);"
	                " SELECT pg_stat_force_next_flush()");
	struct inside_versions base;
	versions(db, &base, "after TRUNCATE, before the old snapshot");

	struct kit_db *old = reading(t, "BEGIN ISOLATION LEVEL REPEATABLE READ",
	                              "SELECT n FROM counters WHERE id = 1", "the old snapshot");
	bump(db, n_updates);
	versions(db, &held, "with an old snapshot open");
	labtest_exec(t, "VACUUM counters");
	versions(db, &vacuumed, "after VACUUM, the snapshot still open");
	kit_db_rollback(old);
	kit_db_close(old);

	lt_expect(free_.updates >= n && free_.hot_updates >= free_.updates * 9 / 10, "hot",
	          "expected %" PRId64 " or more updates, nearly all HOT (the counter has no index), "
	          "got %" PRId64 " updates, %" PRId64 " HOT", n, free_.updates, free_.hot_updates);
	lt_expect(short_chain > 0 && short_chain <= 5, "buffers",
	          "expected reading the row to touch 1 to 5 buffers with no old snapshot, got %" PRId64,
	          short_chain);
	lt_expect(held.heap_pages >= base.heap_pages + n / 500, "snapshot",
	          "expected the table to grow by %" PRId64 " pages or more while the old snapshot "
	          "kept %" PRId64 " versions, got %" PRId64 " pages, %" PRId64 " before",
	          n / 500, n, held.heap_pages, base.heap_pages);
	lt_expect(held.dead >= base.dead + n / 2, "snapshot",
	          "expected %" PRId64 " or more dead versions more with the old snapshot open, got "
	          "%" PRId64 " (%" PRId64 " before it)", n / 2, held.dead, base.dead);
	lt_expect(held.buffers >= short_chain + n / 500, "buffers",
	          "expected reading the one row to touch %" PRId64 " or more buffers more with the "
	          "old snapshot open, got %" PRId64 " (%" PRId64 " without)", n / 500, held.buffers,
	          short_chain);
	lt_expect(vacuumed.buffers * 2 >= held.buffers && vacuumed.heap_pages >= held.heap_pages,
	          "vacuum", "expected VACUUM to free nothing while the snapshot is open, got "
	          "%" PRId64 " buffers (%" PRId64 " before), %" PRId64 " pages (%" PRId64 " before)",
	          vacuumed.buffers, held.buffers, vacuumed.heap_pages, held.heap_pages);
}

static void versions__old_snapshot_keeps_versions(void **state)
{
	keeps_versions(state, 10000);
}

/* The same check with another session beside it, as on a server a class
 * shares: a REPEATABLE READ snapshot and a write (a transaction id) held
 * open in another schema of the same database, for hold_s seconds or
 * until released. */
struct neighbour {
	char url[1100];
	double hold_s;
	atomic_bool release;
	int rc;
	pthread_t th;
};

static void *hold_horizon(void *arg)
{
	struct neighbour *n = arg;
	struct kit_db *db;
	n->rc = kit_db_open(&db, n->url);
	if (n->rc == 0)
		n->rc = kit_db_exec(db, "BEGIN ISOLATION LEVEL REPEATABLE READ;"
		                        " CREATE TEMP TABLE neighbour (x int); INSERT INTO neighbour VALUES (1)",
		                    0, NULL);
	for (double waited = 0; waited < n->hold_s && !atomic_load(&n->release); waited += 0.05)
		util_sleep(0.05);
	if (n->rc == 0)
		n->rc = kit_db_rollback(db);
	kit_db_close(db);
	return NULL;
}

/* Runs the check with a neighbour beside it; the neighbour is static, so
 * it outlives a check that fails half-way (it then lets go by itself). */
static void beside_a_neighbour(void **state, double hold_s, bool until_done, int n_updates)
{
	struct labtest *t = *state;
	static struct neighbour n;
	snprintf(n.url, sizeof n.url, "%s", t->url);
	n.hold_s = hold_s;
	n.rc = -99;
	atomic_store(&n.release, false);
	pthread_create(&n.th, NULL, hold_horizon, &n);
	for (int i = 0; i < 100 && !horizon_held_elsewhere(t); i++)
		util_sleep(0.02);
	keeps_versions(state, n_updates);
	if (until_done)
		atomic_store(&n.release, true);
	pthread_join(n.th, NULL);
	lt_expect_int(n.rc, 0, "the neighbour session's transaction");
}

/* A neighbour for 1.5 s while the check takes its baseline: the check
 * measures again until the horizon is free, so its verdict must not
 * change. */
static void versions__old_snapshot_keeps_versions_beside_a_neighbour(void **state)
{
	beside_a_neighbour(state, 1.5, false, 10000);
}

/* A neighbour for the whole check, longer than the check's retries wait
 * (it lets go when the check is done, or after two minutes, which a check
 * that failed half-way leaves it): the verdict on the solution must still
 * be a pass. Nothing is pruned while it holds, so every update walks the
 * whole chain of the row's versions: 10,000 and 10,000 more cost a
 * quadratic 25-45 s under load. 2,000 and 2,000 (a tenth of the work, or
 * less) take the same path through the check (the baseline measured on
 * the never-updated counter 2, the same moment as the chain it is
 * compared with) with what it expects scaled to them. */
static void versions__old_snapshot_keeps_versions_beside_a_long_neighbour(void **state)
{
	beside_a_neighbour(state, 120, true, 2000);
}

/* The buffers figure is EXPLAIN's own number, read in base 10: with an
 * old snapshot holding 21,500 versions of the row (so nothing is pruned
 * between two reads), inside_versions() and the test's own EXPLAIN of
 * the same query give the same count, ten or more. The table is
 * rewritten first (VACUUM FULL), so inside_versions()'s read finds some
 * pages on disk (read=) and the test's, after it, all in memory (hit=):
 * the two agree only when both numbers are added. The rewritten index
 * holds the 21,500 entries of row 1 on more than ten leaf pages, all on
 * disk, so read= has two digits too (17 on PostgreSQL 15): a count read
 * in base 9 or 11, or cut to its first digit, comes out wrong whichever
 * of hit= and read= it is. The three counters
 * are pg_stat_user_tables' own, each from its own column: a row
 * inserted and deleted first makes the dead versions one more than the
 * updates, and so more than the HOT ones, so no two columns agree. */
static int explained_buffers(void *arg, int ncols, const char *const *values)
{
	int64_t *b = arg;
	const char *at = ncols > 0 && values[0] ? strstr(values[0], "Buffers:") : NULL;
	if (*b >= 0 || at == NULL)
		return 0;
	long long hit = 0, read = 0;
	const char *h = strstr(at, "hit="), *r = strstr(at, "read=");
	if (h)
		sscanf(h + 4, "%lld", &hit);
	if (r)
		sscanf(r + 5, "%lld", &read);
	*b = hit + read;
	return 0;
}

static void versions__buffers_as_explain_counts_them(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct inside_versions v;
	make_counter(t);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (5); DELETE FROM counters WHERE id = 5");
	/* The held half starts from an empty table. Versions the first half
	 * left unpruned (another session held the horizon, then let go)
	 * would be pruned by the updates under the snapshot, and the room
	 * they free would take the new versions in: no page more, although
	 * every one of them is kept. TRUNCATE leaves no such room. */
	labtest_exec(t, "TRUNCATE counters; INSERT INTO counters (id) VALUES (1);"
	                " SELECT pg_stat_force_next_flush()");
	struct inside_versions base;
	versions(db, &base, "after TRUNCATE, before the old snapshot");

	struct kit_db *old = reading(t, "BEGIN ISOLATION LEVEL REPEATABLE READ", "SELECT 1",
	                              "the old snapshot");
	/* 20,000 versions in one transaction, each UPDATE finding the last
	 * by its ctid (a fraction of a second: by the key, each would walk
	 * the chain so far), then 1,500 committed one by one. */
	labtest_exec(t, "DO $$ DECLARE c tid; BEGIN"
	             " SELECT ctid INTO c FROM counters WHERE id = 1;"
	             " FOR i IN 1..20000 LOOP"
	             " UPDATE counters SET n = n + 1 WHERE ctid = c RETURNING ctid INTO c;"
	             " END LOOP; END $$");
	bump(db, 1500);
	/* Rewritten with its versions (the snapshot keeps them), its index
	 * built straight to disk: the first read of a key reads pages the
	 * shared buffers do not hold. Row 99, which is not there, first:
	 * only index pages, all from disk, "Buffers: shared read=2" with no
	 * hit= at all; then row 1, "Buffers: shared hit=119 read=17". (The
	 * old snapshot read no table, so it holds no lock VACUUM FULL waits
	 * for.) */
	labtest_exec(t, "VACUUM FULL counters");
	/* Another schema's counters table, as another student's on a class
	 * server: pg_stat_user_tables then has two rows named counters, and
	 * only 'counters'::regclass (the search path) says which is this
	 * one. Made after the rewrite, so that a lookup by name alone meets
	 * it last. */
	char decoy[80], sql_decoy[600];
	snprintf(decoy, sizeof decoy, "\"%.56s_d\"", t->place);
	snprintf(sql_decoy, sizeof sql_decoy, "CREATE SCHEMA %s; CREATE TABLE %s.counters (id BIGINT"
	         " PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0); INSERT INTO %s.counters VALUES (1, 0)",
	         decoy, decoy, decoy);
	labtest_exec(t, sql_decoy);
	struct inside_versions gone;
	int got_gone = inside_versions(db, 99, &gone);
	int64_t own_gone = -1;
	int rc_gone = kit_db_query(db, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	                           " SELECT n FROM counters WHERE id = 99", 0, NULL,
	                           explained_buffers, &own_gone);
	/* asserted only once the snapshot is let go */
	int got = inside_versions(db, 1, &v);
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(db));
	int64_t own = -1;
	int rc = kit_db_query(db, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	                      " SELECT n FROM counters WHERE id = 1", 0, NULL, explained_buffers, &own);
	/* Read again, every page now in memory: a Buffers: line with hit=
	 * and no read= (nothing pruned meanwhile: the snapshot holds). */
	struct inside_versions again;
	int got_again = inside_versions(db, 1, &again);
	int64_t pages = labtest_int(t, "SELECT pg_relation_size('counters')"
	                            " / current_setting('block_size')::bigint");
	int64_t stat[3];
	static const char *const column[3] = { "n_tup_upd", "n_tup_hot_upd", "n_dead_tup" };
	for (int i = 0; i < 3; i++) {
		char sql[120];
		snprintf(sql, sizeof sql, "SELECT %s FROM pg_stat_user_tables"
		         " WHERE relid = 'counters'::regclass", column[i]);
		stat[i] = labtest_int(t, sql);
	}
	/* the heap once VACUUM has given it its free space map (and what it
	 * measures then), beside the index and the rest */
	labtest_exec(t, "VACUUM counters");
	struct inside_versions vacuumed;
	int got_vacuumed = inside_versions(db, 1, &vacuumed);
	int64_t pages_vacuumed = labtest_int(t, "SELECT pg_relation_size('counters')"
	                                     " / current_setting('block_size')::bigint");
	snprintf(sql_decoy, sizeof sql_decoy, "DROP SCHEMA %s CASCADE", decoy);
	labtest_exec(t, sql_decoy);
	kit_db_rollback(old);
	kit_db_close(old);
	lt_expect(got == 0, "versions", "expected inside_versions() to return 0 with 21,500 "
	          "versions kept, got %d: %s", got, why);
	lt_expect(rc == 0 && own >= 10, NULL, "the test's own EXPLAIN: %d, %" PRId64 " buffers "
	          "(%s)", rc, own, labtest_why(db));
	lt_expect(v.updates == stat[0] && v.hot_updates == stat[1] && v.dead == stat[2],
	          "versions", "expected updates %" PRId64 ", HOT %" PRId64
	          ", dead %" PRId64 " (pg_stat_user_tables' n_tup_upd, n_tup_hot_upd, n_dead_tup), "
	          "got %" PRId64 ", %" PRId64 ", %" PRId64 ": is each read from its own column, of this schema's counters (another schema's "
	          "is there too: look it up by 'counters'::regclass, not by its name)?",
	          stat[0], stat[1], stat[2], v.updates, v.hot_updates, v.dead);
	lt_expect(rc_gone == 0 && own_gone >= 1, NULL, "the test's own EXPLAIN of row 99: %d, %"
	          PRId64 " buffers (%s)", rc_gone, own_gone, labtest_why(db));
	/* A missing row may be an error (the contract does not say): judged
	 * only when it was read. */
	lt_expect(got_gone != 0 || gone.buffers == own_gone, "buffers", "expected the buffers "
	          "EXPLAIN counts for reading row 99, which is not there, right after the table "
	          "was rewritten (%" PRId64 ": its index pages all read from disk, a Buffers: "
	          "line with read= and no hit=), got %" PRId64 ": are the pages read from disk "
	          "(read=) added, and a count the line does not show taken as 0?", own_gone,
	          gone.buffers);
	lt_expect(v.buffers == own, "buffers", "expected the buffers EXPLAIN counts for reading "
	          "the row (%" PRId64 ", shared hit plus read on its first Buffers: line), got %"
	          PRId64 ": is the number read in base 10, from the right line, and are the pages read "
	          "from disk (read=, as on the first read after a rewrite) added to those found in "
	          "memory (hit=)?", own, v.buffers);
	lt_expect(got_again == 0 && again.buffers == own, "buffers", "expected the buffers of a "
	          "second read, every page in memory (%" PRId64 ": a Buffers: line with hit= and no "
	          "read=), got %" PRId64 " (%d): is a count the line does not show taken as 0?",
	          own, again.buffers, got_again);
	lt_expect(got_vacuumed == 0 && v.heap_pages == pages && vacuumed.heap_pages ==
	          pages_vacuumed, "versions", "expected heap_pages to be the table's own size in "
	          "pages, pg_relation_size('counters') / block_size: %" PRId64 " after the rewrite "
	          "and %" PRId64 " once VACUUM made its free space map, got %" PRId64 " and %"
	          PRId64 ": is it the heap alone (not pg_table_size(), pg_total_relation_size() or "
	          "pg_class.relpages, which only VACUUM and ANALYZE update)?", pages,
	          pages_vacuumed, v.heap_pages, vacuumed.heap_pages);
}

/* A chain of 2,000 versions of counter 1 that an old snapshot kept, the
 * snapshot just ended: the first read of the row prunes it. */
static void chain_let_go(struct labtest *t, struct kit_db *db)
{
	labtest_exec(t, "TRUNCATE counters; INSERT INTO counters (id) VALUES (1)");
	struct kit_db *old = reading(t, "BEGIN ISOLATION LEVEL REPEATABLE READ",
	                              "SELECT n FROM counters WHERE id = 1", "the old snapshot");
	bump(db, 2000);
	/* The first read prunes the chain once no transaction older than its
	 * last update runs anywhere (a running XID in any database holds back
	 * every new snapshot's xmin), nor a snapshot that old here. Lanes of
	 * make test beside this one (a row held for seconds) and a class's
	 * shared server do; newer ones do not matter, so only those older
	 * than the next XID, read now (from the snapshot: a read of the row
	 * would prune the chain itself), are waited for, up to 20 s. */
	int64_t next = labtest_int(t, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
	                              " % 4294967296");
	kit_db_rollback(old);
	kit_db_close(old);
	char sql[400];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
	         " AND ((backend_xid IS NOT NULL AND age(backend_xid) > age('%" PRId64 "'::xid)) OR"
	         " (datname = current_database() AND backend_xmin IS NOT NULL AND"
	         " age(backend_xmin) > age('%" PRId64 "'::xid)))", next, next);
	for (int i = 0; i < 200 && labtest_int(t, sql) > 0; i++)
		util_sleep(0.1);
}

static int64_t own_read(struct kit_db *db)
{
	int64_t own = -1;
	int rc = kit_db_query(db, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	                      " SELECT n FROM counters WHERE id = 1", 0, NULL, explained_buffers, &own);
	lt_expect(rc == 0 && own >= 1, NULL, "the test's own EXPLAIN: %d, %" PRId64 " buffers (%s)",
	          rc, own, labtest_why(db));
	return own;
}

/* The first schema of the search path is not the one that holds
 * counters: PostgreSQL's default path is "$user", public, and once a
 * schema named after the session's user exists (made for something
 * else, with no counters in it) current_schema() is that schema, while
 * 'counters'::regclass and pg_relation_size('counters') still find the
 * table in the next one. Staged with an empty schema of the check's own
 * put first on the path: inside_versions() reads the statistics of the
 * counters the path finds, 0 and the counts pg_stat_user_tables has for
 * 'counters'::regclass. */
static void versions__first_schema_on_the_path_holds_no_counters(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	bump(db, 50);
	char empty[80], sql[700];
	snprintf(empty, sizeof empty, "\"%.56s_u\"", t->place);
	snprintf(sql, sizeof sql, "CREATE SCHEMA %s; SET search_path = %s, %s", empty, empty,
	         t->place);
	labtest_exec(t, sql);
	char current[40] = "";
	kit_db_query(db, "SELECT current_schema()", 0, NULL, show_level, current);
	int64_t updates = labtest_int(t, "SELECT n_tup_upd FROM pg_stat_user_tables"
	                              " WHERE relid = 'counters'::regclass");
	struct inside_versions v;
	memset(&v, 0x5a, sizeof v);
	int rc = inside_versions(db, 1, &v);
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(db));
	labtest_exec(t, "RESET search_path");
	snprintf(sql, sizeof sql, "DROP SCHEMA %s", empty);
	labtest_exec(t, sql);
	lt_expect(rc == 0 && v.updates == updates && v.updates >= 50, "versions", "with a schema "
	          "first on the search path that holds no counters (current_schema() is %s, as it "
	          "is for \"$user\" when a schema named after the user exists), and counters in the "
	          "next one ('counters'::regclass finds it, %" PRId64 " updates): inside_versions() "
	          "returned %d (%s) with updates %" PRId64 ". Are the statistics looked up by "
	          "relname and schemaname = current_schema()? Look the table up as the path does, "
	          "by relid = 'counters'::regclass", current, updates, rc, rc ? why : "no error",
	          v.updates);
}

/* Right after an old snapshot lets go of 2,000 versions, the first read
 * of the row prunes them: its EXPLAIN touches many buffers and the next
 * one few (measured first on the same chain, made twice), and the pruning
 * takes versions off n_dead_tup once the session flushes its statistics
 * (at a statement's end, a second after its last flush). inside_versions
 * reports the state it was asked about: the statistics as they stood
 * before its own read, and the buffers of that first read. One that reads
 * the row twice ("the first read pays for a cold cache") reports the
 * second; one that reads the statistics after its EXPLAIN reports what
 * its own read left. Autovacuum is off for the table; when another
 * session holds the cleanup horizon for longer than chain_let_go waits
 * (nothing is pruned), the check tries again, up to three times, then
 * says so and judges nothing. */
static void versions__first_read_after_a_snapshot_ends(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	labtest_exec(t, "ALTER TABLE counters SET (autovacuum_enabled = false)");
	const char *dead_sql = "SELECT n_dead_tup FROM pg_stat_user_tables"
	                       " WHERE relid = 'counters'::regclass";
	for (int round = 1; round <= 3; round++) {
		chain_let_go(t, db);
		int64_t first = own_read(db), second = own_read(db);
		chain_let_go(t, db);
		labtest_exec(t, "SELECT pg_stat_force_next_flush()");
		int64_t dead = labtest_int(t, dead_sql);
		util_sleep(1.1);        /* the session's next statement flushes its statistics */
		struct inside_versions v;
		int got = inside_versions(db, 1, &v);
		char why[200];
		snprintf(why, sizeof why, "%s", labtest_why(db));
		own_read(db);
		labtest_exec(t, "SELECT pg_stat_force_next_flush()");
		int64_t dead_after = labtest_int(t, dead_sql);
		lt_expect(got == 0, "versions", "inside_versions() right after an old snapshot ended "
		          "returned %d: %s", got, why);
		bool pruned = dead_after < dead && second < first;
		if (!pruned && round < 3)
			continue;           /* nothing pruned: the horizon was held elsewhere */
		if (!pruned) {
			lt_say("another session held the cleanup horizon back three times: nothing was "
			       "pruned, and the first read was not judged");
			return;
		}
		lt_expect(v.dead == dead, "versions", "n_dead_tup was %" PRId64 " when "
		          "inside_versions() was called, and it reported %" PRId64 " (the row's first "
		          "read then pruned it to %" PRId64 "): does it read the statistics after its "
		          "own EXPLAIN? That read prunes the chain, and once the session flushes its "
		          "statistics the count is the one its read left, not the one it was asked "
		          "about: read the statistics first", dead, v.dead, dead_after);
		lt_expect(v.buffers * 2 >= first + second + 1, "buffers", "the first read of the row "
		          "after an old snapshot let go of 2,000 versions touches %" PRId64 " buffers, "
		          "the next one %" PRId64 " (measured on the same chain, made before), yet "
		          "inside_versions() reported %" PRId64 ": does it read the row twice and report "
		          "the second read? The first is the one that pays for the versions, and the one "
		          "inside.h asks for", first, second, v.buffers);
		return;
	}
}

/* The first read of a row after its updates have committed and a
 * checkpoint has written its page sets the versions' hint bits: the page
 * becomes dirty, and EXPLAIN's line says "Buffers: shared hit=2
 * dirtied=1". The buffers the read touched are still hit plus read:
 * dirtied (and written) count some of those same buffers again. The
 * test's own EXPLAIN right after reads the same pages, with nothing left
 * to dirty. The row's id is past 2^32 (counters.id is BIGINT): an id
 * printed after a cast to int reads row 99, which is not there. */
static void versions__buffers_of_a_read_that_sets_hints(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (4294967395)");
	labtest_exec(t, "DO $$ BEGIN FOR i IN 1..40 LOOP"
	             " UPDATE counters SET n = n + 1 WHERE id = 4294967395; COMMIT; END LOOP; END $$");
	labtest_exec(t, "CHECKPOINT");
	struct inside_versions v;
	int got = inside_versions(db, 4294967395LL, &v);
	char why[200];
	snprintf(why, sizeof why, "%s", labtest_why(db));
	int64_t own = -1;
	int rc = kit_db_query(db, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
	                      " SELECT n FROM counters WHERE id = 4294967395", 0, NULL,
	                      explained_buffers, &own);
	lt_expect(got == 0, "versions", "inside_versions(): %d, %s", got, why);
	lt_expect(rc == 0 && own >= 1, NULL, "the test's own EXPLAIN: %d, %" PRId64 " buffers (%s)",
	          rc, own, labtest_why(db));
	lt_expect(v.buffers == own, "buffers", "expected the buffers of reading row 2^32 + 99 (%"
	          PRId64 ", hit plus read), got %" PRId64 ". Is the id printed whole (PRId64, "
	          "not after a cast to int, which reads row 99)? And this read was the first since "
	          "a checkpoint wrote the page: it set hint bits, and its line said dirtied= too; "
	          "are dirtied= or written= added? They count buffers already counted in hit= or "
	          "read=", own, v.buffers);
}

/* Counter ids are any BIGINT, negative ones too: with 2,000 rows in
 * counters, inside_versions() of the row INT64_MIN and of row -1 counts
 * the buffers of reading that row by its key, as the test's own EXPLAIN
 * right after does (3 or so). An id printed as unsigned is a number past
 * INT64_MAX: PostgreSQL then compares every row as numeric, with no
 * index, and the read walks the whole table (11 buffers and more). */
static const int64_t own_rows[2] = { INT64_MIN, -2 };

static int versions_own_row(void *arg, int who, struct kit_db *db)
{
	struct inside_versions *v = arg;
	return inside_versions(db, own_rows[who], &v[who]);
}

/* Four threads, each on a connection of its own, let go together, make
 * the process's first inside_versions calls, of four rows of one table.
 * A value looked up once and kept where every thread shares it (the
 * server's block_size behind a plain flag) is looked up and written by
 * all four at once: the race pass of `hotrow lab check` runs each such
 * check in a process of its own, where these are the first calls. Each
 * must answer for the table as it is: 2,000 rows of 8 bytes and more
 * fill more than one page. */
struct first_versions {
	struct kit_db *db;
	int64_t id;
	int rc;
	struct inside_versions v;
};

static void *first_versions(void *arg)
{
	struct first_versions *f = arg;
	f->rc = inside_versions(f->db, f->id, &f->v);
	return NULL;
}

static void versions__first_calls_at_once(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	labtest_exec(t, "INSERT INTO counters (id) SELECT g FROM generate_series(2, 2000) g");
	int64_t pages = labtest_int(t, "SELECT pg_relation_size('counters') / "
	                               "current_setting('block_size')::int");
	struct first_versions f[4];
	for (int i = 0; i < 4; i++)
		f[i] = (struct first_versions){ .db = labtest_connect(t), .id = 1 + 500 * i };
	lt_at_once(4, first_versions, f, sizeof f[0]);
	for (int i = 0; i < 4; i++) {
		lt_expect(f[i].rc == 0 && f[i].v.heap_pages == pages && f[i].v.buffers >= 1, "versions",
		          "four threads made the process's first inside_versions calls at once, each "
		          "on its own connection: row %" PRId64 "'s returned %d (%s) with heap_pages "
		          "%" PRId64 " and buffers %" PRId64 " (expected 0, %" PRId64 " pages and at "
		          "least 1). Is something looked up on the first call and kept where every "
		          "thread shares it?", f[i].id, f[i].rc, f[i].rc ? labtest_why(f[i].db) : "",
		          f[i].v.heap_pages, f[i].v.buffers, pages);
		kit_db_close(f[i].db);
	}
}

static void versions__negative_row_ids(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	labtest_exec(t, "INSERT INTO counters (id) SELECT g FROM generate_series(2, 2000) g;"
	             "INSERT INTO counters (id) VALUES (-9223372036854775808), (-1)");
	/* The visibility map made, then the two rows' pages marked as not
	 * all-visible again by an update: a read that asks the index for the
	 * key alone (SELECT 1, SELECT id, count(*)) is an index-only scan that
	 * reads the map's page and then the heap's, one buffer more than the
	 * row's read by its key (3 against 4 here). */
	labtest_exec(t, "VACUUM counters");
	labtest_exec(t, "UPDATE counters SET n = n WHERE id < 0");
	static const int64_t ids[] = { INT64_MIN, -1 };
	for (int i = 0; i < 2; i++) {
		struct inside_versions v;
		char why[200], sql[160];
		int64_t own = -1;
		snprintf(sql, sizeof sql, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
		         " SELECT n FROM counters WHERE id = %" PRId64, ids[i]);
		/* a first read of a row may touch a few more buffers than the
		 * next (seen: 6, then 3): the test reads it first */
		kit_db_query(db, sql, 0, NULL, explained_buffers, &own);
		own = -1;
		int got = inside_versions(db, ids[i], &v);
		snprintf(why, sizeof why, "%s", labtest_why(db));
		int rc = kit_db_query(db, sql, 0, NULL, explained_buffers, &own);
		lt_expect(got == 0, "versions", "inside_versions() of row %" PRId64 ": %d, %s",
		          ids[i], got, why);
		lt_expect(rc == 0 && own >= 1, NULL, "the test's own EXPLAIN: %d, %" PRId64
		          " buffers (%s)", rc, own, labtest_why(db));
		lt_expect(v.buffers == own, "buffers", "expected the buffers of reading row %" PRId64
		          " by its key (%" PRId64 ", as the test's own EXPLAIN counts them), got %"
		          PRId64 ": is the id printed as unsigned (%%llu, PRIu64)? A number past "
		          "INT64_MAX is compared with every row as numeric, without the index. Is "
		          "the read EXPLAIN measures the row's (SELECT n FROM counters WHERE id = ...)? "
		          "One that reads only the key (SELECT 1, SELECT id) is an index-only scan, "
		          "which counts the visibility map's page too: not the row's read",
		          ids[i], own, v.buffers);
	}

	/* "A connection is used by one thread at a time": two threads read
	 * row INT64_MIN and the missing row -2 on their own connections, the
	 * first held before its EXPLAIN while the second runs whole. Each
	 * gets its own row's buffers (a statement text or a count kept in a
	 * static is the other call's), and neither leaves a block allocated
	 * (a buffer kept for the thread's next call is one). */
	struct inside_versions both[2];
	memset(both, 0, sizeof both);
	struct lt_gate *g = lt_gate_open(t, 2);
	char warm[160];
	/* a new backend's first read of a table touches a few buffers more
	 * (its index's metapage, before the relcache keeps it): every
	 * connection reads both rows once first */
	for (int i = 0; i < 2; i++) {
		snprintf(warm, sizeof warm, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
		         " SELECT n FROM counters WHERE id = %" PRId64, own_rows[i]);
		for (int who = 0; who < 3; who++) {
			int64_t ignored = -1;
			kit_db_query(who < 2 ? lt_gate_db(g, who) : db, warm, 0, NULL, explained_buffers,
			             &ignored);
		}
	}
	size_t blocks = lt_alloc_live();
	lt_gate_run_first(g, "EXPLAIN", (int[]){ 1, 1 }, 1, versions_own_row, both);
	int rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
	lt_alloc_expect_none_left(blocks, "inside_versions() of rows INT64_MIN and -2 in two "
	                          "threads (is a buffer allocated once and kept for later calls?)");
	lt_gate_close(g);
	for (int i = 0; i < 2; i++) {
		char sql[160];
		int64_t own = -1;
		snprintf(sql, sizeof sql, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)"
		         " SELECT n FROM counters WHERE id = %" PRId64, own_rows[i]);
		kit_db_query(db, sql, 0, NULL, explained_buffers, &own);
		lt_expect((i == 0 ? rc0 : rc1) == 0 && both[i].buffers == own, "buffers",
		          "inside_versions() of row %" PRId64 " (%s; the other thread read row %"
		          PRId64 ", each on its own connection): %d and %" PRId64 " buffers, "
		          "expected 0 and %" PRId64 " (the test's own EXPLAIN of that row; row "
		          "INT64_MIN is there, row -2 is not). Is the statement's text or the count "
		          "kept in a static, which the other call overwrote?", own_rows[i],
		          i == 0 ? "held before its EXPLAIN while the other ran whole" :
		                   "run whole while the other was held",
		          own_rows[1 - i], i == 0 ? rc0 : rc1, both[i].buffers, own);
	}
}

static void versions__indexed_counter_not_hot(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct inside_versions v;
	make_counter(t);
	labtest_exec(t, "CREATE INDEX counters_n ON counters (n)");

	bump(db, 2000);
	versions(db, &v, "after 2,000 updates of an indexed counter");
	lt_expect(v.updates >= 2000 && v.hot_updates * 10 < v.updates, "hot",
	          "expected 2,000 or more updates, almost none HOT (the counter is indexed), "
	          "got %" PRId64 " updates, %" PRId64 " HOT", v.updates, v.hot_updates);
}

/* SQLite's busy waits of a connection (the hook's LOCK_WAIT). */
static void count_lock_waits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	(void)sql, (void)t_ns;
	if (ev == KIT_DB_LOCK_WAIT)
		++*(int *)arg;
}

static void versions__reader_pins_wal(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct inside_versions free_, held, after;
	make_counter(t);

	char session[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, session, sizeof session);
	bump(db, 500);
	versions(db, &free_, "after 500 updates, no reader");
	lt_session_unchanged(t, db, session, "inside_versions()", "wal");
	struct kit_db *reader = labtest_connect(t);
	int64_t n;
	if (kit_db_exec(reader, "BEGIN", 0, NULL) != 0 ||
	    kit_db_query_int(reader, "SELECT n FROM counters WHERE id = 1", 0, NULL, &n) != 0)
		fail_msg("the reader: %s", kit_db_errmsg(reader));
	bump(db, 2000);
	int waits = 0;
	kit_db_set_hook(db, count_lock_waits, &waits);
	versions(db, &held, "with a reader open");
	kit_db_set_hook(db, NULL, NULL);
	kit_db_rollback(reader);
	kit_db_close(reader);
	versions(db, &after, "after the reader ended");

	lt_expect(free_.wal_pinned <= 10, "wal",
	          "expected a checkpoint with no reader to copy back (nearly) every frame, got %"
	          PRId64 " of %" PRId64 " left", free_.wal_pinned, free_.wal_frames);
	lt_expect(held.wal_pinned >= 1000, "wal",
	          "expected 1,000 or more frames the checkpoint could not copy back past the open "
	          "reader (2,000 commits), got %" PRId64 " of %" PRId64, held.wal_pinned, held.wal_frames);
	lt_expect(after.wal_pinned <= 10, "wal",
	          "expected the checkpoint to copy back every frame once the reader ended, got %"
	          PRId64 " left", after.wal_pinned);
	lt_expect(waits == 0, "wal",
	          "inside_versions() waited for another connection's lock (%d busy waits) while a "
	          "reader was open: a checkpoint other than PASSIVE (FULL, RESTART, TRUNCATE) waits "
	          "for the readers, and blocks the writers while it does; PASSIVE never waits", waits);

	/* A reader that began where the WAL ends pins nothing: PASSIVE
	 * copies every frame back, and still waits for nobody. A RESTART or
	 * TRUNCATE after it ("the WAL is all copied, shrink it") waits for
	 * that reader to end, on the busy handler, blocking the writers. */
	bump(db, 50);
	reader = labtest_connect(t);
	if (kit_db_exec(reader, "BEGIN", 0, NULL) != 0 ||
	    kit_db_query_int(reader, "SELECT n FROM counters WHERE id = 1", 0, NULL, &n) != 0)
		fail_msg("the reader: %s", kit_db_errmsg(reader));
	struct inside_versions late;
	waits = 0;
	kit_db_set_hook(db, count_lock_waits, &waits);
	versions(db, &late, "with a reader open since the last update");
	kit_db_set_hook(db, NULL, NULL);
	kit_db_rollback(reader);
	kit_db_close(reader);
	lt_expect(late.wal_pinned <= 10 && waits == 0, "wal",
	          "with a reader open since the last of 50 updates (it pins no frame), "
	          "inside_versions() reported %" PRId64 " of %" PRId64 " frames pinned and waited "
	          "for another connection's lock %d times (busy waits), expected (nearly) none and "
	          "no wait: a RESTART or TRUNCATE checkpoint, even one run only once PASSIVE copied "
	          "everything back, waits for every reader of the WAL to end",
	          late.wal_pinned, late.wal_frames, waits);
	/* the session's settings include wal_autocheckpoint (session.c): with
	 * automatic checkpoints off the connection's WAL grows until someone
	 * checkpoints by hand; the PASSIVE checkpoint needs nothing set */
	lt_session_unchanged(t, db, session, "inside_versions()", "wal");
}

/* Another connection's checkpoint, held in the middle: a FULL checkpoint
 * takes SQLite's one checkpoint lock first, then waits (on its busy
 * handler) for a reader still on an old snapshot. For as long as it
 * waits, any other checkpoint, PASSIVE too, cannot take that lock:
 * SQLite answers at once, without calling a busy handler ("If any other
 * process is running a checkpoint operation at the same time, the lock
 * cannot be obtained and SQLITE_BUSY is returned", sqlite.org/c3ref/
 * wal_checkpoint_v2.html), and PRAGMA wal_checkpoint's row is busy = 1
 * with both counts -1. The holder runs on a thread of the test, on a
 * connection of its own, and lets go when the reader ends (or after its
 * 20 s lock timeout). */
struct ckpt_holder {
	struct kit_db *db;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool waiting;           /* inside its busy handler, the lock taken */
	bool done;              /* its checkpoint returned */
	int rc;
	int64_t res[3];         /* busy, frames, checkpointed */
};

static void holder_waits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct ckpt_holder *h = arg;
	(void)sql, (void)t_ns;
	if (ev != KIT_DB_LOCK_WAIT)
		return;
	pthread_mutex_lock(&h->mu);
	h->waiting = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static int three_values(void *arg, int ncols, const char *const *values)
{
	int64_t *v = arg;
	for (int i = 0; i < ncols && i < 3; i++)
		v[i] = values[i] ? strtoll(values[i], NULL, 10) : 0;
	return 0;
}

static void *hold_checkpoint(void *arg)
{
	struct ckpt_holder *h = arg;
	int rc = kit_db_query(h->db, "PRAGMA wal_checkpoint(FULL)", 0, NULL, three_values, h->res);
	pthread_mutex_lock(&h->mu);
	h->rc = rc;
	h->done = true;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* inside_versions() while another connection is checkpointing: its
 * PASSIVE checkpoint cannot run, and it says so (KIT_DB_BUSY, *out all
 * zero) at once. Counting every frame as pinned because the checkpoint
 * "copied nothing", or returning SQLite's -1 counts as numbers, reports
 * what was not measured; running the checkpoint again until it is not
 * busy waits for the other connection. */
/* SQLite's busy waits of a connection, and the checkpoints it ran. */
struct ckpt_calls {
	int waits;              /* LOCK_WAIT: its busy handler ran */
	int checkpoints;        /* statements that name wal_checkpoint */
};

static void count_checkpoints(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct ckpt_calls *c = arg;
	(void)t_ns;
	if (ev == KIT_DB_LOCK_WAIT)
		c->waits++;
	else if (ev == KIT_DB_STMT_START && lt_sql_names(sql, "wal_checkpoint"))
		c->checkpoints++;
}

/* After inside_versions on SQLite the connection still waits for a lock
 * the way the kit set it up ("changes no setting of the connection"):
 * another connection holds the file's write lock for 150 ms, and an
 * UPDATE on this one waits it out (its wait seen through the kit's hook)
 * instead of failing at once. A PRAGMA busy_timeout = 0 around the
 * checkpoint, put back to the 0 that PRAGMA read before, has replaced
 * the kit's busy handler, which no PRAGMA shows. */
struct lock_held {
	struct kit_db *db;
	int ms;
};

static void *release_after(void *arg)
{
	struct lock_held *l = arg;
	util_sleep_ns((int64_t)l->ms * 1000000);
	kit_db_commit(l->db);
	return NULL;
}

static void versions__sqlite_connection_still_waits(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	bump(db, 10);
	struct inside_versions v;
	lt_expect_int_hint(inside_versions(db, 1, &v), 0, "inside_versions()", "wal");
	struct lock_held l = { labtest_connect(t), 150 };
	lt_expect(kit_db_begin(l.db) == 0 &&
	          kit_db_exec(l.db, "UPDATE counters SET n = n WHERE id = 1", 0, NULL) == 0, NULL,
	          "another connection taking the write lock: %s", labtest_why(l.db));
	pthread_t th;
	if (pthread_create(&th, NULL, release_after, &l) != 0)
		fail_msg("pthread_create failed");
	int waits = 0;
	int64_t t0 = util_now_ns();
	kit_db_set_hook(db, count_lock_waits, &waits);
	int rc = kit_db_exec(db, "UPDATE counters SET n = n + 1 WHERE id = 1", 0, NULL);
	kit_db_set_hook(db, NULL, NULL);
	int64_t ms = (util_now_ns() - t0) / 1000000;
	pthread_join(th, NULL);
	kit_db_close(l.db);
	lt_expect(rc == 0 && waits > 0, "wal", "after inside_versions(), an UPDATE on the same "
	          "connection, while another held the file's write lock for 150 ms, returned %d "
	          "after %lld ms having waited %d time(s) (expected 0, after waiting the lock out): "
	          "the connection no longer waits for a lock. Does the call send PRAGMA "
	          "busy_timeout (even to put back the 0 it read)? That replaces the kit's own busy "
	          "wait, which no PRAGMA shows: the call changes no setting of the connection",
	          rc, (long long)ms, waits);
}

static void versions__busy_while_another_checkpoints(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	bump(db, 100);
	struct kit_db *reader = reading(t, "BEGIN", "SELECT n FROM counters WHERE id = 1",
	                                 "the reader");
	bump(db, 200);

	struct ckpt_holder h = { .db = labtest_connect(t), .mu = PTHREAD_MUTEX_INITIALIZER,
	                         .cv = PTHREAD_COND_INITIALIZER };
	kit_db_set_lock_timeout(h.db, 20000);
	kit_db_set_hook(h.db, holder_waits, &h);
	pthread_t th;
	if (pthread_create(&th, NULL, hold_checkpoint, &h) != 0)
		fail_msg("pthread_create failed");
	struct timespec until = lt_deadline_ms(60000);
	pthread_mutex_lock(&h.mu);
	while (!h.waiting && !h.done && pthread_cond_timedwait(&h.cv, &h.mu, &until) == 0)
		;
	bool holding = h.waiting && !h.done;
	pthread_mutex_unlock(&h.mu);

	struct inside_versions v;
	int rc = 0, waits = 0;
	struct ckpt_calls calls = { 0, 0 };
	struct lt_sleeps slept;
	memset(&slept, 0, sizeof slept);
	bool outlasted = false;
	size_t left = 0;
	if (holding) {
		memset(&v, 0x5a, sizeof v);
		kit_db_set_hook(db, count_checkpoints, &calls);
		/* a sleep asked meanwhile returns at once (and is counted) */
		lt_sleeps_watch(&slept, 0, 0);
		size_t base = lt_alloc_live();
		rc = inside_versions(db, 1, &v);
		left = lt_alloc_live() - base;
		lt_sleeps_unwatch();
		kit_db_set_hook(db, NULL, NULL);
		waits = calls.waits;
		pthread_mutex_lock(&h.mu);
		outlasted = h.done;
		pthread_mutex_unlock(&h.mu);
	}
	kit_db_rollback(reader);
	kit_db_close(reader);
	pthread_join(th, NULL);
	kit_db_set_hook(h.db, NULL, NULL);
	kit_db_close(h.db);
	if (!holding)
		fail_msg("the check's own FULL checkpoint did not stay waiting for the open reader "
		         "(returned %d, busy %" PRId64 "): the check could not be staged", h.rc, h.res[0]);

	static const struct inside_versions zero;
	lt_expect(!holding || (calls.checkpoints <= 1 && slept.calls == 0), "wal",
	          "while another connection was checkpointing, inside_versions() ran %d checkpoints "
	          "and asked to sleep %d times (%.1f ms) before it returned: expected one checkpoint "
	          "and no sleep. The header says to return KIT_DB_BUSY at once: trying the busy "
	          "checkpoint again after a pause waits for the other connection (here it held "
	          "its lock for seconds), and only the caller knows whether to wait",
	          calls.checkpoints, slept.calls, slept.pending_ms);
	lt_expect(!outlasted && waits == 0, "wal",
	          "inside_versions() returned only after another connection's checkpoint had ended "
	          "(20 s later%s): while one runs, a PASSIVE checkpoint answers busy at once; "
	          "running it again until it is not busy (or a FULL, RESTART or TRUNCATE one) waits "
	          "for the other connection", waits ? ", on its busy handler" : "");
	lt_expect(rc == KIT_DB_BUSY && memcmp(&v, &zero, sizeof v) == 0, "wal",
	          "while another connection was checkpointing, inside_versions() returned %d with "
	          "wal_frames %lld and wal_pinned %lld: expected KIT_DB_BUSY (%d) and *out all zero. "
	          "PRAGMA wal_checkpoint(PASSIVE) then answers busy = 1 and -1 for both counts (it "
	          "could not run): nothing was measured, neither frames nor pinned ones",
	          rc, (long long)v.wal_frames, (long long)v.wal_pinned, KIT_DB_BUSY);
	lt_expect(left == 0, "rollback", "inside_versions() left %zu block(s) allocated when it "
	          "returned busy (another connection checkpointing): the early return of \"nothing "
	          "measured\" frees what the call allocated too (inside.h: no block left, on its error "
	          "paths too)", left);
	rc = inside_versions(db, 1, &v);
	lt_expect(rc == 0 && v.wal_pinned <= 10, "wal",
	          "once the other checkpoint and the reader had ended, inside_versions() returned %d "
	          "with %lld frames pinned, expected 0 and (nearly) none: %s",
	          rc, (long long)v.wal_pinned, labtest_why(db));
}

/* ---- §3 Keys ---- */

/* A like sent on a connection of its own while another transaction has
 * deleted its post and not committed yet. */
struct racing_like {
	struct kit_db *db;
	int64_t session;
	atomic_int done;
	int rc;
};

static void *like_into_deleted_post(void *arg)
{
	struct racing_like *l = arg;
	l->rc = kit_db_exec(l->db, "INSERT INTO likes (post_id, user_id) VALUES (2, 5)", 0, NULL);
	atomic_store(&l->done, 1);
	return NULL;
}

/* The key holds against a DELETE that has not committed yet: a like of
 * post 2 sent while another transaction has deleted post 2 waits for
 * that transaction (the key's check locks the post row FOR KEY SHARE,
 * which the DELETE's lock excludes; SQLite: the write lock), and is
 * refused once it commits. A key kept by triggers that look with a plain
 * SELECT (the like's: "is the post there?"; the post's: "has it any
 * likes?") locks nothing: each sees the other not yet committed, both
 * commit, and the like outlives its post. */
static void like_races_delete(struct labtest *t)
{
	labtest_exec(t, "INSERT INTO posts (id) VALUES (2)");
	struct kit_db *deleter = labtest_connect(t);
	int rc = kit_db_begin(deleter);
	if (rc == 0)
		rc = kit_db_exec(deleter, "DELETE FROM posts WHERE id = 2", 0, NULL);
	lt_expect(rc == 0, NULL, "the test's DELETE of post 2, which has no like: %s",
	          kit_db_errmsg(deleter));
	struct racing_like l = { .db = labtest_connect(t) };
	l.session = lt_session_id(l.db);
	atomic_init(&l.done, 0);
	pthread_t th;
	lt_expect(pthread_create(&th, NULL, like_into_deleted_post, &l) == 0, NULL, "a thread");
	/* until the like waits for the deleter (the servers show it; SQLite
	 * waits on its busy handler: give it 300 ms), or has returned */
	bool waited = false;
	for (int i = 0; i < 500 && !atomic_load(&l.done) && !waited; i++) {
		util_sleep_ns(10 * 1000000LL);
		waited = t->engine == KIT_DB_SQLITE ? i >= 30
		         : lt_lock_waiting(labtest_db(t), l.session) == 1;
	}
	bool early = atomic_load(&l.done);
	rc = kit_db_commit(deleter);
	pthread_join(th, NULL);
	kit_db_close(deleter);
	kit_db_close(l.db);
	lt_expect(rc == 0, NULL, "the test's COMMIT of the DELETE of post 2 returned %d", rc);
	int64_t orphans = labtest_int(t, "SELECT count(*) FROM likes l WHERE NOT EXISTS"
	                                 " (SELECT 1 FROM posts p WHERE p.id = l.post_id)");
	lt_expect(orphans == 0 && l.rc < 0, "guarantee",
	          "a like of post 2 sent while another transaction had deleted post 2 and not "
	          "committed yet returned %d %s; then the DELETE committed, and %" PRId64 " like(s) "
	          "of a post that is gone are left: the key must hold against a DELETE still in "
	          "flight. A foreign key's check locks the post row (FOR KEY SHARE) and waits for "
	          "the DELETE; a trigger that looks with a plain SELECT locks nothing, so the like "
	          "and the DELETE each see the other not yet committed, and both commit", l.rc,
	          early ? "at once, without waiting for it" : "after waiting for it", orphans);
}

static bool table_there(struct kit_db *db, const char *table)
{
	char sql[64];
	int64_t n;
	snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
	return kit_db_query_int(db, sql, 0, NULL, &n) == 0;
}

/* Whether the k-th statement a connection starts is a COMMIT (or END):
 * the one step whose lost answer inside.h excepts from "a negative code
 * means the call changed nothing". */
struct kth_commit {
	int k, seen;
	bool commit;
	char what[48];
};

static void note_kth_commit(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct kth_commit *c = arg;
	(void)t_ns;
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || ++c->seen != c->k)
		return;
	c->commit = lt_sql_is(sql, "COMMIT") || lt_sql_is(sql, "END");
	snprintf(c->what, sizeof c->what, "%s", sql ? sql : "");
}

static void keys__like_needs_post(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	/* inside_keys_setup() with its k-th statement refused, or run with
	 * its answer lost (the CREATE of posts went in, the caller heard an
	 * error): an error, and both tables or neither (posts made and likes
	 * refused is a setup that no later call can finish: posts is "there
	 * already"); then a next setup works (on the tables as they were
	 * left when there are none, else once both are dropped: a lost
	 * COMMIT's answer leaves both). A DROP of posts "to undo the first
	 * CREATE" covers every refusal, but not a CREATE whose answer was
	 * lost. */
	for (int how = LT_STEP_FAILS; how <= LT_STEP_BUSY; how++) {
		for (int k = 1; k <= 20; k++) {
			struct kth_commit c = { .k = k };
			kit_db_set_hook(db, note_kth_commit, &c);
			lt_step_arm(how, k);
			int rc = inside_keys_setup(db);
			bool reached = lt_step_disarm();
			kit_db_set_hook(db, NULL, NULL);
			bool posts = table_there(db, "posts"), likes = table_there(db, "likes");
			/* inside.h: a negative code means the call changed nothing,
			 * a reply lost on COMMIT excepted */
			bool excepted = how == LT_STEP_REPLY_LOST && c.commit;
			int next = 0;
			char next_why[200] = "";
			if (reached && posts == likes) {
				if (posts && excepted) {
					labtest_exec(t, "DROP TABLE likes");
					labtest_exec(t, "DROP TABLE posts");
				}
				next = inside_keys_setup(db);
				snprintf(next_why, sizeof next_why, "%s", labtest_why(db));
			}
			labtest_exec(t, "DROP TABLE IF EXISTS likes");
			labtest_exec(t, "DROP TABLE IF EXISTS posts");
			if (!reached)
				break;
			lt_expect(rc < 0, "guarantee", "statement %d of inside_keys_setup() %s: returned "
			          "%d, expected a negative code", k, lt_step_what(how), rc);
			lt_expect(posts == likes, "guarantee", "statement %d of inside_keys_setup() %s: "
			          "it left posts %s and likes %s. The setup makes both tables or neither "
			          "(inside.h): one CREATE that went in and one that did not is a setup no "
			          "later call can finish, as the table made is \"there already\". Send both "
			          "CREATEs as one statement text, or in one transaction%s", k,
			          lt_step_what(how), posts ? "made" : "missing", likes ? "made" : "missing",
			          how == LT_STEP_REPLY_LOST ? "; the statement ran and only its answer "
			          "was lost, so a DROP that undoes the first CREATE when the second fails "
			          "never runs: a transaction undoes it" : "");
			lt_expect(rc == 0 || excepted || (!posts && !likes), "guarantee", "statement %d "
			          "(%s) of inside_keys_setup() %s: it returned %d and left posts %s and "
			          "likes %s. inside.h: a negative code means the call changed nothing (a "
			          "reply lost on COMMIT excepted), and a setup that answers an error with "
			          "the tables made can never be finished: every later setup finds posts "
			          "\"there already\". Is a statement sent after the COMMIT (a CREATE INDEX "
			          "\"outside the transaction\")? Everything the setup makes belongs before "
			          "its COMMIT", k, c.what, lt_step_what(how), rc, posts ? "made" : "missing",
			          likes ? "made" : "missing");
			lt_expect(next == 0, "guarantee", "statement %d of inside_keys_setup() %s, which "
			          "left %s, then the next setup on the same connection returned %d (%s): "
			          "is a transaction left open, or a table left behind?", k,
			          lt_step_what(how), posts ? "both tables (dropped before it)" :
			          "neither table", next, next_why);
		}
	}
	/* The second CREATE refused by the database itself, inside the one
	 * call: a table named likes is there already. PostgreSQL runs one
	 * statement text as one transaction, SQLite commits each statement of
	 * a text by itself, so only an explicit transaction keeps posts out
	 * there as well. */
	labtest_exec(t, "CREATE TABLE likes (stray INT)");
	int rc = inside_keys_setup(db);
	bool stray_posts = table_there(db, "posts");
	labtest_exec(t, "DROP TABLE IF EXISTS posts");
	labtest_exec(t, "DROP TABLE likes");
	lt_expect(rc < 0 && !stray_posts, "guarantee", "inside_keys_setup() with a table named likes there "
	          "already (its second CREATE refused) returned %d and %s posts. The setup makes "
	          "both tables or neither (inside.h)%s", rc, stray_posts ? "made" : "did not make",
	          stray_posts && t->engine == KIT_DB_SQLITE ? ": SQLite commits each statement of a text "
	          "by itself, so one statement text is not one transaction there; wrap the CREATEs "
	          "in BEGIN ... COMMIT and roll back on a failure" : "");
	rc = inside_keys_setup(db);
	lt_expect(rc == 0, NULL, "inside_keys_setup(): %d, %s", rc, labtest_why(db));
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");

	lt_expect(inside_like(db, 999, 1) < 0, "guarantee", "expected a like of post 999 (no such post) to fail");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 0, "likes after liking a missing post");
	lt_expect_int(inside_like(db, 1, 1), 0, "a like of post 1");
	rc = kit_db_exec(db, "DELETE FROM posts WHERE id = 1", 0, NULL);
	if (rc == 0)
		kit_db_rollback(db);
	lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM likes l WHERE NOT EXISTS"
	                                  " (SELECT 1 FROM posts p WHERE p.id = l.post_id)"), 0,
	                   "likes of a post that is gone, after DELETE of a liked post", "guarantee");
	/* A like with no post at all: a NULL passes every foreign key, and
	 * SQLite lets NULL into a (non-INTEGER) primary key of a rowid
	 * table, so only NOT NULL on post_id refuses it there. The same for
	 * every NOT NULL column of INSIDE_SCHEMA: a like by no user (any
	 * number of them, as NULLs are never equal in a key) and a post whose
	 * count is NULL (likes + 1 stays NULL for ever). PostgreSQL makes
	 * the columns of a primary key NOT NULL by itself; SQLite does not. */
	static const struct { const char *insert, *count, *column; } nulls_of[] = {
		{ "INSERT INTO likes (post_id, user_id) VALUES (NULL, 5)",
		  "SELECT count(*) FROM likes WHERE post_id IS NULL", "likes.post_id" },
		{ "INSERT INTO likes (post_id, user_id) VALUES (1, NULL)",
		  "SELECT count(*) FROM likes WHERE user_id IS NULL", "likes.user_id" },
		{ "INSERT INTO posts (id, likes) VALUES (77, NULL)",
		  "SELECT count(*) FROM posts WHERE likes IS NULL", "posts.likes" },
	};
	for (size_t i = 0; i < sizeof nulls_of / sizeof nulls_of[0]; i++) {
		int null_rc = kit_db_exec(db, nulls_of[i].insert, 0, NULL);
		int64_t nulls = labtest_int(t, nulls_of[i].count);
		lt_expect(null_rc < 0 && nulls == 0, "guarantee",
		          "%s returned %d and left %" PRId64 " row with a NULL %s: expected it "
		          "refused. Is %s without the NOT NULL of INSIDE_SCHEMA (SQLite lets NULL "
		          "into a primary key, PostgreSQL does not)?", nulls_of[i].insert, null_rc,
		          nulls, nulls_of[i].column, nulls_of[i].column);
		if (null_rc == 0)
			labtest_exec(t, i < 2 ? "DELETE FROM likes WHERE post_id IS NULL OR user_id IS NULL"
			                      : "DELETE FROM posts WHERE likes IS NULL");
	}
	/* "no post deleted under its likes" (README §3): the DELETE is
	 * refused, not carried out on the likes too (ON DELETE CASCADE), nor
	 * on the likes' key (SET NULL, SET DEFAULT). */
	int64_t posts = labtest_int(t, "SELECT count(*) FROM posts WHERE id = 1");
	int64_t likes = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1 AND user_id = 1");
	lt_expect(rc < 0 && posts == 1 && likes == 1, "guarantee",
	          "DELETE of post 1, which has a like, returned %d and left %" PRId64 " post and %"
	          PRId64 " like: expected the key to refuse it and both to stay. Does the key "
	          "delete the likes with their post (ON DELETE CASCADE) instead of refusing?",
	          rc, posts, likes);
	/* The columns of INSIDE_SCHEMA are BIGINT: ids past 2^31 and a counter
	 * past 2^31 - 1 fit (an INT column on PostgreSQL refuses them). */
	labtest_exec(t, "INSERT INTO posts (id, likes) VALUES (1099511627776, 2147483647)");
	rc = inside_like(db, 1099511627776LL, 1099511627777LL);
	int64_t big = labtest_int(t, "SELECT likes FROM posts WHERE id = 1099511627776");
	lt_expect(rc == 0 && big == 2147483648LL, "guarantee",
	          "a like by user 2^40 + 1 of post 2^40, whose counter stood at 2^31 - 1, returned %d "
	          "(%s) and left the counter at %" PRId64 ", expected 0 and 2^31: are the columns of "
	          "inside_keys_setup() narrower than INSIDE_SCHEMA's BIGINT (INT)?", rc,
	          labtest_why(db), big);
	/* The tables keep what was committed to them: a second
	 * inside_keys_setup() on a database that has its posts and likes
	 * (the app started again) may fail, "already exists", but leaves them
	 * (one that drops the tables first "so it can run twice" empties
	 * them), and on PostgreSQL they are ordinary tables, not UNLOGGED
	 * ones, which a crash of the server empties and no standby sees.
	 * Durability is given up only where §5 says: the counter's commit
	 * in inside_count_async(). */
	int64_t had_posts = labtest_int(t, "SELECT count(*) FROM posts");
	int64_t had_likes = labtest_int(t, "SELECT count(*) FROM likes");
	rc = inside_keys_setup(db);
	int64_t now_posts = labtest_int(t, "SELECT count(*) FROM posts");
	int64_t now_likes = labtest_int(t, "SELECT count(*) FROM likes");
	lt_expect(now_posts == had_posts && now_likes == had_likes, "guarantee",
	          "inside_keys_setup() run again on tables holding %" PRId64 " posts and %" PRId64
	          " likes returned %d and left %" PRId64 " and %" PRId64 ": does it drop the tables "
	          "first? Setup creates what is missing and never deletes what was committed",
	          had_posts, had_likes, rc, now_posts, now_likes);
	if (kit_db_engine(db) == KIT_DB_POSTGRES)
		lt_expect_int_hint(labtest_int(t, "SELECT count(*) FROM pg_class WHERE oid IN"
		                                  " ('posts'::regclass, 'likes'::regclass)"
		                                  " AND relpersistence = 'p'"), 2,
		                   "tables of posts and likes that survive a crash (is either UNLOGGED? "
		                   "A crash empties those: every like and every count gone)",
		                   "guarantee");
	like_races_delete(t);

	/* PostgreSQL: on tables that are there already but not so (INSIDE_SCHEMA
	 * checks the key at each INSERT), a setup that returns 0 has made the
	 * key what §3 asks; CREATE TABLE IF NOT EXISTS returns 0 and leaves
	 * the tables as they were, and the likes keep adding MultiXacts. */
	if (kit_db_engine(db) != KIT_DB_POSTGRES)
		return;
	labtest_exec(t, "DROP TABLE likes; DROP TABLE posts; DROP TABLE IF EXISTS counters");
	labtest_exec(t, INSIDE_SCHEMA);
	rc = inside_keys_setup(db);
	if (rc != 0)
		return;
	int64_t immediate = labtest_int(t, "SELECT count(*) FROM pg_constraint WHERE contype = 'f'"
	                                   " AND conrelid = 'likes'::regclass AND NOT condeferred");
	lt_expect(immediate == 0, "multixact",
	          "inside_keys_setup() returned 0 on a database whose posts and likes INSIDE_SCHEMA "
	          "had made (the key checked at each INSERT), and %" PRId64 " key of likes is still "
	          "checked at the INSERT: the likes go on adding MultiXacts. Does it CREATE TABLE IF "
	          "NOT EXISTS? That leaves a table as it was; return the error (\"already exists\"), "
	          "or make the key what it must be", immediate);
}

/* THREADS threads call op `iterations` times each, every thread on a
 * connection of its own; what they did goes to *r. */
static void run_load(struct labtest *t, int iterations, kit_load_op_fn *op, void *arg,
                     struct kit_load_result *r)
{
	struct kit_load_config c;
	labtest_load_config(t, &c, THREADS, iterations);
	lt_expect(kit_load_run(&c, op, arg, r) == 0, NULL, "load run: %s", r->error);
}

/* arg: the first user id of this round (a round never likes twice) */
static int like_many(void *arg, struct kit_load_thread *th)
{
	int64_t base = *(const int64_t *)arg;
	return inside_like(th->db, 1, base + (int64_t)th->index * 1000000 + th->iter + 1);
}

static int64_t multixacts_since_posts(struct labtest *t)
{
	return labtest_int(t, "SELECT mxid_age(relminmxid) FROM pg_class WHERE oid = 'posts'::regclass");
}

static void keys__no_multixacts_from_likes(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	int rc = inside_keys_setup(db);
	lt_expect(rc == 0, NULL, "inside_keys_setup(): %d, %s", rc, labtest_why(db));
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1)");

	/* the counter's UPDATE stays HOT (§2): no index of posts holds likes,
	 * as a column, in an expression or in a partial index's predicate */
	int64_t on_likes = labtest_int(t, "SELECT count(*) FROM pg_index i WHERE i.indrelid = "
		"'posts'::regclass AND (EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = "
		"i.indrelid AND a.attname = 'likes' AND a.attnum = ANY (i.indkey::int2[])) OR "
		"coalesce(pg_get_expr(i.indexprs, i.indrelid), '') ~ '\\mlikes\\M' OR "
		"coalesce(pg_get_expr(i.indpred, i.indrelid), '') ~ '\\mlikes\\M')");
	lt_expect(on_likes == 0, "hot", "inside_keys_setup() made %" PRId64 " index(es) of posts "
	          "that hold its likes column: every like's UPDATE of the counter then writes a new "
	          "entry in each, so none is a HOT update, and the hot row's versions fill pages and "
	          "index alike (§2, the row \"counter indexed\"). inside.h: no index of posts "
	          "holds likes; a \"most liked\" list is a query for a table of its own, or a "
	          "rollup", on_likes);

	/* The MultiXact counter is the cluster's: a session in another
	 * database that shares rows (FOR SHARE, a key checked at its INSERT)
	 * adds to it during the round. Likes that make MultiXacts make them
	 * in every round; another session's burst is gone by the third. */
	int64_t made = 0;
	for (int round = 0; round < 3; round++) {
		int64_t base = (int64_t)round * 100000000;
		int64_t before = multixacts_since_posts(t);
		struct kit_load_result r;
		run_load(t, 150, like_many, &base, &r);
		made = multixacts_since_posts(t) - before;

		lt_expect_int(r.ok, THREADS * 150, "likes that returned 0, 8 threads x 150");
		lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"),
		              (round + 1) * THREADS * 150, "posts.likes after rounds of 8 threads x 150");
		if (made * 20 < THREADS * 150)
			return;
	}
	lt_expect(false, "multixact", "expected fewer than 60 MultiXacts for 1,200 likes on one "
	          "post, got %" PRId64 " (and 60 or more in each of two rounds before: the "
	          "cluster's counter, so another session may add to it, but not three times "
	          "running)", made);
}

/* ---- §4 Isolation ---- */

struct retry_run {
	const char *level;
	struct inside_retry policy;
	atomic_llong attempts, gave_up;
	atomic_int over_cap;         /* calls that asked for a wait over cap_ms */
	_Atomic double over_ms;      /* the last such wait */
};

/* One increment; a wait over the cap is cut short (sleeps.h) and
 * counted, so a backoff with no cap fails this check instead of sleeping
 * for hours in one of eight threads. */
static int count_many(void *arg, struct kit_load_thread *th)
{
	struct retry_run *r = arg;
	int attempts = 0;
	struct lt_sleeps asked;
	lt_sleeps_watch(&asked, r->policy.cap_ms, 10.0 * r->policy.max_attempts * r->policy.cap_ms);
	int rc = inside_count_retrying(th->db, 1, r->level, &r->policy, &attempts);
	lt_sleeps_unwatch();
	if (asked.cut) {
		atomic_fetch_add(&r->over_cap, 1);
		atomic_store(&r->over_ms, asked.longest_ms);
	}
	atomic_fetch_add(&r->attempts, attempts);
	if (rc == INSIDE_GAVE_UP)
		atomic_fetch_add(&r->gave_up, 1);
	return rc;
}

static void isolation__exact_with_retries(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	static const char *const levels[] = { "REPEATABLE READ", "SERIALIZABLE" };

	for (int i = 0; i < 2; i++) {
		labtest_exec(t, "UPDATE counters SET n = 0 WHERE id = 1");
		struct retry_run run = { .level = levels[i], .policy = { 200, 1, 20 } };
		struct kit_load_result r;
		run_load(t, 60, count_many, &run, &r);
		lt_expect(atomic_load(&run.over_cap) == 0, "backoff", "%d of the 480 calls under %s "
		          "asked for a wait longer than cap_ms = 20 ms (one asked %.3g s): is the "
		          "doubling capped?", atomic_load(&run.over_cap), levels[i],
		          atomic_load(&run.over_ms) / 1e3);
		char what[200];
		snprintf(what, sizeof what, "calls that returned 0 under %s, 8 threads x 60 "
		         "(%lld gave up; first error: %.100s)", levels[i],
		         (long long)atomic_load(&run.gave_up), r.error[0] ? r.error : "none");
		lt_expect_int_hint(r.ok, THREADS * 60, what, "retry");
		snprintf(what, sizeof what, "counter after 8 threads x 60 under %s", levels[i]);
		lt_expect_int_hint(counter(t), r.ok, what, "retry");
		lt_expect(atomic_load(&run.attempts) > r.ok, "isolation",
		          "expected some attempts to fail to serialize under %s (8 threads, one row), "
		          "got %lld attempts for %lld increments", levels[i],
		          (long long)atomic_load(&run.attempts), (long long)r.ok);
	}
}

/* The counter's updates fail to serialize for the first `fail` attempts:
 * a trigger raises the error; a sequence (which no rollback undoes)
 * counts the attempts. Every second failure is a deadlock (40P01), which
 * the kit answers KIT_DB_BUSY as it does a serialization failure (40001):
 * a retry that looks at the message for "serialize" gives up on it. */
static void plant_failures(struct labtest *t, int fail)
{
	char sql[600];
	labtest_exec(t, "CREATE SEQUENCE attempts");
	snprintf(sql, sizeof sql,
	         "CREATE FUNCTION flaky() RETURNS trigger LANGUAGE plpgsql AS $$"
	         " DECLARE k bigint := nextval('attempts'); BEGIN"
	         " IF k <= %d AND k %% 2 = 0 THEN RAISE EXCEPTION"
	         " 'deadlock detected (planted by the check)'"
	         " USING ERRCODE = 'deadlock_detected'; END IF;"
	         " IF k <= %d THEN RAISE EXCEPTION"
	         " 'could not serialize access (planted by the check)'"
	         " USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$", fail, fail);
	labtest_exec(t, sql);
	labtest_exec(t, "CREATE TRIGGER flaky BEFORE UPDATE ON counters"
	                " FOR EACH ROW EXECUTE FUNCTION flaky()");
}

static void isolation__gives_up_after_limit(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_failures(t, 1000);

	struct inside_retry policy = { 4, 1, 4 };
	int attempts = -1;
	int rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
	lt_expect(rc == INSIDE_GAVE_UP, "limit", "expected INSIDE_GAVE_UP (%d) after 4 failed "
	          "attempts, got %d%s", INSIDE_GAVE_UP, rc, rc == KIT_DB_BUSY ? " (KIT_DB_BUSY: "
	          "the first attempt's serialization failure, returned without a retry)" : "");
	lt_expect_int_hint(labtest_int(t, "SELECT last_value FROM attempts"), 4,
	                   "attempts the database saw, max_attempts 4", "limit");
	lt_expect_int_hint(attempts, 4, "*attempts reported", "limit");
	lt_expect_int(counter(t), 0, "counter after giving up");

	/* Four more calls in a row, each giving up: every one makes the
	 * caller's max_attempts, however many gave up before it. A count of
	 * give-ups kept between calls ("after three, try once": a breaker of
	 * the function's own) overrules the caller's policy. */
	for (int call = 2; call <= 5; call++) {
		int64_t seen = labtest_int(t, "SELECT last_value FROM attempts");
		attempts = -1;
		rc = inside_count_retrying(db, 1, "REPEATABLE READ", &policy, &attempts);
		int64_t made = labtest_int(t, "SELECT last_value FROM attempts") - seen;
		lt_expect(rc == INSIDE_GAVE_UP && made == 4 && attempts == 4, "limit", "call %d in a "
		          "row whose every attempt fails to serialize, max_attempts 4: returned %d after "
		          "%lld attempts the database saw, *attempts %d (expected INSIDE_GAVE_UP after 4, "
		          "as every call before it). Each call follows the policy it is given: a count "
		          "of give-ups kept between calls (\"after three, try once\") changes what a later "
		          "caller asked for", call, rc, (long long)made, attempts);
	}
}

/* A serialization failure can come at COMMIT too (SERIALIZABLE checks
 * its read/write dependencies there; a deferred constraint trigger runs
 * there): it is the same KIT_DB_BUSY, and the attempt is retried like
 * one whose UPDATE failed. Planted: a deferred constraint trigger that
 * raises it at the first two COMMITs. */
static void plant_commit_refusals(struct labtest *t)
{
	labtest_exec(t, "CREATE SEQUENCE commits");
	labtest_exec(t, "CREATE FUNCTION flaky_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	                " IF nextval('commits') <= 2 THEN RAISE EXCEPTION"
	                " 'could not serialize access (planted at COMMIT by the check)'"
	                " USING ERRCODE = 'serialization_failure'; END IF; RETURN NULL; END $$");
	labtest_exec(t, "CREATE CONSTRAINT TRIGGER flaky_commit AFTER UPDATE ON counters"
	                " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION flaky_commit()");
}

static void isolation__commit_refusal_retried(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_commit_refusals(t);
	/* each attempt's level, counted by a sequence (a rolled-back attempt
	 * keeps what nextval did): a retry that begins with a plain BEGIN
	 * ("the level is set already") runs at READ COMMITTED */
	labtest_exec(t, "CREATE SEQUENCE off_level");
	labtest_exec(t, "CREATE FUNCTION watch_level() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	                " IF current_setting('transaction_isolation') <> 'serializable' THEN"
	                " PERFORM nextval('off_level'); END IF; RETURN NEW; END $$");
	labtest_exec(t, "CREATE TRIGGER watch_level BEFORE UPDATE ON counters"
	                " FOR EACH ROW EXECUTE FUNCTION watch_level()");

	struct inside_retry policy = { 5, 1, 2 };
	int attempts = -1;
	struct lt_call_watch w;
	lt_call_watch_init(&w, db);
	kit_db_set_hook(db, lt_call_watch, &w);
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	kit_db_set_hook(db, NULL, NULL);
	/* only inside_count_async gives up the COMMIT's wait for the disk */
	lt_expect(w.durability[0] == '\0', "async", "inside_count_retrying sent \"%s\": a retried "
	          "increment that returned 0 is on disk like any other (inside.h); a crash loses "
	          "what a COMMIT that did not wait for the disk acknowledged, and a caller that "
	          "retries a payment this way never asked for that", w.durability);
	lt_expect(rc == 0, "retry", "the first two COMMITs failed to serialize (KIT_DB_BUSY), "
	          "max_attempts 5: expected 0 from the third attempt, got %d%s", rc,
	          rc == KIT_DB_BUSY || rc == KIT_DB_ERR ? ": a COMMIT's serialization failure is "
	          "one too, retry the attempt as when the UPDATE fails" : "");
	lt_expect_int_hint(attempts, 3, "*attempts with the first two COMMITs refused", "retry");
	lt_expect_int(counter(t), 1, "counter");
	int64_t off = labtest_int(t, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END"
	                             " FROM off_level");
	lt_expect(off == 0, "isolation", "%" PRId64 " of the 3 attempts of a call at SERIALIZABLE "
	          "ran at another level (a trigger read transaction_isolation at each UPDATE): does "
	          "a retry begin with a plain BEGIN? Each attempt is a transaction of its own, "
	          "begun at the level asked (BEGIN ISOLATION LEVEL ...)", off);

	/* The same two COMMIT refusals with max_attempts 2: the call gives
	 * up, whichever statement of the last attempt failed to serialize. */
	labtest_exec(t, "ALTER SEQUENCE commits RESTART");
	struct inside_retry two = { 2, 1, 2 };
	attempts = -1;
	rc = inside_count_retrying(db, 1, "SERIALIZABLE", &two, &attempts);
	lt_expect(rc == INSIDE_GAVE_UP && attempts == 2, "limit", "both COMMITs failed to "
	          "serialize, max_attempts 2: expected INSIDE_GAVE_UP (%d) after 2 attempts, got %d "
	          "after %d%s", INSIDE_GAVE_UP, rc, attempts, rc == KIT_DB_BUSY ? " (KIT_DB_BUSY: "
	          "the last COMMIT's refusal passed on; when the attempts are used up the answer "
	          "is INSIDE_GAVE_UP, whether the UPDATE or the COMMIT failed)" : "");
	lt_expect_int(counter(t), 1, "counter after a call that gave up");
}

static void isolation__backs_off(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_failures(t, 5);

	struct inside_retry policy = { 10, 8, 64 };
	int attempts = -1;
	int64_t start = kit_load_now_ns();
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	double ms = (double)(kit_load_now_ns() - start) / 1e6;
	lt_expect(rc == 0, "backoff", "expected 0 when the 6th attempt can commit (5 planted "
	          "failures, max_attempts 10), got %d%s", rc, rc == KIT_DB_BUSY ? " (KIT_DB_BUSY: "
	          "the first attempt's serialization failure, returned without a retry)" :
	          rc == INSIDE_GAVE_UP ? " (INSIDE_GAVE_UP: it gave up before attempt 6)" : "");
	lt_expect_int(attempts, 6, "*attempts reported");
	lt_expect_int(counter(t), 1, "counter");
	/* The shortest waits the contract allows: half of 8, 16, 32, 64, 64. */
	lt_expect(ms >= 92, "backoff",
	          "expected 5 retries to wait at least 92 ms in all (half of 8+16+32+64+64), "
	          "got %.1f ms", ms);
}

/* The waits of one call, seen from the connection's hook: the gap from
 * the end of an attempt's last statement to the start of the next BEGIN,
 * and what the code asked to sleep in that gap (sleeps.h; 0 with no
 * watch on the thread, or a sleep the test program does not see). */
struct waits {
	int64_t last_end;
	bool began;
	int n;
	double ms[80];
	double asked[80];
};

static void time_waits(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct waits *w = arg;
	if (ev == KIT_DB_STMT_END || ev == KIT_DB_TX_STMT_END || ev == KIT_DB_TX_ROLLBACK) {
		w->last_end = t_ns;
		return;
	}
	/* kit_db_exec("BEGIN ...") or kit_db_begin() (a TX_ statement) */
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || !lt_sql_begins(sql))
		return;
	double asked = lt_sleeps_take();
	lt_sleeps_note_attempt();
	if (w->began && w->n < 80) {
		w->asked[w->n] = asked;
		w->ms[w->n++] = (double)(t_ns - w->last_end) / 1e6;
	}
	w->began = true;
}

/* Two calls at once, each at its own level: one at REPEATABLE READ held
 * before its BEGIN while the other, at SERIALIZABLE, runs whole. Each
 * transaction must run at its own caller's level (a trigger notes
 * transaction_isolation at each UPDATE). A BEGIN text kept in a buffer
 * every call shares ("built once": a static) is overwritten by the
 * second call before the first sends it. */
static int count_at_level(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	static const struct inside_retry policy = { 3, 1, 2 };
	return inside_count_retrying(db, who == 0 ? 1 : 2, who == 0 ? "REPEATABLE READ" :
	                             "SERIALIZABLE", &policy, NULL);
}

static void isolation__each_call_at_its_level(void **state)
{
	struct labtest *t = *state;
	make_counter(t);
	labtest_exec(t, "INSERT INTO counters (id) VALUES (2)");
	labtest_exec(t, "CREATE TABLE levels (who serial, level text)");
	labtest_exec(t, "CREATE FUNCTION note_level() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	                " INSERT INTO levels (level) VALUES (current_setting('transaction_isolation'));"
	                " RETURN NEW; END $$");
	labtest_exec(t, "CREATE TRIGGER note_level BEFORE UPDATE ON counters"
	                " FOR EACH ROW EXECUTE FUNCTION note_level()");

	struct lt_gate *g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "BEGIN", (int[]){ 1, 1 }, 1, count_at_level, NULL);
	int rc0 = lt_gate_rc(g, 0), rc1 = lt_gate_rc(g, 1);
	lt_gate_close(g);
	char first[40] = "", second[40] = "";
	kit_db_query(labtest_db(t), "SELECT level FROM levels ORDER BY who LIMIT 1", 0, NULL,
	             show_level, second);
	kit_db_query(labtest_db(t), "SELECT level FROM levels ORDER BY who DESC LIMIT 1", 0, NULL,
	             show_level, first);
	lt_expect(rc0 == 0 && rc1 == 0, "isolation", "two calls at once returned %d and %d (%s)",
	          rc0, rc1, labtest_why(labtest_db(t)));
	lt_expect(strcmp(second, "serializable") == 0 && strcmp(first, "repeatable read") == 0,
	          "isolation", "a call at REPEATABLE READ was held before its BEGIN while another, "
	          "at SERIALIZABLE, ran whole: the first ran at \"%s\", the second at \"%s\". Is "
	          "the BEGIN text (or the level) kept in a buffer every call shares, a static, "
	          "which the other call overwrote before this one sent it?", first, second);
	/* each call its own row: the held one counts row 1, the other row 2
	 * (a row id printed into a static buffer sends the other's) */
	int64_t n1 = counter(t), n2 = labtest_int(t, "SELECT n FROM counters WHERE id = 2");
	lt_expect(n1 == 1 && n2 == 1, "isolation", "a call counting row 1 was held before its "
	          "BEGIN while another counted row 2 whole: rows 1 and 2 count %" PRId64 " and %"
	          PRId64 ", expected 1 and 1. Is the row's id (or the statement's text) printed "
	          "into a buffer every call shares, a static, which the other call overwrote?",
	          n1, n2);

	/* "level ... not copied": the caller's text is read during the call
	 * only. One buffer of the caller's, holding REPEATABLE READ for a
	 * call, then SERIALIZABLE for the next: a BEGIN text kept from the
	 * last call and rebuilt only when `level` points elsewhere runs the
	 * second call at the first call's level. */
	labtest_exec(t, "DELETE FROM levels");
	static const struct inside_retry policy = { 3, 1, 2 };
	char level[32] = "REPEATABLE READ";
	struct kit_db *db = labtest_db(t);
	int rc_rr = inside_count_retrying(db, 1, level, &policy, NULL);
	snprintf(level, sizeof level, "SERIALIZABLE");
	int rc_ser = inside_count_retrying(db, 1, level, &policy, NULL);
	first[0] = second[0] = 0;
	kit_db_query(db, "SELECT level FROM levels ORDER BY who LIMIT 1", 0, NULL, show_level, first);
	kit_db_query(db, "SELECT level FROM levels ORDER BY who DESC LIMIT 1", 0, NULL, show_level,
	             second);
	lt_expect(rc_rr == 0 && rc_ser == 0, "isolation", "two calls with the level in one "
	          "buffer of the caller's returned %d and %d (%s)", rc_rr, rc_ser, labtest_why(db));
	lt_expect(strcmp(first, "repeatable read") == 0 && strcmp(second, "serializable") == 0,
	          "isolation", "one buffer of the caller's held \"REPEATABLE READ\" for a call, then "
	          "\"SERIALIZABLE\" for the next: they ran at \"%s\" and \"%s\". Is the BEGIN "
	          "text kept from an earlier call and rebuilt only when `level` points elsewhere? "
	          "The text can change under the same pointer: build the BEGIN in each call", first,
	          second);
	lt_expect_int(counter(t), 3, "counter after two more calls");
}

/* The level is the call's transaction's, not the connection's: a session
 * whose own default is REPEATABLE READ keeps it after a call at
 * SERIALIZABLE, one that commits and one that fails (a missing row), and
 * its next transaction runs at that default. SET SESSION CHARACTERISTICS
 * or SET default_transaction_isolation before BEGIN changes it for every
 * later transaction of the connection (a pooled one serves others);
 * BEGIN ISOLATION LEVEL or SET TRANSACTION ISOLATION LEVEL after BEGIN
 * end with the transaction. */
/* What a call's UPDATE of counters runs under, beside the session: a
 * trigger copies every setting (pg_settings) as each UPDATE of counters
 * sees it; watch_settings() makes it, with a counter row 3 and a plain
 * UPDATE of it as the session's own. settings_changed() lists those that
 * differ between that one and the next UPDATE (the call's), `except`
 * aside, drops the trigger and returns how many UPDATEs it saw. */
static void watch_settings(struct labtest *t)
{
	labtest_exec(t, "INSERT INTO counters (id) VALUES (3);"
	             "CREATE TABLE seen_settings (k bigint, name text, setting text);"
	             "CREATE SEQUENCE seen_k;"
	             "CREATE FUNCTION see_settings() RETURNS trigger LANGUAGE plpgsql AS $$"
	             " DECLARE k bigint := nextval('seen_k'); BEGIN"
	             " INSERT INTO seen_settings SELECT k, name, setting FROM pg_settings;"
	             " RETURN NEW; END $$;"
	             "CREATE TRIGGER see_settings BEFORE UPDATE ON counters"
	             " FOR EACH ROW EXECUTE FUNCTION see_settings()");
	labtest_exec(t, "UPDATE counters SET n = n + 1 WHERE id = 3");
}

static int show_long_text(void *arg, int ncols, const char *const *values);

static int64_t settings_changed(struct labtest *t, struct kit_db *db, const char *except,
                                char other[200])
{
	labtest_exec(t, "DROP TRIGGER see_settings ON counters");
	other[0] = '\0';
	kit_db_query(db, "SELECT COALESCE(string_agg(a.name || ' ' || a.setting || ' -> ' || b.setting,"
	             " ', ' ORDER BY a.name), '') FROM seen_settings a JOIN seen_settings b"
	             " ON a.name = b.name AND a.k = 1 AND b.k = 2"
	             " WHERE a.setting IS DISTINCT FROM b.setting AND a.name <> $1",
	             1, (const char *[]){ except }, show_long_text, other);
	return labtest_int(t, "SELECT count(DISTINCT k) FROM seen_settings");
}

static void isolation__level_ends_with_the_call(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	static const char own[] = "SELECT (current_setting('default_transaction_isolation') = "
		"'repeatable read')::int";
	make_counter(t);
	labtest_exec(t, "SET default_transaction_isolation = 'repeatable read'");
	watch_settings(t);
	struct inside_retry policy = { 3, 1, 2 };
	int attempts = -1, attempts_gone = -1;
	int64_t after = -1, after_gone = -1, next = -1;
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	/* Inside the call only the level is its own: a SET LOCAL
	 * lock_timeout "so a lock wait counts as a collision too" makes a
	 * writer queued for the hot row give up, back off and spend its
	 * attempts, where one that waits commits (or fails to serialize,
	 * which the retry is for) */
	char other[200] = "";
	int64_t seen = settings_changed(t, db, "transaction_isolation", other);
	lt_expect(seen == 2 && other[0] == '\0', "isolation", "the counter's UPDATE inside "
	          "inside_count_retrying() ran with other settings than the session's besides its "
	          "isolation level: %s%s. The call sets its level for its own transaction, nothing "
	          "else: a SET LOCAL lock_timeout makes a writer queued for the hot row give up, "
	          "back off and spend its attempts where one that waits would commit", other,
	          seen == 2 ? "" : " (the settings were not seen twice)");
	kit_db_query_int(db, own, 0, NULL, &after);
	int rc_gone = inside_count_retrying(db, 2, "SERIALIZABLE", &policy, &attempts_gone);
	kit_db_query_int(db, own, 0, NULL, &after_gone);
	int brc = kit_db_begin(db);
	if (brc == 0)
		brc = kit_db_query_int(db, "SELECT (current_setting('transaction_isolation') = "
		                       "'repeatable read')::int", 0, NULL, &next);
	kit_db_rollback(db);
	labtest_exec(t, "RESET default_transaction_isolation");
	lt_expect_int(rc, 0, "a call at SERIALIZABLE on counter row 1");
	lt_expect_int(rc_gone, INSIDE_NO_ROW, "a call at SERIALIZABLE on counter row 2, which does "
	              "not exist");
	lt_expect(after == 1 && after_gone == 1, "isolation", "expected the session's "
	          "default_transaction_isolation still 'repeatable read' (its own) after a call at "
	          "SERIALIZABLE that committed and after one that failed, got it %s and %s: the "
	          "level was set for the session (SET SESSION CHARACTERISTICS, SET "
	          "default_transaction_isolation), not for the call's transaction (BEGIN "
	          "ISOLATION LEVEL ...)", after == 1 ? "kept" : "changed",
	          after_gone == 1 ? "kept" : "changed");
	lt_expect(brc == 0 && next == 1, "isolation", "expected the connection's next "
	          "transaction at the session's own 'repeatable read', got another level (%d)", brc);
}

/* Only a failure to serialize is retried: a missing row is an answer. */
static void isolation__other_errors_not_retried(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);

	struct inside_retry policy = { 5, 20, 80 };
	int attempts = -1;
	struct lt_sleeps s;
	int64_t start = kit_load_now_ns();
	lt_sleeps_watch(&s, 100, 1000);
	int rc = inside_count_retrying(db, 2, "REPEATABLE READ", &policy, &attempts);
	lt_sleeps_unwatch();
	double ms = (double)(kit_load_now_ns() - start) / 1e6;
	lt_expect(s.calls == 0, "retry", "a call whose one attempt did not fail to serialize (a "
	          "missing row) asked to sleep %d time(s), %.1f ms the longest: a wait comes after "
	          "a failure to serialize and before the next attempt, never before the first "
	          "(callers that start together are spread by their failures' random waits)",
	          s.calls, s.longest_ms);
	lt_expect(rc == INSIDE_NO_ROW, "retry", "expected INSIDE_NO_ROW (%d) at once for counter "
	          "row 2, which does not exist, got %d after %d attempts and %.0f ms%s",
	          INSIDE_NO_ROW, rc, attempts, ms, rc == INSIDE_GAVE_UP ? " (INSIDE_GAVE_UP: an "
	          "error that is not a serialization failure was retried as one)" : "");
	lt_expect_int_hint(attempts, 1, "*attempts for a missing row", "retry");
	/* the same with one attempt allowed: its error is the answer, not
	 * INSIDE_GAVE_UP (a loop that tests the limit before the kind of
	 * failure calls every error of the last attempt giving up) */
	struct inside_retry one = { 1, 20, 80 };
	rc = inside_count_retrying(db, 2, "REPEATABLE READ", &one, &attempts);
	lt_expect(rc == INSIDE_NO_ROW, "retry", "with max_attempts 1, counter row 2 (which does not "
	          "exist) gave %d, expected INSIDE_NO_ROW (%d)%s", rc, INSIDE_NO_ROW,
	          rc == INSIDE_GAVE_UP ? ": INSIDE_GAVE_UP is for attempts that all failed to "
	          "serialize; an error of the last attempt that is not one is returned as it is" : "");
}

/* Many attempts with a small cap: the doubling must stop at cap_ms and
 * never overflow. 35 planted failures, base 2 ms, cap 4 ms: after the
 * first failure d = 2, then 4 for every later one; a sleep never ends
 * early, so no wait is shorter than d/2. An int shifted 31 places or
 * more is 0 or negative, and its wait is none. */
static void isolation__long_retry_keeps_its_cap(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_failures(t, 35);

	struct waits w = { 0 };
	struct inside_retry policy = { 36, 2, 4 };
	int attempts = -1, shortest = -1;
	double shortest_ms = 1e9;
	struct lt_sleeps asked;
	kit_db_set_hook(db, time_waits, &w);
	lt_sleeps_watch(&asked, policy.cap_ms, 2000);
	lt_sleeps_deadline(30, "isolation__long_retry_keeps_its_cap");
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	lt_sleeps_unwatch();
	kit_db_set_hook(db, NULL, NULL);
	/* Without a cap the 35 waits would add up to years: each sleep over
	 * the cap returned at once, and here is what it asked for. */
	lt_expect(!asked.cut || asked.over_budget, "backoff", "after %d failed attempts the "
	          "backoff asked to sleep %.0f ms, over its cap of %d ms (the longest asked: %.3g s "
	          "after %d attempts): is the wait capped, d = min(cap_ms, base_ms x 2^(k-1))?",
	          asked.first_cut_after, asked.first_cut_ms, policy.cap_ms,
	          asked.longest_ms / 1e3, asked.longest_after);
	lt_expect(!asked.cut, "backoff", "35 waits of at most %d ms each, and the call was still "
	          "asleep after %.1f s (%d sleep calls, the longest asked %.1f ms): does a loop "
	          "around nanosleep() end when the sleep is done?", policy.cap_ms,
	          asked.asleep_ms / 1e3, asked.calls, asked.longest_ms);
	lt_expect(rc == 0 && attempts == 36, "limit", "expected 0 after 36 attempts (35 planted "
	          "failures, max_attempts 36), got %d after %d attempts", rc, attempts);
	int unseen = 0;
	for (int k = 0; k < w.n; k++)
		unseen += !(w.asked[k] > 0);
	lt_expect(unseen == 0, "backoff", "%d of the %d waits between a failed attempt and the "
	          "next asked no sleep this program sees: inside.h has the wait slept with "
	          "nanosleep, usleep, sleep or clock_nanosleep, which the checks can time and cut "
	          "short", unseen, w.n);
	/* A sleep asked for, but not between the attempt's last statement and
	 * the next BEGIN: the ROLLBACK came after the sleep, so the failed
	 * transaction held its locks through it. A sleep is never cut short
	 * here (a cut one failed above), so a gap shorter than half what was
	 * asked in it means the sleep was elsewhere. */
	for (int k = 0; k < w.n; k++)
		lt_expect(!(w.asked[k] >= 0.9 && w.ms[k] < w.asked[k] / 2), "backoff", "after "
		          "failure %d the code asked to sleep %.2f ms, but only %.2f ms passed between "
		          "the failed attempt's last statement (its ROLLBACK) and the next BEGIN: the "
		          "wait came before the ROLLBACK, and the failed transaction held its locks "
		          "(on PostgreSQL, the row the other writers wait for) through the sleep. "
		          "Roll back first, then wait, then BEGIN again", k + 1, w.asked[k], w.ms[k]);
	for (int k = 1; k < w.n; k++)      /* waits 2.. have d = 4 ms */
		if (w.ms[k] < shortest_ms) {
			shortest_ms = w.ms[k];
			shortest = k + 1;
		}
	lt_expect(shortest_ms >= 1.9, "backoff", "expected every wait after the "
	          "1st to be at least d/2 = 2 ms (d = min(cap 4, 2 x 2^(k-1))), got %.2f ms after "
	          "failure %d (asked of the sleep calls: %.2f ms): the doubling overflowed (an int "
	          "shifted 31 places or more) or skipped the cap", shortest_ms, shortest,
	          shortest > 1 ? w.asked[shortest - 1] : 0.0);
}

/* Each wait as the contract draws it: after the k-th failure a time
 * between d/2 and d, d = min(cap_ms, base_ms x 2^(k-1)). With base 2 ms,
 * cap 40 ms and 7 planted failures the d are 2, 4, 8, 16, 32, 40, 40.
 * Judged on what the code asked to sleep (sleeps.h), so load cannot
 * blur it: a doubling that starts one step late or early, or a cap
 * applied to the wrong number, asks for a wait outside its range. A
 * wait this program does not see (select(), poll(), a condition
 * variable's timed wait) fails: inside.h names the calls to sleep with. */
static void isolation__waits_follow_the_doubling(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_failures(t, 7);

	struct waits w = { 0 };
	struct inside_retry policy = { 8, 2, 40 };
	struct lt_sleeps asked;
	int attempts = -1;
	kit_db_set_hook(db, time_waits, &w);
	lt_sleeps_watch(&asked, 10 * policy.cap_ms, 2000);
	lt_sleeps_deadline(30, "isolation__waits_follow_the_doubling");
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	lt_sleeps_unwatch();
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && attempts == 8 && w.n == 7, "backoff", "expected 0 after 8 attempts "
	          "with 7 waits (7 planted failures), got %d after %d attempts, %d waits", rc,
	          attempts, w.n);
	bool exact = true;
	for (int k = 0; k < w.n; k++)
		exact = exact && w.asked[k] > 0;
	lt_expect(exact, "backoff", "of the %d waits between a failed attempt and the next, some "
	          "asked no sleep this program sees: inside.h has the wait slept with nanosleep, "
	          "usleep, sleep or clock_nanosleep, which the checks can time and cut short; a "
	          "condition variable's timed wait, select(), poll() or a busy loop on the clock "
	          "they cannot", w.n);
	for (int k = 0; k < w.n; k++) {
		double d = policy.base_ms * (double)(1 << k);
		d = d > policy.cap_ms ? policy.cap_ms : d;
		double v = exact ? w.asked[k] : w.ms[k];
		lt_expect(v >= d / 2 - 0.001 && (!exact || v <= d + 0.001), "backoff", "the wait "
		          "after failure %d %s %.3f ms; expected %.0f to %.0f ms (d = min(cap 40, "
		          "2 x 2^%d) = %.0f): does the doubling start at base_ms, and is the cap "
		          "applied to d?", k + 1, exact ? "asked for" : "took", v, d / 2, d, k, d);
	}

	/* Two failures more, the thread's wall clock (CLOCK_REALTIME) reading
	 * an hour ahead of the kernel's until its first sleep, as when NTP or
	 * an operator sets the clock back while a worker waits: a wait is a
	 * duration, so nothing changes for nanosleep() or a CLOCK_MONOTONIC
	 * deadline; a deadline on the wall clock (clock_nanosleep(CLOCK_REALTIME,
	 * TIMER_ABSTIME, ...)) now lies an hour and d ahead. */
	labtest_exec(t, "ALTER SEQUENCE attempts RESTART WITH 6");
	struct timespec wall, mono;
	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	wall.tv_sec += 3600;
	lt_sleeps_watch(&asked, 10 * policy.cap_ms, 2000);
	lt_sleeps_freeze_clock(&wall, &mono);
	lt_sleeps_deadline(30, "isolation__waits_follow_the_doubling");
	rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	lt_sleeps_unwatch();
	lt_expect(rc == 0 && attempts == 3, NULL, "two planted failures: %d after %d attempts",
	          rc, attempts);
	lt_expect(!asked.cut, "backoff", "with the wall clock reading an hour ahead of the kernel's "
	          "when the wait was drawn (a clock then set back by an hour), a wait asked for %.1f "
	          "s: the wait is measured on the wall clock, an absolute "
	          "CLOCK_REALTIME deadline, and lasts as long as the clock's step. Sleep a duration "
	          "(nanosleep), or to a CLOCK_MONOTONIC deadline (clock_nanosleep), which no one sets",
	          asked.first_cut_ms / 1000);
}

/* The waits after COMMITs that failed to serialize (the first two, as in
 * isolation__commit_refusal_retried): each is a failure like an UPDATE's
 * (inside.h: after the k-th failure wait between d/2 and d), so two
 * waits, the first of base 20 ms (10 to 20), the second of 40 (20 to
 * 40). A COMMIT refusal retried at once, or one that does not move the
 * doubling on, asks for another. */
static void isolation__commit_refusal_waits_its_turn(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_commit_refusals(t);
	struct waits w = { 0 };
	struct inside_retry policy = { 5, 20, 1000 };
	struct lt_sleeps asked;
	int attempts = -1;
	kit_db_set_hook(db, time_waits, &w);
	lt_sleeps_watch(&asked, 10 * policy.cap_ms, 2000);
	lt_sleeps_deadline(30, "isolation__commit_refusal_waits_its_turn");
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	lt_sleeps_unwatch();
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && attempts == 3 && w.n == 2, "backoff", "the first two COMMITs failed "
	          "to serialize: expected 0 after 3 attempts with 2 waits, got %d after %d "
	          "attempts, %d waits", rc, attempts, w.n);
	for (int k = 0; k < w.n && k < 2; k++) {
		double d = policy.base_ms * (double)(1 << k);
		double v = w.asked[k] > 0 ? w.asked[k] : w.ms[k];
		lt_expect(v >= d / 2 - 0.001 && v <= d + 5, "backoff", "the wait after COMMIT "
		          "refusal %d %s %.3f ms; expected %.0f to %.0f ms (d = %.0f). A COMMIT that "
		          "fails to serialize is a failure like an UPDATE's (inside.h): the next "
		          "attempt waits its turn, and the doubling goes on from it%s", k + 1,
		          w.asked[k] > 0 ? "asked for" : "took", v, d / 2, d, d,
		          v < d / 2 ? " (was the attempt begun again at once?)" : "");
	}
}

/* Waits of a second to weeks, asked for and never slept: base 1 ms, cap
 * INT_MAX ms (24.8 days), 70 planted failures, so the d are 2^(k-1) ms
 * for k = 1..31 (1 ms to 12.4 days) and then the cap, 39 times: a
 * doubling kept in 64 bits without a stop (1 << (k - 1) in an int64_t or
 * a uint64_t) turns negative at k = 64 and wraps back to 1 ms at k = 65
 * (a shift by 64 or more is undefined; x86 takes the count mod 64), so
 * one of the later waits asks for nothing or for a millisecond. Then
 * base 2^30 ms and 40 failures: d is the cap from the 2nd on, and base
 * x 2^(k-1) passes 2^63 at k = 34, so a 64-bit doubling whose exponent
 * stops at 40 or 62 ("far past any cap") overflows all the same. Every request is
 * cut at once (sleeps.h, no sleep over 0 ms), so the check takes no
 * time; it judges what each gap asked: between d/2 and d, as a timespec
 * the kernel takes (tv_nsec in 0..999999999; any other is refused with
 * EINVAL and the wait is none). A wait kept in 32-bit ints (ms x 10^6
 * past 2.1 s), a doubling whose exponent stops short of where base x
 * 2^(k-1) passes every int cap, or one that turns a step early or late,
 * asks for something else. A correct solution never fails it: no draw
 * leaves [d/2, d]. */
/* One round: `fail` planted failures (the sequence set so that the next
 * `fail` attempts fail), base_ms `base`, cap INT_MAX. */
static void weeks_round(struct labtest *t, struct kit_db *db, int fail, int base, int cap,
                        bool interrupt_sleep)
{
	char sql[80];
	snprintf(sql, sizeof sql, "SELECT setval('attempts', %d, false)", 71 - fail);
	labtest_exec(t, sql);
	struct waits w = { 0 };
	struct inside_retry policy = { fail + 1, base, cap };
	struct lt_sleeps asked;
	int attempts = -1;
	kit_db_set_hook(db, time_waits, &w);
	lt_sleeps_watch(&asked, 0, 0);
	asked.interrupt_sleep = interrupt_sleep;
	/* each wait, never slept, still moves the thread's clock on by what
	 * it asked: the call sees the days of its waits pass */
	asked.advance_clock = true;
	lt_sleeps_deadline(60, "isolation__waits_of_seconds_to_weeks");
	int rc = inside_count_retrying(db, 1, "SERIALIZABLE", &policy, &attempts);
	lt_sleeps_unwatch();
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && attempts == fail + 1 && w.n == fail, "limit", "expected 0 after %d "
	          "attempts with %d waits (%d planted failures, max_attempts %d, base %d ms), got %d "
	          "after %d attempts, %d waits%s", fail + 1, fail, fail, fail + 1, base, rc, attempts,
	          w.n, rc == INSIDE_GAVE_UP && attempts < fail + 1 ? " (the clock had moved on "
	          "by the waits asked: does the call also give up after some time? inside.h "
	          "gives up after max_attempts failures, however long their waits)" : "");
	lt_expect(asked.malformed == 0, "backoff", "%d of the waits (base %d ms) asked nanosleep() "
	          "for a timespec the kernel refuses (EINVAL, no wait at all), the first { %lld s, "
	          "%lld ns }: tv_nsec must be 0 to 999999999, tv_sec not negative; is ms x 10^6 "
	          "computed in an int (it overflows past 2.1 s), the whole wait put in tv_nsec, or "
	          "the doubling overflowed to a negative number?", asked.malformed, base,
	          asked.first_malformed_sec, asked.first_malformed_nsec);
	/* usleep() takes a useconds_t, 32 bits: a wait of more than 2^32 us
	 * (71.6 minutes) handed to it wraps round to a short one. No right
	 * wait whose d / 2 is past that asks for less. */
	const double wrap_ms = 4294967.296;
	for (int k = 0; k < w.n; k++) {
		double d = ldexp((double)base, k);
		d = d > policy.cap_ms ? policy.cap_ms : d;
		if (d / 2 <= wrap_ms || w.asked[k] >= wrap_ms)
			continue;
		lt_expect(false, "backoff", "the wait after failure %d (d = %.1f ms, so %.1f to %.1f "
		          "ms: over 71.6 minutes) asked for %.3f ms, less than 2^32 microseconds "
		          "(4,294,967.296 ms)%s: a wait over that, kept in 32 bits of microseconds, "
		          "wraps round to a short one. usleep() takes a useconds_t, which is 32 bits "
		          "(inside.h): sleep a wait that long with nanosleep() (or its whole seconds "
		          "with sleep())", k + 1, d, d / 2, d, w.asked[k], asked.usleep_calls > 0 ?
		          ", and the code slept with usleep()" : "");
		break;
	}
	/* the waits whose d is a minute or more: uniform between d / 2 and
	 * d, 30 of them have one above 0.85 d but with p = 0.7^30 = 2e-5,
	 * and one below 0.7 d but with p = 0.6^30 = 2e-7 */
	int longs = 0, tops = 0, lows = 0;
	for (int k = 0; k < w.n; k++) {
		double d = ldexp((double)base, k);
		d = d > policy.cap_ms ? policy.cap_ms : d;
		if (d < 60e3)
			continue;
		longs++;
		tops += w.asked[k] > 0.85 * d;
		lows += w.asked[k] < 0.7 * d;
	}
	lt_expect(longs < 30 || (tops > 0 && lows > 0), "backoff", "of the %d waits whose d was a "
	          "minute or more (base %d ms, cap %d ms), %d asked above 0.85 d and %d below 0.7 d: "
	          "a wait drawn uniformly between d / 2 and d is in each of those about one time in "
	          "three. Does the random part come from a generator with a small range (rand() and "
	          "rand_r() stop at 2^31 - 1, which as nanoseconds is 2.1 s) taken modulo the span? "
	          "Then a long d's waits all fall just above d / 2. Draw a fraction in [0, 1) and "
	          "scale the span by it", longs, base, cap, tops, lows);
	for (int k = 0; k < w.n; k++) {
		double d = ldexp((double)base, k);  /* base x 2^(k-1), k counted from 1 */
		d = d > policy.cap_ms ? policy.cap_ms : d;
		double v = w.asked[k];
		if (v >= d / 2 - 0.001 && v <= d + 0.001)
			continue;
		if (asked.sleeps_interrupted > 0 && v < d / 2) {
			lt_expect(false, "backoff", "the wait after failure %d (d = %.1f ms) asked for "
			          "%.3f ms once a sleep() of its had returned with its seconds unslept, as "
			          "it does when a signal wakes it: what sleep() returns is the seconds "
			          "left, to be slept again (or sleep with nanosleep() and go on with "
			          "its remainder after EINTR)", k + 1, d, v);
			break;
		}
		if (base == cap) {
			lt_expect(false, "backoff", "the wait after failure %d asked for %.3f ms; expected "
			          "%.1f to %.1f ms (base and cap %d ms: d = %d ms every time): is the wait "
			          "drawn in whole milliseconds from d / 2 rounded down? For d = %d that "
			          "goes below d / 2 about every other wait (for 1 ms a wait of 0: a retry "
			          "at once); draw it as a real number (or in microseconds) between d / 2 "
			          "and d", k + 1, v, d / 2, d, cap, cap, cap);
			break;
		}
		lt_expect(false, "backoff", "the wait after failure %d asked for %.3f ms (%.3g days); "
		          "expected %.1f to %.1f ms (d = min(cap %d, %d x 2^%d) = %.1f): is the "
		          "doubling kept in a type that holds it (%d x 2^%d), and does it stop only "
		          "once base x 2^(k-1) is past the cap?%s", k + 1, v, v / 86400e3, d / 2, d,
		          policy.cap_ms, base, k, d, base, k, k >= 33 ? " A shift of 63 or more, or "
		          "base x 2^(k-1) past 2^63, turns a 64-bit number negative or (a shift past "
		          "63 is undefined) back to base_ms: stop the exponent once the product is "
		          "past every int cap" : "");
		break;
	}
}

static void isolation__waits_of_seconds_to_weeks(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	plant_failures(t, 70);
	/* every sleep() of the first round is woken by a "signal" before it
	 * sleeps (sleeps.h): the seconds it returns must be slept again */
	weeks_round(t, db, 70, 1, INT_MAX, true);
	/* base 2^30 ms (12.4 days): d is the cap from the 2nd failure on,
	 * and base x 2^(k-1) passes 2^63 at k = 34 */
	weeks_round(t, db, 40, 1 << 30, INT_MAX, false);
	/* d of 1 ms and of 3 ms, 40 waits each: an odd d's half is not a
	 * whole number of ms, and a draw in whole ms that starts from d / 2
	 * rounded down asks below it about every other wait (1 ms: a wait of
	 * 0, a retry at once) */
	weeks_round(t, db, 40, 1, 1, false);
	weeks_round(t, db, 40, 3, 3, false);
}

/* Jitter, in the processes and threads of a real deployment: workers
 * started at the same moment, some forked from one parent that has
 * already retried once itself (its generator seeded, and copied into
 * every child by fork()), some threads of one process. Each of four
 * workers (two forked processes started at the beginning of one
 * wall-clock second, two threads of this process) makes one call on a
 * row of its own that fails to serialize 12 times, with d = 80 ms every
 * time. The contract asks each wait to be uniform between d/2 and d,
 * drawn independently in every worker.
 *
 * The verdict is taken on the waits the code asked for, not on how long
 * the sleeps took: the test program sees every nanosleep(),
 * clock_nanosleep(), usleep() and sleep() call (sleeps.h) and adds up
 * what each gap between two attempts asked. Those are the numbers the
 * generator chose, to the nanosecond, whatever the machine's load does
 * to the sleeps: two workers that drew the same numbers asked for
 * bit-identical waits. Only when some gap asked for nothing the test
 * program can see (a sleep by select(), poll() or a busy loop) are the
 * timed gaps judged instead, as the comment at the end says.
 *
 * What is asserted on the asked waits, and how often a correct solution
 * fails it (binomial tails):
 *   - no wait below 0.48 d or at d or above     never
 *   - at least 5 of the 48 below 0.7 d          P(false failure) = 9.9e-7
 *     (a uniform wait is there 40% of the time; a narrow jitter never)
 *   - at least 1 of the 48 above 0.85 d         P(false failure) = 3.6e-8
 *     (0.7^48: a jitter that never reaches the top of the range, such
 *     as d/2 + u x d/4, never)
 *   - in each pair (the two processes, the two threads), fewer than 5
 *     of the 12 k-th waits alike (within 1 us)  P = 2.5e-19 per pair
 *     (two independent waits are alike with p = 2 x 0.001 / 40 = 5e-5)
 * and how often a wrong one passes: a generator whose workers share
 * their numbers (seeded from the clock's second, from the process id in
 * threads, or left as the parent had it when it forked) asks for the
 * same 12 waits in both workers of a pair: never, at any load. One seeded
 * from the clock's second gives two workers different numbers only when
 * their first draws fall in different seconds; then (and only then) the
 * round runs again, up to three rounds, each released early in a second.
 *
 * With timed gaps (the fallback) the same thresholds hold except that
 * waits are alike within 0.5 ms, and a wait may run long under load:
 * each pair's false failure is 6.5e-6, and a wrong generator passes when
 * the scheduler moves 8 of its 12 waits by more than 0.5 ms, which a
 * heavily loaded machine does. */
#define JITTER_WAITS 12
#define JITTER_D 80.0
#define JITTER_ROUNDS 3

struct jitter_worker {
	const char *url;
	int64_t row;
	double ms[JITTER_WAITS];     /* timed gaps */
	double asked[JITTER_WAITS];  /* what each gap asked to sleep */
	int64_t first_sec;           /* the wall-clock second of its first sleep */
	struct timespec clock_rt, clock_mono;   /* where its clocks stand until then */
	int n, rc, attempts;
	bool alone;                  /* a process alone in its container: pid 1, its clock live */
	pthread_t th;
	pthread_barrier_t *go;       /* a thread's: connected, then wait here */
};

/* One worker's call on its own row, on db (closed here), its waits
 * timed by a hook and what it asked to sleep seen by a watch. */
static void jitter_call(struct jitter_worker *w, struct kit_db *db)
{
	struct waits wt = { 0 };
	struct lt_sleeps asked;
	struct inside_retry policy = { JITTER_WAITS + 1, (int)JITTER_D, (int)JITTER_D };
	if (w->rc == 0) {
		kit_db_set_hook(db, time_waits, &wt);
		lt_sleeps_watch(&asked, JITTER_D, 10 * JITTER_WAITS * JITTER_D);
		if (!w->alone)
			lt_sleeps_freeze_clock(&w->clock_rt, &w->clock_mono);
		w->rc = inside_count_retrying(db, w->row, "SERIALIZABLE", &policy, &w->attempts);
		lt_sleeps_unwatch();
		kit_db_set_hook(db, NULL, NULL);
		w->first_sec = asked.first_sec;
	}
	kit_db_close(db);
	w->n = wt.n < JITTER_WAITS ? wt.n : JITTER_WAITS;
	memcpy(w->ms, wt.ms, (size_t)w->n * sizeof w->ms[0]);
	memcpy(w->asked, wt.asked, (size_t)w->n * sizeof w->asked[0]);
}

/* A thread worker: it connects first, then waits at the barrier with the
 * forked workers' go, so its first draw falls early in the same
 * wall-clock second as theirs, however long connecting took. */
static void *jitter_thread(void *arg)
{
	struct jitter_worker *w = arg;
	struct kit_db *db;
	w->rc = kit_db_open(&db, w->url);
	pthread_barrier_wait(w->go);
	jitter_call(w, db);
	return NULL;
}

/* Rows 10..14 fail to serialize on their first 12 updates each: one
 * sequence per row counts the attempts (no rollback undoes it). */
static void plant_row_failures(struct labtest *t)
{
	char sql[700];
	for (int r = 10; r <= 14; r++) {
		snprintf(sql, sizeof sql, "INSERT INTO counters (id) VALUES (%d);"
		         " CREATE SEQUENCE attempts_%d", r, r);
		labtest_exec(t, sql);
	}
	snprintf(sql, sizeof sql,
	         "CREATE FUNCTION flaky_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
	         " IF nextval(format('attempts_%%s', NEW.id)) <= %d THEN RAISE EXCEPTION"
	         " 'could not serialize access (planted by the check)'"
	         " USING ERRCODE = 'serialization_failure'; END IF; RETURN NEW; END $$",
	         JITTER_WAITS);
	labtest_exec(t, sql);
	labtest_exec(t, "CREATE TRIGGER flaky_row BEFORE UPDATE ON counters"
	                " FOR EACH ROW WHEN (NEW.id BETWEEN 10 AND 14) EXECUTE FUNCTION flaky_row()");
}

/* A forked worker: it connects, says so on ready, waits for a byte on
 * go, makes its call and writes its worker record to out. */
struct jitter_child {
	pid_t pid;
	int ready, go, out;          /* the parent's ends of three pipes */
};

static void jitter_fork(struct jitter_child *c, struct jitter_worker *w)
{
	int ready[2], go[2], out[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(out), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		struct kit_db *db;
		char b = 0;
		w->rc = kit_db_open(&db, w->url);
		if (w->alone)
			lt_pid_is_one();
		if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(1);
		jitter_call(w, db);
		_exit(write(out[1], w, sizeof *w) == (ssize_t)sizeof *w ? 0 : 1);
	}
	close(ready[1]);
	close(go[0]);
	close(out[1]);
	c->ready = ready[0];
	c->go = go[1];
	c->out = out[0];
}

/* How many of the two workers' k-th waits are alike: within tol ms, of
 * the asked waits or (exact false) of the timed ones. */
static int alike(const struct jitter_worker *a, const struct jitter_worker *b, bool exact)
{
	int n = 0;
	for (int k = 0; k < JITTER_WAITS; k++)
		n += exact ? fabs(a->asked[k] - b->asked[k]) <= 0.001 : fabs(a->ms[k] - b->ms[k]) <= 0.5;
	return n;
}

/* Whether a run of 4 consecutive asked waits of one worker comes again
 * later in the same worker (*at and *again: where). Independent draws do
 * that almost never: even drawn in whole milliseconds (41 values from 40
 * to 80) each of the 36 pairs of runs in a worker matches with p = 41^-4,
 * so a correct solution fails with P <= 4 x 36 / 41^4 = 5.1e-5, and
 * drawn to the microsecond or finer, never in practice. A generator that
 * comes round after 8 draws (xorshift without its left shift) repeats
 * waits 1-4 as 9-12, and one seeded again on every call from the clock's
 * second asks the same wait 12 times: both fail every time. */
static bool repeats_itself(const struct jitter_worker *w, int *at, int *again)
{
	for (int i = 0; i + 3 < JITTER_WAITS; i++)
		for (int j = i + 1; j + 3 < JITTER_WAITS; j++) {
			int same = 0;
			for (int k = 0; k < 4; k++)
				same += fabs(w->asked[i + k] - w->asked[j + k]) <= 1e-6;
			if (same == 4) {
				*at = i;
				*again = j;
				return true;
			}
		}
	return false;
}

static int by_ms(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One round: the four workers on rows 11..14, each failing 12 times
 * from the start, let go together early in a wall-clock second. */
static void jitter_round(struct labtest *t, struct jitter_worker w[4], bool alone)
{
	char sql[200];
	for (int r = 11; r <= 14; r++) {
		snprintf(sql, sizeof sql, "SELECT setval('attempts_%d', 1, false)", r);
		labtest_exec(t, sql);
	}
	pthread_barrier_t go;
	assert_int_equal(pthread_barrier_init(&go, NULL, 3), 0);
	/* Every worker's clock stands at one moment until its first sleep
	 * (sleeps.h): their first failures came in one tick of the clock, as
	 * the failures of writers colliding on one row do. */
	struct timespec rt, mono;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	for (int i = 0; i < 4; i++)
		w[i] = (struct jitter_worker){ .url = t->url, .row = 11 + i, .rc = -99, .go = &go,
		                               .first_sec = -1, .clock_rt = rt, .clock_mono = mono,
		                               .alone = alone && i < 2 };

	/* Connected first, then let go together early in a wall-clock
	 * second: a seed taken from time() is then the same in both children,
	 * as in workers a supervisor starts at once. */
	struct jitter_child child[2];
	char byte = 1;
	for (int i = 0; i < 2; i++)
		jitter_fork(&child[i], &w[i]);
	for (int i = 2; i < 4; i++)
		pthread_create(&w[i].th, NULL, jitter_thread, &w[i]);
	for (int i = 0; i < 2; i++)
		lt_expect(read(child[i].ready, &byte, 1) == 1, NULL, "a forked worker died before "
		          "it connected");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_nsec > 500000000L)
		util_sleep((1e9 - (double)now.tv_nsec) / 1e9 + 0.002);
	for (int i = 0; i < 2; i++)
		lt_expect(write(child[i].go, &byte, 1) == 1, NULL, "a forked worker died before it "
		          "started");
	pthread_barrier_wait(&go);
	for (int i = 2; i < 4; i++)
		pthread_join(w[i].th, NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < 2; i++) {
		struct jitter_worker got;
		ssize_t r = read(child[i].out, &got, sizeof got);
		close(child[i].ready);
		close(child[i].go);
		close(child[i].out);
		waitpid(child[i].pid, NULL, 0);
		if (r == (ssize_t)sizeof got)
			w[i] = got;
	}
	for (int i = 0; i < 4; i++)
		if (w[i].rc != 0 || w[i].attempts != JITTER_WAITS + 1 || w[i].n != JITTER_WAITS)
			lt_fail(__FILE__, __LINE__, "backoff", "expected 0 after 13 attempts with 12 "
			        "waits between them (12 planted failures), got %d after %d attempts, %d "
			        "waits seen, in the %s", w[i].rc, w[i].attempts, w[i].n,
			        i < 2 ? "forked worker" : "thread");
}

static void isolation__backoff_has_jitter(void **state)
{
	struct labtest *t = *state;
	struct jitter_worker w[4];
	make_counter(t);
	plant_row_failures(t);
	struct inside_retry once = { 2, 1, 1 };
	int parent_rc = inside_count_retrying(labtest_db(t), 10, "SERIALIZABLE", &once, NULL);
	lt_expect(parent_rc == INSIDE_GAVE_UP, "limit", "expected INSIDE_GAVE_UP from 2 attempts "
	          "on a row that fails 12 times, got %d", parent_rc);

	bool exact = true;
	int procs = 0, threads = 0;
	for (int round = 1; round <= JITTER_ROUNDS; round++) {
		jitter_round(t, w, false);
		exact = true;
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < JITTER_WAITS; k++)
				exact = exact && w[i].asked[k] > 0;
		procs = alike(&w[0], &w[1], exact);
		threads = alike(&w[2], &w[3], exact);
		/* Different numbers in a pair that started its draws in two
		 * different seconds say nothing of a seed from the second. */
		bool straddled = (procs < 5 && w[0].first_sec != w[1].first_sec) ||
		                 (threads < 5 && w[2].first_sec != w[3].first_sec);
		if (!exact || !straddled)
			break;
		lt_say("round %d: a pair of workers drew its first wait in two different "
		       "wall-clock seconds; again", round);
	}
	if (!exact)
		lt_say("some gap between attempts asked for no sleep this program sees "
		       "(nanosleep, clock_nanosleep, usleep, sleep): the timed gaps are judged, "
		       "which a loaded machine blurs");

	double all[4 * JITTER_WAITS];
	int n = 0, below_half = 0, below_07 = 0, over_d = 0, above_085 = 0;
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < JITTER_WAITS; k++) {
			double v = exact ? w[i].asked[k] : w[i].ms[k];
			all[n++] = v;
			below_half += v < 0.48 * JITTER_D;
			below_07 += v < 0.7 * JITTER_D;
			above_085 += v > 0.85 * JITTER_D;
			over_d += exact && v >= JITTER_D + 0.001;
		}
	qsort(all, (size_t)n, sizeof all[0], by_ms);
	double median = (all[n / 2 - 1] + all[n / 2]) / 2;
	const char *seen = exact ? "asked" : "timed";
	lt_expect(below_half == 0, "backoff", "expected every wait to be at least d/2 = 40 ms, got "
	          "%d of 48 shorter (the shortest %.1f ms, %s): the random part replaces the wait "
	          "instead of adding to its first half", below_half, all[0], seen);
	lt_expect(below_07 >= 5, "backoff", "expected at least 5 of the 48 waits between d/2 and "
	          "0.7 d (a uniform wait is there 40%% of the time), got %d: the waits are not "
	          "spread over d/2 .. d (the shortest %.1f ms, the median %.1f ms, %s)", below_07,
	          all[0], median, seen);
	lt_expect(above_085 >= 1, "backoff", "expected at least 1 of the 48 waits between 0.85 d "
	          "and d (a uniform wait is there 15%% of the time), got none: the waits stop short "
	          "of d (the longest %.1f ms, %s)", all[n - 1], seen);
	lt_expect(over_d == 0 && median < JITTER_D, "backoff", "expected every wait below d = "
	          "80 ms, got %d of 48 asked at d or over and a median of %.1f ms (%s): the waits "
	          "are longer than the contract's d", over_d, median, seen);
	lt_expect(procs < 5, "jitter-seed", "expected the waits of two worker processes started "
	          "together to differ, got %d of their 12 waits alike (%s; independent ones "
	          "almost never are): both drew the same random numbers, so the generator's seed "
	          "is something they share (the clock's second, an address, the state the parent "
	          "had when it forked, or the clock alone: read to the nanosecond, it is the same "
	          "for workers whose failures came in one tick, as they did here)", procs, exact ? "asked to the microsecond" :
	          "timed within 0.5 ms");
	lt_expect(threads < 5, "jitter-seed", "expected the waits of two threads started together "
	          "to differ, got %d of their 12 waits alike (%s): both drew the same random "
	          "numbers (a seed from the clock or the process id alone is the same in every "
	          "thread whose failures came in one tick of the clock, as they did here)", threads, exact ? "asked to the microsecond" : "timed within 0.5 ms");
	int worker = -1, at = -1, again = -1;
	for (int i = 0; exact && i < 4 && worker < 0; i++)
		if (repeats_itself(&w[i], &at, &again))
			worker = i;
	lt_expect(worker < 0, "jitter-seed", "expected each worker's 12 waits to be drawn "
	          "independently, got the %s's waits %d to %d asked again as waits %d to %d "
	          "(%.3f, %.3f, %.3f, %.3f ms): its numbers come round again, so the generator "
	          "repeats itself after a few draws (a step of xorshift left out), or is seeded "
	          "again on every call from something that has not changed (the clock's second)",
	          worker < 2 ? "forked worker" : "thread", at + 1, at + 4, again + 1, again + 4,
	          worker < 0 ? 0 : w[worker].asked[at], worker < 0 ? 0 : w[worker].asked[at + 1],
	          worker < 0 ? 0 : w[worker].asked[at + 2], worker < 0 ? 0 : w[worker].asked[at + 3]);

	/* Two workers that each run alone in a container of their own: the
	 * process id is 1 in both (getpid() says so here), and so is the thread
	 * id of each one's only thread (gettid()), and their clocks
	 * run as clocks do, so they read the same second but not the same
	 * nanosecond. A seed of the process id and the second is then the
	 * same in both; one that takes the clock to the nanosecond, or the
	 * system's entropy (getrandom()), is not. */
	int alone = 0;
	for (int round = 1; exact && round <= JITTER_ROUNDS; round++) {
		jitter_round(t, w, true);
		alone = alike(&w[0], &w[1], true);
		if (alone < 5 || w[0].first_sec == w[1].first_sec)
			break;
	}
	lt_expect(alone < 5, "jitter-seed", "expected the waits of two worker processes that each "
	          "run alone in a container (getpid() and gettid() are 1 in both, as they are there), "
	          "started in one second, to differ, got %d of their 12 waits alike (asked to the "
	          "microsecond): the seed is something they share, the process or thread id and "
	          "the clock's second (a thread id is unique on one machine, not in a container's "
	          "PID namespace). Take "
	          "the clock to the nanosecond into the seed as well (or the system's entropy, "
	          "getrandom())", alone);
}

/* ---- §5 Commits ---- */

static int show_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 32, "%s", ncols > 0 && values[0] ? values[0] : "");
	return 0;
}

/* The same into 200 bytes. */
static int show_long_text(void *arg, int ncols, const char *const *values)
{
	snprintf(arg, 200, "%s", ncols > 0 && values[0] ? values[0] : "");
	return 0;
}

/* A session that did not start with the default: what the call changes
 * for its own transaction must be gone after it, on success and on the
 * error path (a missing row) alike, with no transaction left open. */
static void commits__async_only_for_counter(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	char setting[32] = "";
	make_counter(t);
	labtest_exec(t, "SET synchronous_commit = remote_write");
	/* What the counter's UPDATE runs under: a trigger copies every
	 * setting as the UPDATE sees it, once for a plain UPDATE of row 3
	 * (the session as it is) and once inside the call. */
	lt_session_own_values(t, db);
	watch_settings(t);
	char session[LT_SESSION_LEN];
	lt_session(t, db, session, sizeof session);

	lt_expect_int(inside_count_async(db, 1), 0, "inside_count_async()");
	lt_expect_int(counter(t), 1, "counter after one inside_count_async()");
	char other[200] = "";
	int64_t seen = settings_changed(t, db, "synchronous_commit", other);
	lt_expect(seen == 2 && other[0] == '\0', "local", "the counter's UPDATE inside "
	          "inside_count_async() ran with other settings than the session's besides "
	          "synchronous_commit: %s%s. The call gives up waiting for the disk, nothing else: "
	          "a SET LOCAL lock_timeout or statement_timeout makes this one writer of the hot "
	          "row give up (KIT_DB_BUSY) where every other one waits its turn", other,
	          seen == 2 ? "" : " (the settings were not seen twice)");
	kit_db_query(db, "SHOW synchronous_commit", 0, NULL, show_text, setting);
	lt_expect(strcmp(setting, "remote_write") == 0, "local",
	          "expected the connection's synchronous_commit still remote_write (as it was "
	          "before the call) after it, got %s", setting);

	lt_expect_int(inside_count_async(db, 2), INSIDE_NO_ROW,
	              "inside_count_async() of a missing row");
	kit_db_query(db, "SHOW synchronous_commit", 0, NULL, show_text, setting);
	lt_expect(strcmp(setting, "remote_write") == 0, "local",
	          "expected synchronous_commit still remote_write after a call that failed (a "
	          "missing row), got %s: the setting is restored on the success path only", setting);
	lt_expect(kit_db_exec(db, "BEGIN", 0, NULL) == 0 && kit_db_rollback(db) == 0, "local",
	          "expected no transaction left open by a call that failed: %s", labtest_why(db));
	/* and nothing else of the session changed either: a lock_timeout
	 * "so a like does not queue long behind the hot row", set with a
	 * plain SET (kit_db_set_lock_timeout sends one), stays for every later
	 * transaction of the pooled connection */
	lt_session_unchanged(t, db, session, "inside_count_async() of a row and of a missing row",
	                     "local");
}

/* The same on a session as a pool hands it out, with no trigger on
 * counters: as the kit's test connections open (synchronous_commit off,
 * from the connection's options), then with synchronous_commit on. After
 * each inside_count_async() the session is as it was, setting and source
 * alike: a SET that is never put back (or one made only when the call
 * cannot see itself watched) stays for every later transaction of the
 * pooled connection. */
static void commits__async_on_a_plain_session(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	char session[LT_SESSION_LEN], setting[32] = "";
	lt_session(t, db, session, sizeof session);
	lt_expect_int(inside_count_async(db, 1), 0, "inside_count_async() on a plain session");
	lt_session_unchanged(t, db, session, "inside_count_async() on a session as it opened, "
	                     "no trigger on counters", "local");
	labtest_exec(t, "SET synchronous_commit = on");
	lt_session(t, db, session, sizeof session);
	lt_expect_int(inside_count_async(db, 1), 0, "inside_count_async() with synchronous_commit on");
	kit_db_query(db, "SHOW synchronous_commit", 0, NULL, show_text, setting);
	lt_expect(strcmp(setting, "on") == 0, "local", "after inside_count_async() on a session "
	          "with synchronous_commit on and no trigger on counters, it is %s: every later "
	          "commit of the pooled connection gives up waiting for the disk (SET LOCAL lasts "
	          "for the call's own transaction only)", setting);
	lt_session_unchanged(t, db, session, "inside_count_async() with synchronous_commit on, no "
	                     "trigger on counters", "local");
	lt_expect_int(counter(t), 2, "counter after two inside_count_async()");
}

/* SQLite's counterpart of the check above: its commits already do not
 * wait for the disk (WAL, synchronous = NORMAL), so the call is a plain
 * UPDATE; a PRAGMA synchronous = OFF "to match" outlives the call and
 * makes every later commit of the connection give up the WAL's own
 * sync at checkpoints too. */
static void commits__async_leaves_sqlite_sync(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	labtest_exec(t, "PRAGMA synchronous = FULL");
	int64_t before = labtest_int(t, "PRAGMA synchronous");
	char session[LT_SESSION_LEN];
	lt_session_own_values(t, db);
	lt_session(t, db, session, sizeof session);

	lt_expect_int(inside_count_async(db, 1), 0, "inside_count_async()");
	lt_expect_int(inside_count_async(db, 2), INSIDE_NO_ROW, "inside_count_async() of a missing row");
	int64_t after = labtest_int(t, "PRAGMA synchronous");
	lt_expect(after == before, "local",
	          "the connection's PRAGMA synchronous was %" PRId64 " (FULL) before two calls of "
	          "inside_count_async() and %" PRId64 " after: a PRAGMA outlives the call, for every "
	          "later commit of the connection; on SQLite in WAL mode with synchronous = NORMAL "
	          "the commit already does not wait, so the call is a plain UPDATE", before, after);
	lt_expect(kit_db_exec(db, "BEGIN", 0, NULL) == 0 && kit_db_rollback(db) == 0, "local",
	          "expected no transaction left open by the calls: %s", labtest_why(db));
	/* nor any other setting: the kit's busy wait too (kit_db_set_lock_timeout) */
	lt_session_unchanged(t, db, session, "inside_count_async() of a row and of a missing row",
	                     "local");
}

static int64_t wal_syncs(struct labtest *t)
{
	labtest_exec(t, "SELECT pg_stat_force_next_flush()");
	return labtest_int(t, "SELECT wal_sync FROM pg_stat_wal");
}

/* Whether each commit of inside_count_async() skips its wait for the
 * flush, read where it is decided: a deferred constraint trigger on
 * counters runs at COMMIT, inside the committing transaction, and notes
 * the synchronous_commit it commits under ('off': the COMMIT returns
 * before its WAL is flushed). 100 calls, 100 commits noted 'off'; and
 * the session's own synchronous_commit still on before and after (a call
 * that set it off for the whole session makes every later commit
 * async). pg_stat_wal counts the syncs of the whole server, which
 * another client's commits move both ways (its flushes add syncs, and
 * one of its flushes may carry this check's commits: beside a busy
 * neighbour 100 durable commits have shown 14 syncs, and an async half
 * 489), so the syncs of 100 durable commits and of the 100 calls are
 * printed beside the verdict, as a measurement, not taken for it. */
static void commits__async_skips_flush(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	labtest_exec(t, "SET synchronous_commit = on");
	labtest_exec(t, "CREATE TABLE commit_modes (mode TEXT NOT NULL)");
	labtest_exec(t, "CREATE FUNCTION note_commit_mode() RETURNS trigger LANGUAGE plpgsql AS "
	                "$$BEGIN INSERT INTO commit_modes VALUES "
	                "(current_setting('synchronous_commit')); RETURN NULL; END$$");
	labtest_exec(t, "CREATE CONSTRAINT TRIGGER note_commit_mode AFTER UPDATE ON counters "
	                "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION note_commit_mode()");

	int64_t s0 = wal_syncs(t);
	for (int i = 0; i < 100; i++)
		labtest_exec(t, "UPDATE counters SET n = n + 1 WHERE id = 1");
	int64_t s1 = wal_syncs(t);
	labtest_exec(t, "DELETE FROM commit_modes");
	int failed = 0;
	for (int i = 0; i < 100; i++)
		failed += inside_count_async(db, 1) != 0;
	int64_t s2 = wal_syncs(t);
	int64_t noted = labtest_int(t, "SELECT count(*) FROM commit_modes");
	int64_t waited = labtest_int(t, "SELECT count(*) FROM commit_modes WHERE mode <> 'off'");
	int64_t still_on = labtest_int(t, "SELECT (current_setting('synchronous_commit') = 'on')::int");
	lt_say("WAL syncs (pg_stat_wal, the whole server's): %" PRId64 " for 100 durable commits, %"
	       PRId64 " for 100 calls of inside_count_async() (ratio %.2f; another client's commits "
	       "move both)", s1 - s0, s2 - s1, s1 > s0 ? (double)(s2 - s1) / (double)(s1 - s0) : 0.0);
	lt_expect(failed == 0, NULL, "%d of 100 calls of inside_count_async() failed: %s", failed,
	          labtest_why(db));
	lt_expect(noted >= 100 && waited == 0, "async", "of the commits of 100 calls of "
	          "inside_count_async(), %" PRId64 " were noted at COMMIT (a deferred trigger on "
	          "counters), and %" PRId64 " of them ran with synchronous_commit other than off, "
	          "each waiting for its WAL flush: the counter's transaction sets it off for itself "
	          "(SET LOCAL synchronous_commit = off, inside the transaction, before COMMIT)",
	          noted, waited);
	lt_expect(still_on == 1, "local", "after 100 calls of inside_count_async() the session's "
	          "synchronous_commit is no longer on: the setting outlived the call, and every later "
	          "commit of the connection skips its flush. Use SET LOCAL inside the counter's "
	          "transaction");
	lt_expect_int(counter(t), 200, "counter after 100 + 100 increments");

	/* A session the caller set (SET, its own, not the server's or the
	 * role's) to another level that waits for the flush: local (the
	 * local flush only) and remote_write (a standby's write, and the
	 * local flush). "Not on, so already off" is wrong for both: each
	 * commit still waits for the WAL to reach the disk. 20 calls each,
	 * each noted 'off' at COMMIT, and the session's own level back
	 * after them. */
	static const char *const levels[] = { "local", "remote_write" };
	for (int l = 0; l < 2; l++) {
		char sql[80], level[32] = "";
		snprintf(sql, sizeof sql, "SET synchronous_commit = %s", levels[l]);
		labtest_exec(t, sql);
		labtest_exec(t, "DELETE FROM commit_modes");
		failed = 0;
		for (int i = 0; i < 20; i++)
			failed += inside_count_async(db, 1) != 0;
		noted = labtest_int(t, "SELECT count(*) FROM commit_modes");
		char modes[200] = "";
		kit_db_query(db, "SELECT string_agg(DISTINCT mode, ', ') FROM commit_modes WHERE mode <> "
		             "'off'", 0, NULL, show_long_text, modes);
		waited = labtest_int(t, "SELECT count(*) FROM commit_modes WHERE mode <> 'off'");
		kit_db_query(db, "SHOW synchronous_commit", 0, NULL, show_text, level);
		lt_expect(failed == 0, NULL, "%d of 20 calls of inside_count_async() on a session at "
		          "synchronous_commit = %s failed: %s", failed, levels[l], labtest_why(db));
		lt_expect(noted >= 20 && waited == 0, "async", "on a session at synchronous_commit = "
		          "%s (set by the caller with SET), %" PRId64 " of the commits of 20 calls of "
		          "inside_count_async() were noted at COMMIT, and %" PRId64 " of them ran with "
		          "synchronous_commit %s, each waiting for its WAL flush: only off gives the wait "
		          "up (local and remote_write wait for the local flush too). Is SET LOCAL "
		          "synchronous_commit = off sent only when the session's value is on (\"otherwise "
		          "it is off already\")? Send it in every counter transaction", levels[l], noted,
		          waited, modes[0] ? modes : "other than off");
		lt_expect(strcmp(level, levels[l]) == 0, "local", "after 20 calls of "
		          "inside_count_async() on a session at synchronous_commit = %s, the session's "
		          "value is %s: the call must leave the caller's level as it was (SET LOCAL, "
		          "for its own transaction only)", levels[l], level);
	}
	labtest_exec(t, "RESET synchronous_commit");
}

static int count_async_own_row(void *arg, int who, struct kit_db *db)
{
	(void)arg;
	return inside_count_async(db, who == 0 ? 5 : 6);
}

static void commits__counts(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);
	for (int i = 0; i < 50; i++) {
		int rc = inside_count_async(db, 1);
		lt_expect(rc == 0, NULL, "inside_count_async(): %d, %s", rc, labtest_why(db));
	}
	lt_expect_int(counter(t), 50, "counter after 50 inside_count_async()");
	lt_expect_int(inside_count_async(db, 2), INSIDE_NO_ROW, "inside_count_async() of a missing row");
	/* Counter ids are any BIGINT: the smallest, -1 and the largest each
	 * count their own row (an id printed as unsigned is a number past
	 * INT64_MAX: PostgreSQL refuses it for a bigint, SQLite compares it
	 * as a real number and finds no row). */
	static const int64_t ends[] = { INT64_MIN, -1, INT64_MAX };
	char sql[120];
	for (int i = 0; i < 3; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO counters (id, n) VALUES (%" PRId64 ", 10)", ends[i]);
		labtest_exec(t, sql);
	}
	for (int i = 0; i < 3; i++) {
		int rc = inside_count_async(db, ends[i]);
		snprintf(sql, sizeof sql, "SELECT n FROM counters WHERE id = %" PRId64, ends[i]);
		int64_t n = labtest_int(t, sql);
		lt_expect(rc == 0 && n == 11, "async", "inside_count_async() of counter %" PRId64
		          " (standing at 10) returned %d (%s) and left it at %" PRId64 ", expected 0 "
		          "and 11: is the id printed as unsigned (%%llu, PRIu64) or cut to a narrower "
		          "type? Counter ids are BIGINT, negative ones too", ends[i], rc,
		          labtest_why(db), n);
	}
	if (kit_db_engine(db) == KIT_DB_POSTGRES) {
		static const struct inside_retry policy = { 3, 1, 2 };
		for (int i = 0; i < 3; i++) {
			int rc = inside_count_retrying(db, ends[i], "REPEATABLE READ", &policy, NULL);
			snprintf(sql, sizeof sql, "SELECT n FROM counters WHERE id = %" PRId64, ends[i]);
			int64_t n = labtest_int(t, sql);
			lt_expect(rc == 0 && n == 12, "retry", "inside_count_retrying() of counter %"
			          PRId64 " (standing at 11) returned %d (%s) and left it at %" PRId64
			          ", expected 0 and 12: counter ids are BIGINT, negative ones too",
			          ends[i], rc, labtest_why(db), n);
		}
	}
	lt_expect_int(counter(t), 50, "counter 1 after the counts of the other rows");
	/* "A connection is used by one thread at a time" (inside.h): two
	 * threads count rows 5 and 6 on their own connections, the first held
	 * before its UPDATE while the second runs whole. Each counts its own
	 * row (an id printed into a static buffer sends the other's). */
	labtest_exec(t, "INSERT INTO counters (id) VALUES (5), (6)");
	struct lt_gate *g = lt_gate_open(t, 2);
	lt_gate_run_first(g, "UPDATE", (int[]){ 1, 1 }, 1, count_async_own_row, NULL);
	int rc5 = lt_gate_rc(g, 0), rc6 = lt_gate_rc(g, 1);
	lt_gate_close(g);
	int64_t n5 = labtest_int(t, "SELECT n FROM counters WHERE id = 5");
	int64_t n6 = labtest_int(t, "SELECT n FROM counters WHERE id = 6");
	lt_expect(rc5 == 0 && rc6 == 0 && n5 == 1 && n6 == 1, "async", "inside_count_async() of "
	          "row 5 held before its UPDATE while another thread's of row 6 ran whole, each on "
	          "its own connection: %d and %d, rows 5 and 6 count %" PRId64 " and %" PRId64
	          ", expected 0, 0, 1 and 1. Is the row's id (or the statement's text) kept in a "
	          "buffer every call shares, a static, which the other call overwrote?", rc5, rc6,
	          n5, n6);

	/* The counter's row is locked from its UPDATE to COMMIT: nothing of
	 * the caller's may run in between (a read of the new count "to be
	 * sure", a log line written to a table), since every statement there
	 * is a round trip more that every other writer of the row waits out
	 * (§6). Read it after COMMIT if at all. */
	struct lt_lock_watch async = { .table = "counters" }, retried = { .table = "counters" };
	kit_db_set_hook(db, lt_lock_watch_hook, &async);
	int rc = inside_count_async(db, 1);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0 && async.writes == 1 && async.after == 0, "async", "inside_count_async(): "
	          "%d, and %d statements ran between the lock on the counter's row (its UPDATE, or "
	          "a SELECT ... FOR UPDATE) and COMMIT (the first: %s), expected 0 and none: the "
	          "row stays locked for each of them", rc, async.after,
	          async.after ? async.what : "-");
	if (kit_db_engine(db) == KIT_DB_POSTGRES) {
		static const struct inside_retry once = { 3, 1, 2 };
		kit_db_set_hook(db, lt_lock_watch_hook, &retried);
		rc = inside_count_retrying(db, 1, "REPEATABLE READ", &once, NULL);
		kit_db_set_hook(db, NULL, NULL);
		lt_expect(rc == 0 && retried.writes == 1 && retried.after == 0, "retry",
		          "inside_count_retrying(): %d, and %d statements ran between the lock on the "
		          "counter's row (its UPDATE, or a SELECT ... FOR UPDATE) and COMMIT (the first: "
		          "%s), expected 0 and none: the row stays locked for each of them", rc,
		          retried.after, retried.after ? retried.what : "-");
	}
}

/* ---- §6 One round trip ---- */

struct trips { int statements, begins; };

/* Statements in one text: 1, and one more for each ';' outside quotes
 * ('...', "...", $tag$...$tag$) that has more than blanks after it. */
static int statements_in(const char *sql)
{
	int n = 1;
	for (const char *p = sql; *p; p++) {
		if (*p == '\'' || *p == '"') {
			const char *end = strchr(p + 1, *p);
			if (!end)
				break;
			p = end;
		} else if (*p == '$' && (p == sql || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
		                                    (p[-1] >= 'A' && p[-1] <= 'Z') ||
		                                    (p[-1] >= '0' && p[-1] <= '9')))) {
			const char *tag_end = strchr(p + 1, '$');
			if (!tag_end || strspn(p + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
			                != (size_t)(tag_end - p - 1))
				continue;
			char tag[64];
			size_t len = (size_t)(tag_end - p + 1);
			if (len >= sizeof tag)
				continue;
			memcpy(tag, p, len);
			tag[len] = '\0';
			const char *close = strstr(tag_end + 1, tag);
			if (!close)
				break;
			p = close + len - 1;
		} else if (*p == ';' && p[1 + strspn(p + 1, " \t\r\n;")] != '\0') {
			n++;
		}
	}
	return n;
}

static void count_trips(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct trips *tr = arg;
	(void)t_ns;
	if (ev == KIT_DB_STMT_START)
		tr->statements += sql ? statements_in(sql) : 1;
	tr->begins += ev == KIT_DB_TX_BEGIN;
}

static void one_trip__one_statement(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	struct trips tr = { 0, 0 };
	make_counter(t);

	kit_db_set_hook(db, count_trips, &tr);
	int rc = inside_like_one_statement(db, 1, 42);
	kit_db_set_hook(db, NULL, NULL);
	lt_expect(rc == 0, NULL, "inside_like_one_statement(): %d, %s", rc, labtest_why(db));
	lt_expect(tr.statements == 1 && tr.begins == 0, "one-statement",
	          "expected one statement and no BEGIN, got %d statement(s), %d BEGIN (statements "
	          "are counted in each text sent: \"INSERT ...; UPDATE ...\" is one round trip but "
	          "two statements, and its UPDATE runs whatever the INSERT did; inside.h asks for "
	          "one statement, a WITH ... INSERT ... RETURNING whose rows the UPDATE uses)",
	          tr.statements, tr.begins);
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1, "posts.likes");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM likes"), 1, "rows in likes");
}

/* The one statement finds its post through the primary key: three likes
 * of post 777 among 20,000 posts (analyzed) move posts' seq_scan not at
 * all. Ids compared as numeric (id = $1::numeric, "no int64 cut short")
 * make its INSERT ... SELECT and its UPDATE read every post, the UPDATE
 * with the counter's row locked for the rest of the scan: the hold this
 * lab shortens. */
static void one_trip__finds_the_post_by_its_index(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	labtest_exec(t, INSIDE_SCHEMA);
	labtest_exec(t, "INSERT INTO posts (id) SELECT g FROM generate_series(1, 20000) g");
	labtest_exec(t, "ANALYZE posts");
	int64_t before = lt_pg_seq_scans(t, "posts");
	int rc = 0;
	for (int u = 1; u <= 3 && rc == 0; u++)
		rc = inside_like_one_statement(db, 777, u);
	int64_t after = lt_pg_seq_scans(t, "posts");
	lt_expect(rc == 0, NULL, "inside_like_one_statement() of post 777 among 20,000: %d (%s)",
	          rc, labtest_why(db));
	lt_expect_int(labtest_int(t, "SELECT likes FROM posts WHERE id = 777"), 3, "post 777's likes");
	lt_expect(before >= 0 && after == before, "one-statement", "three likes of post 777 among "
	          "20,000 posts scanned the whole posts table %lld time(s) (pg_stat_user_tables."
	          "seq_scan): a comparison the primary key cannot serve (ids as numeric, a cast of "
	          "the column) reads every post, and the UPDATE goes on reading the rest with the "
	          "counter's row locked. Compare id with the parameter as it is",
	          (long long)(after - before));
}

static void one_trip__duplicate_changes_nothing(void **state)
{
	struct labtest *t = *state;
	struct kit_db *db = labtest_db(t);
	make_counter(t);

	lt_expect_int(inside_like_one_statement(db, 1, 7), 0, "first like by user 7");
	lt_expect_int_hint(inside_like_one_statement(db, 1, 7), KIT_DB_CONSTRAINT,
	                   "second like by user 7 (KIT_DB_CONSTRAINT)", "one-statement");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), 1,
	                   "posts.likes after a refused second like", "one-statement");
	lt_expect_int(inside_like_one_statement(db, 1, 8), 0, "a like by user 8 afterwards");
	/* PostgreSQL: a duplicate is refused before the counter's row is
	 * touched, so it waits for no holder of that row: with another
	 * transaction holding post 1's row and a lock wait of 1 s, the
	 * duplicate is KIT_DB_CONSTRAINT, not KIT_DB_BUSY (a SELECT ... FOR
	 * UPDATE of the post in the INSERT's SELECT "so it cannot be deleted
	 * meanwhile" queues the duplicate for the hot row). */
	if (t->engine == KIT_DB_POSTGRES) {
		struct kit_db *holder = labtest_connect(t);
		int held = kit_db_begin(holder);
		if (held == 0)
			held = kit_db_exec(holder, "SELECT id FROM posts WHERE id = 1 FOR UPDATE", 0, NULL);
		lt_expect(held == 0, NULL, "the test's hold of post 1: %s", kit_db_errmsg(holder));
		lt_expect(kit_db_set_lock_timeout(db, 1000) == 0, NULL, "a lock wait of 1 s: %s",
		          kit_db_errmsg(db));
		int dup = inside_like_one_statement(db, 1, 7);
		kit_db_set_lock_timeout(db, 0);
		kit_db_rollback(holder);
		kit_db_close(holder);
		lt_expect(dup == KIT_DB_CONSTRAINT, "one-statement", "a second like by user 7 while "
		          "another transaction held post 1's row returned %d, expected KIT_DB_CONSTRAINT "
		          "(%d) at once: the duplicate waited for the counter's row%s. It is refused by "
		          "the likes' key, before the post's row is touched: does the INSERT's SELECT "
		          "lock the post (FOR UPDATE, FOR SHARE, even FOR KEY SHARE, which every like "
		          "in flight then holds beside the counter's UPDATE, making MultiXacts)?", dup,
		          KIT_DB_CONSTRAINT,
		          dup == KIT_DB_BUSY ? " until the 1 s lock wait ran out (KIT_DB_BUSY)" : "");
	}
	/* the ids are BIGINT (INSIDE_SCHEMA): a user and a post past 2^31 */
	labtest_exec(t, "INSERT INTO posts (id) VALUES (1099511627776)");
	int rc = inside_like_one_statement(db, 1099511627776LL, 1099511627777LL);
	int64_t big = labtest_int(t, "SELECT likes FROM posts WHERE id = 1099511627776");
	int64_t stored = labtest_int(t, "SELECT count(*) FROM likes WHERE post_id = 1099511627776"
	                                " AND user_id = 1099511627777");
	lt_expect(rc == 0 && big == 1 && stored == 1, "one-statement",
	          "a like by user 2^40 + 1 of post 2^40 returned %d (%s), the post counts %" PRId64
	          " and likes holds %" PRId64 " such row, expected 0, 1 and 1: is a parameter cast "
	          "to a 32-bit type ($1::int)? The columns are BIGINT", rc, labtest_why(db), big,
	          stored);
}

static int like_one_many(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	return inside_like_one_statement(th->db, 1, (int64_t)th->index * 1000000 + th->iter + 1);
}

static void one_trip__exact_under_threads(void **state)
{
	struct labtest *t = *state;
	struct kit_load_result r;
	make_counter(t);

	run_load(t, 250, like_one_many, NULL, &r);
	lt_expect_int(r.ok, THREADS * 250, "likes that returned 0, 8 threads x 250");
	lt_expect_int_hint(labtest_int(t, "SELECT likes FROM posts WHERE id = 1"), THREADS * 250,
	                   "posts.likes after 8 threads x 250", "read-first");
}

/* ---- §7 Appends ---- */

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

#define KEYS 200000

/* The seqs whose keys another run of this program prints (--spread-keys). */
static const int64_t spread_seqs[] = { 1, 2, 3, 42, 1000000, -5, -1, 0, INT64_MIN, INT64_MAX };
#define SPREAD_SEQS (sizeof spread_seqs / sizeof spread_seqs[0])
#define SPREAD_CHILD "--spread-keys"

static int spread_keys_print(void)
{
	for (size_t i = 0; i < SPREAD_SEQS; i++)
		printf("%lld\n", (long long)inside_spread_key(spread_seqs[i]));
	return fflush(stdout) == 0 ? 0 : 1;
}

/* The keys of spread_seqs as a fresh run of this program (exec'd anew:
 * its own clock, process id and address space) computes them, into
 * other[]. Returns 0, or -1 if it could not be run or read. */
static int spread_keys_elsewhere(int64_t other[SPREAD_SEQS])
{
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	int fd[2];
	if (len <= 0 || pipe(fd) != 0)
		return -1;
	self[len] = '\0';
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execl(self, self, SPREAD_CHILD, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	FILE *in = fdopen(fd[0], "r");
	size_t got = 0;
	long long v;
	while (in && got < SPREAD_SEQS && fscanf(in, "%lld", &v) == 1)
		other[got++] = v;
	if (in)
		fclose(in);
	else
		close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	return got == SPREAD_SEQS && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* A seq and its key, sorted by key to find two seqs with one. */
struct seq_key {
	int64_t seq, key;
};

static int cmp_seq_key(const void *a, const void *b)
{
	int64_t x = ((const struct seq_key *)a)->key, y = ((const struct seq_key *)b)->key;
	return (x > y) - (x < y);
}

static void spread_key__distinct(void **state)
{
	(void)state;
	/* A key for the seq-th row: the same in every process that appends
	 * (app servers sharing one sequence, or one restarted), so seq alone
	 * decides it. A mix salted with something of the process (the clock
	 * at its first call, getrandom(), an address) gives one seq another
	 * key in each process, and two seqs of two processes one key. */
	int64_t there[SPREAD_SEQS];
	lt_expect(spread_keys_elsewhere(there) == 0, NULL,
	          "could not run this test program again (%s) to compare its keys", SPREAD_CHILD);
	for (size_t i = 0; i < SPREAD_SEQS; i++) {
		int64_t here = inside_spread_key(spread_seqs[i]);
		lt_expect(here == there[i] && inside_spread_key(spread_seqs[i]) == here, "bijection",
		          "seq %lld got key %#llx in this process and %#llx in another run of it (or "
		          "another when asked again): the key must depend on seq alone, pure arithmetic. "
		          "Is the mix salted with something of the process (the clock, a random number, "
		          "an address)? App servers appending with one sequence would then give two seqs "
		          "one key", (long long)spread_seqs[i], (unsigned long long)here,
		          (unsigned long long)there[i]);
	}
	int64_t *k = malloc(KEYS * sizeof *k);
	assert_non_null(k);
	for (int64_t i = 0; i < KEYS; i++)
		k[i] = inside_spread_key(i + 1);
	qsort(k, KEYS, sizeof *k, cmp64);
	int same = 0;
	for (int i = 1; i < KEYS; i++)
		same += k[i] == k[i - 1];
	lt_expect_int_hint(same, 0, "keys shared by two seqs among seqs 1..200,000", "bijection");
	/* A small seq's key is a seq too: it must not keep that key itself
	 * (a key that mixes only some seqs and leaves the rest alone gives
	 * seq s and seq key(s) one key). */
	for (int64_t i = 1; i <= 2000; i++) {
		int64_t ks = inside_spread_key(i);
		lt_expect(ks == i || inside_spread_key(ks) != ks, "bijection", "seq %" PRId64 " has "
		          "the key %" PRId64 ", and seq %" PRId64 " is its own key: two seqs share one. "
		          "Is only part of the range mixed, the rest left as it is?", i, ks, ks);
	}
	/* Seqs on both sides of 0. A step done on int64_t shifts a negative
	 * seq's sign in (x >> 30 is arithmetic there): x ^ (x >> 30) of a
	 * small negative x is ~x, so seq -5 takes the key of seq 4. */
	for (int64_t i = 0; i < KEYS; i++)
		k[i] = inside_spread_key(i - KEYS / 2);
	qsort(k, KEYS, sizeof *k, cmp64);
	same = 0;
	for (int i = 1; i < KEYS; i++)
		same += k[i] == k[i - 1];
	/* Seqs near every power of two, on both sides of 0, with those around
	 * 0 and at the ends of int64_t (windows that do not overlap): a step
	 * that is not invertible on the whole range (x += x >> 30 carries a
	 * large seq's top bits down onto a small one's) makes a small seq and
	 * a large one share a key, which no window of small seqs shows. */
	struct seq_key *sk = malloc(KEYS * sizeof *sk);
	assert_non_null(sk);
	size_t m = 0;
	for (int64_t q = -1024; q <= 1024; q++)
		sk[m++] = (struct seq_key){ q, 0 };
	for (int j = 11; j <= 62; j++)
		for (int64_t d = -512; d <= 512; d++) {
			sk[m++] = (struct seq_key){ ((int64_t)1 << j) + d, 0 };
			sk[m++] = (struct seq_key){ -((int64_t)1 << j) + d, 0 };
		}
	for (int64_t d = 0; d < 1024; d++) {
		sk[m++] = (struct seq_key){ INT64_MAX - d, 0 };
		sk[m++] = (struct seq_key){ INT64_MIN + d, 0 };
	}
	for (size_t i = 0; i < m; i++)
		sk[i].key = inside_spread_key(sk[i].seq);
	qsort(sk, m, sizeof *sk, cmp_seq_key);
	size_t at = 0;
	for (size_t i = 1; i < m && !at; i++)
		if (sk[i].key == sk[i - 1].key)
			at = i;
	struct seq_key one = at ? sk[at - 1] : (struct seq_key){ 0, 0 }, two = at ? sk[at] : one;
	free(sk);
	lt_expect(!at, "bijection", "seqs %" PRId64 " and %" PRId64 " share the key %#llx "
	          "(seqs near every power of two, on both sides of 0): a step of the mix is not "
	          "invertible over the whole range. An xor-shift (x ^= x >> 30) is; an add-shift "
	          "(x += x >> 30) is not: it carries a large seq's top bits onto a small one's",
	          one.seq, two.seq, (unsigned long long)one.key);
	free(k);
	lt_expect(same == 0, "bijection", "%d keys shared by two seqs among seqs -100,000..99,999 "
	          "(seq -5 and seq 4: %#llx and %#llx): is a shift done on int64_t, where it "
	          "copies a negative seq's sign bit in? Do the mix on uint64_t", same,
	          (unsigned long long)inside_spread_key(-5), (unsigned long long)inside_spread_key(4));
	/* A step that is not invertible makes pairs of seqs share a key that
	 * no small range of seqs shows: a multiply by an even number (2^64 /
	 * phi rounded to the nearest integer, 0x9E3779B97F4A7C16, is one)
	 * drops its input's top bit, so after SplitMix64's first step, x ^=
	 * x >> 30, the seqs x and x ^ (2^63 + 2^33 + 2^3) share one. Seqs
	 * that differ in 1, 2 or 3 of their 64 bits, around a few seqs: a
	 * bijection never gives two of them one key. */
	static const uint64_t base[] = { 0, 1, 0x5555555555555555ULL, 0xfedcba9876543210ULL };
	for (size_t b = 0; b < sizeof base / sizeof base[0]; b++) {
		int64_t k0 = inside_spread_key((int64_t)base[b]);
		for (int i = 0; i < 64; i++)
			for (int j = i; j < 64; j++)
				for (int l = j; l < 64; l++) {
					uint64_t flip = (1ULL << i) | (1ULL << j) | (1ULL << l);
					int64_t k1 = inside_spread_key((int64_t)(base[b] ^ flip));
					lt_expect(k1 != k0, "bijection", "seqs %#llx and %#llx share the key "
					          "%#llx: a step of the mix is not invertible (a multiply by an even "
					          "number drops its input's top bit; multiply by an odd one)",
					          (unsigned long long)base[b], (unsigned long long)(base[b] ^ flip),
					          (unsigned long long)k0);
				}
	}
}

static void spread_key__scatters(void **state)
{
	(void)state;
	int up = 0, bucket[16] = { 0 }, up_from[16] = { 0 };
	for (int64_t i = 1; i <= KEYS; i++) {
		int64_t k = inside_spread_key(i);
		int rises = inside_spread_key(i + 1) > k;
		up += rises;
		up_from[i % 16] += rises;
		bucket[(uint64_t)k >> 60]++;
	}
	lt_expect(up > KEYS * 4 / 10 && up < KEYS * 6 / 10, "scatter",
	          "expected about half of consecutive seqs to get increasing keys (no order left), "
	          "got %d of %d", up, KEYS);
	/* Negative seqs are seqs too (a bijection on 64 bits): their
	 * neighbours lose their order as well, and their keys fall all over
	 * the key space, not where the seqs are. */
	int up_neg = 0, in_place = 0;
	for (int64_t i = -KEYS - 1; i < -1; i++) {
		int64_t k = inside_spread_key(i);
		up_neg += inside_spread_key(i + 1) > k;
		in_place += k == i;
	}
	lt_expect(up_neg > KEYS * 4 / 10 && up_neg < KEYS * 6 / 10 && in_place < 3, "scatter",
	          "for the negative seqs -%d to -2, %d of %d consecutive pairs got increasing keys "
	          "and %d seqs were their own key: a key that leaves negative seqs alone (\"sequences "
	          "only count up\") keeps their order and is no bijection; mix every int64_t",
	          KEYS + 1, up_neg, KEYS, in_place);
	/* Large seqs are seqs too: around 2^40, 2^62 and INT64_MAX their
	 * neighbours lose their order as well, and none is its own key (a
	 * mix of the small seqs alone, "a sequence stays small", leaves the
	 * large ones in place, in order). */
	static const int64_t far[] = { INT64_C(1) << 40, INT64_C(1) << 62, INT64_MAX - KEYS / 4 - 1 };
	for (size_t f = 0; f < sizeof far / sizeof far[0]; f++) {
		int up_far = 0, same_far = 0;
		for (int64_t i = far[f]; i < far[f] + KEYS / 4; i++) {
			int64_t k = inside_spread_key(i);
			up_far += inside_spread_key(i + 1) > k;
			same_far += k == i;
		}
		lt_expect(up_far > KEYS / 4 * 4 / 10 && up_far < KEYS / 4 * 6 / 10 && same_far < 3,
		          "scatter", "for the %d seqs from %" PRId64 " up, %d consecutive pairs got "
		          "increasing keys and %d seqs were their own key: large seqs are mixed like "
		          "small ones (a bijection on all 64 bits)", KEYS / 4, far[f], up_far, same_far);
	}
	/* No order left between neighbours wherever they are: the step from
	 * an even seq up as often as from an odd one. A key that only moves
	 * seq's bits around (reversed, rotated) keeps half in all, but each
	 * step the same way for every seq with the same low bits (reversed:
	 * from every even seq down, from every odd one up). */
	for (int r = 0; r < 16; r++)
		lt_expect(up_from[r] > KEYS / 16 * 4 / 10 && up_from[r] < KEYS / 16 * 6 / 10, "scatter",
		          "expected about half of the steps from a seq that is %d mod 16 to the next "
		          "to give an increasing key, got %d of %d: the key keeps an order between "
		          "neighbours set by seq's low bits (a reversal or rotation of its bits?)",
		          r, up_from[r], KEYS / 16);
	for (int b = 0; b < 16; b++)
		lt_expect(bucket[b] > KEYS / 16 * 8 / 10 && bucket[b] < KEYS / 16 * 12 / 10, "scatter",
		          "expected each sixteenth of the key space to get about %d keys, "
		          "sixteenth %d got %d", KEYS / 16, b, bucket[b]);
}

static int append_many(void *arg, struct kit_load_thread *th)
{
	(void)arg;
	int64_t seq = (int64_t)th->index * 1000000 + th->iter + 1;
	char key[24], s[24];
	snprintf(key, sizeof key, "%" PRId64, inside_spread_key(seq));
	snprintf(s, sizeof s, "%" PRId64, seq);
	const char *params[] = { key, s };
	return kit_db_exec(th->db, "INSERT INTO events (id, seq) VALUES ($1, $2)", 2, params);
}

static void append__spread_rows_exact(void **state)
{
	struct labtest *t = *state;
	struct kit_load_result r;
	labtest_exec(t, "CREATE TABLE events (id BIGINT PRIMARY KEY, seq BIGINT NOT NULL)");

	run_load(t, 250, append_many, NULL, &r);
	lt_expect_int_hint(r.constraint, 0, "inserts refused as duplicate keys", "bijection");
	lt_expect_int(labtest_int(t, "SELECT count(*) FROM events"), THREADS * 250,
	              "rows after 8 threads x 250 appends");
}

/* MariaDB runs §7's appends only: the other sections are PostgreSQL's own
 * machinery (heap versions and HOT, MultiXacts and a DEFERRABLE key,
 * SERIALIZABLE's retries, SET LOCAL synchronous_commit, an INSERT inside
 * a WITH), which InnoDB does not have or does another way; the handout
 * measures InnoDB's counterparts (its commit order, the history list). */
int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], SPREAD_CHILD) == 0)
		return spread_keys_print();
	const struct CMUnitTest tests[] = {
		LABTEST_PG(versions__old_snapshot_keeps_versions),
		LABTEST_PG(versions__old_snapshot_keeps_versions_beside_a_neighbour),
		LABTEST_PG(versions__old_snapshot_keeps_versions_beside_a_long_neighbour),
		LABTEST_PG(versions__indexed_counter_not_hot),
		LABTEST_PG(versions__buffers_as_explain_counts_them),
		LABTEST_PG(versions__first_read_after_a_snapshot_ends),
		LABTEST_PG(versions__first_schema_on_the_path_holds_no_counters),
		LABTEST_PG(versions__buffers_of_a_read_that_sets_hints),
		LABTEST_PG(versions__negative_row_ids),
		LABTEST_PG(versions__first_calls_at_once),
		LABTEST_SQLITE(versions__reader_pins_wal),
		LABTEST_SQLITE(versions__busy_while_another_checkpoints),
		LABTEST_SQLITE(versions__sqlite_connection_still_waits),
		LABTEST_BOTH(versions__fills_out_as_promised),
		LABTEST_SQLITE(versions__sqlite_database_not_in_wal),
		LABTEST_BOTH(keys__like_needs_post),
		LABTEST_PG(keys__no_multixacts_from_likes),
		LABTEST_BOTH(keys__missing_row_is_no_row),
		LABTEST_BOTH(keys__setup_over_tables_of_another_making),
		LABTEST_BOTH(keys__setup_while_another_makes_them),
		LABTEST_BOTH(keys__one_like_per_user),
		LABTEST_BOTH(keys__ids_across_int64),
		LABTEST_PG(isolation__gives_up_after_limit),
		LABTEST_PG(isolation__commit_refusal_retried),
		LABTEST_PG(isolation__commit_refusal_waits_its_turn),
		LABTEST_PG(isolation__backs_off),
		LABTEST_PG(isolation__first_wait_is_at_most_base),
		LABTEST_PG(isolation__other_errors_not_retried),
		LABTEST_PG(isolation__level_ends_with_the_call),
		LABTEST_PG(isolation__each_call_at_its_level),
		LABTEST_PG(isolation__long_retry_keeps_its_cap),
		LABTEST_PG(isolation__waits_follow_the_doubling),
		LABTEST_PG(isolation__waits_of_seconds_to_weeks),
		LABTEST_PG(isolation__no_wait_after_the_last_attempt),
		LABTEST_PG(isolation__wait_survives_signals),
		LABTEST_PG(isolation__wait_survives_signals_and_a_clock_step),
		LABTEST_PG(isolation__refused_begin_ends_the_call),
		LABTEST_PG(isolation__backoff_has_jitter),
		LABTEST_PG(isolation__exact_with_retries),
		LABTEST_PG(commits__async_only_for_counter),
		LABTEST_PG(commits__async_on_a_plain_session),
		LABTEST_SQLITE(commits__async_leaves_sqlite_sync),
		LABTEST_PG(commits__async_skips_flush),
		LABTEST_BOTH(commits__counts),
		LABTEST_BOTH(commits__async_row_deleted_meanwhile),
		LABTEST_PG(one_trip__one_statement),
		LABTEST_PG(one_trip__finds_the_post_by_its_index),
		LABTEST_PG(one_trip__likes_only_its_post),
		LABTEST_BOTH(one_trip__refused_count_leaves_no_like),
		LABTEST_BOTH(every_step_can_fail),
		LABTEST_BOTH(one_trip__duplicate_changes_nothing),
		LABTEST_BOTH(one_trip__ids_across_int64),
		LABTEST_BOTH(one_trip__exact_under_threads),
		cmocka_unit_test(spread_key__distinct),
		cmocka_unit_test(spread_key__scatters),
		LABTEST_ALL(append__spread_rows_exact),
	};
	return labtest_main("08-engine", tests);
}
