/*
 * run.c: `hotrow lab run 06`, sales through your ledger, three ways.
 *
 * Every sale credits the platform's fee account. The driver runs T threads
 * for S seconds three times on the database given, each thread with a
 * buyer and a seller of its own, so the fee account is the one row they
 * share:
 *   naive     money_transfer(), the fee account as one row (subs = 1)
 *   split     money_transfer(), the fee account as N sub-accounts
 *   batched   money_batch() of B sales, the fee account as one row
 * Before them it times, on one thread, how long a transfer and a batch
 * hold the lock every sale needs (the db hook: on PostgreSQL from the
 * start of the transaction's last UPDATE, the fee credit when it comes
 * last, to the end of COMMIT; on SQLite from BEGIN to COMMIT, the file's
 * write lock) and how long one call takes. Beside each measurement it
 * prints what the engine predicts from those one-thread figures, T, N and
 * B alone; the engine has no ledger model, so each run is mapped onto one
 * it has (see model_of()). At the end, money_reconcile() must find the
 * books balanced.
 *
 * Interface: build/labs/06-money/run-solution [--db URL] [--threads T]
 *            [--seconds S] [--subs N] [--batch B]; exit 0, 1 if the
 *            database failed or the books do not balance, 2 for bad usage.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/sim.h"
#include "kit/db.h"
#include "kit/load.h"
#include "kit/predict.h"
#include "kit/runopt.h"
#include "kit/span.h"
#include "labs/06-money/money.h"

#define CMD "hotrow lab run 06"
#define FEE_ACCOUNT 99
#define BUYER(i)  (1000 + (i))          /* thread i's buyer and seller */
#define SELLER(i) (2000 + (i))
#define IDS_PER_THREAD 1000000000LL     /* transfer ids: run base + thread * this + n */

enum mode { NAIVE, SPLIT, BATCHED };

struct run {
	const char *url;
	int threads;
	double seconds;
	int subs;
	int batch;

	enum mode mode;          /* the run in progress */
	int64_t id_base;         /* its first transfer id */
	struct kit_span hold;    /* the lock holds of its threads */
};

/* The options, from one table: KIT_RUNOPT_OK to run, _HELP or _BAD not to. */
static int parse(int argc, char **argv, struct run *r)
{
	const struct kit_runopt table[] = {
		KIT_RUNOPT_DB(&r->url, "database (default sqlite:.hotrow/lab06.db); its accounts,\n"
		                       "transfers and entries tables are dropped and made afresh"),
		KIT_RUNOPT_THREADS(&r->threads, "concurrent clients, 1..256 (default 16)"),
		KIT_RUNOPT_SECONDS(&r->seconds, "length of each measured run (default 5)"),
		{ .name = "--subs", .arg = "N", .kind = KIT_RUNOPT_INT, .dest = &r->subs,
		  .min = 1, .max = MONEY_MAX_SUBS, .accepts = "a whole number from 1 to 64",
		  .help = "sub-accounts of the fee account in the split run, 1..64 (default 8)" },
		{ .name = "--batch", .arg = "B", .kind = KIT_RUNOPT_INT, .dest = &r->batch,
		  .min = 1, .max = 1000, .accepts = "a whole number from 1 to 1000",
		  .help = "sales per money_batch() in the batched run, 1..1000 (default 100)" },
	};
	const struct kit_runopt_spec spec = { .cmd = CMD, .opts = table,
	                                      .n = sizeof table / sizeof table[0] };
	return kit_runopt_parse(&spec, argc, argv);
}

/* The database's message, or a nudge when money.c failed without one. */
static const char *why(struct kit_db *db)
{
	const char *m = kit_db_errmsg(db);
	return m && m[0] ? m : "failed without a database error (is money.c still a TODO?)";
}

static int start_thread(void *arg, struct kit_load_thread *th)
{
	struct run *r = arg;
	return kit_span_thread_init(&r->hold, th);
}

/* One call: a sale, or a batch of them. A sale that is not applied is a
 * failure here: the buyers never run dry. */
static int sell(void *arg, struct kit_load_thread *th)
{
	struct run *r = arg;
	struct money_fees fees = { FEE_ACCOUNT, r->mode == SPLIT ? r->subs : 1 };
	int n = r->mode == BATCHED ? r->batch : 1;
	int64_t first = r->id_base + th->index * IDS_PER_THREAD + th->iter * n;
	struct money_transfer t[1000];
	int results[1000];
	t[0] = (struct money_transfer){ first, BUYER(th->index), SELLER(th->index), 100, 3 };
	if (r->mode != BATCHED)
		return money_transfer(th->db, &fees, &t[0]);
	for (int j = 1; j < n; j++)
		t[j] = (struct money_transfer){ first + j, BUYER(th->index), SELLER(th->index), 100, 3 };
	int rc = money_batch(th->db, &fees, t, n, results);
	for (int j = 0; j < n && rc == 0; j++)
		rc = results[j];
	return rc;
}

/* Run `mode` on threads for seconds; the mean hold comes back in *hold_ms. */
static int measure(struct run *r, enum mode mode, int threads, double seconds,
                   const char *label, struct kit_load_result *res, double *hold_ms)
{
	struct kit_load_config c;
	kit_load_config_default(&c);
	c.url = r->url;
	c.threads = threads;
	c.seconds = seconds;
	c.label = label;
	c.stop_on_error = true;
	c.thread_init = start_thread;
	c.thread_done = kit_span_thread_done;
	r->mode = mode;
	kit_span_reset(&r->hold);
	int rc = kit_load_run(&c, sell, r, res);
	size_t len = strlen(res->error);
	if (rc != 0)      /* a failure with no database message ends in ": " */
		fprintf(stderr, CMD ": %s: %s%s\n", label, res->error,
		        len > 1 && res->error[len - 2] == ':'
		        ? "no database error (is money.c still a TODO?)" : "");
	*hold_ms = kit_span_mean_ms(&r->hold);
	r->id_base += (int64_t)KIT_LOAD_MAX_THREADS * IDS_PER_THREAD;
	return rc;
}

/* Fresh books: a buyer with plenty and a seller per thread, the fee
 * account with as many sub-accounts as the split run uses. */
static int prepare(struct kit_db *db, const struct run *r)
{
	int rc = kit_db_exec(db, "DROP TABLE IF EXISTS entries; DROP TABLE IF EXISTS transfers;"
	                         "DROP TABLE IF EXISTS accounts", 0, NULL);
	if (rc == 0)
		rc = money_setup(db);
	for (int i = 0; i < r->threads && rc == 0; i++) {
		rc = money_open(db, BUYER(i), 1, 1000000000000LL);
		if (rc == 0)
			rc = money_open(db, SELLER(i), 1, 0);
	}
	if (rc == 0)
		rc = money_open(db, FEE_ACCOUNT, r->subs, 0);
	return rc;
}

/* What the engine is asked about one run. */
struct model {
	const char *says;        /* the engine model, in words */
	enum sim_strategy s;
	int rows;
	double hold_ms;          /* one lock hold, measured on one thread */
	double cycle_ms;         /* one call, measured on one thread */
	int per_call;            /* sales per call */
};

/* The engine has no ledger; each run maps onto a model it has. SQLite
 * has one write lock for the whole file, so N sub-accounts are still one
 * lock there. */
static struct model model_of(enum mode m, const struct run *r, bool lite, double hold1,
                             double cycle1, double holdb, double cycleb)
{
	switch (m) {
	case NAIVE:
		return (struct model){ "naive, 1 row", SIM_NAIVE, 1, hold1, cycle1, 1 };
	case SPLIT:
		if (lite)
			return (struct model){ "naive, 1 lock (SQLite)", SIM_NAIVE, 1, hold1, cycle1, 1 };
		return (struct model){ "sharded, N rows", SIM_SHARDED, r->subs, hold1, cycle1, 1 };
	case BATCHED:
	default:
		return (struct model){ "naive, 1 hold per batch", SIM_NAIVE, 1, holdb, cycleb, r->batch };
	}
}

/* Sales per second the engine predicts for model m: T closed-loop clients
 * that would each send a call every cycle if they never waited, and one
 * hold per call on the model's rows. */
static double predict(const struct run *r, const struct model *m)
{
	if (m->hold_ms <= 0 || m->cycle_ms <= 0)
		return 0;
	struct sim_config c;
	struct sim_summary out;
	kit_predict_config(&c, m->s, r->threads * 1000.0 / m->cycle_ms, m->hold_ms, r->threads);
	c.rows = m->rows;
	c.slot = SIM_SLOT_RANDOM;
	c.seconds = r->seconds < 5 ? r->seconds : 5;
	if (kit_predict_run(&c, &out, CMD) != 0)
		return 0;
	return out.throughput_per_s * m->per_call;
}

int main(int argc, char **argv)
{
	struct run r = { .url = "sqlite:.hotrow/lab06.db", .threads = 16, .seconds = 5,
	                 .subs = 8, .batch = 100, .id_base = 1 };
	int rc = parse(argc, argv, &r);
	if (rc != KIT_RUNOPT_OK)
		return rc == KIT_RUNOPT_HELP ? 0 : 2;
	if (strncmp(r.url, "sqlite:.hotrow/", 15) == 0)
		mkdir(".hotrow", 0777);

	struct kit_db *db;
	if (kit_db_open(&db, r.url) != 0 || prepare(db, &r) != 0) {
		fprintf(stderr, CMD ": %s\n", why(db));
		kit_db_close(db);
		return 1;
	}
	bool lite = kit_db_engine(db) == KIT_DB_SQLITE;
	if (lite)
		kit_span_init(&r.hold, KIT_DB_TX_BEGIN, NULL, KIT_DB_TX_COMMIT);
	else
		kit_span_init(&r.hold, KIT_DB_STMT_START, "UPDATE", KIT_DB_TX_COMMIT);
	printf("Lab 06, money, on %s: %d threads, %g s per run, fee account split %d ways, "
	       "batches of %d\n\n", lite ? "SQLite" : "PostgreSQL", r.threads, r.seconds, r.subs,
	       r.batch);

	/* The lone runs take up to 2 s each (commit times vary: give them
	 * samples), after a moment of warming up that is not counted. */
	double alone = fmin(2.0, fmax(r.seconds / 2, fmin(r.seconds, 1.0)));
	struct kit_load_result one, oneb, res[3];
	double hold1, holdb, unused;
	static const char *const label[3] = { "naive", "split", "batched" };
	rc = measure(&r, NAIVE, 1, fmin(alone, 0.3), "warming up", &one, &hold1);
	if (rc == 0)
		rc = measure(&r, NAIVE, 1, alone, "1 thread, transfer", &one, &hold1);
	if (rc == 0)
		rc = measure(&r, BATCHED, 1, alone, "1 thread, batch", &oneb, &holdb);
	for (int m = NAIVE; m <= BATCHED && rc == 0; m++)
		rc = measure(&r, (enum mode)m, r.threads, r.seconds, label[m], &res[m], &unused);
	struct money_audit a = { -1, -1, -1, -1 };
	if (rc == 0 && (rc = money_reconcile(db, &a)) != 0)
		fprintf(stderr, CMD ": money_reconcile: %s\n", why(db));
	kit_db_close(db);
	if (rc != 0)
		return 1;

	const char *lock = lite ? "BEGIN to COMMIT, the file's write lock"
	                        : "last UPDATE to COMMIT, the fee row's lock";
	printf("one thread, nobody waiting (%s)\n", lock);
	printf("  transfer        hold %7.3f ms   call %7.3f ms\n", hold1, one.latency_ms.mean);
	printf("  batch of %-4d   hold %7.3f ms   call %7.3f ms   (%.3f ms a sale)\n\n", r.batch,
	       holdb, oneb.latency_ms.mean, oneb.latency_ms.mean / r.batch);

	printf("  %-8s %13s %9s   %-24s %13s %7s\n", "run", "measured", "p99 ms", "engine model",
	       "predicted", "ratio");
	for (int m = NAIVE; m <= BATCHED; m++) {
		struct model mo = model_of((enum mode)m, &r, lite, hold1, one.latency_ms.mean, holdb,
		                           oneb.latency_ms.mean);
		double got = res[m].throughput_per_s * mo.per_call;
		double want = predict(&r, &mo);
		printf("  %-8s %9.0f/s %9.2f   %-24s %9.0f/s %7.2f\n", label[m], got,
		       res[m].latency_ms.p99, mo.says, want, want > 0 ? got / want : 0);
	}
	printf("\n  (sales per second; p99 is per call, a batch being one call;\n"
	       "   the engine: %d clients, each would call every one-thread call time if it\n"
	       "   never waited, one hold per call; ratio = measured / predicted)\n", r.threads);

	bool balanced = a.unbalanced == 0 && a.drifted == 0 && a.negative == 0 && a.total == 0;
	printf("\nbooks after the runs: %s (unbalanced %lld, drifted %lld, negative %lld, "
	       "total %lld)\n",
	       balanced ? "they balance" : "THEY DO NOT BALANCE (see §8)", (long long)a.unbalanced,
	       (long long)a.drifted, (long long)a.negative, (long long)a.total);
	if (lite)
		printf("SQLite lets one transaction write at a time, whatever the row: splitting the "
		       "fee account cannot help there (§6); batching can.\n");
	return balanced ? 0 : 1;
}
