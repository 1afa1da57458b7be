/*
 * runopt.c: a lab driver's options, parsed and explained from one table.
 * See runopt.h for the interface.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "labs/driver/runopt.h"

_Static_assert(KIT_LOAD_MAX_THREADS == 256, "KIT_RUNOPT_THREADS says \"from 1 to 256\"");

static FILE *out_stream(const struct kit_runopt_spec *spec)
{
	return spec->out ? spec->out : stdout;
}

static FILE *err_stream(const struct kit_runopt_spec *spec)
{
	return spec->err ? spec->err : stderr;
}

static const struct kit_runopt *find(const struct kit_runopt_spec *spec, const char *name)
{
	for (size_t i = 0; i < spec->n; i++)
		if (strcmp(spec->opts[i].name, name) == 0)
			return &spec->opts[i];
	return NULL;
}

static bool in_range(const struct kit_runopt *o, double x)
{
	bool low_ok = o->above_min ? x > o->min : x >= o->min;
	return low_ok && x <= o->max;    /* false for NaN */
}

/* Store text v into o's destination; 0, or -1 when v is empty, malformed
 * or out of range (the destination is then unchanged). */
static int store(const struct kit_runopt *o, const char *v)
{
	char *end;
	errno = 0;
	switch (o->kind) {
	case KIT_RUNOPT_STRING:
		*(const char **)o->dest = v;
		return 0;
	case KIT_RUNOPT_INT: {
		long n = strtol(v, &end, 10);
		if (*v == '\0' || *end || errno || !in_range(o, (double)n))
			return -1;
		*(int *)o->dest = (int)n;
		return 0;
	}
	case KIT_RUNOPT_DOUBLE: {
		double x = strtod(v, &end);
		if (*v == '\0' || *end || errno || !in_range(o, x))
			return -1;
		*(double *)o->dest = x;
		return 0;
	}
	}
	return -1;
}

static int bad(const struct kit_runopt_spec *spec, const struct kit_runopt *o)
{
	fprintf(err_stream(spec), "%s: %s accepts %s\n", spec->cmd, o->name, o->accepts);
	return KIT_RUNOPT_BAD;
}

int kit_runopt_parse(const struct kit_runopt_spec *spec, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			kit_runopt_usage(spec, out_stream(spec));
			return KIT_RUNOPT_HELP;
		}
		const struct kit_runopt *o = find(spec, a);
		if (o == NULL) {
			fprintf(err_stream(spec), "%s: unknown option %s (try --help)\n", spec->cmd, a);
			return KIT_RUNOPT_BAD;
		}
		if (i + 1 >= argc || store(o, argv[++i]) != 0)
			return bad(spec, o);
	}
	return KIT_RUNOPT_OK;
}

void kit_runopt_usage(const struct kit_runopt_spec *spec, FILE *f)
{
	int width = 0;                   /* of the widest "--name ARG" */
	fprintf(f, "usage: %s", spec->cmd);
	for (size_t i = 0; i < spec->n; i++) {
		const struct kit_runopt *o = &spec->opts[i];
		int w = (int)(strlen(o->name) + 1 + strlen(o->arg));
		width = w > width ? w : width;
		fprintf(f, " [%s %s]", o->name, o->arg);
	}
	fputc('\n', f);
	for (size_t i = 0; i < spec->n; i++) {
		const struct kit_runopt *o = &spec->opts[i];
		int w = (int)(strlen(o->name) + 1 + strlen(o->arg));
		fprintf(f, "  %s %s%*s", o->name, o->arg, width - w + 3, "");
		/* the help's later lines start under its first */
		for (const char *h = o->help; *h; h++) {
			fputc(*h, f);
			if (*h == '\n')
				fprintf(f, "%*s", 2 + width + 3, "");
		}
		fputc('\n', f);
	}
	if (spec->footer)
		fputs(spec->footer, f);
}
