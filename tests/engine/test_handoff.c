/*
 * test_handoff.c: how a row lock is handed on, the shared log, and the
 * two server timeouts, each against its closed form.
 *
 *   handoff-1.x  a herd serves waiters in random order: on M/D/1 its mean
 *                wait is FIFO's, rho S / (2 (1 - rho)), its tail longer;
 *                every commit wakes every waiter while the cores can
 *                wake them in a hold; the losers' wakes wait in a run
 *                queue, C at a time, beside the winner's wake and hold,
 *                so past that a commit wakes 1 + C (H + w) / w and takes
 *                (w + H) (C + 1) / C. With --lockmgr-us K a hand-off to
 *                W waiters starts its winner K (W - 1) later: N callers
 *                commit once every H + w + K (N - 2); a burst of N
 *                callers at once (m = N - 1 sleepers) has its mean
 *                latency raised by K m (m - 1) / 3. With --contend-us C
 *                each request that finds its row locked runs C of CPU
 *                beside the hold: two callers on one row and one core
 *                (a hold all CPU, H) commit every H + C; on two cores
 *                every H, and the count is one a commit either way.
 *                With --herd-bias B the waiter r places from the
 *                newest end of the queue weighs 1 + B 2^-r: one of w
 *                wins with its weight over w + 2 B (1 - 2^-w); the
 *                mean wait stays the same (Little: N / X in a closed
 *                loop), the tail grows. With --herd-lanes 1 the losers pass
 *                one at a time, out of the run queue, and the winner
 *                waits for half of those woken with it: a commit every
 *                H + w + w (W - 1) / 2 while the lane drains in a hold,
 *                2 (H + w) with 1 + 2 (H + w) / w wakes past that.
 *   wal-1.x      one hot row gets a flush per commit; N callers on many
 *                rows whose hold is shorter than a flush split into two
 *                halves that take turns: N / 2 commits a flush, N / (2 F)
 *                a second. A flush's CPU part c shares one core with the
 *                half outside (o each): a turn takes N o / 2 + F. With a
 *                herd the log wakes its waiters (w each): a turn takes
 *                F + w, and a commit costs 2 - 2 / N wakes; the
 *                leader's own wake at a flush's end takes w of a core,
 *                which shows when the cores are busy: C / (o + w).
 *   wal-2.x      release-flush (InnoDB): one row's holder lets go before
 *                its flush, so N callers on it share flushes: X stays at
 *                most min(1 / H, N / (H + F + o)) and reaches 1 / H as N
 *                grows, where flush-release stays at 1 / (H + F); the
 *                order may change while commits wait for the log.
 *   timeout-1.x  lock_timeout timed per acquisition: with a herd a waiter
 *                times out once per T of a single hold, (N - 1) q / (1 - q)
 *                timeouts a hold for exponential holds (q = e^(-T/h)), and
 *                never when every hold is shorter than T; statement_timeout
 *                counts the whole wait.
 *   determinism  the same config and seed give the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "engine/sim.h"
#include "engine/sim_impl.h"
#include "tests/engine/simtest.h"

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("expected %.6g within %.2f%%, got %.6g", want, rel * 100, got);
}

/* Poisson arrivals at rho on one row of constant 1 ms holds. */
static void md1_config(struct sim_config *c, double rho, enum sim_handoff h)
{
	simtest_config(c);
	c->arrivals = SIM_ARRIVE_POISSON;
	c->rps = rho * 1000;
	c->hold_ms = 1;
	c->seconds = 300;
	c->handoff = h;
	c->wake_us = 0;
}

/* handoff-1.1: order of service does not change the mean wait of a
 * work-conserving queue, only its spread. */
static void herd__md1_mean_wait_as_fifo_tail_longer(void **state)
{
	struct sim_config c;
	struct sim_summary fifo, herd;
	const double rho = 0.7, wq = rho * 1.0 / (2 * (1 - rho));

	(void)state;
	md1_config(&c, rho, SIM_HANDOFF_FIFO);
	simtest_run(&c, &fifo);
	md1_config(&c, rho, SIM_HANDOFF_HERD);
	simtest_run(&c, &herd);
	assert_near(fifo.mean_wait_ms, wq, 0.05);
	assert_near(herd.mean_wait_ms, wq, 0.05);
	assert_true(herd.latency_ms.p99 > 1.3 * fifo.latency_ms.p99);
	assert_true(herd.worst_wait_ms > 1.5 * fifo.worst_wait_ms);
	assert_int_equal(fifo.wakes, 0);
	assert_true(herd.wakes > 0);
}

/* N callers, one row, nothing outside the lock: at every commit the
 * other N - 1 are waiting, and all of them wake. */
static void herd_closed(struct sim_config *c, int n)
{
	simtest_config(c);
	c->clients = n;
	c->hold_ms = 0.2;
	c->seconds = 20;
	c->handoff = SIM_HANDOFF_HERD;
}

/* handoff-1.2 */
static void herd__every_commit_wakes_every_waiter(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 8);
	c.wake_us = 0;
	simtest_run(&c, &o);
	assert_near((double)o.wakes / (double)o.completed, 7, 0.001);
}

/* handoff-1.3: a hold all CPU on 2 cores. At a hand-off the winner's
 * wake and the first two losers' share the 2 cores (3 jobs: 30 us each);
 * the other four losers take two turns of 30 us beside the hold, which
 * gets 2/3 of a core (40 of its 200 us); then it runs alone (160 us): one
 * commit every 250 us, and every waiter was asleep again before it. FIFO
 * wakes nobody: 0.2 ms. */
static void herd__wakes_on_the_cores_stretch_each_handoff(void **state)
{
	struct sim_config c;
	struct sim_summary herd, fifo;

	(void)state;
	herd_closed(&c, 8);
	c.cores = 2;
	c.cpu_db_ms = c.hold_ms;
	c.wake_us = 20;
	simtest_run(&c, &herd);
	assert_near(herd.throughput_per_s, 1000 / 0.250, 0.01);
	assert_near((double)herd.wakes / (double)herd.completed, 7, 0.001);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &fifo);
	assert_near(fifo.throughput_per_s, 1000 / 0.2, 0.01);
}

/* handoff-1.3b: the same with a run queue per core. The herd's woken
 * take the least busy core, so the losers' wakes run beside the hold as
 * on the shared queue and the closed form holds; drawn at random, two
 * would share a core half the time while the other idled (3,554 a
 * second where 4,000 is right). */
static void herd__a_run_queue_per_core_wakes_on_the_least_busy(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 8);
	c.cores = 2;
	c.run_queues = SIM_RUNQ_PER_CORE;
	c.cpu_db_ms = c.hold_ms;
	c.wake_us = 20;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.250, 0.01);
	assert_near((double)o.wakes / (double)o.completed, 7, 0.001);
}

/* handoff-1.4: more losers than the cores can wake in a hand-off. Their
 * run queue never drains: C of them always run beside the winner's wake
 * and then its hold, each job at C / (C + 1) of a core, so a hand-off
 * takes (w + H) (C + 1) / C and wakes the winner and the C (w + H) / w
 * losers who got a core; the rest were still awake from an earlier
 * commit and are not woken again. H = 200 us, w = 20, C = 2, 32 callers:
 * 330 us a commit, 1 + 22 = 23 wakes where 31 wait. */
static void herd__a_run_queue_longer_than_a_hold_wakes_fewer(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 32);
	c.cores = 2;
	c.cpu_db_ms = c.hold_ms;
	c.wake_us = 20;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.330, 0.01);
	assert_near((double)o.wakes / (double)o.completed, 23, 0.01);
}

/* handoff-1.5: the winner reaches a core L after the commit, then wakes:
 * one commit every hold + L + w, with the wake off the cores (none
 * modelled) or on cores enough for every loser beside it. */
static void herd__the_winner_reaches_a_core_late(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 8);
	c.wake_us = 20;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.220, 0.01);
	c.wake_lat_us = 50;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.270, 0.01);
	c.cores = 64;
	c.cpu_db_ms = c.hold_ms;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.270, 0.01);
	assert_near((double)o.wakes / (double)o.completed, 7, 0.001);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.2, 0.01);
}

/* handoff-1.6: the lock manager. 8 callers: each hand-off wakes 7, and
 * the winner waits K for each of the 6 others, off the cores or on
 * cores enough for all; a FIFO hand-off wakes one and waits for none. */
static void herd__the_winner_waits_for_the_co_woken(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 8);
	c.wake_us = 20;
	c.lockmgr_us = 10;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.280, 0.01);
	c.wake_lat_us = 50;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.330, 0.01);
	c.cores = 64;
	c.cpu_db_ms = c.hold_ms;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.330, 0.01);
	c.lockmgr_us = 2.5;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.285, 0.01);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.2, 0.01);
}

/* handoff-1.9: the losers paced by the lock manager's lock, one at a
 * time (--herd-lanes 1). With cores for all, 8 callers: a hand-off
 * wakes 7 and the winner waits for half of its 6 fellows, a wake each
 * (60 us), then wakes (20) and holds (200): 280 us a commit, and the 6
 * losers (120 us in a row) are asleep again before the next. On 2 cores
 * with 32 callers the lane never drains: in a commit of T it lets T / w
 * losers pass, they are the ones the next commit wakes, and the winner
 * waits for half of them, so T = T / 2 + w + H: 440 us, 1 + 22 wakes a
 * commit. The log's next leader never waits behind them: they are not
 * in the run queue. */
static void herd__one_lane_paces_the_losers(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	herd_closed(&c, 8);
	c.cores = 64;
	c.cpu_db_ms = c.hold_ms;
	c.wake_us = 20;
	c.herd_lanes = 1;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.280, 0.01);
	assert_near((double)o.wakes / (double)o.completed, 7, 0.001);
	herd_closed(&c, 32);
	c.cores = 2;
	c.cpu_db_ms = c.hold_ms;
	c.wake_us = 20;
	c.herd_lanes = 1;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.440, 0.02);
	assert_near((double)o.wakes / (double)o.completed, 23, 0.02);
}

/* handoff-1.6, a burst: N callers send once, at the same instant (a
 * think time longer than the run). The i-th hand-off has N - i waiting,
 * so the k-th request ends K (sum of N - i - 1, i = 1..k) later than
 * without: over all N, K m (m - 1) / 3 later on average (m = N - 1),
 * what bench/fidelity.c's burst probe divides by. */
static void herd__a_burst_drains_later_by_the_closed_form(void **state)
{
	struct sim_config c;
	struct sim_summary base, o;

	(void)state;
	for (int n = 9; n <= 41; n += 32) {
		herd_closed(&c, n);
		c.wake_us = 20;
		c.think_ms = 100000;
		c.seconds = 10;
		simtest_run(&c, &base);
		assert_int_equal(base.completed, n);
		c.lockmgr_us = 3;
		simtest_run(&c, &o);
		assert_int_equal(o.completed, n);
		double m = n - 1;
		assert_near(o.latency_ms.mean - base.latency_ms.mean, 0.003 * m * (m - 1) / 3,
		            0.001);
	}
}

/* handoff-1.8: the biased draw against its closed form, at every
 * position of queues of 1, 2, 3, 15, 70 and 1,024 waiters (70 and 1,024
 * pass the 64 places the draw walks before it turns uniform): u on a
 * grid of 2^18 points stands in for the uniform draw, so the fraction
 * that lands on each waiter is its weight, 1 + B 2^-r for the one r
 * places from the newest, over their sum, to within a grid step at
 * each end (and u near 1 and at 0 stay in range). */
static void herd__biased_draw_by_its_closed_form(void **state)
{
	static const size_t ws[] = { 1, 2, 3, 15, 70, 1024 };
	static const double bs[] = { 0, 0.5, 2, 5 };
	enum { GRID = 1 << 18 };

	(void)state;
	for (size_t a = 0; a < sizeof ws / sizeof ws[0]; a++) {
		size_t w = ws[a];
		for (size_t b = 0; b < sizeof bs / sizeof bs[0]; b++) {
			double bias = bs[b];
			static unsigned at[1024];
			memset(at, 0, sizeof at);
			for (unsigned i = 0; i < GRID; i++) {
				size_t k = sim_herd_pick((i + 0.5) / GRID, w, bias);
				assert_true(k < w);
				at[k]++;
			}
			assert_true(sim_herd_pick(0.9999999999999999, w, bias) == 0);
			assert_true(sim_herd_pick(0, w, bias) == w - 1);
			double sum = 0;
			for (size_t r = 0; r < w; r++)
				sum += 1 + bias * ldexp(1, -(int)r);
			for (size_t j = 0; j < w; j++) {
				double want = (1 + bias * ldexp(1, -(int)(w - 1 - j))) / sum;
				if (fabs((double)at[j] / GRID - want) > 2.0 / GRID + 1e-9)
					fail_msg("w %zu bias %g: position %zu drawn %.6f, want %.6f", w,
					         bias, j, (double)at[j] / GRID, want);
			}
		}
	}
}

/* handoff-1.9: 16 callers on one row, nothing outside it: whoever wins,
 * a commit every hold (X = 1 / H) and a mean latency of N / X; favouring
 * the newest waiters leaves the older ones waiting longer: the p99 grows
 * by about the ratio of the weights' sum to the waiters' count, while
 * the p50 falls. */
static void herd__bias_keeps_the_mean_lengthens_the_tail(void **state)
{
	struct sim_config c;
	struct sim_summary plain, biased;

	(void)state;
	herd_closed(&c, 16);
	c.wake_us = 0;
	simtest_run(&c, &plain);
	c.herd_bias = 2;
	simtest_run(&c, &biased);
	assert_near(biased.throughput_per_s, 5000, 0.01);
	assert_near(plain.throughput_per_s, 5000, 0.01);
	assert_near(biased.latency_ms.mean, 16 * 0.2, 0.01);
	assert_near(plain.latency_ms.mean, 16 * 0.2, 0.01);
	/* a waiter past the first few places wins a hand-off with 1 / 19
	 * instead of 1 / 15 (the sum of the weights of 15 waiters with
	 * B = 2), so the tail stretches by about 19 / 15 */
	double stretch = biased.latency_ms.p99 / plain.latency_ms.p99;
	if (stretch < 1.12 || stretch > 1.4)
		fail_msg("p99 %g ms against %g uniform: %.2f times, want about 19 / 15",
		         biased.latency_ms.p99, plain.latency_ms.p99, stretch);
	assert_true(biased.latency_ms.p50 < plain.latency_ms.p50);
}

/* handoff-1.7: going to sleep on a locked row. Two callers, one row,
 * nothing outside the lock, a hold all CPU (H = 200 us): each request
 * comes as the other's hold begins and runs its C = 50 us beside it. On
 * one core they share it until C is done (100 us), then the hold runs
 * alone (150 us): one commit every H + C. On two cores, or with no cores
 * modelled, the hold keeps its own: every H. Either way, one request in
 * each commit waited, whichever hand-off. */
static void contend__a_waiter_goes_to_sleep_beside_the_hold(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	for (int h = 0; h < 2; h++) {
		herd_closed(&c, 2);
		c.handoff = h ? SIM_HANDOFF_HERD : SIM_HANDOFF_FIFO;
		c.wake_us = 0;
		c.cores = 1;
		c.cpu_db_ms = c.hold_ms;
		c.contend_us = 50;
		simtest_run(&c, &o);
		assert_near(o.throughput_per_s, 1000 / 0.250, 0.01);
		assert_near((double)o.contended / (double)o.completed, 1, 0.001);
		c.cores = 2;
		simtest_run(&c, &o);
		assert_near(o.throughput_per_s, 1000 / 0.200, 0.01);
		assert_near((double)o.contended / (double)o.completed, 1, 0.001);
		c.cores = 0;
		simtest_run(&c, &o);
		assert_near(o.throughput_per_s, 1000 / 0.200, 0.01);
		c.contend_us = 0;
		c.cores = 1;
		simtest_run(&c, &o);
		assert_near(o.throughput_per_s, 1000 / 0.200, 0.01);
	}
}

/* N callers on 65,536 rows (they almost never meet), holds of 0.1 ms, a
 * log whose flush takes F = 1 ms, nothing outside the lock. */
static void wal_config(struct sim_config *c, int n, int rows)
{
	simtest_config(c);
	c->strategy = rows > 1 ? SIM_SHARDED : SIM_NAIVE;
	c->rows = rows;
	c->clients = n;
	c->hold_ms = 0.1;
	c->wal_flush_ms = 1;
	c->seconds = 20;
}

/* wal-1.1: one hot row: no two commits ever wait for a flush together. */
static void wal__one_row_one_flush_per_commit(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	wal_config(&c, 16, 1);
	simtest_run(&c, &o);
	assert_int_equal(o.wal.flushes, o.wal.commits);
	assert_near(o.wal.flushes_per_commit, 1.0, 1e-9);
	/* the lock is held 0.1 + 1 ms: the flush is inside it */
	assert_near(o.throughput_per_s, 1000 / 1.1, 0.01);
}

/* wal-1.2: a commit that arrives during a flush rides the next one; the
 * callers a flush releases come back (0.1 ms) while the next is running,
 * so the two halves alternate: N / 2 commits a flush of F. */
static void wal__group_commit_halves_take_turns(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	const int n = 8;

	(void)state;
	wal_config(&c, n, 65536);
	simtest_run(&c, &o);
	assert_near(o.wal.flushes_per_commit, 2.0 / n, 0.01);
	assert_near(o.throughput_per_s, n / (2 * 1.0) * 1000, 0.01);
	/* without the shared log every row flushes on its own */
	c.wal_flush_ms = 0;
	c.hold_ms = 1.1;
	simtest_run(&c, &o);
	assert_true(o.wal.flushes_per_commit < 0);
	assert_near(o.throughput_per_s, n / 1.1 * 1000, 0.01);
}

/* wal-1.3: the flush's first 0.5 ms is CPU, on one core beside the four
 * callers a flush released, each 0.4 ms of CPU outside the lock: the
 * five share the core until 2.0 ms, the flush's CPU ends at 2.1 and its
 * device part at 2.6; meanwhile the four came back (0.1 ms hold, no CPU)
 * for the next. Four commits every N o / 2 + F = 2.6 ms. Alone on the
 * core the CPU part costs no time: F, as without it. */
static void wal__cpu_part_shares_the_cores(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	const int n = 8;

	(void)state;
	wal_config(&c, n, 65536);
	c.cores = 1;
	c.wal_cpu_ms = 0.5;
	c.outside_ms = c.cpu_client_ms = 0.4;
	simtest_run(&c, &o);
	assert_near(o.wal.flushes_per_commit, 2.0 / n, 0.01);
	assert_near(o.throughput_per_s, n / 2 / (n / 2 * 0.4 + 1.0) * 1000, 0.01);
	c.outside_ms = c.cpu_client_ms = 0;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, n / (2 * 1.0) * 1000, 0.01);
}

/* wal-1.4: with a herd the log's sleepers wake as PostgreSQL's
 * WALWriteLock wakes them: at a flush's end the three it carried behind
 * its leader wake to release their rows, and the four waiting wake to
 * race for the next (one leads it, one wake late). A turn is F + w; each
 * follower wakes twice: (N / 2 - 1 + N / 2) / (N / 2) = 2 - 2 / N a
 * commit. FIFO's log wakes nobody. */
static void wal__herd_wakes_the_log_waiters(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	const int n = 8;
	const double w = 0.1;

	(void)state;
	wal_config(&c, n, 65536);
	c.hold_ms = 0.2;
	c.cores = 64;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = w * 1000;
	simtest_run(&c, &o);
	assert_near(o.wal.flushes_per_commit, 2.0 / n, 0.01);
	assert_near(o.throughput_per_s, n / 2 / (1.0 + w) * 1000, 0.01);
	assert_near((double)o.wal.wakes / (double)o.wal.commits, 2 - 2.0 / n, 0.01);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &o);
	assert_int_equal(o.wal.wakes, 0);
	assert_near(o.throughput_per_s, n / 2 / 1.0 * 1000, 0.01);
}

/* wal-1.7: the next flush's leader reaches a core L after the last
 * flush ends, then wakes: a turn of wal-1.4 is F + L + w (the last
 * leader, back after its 0.2 ms hold, and the followers, back after a
 * wake and a hold, still come after the next flush began). The rows' own
 * hand-offs are not herds here (they never meet), and FIFO's log wakes
 * nobody, late or not. */
static void wal__the_next_leader_reaches_a_core_late(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	const int n = 8;
	const double w = 0.1, lat = 0.05;

	(void)state;
	wal_config(&c, n, 65536);
	c.hold_ms = 0.2;
	c.cores = 64;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = w * 1000;
	c.wake_lat_us = lat * 1000;
	simtest_run(&c, &o);
	assert_near(o.wal.flushes_per_commit, 2.0 / n, 0.01);
	assert_near(o.throughput_per_s, n / 2 / (1.0 + w + lat) * 1000, 0.01);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, n / 2 / 1.0 * 1000, 0.01);
}

/* wal-1.5: the leader sleeps in its sync and needs a core back before
 * the flush is over. Two callers, one core, 2 ms of CPU outside the lock
 * each, holds of 0.1 ms and flushes of 1 ms that never meet: the core
 * is never idle, and every flush takes w of it for its leader's wake, so
 * X = C / (o + w) = 1 / 2.1 ms (without it, 1 / 2 ms: the core would
 * serve the outside parts alone). With idle cores the wake is inside F:
 * a turn is still F + w, as in wal-1.4. */
static void wal__the_leader_wakes_on_the_cores(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	wal_config(&c, 2, 65536);
	c.cores = 1;
	c.outside_ms = c.cpu_client_ms = 2.0;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = 100;
	simtest_run(&c, &o);
	assert_near(o.wal.flushes_per_commit, 1.0, 0.001);
	assert_near(o.throughput_per_s, 1000 / (2.0 + 0.1), 0.01);
}

/* wal-1.8: the leader's fdatasync returns into the run queue behind the
 * herd's losers. One core, wakes W = 50 us, a hold of 0.1 ms off the
 * cores, a flush of 0.5 ms that is the device's but for the leader's
 * wake. 20 callers: a commit wakes the 19 waiters; the winner and the
 * first loser share the core (both awake at 2W), the other 17 losers
 * follow one at a time (the last starts at 18W = 900 us). The sync
 * returns at 2W + 0.1 + (0.5 - W) = 650 us, behind the 8 losers not yet
 * started: the leader runs beside the last, both done at 20W = 1 ms. One
 * commit a millisecond, every loser asleep again before it (19 wakes a
 * commit); running at once, the leader was done at 650 + 2W = 750 us.
 * With 4 callers the losers are done at 3W = 150 us and the leader runs
 * alone: 650 + W = 700 us. */
static void wal__the_leader_waits_behind_the_losers(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	wal_config(&c, 20, 1);
	c.pool = 0;
	c.cores = 1;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = 50;
	c.wal_flush_ms = 0.5;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 1.0, 0.01);
	assert_near((double)o.wakes / (double)o.completed, 19, 0.01);
	assert_near(o.wal.flushes_per_commit, 1.0, 0.001);
	c.clients = 4;
	simtest_run(&c, &o);
	assert_near(o.throughput_per_s, 1000 / 0.7, 0.01);
}

/* wal-1.6: a follower pays the flush's CPU part as its leader does.
 * Eight callers, one core, 2 ms of CPU outside the lock each, flushes of
 * 1 ms whose first 0.5 ms is CPU, wakes of 1 us: the core never idles,
 * so X = C / (o + 0.5) = 1 / 2.5 ms however many commits a flush carries
 * (sharing the CPU part among them would give more). FIFO's log wakes
 * nobody: its followers ride for free, above 1 / 2.5 ms. */
static void wal__a_follower_pays_the_flush_cpu(void **state)
{
	struct sim_config c;
	struct sim_summary o;

	(void)state;
	wal_config(&c, 8, 65536);
	c.cores = 1;
	c.outside_ms = c.cpu_client_ms = 2.0;
	c.wal_cpu_ms = 0.5;
	c.handoff = SIM_HANDOFF_HERD;
	c.wake_us = 1;
	simtest_run(&c, &o);
	assert_true(o.wal.flushes_per_commit < 0.9);
	assert_near(o.throughput_per_s, 1000 / 2.5, 0.01);
	c.handoff = SIM_HANDOFF_FIFO;
	simtest_run(&c, &o);
	assert_true(o.wal.flushes_per_commit < 0.9);
	assert_true(o.throughput_per_s > 1000 / 2.5 * 1.05);
}

/* N callers on one row, holds of H = 0.1 ms, flushes of F = 1 ms, o ms
 * outside the lock, a pool as large as they need, in the given order. */
static void order_run(int n, double o, enum sim_wal_order order, struct sim_summary *out)
{
	struct sim_config c;

	wal_config(&c, n, 1);
	c.pool = 0;
	c.outside_ms = o;
	c.wal_order = order;
	simtest_run(&c, out);
}

/* wal-2.1: one caller alone waits out hold and flush either way:
 * 1 / (H + F). */
static void release_flush__one_caller_waits_hold_and_flush(void **state)
{
	struct sim_summary o;

	(void)state;
	order_run(1, 0, SIM_WAL_RELEASE_FLUSH, &o);
	assert_near(o.throughput_per_s, 1000 / 1.1, 0.01);
	assert_near(o.wal.flushes_per_commit, 1.0, 1e-9);
}

/* wal-2.2: more callers on the one row share flushes: a turn of F
 * carries the N / 2 who held the row during the flush before (N / 2 x H
 * is less than F), so X = N / (2 F), under the bound N / (H + F + o) and
 * under 1 / H; 2 / N flushes a commit. Flush-release keeps the row
 * through every flush: 1 / (H + F) and one flush a commit, whatever N. */
static void release_flush__callers_share_flushes(void **state)
{
	struct sim_summary o;
	const int n = 8;

	(void)state;
	order_run(n, 0, SIM_WAL_RELEASE_FLUSH, &o);
	assert_near(o.throughput_per_s, n / (2 * 1.0) * 1000, 0.01);
	assert_true(o.throughput_per_s <= n / 1.1 * 1000);
	assert_near(o.wal.flushes_per_commit, 2.0 / n, 0.01);
	assert_true(o.wal.flushes_per_commit < 1);
	order_run(n, 0, SIM_WAL_FLUSH_RELEASE, &o);
	assert_near(o.throughput_per_s, 1000 / 1.1, 0.01);
	assert_near(o.wal.flushes_per_commit, 1.0, 1e-9);
}

/* wal-2.3: as callers grow the row alone binds: X reaches 1 / H = 10,000
 * a second (within 1 %), with or without 0.5 ms outside the lock, while
 * flush-release stays at 1 / (H + F), 9.1 times less. Few callers with
 * time outside stay under N / (H + F + o). */
static void release_flush__many_callers_reach_one_over_hold(void **state)
{
	struct sim_summary o;

	(void)state;
	order_run(64, 0, SIM_WAL_RELEASE_FLUSH, &o);
	assert_near(o.throughput_per_s, 1000 / 0.1, 0.01);
	assert_true(o.throughput_per_s <= 1000 / 0.1 * 1.0001);
	order_run(64, 0.5, SIM_WAL_RELEASE_FLUSH, &o);
	assert_near(o.throughput_per_s, 1000 / 0.1, 0.01);
	order_run(4, 0.5, SIM_WAL_RELEASE_FLUSH, &o);
	assert_true(o.throughput_per_s <= 4 / (0.1 + 1 + 0.5) * 1000 * 1.0001);
	assert_true(o.throughput_per_s > 1000 / 1.1 * 1.5);
	order_run(64, 0, SIM_WAL_FLUSH_RELEASE, &o);
	assert_near(o.throughput_per_s, 1000 / 1.1, 0.01);
}

/* wal-2.4: the order changes every 0.5 s while commits wait for the log
 * (a change lands mid-flush): each commit keeps the order it joined the
 * log under, held rows are released and released ones answered at their
 * flush, and every like is answered and counted once. The run is half
 * flush-release (909/s) and half release-flush (4,000/s). */
static void release_flush__order_changes_mid_flush(void **state)
{
	struct sim_config c, other;
	struct sim_summary o;
	struct sim *s;

	(void)state;
	wal_config(&c, 8, 1);
	c.pool = 0;
	c.seconds = 4;
	other = c;
	other.wal_order = SIM_WAL_RELEASE_FLUSH;
	s = sim_new(&c);
	for (int k = 1; k < 8; k++) {
		sim_advance(s, k * 500000 + 370);
		sim_set(s, k % 2 ? &other : &c);
	}
	sim_run(s);
	sim_summary(s, &o);
	sim_free(s);
	assert_int_equal(o.completed, o.offered);
	assert_int_equal(o.wal.commits, o.completed);
	assert_int_equal(o.count.true_count, (int64_t)o.completed);
	assert_int_equal(o.count.visible, o.count.true_count);
	assert_near(o.throughput_per_s, (1000 / 1.1 + 8 / 2.0 * 1000) / 2, 0.02);
}

/* N callers on one row with exponential holds of mean h, nothing outside
 * the lock, no retries: a timed-out caller sends again at once. */
static void timeout_config(struct sim_config *c, int n, enum sim_handoff h)
{
	simtest_config(c);
	c->clients = n;
	c->hold_ms = 1;
	c->hold_dist = SIM_DIST_EXP;
	c->seconds = 200;
	c->handoff = h;
	c->wake_us = 0;
}

/* timeout-1.1: with a herd every hand-off starts each waiter's clock
 * again, so a waiter times out only within one hold, once per T of it:
 * E[floor(X / T)] = q / (1 - q) for X exponential, q = e^(-T/h), per
 * waiter, and N - 1 wait through every hold. */
static void lock_timeout__per_acquisition_rate_under_a_herd(void **state)
{
	struct sim_config c;
	struct sim_summary o;
	const int n = 4;
	const double t = 1.0, q = exp(-t / 1.0);

	(void)state;
	timeout_config(&c, n, SIM_HANDOFF_HERD);
	c.lock_timeout_ms = t;
	simtest_run(&c, &o);
	assert_near((double)o.lock_timeouts / (double)o.completed, (n - 1) * q / (1 - q), 0.03);
	assert_int_equal(o.statement_timeouts, 0);
}

/* timeout-1.2: constant 1 ms holds and T = 1.5 ms. The third of three
 * callers waits two holds. FIFO times that whole wait: it fires. A herd
 * restarts the clock at the hand-off, and no single hold reaches T: it
 * never fires, though waits of 2 ms and more happen. statement_timeout
 * times the whole wait whatever the hand-off: it fires. */
static void lock_timeout__restarts_at_each_herd_handoff(void **state)
{
	struct sim_config c;
	struct sim_summary fifo, herd, stmt;

	(void)state;
	timeout_config(&c, 3, SIM_HANDOFF_FIFO);
	c.hold_dist = SIM_DIST_CONST;
	c.seconds = 5;
	c.lock_timeout_ms = 1.5;
	simtest_run(&c, &fifo);
	c.handoff = SIM_HANDOFF_HERD;
	simtest_run(&c, &herd);
	c.lock_timeout_ms = 0;
	c.statement_timeout_ms = 1.5;
	simtest_run(&c, &stmt);
	assert_true(fifo.lock_timeouts > 100);
	assert_int_equal(herd.lock_timeouts, 0);
	assert_int_equal(herd.failed, 0);
	assert_true(herd.worst_wait_ms >= 2.0);
	assert_true(stmt.statement_timeouts > 100);
	assert_int_equal(stmt.lock_timeouts, 0);
	assert_true(stmt.worst_wait_ms <= 1.5);
}

/* determinism: every new mechanism at once, twice; another seed differs. */
static void herd_wal_timeouts__same_seed_same_bytes(void **state)
{
	struct sim_config c;
	char *a, *b, *d;

	(void)state;
	wal_config(&c, 32, 16);
	c.handoff = SIM_HANDOFF_HERD;
	c.hold_dist = SIM_DIST_EXP;
	c.cores = 2;
	c.cpu_db_ms = 0.05;
	c.wake_us = 20;
	c.outside_ms = 0.1;
	c.lock_timeout_ms = 0.5;
	c.statement_timeout_ms = 3;
	c.seconds = 2;
	a = simtest_json(&c);
	b = simtest_json(&c);
	c.seed = 2;
	d = simtest_json(&c);
	assert_string_equal(a, b);
	assert_true(strcmp(a, d) != 0);
	assert_non_null(strstr(a, "\"handoff\":\"herd\""));
	free(a);
	free(b);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(herd__md1_mean_wait_as_fifo_tail_longer),
		cmocka_unit_test(herd__every_commit_wakes_every_waiter),
		cmocka_unit_test(herd__wakes_on_the_cores_stretch_each_handoff),
		cmocka_unit_test(herd__a_run_queue_per_core_wakes_on_the_least_busy),
		cmocka_unit_test(herd__a_run_queue_longer_than_a_hold_wakes_fewer),
		cmocka_unit_test(herd__the_winner_reaches_a_core_late),
		cmocka_unit_test(herd__the_winner_waits_for_the_co_woken),
		cmocka_unit_test(herd__one_lane_paces_the_losers),
		cmocka_unit_test(herd__a_burst_drains_later_by_the_closed_form),
		cmocka_unit_test(herd__biased_draw_by_its_closed_form),
		cmocka_unit_test(herd__bias_keeps_the_mean_lengthens_the_tail),
		cmocka_unit_test(contend__a_waiter_goes_to_sleep_beside_the_hold),
		cmocka_unit_test(wal__one_row_one_flush_per_commit),
		cmocka_unit_test(wal__group_commit_halves_take_turns),
		cmocka_unit_test(lock_timeout__per_acquisition_rate_under_a_herd),
		cmocka_unit_test(lock_timeout__restarts_at_each_herd_handoff),
		cmocka_unit_test(wal__cpu_part_shares_the_cores),
		cmocka_unit_test(wal__herd_wakes_the_log_waiters),
		cmocka_unit_test(wal__the_leader_wakes_on_the_cores),
		cmocka_unit_test(wal__a_follower_pays_the_flush_cpu),
		cmocka_unit_test(wal__the_next_leader_reaches_a_core_late),
		cmocka_unit_test(wal__the_leader_waits_behind_the_losers),
		cmocka_unit_test(release_flush__one_caller_waits_hold_and_flush),
		cmocka_unit_test(release_flush__callers_share_flushes),
		cmocka_unit_test(release_flush__many_callers_reach_one_over_hold),
		cmocka_unit_test(release_flush__order_changes_mid_flush),
		cmocka_unit_test(herd_wal_timeouts__same_seed_same_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
