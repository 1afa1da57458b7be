/*
 * gate.c: the gate of gate.h, built on kit_db's hook.
 *
 * One mutex guards the whole gate; the hook of each connection takes it at
 * the statements it counts. A connection at its stop waits on the
 * condition variable in short naps, and on each wake-up looks whether the
 * others are all there: arrived, finished, or (what only the server can
 * say on PostgreSQL) waiting for a lock. The first to see it so opens the
 * gate for all.
 */
#include "tests/harness/gate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tests/harness/deadline.h"
#include "tests/harness/session.h"
#include "tests/harness/sql.h"

#define NAP_MS 1                   /* how often a held connection looks again */

struct party {
	struct lt_gate *g;
	int who;
	struct kit_db *db;
	int64_t pid;                    /* lt_session_id: 0 on SQLite, -1 unknown */
	pthread_t thread;
	/* Guarded by g->mu. */
	int stop;                       /* stop before this statement, 1-based */
	int seen;                       /* statements counted so far */
	bool held;                      /* reached its stop */
	bool done;                      /* its call returned */
	bool lock_wait;                 /* SQLite: in a busy wait */
	int64_t asked_ns;               /* when the server was last asked */
	bool server_wait;               /* ... and whether it waited for a lock */
	int rc;
};

struct lt_gate {
	struct labtest *t;
	int n;
	struct party p[LT_GATE_MAX];
	struct kit_db *monitor;         /* PostgreSQL: reads pg_stat_activity;
	                                   MariaDB: INNODB_TRX */
	lt_gate_call *call;
	void *arg;
	const char *match;
	int first;                      /* goes alone when the gate opens, or -1 */
	/* Guarded by mu. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool open;                      /* the gate has opened in this run */
	int stalls;
};

/* True when sql's first word is match (NULL matches everything; "BEGIN"
 * matches START TRANSACTION too). */
static bool matches(const char *match, const char *sql)
{
	if (match == NULL)
		return true;
	if (sql == NULL)
		return false;
	/* START TRANSACTION begins a transaction as BEGIN does */
	if (strcasecmp(match, "BEGIN") == 0 && lt_sql_is(sql, "START TRANSACTION"))
		return true;
	return strncasecmp(lt_sql_verb(sql), match, strlen(match)) == 0;
}

/* PostgreSQL or MariaDB: is party q's session waiting for a lock? On
 * MariaDB a look closer to the last than lt_lock_poll_ns() (INNODB_TRX is
 * renewed only when last read over 0.1 s ago) would read the same picture
 * again: the answer is kept that long. Caller holds mu, which also keeps
 * the monitor connection to one thread. */
static bool pg_lock_waiting(struct lt_gate *g, struct party *q)
{
	int64_t now = lt_real_now_ns();
	if (g->monitor == NULL || q->pid <= 0)
		return false;
	if (g->t->engine == KIT_DB_MYSQL && now - q->asked_ns < lt_lock_poll_ns(g->monitor))
		return q->server_wait;
	q->asked_ns = now;
	q->server_wait = lt_lock_waiting(g->monitor, q->pid) == 1;
	return q->server_wait;
}

/* Party q cannot move until someone else does: it finished, or it waits
 * for a lock. Caller holds mu. */
static bool stuck(struct lt_gate *g, struct party *q)
{
	return q->done || q->lock_wait || pg_lock_waiting(g, q);
}

/* Every party but p is at its stop, finished, or waiting for a lock.
 * Caller holds mu. */
static bool all_there(struct lt_gate *g, const struct party *p)
{
	for (int i = 0; i < g->n; i++) {
		struct party *q = &g->p[i];
		if (q != p && !q->held && !stuck(g, q))
			return false;
	}
	return true;
}

/* May p go on? Once the gate is open, yes; with a party that goes first,
 * only that one until it has finished or waits for a lock. Caller holds
 * mu. */
static bool may_go(struct lt_gate *g, const struct party *p)
{
	if (!g->open)
		return false;
	if (g->first < 0 || p == &g->p[g->first])
		return true;
	return stuck(g, &g->p[g->first]);
}

static void wait_at_stop(struct lt_gate *g, struct party *p)
{
	int64_t give_up = lt_real_now_ns() + LT_GATE_PATIENCE_MS * 1000000LL;

	pthread_mutex_lock(&g->mu);
	p->held = true;
	pthread_cond_broadcast(&g->cv);
	while (!may_go(g, p)) {
		if (!g->open && all_there(g, p)) {
			g->open = true;
			continue;
		}
		if (lt_real_now_ns() > give_up) {
			g->open = true;
			g->first = -1;
			g->stalls++;
			break;
		}
		struct timespec ts = lt_deadline_ms(NAP_MS);
		pthread_cond_timedwait(&g->cv, &g->mu, &ts);
	}
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

static void hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct party *p = arg;
	struct lt_gate *g = p->g;
	(void)t_ns;

	if (ev == KIT_DB_LOCK_WAIT || ev == KIT_DB_STMT_END || ev == KIT_DB_TX_STMT_END) {
		pthread_mutex_lock(&g->mu);
		p->lock_wait = ev == KIT_DB_LOCK_WAIT;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		return;
	}
	if ((ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START) || !matches(g->match, sql))
		return;
	pthread_mutex_lock(&g->mu);
	bool stop = ++p->seen == p->stop && !g->open;
	pthread_mutex_unlock(&g->mu);
	if (stop)
		wait_at_stop(g, p);
}

static void *run_party(void *arg)
{
	struct party *p = arg;
	struct lt_gate *g = p->g;
	int rc = g->call(g->arg, p->who, p->db);
	pthread_mutex_lock(&g->mu);
	p->rc = rc;
	p->done = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

struct lt_gate *lt_gate_open(struct labtest *t, int n)
{
	if (n < 2 || n > LT_GATE_MAX)
		fail_msg("lt_gate_open: %d connections; give 2 to %d", n, LT_GATE_MAX);
	struct lt_gate *g = calloc(1, sizeof *g);
	if (g == NULL)
		fail_msg("lt_gate_open: out of memory");
	g->t = t;
	g->n = n;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	for (int i = 0; i < n; i++) {
		struct party *p = &g->p[i];
		p->g = g;
		p->who = i;
		p->db = labtest_connect(t);
		p->pid = lt_session_id(p->db);
	}
	if (t->engine != KIT_DB_SQLITE)
		g->monitor = labtest_connect(t);
	return g;
}

void lt_gate_close(struct lt_gate *g)
{
	if (g == NULL)
		return;
	for (int i = 0; i < g->n; i++)
		kit_db_close(g->p[i].db);
	kit_db_close(g->monitor);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

struct kit_db *lt_gate_db(struct lt_gate *g, int who)
{
	return g->p[who].db;
}

void lt_gate_run(struct lt_gate *g, const char *match, const int *stops,
                 lt_gate_call *call, void *arg)
{
	lt_gate_run_first(g, match, stops, -1, call, arg);
}

void lt_gate_run_first(struct lt_gate *g, const char *match, const int *stops, int first,
                       lt_gate_call *call, void *arg)
{
	g->call = call;
	g->arg = arg;
	g->match = match;
	g->open = false;
	g->first = first >= 0 && first < g->n ? first : -1;
	for (int i = 0; i < g->n; i++) {
		struct party *p = &g->p[i];
		p->stop = stops[i] >= 1 ? stops[i] : 1;
		p->seen = 0;
		p->held = p->done = p->lock_wait = false;
		p->rc = 0;
		kit_db_set_hook(p->db, hook, p);
	}
	for (int i = 0; i < g->n; i++)
		if (pthread_create(&g->p[i].thread, NULL, run_party, &g->p[i]) != 0)
			fail_msg("lt_gate_run: cannot start a thread");
	for (int i = 0; i < g->n; i++)
		pthread_join(g->p[i].thread, NULL);
	for (int i = 0; i < g->n; i++)
		kit_db_set_hook(g->p[i].db, NULL, NULL);
}

int lt_gate_rc(const struct lt_gate *g, int who)
{
	return g->p[who].rc;
}

bool lt_gate_reached(const struct lt_gate *g)
{
	for (int i = 0; i < g->n; i++)
		if (g->p[i].held)
			return true;
	return false;
}

bool lt_gate_held(const struct lt_gate *g, int who)
{
	return g->p[who].held;
}

int lt_gate_stalls(const struct lt_gate *g)
{
	return g->stalls;
}

int lt_gate_seen(const struct lt_gate *g, int who)
{
	return g->p[who].seen;
}
