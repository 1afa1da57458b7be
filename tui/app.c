/*
 * app.c: simulations, keys, tours and the frame loop.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ncurses.h>

#include "engine/xmalloc.h"
#include "tui/app.h"
#include "tui/follow.h"
#include "tui/compare.h"
#include "tui/help.h"
#include "tui/rewind.h"
#include "tui/term.h"
#include "cli/simconf.h"
#include "util/clock.h"

#define FPS 30

struct tui_app {
	struct sim_config cfg;        /* the chosen setup (the right side) */
	struct sim *sim;
	struct sim *naive;            /* compare mode's left side, else NULL */
	struct sim_config left;       /* its own setup, when left_own */
	bool left_own;                /* the left is a setup picked for it (else the
	                                 naive row of cfg, following its settings) */
	char label[2][52];            /* the panes' names, left and right */
	struct tui_compare picker;    /* the compare picker (c) */
	struct sim_snapshot *snap, *snap2;
	int64_t t_us;                 /* simulated time both sims reached */
	struct tui_rewind *rw, *rw2;  /* their pasts (tui/rewind.h) */
	int64_t *step_at;             /* a tour: when each step began in this
	                                 run (a restart forgets), -1 unknown */
	struct tui_view view;
	int speed_i;
	char msg[96];
	double msg_left_s;            /* wall seconds the message stays */
	struct sim_config good;       /* the last settings the engine took */
	char refused[160];            /* why it refused the newest, until said */
	int scenario_i;
	bool quit;

	/* the tour, if one plays */
	struct tui_tour *tour;
	int step;
	double step_t;                /* simulated seconds into the step */
	int fault_i;                  /* the step's next fault to inject */
	struct sim_summary ask_from;  /* an ask step's engine as it started */
	bool unapplied;               /* the step's settings wait for the vote */
	double autoplay_s;            /* a waiting step goes on after this long; 0 never */
	bool loop;                    /* after the last step, the tour again */
	double idle_s;                /* real seconds the tour has waited */
	const char *choices[4];
	char reveal[600];
};

static const double speeds[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100};
#define NSPEEDS (int)(sizeof speeds / sizeof speeds[0])

static void say(struct tui_app *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct tui_app *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof a->msg, fmt, ap);
	va_end(ap);
	a->msg_left_s = 3;
}

/* Does the engine take a->cfg? If not, go back to the last settings it
 * took and keep the reason to show (a key's own note would hide it). */
static bool settle(struct tui_app *a)
{
	char err[150];

	if (sim_config_check(&a->cfg, err, sizeof err) == 0) {
		a->good = a->cfg;
		return true;
	}
	if (a->sim)
		a->cfg = a->good;
	snprintf(a->refused, sizeof a->refused, "refused: %s", err);
	return false;
}

/* Compare mode's left side: every field of the chosen setup but its
 * write path, which is naive on one row; or, when the two sides were
 * picked (c), the left's own setup on the right's seed. */
static struct sim_config left_side(const struct tui_app *a)
{
	struct sim_config nc = a->cfg;

	if (a->left_own) {        /* a setup of its own, on the right's seed */
		nc = a->left;
		nc.seed = a->cfg.seed;
		return nc;
	}
	nc.strategy = SIM_NAIVE;
	nc.rows = 1;
	return nc;
}

/* Rebuild the simulation(s) from a->cfg at t = 0. Settings the engine
 * refuses leave the running simulation as it is. */
static void restart(struct tui_app *a)
{
	struct sim *s, *n = NULL;
	struct sim_config before = a->good;

	if (!settle(a))
		return;
	if (!(s = sim_new(&a->cfg))) {     /* settle checked: not reached */
		a->cfg = a->good = before;
		return;
	}
	if (a->naive) {
		struct sim_config nc = left_side(a);
		if (!(n = sim_new(&nc))) {
			sim_free(s);
			if (a->sim)
				a->cfg = a->good = before;
			snprintf(a->refused, sizeof a->refused, "refused: no naive side for these settings");
			return;
		}
		sim_free(a->naive);
		a->naive = n;
	}
	sim_free(a->sim);
	a->sim = s;
	a->t_us = 0;
	tui_rewind_free(a->rw);
	tui_rewind_free(a->rw2);
	for (int i = 0; a->tour && i < a->tour->nsteps; i++)
		a->step_at[i] = -1;
	a->rw = tui_rewind_new(s);
	a->rw2 = a->naive ? tui_rewind_new(a->naive) : NULL;
}

/* Push live settings (rate, hold, pool, strategy, rows...) into the
 * running sims: what is in flight stays, new arrivals follow them. */
static void push(struct tui_app *a)
{
	if (!settle(a))
		return;
	tui_rewind_set(a->rw, a->sim, &a->cfg);
	/* Every live setting reaches the naive side too (lock_timeout, the
	 * retry budget, idempotent likes ...) but the write path, which is
	 * what differs. A left side with a setup of its own keeps it. */
	if (a->naive && !a->left_own) {
		struct sim_config nc = left_side(a);
		tui_rewind_set(a->rw2, a->naive, &nc);
	}
}

/* A fault now, kept in the record so that a replay injects it again. */
static void inject(struct tui_app *a, enum sim_fault f)
{
	tui_rewind_inject(a->rw, a->sim, f);
	say(a, "injected: %s crash", sim_fault_name(f));
}

/* A key's change to a->cfg: pushed into the running sims when the engine
 * takes it live, rebuilt from t = 0 when it changes what the simulation
 * was built on (sim_config_restarts, the engine's own list). Returns
 * whether it restarted. */
static bool apply(struct tui_app *a)
{
	if (sim_config_restarts(&a->good, &a->cfg)) {
		restart(a);
		return a->t_us == 0;
	}
	push(a);
	return false;
}

static const char *restarted(bool yes)
{
	return yes ? " (restarted at t = 0)" : "";
}

static void play_raw(struct tui_app *a, double sim_s)
{
	if (sim_s <= 0)
		return;
	a->t_us += (int64_t)(sim_s * 1e6 + 0.5);
	tui_rewind_play(a->rw, a->sim, a->t_us);
	if (a->naive)
		tui_rewind_play(a->rw2, a->naive, a->t_us);
}

/* Follow as mode says (the f key, a tour step), in the run's record. */
static void follow(struct tui_app *a, enum tui_follow_mode mode, bool cycle)
{
	a->view.follow = (int)(cycle ? tui_follow_cycle : tui_follow_set)(a->sim, mode, a->msg,
	                                                                  sizeof a->msg);
	tui_rewind_mark(a->rw, a->sim);
}

/* The simulation(s) as they were at t (<= a->t_us), from the record:
 * the settings, faults and whom to follow included. */
static void go(struct tui_app *a, int64_t t)
{
	struct sim *s = tui_rewind_to(a->rw, t);
	sim_free(a->sim);
	a->sim = s;
	if (a->naive) {
		s = tui_rewind_to(a->rw2, t);
		sim_free(a->naive);
		a->naive = s;
	}
	a->t_us = t;
	a->cfg = a->good = *tui_rewind_settings(a->rw, a->sim);   /* the keys change from these */
	a->msg[0] = '\0';      /* notes from another moment */
	switch (sim_record_follow(a->sim)) {
	case SIM_CALL_FOLLOW_NTH:     a->view.follow = TUI_FOLLOW_NEXT; break;
	case SIM_CALL_FOLLOW_SLOWEST: a->view.follow = TUI_FOLLOW_SLOWEST; break;
	default:                      a->view.follow = TUI_FOLLOW_OFF; break;
	}
	/* A tour step that follows says so for as long as it runs: back at
	 * its start, its note too. */
	if (a->tour && a->step_at[a->step] == t && a->tour->steps[a->step].follow >= 0)
		tui_follow_say((enum tui_follow_mode)a->tour->steps[a->step].follow,
		               (enum tui_follow_mode)a->view.follow, a->msg, sizeof a->msg);
}

void tui_app_compare(struct tui_app *a, bool on)
{
	if (on == (a->naive != NULL))
		return;
	a->left_own = false;
	a->view.label[0] = a->view.label[1] = NULL;     /* BEFORE and AFTER */
	if (on) {
		if (a->cfg.strategy == SIM_NAIVE) {
			a->cfg.strategy = SIM_SHARDED;
			a->cfg.rows = 16;
		}
		a->naive = sim_new(&a->cfg);   /* replaced by restart() */
	} else {
		sim_free(a->naive);
		a->naive = NULL;
	}
	restart(a);
}

void tui_app_setup_files(struct tui_app *a, const char *const *files, int n)
{
	tui_compare_init(&a->picker, files, n);
}

int tui_app_compare_setups(struct tui_app *a, const char *left, const char *right,
                           char *err, size_t errlen)
{
	int k[2] = { tui_compare_find(&a->picker, left), tui_compare_find(&a->picker, right) };

	for (int i = 0; i < 2; i++)
		if (k[i] < 0) {
			snprintf(err, errlen, "'%s' is not a setup (current, naive, a scenario, "
			         "or a file given with --setup)", i ? right : left);
			return -1;
		}
	return tui_app_compare_picks(a, k[0], k[1], err, errlen);
}

int tui_app_compare_picks(struct tui_app *a, int left, int right, char *err, size_t errlen)
{
	struct sim_config c[2];
	char label[2][48];
	const int k[2] = { left, right };

	for (int i = 0; i < 2; i++)
		if (tui_compare_setup(&a->picker, k[i], &a->cfg, &c[i], label[i], sizeof label[i],
		                      err, errlen) < 0)
			return -1;
	if (left == TUI_CMP_NAIVE && right == TUI_CMP_CURRENT) {
		tui_app_compare(a, false);       /* the classic: naive beside the fix */
		tui_app_compare(a, true);
		return 0;
	}
	tui_app_compare(a, false);
	struct sim *before = a->sim;
	a->cfg = c[1];
	a->left = c[0];
	a->left_own = true;
	a->naive = sim_new(&a->left);   /* a stand-in: restart() builds both */
	restart(a);
	if (a->sim == before) {         /* refused: the screen goes on as it was */
		snprintf(err, errlen, "%s", a->refused[0] ? a->refused : "refused by the engine");
		a->refused[0] = '\0';
		tui_app_compare(a, false);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		snprintf(a->label[i], sizeof a->label[i], "%c %.47s", 'A' + i, label[i]);
		a->view.label[i] = a->label[i];
	}
	return 0;
}

void tui_app_set_speed(struct tui_app *a, double x)
{
	/* the ladder step at or above x, so < and > move on from there */
	for (a->speed_i = 0; a->speed_i < NSPEEDS - 1 && speeds[a->speed_i] < x * 0.999;)
		a->speed_i++;
	a->view.speed = x;
}

/* Play d simulated seconds of the current tour step, injecting its
 * faults at their times. */
static void step_play(struct tui_app *a, double d)
{
	const struct tui_tour_step *st = &a->tour->steps[a->step];
	double end = a->step_t + d;

	while (a->fault_i < st->nfaults && st->faults[a->fault_i].at_s <= end) {
		const struct tui_tour_fault *f = &st->faults[a->fault_i++];
		if (f->at_s > a->step_t) {
			play_raw(a, f->at_s - a->step_t);
			a->step_t = f->at_s;
		}
		inject(a, f->kind);
	}
	play_raw(a, end - a->step_t);
	a->step_t = end;
}

/* The current step's settings, speed, split screen and the faults due on
 * entry: what the step changes in the engine. */
static void apply_step(struct tui_app *a)
{
	const struct tui_tour_step *st = &a->tour->steps[a->step];
	char err[160];
	bool again = false;

	a->unapplied = false;
	if (tui_tour_apply(st, &a->cfg, &again, err, sizeof err) < 0)
		say(a, "%s", err);     /* cannot happen: the parser checked */
	if (st->speed > 0)
		tui_app_set_speed(a, st->speed);
	if (st->compare == 2) {     /* two setups, after the step's settings */
		if (tui_app_compare_setups(a, st->compare_with[0], st->compare_with[1],
		                           err, sizeof err) < 0)
			say(a, "compare: %s", err);
		again = false;
	} else {
		if (st->compare == 1 && a->left_own)   /* back to naive beside the fix */
			tui_app_compare(a, false);
		if (st->compare >= 0 && (st->compare == 1) != (a->naive != NULL))
			tui_app_compare(a, st->compare == 1), again = false;
	}
	if (again)
		restart(a);
	else
		push(a);
	a->fault_i = 0;
	if (st->follow >= 0)
		follow(a, (enum tui_follow_mode)st->follow, false);
	step_play(a, 0);         /* the faults due on entry */
	sim_summary(a->sim, &a->ask_from);
}

/* Enter tour step k from the current state: its words, and its settings
 * unless it asks a question. A question's settings wait for the vote
 * (apply_step from the answer, or from Enter): until then the panels show
 * the engine as the last step left it, so they cannot give the answer
 * away ("ceiling 16,000/s" while the room guesses the ceiling). */
static void show_step(struct tui_app *a, int k)
{
	const struct tui_tour_step *st = &a->tour->steps[k];

	a->step = k;
	a->step_t = 0;
	a->view.step = k;
	a->view.step_title = st->title;
	a->view.narration = st->say;
	a->view.step_done = false;
	a->view.question = st->nchoices ? st->ask : NULL;
	a->view.asking = st->nchoices > 0;
	a->view.chosen = -1;
	a->view.right = st->answer;
	a->view.nchoices = st->nchoices;
	for (int i = 0; i < 4; i++)
		a->choices[i] = st->choices[i];
	a->view.choices = a->choices;
	a->view.reveal = NULL;
	a->fault_i = 0;
}

static void enter_step(struct tui_app *a, int k)
{
	show_step(a, k);
	if (a->tour->steps[k].nchoices > 0) {
		a->unapplied = true;
		return;
	}
	apply_step(a);
	a->step_at[k] = a->t_us;   /* after apply_step: it may have restarted */
}

/* Back to the moment tour step k began, through the run's record
 * (tui/rewind.h), keeping what the user changed before it: false when
 * the record does not reach it (the run restarted since, or the step
 * asks a question, whose settings must wait for the vote again). */
static bool tour_back(struct tui_app *a, int k)
{
	const struct tui_tour_step *st = &a->tour->steps[k];

	if (a->step_at[k] < 0)
		return false;
	show_step(a, k);
	go(a, a->step_at[k]);
	a->unapplied = false;
	while (a->fault_i < st->nfaults && st->faults[a->fault_i].at_s <= 0)
		a->fault_i++;             /* injected on entry: in the record */
	if (st->speed > 0)
		tui_app_set_speed(a, st->speed);
	return true;
}

/* The step's time is up: wait, and reveal its question's answer. */
static void step_end(struct tui_app *a)
{
	const struct tui_tour_step *st = &a->tour->steps[a->step];
	struct sim_summary to;

	a->view.step_done = true;
	a->view.asking = false;
	if (!st->nchoices)
		return;
	sim_summary(a->sim, &to);
	tui_tour_reveal(st, &a->ask_from, &to, a->reveal, sizeof a->reveal);
	a->view.reveal = a->reveal;
}

bool tui_app_tour_answer(struct tui_app *a, int letter)
{
	int k = letter >= 'a' && letter <= 'd' ? letter - 'a'
	      : letter >= 'A' && letter <= 'D' ? letter - 'A' : -1;

	if (!a->tour || !a->view.asking || k < 0 || k >= a->view.nchoices)
		return false;
	a->view.chosen = k;
	a->view.asking = false;
	apply_step(a);                /* the vote is in: now the step may show */
	return true;
}

void tui_app_tour_goto(struct tui_app *a, int k)
{
	if (!a->tour)
		return;
	if (k < 0)
		k = 0;
	if (k >= a->tour->nsteps)
		k = a->tour->nsteps - 1;
	tui_tour_base(a->tour, &a->cfg);
	if (a->naive) {
		sim_free(a->naive);
		a->naive = NULL;
	}
	a->left_own = false;
	a->view.label[0] = a->view.label[1] = NULL;
	tui_app_set_speed(a, 1);
	restart(a);
	for (int i = 0; i < k; i++) {
		enter_step(a, i);
		if (a->unapplied)
			apply_step(a);
		step_play(a, a->tour->steps[i].run_s);
	}
	a->msg[0] = '\0';       /* notes from the replay are old news */
	enter_step(a, k);
}

void tui_app_tour_finish_step(struct tui_app *a)
{
	if (!a->tour || a->view.step_done)
		return;
	a->view.asking = false;       /* Enter on a question: no answer given */
	if (a->unapplied)
		apply_step(a);
	step_play(a, a->tour->steps[a->step].run_s - a->step_t);
	step_end(a);
}

struct tui_app *tui_app_new(const struct sim_config *c, struct tui_tour *tour,
                            bool ascii)
{
	struct tui_app *a = xcalloc(1, sizeof *a);

	if (c)
		a->cfg = *c;
	a->snap = xmalloc(sizeof *a->snap);
	a->snap2 = xmalloc(sizeof *a->snap2);
	tui_compare_init(&a->picker, NULL, 0);
	tui_app_set_speed(a, 1);
	a->view.ascii = ascii;
	a->tour = tour;
	if (tour)
		a->step_at = xcalloc((size_t)tour->nsteps, sizeof *a->step_at);
	for (int i = 0; sim_scenario_names()[i]; i++)
		if (!strcmp(sim_scenario_names()[i], a->cfg.scenario))
			a->scenario_i = i;
	if (tour) {
		tui_tour_base(tour, &a->cfg);
		if (!settle(a))        /* the parser checked it: not reached */
			goto refused;
		a->view.tour_title = tour->title[0] ? tour->title : "tour";
		a->view.nsteps = tour->nsteps;
		tui_app_tour_goto(a, 0);
	} else {
		restart(a);
	}
	if (!a->sim) {
refused:
		tui_app_free(a);       /* and the tour with it */
		return NULL;
	}
	a->refused[0] = '\0';
	return a;
}

void tui_app_free(struct tui_app *a)
{
	if (!a)
		return;
	sim_free(a->sim);
	sim_free(a->naive);
	tui_rewind_free(a->rw);
	tui_rewind_free(a->rw2);
	free(a->step_at);
	free(a->snap);
	free(a->snap2);
	tui_tour_free(a->tour);
	free(a);
}

const struct sim_snapshot *tui_app_snapshot(const struct tui_app *a)
{
	return a->snap;
}

const struct sim_snapshot *tui_app_snapshot_left(const struct tui_app *a)
{
	return a->naive ? a->snap2 : NULL;
}

double tui_app_now(const struct tui_app *a)
{
	return (double)a->t_us / 1e6;
}

struct tui_view *tui_app_view(struct tui_app *a)
{
	return &a->view;
}

void tui_app_play(struct tui_app *a, double sim_s)
{
	if (a->tour)
		step_play(a, sim_s);
	else
		play_raw(a, sim_s);
}

void tui_app_autoplay(struct tui_app *a, double seconds, bool loop)
{
	a->autoplay_s = seconds > 0 ? seconds : 0;
	a->loop = loop && a->autoplay_s > 0;
	a->idle_s = 0;
}

/* Unattended (--autoplay, --loop): a tour that has waited autoplay_s
 * goes on as a presenter would: a question closes unanswered and its
 * step plays; a finished step leads to the next; the last one, with
 * loop, to the first. true when it moved. */
static bool autoplay(struct tui_app *a, double real_s)
{
	if (!a->tour || a->autoplay_s <= 0 || !(a->view.step_done || a->view.asking))
		return false;
	if ((a->idle_s += real_s) < a->autoplay_s)
		return false;
	a->idle_s = 0;
	if (a->view.asking) {
		a->view.asking = false;
		if (a->unapplied)
			apply_step(a);
	} else if (a->step + 1 < a->tour->nsteps) {
		enter_step(a, a->step + 1);
	} else if (a->loop) {
		tui_app_tour_goto(a, 0);
	} else {
		return false;
	}
	return true;
}

void tui_app_advance(struct tui_app *a, double real_s)
{
	if (a->msg_left_s > 0 && (a->msg_left_s -= real_s) <= 0)
		a->msg[0] = '\0';
	if (a->view.paused)
		return;
	if (autoplay(a, real_s))
		return;
	double dt = real_s * a->view.speed;
	if (!a->tour) {
		play_raw(a, dt);
		return;
	}
	/* A tour plays each step for its time, then waits or moves on. */
	while (dt > 0 && !a->view.step_done && !a->view.asking) {
		const struct tui_tour_step *st = &a->tour->steps[a->step];
		double left = st->run_s - a->step_t;
		double d = dt < left ? dt : left;
		step_play(a, d);
		dt -= d;
		if (a->step_t >= st->run_s) {
			if (st->pause || st->nchoices || a->step + 1 >= a->tour->nsteps)
				step_end(a);
			else
				enter_step(a, a->step + 1);
		}
	}
}

/* The next value up or down a ladder from cur. */
static double ladder(const double *v, int n, double cur, int dir)
{
	if (dir > 0) {
		for (int i = 0; i < n; i++)
			if (v[i] > cur * 1.0001)
				return v[i];
		return v[n - 1];
	}
	for (int i = n - 1; i >= 0; i--)
		if (v[i] < cur * 0.9999)
			return v[i];
	return v[0];
}

static int nscenarios(void)
{
	int n = 0;
	for (const char *const *p = sim_scenario_names(); *p; p++)
		n++;
	return n;
}

/* Load scenario i (an index into sim_scenario_names) from t = 0. */
static void load_scenario(struct tui_app *a, int i)
{
	const char *const *names = sim_scenario_names();
	a->scenario_i = i;
	sim_scenario(names[a->scenario_i], &a->cfg);
	a->cfg.seconds = 0;
	a->cfg.arrivals = SIM_ARRIVE_POISSON;   /* as `hotrow tui` starts */
	if (a->naive && !a->left_own && a->cfg.strategy == SIM_NAIVE) {   /* compare needs a fix */
		a->cfg.strategy = SIM_SHARDED;
		a->cfg.rows = 16;
	}
	if (a->left_own)              /* the right side is this scenario now */
		snprintf(a->label[1], sizeof a->label[1], "B %s", names[a->scenario_i]);
	restart(a);
	const char *blurb = sim_scenario_blurb(names[a->scenario_i]);
	say(a, "scenario %s%s%s", names[a->scenario_i], blurb ? ": " : "", blurb ? blurb : "");
}

static void strategy(struct tui_app *a, int dir)
{
	int s = ((int)a->cfg.strategy + dir + SIM_NSTRATEGIES) % SIM_NSTRATEGIES;
	if (a->naive && !a->left_own && s == SIM_NAIVE)   /* naive is on the left already */
		s = (s + dir + SIM_NSTRATEGIES) % SIM_NSTRATEGIES;
	const struct sim_strategy_info *info = sim_strategy_info((enum sim_strategy)s);
	a->cfg.strategy = (enum sim_strategy)s;
	if (info->spread && a->cfg.rows < 2)
		a->cfg.rows = 16;
	if (!info->uses_rows)
		a->cfg.rows = 1;
	if (a->cfg.flush_ms <= 0)
		a->cfg.flush_ms = 100;
	bool r = apply(a);
	say(a, "strategy %s%s", sim_strategy_name(a->cfg.strategy), restarted(r));
}

static void act(struct tui_app *a, enum tui_action ac)
{
	static const double rates[] = {50, 100, 200, 300, 500, 750, 1000, 1500, 2000,
		3000, 5000, 7500, 10000, 20000, 50000, 100000};
	static const double holds[] = {0.1, 0.2, 0.5, 1, 1.5, 2, 3, 5, 10, 20, 50};
	static const double slots[] = {1, 2, 4, 8, 16, 32, 64};
	static const double pools[] = {5, 10, 20, 50, 100, 200, 500};

	switch (ac) {
	case TUI_A_QUIT: a->quit = true; break;
	case TUI_A_HELP: a->view.help = true; break;
	case TUI_A_PAUSE:
		a->view.paused = !a->view.paused;
		say(a, a->view.paused ? "paused (n steps one tick)" : "running");
		break;
	case TUI_A_STEP:
		a->view.paused = true;
		tui_app_play(a, (a->cfg.tick_ms > 0 ? a->cfg.tick_ms : 100) / 1000);
		break;
	case TUI_A_RATE_UP: case TUI_A_RATE_DOWN:
		a->cfg.rps = ladder(rates, 16, a->cfg.rps, ac == TUI_A_RATE_UP ? 1 : -1);
		apply(a);
		say(a, "arrivals %g/s", a->cfg.rps);
		break;
	case TUI_A_HOLD_UP: case TUI_A_HOLD_DOWN:
		a->cfg.hold_ms = ladder(holds, 11, a->cfg.hold_ms, ac == TUI_A_HOLD_UP ? 1 : -1);
		apply(a);
		say(a, "lock hold %g ms: ceiling %g/s per row", a->cfg.hold_ms,
		    1000 / sim_lock_ms(&a->cfg));
		break;
	case TUI_A_STRATEGY_NEXT: strategy(a, 1); break;
	case TUI_A_STRATEGY_PREV: strategy(a, -1); break;
	case TUI_A_SLOTS_UP: case TUI_A_SLOTS_DOWN: {
		a->cfg.rows = (int)ladder(slots, 7, a->cfg.rows, ac == TUI_A_SLOTS_UP ? 1 : -1);
		if (a->cfg.rows > 1 && !sim_strategy_info(a->cfg.strategy)->uses_rows)
			a->cfg.strategy = SIM_SHARDED;  /* the ledger keeps its fee rows */
		bool r = apply(a);
		say(a, "%d slot%s%s", a->cfg.rows, a->cfg.rows > 1 ? "s" : "", restarted(r));
		break;
	}
	case TUI_A_POOL_UP: case TUI_A_POOL_DOWN:
		a->cfg.pool = (int)ladder(pools, 7, a->cfg.pool > 0 ? a->cfg.pool : 1000,
		                          ac == TUI_A_POOL_UP ? 1 : -1);
		apply(a);
		say(a, "pool of %d connections", a->cfg.pool);
		break;
	case TUI_A_WORK:
		a->cfg.work_ms = a->cfg.work_ms > 0 ? 0 : 5;
		apply(a);
		say(a, a->cfg.work_ms > 0 ? "5 ms of app work inside the transaction"
		                          : "no app work inside the transaction");
		break;
	case TUI_A_CRASH_APP: case TUI_A_CRASH_CONSUMER: case TUI_A_CRASH_REDIS: {
		enum sim_fault f = ac == TUI_A_CRASH_APP ? SIM_FAULT_APP
		                 : ac == TUI_A_CRASH_CONSUMER ? SIM_FAULT_CONSUMER : SIM_FAULT_REDIS;
		inject(a, f);
		break;
	}
	case TUI_A_FASTER: case TUI_A_SLOWER:
		a->speed_i += ac == TUI_A_FASTER ? 1 : -1;
		a->speed_i = a->speed_i < 0 ? 0 : a->speed_i >= NSPEEDS ? NSPEEDS - 1 : a->speed_i;
		a->view.speed = speeds[a->speed_i];
		say(a, "speed %gx", a->view.speed);
		break;
	case TUI_A_BACK: case TUI_A_FORWARD:
		tui_app_seek(a, tui_app_now(a) + (ac == TUI_A_BACK ? -1 : 1));
		break;
	case TUI_A_HOME:
		tui_app_seek(a, 0);
		break;
	case TUI_A_END:
		tui_app_seek(a, (double)tui_rewind_end(a->rw) / 1e6);
		break;
	case TUI_A_RESET:
		if (a->tour)
			tui_app_tour_goto(a, a->step);
		else
			restart(a);
		say(a, "reset to t = 0");
		break;
	case TUI_A_SCENARIO:
		if (nscenarios() > 0)
			load_scenario(a, (a->scenario_i + 1) % nscenarios());
		break;
	case TUI_A_PICKER:
		a->view.picker = 1 + a->scenario_i;
		break;
	case TUI_A_COMPARE:
		if (a->naive) {
			tui_app_compare(a, false);
			say(a, "compare off");
		} else if (a->tour) {     /* a tour's setups are its own: naive beside them */
			tui_app_compare(a, true);
			say(a, "compare: naive (left) vs %s (right), same arrivals",
			    sim_strategy_name(a->cfg.strategy));
		} else {
			tui_compare_open(&a->picker);
		}
		break;
	case TUI_A_LATENCY:
		a->view.latency = (enum tui_latency)((a->view.latency + 1) % 3);
		break;
	case TUI_A_FOLLOW:
		follow(a, (enum tui_follow_mode)a->view.follow, true);
		a->msg_left_s = 3;
		break;
	case TUI_A_LOCK_TIMEOUT:
		a->cfg.lock_timeout_ms = a->cfg.lock_timeout_ms > 0 ? 0 : 300;
		apply(a);
		say(a, a->cfg.lock_timeout_ms > 0 ? "lock_timeout 300 ms: the server cancels "
		    "longer waits, the client sees the error" : "no lock_timeout");
		break;
	case TUI_A_RETRY_BUDGET:
		a->cfg.retry_budget = a->cfg.retry_budget > 0 ? 0 : 0.1;
		apply(a);
		say(a, a->cfg.retry_budget > 0 ? "retry budget: retries at most 10%% of requests"
		                               : "no retry budget");
		break;
	case TUI_A_BULKHEAD: {
		if (a->cfg.pool < 2 && !a->cfg.counter_pool) {
			say(a, "bulkhead: no pool to split (set one with { })");
			break;
		}
		a->cfg.counter_pool = a->cfg.counter_pool ? 0 : a->cfg.pool * 4 / 5;
		bool r = apply(a);
		if (a->cfg.counter_pool)
			say(a, "bulkhead: likes get %d connections of their own%s",
			    a->cfg.counter_pool, restarted(r));
		else
			say(a, "no bulkhead: likes share the pool%s", restarted(r));
		break;
	}
	case TUI_A_IDEMPOTENT:
		a->cfg.idempotent = !a->cfg.idempotent;
		apply(a);
		say(a, a->cfg.idempotent ? "idempotent likes: a retry is applied once"
		                         : "blind retries: a retry may count a like twice");
		break;
	case TUI_A_TOUR_NEXT:
		if (!a->view.step_done)
			tui_app_tour_finish_step(a);
		else if (a->step + 1 < a->tour->nsteps)
			enter_step(a, a->step + 1);
		break;
	case TUI_A_ANSWER:      /* letters answer only while a question waits */
		say(a, "no question waits for an answer");
		break;
	case TUI_A_TOUR_BACK: {
		int k = a->view.step_done ? a->step : a->step - 1;
		if (!tour_back(a, k < 0 ? 0 : k)) {
			tui_app_tour_goto(a, k);
			a->msg[0] = '\0';
		}
		break;
	}
	default:
		break;
	}
	if (a->refused[0]) {
		say(a, "%s", a->refused);
		a->refused[0] = '\0';
	}
}

/* Keys while the scenario picker is open. */
static void picker_key(struct tui_app *a, int key)
{
	int n = nscenarios();
	switch (key) {
	case KEY_UP: case 'k':
		a->view.picker = a->view.picker > 1 ? a->view.picker - 1 : n;
		break;
	case KEY_DOWN: case 'j': case '\t':
		a->view.picker = a->view.picker < n ? a->view.picker + 1 : 1;
		break;
	case '\r': case '\n': case KEY_ENTER:
		load_scenario(a, a->view.picker - 1);
		a->view.picker = 0;
		break;
	case 27: case 'q': case 'o':
		a->view.picker = 0;
		break;
	default:
		break;
	}
}

/* Keys while the compare picker is open. */
static void compare_key(struct tui_app *a, int key)
{
	char err[SIMCONF_ERR];

	if (tui_compare_key(&a->picker, key) != TUI_CMP_GO)
		return;
	if (tui_app_compare_picks(a, a->picker.pick[0], a->picker.pick[1], err, sizeof err) < 0)
		say(a, "compare: %s", err);
	else
		say(a, "compare: %s vs %s, the same arrivals; keys change B",
		    tui_compare_name(&a->picker, a->picker.pick[0]),
		    tui_compare_name(&a->picker, a->picker.pick[1]));
}

bool tui_app_key(struct tui_app *a, int key)
{
	if (a->view.help) {     /* any key closes the overlay */
		a->view.help = false;
		return true;
	}
	if (a->view.picker) {
		picker_key(a, key);
		return true;
	}
	if (a->picker.open) {
		compare_key(a, key);
		return true;
	}
	a->idle_s = 0;                /* someone is at the keys: autoplay waits */
	if (a->view.asking && tui_app_tour_answer(a, key))
		return true;
	act(a, tui_help_action(key, a->tour != NULL));
	return !a->quit;
}

/* Back (or on) to sim_s: the run as it was then, rebuilt from the record
 * and paused there. A tour stays in its step: not before the step began,
 * not past its time. */
void tui_app_seek(struct tui_app *a, double sim_s)
{
	int64_t t = (int64_t)(sim_s * 1e6 + 0.5), lo = 0;

	if (a->tour) {
		lo = a->t_us - (int64_t)(a->step_t * 1e6 + 0.5);
		int64_t hi = lo + (int64_t)(a->tour->steps[a->step].run_s * 1e6 + 0.5);
		if (t > hi)
			t = hi > a->t_us ? hi : a->t_us;
	}
	if (t < lo)
		t = lo;
	a->view.paused = true;
	/* On: from now, unless a checkpoint on the way is nearer (End after
	 * Home); a tour plays its steps' faults on the way. */
	if (t >= a->t_us && (a->tour || tui_rewind_before(a->rw, t) <= a->t_us)) {
		tui_app_play(a, (double)(t - a->t_us) / 1e6);
		return;
	}
	go(a, t);
	if (a->tour) {            /* the step's clock and faults go back too */
		const struct tui_tour_step *st = &a->tour->steps[a->step];
		a->step_t = (double)(t - lo) / 1e6;
		for (a->fault_i = 0; a->fault_i < st->nfaults &&
		     st->faults[a->fault_i].at_s <= a->step_t; a->fault_i++)
			;
		a->view.step_done = false;
	}
}

double tui_app_end(const struct tui_app *a)
{
	return (double)tui_rewind_end(a->rw) / 1e6;
}

void tui_app_rewind_use(const struct tui_app *a, int *checkpoints, size_t *bytes)
{
	*checkpoints = tui_rewind_count(a->rw) + (a->rw2 ? tui_rewind_count(a->rw2) : 0);
	*bytes = tui_rewind_bytes(a->rw) + (a->rw2 ? tui_rewind_bytes(a->rw2) : 0);
}

void tui_app_render(struct tui_app *a, struct tui_screen *scr)
{
	int64_t end = tui_rewind_end(a->rw);

	a->view.scrubbing = a->t_us < end;
	a->view.scrub_s = (double)a->t_us / 1e6;
	a->view.scrub_end_s = (double)end / 1e6;
	sim_snapshot(a->sim, a->snap);
	a->view.message = a->msg[0] ? a->msg : NULL;
	a->view.compare = a->picker.open ? &a->picker : NULL;
	if (a->naive) {
		sim_snapshot(a->naive, a->snap2);
		tui_frame_draw(scr, &a->view, a->snap2, a->snap);
	} else {
		tui_frame_draw(scr, &a->view, a->snap, NULL);
	}
}

static double now_s(void)
{
	return util_now();
}

/* Keys typed and not yet acted on. Some keys take a while (Enter in a
 * tour plays the rest of a step; b replays the tour up to the step), so
 * the terminal is drained before each one: a q typed behind a burst of
 * them quits at once instead of waiting for the whole burst. */
#define KEYQ 64

struct keyq {
	int k[KEYQ];
	int head, n;
	bool quit;           /* a quit key came (kept even if the queue was full) */
};

static bool quits(const struct tui_app *a, int key)
{
	return !a->view.help && !a->view.picker && !a->picker.open &&
	       tui_help_action(key, a->tour != NULL) == TUI_A_QUIT;
}

/* Read every key waiting (the first wait at most timeout_ms). A full
 * queue drops the surplus, but a quit key is never lost. */
static void keyq_fill(struct tui_app *a, struct keyq *q, int timeout_ms)
{
	for (int k = tui_term_key(timeout_ms); k >= 0; k = tui_term_key(0)) {
		if (k == KEY_RESIZE)
			continue;
		if (quits(a, k))
			q->quit = true;
		if (q->n < KEYQ)
			q->k[(q->head + q->n++) % KEYQ] = k;
	}
}

static int keyq_pop(struct keyq *q)
{
	int k = q->k[q->head];
	q->head = (q->head + 1) % KEYQ;
	q->n--;
	return k;
}

/* The speed the screen reaches: simulated seconds per wall second over
 * the last second or so. When the engine cannot simulate speed x real
 * time (100x on 100,000 views/s), frames take longer and each plays at
 * most 0.25 s of wall time, so the factor reached drops: the title then
 * says the real one beside the one asked for. */
struct reach {
	double wall, sim;
};

void tui_app_reach(struct tui_view *v, double wall_s, double sim_s)
{
	double f = wall_s > 0 ? sim_s / wall_s : 0;
	/* Said under 90 % of the speed, unsaid from 95 %: no flicker between. */
	double bar = v->speed_reached > 0 ? 0.95 : 0.9;
	v->speed_reached = wall_s > 0 && f < v->speed * bar ? f : 0;
}

static void reach_frame(struct tui_view *v, struct reach *r, bool counts,
                        double wall_s, double sim_s)
{
	if (!counts) {              /* paused, waiting, a new speed: start over */
		r->wall = r->sim = 0;
		v->speed_reached = 0;
		return;
	}
	r->wall += wall_s;
	r->sim += sim_s;
	if (r->wall >= 1.0) {
		tui_app_reach(v, r->wall, r->sim);
		r->wall = r->sim = 0;
	}
}

int tui_app_run(struct tui_app *a, bool colour)
{
	if (tui_term_start(colour) < 0)
		return 1;
	int w, h;
	tui_term_size(&w, &h);
	struct tui_screen *scr = tui_screen_new(w > 0 ? w : 1, h > 0 ? h : 1);
	double last = now_s();
	struct keyq q = {0};
	struct reach r = {0};

	while (!a->quit && !tui_term_quit_requested()) {
		double t0 = now_s();
		double dt = t0 - last;
		int64_t before = a->t_us;
		double speed = a->view.speed;
		bool playing = !a->view.paused && !(a->tour && a->view.step_done);
		last = t0;
		tui_app_advance(a, dt > 0.25 ? 0.25 : dt);   /* no leaps after a stall */
		reach_frame(&a->view, &r, playing && speed == a->view.speed &&
		            !(a->tour && a->view.step_done) && a->t_us >= before,
		            dt, (double)(a->t_us - before) / 1e6);

		tui_term_size(&w, &h);
		if (w > 0 && h > 0 && (w != scr->w || h != scr->h)) {
			tui_screen_resize(scr, w, h);
			clearok(curscr, TRUE);
		}
		tui_app_render(a, scr);
		tui_screen_blit(scr);
		doupdate();

		/* Wait for keys until the next frame is due, then act on them
		 * one by one, looking for more before each; after a frame's
		 * worth of work, draw and go on with the rest. */
		int wait = (int)((1.0 / FPS - (now_s() - t0)) * 1000);
		keyq_fill(a, &q, wait > 0 ? wait : 0);
		double k0 = now_s();
		while (q.n && !q.quit) {
			if (!tui_app_key(a, keyq_pop(&q)))
				break;
			keyq_fill(a, &q, 0);
			if (now_s() - k0 > 1.0 / FPS)
				break;
		}
		if (q.quit)
			a->quit = true;
	}
	tui_screen_free(scr);
	tui_term_stop();
	return 0;
}
