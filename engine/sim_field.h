/*
 * sim_field.h: the one table of the engine's config fields.
 *
 * A row per field of struct sim_config that a front end can set or show:
 * its JSON key, the command-line option that sets it, where it lives,
 * its kind and range, and whether a running simulation takes a change of
 * it (sim_set), and its help line. The option parser (cli/simopt.c)
 * takes each option's kind, member, range and help from here (its
 * default from sim_config_default), sim_json writes "config" from here,
 * sim_set and sim_config_restarts ask it what is live, and the list of
 * live changes (sim_changes) writes values through it, and
 * sim_config_check takes each field's range and its message from it
 * (sim_field_check). A new field is a member in sim.h, its default in
 * sim_config.c (and there a rule that ties it to another field), a row
 * here, and its place in --help (cli/simopt.c); tests/tui/test_fields.c
 * holds the faces together.
 *
 * Interface:
 *   size_t n; const struct sim_field *f = sim_fields(&n);
 *   const struct sim_field *h = sim_field_find("hold-ms");   (or "hold_ms")
 *   char v[32]; sim_field_text(h, &c, v, sizeof v);          "2"
 */
#ifndef HOTROW_SIM_FIELD_H
#define HOTROW_SIM_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/sim.h"

enum sim_field_kind {
	SIM_FIELD_INT,
	SIM_FIELD_DOUBLE,
	SIM_FIELD_BOOL,
	SIM_FIELD_U64,
	SIM_FIELD_ENUM,       /* an int-sized enum, named by words[value] */
	SIM_FIELD_STRATEGY,   /* named by sim_strategy_name */
	SIM_FIELD_SCENARIO,   /* the scenario's name; JSON null when "" */
	SIM_FIELD_SCHEDULE,   /* phases[0..nphases) */
	SIM_FIELD_CRASHES,    /* crashes[0..ncrashes) */
	SIM_FIELD_BATCH       /* an int; JSON shows the batch in effect */
};

struct sim_field {
	const char *json;         /* its key in sim_json's "config": "hold_ms" */
	const char *option;       /* the option that sets it: "hold-ms"; two
	                             fields may share one ("cpu-ms", "bug") */
	enum sim_field_kind kind;
	size_t off;               /* offsetof(struct sim_config, member) */
	double min, max;          /* INT, DOUBLE, BATCH: what the option takes */
	const char *const *words; /* ENUM: the words by value, NULL-ended */
	bool live;                /* sim_set applies a change while it runs;
	                             false: a change needs sim_new */
	/* For --help (cli/simopt.c), where the option is this field's own: */
	const char *arg;          /* the value's word: "MS"; NULL for a switch */
	const char *help;         /* what it does; '\n' starts a new line */
	const char *note;         /* said after the default, which --help adds
	                             from sim_config_default: "(2" note ")";
	                             NULL: no default shown */
	/* The engine's own range (sim_config_check), where it is more than
	 * [min, max]: */
	const char *zero;         /* 0 is taken too, and means this: "never";
	                             NULL: 0 only when min is 0 */
	double least;             /* values above 0 start here (a rate's or a
	                             timeout's microsecond); 0: at min */
	bool per_attempt;         /* a timeout each attempt keeps from its
	                             start (s->tmo): a live change reaches the
	                             attempts that start after it only */
};

/* The table, in the order sim_json writes "config". */
const struct sim_field *sim_fields(size_t *n);
/* The row whose option or JSON key is name, the first if several share
 * the option; NULL for none. */
const struct sim_field *sim_field_find(const char *name);
/* Whether v is in an INT, BATCH or DOUBLE field's range: [min, max], or
 * above 0 from least, and 0 where zero says what it means. */
bool sim_field_takes(const struct sim_field *f, double v);
/* 0 when f's value in c is in the field's range (an ENUM or STRATEGY:
 * one of its words); else -1 and one line in err: "--rps: expected 0
 * (off) or a rate from 0.001 to 10000000 per second". Fields with a
 * syntax of their own (SCHEDULE, CRASHES) and BOOL, U64 and SCENARIO
 * always pass: sim_config_check has their rules. */
int sim_field_check(const struct sim_field *f, const struct sim_config *c, char *err,
                    size_t len);
/* Whether a and b hold the same value in f. */
bool sim_field_equal(const struct sim_field *f, const struct sim_config *a,
                     const struct sim_config *b);
/* f's value in c as the option writes it ("sharded", "2.5", "on",
 * "200@0,2000@10"); always NUL-terminated. */
void sim_field_text(const struct sim_field *f, const struct sim_config *c,
                    char *buf, size_t len);

#endif
