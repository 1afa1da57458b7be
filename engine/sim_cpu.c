/*
 * sim_cpu.c: the CPUs, a processor-sharing station with c.cores servers.
 *
 * With more runnable jobs than cores every job runs slower: n jobs on C
 * cores each get min(1, C / n) of a CPU, the way an operating system's
 * scheduler shares a 2-core laptop among 16 busy clients. The lock
 * holder's CPU part is one such job, so the hold itself grows with load.
 *
 * The cores serve one run queue (c.run_queues SHARED), or each core its
 * own (PER_CORE): a job then goes to a core drawn at random and stays, so
 * it can wait behind that core's jobs while the other core idles. A
 * process a herd hand-off woke is the exception: it has waited for a core
 * to free (the winner for an idle one, the losers in their row's run
 * queue, c.cores at a time), so it takes the queue with the fewest jobs;
 * drawn at random instead, two losers would share one core half the time
 * while the other idled, which no scheduler does with runnable work. Linux
 * does this at short time scales: a woken process goes to the core it ran
 * on or to its waker's, and a process that ran within the last half
 * millisecond counts as cache-hot and is not pulled to an idle core
 * (sched_migration_cost). Measured on the 2-core machine the kit is
 * built on (/proc/PID/schedstat, pgbench on 128 rows, 4 clients), the
 * backends' run-queue wait per commit came to 0.85 of their CPU with the
 * cores half busy, what two queues of their own give (rho / (1 - rho) at
 * rho = 0.46), where one shared queue gives a third of it.
 *
 * All jobs of a queue advance at the same rate, so one clock of "virtual
 * time" (the work each job has received) serves them all: a job that
 * needs w us of CPU and starts at virtual time v finishes when the clock
 * reaches v + w. Only a queue's earliest finish needs an event; any change
 * in the number of its jobs re-arms it, and the event it replaces goes
 * stale (a generation number in its arg, which no queue holds any more).
 * With cores unset none of this runs.
 *
 * A core that has idled long is slow to start (c.cold_after_us): in a
 * virtual machine an idle vCPU halts, and after the host's polling
 * window its wake goes through the host's scheduler; on bare metal a
 * deep power state takes time to leave and the caches have gone cold.
 * While fewer jobs than cores run, a queue's idle cores are kept as a
 * stack of the times they went idle, and a new job takes the one idled
 * last (a scheduler keeps a warm core busy rather than wake a cold one):
 * after idling g >= cold_after_us, the job does cold_us + cold_per_ms (g -
 * cold_after_us) / 1000 more work. So a loop that never leaves the cores
 * idle that long pays nothing, and one whose clients pause pays once per
 * pause, on the job that ends it.
 *
 * Interface (engine only): sim_cpu_add() starts a job; when it ends, the
 * station calls s->host->cpu_done() with the job's what and arg.
 */
#include <math.h>
#include <stdlib.h>

#include "engine/sim_impl.h"
#include "engine/xmalloc.h"

static double rate(const struct sim_cpu_q *q)
{
	return q->n <= (size_t)q->cores ? 1.0 : (double)q->cores / (double)q->n;
}

/* Bring q's virtual clock up to now at the rate that held since v_at. */
static void catch_up(struct sim *s, struct sim_cpu_q *q)
{
	if (q->n)
		q->v += (double)(s->now - q->v_at) * rate(q);
	q->v_at = s->now;
}

static int before(const struct sim_cpu_job *a, const struct sim_cpu_job *b)
{
	return a->vend < b->vend || (a->vend == b->vend && a->seq < b->seq);
}

static void heap_push(struct sim_cpu_q *c, struct sim_cpu_job j)
{
	size_t i;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 32;
		c->jobs = xrealloc(c->jobs, c->cap * sizeof *c->jobs);
	}
	for (i = c->n++; i > 0 && before(&j, &c->jobs[(i - 1) / 2]); i = (i - 1) / 2)
		c->jobs[i] = c->jobs[(i - 1) / 2];
	c->jobs[i] = j;
}

static struct sim_cpu_job heap_pop(struct sim_cpu_q *c)
{
	struct sim_cpu_job top = c->jobs[0], last = c->jobs[--c->n];
	size_t i = 0;

	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= c->n)
			break;
		if (k + 1 < c->n && before(&c->jobs[k + 1], &c->jobs[k]))
			k++;
		if (!before(&c->jobs[k], &last))
			break;
		c->jobs[i] = c->jobs[k];
		i = k;
	}
	if (c->n)
		c->jobs[i] = last;
	return top;
}

/* Arm the timer for q's earliest finish, rounded up to a whole us. */
static void arm(struct sim *s, struct sim_cpu_q *q)
{
	double left;

	q->gen = 0;                       /* its pending event, if any, is stale */
	if (!q->n)
		return;
	if (++s->cpu.gen == 0)
		++s->cpu.gen;             /* 0 means none */
	q->gen = s->cpu.gen;
	left = (q->jobs[0].vend - q->v) / rate(q);
	sim_push(s, s->now + (left > 0 ? (int64_t)ceil(left - 1e-9) : 0), EV_CPU, q->gen);
}

/* The extra work of a job starting now on q, on the core idled last, if
 * one idles; that core is taken. */
static int64_t take_core(struct sim *s, struct sim_cpu_q *q)
{
	double g, us;

	if (!q->idle_at || q->nidle == 0)
		return 0;
	g = (double)(s->now - q->idle_at[--q->nidle]);
	if (g < s->c.cold_after_us)
		return 0;
	us = s->c.cold_us + s->c.cold_per_ms * (g - s->c.cold_after_us) / 1000.0;
	return (int64_t)floor(us + 0.5);
}

/* Jobs of q ended (was of them ran before): the cores they leave idle go
 * idle now. */
static void free_cores(struct sim *s, struct sim_cpu_q *q, size_t was)
{
	size_t cores = (size_t)q->cores;
	size_t before = was < cores ? cores - was : 0;
	size_t after = q->n < cores ? cores - q->n : 0;

	if (!q->idle_at)
		return;
	for (size_t k = before; k < after; k++)
		q->idle_at[q->nidle++] = s->now;
}

void sim_cpu_init(struct sim *s)
{
	bool per_core = s->c.run_queues == SIM_RUNQ_PER_CORE;

	sim_rng_seed(&s->cpu.rng, s->c.seed ^ 0x3c6ef372fe94f82bULL);
	if (s->c.cores <= 0)
		return;
	s->cpu.nq = per_core ? s->c.cores : 1;
	s->cpu.q = xcalloc((size_t)s->cpu.nq, sizeof *s->cpu.q);
	for (int i = 0; i < s->cpu.nq; i++) {
		struct sim_cpu_q *q = &s->cpu.q[i];
		q->cores = per_core ? 1 : s->c.cores;
		q->v_at = s->now;
		if (s->c.cold_after_us <= 0)
			continue;
		q->idle_at = xmalloc((size_t)q->cores * sizeof *q->idle_at);
		for (int k = 0; k < q->cores; k++)
			q->idle_at[k] = s->now;   /* idle since the start */
		q->nidle = q->cores;
	}
}

/* The run queue a new job joins: one drawn at random, or for a process
 * a herd woke the one with the fewest jobs, ties to the lowest. */
static struct sim_cpu_q *pick_queue(struct sim *s, enum sim_cpu_what what)
{
	struct sim_cpu_q *q;

	if (s->cpu.nq == 1)
		return &s->cpu.q[0];
	if (what != CPU_WAKE && what != CPU_WAKE_QUEUED)
		return &s->cpu.q[sim_rng_below(&s->cpu.rng, (uint64_t)s->cpu.nq)];
	q = &s->cpu.q[0];
	for (int i = 1; i < s->cpu.nq; i++)
		if (s->cpu.q[i].n < q->n)
			q = &s->cpu.q[i];
	return q;
}

void sim_cpu_add(struct sim *s, int64_t work_us, enum sim_cpu_what what, uint32_t arg)
{
	struct sim_cpu_q *q;
	struct sim_cpu_job j;

	if (!s->cpu.nq)
		return;                   /* cannot happen: callers check c.cores */
	q = pick_queue(s, what);
	catch_up(s, q);
	work_us += take_core(s, q);
	j.vend = q->v + (double)work_us;
	j.seq = s->cpu.seq++;
	j.what = (uint32_t)what;
	j.arg = arg;
	heap_push(q, j);
	s->cpu.busy_jobs_us += (uint64_t)work_us;
	arm(s, q);
}

void sim_cpu_done(struct sim *s, uint32_t gen)
{
	/* Finish every job of the queue whose work is done (to rounding),
	 * then re-arm before their continuations add new jobs. */
	struct sim_cpu_job done[16];
	struct sim_cpu_q *q = NULL;
	int nd = 0;
	size_t was;

	for (int i = 0; i < s->cpu.nq && !q; i++)
		if (gen != 0 && s->cpu.q[i].gen == gen)
			q = &s->cpu.q[i];
	if (!q)
		return;                   /* re-armed since: a later event stands */
	catch_up(s, q);
	was = q->n;
	while (q->n && q->jobs[0].vend <= q->v + 1e-6 && nd < 16)
		done[nd++] = heap_pop(q);
	if (nd == 0 && q->n)
		done[nd++] = heap_pop(q);   /* rounding: it is due now */
	free_cores(s, q, was);
	arm(s, q);
	for (int i = 0; i < nd; i++)
		s->host->cpu_done(s, (enum sim_cpu_what)done[i].what, done[i].arg);
}

void sim_cpu_free(struct sim *s)
{
	for (int i = 0; i < s->cpu.nq; i++) {
		free(s->cpu.q[i].jobs);
		free(s->cpu.q[i].idle_at);
	}
	free(s->cpu.q);
	s->cpu.q = NULL;
	s->cpu.nq = 0;
}
