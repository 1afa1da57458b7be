/*
 * sim_cpu.c: the CPUs, a processor-sharing station with c.cores servers.
 *
 * With more runnable jobs than cores every job runs slower: n jobs on C
 * cores each get min(1, C / n) of a CPU, the way an operating system's
 * scheduler shares a 2-core laptop among 16 busy clients. The lock
 * holder's CPU part is one such job, so the hold itself grows with load.
 *
 * All jobs advance at the same rate, so one clock of "virtual time" (the
 * work each job has received) serves them all: a job that needs w us of
 * CPU and starts at virtual time v finishes when the clock reaches v + w.
 * Only the earliest finish needs an event; any change in the number of
 * jobs re-arms it, and the event it replaces goes stale (a generation
 * number in its arg). With cores unset none of this runs.
 *
 * A core that has idled long is slow to start (c.cold_after_us): in a
 * virtual machine an idle vCPU halts, and after the host's polling
 * window its wake goes through the host's scheduler; on bare metal a
 * deep power state takes time to leave and the caches have gone cold.
 * While fewer jobs than cores run, the idle cores are kept as a stack of
 * the times they went idle, and a new job takes the one idled last (a
 * scheduler keeps a warm core busy rather than wake a cold one): after
 * idling g >= cold_after_us, the job does cold_us + cold_per_ms (g -
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

static double rate(const struct sim *s)
{
	size_t n = s->cpu.n;

	return n <= (size_t)s->c.cores ? 1.0 : (double)s->c.cores / (double)n;
}

/* Bring the virtual clock up to now at the rate that held since v_at. */
static void catch_up(struct sim *s)
{
	if (s->cpu.n)
		s->cpu.v += (double)(s->now - s->cpu.v_at) * rate(s);
	s->cpu.v_at = s->now;
}

static int before(const struct sim_cpu_job *a, const struct sim_cpu_job *b)
{
	return a->vend < b->vend || (a->vend == b->vend && a->seq < b->seq);
}

static void heap_push(struct sim_cpu *c, struct sim_cpu_job j)
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

static struct sim_cpu_job heap_pop(struct sim_cpu *c)
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

/* Arm the timer for the earliest finish, rounded up to a whole us. */
static void arm(struct sim *s)
{
	double left;

	s->cpu.gen++;                     /* the pending event, if any, is stale */
	if (!s->cpu.n)
		return;
	left = (s->cpu.jobs[0].vend - s->cpu.v) / rate(s);
	sim_push(s, s->now + (left > 0 ? (int64_t)ceil(left - 1e-9) : 0), EV_CPU, s->cpu.gen);
}

/* The extra work of a job starting now, on the core idled last, if one
 * idles; that core is taken. */
static int64_t take_core(struct sim *s)
{
	double g, us;

	if (!s->cpu.idle_at || s->cpu.nidle == 0)
		return 0;
	g = (double)(s->now - s->cpu.idle_at[--s->cpu.nidle]);
	if (g < s->c.cold_after_us)
		return 0;
	us = s->c.cold_us + s->c.cold_per_ms * (g - s->c.cold_after_us) / 1000.0;
	return (int64_t)floor(us + 0.5);
}

/* Jobs ended (was of them ran before): the cores they leave idle go idle
 * now. */
static void free_cores(struct sim *s, size_t was)
{
	size_t cores = (size_t)s->c.cores;
	size_t before = was < cores ? cores - was : 0;
	size_t after = s->cpu.n < cores ? cores - s->cpu.n : 0;

	if (!s->cpu.idle_at)
		return;
	for (size_t k = before; k < after; k++)
		s->cpu.idle_at[s->cpu.nidle++] = s->now;
}

void sim_cpu_init(struct sim *s)
{
	if (s->c.cores <= 0 || s->c.cold_after_us <= 0)
		return;
	s->cpu.idle_at = xmalloc((size_t)s->c.cores * sizeof *s->cpu.idle_at);
	for (int k = 0; k < s->c.cores; k++)
		s->cpu.idle_at[k] = s->now;     /* idle since the start */
	s->cpu.nidle = s->c.cores;
}

void sim_cpu_add(struct sim *s, int64_t work_us, enum sim_cpu_what what, uint32_t arg)
{
	struct sim_cpu_job j;

	catch_up(s);
	work_us += take_core(s);
	j.vend = s->cpu.v + (double)work_us;
	j.seq = s->cpu.seq++;
	j.what = (uint32_t)what;
	j.arg = arg;
	heap_push(&s->cpu, j);
	s->cpu.busy_jobs_us += (uint64_t)work_us;
	arm(s);
}

void sim_cpu_done(struct sim *s, uint32_t gen)
{
	/* Finish every job whose work is done (to rounding), then re-arm
	 * before their continuations add new jobs. */
	struct sim_cpu_job done[16];
	int nd = 0;
	size_t was;

	if (gen != s->cpu.gen)
		return;                   /* re-armed since: a later event stands */
	catch_up(s);
	was = s->cpu.n;
	while (s->cpu.n && s->cpu.jobs[0].vend <= s->cpu.v + 1e-6 && nd < 16)
		done[nd++] = heap_pop(&s->cpu);
	if (nd == 0 && s->cpu.n)
		done[nd++] = heap_pop(&s->cpu);   /* rounding: it is due now */
	free_cores(s, was);
	arm(s);
	for (int i = 0; i < nd; i++)
		s->host->cpu_done(s, (enum sim_cpu_what)done[i].what, done[i].arg);
}

void sim_cpu_free(struct sim *s)
{
	free(s->cpu.jobs);
	s->cpu.jobs = NULL;
	free(s->cpu.idle_at);
	s->cpu.idle_at = NULL;
	s->cpu.nidle = 0;
	s->cpu.n = s->cpu.cap = 0;
}
