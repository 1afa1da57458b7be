/*
 * test_tour.c: the tour format: parsing, errors with line numbers, and
 * applying a step's settings.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/simopt.h"
#include "tui/tour.h"

static void tui_tour_parse__steps_settings_and_words(void **state)
{
	(void)state;
	char err[200] = "";
	struct tui_tour *t = tui_tour_parse(
		"# a comment\n"
		"title  Two steps\n"
		"scenario viral-post\n"
		"\n"
		"step Quiet\n"
		"  set rps=200 pool=20\n"
		"  say A quiet\n"
		"  say evening.\n"
		"  run 4\n"
		"  pause\n"
		"step Crash\n"
		"  set strategy=coalesce flush-ms=100\n"
		"  crash app at 1.5\n"
		"  crash redis\n"
		"  crash consumer@0.5\n"
		"  compare on\n"
		"  speed 0.5\n"
		"  run 2.5\n", err, sizeof err);

	assert_non_null(t);
	assert_string_equal(t->title, "Two steps");
	assert_string_equal(t->scenario, "viral-post");
	assert_int_equal(t->nsteps, 2);
	assert_string_equal(t->steps[0].title, "Quiet");
	assert_string_equal(t->steps[0].say, "A quiet evening.");
	assert_true(t->steps[0].run_s == 4);
	assert_true(t->steps[0].pause);
	assert_int_equal(t->steps[0].nsets, 2);
	assert_int_equal(t->steps[0].compare, -1);
	assert_false(t->steps[1].pause);
	assert_int_equal(t->steps[1].nfaults, 3);      /* kept by time */
	assert_int_equal(t->steps[1].faults[0].kind, SIM_FAULT_REDIS);
	assert_true(t->steps[1].faults[0].at_s == 0);
	assert_int_equal(t->steps[1].faults[1].kind, SIM_FAULT_CONSUMER);
	assert_true(t->steps[1].faults[1].at_s == 0.5);
	assert_int_equal(t->steps[1].faults[2].kind, SIM_FAULT_APP);
	assert_true(t->steps[1].faults[2].at_s == 1.5);
	assert_int_equal(t->steps[1].compare, 1);
	assert_true(t->steps[1].speed == 0.5);
	assert_true(t->steps[1].run_s == 2.5);
	tui_tour_free(t);
}

static void tui_tour_parse__a_question_with_choices_and_a_reveal(void **state)
{
	(void)state;
	char err[200] = "", out[300];
	struct tui_tour *t = tui_tour_parse(
		"step Viral\n"
		"  set rps=2000\n"
		"  ask What runs out\n"
		"  ask first?\n"
		"  A) the CPU\n"
		"  B) the pool\n"
		"  answer B\n"
		"  why {pool-max} connections busy,\n"
		"  why {done/s} a second, {lost} lost; the {binds} binds.\n"
		"  say The pool fills.\n"
		"  run 3\n"
		"step Plain\n"
		"  say nothing asked\n"
		"  run 1\n", err, sizeof err);
	struct sim_summary f, to;

	if (!t)
		fail_msg("%s", err);
	assert_string_equal(t->steps[0].ask, "What runs out first?");
	assert_int_equal(t->steps[0].nchoices, 2);
	assert_string_equal(t->steps[0].choices[1], "the pool");
	assert_int_equal(t->steps[0].answer, 1);
	assert_false(t->steps[0].pause);              /* the app waits on a question anyway */
	assert_int_equal(t->steps[1].nchoices, 0);
	assert_int_equal(t->steps[1].answer, -1);
	memset(&f, 0, sizeof f);
	memset(&to, 0, sizeof to);
	to.duration_s = 2;
	to.completed = 31974;                         /* 15,987/s: three figures */
	to.pool.max_in_use = 20;
	to.count.lost = 209;
	to.theory.binding = SIM_CEIL_POOL;
	assert_int_equal(tui_tour_reveal(&t->steps[0], &f, &to, out, sizeof out), 0);
	assert_string_equal(out, "20 connections busy, 16,000 a second, 209 lost; the pool binds.");
	tui_tour_free(t);
}

static void tui_tour_parse__errors_name_the_line(void **state)
{
	(void)state;
	static const struct { const char *text, *want; } cases[] = {
		{"step a\nset rps=fast\n", "line 2: rps accepts a number from 0 to 1e+07, not 'fast'"},
		{"step a\nset rps=1e-13\n", "line 2: rps: expected 0 (off) or a rate from 0.001"},
		{"step a\nset client-timeout-ms=0.0001\n", "line 2: client-timeout-ms: expected 0 (never)"},
		{"step a\nset rows=70000\n", "line 2: rows accepts a whole number from 1 to 65536, not '70000'"},
		{"step a\nset rows=2.5\n", "line 2: rows accepts a whole number from 1 to 65536, not '2.5'"},
		{"step a\nset idempotent=yes\n", "line 2: idempotent accepts no value, or on or off, not 'yes'"},
		{"step a\nset colour=red\n", "line 2: unknown setting 'colour'"},
		{"say hello\n", "line 1: 'say' before the first step"},
		{"step a\nrun\n", "line 2: run takes simulated seconds"},
		{"step a\ncrash disk\n", "line 2: crash takes app, consumer or redis"},
		{"step a\ncrash app at\n", "line 2: crash takes KIND, KIND at SECONDS"},
		{"step a\ncrash app soon\n", "line 2: crash takes KIND, KIND at SECONDS"},
		{"step a\ncrash app at x\n", "line 2: crash KIND at SECONDS takes seconds"},
		{"scenario nowhere\n", "line 1: unknown scenario 'nowhere'"},
		{"step a\ndance\n", "line 2: unknown word 'dance'"},
		{"title only\n", "no steps"},
		{"step a\nask Which?\nA) x\nanswer A\nwhy y\n", "needs ask, at least A) and B), answer and why"},
		{"step a\nask Which?\nA) x\nC) z\n", "choices come in order from A)"},
		{"step a\nask Which?\nA) x\nB) y\nanswer C\nwhy z\n", "answer C is not one of the choices"},
		{"step a\nask Which?\nA) x\nB) y\nanswer E\n", "answer takes a letter, A to D"},
		{"step a\nask Which?\nA) x\nB) y\nanswer A\nwhy {speed}\n", "unknown placeholder {speed}"},
		{"step a\nask Which?\nA) x\nB) y\nanswer A\nstep b\nrun 1\n", "line 6: step 'a': a question needs"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char err[200] = "";
		struct tui_tour *t = tui_tour_parse(cases[i].text, err, sizeof err);
		assert_null(t);
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].want);
	}
}

/* A tour's times go through the rounding `hotrow sim` applies: the engine
 * counts whole microseconds, and the screen shows the value it uses. */
static void tui_tour_set__times_in_whole_us(void **state)
{
	(void)state;
	struct sim_config c, cli;
	char err[200];
	bool restart = false;
	sim_config_default(&c);

	assert_int_equal(tui_tour_set(&c, "hold-ms", "1.23456", &restart, err, sizeof err), 0);
	assert_true(c.hold_ms == 1.235);
	assert_int_equal(tui_tour_set(&c, "pool-timeout-ms", "20.0004", &restart, err, sizeof err), 0);
	assert_true(c.pool_timeout_ms == 20);
	assert_int_equal(tui_tour_set(&c, "rtt-ms", "0.0996", &restart, err, sizeof err), 0);
	assert_true(c.rtt_ms == 0.1);
	/* The same numbers as the command line's: sim_config_round. */
	sim_config_default(&cli);
	cli.hold_ms = 1.23456;
	cli.pool_timeout_ms = 20.0004;
	cli.rtt_ms = 0.0996;
	sim_config_round(&cli);
	assert_true(cli.hold_ms == c.hold_ms && cli.pool_timeout_ms == c.pool_timeout_ms &&
	            cli.rtt_ms == c.rtt_ms);
}

static void tui_tour_apply__restart_only_for_structural_changes(void **state)
{
	(void)state;
	struct sim_config c;
	char err[200];
	bool restart = false;
	sim_config_default(&c);

	assert_int_equal(tui_tour_set(&c, "rps", "2000", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "hold-ms", "1.5", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "pool", "20", &restart, err, sizeof err), 0);
	assert_false(restart);
	assert_true(c.rps == 2000 && c.hold_ms == 1.5 && c.pool == 20);

	assert_int_equal(tui_tour_set(&c, "strategy", "sharded", &restart, err, sizeof err), 0);
	assert_true(restart);
	assert_int_equal(c.strategy, SIM_SHARDED);
	assert_int_equal(tui_tour_set(&c, "pool", "-1", &restart, err, sizeof err), -1);
	assert_string_equal(err, "pool accepts a whole number from 0 to 1000000, not '-1'");
	assert_int_equal(c.pool, 20);              /* unchanged by the bad value */
	/* The command line's limits, not a second set of the tour's own. */
	assert_int_equal(tui_tour_set(&c, "rows", "65536", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "pool", "1000000", &restart, err, sizeof err), 0);
}

static void tui_tour_load__the_builtin_tours_parse(void **state)
{
	(void)state;
	char err[200] = "";
	const char *const *names = tui_tour_names();

	assert_non_null(names[0]);
	for (int i = 0; names[i]; i++) {
		struct tui_tour *t = tui_tour_load(names[i], err, sizeof err);
		if (!t)
			fail_msg("%s: %s", names[i], err);
		assert_true(t->nsteps >= 3);
		for (int k = 0; k < t->nsteps; k++) {
			assert_true(t->steps[k].say[0] != '\0');
			assert_true(t->steps[k].run_s > 0);
		}
		tui_tour_free(t);
	}
	struct tui_tour *vp = tui_tour_load("viral-post", err, sizeof err);
	assert_non_null(vp);
	assert_string_equal(vp->scenario, "viral-post");
	tui_tour_free(vp);
	assert_null(tui_tour_load("/nonexistent/x.tour", err, sizeof err));
	assert_non_null(strstr(err, "no tour '/nonexistent/x.tour'"));
}

/* Without a scenario line the defaults apply, but the arrivals must not
 * stop at the defaults' 10 s: a tour plays as long as its steps. */
static void tui_tour_base__endless_with_or_without_a_scenario(void **state)
{
	(void)state;
	char err[200] = "";
	struct sim_config c;
	struct tui_tour *t = tui_tour_parse("step a\nsay the queue keeps growing\nrun 30\n",
	                                    err, sizeof err);
	assert_non_null(t);
	tui_tour_base(t, &c);
	assert_true(c.seconds == 0);
	tui_tour_free(t);
	t = tui_tour_load("viral-video", err, sizeof err);
	assert_non_null(t);
	tui_tour_base(t, &c);
	assert_true(c.seconds == 0);
	tui_tour_free(t);
}

/* A tour file is small text: a huge or binary file is refused, not read
 * into memory without end (`hotrow demo /dev/zero`). */
static void tui_tour_load__refuses_huge_and_binary_files(void **state)
{
	(void)state;
	char err[300] = "";

	assert_null(tui_tour_load("/dev/zero", err, sizeof err));
	assert_non_null(strstr(err, "/dev/zero: too big for a tour"));
	char path[] = "/tmp/hotrow-tour-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "step a\0run 1\n", 13), 13);
	close(fd);
	assert_null(tui_tour_load(path, err, sizeof err));
	assert_non_null(strstr(err, "not a text file"));
	unlink(path);
}

/* The retry-storm settings take the command line's parser and the
 * engine's limits: a tour's bad value gets the line `hotrow sim` prints
 * for it (the option table's, or sim_config_check's), and the config is
 * left as it was. counter-pool is a pool of its own: a restart. */
static void tui_tour_set__storm_keys_take_the_engine_limits(void **state)
{
	static const struct {
		const char *key, *value;
		size_t off;
		bool integer;
	} cases[] = {
		{ "lock-timeout-ms", "0.0004", offsetof(struct sim_config, lock_timeout_ms), false },
		{ "lock-timeout-ms", "-1", offsetof(struct sim_config, lock_timeout_ms), false },
		{ "retry-budget", "2", offsetof(struct sim_config, retry_budget), false },
		{ "backoff-ms", "2e7", offsetof(struct sim_config, backoff_ms), false },
		{ "counter-pool", "1000001", offsetof(struct sim_config, counter_pool), true },
		{ "counter-pool", "-3", offsetof(struct sim_config, counter_pool), true },
	};
	struct sim_config c, t;
	char err[300], want[300], msg[200];
	bool restart = false;

	(void)state;
	sim_config_default(&c);
	assert_int_equal(tui_tour_set(&c, "lock-timeout-ms", "300", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "retry-budget", "0.1", &restart, err, sizeof err), 0);
	assert_int_equal(tui_tour_set(&c, "backoff-ms", "50", &restart, err, sizeof err), 0);
	assert_false(restart);
	assert_int_equal(tui_tour_set(&c, "counter-pool", "400", &restart, err, sizeof err), 0);
	assert_true(restart);
	assert_true(c.lock_timeout_ms == 300 && c.retry_budget == 0.1 && c.backoff_ms == 50 &&
	            c.counter_pool == 400);
	restart = false;                 /* a closed loop: a restart; its think time: live */
	assert_int_equal(tui_tour_set(&c, "think-ms", "2", &restart, err, sizeof err), 0);
	assert_false(restart);
	assert_int_equal(tui_tour_set(&c, "clients", "8", &restart, err, sizeof err), 0);
	assert_true(restart);
	assert_true(c.think_ms == 2 && c.clients == 8);
	assert_int_equal(tui_tour_set(&c, "clients", "0", &restart, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sim_config before = c;
		struct simopt_given g = { { false } };
		t = c;
		if (simopt_set(&t, &g, cases[i].key, cases[i].value, msg, sizeof msg) < 0) {
			snprintf(want, sizeof want, "%s", msg + 2);
		} else {
			assert_int_equal(sim_config_check(&t, msg, sizeof msg), -1);
			snprintf(want, sizeof want, "%s (not '%s')", msg + 2, cases[i].value);
		}
		assert_true(!strncmp(msg, "--", 2));
		assert_int_equal(tui_tour_set(&c, cases[i].key, cases[i].value, &restart,
		                              err, sizeof err), -1);
		if (strcmp(err, want))
			fail_msg("%s=%s: got \"%s\", want \"%s\"", cases[i].key, cases[i].value,
			         err, want);
		assert_memory_equal(&before, &c, sizeof c);
	}
}


/* The student kit's tours keep their questions and lose answer and why:
 * such a question still parses, and the reveal says the panels answer. */
static void tui_tour_parse__a_question_without_its_key(void **state)
{
	(void)state;
	char err[200] = "";
	struct tui_tour *t = tui_tour_parse(
		"step Viral\n  ask What runs out first?\n  A) the CPU\n  B) the pool\n  run 3\n",
		err, sizeof err);
	if (!t)
		fail_msg("%s", err);
	assert_int_equal(t->steps[0].nchoices, 2);
	assert_int_equal(t->steps[0].answer, -1);
	assert_string_equal(t->steps[0].why, "");
	tui_tour_free(t);
	/* half a key is still a mistake */
	assert_null(tui_tour_parse("step V\nask Q?\nA) a\nB) b\nanswer A\nrun 1\n", err, sizeof err));
	assert_null(tui_tour_parse("step V\nask Q?\nA) a\nB) b\nwhy w\nrun 1\n", err, sizeof err));
}

/* The default a help line states, "(2000)" or "(4; ...)" at its end,
 * into word; false when the line states none. */
static bool stated_default(const char *help, char *word, size_t len)
{
	size_t n = help ? strlen(help) : 0;
	const char *open = help ? strrchr(help, '(') : NULL;
	if (n == 0 || help[n - 1] != ')' || open == NULL)
		return false;
	size_t w = strcspn(open + 1, ";)");
	if (w == 0 || w >= len)
		return false;
	memcpy(word, open + 1, w);
	word[w] = '\0';
	return true;
}

/* Every engine option but the structural words (a scenario, a schedule,
 * faults, planted bugs) and flags states its default at the end of its
 * help, and setting that word on the engine's default config changes
 * nothing: --help, tours and sweeps say what sim_config_default does. */
static void simopt__help_states_the_engines_defaults(void **state)
{
	(void)state;
	struct sim_config def, c;
	struct simopt_given g;
	char err[200], word[64];
	int stated = 0;

	sim_config_default(&def);
	struct opt_table t = simopt_table(&c, &g, NULL);
	for (size_t i = 0; i < t.n; i++) {
		const struct opt *o = &t.rows[i];
		if (o->early || o->kind == OPT_FLAG || o->kind == OPT_CUSTOM)
			continue;
		if (!stated_default(o->help, word, sizeof word))
			fail_msg("--%s: its help states no default: %s", o->name, o->help);
		memcpy(&c, &def, sizeof c);
		if (simopt_set(&c, &g, o->name, word, err, sizeof err) != 0)
			fail_msg("--%s: its stated default '%s' is refused: %s", o->name, word, err);
		if (memcmp(&c, &def, sizeof c) != 0)
			fail_msg("--%s: help says the default is '%s'; the engine's differs",
			         o->name, word);
		stated++;
	}
	assert_true(stated >= 30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tui_tour_parse__steps_settings_and_words),
		cmocka_unit_test(tui_tour_parse__a_question_with_choices_and_a_reveal),
		cmocka_unit_test(tui_tour_parse__a_question_without_its_key),
		cmocka_unit_test(tui_tour_parse__errors_name_the_line),
		cmocka_unit_test(tui_tour_apply__restart_only_for_structural_changes),
		cmocka_unit_test(tui_tour_set__times_in_whole_us),
		cmocka_unit_test(tui_tour_load__the_builtin_tours_parse),
		cmocka_unit_test(tui_tour_base__endless_with_or_without_a_scenario),
		cmocka_unit_test(tui_tour_load__refuses_huge_and_binary_files),
		cmocka_unit_test(tui_tour_set__storm_keys_take_the_engine_limits),
		cmocka_unit_test(simopt__help_states_the_engines_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
