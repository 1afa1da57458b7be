/*
 * tour.c: the tour format's parser and the settings it can change.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/simopt.h"
#include "engine/xmalloc.h"
#include "tui/fmt.h"
#include "tui/tour.h"

/* A number in [lo, hi], the whole word: a step's run and speed. */
static int num(const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= lo && d <= hi))
		return -1;
	*out = d;
	return 0;
}

/* A switch (compare, and the tour's own two), in the words the command
 * line's flags take (util/opt): on, true, 1 / off, false, 0. */
static int onoff(const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1"))
		return *out = true, 0;
	if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "0"))
		return *out = false, 0;
	return -1;
}

/*
 * One setting, by the command line's own parser (cli/simopt.h): the same
 * words, ranges and whole numbers as `hotrow sim --KEY VALUE`, then the
 * engine's check of the whole config and its rounding to whole
 * microseconds, so the screen shows the value the engine uses. Two
 * switches are the tour's own: bug-no-fence and bug-get-then-del turn a
 * planted bug off again (the command line only plants them, with --bug).
 * On a bad value *c is left as it was.
 */
static int set_one(struct sim_config *c, const char *key, const char *v, bool live,
                   bool *restart, char *err, size_t errlen)
{
	struct sim_config t = *c;
	struct simopt_given given;
	char msg[200];
	bool b;

	memset(&given, 0, sizeof given);
	if (!strcmp(key, "bug-no-fence") || !strcmp(key, "bug-get-then-del")) {
		if (onoff(v, &b) < 0) {
			snprintf(err, errlen, "%s accepts on or off (not '%.40s')", key, v);
			return -1;
		}
		*(key[4] == 'n' ? &t.bug_no_fence : &t.bug_get_then_del) = b;
	} else if (!simopt_knows(key)) {
		snprintf(err, errlen, "unknown setting '%.40s' (try rps, hold-ms, work-ms, "
		         "pool, unrelated-rps, flush-ms, strategy, rows, slot)", key);
		return -1;
	} else if (simopt_set(&t, &given, key, v, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "%s", strncmp(msg, "--", 2) ? msg : msg + 2);
		return -1;
	}
	if (sim_config_check(&t, msg, sizeof msg) < 0) {
		const char *m = strncmp(msg, "--", 2) ? msg : msg + 2;
		snprintf(err, errlen, "%s (not '%.40s')", m, v);
		return -1;
	}
	sim_config_round(&t);
	if (sim_config_restarts(c, &t))      /* sim_set would keep it */
		*restart = true;
	if (!live && (t.strategy != c->strategy || t.rows != c->rows))
		*restart = true;                 /* `set`: a new setup from t = 0 */
	*c = t;
	return 0;
}

int tui_tour_set(struct sim_config *c, const char *key, const char *v,
                 bool *restart, char *err, size_t errlen)
{
	return set_one(c, key, v, false, restart, err, errlen);
}

int tui_tour_apply(const struct tui_tour_step *st, struct sim_config *c,
                   bool *restart, char *err, size_t errlen)
{
	for (int i = 0; i < st->nsets; i++)
		if (set_one(c, st->sets[i].key, st->sets[i].value, st->sets[i].live,
		            restart, err, errlen) < 0)
			return -1;
	return 0;
}

void tui_tour_base(const struct tui_tour *t, struct sim_config *c)
{
	sim_config_default(c);
	if (t->scenario[0])
		sim_scenario(t->scenario, c);
	c->seconds = 0;          /* arrivals go on for as long as the tour plays */
	sim_config_round(c);
}

void tui_tour_free(struct tui_tour *t)
{
	if (!t)
		return;
	free(t->steps);
	free(t);
}

/* Split "word rest" in place: returns rest (spaces skipped), word ends at NUL. */
static char *split(char *line)
{
	char *p = line;
	while (*p && !isspace((unsigned char)*p))
		p++;
	if (*p)
		*p++ = '\0';
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

static void append(char *dst, size_t len, const char *text)
{
	size_t n = strlen(dst);
	if (n && n + 1 < len)
		dst[n++] = ' ', dst[n] = '\0';
	snprintf(dst + n, len - n, "%s", text);
}

/* A question is whole: its words, two to four choices, the right one
 * among them and a reveal whose placeholders are known. A question with
 * neither answer nor why is whole too: the student kit's copy of a tour,
 * where the panels, not the tour, give the answer. */
static int check_ask(const struct tui_tour_step *st, char *err, size_t errlen)
{
	struct sim_summary z;
	char out[600];
	bool any = st->ask[0] || st->nchoices || st->answer >= 0 || st->why[0];

	if (!any)
		return 0;
	if (st->ask[0] && st->nchoices >= 2 && st->answer < 0 && !st->why[0])
		return 0;
	if (!st->ask[0] || st->nchoices < 2 || st->answer < 0 || !st->why[0])
		return snprintf(err, errlen, "step '%.30s': a question needs ask, at least "
		                "A) and B), answer and why", st->title), -1;
	if (st->answer >= st->nchoices)
		return snprintf(err, errlen, "answer %c is not one of the choices",
		                'A' + st->answer), -1;
	memset(&z, 0, sizeof z);
	if (tui_tour_reveal(st, &z, &z, out, sizeof out) < 0)
		return snprintf(err, errlen, "why: %.120s", out), -1;
	return 0;
}

/* The number a placeholder names, as the reveal writes it: rates and
 * counts rounded to three figures, with thousands separators. */
static int placeholder(const char *name, const struct sim_summary *f,
                       const struct sim_summary *t, char *out, size_t len)
{
	double v, dt = t->duration_s - f->duration_s;
	char num[32];

	if (!strcmp(name, "binds"))
		return snprintf(out, len, "%s", sim_ceiling_name(t->theory.binding)), 0;
	if (!strcmp(name, "done/s"))
		v = dt > 0 ? (double)(t->completed - f->completed) / dt : 0;
	else if (!strcmp(name, "ceiling/s"))
		v = t->theory.ceiling_per_s;
	else if (!strcmp(name, "binding/s"))
		v = t->theory.binding_per_s;
	else if (!strcmp(name, "rows-busy"))
		v = t->theory.distinct_rows;
	else if (!strcmp(name, "pool-max"))
		v = t->pool.max_in_use;
	else if (!strcmp(name, "waiters"))
		v = t->pool.max_waiters;
	else if (!strcmp(name, "lost"))
		v = (double)t->count.lost;
	else if (!strcmp(name, "doubled"))
		v = (double)t->count.doubled;
	else
		return snprintf(out, len, "unknown placeholder {%.40s} (done/s, ceiling/s, "
		                "binding/s, binds, rows-busy, pool-max, waiters, lost, "
		                "doubled)", name), -1;
	if (v >= 1000) {                  /* three figures: 15,987 -> 16,000 */
		double p = 1;
		while (v / p >= 1000)
			p *= 10;
		v = (double)(int64_t)(v / p + 0.5) * p;
	}
	snprintf(out, len, "%s", tui_fmt_int(num, sizeof num, (int64_t)(v + 0.5)));
	return 0;
}

int tui_tour_reveal(const struct tui_tour_step *st, const struct sim_summary *from,
                    const struct sim_summary *to, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (const char *p = st->why; *p && n + 1 < len;) {
		const char *close = *p == '{' ? strchr(p, '}') : NULL;
		if (!close) {
			out[n++] = *p++;
			out[n] = '\0';
			continue;
		}
		char name[48], val[200];
		snprintf(name, sizeof name, "%.*s", (int)(close - p - 1), p + 1);
		if (placeholder(name, from, to, val, sizeof val) < 0) {
			snprintf(out, len, "%s", val);
			return -1;
		}
		n += (size_t)snprintf(out + n, len - n, "%s", val);
		if (n >= len)
			n = len - 1;
		p = close + 1;
	}
	return 0;
}

/* One line of a tour; 0, or -1 with err. */
static int line_(struct tui_tour *t, struct tui_tour_step **cur, char *word,
                 char *rest, struct sim_config *check, char *err, size_t errlen)
{
	struct tui_tour_step *st = *cur;
	bool restart = false;

	if (!strcmp(word, "title")) {
		snprintf(t->title, sizeof t->title, "%s", rest);
	} else if (!strcmp(word, "scenario")) {
		if (sim_scenario(rest, check) < 0)
			return snprintf(err, errlen, "unknown scenario '%.40s'", rest), -1;
		snprintf(t->scenario, sizeof t->scenario, "%s", rest);
	} else if (!strcmp(word, "step")) {
		if (st && check_ask(st, err, errlen) < 0)
			return -1;
		t->steps = xrealloc(t->steps, (size_t)(t->nsteps + 1) * sizeof *t->steps);
		st = *cur = &t->steps[t->nsteps++];
		memset(st, 0, sizeof *st);
		st->compare = -1;
		st->follow = -1;
		st->answer = -1;
		snprintf(st->title, sizeof st->title, "%s", rest);
	} else if (!st) {
		return snprintf(err, errlen, "'%.40s' before the first step", word), -1;
	} else if (!strcmp(word, "say")) {
		append(st->say, sizeof st->say, rest);
	} else if (!strcmp(word, "ask")) {
		append(st->ask, sizeof st->ask, rest);
	} else if (strlen(word) == 2 && word[0] >= 'A' && word[0] <= 'D' && word[1] == ')') {
		int k = word[0] - 'A';
		if (k != st->nchoices)
			return snprintf(err, errlen, "choices come in order from A), so %c) "
			                "must be the %s", word[0], k < st->nchoices ? "only one"
			                : "next after the last"), -1;
		if (!*rest)
			return snprintf(err, errlen, "%c) needs the choice's words", word[0]), -1;
		snprintf(st->choices[st->nchoices++], sizeof st->choices[0], "%s", rest);
	} else if (!strcmp(word, "answer")) {
		if (strlen(rest) != 1 || *rest < 'A' || *rest > 'D')
			return snprintf(err, errlen, "answer takes a letter, A to D, not '%.40s'", rest), -1;
		st->answer = *rest - 'A';
	} else if (!strcmp(word, "why")) {
		append(st->why, sizeof st->why, rest);
	} else if (!strcmp(word, "run")) {
		if (num(rest, 0, 3600, &st->run_s) < 0)
			return snprintf(err, errlen, "run takes simulated seconds (0 to 3600), not '%.40s'", rest), -1;
	} else if (!strcmp(word, "pause")) {
		st->pause = true;
	} else if (!strcmp(word, "speed")) {
		if (num(rest, 0.001, 10000, &st->speed) < 0)
			return snprintf(err, errlen, "speed takes a factor such as 0.1 or 10, not '%.40s'", rest), -1;
	} else if (!strcmp(word, "compare")) {
		bool on;
		char *right = split(rest);
		if (*split(right))
			return snprintf(err, errlen, "compare takes on, off or two setups, "
			                "not three words"), -1;
		if (*right) {         /* two setups: LEFT RIGHT */
			const char *w[2] = { rest, right };
			struct sim_config probe;
			for (int i = 0; i < 2; i++) {
				if (strcmp(w[i], "current") && strcmp(w[i], "naive") &&
				    sim_scenario(w[i], &probe) < 0)
					return snprintf(err, errlen, "compare takes on, off or two setups "
					                "(current, naive or a scenario), not '%.40s'", w[i]), -1;
				snprintf(st->compare_with[i], sizeof st->compare_with[i], "%s", w[i]);
			}
			st->compare = 2;
		} else if (onoff(rest, &on) < 0) {
			return snprintf(err, errlen, "compare takes on or off, or two setups, "
			                "not '%.40s'", rest), -1;
		} else {
			st->compare = on;
		}
	} else if (!strcmp(word, "follow")) {
		static const char *const modes[] = { "off", "next", "slowest" };
		st->follow = -1;
		for (int k = 0; k < 3; k++)
			if (!strcmp(rest, modes[k]))
				st->follow = k;
		if (st->follow < 0)
			return snprintf(err, errlen, "follow takes slowest, next or off, not '%.40s'", rest), -1;
	} else if (!strcmp(word, "crash")) {
		/* "crash KIND", "crash KIND at SECONDS" or "crash KIND@SECONDS" */
		struct tui_tour_fault f = {0};
		char *w2 = split(rest), *w3 = split(w2), *w4 = split(w3);
		char *when = strchr(rest, '@');
		if (when)
			*when++ = '\0';
		else if (!strcmp(w2, "at"))
			when = w3;
		if (*w4 || (*w2 && strcmp(w2, "at")) || (when && !*when) || (when && *w2 && !when[0]))
			return snprintf(err, errlen, "crash takes KIND, KIND at SECONDS or "
			                "KIND@SECONDS"), -1;
		if (sim_fault_parse(rest, &f.kind) < 0)
			return snprintf(err, errlen, "crash takes app, consumer or redis, not '%.40s'", rest), -1;
		if (when && num(when, 0, 3600, &f.at_s) < 0)
			return snprintf(err, errlen, "crash KIND at SECONDS takes seconds into the "
			                "step (0 to 3600), not '%.40s'", when), -1;
		if (st->nfaults >= TUI_TOUR_FAULTS)
			return snprintf(err, errlen, "at most %d crashes a step", TUI_TOUR_FAULTS), -1;
		int i = st->nfaults++;
		while (i > 0 && st->faults[i - 1].at_s > f.at_s) {   /* keep them by time */
			st->faults[i] = st->faults[i - 1];
			i--;
		}
		st->faults[i] = f;
	} else if (!strcmp(word, "set") || !strcmp(word, "fix")) {
		for (char *kv = rest; *kv;) {
			char *next = split(kv), *eq = strchr(kv, '=');
			if (!eq)
				return snprintf(err, errlen, "set takes key=value pairs, not '%.40s'", kv), -1;
			*eq = '\0';
			if (st->nsets >= TUI_TOUR_SETS)
				return snprintf(err, errlen, "at most %d settings a step", TUI_TOUR_SETS), -1;
			if (tui_tour_set(check, kv, eq + 1, &restart, err, errlen) < 0)
				return -1;
			snprintf(st->sets[st->nsets].key, sizeof st->sets[0].key, "%s", kv);
			snprintf(st->sets[st->nsets].value, sizeof st->sets[0].value, "%s", eq + 1);
			st->sets[st->nsets].live = word[0] == 'f';
			st->nsets++;
			kv = next;
		}
	} else {
		return snprintf(err, errlen, "unknown word '%.32s' (title, scenario, step, "
		                "set, fix, say, run, pause, speed, compare, follow, crash, ask, A) to D), "
		                "answer, why)", word), -1;
	}
	return 0;
}

struct tui_tour *tui_tour_parse(const char *text, char *err, size_t errlen)
{
	struct tui_tour *t = xcalloc(1, sizeof *t);
	struct tui_tour_step *cur = NULL;
	struct sim_config check;
	char msg[160];
	int lineno = 0;

	sim_config_default(&check);
	for (const char *p = text; *p;) {
		char line[1024];
		size_t n = strcspn(p, "\n");
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
		p += n + (p[n] == '\n');
		lineno++;
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		char *end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*s || *s == '#')
			continue;
		char *rest = split(s);
		if (line_(t, &cur, s, rest, &check, msg, sizeof msg) < 0) {
			snprintf(err, errlen, "line %d: %s", lineno, msg);
			tui_tour_free(t);
			return NULL;
		}
		if (cur && !cur->line)
			cur->line = lineno;
	}
	if (cur && check_ask(cur, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "line %d: %s", lineno, msg);
		tui_tour_free(t);
		return NULL;
	}
	if (t->nsteps == 0) {
		snprintf(err, errlen, "no steps (a tour needs at least one 'step' line)");
		tui_tour_free(t);
		return NULL;
	}
	return t;
}

const char *const *tui_tour_names(void)
{
	return tui_tour_builtin_names;
}

struct tui_tour *tui_tour_load(const char *name, char *err, size_t errlen)
{
	for (int i = 0; tui_tour_builtin_names[i]; i++)
		if (!strcmp(name, tui_tour_builtin_names[i]))
			return tui_tour_parse(tui_tour_builtin_texts[i], err, errlen);

	FILE *f = fopen(name, "r");
	if (!f) {
		snprintf(err, errlen, "no tour '%s' (not a built-in one, see --list; "
		         "as a file: %s)", name, strerror(errno));
		return NULL;
	}
	char *buf = xmalloc(TUI_TOUR_MAX_BYTES + 1);
	size_t len = fread(buf, 1, TUI_TOUR_MAX_BYTES + 1, f);
	int rerr = ferror(f);
	fclose(f);
	if (rerr || len > TUI_TOUR_MAX_BYTES || memchr(buf, '\0', len)) {
		snprintf(err, errlen, "%s: %s", name, rerr ? "cannot be read" :
		         len > TUI_TOUR_MAX_BYTES ? "too big for a tour (at most 64 KB)"
		                                  : "not a text file (it holds NUL bytes)");
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	char msg[200];
	struct tui_tour *t = tui_tour_parse(buf, msg, sizeof msg);
	if (!t)
		snprintf(err, errlen, "%s: %s", name, msg);
	free(buf);
	return t;
}
