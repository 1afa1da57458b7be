/*
 * opt.c: a command's options, parsed by getopt_long and explained by
 * --help, from one table. See opt.h for the interface.
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/opt.h"

#define MAX_ROWS 192            /* rows of all a command's tables together */
#define VAL_BASE 256            /* getopt_long's val for row i: VAL_BASE + i */
#define VAL_HELP (VAL_BASE + MAX_ROWS)   /* the --help every command has */
#define HELP_WIDTH 26           /* the widest left column before help wraps */

/* The rows of every table in one list, as getopt_long numbers them. */
struct rows {
	const struct opt *row[MAX_ROWS];
	const struct opt_table *table[MAX_ROWS];
	size_t index[MAX_ROWS];     /* the row's index in its table */
	size_t n;
};

static void collect(const struct opt_cmd *cmd, struct rows *r)
{
	r->n = 0;
	for (size_t t = 0; t < cmd->ntables; t++)
		for (size_t i = 0; i < cmd->tables[t].n; i++) {
			assert(r->n < MAX_ROWS);
			r->row[r->n] = &cmd->tables[t].rows[i];
			r->table[r->n] = &cmd->tables[t];
			r->index[r->n++] = i;
		}
}

static void *dest_of(const struct opt_table *t, const struct opt *o)
{
	return t->base ? (char *)t->base + o->off : o->dest;
}

/* ---- values ---- */

/* What o accepts, in words, into buf. */
static void accepts(const struct opt *o, char *buf, size_t len)
{
	if (o->accepts) {
		snprintf(buf, len, "%s", o->accepts);
		return;
	}
	switch (o->kind) {
	case OPT_INT:
		snprintf(buf, len, "a whole number from %.0f to %.0f", o->min, o->max);
		return;
	case OPT_DOUBLE:
		if (o->above_min)
			snprintf(buf, len, "a number above %g, at most %g", o->min, o->max);
		else
			snprintf(buf, len, "a number from %g to %g", o->min, o->max);
		return;
	case OPT_U64:
		snprintf(buf, len, "a whole number from 0 up");
		return;
	case OPT_FLAG:
		snprintf(buf, len, "no value, or on or off");
		return;
	case OPT_CHOICE: {
		size_t used = 0;
		buf[0] = '\0';
		for (const struct opt_choice *c = o->choices; c->word && used < len; c++) {
			const char *sep = c == o->choices ? "" : c[1].word ? ", " : " or ";
			used += (size_t)snprintf(buf + used, len - used, "%s%s", sep, c->word);
		}
		return;
	}
	case OPT_FILE_IN:
		snprintf(buf, len, "a file to read");
		return;
	case OPT_FILE_OUT:
		snprintf(buf, len, "a file to write");
		return;
	case OPT_DIR_OUT:
		snprintf(buf, len, "a directory to write into");
		return;
	case OPT_STRING:
	case OPT_CUSTOM:
	case OPT_USAGE:
		snprintf(buf, len, "a %s", o->arg ? o->arg : "value");
		return;
	}
}

static bool in_range(const struct opt *o, double x)
{
	bool low_ok = o->above_min ? x > o->min : x >= o->min;
	return low_ok && x <= o->max;    /* false for NaN */
}

/* Read v into dest as o says; 0, or -1 with why (prefilled with what o
 * accepts) when v is empty, malformed or out of range; or 1 when a file
 * row's file will not do, with why saying what is wrong with it. */
static int read_value(const struct opt *o, void *dest, const char *v, char *why, size_t len)
{
	char *end;

	errno = 0;
	switch (o->kind) {
	case OPT_FLAG:
		if (!v || !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "1"))
			*(bool *)dest = true;
		else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "0"))
			*(bool *)dest = false;
		else
			return -1;
		return 0;
	case OPT_STRING:
		if (*v == '\0')
			return -1;
		*(const char **)dest = v;
		return 0;
	case OPT_FILE_IN:
	case OPT_FILE_OUT:
	case OPT_DIR_OUT: {
		if (*v == '\0')
			return -1;
		/* why now says what is wrong with the file, not what is accepted */
		int rc = o->kind == OPT_FILE_IN ? util_file_check_in(v, (long long)o->max, why, len)
		       : o->kind == OPT_FILE_OUT ? util_file_check_out(v, why, len)
		       : util_file_check_dir(v, why, len);
		if (rc != 0)
			return 1;
		*(const char **)dest = v;
		return 0;
	}
	case OPT_INT: {
		long n = strtol(v, &end, 10);
		if (*v == '\0' || *end || errno || !in_range(o, (double)n))
			return -1;
		*(int *)dest = (int)n;
		return 0;
	}
	case OPT_DOUBLE: {
		double x = strtod(v, &end);
		if (*v == '\0' || *end || errno || !isfinite(x) || !in_range(o, x))
			return -1;
		*(double *)dest = x;
		return 0;
	}
	case OPT_U64: {
		unsigned long long u = strtoull(v, &end, 10);
		if (*v == '\0' || *end || errno || strchr(v, '-'))
			return -1;
		*(uint64_t *)dest = u;
		return 0;
	}
	case OPT_CHOICE:
		for (const struct opt_choice *c = o->choices; c->word; c++)
			if (!strcmp(v, c->word)) {
				*(int *)dest = c->value;
				return 0;
			}
		return -1;
	case OPT_CUSTOM:
		return o->fn(dest, v, o->ctx, why, len);
	case OPT_USAGE:
		return -1;
	}
	return -1;
}

/* Store v; 0, or -1 with the error line (without the command) in err. */
static int store(const struct opt *o, void *dest, const char *v, char *err, size_t errlen)
{
	char why[PATH_MAX + 64];

	accepts(o, why, sizeof why);
	int rc = read_value(o, dest, v, why, sizeof why);
	if (rc == 0)
		return 0;
	if (rc == 1)
		snprintf(err, errlen, "--%s %s: %s", o->name, v, why);
	else
		snprintf(err, errlen, "--%s accepts %s, not '%s'", o->name, why, v ? v : "");
	return -1;
}

int opt_set(const struct opt_table *t, const char *name, const char *value,
            char *err, size_t errlen)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, name) && t->rows[i].kind != OPT_USAGE)
			return store(&t->rows[i], dest_of(t, &t->rows[i]), value, err, errlen);
	snprintf(err, errlen, "--%s is not an option", name);
	return -1;
}

/* ---- parsing ---- */

/* One run of getopt_long over argv: what it needs and where it is. */
struct parse {
	const struct opt_cmd *cmd;
	struct rows r;
	struct option longs[MAX_ROWS + 2];
	char shorts[3 * MAX_ROWS + 8];
	bool help_row;              /* a row of kind OPT_USAGE: no implicit --help */
};

static void build(struct parse *p, const struct opt_cmd *cmd)
{
	size_t nl = 0, ns = 0;
	bool h_taken = false;

	p->cmd = cmd;
	collect(cmd, &p->r);
	p->help_row = false;
	/* '-': words that are not options come back in order, as 1;
	 * ':': a missing value comes back as ':', not '?'. */
	p->shorts[ns++] = '-';
	p->shorts[ns++] = ':';
	for (size_t i = 0; i < p->r.n; i++) {
		const struct opt *o = p->r.row[i];
		int has = o->arg ? required_argument : o->kind == OPT_FLAG ? optional_argument
		                                                            : no_argument;
		p->longs[nl++] = (struct option){ o->name, has, NULL, o->short_name ? o->short_name
		                                                                   : VAL_BASE + (int)i };
		if (o->kind == OPT_USAGE)
			p->help_row = true;
		if (o->short_name) {
			h_taken |= o->short_name == 'h';
			p->shorts[ns++] = o->short_name;
			if (o->arg)
				p->shorts[ns++] = ':';
		}
	}
	if (!p->help_row) {
		p->longs[nl++] = (struct option){ "help", no_argument, NULL, h_taken ? VAL_HELP : 'h' };
		if (!h_taken)
			p->shorts[ns++] = 'h';
	}
	p->longs[nl] = (struct option){ 0 };
	p->shorts[ns] = '\0';
}

/* The row getopt_long answered with val, or NULL (the implicit --help,
 * or no row at all). */
static const struct opt *row_of(const struct parse *p, int val, size_t *i)
{
	if (val >= VAL_BASE && val < VAL_BASE + (int)p->r.n) {
		*i = (size_t)(val - VAL_BASE);
		return p->r.row[*i];
	}
	for (*i = 0; *i < p->r.n; (*i)++)
		if (val > 0 && p->r.row[*i]->short_name == val)
			return p->r.row[*i];
	return NULL;
}

static bool is_help(const struct parse *p, int val, const struct opt *o)
{
	if (o)
		return o->kind == OPT_USAGE;
	return !p->help_row && (val == VAL_HELP || val == 'h');
}

static FILE *err_stream(const struct opt_cmd *cmd)
{
	return cmd->err ? cmd->err : stderr;
}

static int unknown(const struct parse *p, const char *word)
{
	const char *eq = strchr(word, '=');
	int n = eq && !strncmp(word, "--", 2) ? (int)(eq - word) : (int)strlen(word);

	fprintf(err_stream(p->cmd), "%s: unknown option '%.*s' (%s --help lists them)\n",
	        p->cmd->name, n, word, p->cmd->name);
	return OPT_BAD;
}

/* The word that named the long option getopt_long just returned. */
static const char *option_word(char **argv, const struct opt *o)
{
	if (o && o->arg && optarg == argv[optind - 1] && optind >= 2)
		return argv[optind - 2];
	return argv[optind - 1];
}

/* Whether word names o (or --help) whole, not as an abbreviation. */
static bool whole(const char *word, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(word, "--", 2) && !strncmp(word + 2, name, n) &&
	       (word[2 + n] == '\0' || word[2 + n] == '=');
}

/* One pass over argv. The early pass applies the early rows alone; the
 * main pass everything else, the positionals and --help. */
static int pass(const struct parse *p, int argc, char **argv, bool early, int *rest)
{
	const struct opt_cmd *cmd = p->cmd;
	char err[2 * PATH_MAX + 160];

	optind = 0;                 /* glibc: 0 starts afresh, even mid-argv */
	opterr = 0;
	for (;;) {
		int li = -1;
		size_t i = 0;
		int c = getopt_long(argc, argv, p->shorts, p->longs, &li);
		if (c == -1)
			break;
		if (c == 1) {
			if (early)
				continue;
			err[0] = '\0';
			if (!cmd->positional) {
				snprintf(err, sizeof err, "unexpected argument '%s'", optarg);
			} else if (cmd->positional(optarg, cmd->ctx, err, sizeof err) == 0) {
				continue;
			}
			fprintf(err_stream(cmd), "%s: %s\n", cmd->name, err);
			return OPT_BAD;
		}
		if (c == '?') {
			const struct opt *o = row_of(p, optopt, &i);
			const char *word = argv[optind - 1];
			if (optopt && !o && !is_help(p, optopt, NULL)) {
				char s[3] = { '-', (char)optopt, '\0' };
				return unknown(p, s);
			}
			if (optopt && whole(word, o ? o->name : "help")) {
				fprintf(err_stream(cmd), "%s: --%s takes no value\n", cmd->name,
				        o ? o->name : "help");
				return OPT_BAD;
			}
			return unknown(p, word);
		}
		if (c == ':') {
			const struct opt *o = row_of(p, optopt, &i);
			char why[160];
			if (!o)
				return unknown(p, argv[optind - 1]);
			accepts(o, why, sizeof why);
			fprintf(err_stream(cmd), "%s: --%s needs a value: %s\n", cmd->name, o->name, why);
			return OPT_BAD;
		}
		const struct opt *o = row_of(p, c, &i);
		if (li >= 0) {
			const char *word = option_word(argv, o);
			if (!whole(word, o ? o->name : "help"))
				return unknown(p, word);
		}
		if (is_help(p, c, o)) {
			if (early)
				continue;
			opt_usage(cmd, cmd->out ? cmd->out : stdout);
			return OPT_HELP;
		}
		if (!o)                 /* getopt_long answered with no row: not reached */
			return unknown(p, argv[optind - 1]);
		if (o->early != early)
			continue;
		if (store(o, dest_of(p->r.table[i], o), optarg, err, sizeof err) < 0) {
			fprintf(err_stream(cmd), "%s: %s\n", cmd->name, err);
			return OPT_BAD;
		}
		if (p->r.table[i]->seen)
			p->r.table[i]->seen[p->r.index[i]] = true;
	}
	if (rest)
		*rest = optind;
	return OPT_OK;
}

int opt_parse(const struct opt_cmd *cmd, int argc, char **argv, int *rest)
{
	struct parse p;
	bool any_early = false;
	int rc;

	build(&p, cmd);
	for (size_t i = 0; i < p.r.n; i++)
		any_early |= p.r.row[i]->early;
	if (any_early && (rc = pass(&p, argc, argv, true, NULL)) != OPT_OK)
		return rc;
	rc = pass(&p, argc, argv, false, rest);
	optind = 0;                 /* leave getopt afresh for whoever is next */
	return rc;
}

/* ---- help ---- */

static int left_text(const struct opt *o, char *buf, size_t len)
{
	char s[5] = "";
	if (o->short_name)
		snprintf(s, sizeof s, "-%c, ", o->short_name);
	return snprintf(buf, len, "%s--%s%s%s", s, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

void opt_usage(const struct opt_cmd *cmd, FILE *f)
{
	struct rows r;
	int width = 0;
	char left[64];

	collect(cmd, &r);
	fprintf(f, "usage: %s", cmd->name);
	if (cmd->usage)
		fprintf(f, " %s", cmd->usage);
	for (size_t i = 0; !cmd->usage && i < r.n; i++)
		if (r.row[i]->help)
			fprintf(f, " [--%s%s%s]", r.row[i]->name, r.row[i]->arg ? " " : "",
			        r.row[i]->arg ? r.row[i]->arg : "");
	fputc('\n', f);
	if (cmd->header)
		fputs(cmd->header, f);
	for (size_t i = 0; i < r.n; i++) {
		int w = left_text(r.row[i], left, sizeof left);
		if (r.row[i]->help && w > width)
			width = w > HELP_WIDTH ? HELP_WIDTH : w;
	}
	for (size_t i = 0; i < r.n; i++) {
		const struct opt *o = r.row[i];
		if (i == 0 || r.table[i] != r.table[i - 1])
			if (r.table[i]->heading)
				fprintf(f, "%s\n", r.table[i]->heading);
		if (!o->help)
			continue;
		int w = left_text(o, left, sizeof left);
		if (w > width)          /* too wide: the help starts on the next line */
			fprintf(f, "  %s\n%*s", left, 2 + width + 3, "");
		else
			fprintf(f, "  %s%*s", left, width - w + 3, "");
		/* the help's later lines start under its first */
		for (const char *h = o->help; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%*s", 2 + width + 3, "");
		}
		fputc('\n', f);
	}
	if (cmd->footer)
		fputs(cmd->footer, f);
}
