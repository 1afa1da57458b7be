/*
 * test_fields.c: the engine's field table (engine/sim_field.c) and every
 * face that reads it agree: the options of `hotrow sim` and their --help,
 * the keys of sim_json's "config", and a tour's settings, which take the
 * command line's words and limits (no "yes" for a switch, no 2.5 rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/simopt.h"
#include "engine/sim_field.h"
#include "tui/tour.h"

/* Whether text holds "--name" as a whole option word. */
static int has_option(const char *text, const char *name)
{
	char want[64];
	size_t n = (size_t)snprintf(want, sizeof want, "--%s", name);

	for (const char *p = strstr(text, want); p; p = strstr(p + 1, want))
		if (!(p[n] >= 'a' && p[n] <= 'z') && p[n] != '-')
			return 1;
	return 0;
}

static void sim_fields__options_and_help_agree(void **state)
{
	struct sim_config c;
	struct simopt_given g;
	size_t n;
	const struct sim_field *f = sim_fields(&n);
	struct opt_table t;
	char *help = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	sim_config_default(&c);
	t = simopt_table(&c, &g, "engine:");
	const struct opt_cmd cmd = { .name = "hotrow sim", .tables = &t, .ntables = 1 };
	out = open_memstream(&help, &len);
	opt_usage(&cmd, out);
	fclose(out);
	for (size_t i = 0; i < n; i++) {
		size_t k;
		for (k = 0; k < t.n && strcmp(t.rows[k].name, f[i].option); k++)
			;
		if (k == t.n)
			fail_msg("field %s: no option --%s", f[i].json, f[i].option);
		if (!has_option(help, f[i].option))
			fail_msg("--help does not list --%s", f[i].option);
		if (t.rows[k].kind == OPT_INT || t.rows[k].kind == OPT_DOUBLE)
			assert_true(t.rows[k].min == f[i].min && t.rows[k].max == f[i].max &&
			            t.rows[k].off == f[i].off);
	}
	for (size_t k = 0; k < t.n; k++) {
		const struct sim_field *h = sim_field_find(t.rows[k].name);
		if (!h || strcmp(h->option, t.rows[k].name))
			fail_msg("--%s sets no field of the table", t.rows[k].name);
	}
	free(help);
}

static void sim_json__config_keys_are_the_table(void **state)
{
	struct sim_config c;
	struct sim *s;
	char *js = NULL, key[64];
	size_t len = 0, n, i = 0;
	const struct sim_field *f = sim_fields(&n);
	FILE *out;
	int depth = 0;

	(void)state;
	sim_config_default(&c);
	c.seconds = 0.01;
	s = sim_new(&c);
	sim_run(s);
	out = open_memstream(&js, &len);
	sim_json(out, s);
	fclose(out);
	sim_free(s);
	/* the keys at the top of "config", in order */
	const char *p = strstr(js, "\"config\":{");
	assert_non_null(p);
	for (p += strlen("\"config\":{"), depth = 1; *p && depth > 0; p++) {
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		else if (*p == '"' && depth == 1) {
			const char *q = strchr(p + 1, '"');
			snprintf(key, sizeof key, "%.*s", (int)(q - p - 1), p + 1);
			if (q[1] == ':') {
				assert_true(i < n);
				assert_string_equal(key, f[i].json);
				i++;
			}
			p = q;
		}
	}
	assert_int_equal(i, n);
	free(js);
}

/* What `hotrow sim` makes of --name value: 0 when it takes it. */
static int cli_takes(const char *name, const char *value)
{
	struct sim_config c;
	struct simopt_given g;
	char err[200];

	sim_config_default(&c);
	memset(&g, 0, sizeof g);
	if (simopt_set(&c, &g, name, value, err, sizeof err) < 0)
		return -1;
	return sim_config_check(&c, err, sizeof err);
}

static void tui_tour_set__takes_what_the_command_line_takes(void **state)
{
	size_t n;
	const struct sim_field *f = sim_fields(&n);
	int tried = 0;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const struct sim_field *h = sim_field_find(f[i].option);
		char vals[8][32];
		int nv = 0;
		if (h != &f[i] || !strcmp(f[i].option, "bug") || !strcmp(f[i].option, "cpu-ms"))
			continue;         /* options of their own syntax */
		if (f[i].kind == SIM_FIELD_INT || f[i].kind == SIM_FIELD_BATCH ||
		    f[i].kind == SIM_FIELD_DOUBLE) {
			snprintf(vals[nv++], 32, "%.10g", f[i].min);
			snprintf(vals[nv++], 32, "%.10g", f[i].max);
			snprintf(vals[nv++], 32, "%.10g", f[i].max * 2 + 1);
			snprintf(vals[nv++], 32, "%.10g", f[i].min - 1);
			snprintf(vals[nv++], 32, "%.10g", f[i].min + 1.5);
		} else if (f[i].kind == SIM_FIELD_ENUM) {
			for (int w = 0; f[i].words[w]; w++)
				snprintf(vals[nv++], 32, "%s", f[i].words[w]);
			snprintf(vals[nv++], 32, "nonsense");
		} else if (f[i].kind == SIM_FIELD_BOOL) {
			snprintf(vals[nv++], 32, "true");
			snprintf(vals[nv++], 32, "on");
			snprintf(vals[nv++], 32, "yes");
		} else {
			snprintf(vals[nv++], 32, "7");
			snprintf(vals[nv++], 32, "-7");
		}
		for (int v = 0; v < nv; v++) {
			struct sim_config c;
			char err[200];
			bool restart = false;
			sim_config_default(&c);
			int tour = tui_tour_set(&c, f[i].option, vals[v], &restart, err, sizeof err);
			if ((tour == 0) != (cli_takes(f[i].option, vals[v]) == 0))
				fail_msg("%s=%s: the tour %s it, the command line does not",
				         f[i].option, vals[v], tour == 0 ? "takes" : "refuses");
			tried++;
		}
	}
	assert_true(tried > 150);
	/* the words the old second parser took */
	struct sim_config c;
	char err[200];
	bool restart = false;
	sim_config_default(&c);
	assert_int_equal(tui_tour_set(&c, "idempotent", "yes", &restart, err, sizeof err), -1);
	assert_int_equal(tui_tour_set(&c, "rows", "2.5", &restart, err, sizeof err), -1);
	assert_int_equal(tui_tour_set(&c, "rows", "4", &restart, err, sizeof err), 0);
	assert_int_equal(c.rows, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sim_fields__options_and_help_agree),
		cmocka_unit_test(sim_json__config_keys_are_the_table),
		cmocka_unit_test(tui_tour_set__takes_what_the_command_line_takes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
