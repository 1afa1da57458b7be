/*
 * check.c: building a lab, running its cmocka suite, collecting verdicts.
 * See check.h for where verdicts come from and the interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runner/audit.h"
#include "runner/check.h"
#include "runner/files.h"
#include "runner/text.h"
#include "util/clock.h"
#include "util/hash.h"

#define CHECK_OUT_HEAD 4096   /* what one check printed: first part kept */
#define CHECK_OUT_TAIL 2048   /* and the last part */
#define RACE_OUT_TAIL 16384   /* under ThreadSanitizer: its whole report */
#define RACE_MARK "WARNING: ThreadSanitizer: "
#define RACE_EXIT_S "66"      /* the exit code of a run that ended in a report */
#define RACE_SLOWER 5         /* the time limit under ThreadSanitizer, times the plain one */

/* A growing string; on out-of-memory it keeps what it had. */
struct buf {
	char *s;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > cap)
			cap *= 2;
		char *ns = realloc(b->s, cap);
		if (!ns)
			return;
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_line(struct buf *b, const char *line)
{
	buf_add(b, line, strlen(line));
	buf_add(b, "\n", 1);
}

/* Append a line to an owned, NUL-terminated string. */
static void str_line(char **s, const char *line)
{
	struct buf b = {*s, *s ? strlen(*s) : 0, *s ? strlen(*s) + 1 : 0};
	buf_line(&b, line);
	*s = b.s;
}

int runner_is_mysql_url(const char *url)
{
	return !strncmp(url, "mysql://", 8) || !strncmp(url, "mariadb://", 10);
}

static int is_pg_url(const char *url)
{
	return !strncmp(url, "postgres://", 11) || !strncmp(url, "postgresql://", 13) ||
	       strchr(url, '=') != NULL;
}

int runner_db_env(const char *url, struct runner_opts *o)
{
	const char *env = getenv("HOTROW_PG_URL");
	o->db = url;
	o->db_from = NULL;
	o->only_sqlite = 0;
	o->only_mysql = 0;
	if (!url) {
		if (env && *env && !getenv("HOTROW_LAB_ONLY"))
			o->db_from = "HOTROW_PG_URL";
		return 0;
	}
	if (!strcmp(url, "sqlite") || !strcmp(url, "sqlite:") || !strncmp(url, "sqlite:", 7)) {
		setenv("HOTROW_LAB_ONLY", "sqlite", 1);
		o->only_sqlite = 1;
		return 0;
	}
	/* Before the conninfo test: "?socket=/x" has an '=' too. */
	if (runner_is_mysql_url(url)) {
		setenv("HOTROW_LAB_ONLY", "mysql", 1);
		setenv("HOTROW_MYSQL_URL", url, 1);
		setenv("HOTROW_REQUIRE_MYSQL", "1", 1);   /* as for PostgreSQL: unreachable fails */
		o->only_mysql = 1;
		return 0;
	}
	if (is_pg_url(url)) {
		setenv("HOTROW_LAB_ONLY", "postgres", 1);
		setenv("HOTROW_PG_URL", url, 1);
		setenv("HOTROW_PG_FROM", "--db", 1);
		setenv("HOTROW_REQUIRE_PG", "1", 1);   /* named on purpose: unreachable is a failure */
		o->db_from = "--db";
		return 0;
	}
	return -1;
}

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

static int env_is(const char *name, const char *value)
{
	const char *v = getenv(name);
	return v && !strcmp(v, value);
}

unsigned runner_engines_available(void)
{
	int only_pg = env_is("HOTROW_LAB_ONLY", "postgres") || env_is("HOTROW_LAB_ONLY", "postgresql");
	int only_sqlite = env_is("HOTROW_LAB_ONLY", "sqlite");
	int only_my = env_is("HOTROW_LAB_ONLY", "mysql") || env_is("HOTROW_LAB_ONLY", "mariadb");
	unsigned e = 0;
	if (!only_pg && !only_my)
		e |= RUNNER_ENGINE_SQLITE;
	if (!only_sqlite && !only_my && (env_set("HOTROW_PG_URL") || env_is("HOTROW_REQUIRE_PG", "1")))
		e |= RUNNER_ENGINE_PG;
	if (!only_pg && !only_my && (env_set("HOTROW_REDIS_URL") || env_is("HOTROW_REQUIRE_REDIS", "1")))
		e |= RUNNER_ENGINE_REDIS;
	if (!only_sqlite && !only_pg && (env_set("HOTROW_MYSQL_URL") || env_is("HOTROW_REQUIRE_MYSQL", "1")))
		e |= RUNNER_ENGINE_MYSQL;
	return e;
}

const char *runner_engines_str(unsigned engines)
{
	static const char *const names[] = {"SQLite", "PostgreSQL", "Redis", "MariaDB"};
	static char words[RUNNER_ENGINE_ALL + 1][48];
	unsigned m = engines & RUNNER_ENGINE_ALL;
	char *w = words[m];
	if (!m)
		return "no engine";
	if (!w[0]) {   /* "A", "A and B", "A, B and C": made once per mask */
		int left = 0;
		size_t len = 0;
		for (unsigned b = m; b; b &= b - 1)
			left++;
		for (unsigned i = 0; i < 4; i++) {
			if (!(m & (1u << i)))
				continue;
			left--;
			len += (size_t)snprintf(w + len, sizeof words[m] - len, "%s%s", names[i],
						left > 1 ? ", " : left == 1 ? " and " : "");
		}
	}
	return w;
}

int runner_result_optional_skips(const struct runner_result *r)
{
	int n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->checks[i].verdict == RUNNER_SKIPPED &&
		     (r->checks[i].engines & RUNNER_ENGINES_OPTIONAL & ~r->available);
	return n;
}

static void collect(void *arg, int fd, const char *bytes, size_t n)
{
	(void)fd;
	runner_text_add(arg, bytes, n);
}

/* make TARGETS with san ("SAN=" or "SAN=thread") on its command line. */
static int build_san(const struct runner_tree *t, char *san, const char *targets, double timeout_s,
                     const struct runner_opts *o, char **log)
{
	char *argv[13] = {"make", "-s", "-k", "--no-print-directory", "-j2", san};
	char copy[PATH_MAX * 2];
	int n = 6;
	snprintf(copy, sizeof copy, "%s", targets);
	for (char *save = NULL, *s = strtok_r(copy, " ", &save); s && n < 12; s = strtok_r(NULL, " ", &save))
		argv[n++] = s;
	argv[n] = NULL;
	struct runner_text text;
	struct runner_exit e;
	runner_text_init(&text, 48 * 1024, 16 * 1024);
	struct runner_child c = {.argv = argv, .dir = t->root, .timeout_s = timeout_s, .out = collect,
				 .arg = &text, .watch_fd = {-1, -1}};
	if (o && o->watched) {
		c.watch_fd[0] = o->watch_fd[0];
		c.watch_fd[1] = o->watch_fd[1];
		c.watched = o->watched;
		c.watch_arg = o->watch_arg;
	}
	int rc = runner_proc_run(&c, &e);
	*log = runner_text_str(&text);
	runner_text_free(&text);
	if (e.stopped)
		return -2;
	if (e.cancelled)
		return -4;
	if (e.timed_out)
		return -3;
	return rc == 0 ? 0 : -1;
}

int runner_build(const struct runner_tree *t, const char *targets, double timeout_s,
                 const struct runner_opts *o, char **log)
{
	/* The runner's targets live in the plain build/: a SAN=... that a make
	 * above us exported into the environment must not move them. */
	return build_san(t, "SAN=", targets, timeout_s, o, log);
}

void runner_build_log_print(FILE *out, const char *log)
{
	const char *s = log ? log : "";
	while (*s) {
		size_t n = strcspn(s, "\n");
		if (strncmp(s, "make: ", 6) && strncmp(s, "make[", 5))
			fprintf(out, "%.*s\n", (int)n, s);
		s += n;
		if (*s)
			s++;
	}
}

/* ---- the expected checks, from the preprocessed test sources ---- */

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* Past a string literal starting at s (on '"'); its text appended to b. */
static const char *literal(const char *s, struct buf *b)
{
	s++;
	while (*s && *s != '"') {
		if (*s == '\\' && s[1]) {
			s++;
		}
		if (b)
			buf_add(b, s, 1);
		s++;
	}
	return *s ? s + 1 : s;
}

/* The engine an identifier of a test table's entry names, if any. */
static unsigned engine_word(const char *p, size_t k)
{
	static const struct { const char *setup; unsigned engines; } setups[] = {
		{"labtest_setup_sqlite", RUNNER_ENGINE_SQLITE},
		{"labtest_setup_pg", RUNNER_ENGINE_PG},
		{"labtest_setup_redis", RUNNER_ENGINE_SQLITE | RUNNER_ENGINE_REDIS},
		{"labtest_setup_mysql", RUNNER_ENGINE_MYSQL},
	};
	for (size_t i = 0; i < sizeof setups / sizeof setups[0]; i++)
		if (strlen(setups[i].setup) == k && !strncmp(p, setups[i].setup, k))
			return setups[i].engines;
	return 0;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The next "int " at or after p, or NULL. A loop of its own rather than
 * strstr(): the sanitizer builds' strstr measures the whole rest of the
 * source at every call, and setup_engines() calls it once per "int " of
 * the preprocessed suite, for every setup it follows. */
static const char *next_int(const char *p)
{
	for (; *p; p++)
		if (p[0] == 'i' && p[1] == 'n' && p[2] == 't' && p[3] == ' ')
			return p;
	return NULL;
}

/* The engines a setup function of the suite's own needs: the harness's
 * setups it calls, and Redis when it reads HOTROW_REDIS_URL (a check on
 * PostgreSQL with a real Redis). depth bounds setups calling setups. */
static unsigned setup_engines(const char *src, const char *name, size_t k, int depth)
{
	unsigned e = engine_word(name, k);
	if (e || depth > 3)
		return e;
	for (const char *p = next_int(src); p; p = next_int(p + 1)) {
		const char *q = skip_space(p + 4);
		if (strncmp(q, name, k) || is_ident(q[k]))
			continue;
		q = skip_space(q + k);
		if (*q != '(' || !(q = strchr(q, ')')))
			continue;
		q = skip_space(q + 1);
		if (*q != '{')
			continue;   /* a declaration, not the definition */
		int level = 0;
		for (; *q; q++) {
			if (*q == '{')
				level++;
			else if (*q == '}' && --level == 0)
				break;
			else if (is_ident(*q) && !is_ident(q[-1])) {
				const char *w = q;
				while (is_ident(*q))
					q++;
				if ((size_t)(q - w) == 16 && !strncmp(w, "HOTROW_REDIS_URL", 16))
					e |= RUNNER_ENGINE_REDIS;
				else if ((size_t)(q - w) != k || strncmp(w, name, k))
					e |= setup_engines(src, w, (size_t)(q - w), depth + 1) & ~RUNNER_ENGINE_REDIS;
				q--;
			}
		}
		return e;
	}
	return 0;
}

int runner_checks_parse(const char *src, char ***names, unsigned **engines)
{
	size_t n = 0, cap = 0;
	unsigned need = 0;
	int field = 0;   /* of the entry: 0 name, 1 function, 2 setup, 3 teardown */
	*names = NULL;
	if (engines)
		*engines = NULL;
	for (const char *s = strstr(src, "CMUnitTest"); s; s = strstr(s, "CMUnitTest")) {
		s += 10;
		/* "CMUnitTest NAME [ ... ] = {" : an array being defined. */
		const char *p = skip_space(s);
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		p = skip_space(p);
		if (*p != '[')
			continue;
		p = strchr(p, ']');
		if (!p)
			break;
		p = skip_space(p + 1);
		if (*p != '=')
			continue;
		p = skip_space(p + 1);
		if (*p != '{')
			continue;
		int depth = 1;
		struct buf name = {0};
		for (p++; *p && depth > 0; ) {
			if (*p == '"') {
				p = literal(p, depth == 2 ? &name : NULL);
				continue;
			}
			if (*p == '\'') {   /* a character constant: skip it whole */
				p++;
				if (*p == '\\')
					p++;
				if (*p)
					p++;
				if (*p == '\'')
					p++;
				continue;
			}
			if (depth == 2 && field == 2 && is_ident(*p) && !is_ident(p[-1])) {
				const char *e = p;
				while (is_ident(*e))
					e++;
				need |= setup_engines(src, p, (size_t)(e - p), 0);
				p = e;
				continue;
			}
			if (depth == 2 && *p == ',')
				field++;
			if (*p == '{') {
				depth++;
				if (depth == 2) {
					name.len = 0;
					need = 0;
					field = 0;
				}
			} else if (*p == '}') {
				if (depth == 2 && name.len) {
					if (n == cap) {
						cap = cap ? 2 * cap : 32;
						char **nn = realloc(*names, cap * sizeof *nn);
						unsigned *ne = engines ? realloc(*engines, cap * sizeof *ne) : NULL;
						if (nn)
							*names = nn;
						if (ne)
							*engines = ne;
						if (!nn || (engines && !ne)) {
							free(name.s);
							return -1;
						}
					}
					if (engines)
						(*engines)[n] = need;
					(*names)[n++] = strdup(name.s);
				}
				depth--;
			}
			p++;
		}
		free(name.s);
		s = p;
	}
	return (int)n;
}

/* Read build/labs/NAME/checks.i into r->checks. Returns 0 or -1. */
static int load_expected(const struct runner_tree *t, const struct runner_lab *l, struct runner_result *r,
                         const struct runner_part *part)
{
	char path[PATH_MAX];
	if (runner_path(t, path, sizeof path, "build/labs/%s/checks.i", l->name) != 0)
		return -1;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	struct buf b = {0};
	char chunk[8192];
	size_t k;
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, k);
	fclose(f);
	char **names;
	unsigned *engines;
	int n = b.s ? runner_checks_parse(b.s, &names, &engines) : 0;
	free(b.s);
	if (n <= 0)
		return -1;
	r->checks = calloc((size_t)n, sizeof *r->checks);
	size_t kept = 0;
	for (int i = 0; i < n; i++) {
		if (r->checks && part && !runner_part_has(part, names[i])) {
			str_line(&r->dropped, names[i]);   /* another part's: skipped quietly */
		} else if (r->checks) {
			snprintf(r->checks[kept].name, sizeof r->checks[kept].name, "%s", names[i]);
			r->checks[kept++].engines = engines[i];
		}
		free(names[i]);
	}
	free(names);
	free(engines);
	if (!r->checks)
		return -1;
	r->n = kept;
	return 0;
}

/* ---- the run: report lines and output ---- */

/* The state of one run, beside its result. */
struct run {
	struct runner_result *r;
	struct runner_check *cur;      /* started, not ended */
	struct runner_text *out;       /* one per check */
	struct runner_text stray;
	double started;
	int live;
	void (*on_check)(const struct runner_check *c);   /* with live: show it as it ends */
	char token[40];                /* starts every harness line; "" in tests */
};

static struct run *active;   /* runner_result_report's view when called from tests */

static struct runner_check *find(struct runner_result *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->checks[i].name, name))
			return &r->checks[i];
	return NULL;
}

/* The harness starts a failure with "file.c:42: "; keep that apart. */
static const char *strip_where(struct runner_check *c, const char *text)
{
	size_t file = strcspn(text, ": ");
	if (file < 3 || strncmp(text + file - 2, ".c", 2) || text[file] != ':')
		return text;
	size_t digits = strspn(text + file + 1, "0123456789");
	if (!digits || strncmp(text + file + 1 + digits, ": ", 2))
		return text;
	if (!c->where[0])
		snprintf(c->where, sizeof c->where, "%.*s", (int)(file + 1 + digits), text);
	return text + file + 1 + digits + 2;
}

static void end_check(struct run *run, struct runner_check *c, enum runner_verdict v)
{
	c->verdict = v;
	c->state = 2;
	c->seconds = util_now() - run->started;
	struct runner_text *t = &run->out[c - run->r->checks];
	free(c->output);
	c->output = runner_text_str(t);
	runner_text_free(t);
	if (run->cur == c)
		run->cur = NULL;
	if (run->live && run->on_check)
		run->on_check(c);
}

static void report_line(struct run *run, char *line)
{
	struct runner_result *r = run->r;
	if (run->token[0]) {   /* only the harness knows it (see labtest.h) */
		size_t k = strlen(run->token);
		if (strncmp(line, run->token, k) || line[k] != ' ')
			return;
		line += k + 1;
	}
	char *arg = strchr(line, ' ');
	if (!arg)
		return;
	*arg++ = '\0';
	if (!strcmp(line, "notice")) {
		str_line(&r->notices, arg);
		if (run->live) {
			printf("%s%s%s\n", runner_c_dim(), arg, runner_c_off());
			fflush(stdout);
		}
		return;
	}
	if (!strcmp(line, "start")) {
		struct runner_check *c = find(r, arg);
		if (!c || c->state != 0)
			return;   /* not a check of this lab, or a second start: ignored */
		c->state = 1;
		run->cur = c;
		run->started = util_now();
		return;
	}
	struct runner_check *c = run->cur;
	if (!strcmp(line, "end")) {
		char *verdict = strrchr(arg, ' ');
		if (!verdict)
			return;
		*verdict++ = '\0';
		if (!c || strcmp(c->name, arg))
			return;   /* an end for a check not running: ignored */
		enum runner_verdict v = !strcmp(verdict, "pass") ? RUNNER_PASSED :
					!strcmp(verdict, "skip") ? RUNNER_SKIPPED : RUNNER_FAILED;
		if (v == RUNNER_SKIPPED && !(c->engines & ~r->available)) {
			/* Every engine it needs was there: the check did not pass. */
			char why[200];
			snprintf(why, sizeof why, "not run (skipped), though %s was there: a skip is not a pass",
				 c->engines ? runner_engines_str(c->engines) : "all it needs");
			str_line(&c->details, why);
			v = RUNNER_FAILED;
		}
		if (c->details)
			v = RUNNER_FAILED;   /* it said what failed: nothing after undoes that */
		end_check(run, c, v);
	} else if (c && !strcmp(line, "say")) {
		str_line(&c->said, arg);
	} else if (c && !strcmp(line, "threads")) {
		c->threads = atoi(arg) > 0;
	} else if (c && !strcmp(line, "detail")) {
		str_line(&c->details, strip_where(c, arg));
	} else if (c && !strcmp(line, "hint")) {
		size_t used = strlen(c->hint);
		snprintf(c->hint + used, sizeof c->hint - used, "%s%s", used ? " " : "", arg);
	}
}

static void on_report(void *arg, char *line)
{
	report_line(arg, line);
}

static void on_output(void *arg, int fd, const char *bytes, size_t n)
{
	struct run *run = arg;
	(void)fd;
	if (run->cur)
		runner_text_add(&run->out[run->cur - run->r->checks], bytes, n);
	else
		runner_text_add(&run->stray, bytes, n);
}

static void run_init_tail(struct run *run, struct runner_result *r, int live, size_t tail)
{
	memset(run, 0, sizeof *run);
	run->r = r;
	run->live = live;
	run->out = calloc(r->n ? r->n : 1, sizeof *run->out);
	for (size_t i = 0; run->out && i < r->n; i++)
		runner_text_init(&run->out[i], CHECK_OUT_HEAD, tail);
	runner_text_init(&run->stray, 16384, 4096);
}

static void run_init(struct run *run, struct runner_result *r, int live)
{
	run_init_tail(run, r, live, CHECK_OUT_TAIL);
}

void runner_result_report(struct runner_result *r, char *line)
{
	static struct run run;
	if (active == NULL || active->r != r) {
		run_init(&run, r, 0);
		active = &run;
	}
	report_line(active, line);
}

/* Every check that did not end fails, saying why; then the counts. */
static void finish(struct run *run, const char *status_text)
{
	struct runner_result *r = run->r;
	const struct runner_check *died_in = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (r->checks[i].state == 1)
			died_in = &r->checks[i];
	r->running = died_in ? died_in->name : NULL;
	for (size_t i = 0; i < r->n; i++) {
		struct runner_check *c = &r->checks[i];
		if (c->state == 2)
			continue;
		if (c->engines & ~r->available) {   /* it would not have run anyway */
			end_check(run, c, RUNNER_SKIPPED);
			continue;
		}
		char why[400];
		if (c->state == 1)
			snprintf(why, sizeof why, "did not finish: the test process %s while it ran", status_text);
		else if (died_in)
			snprintf(why, sizeof why, "did not run: the test process %s in %s", status_text, died_in->name);
		else
			snprintf(why, sizeof why, "did not run: the test process %s before it", status_text);
		str_line(&c->details, why);
		end_check(run, c, RUNNER_FAILED);
	}
	r->passed = r->failed = r->skipped = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (r->checks[i].verdict == RUNNER_PASSED)
			r->passed++;
		else if (r->checks[i].verdict == RUNNER_SKIPPED)
			r->skipped++;
		else
			r->failed++;
	}
	free(r->stray);
	r->stray = runner_text_str(&run->stray);
	runner_text_free(&run->stray);
	for (size_t i = 0; run->out && i < r->n; i++)
		runner_text_free(&run->out[i]);
	free(run->out);
	run->out = NULL;
}

void runner_result_finish(struct runner_result *r, const char *status_text)
{
	if (active && active->r == r) {
		finish(active, status_text);
		active = NULL;
	}
}

/* Copy src to dst (replaced), executable. Returns 0 or -1. */
static int copy_exec(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	unlink(dst);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	int rc = out < 0 ? -1 : 0;
	char b[65536];
	ssize_t k;
	while (rc == 0 && (k = read(in, b, sizeof b)) > 0)
		if (write(out, b, (size_t)k) != k)
			rc = -1;
	close(in);
	if (out >= 0 && close(out) != 0)
		rc = -1;
	return rc;
}

/* A secret for one run of a test binary, in hex, from the kernel's
 * generator (the clock and the pid only where it fails). */
static void new_token(char *out, size_t n)
{
	unsigned char b[16];
	if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
		uint64_t x = (uint64_t)(util_now() * 1e9) ^ ((uint64_t)getpid() << 32);
		for (size_t i = 0; i < sizeof b; i++)
			b[i] = (unsigned char)util_splitmix64(&x);
	}
	size_t k = 0;
	for (size_t i = 0; i < sizeof b && k + 3 <= n; i++)
		k += (size_t)snprintf(out + k, n - k, "%02x", b[i]);
}

/* "build/obj/SIDE/NN-name/x.o ... build/labs/NN-name/checks.i" into buf:
 * what runner_audit reads. Returns 0, or -1 when it does not fit. */
static int object_targets(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                          char *buf, size_t n)
{
	char dir[PATH_MAX];
	size_t k, used = (size_t)snprintf(buf, n, "build/labs/%s/checks.i", l->name);
	if (runner_path(t, dir, sizeof dir, "%s/%s", side, l->name) != 0)
		return -1;
	char **names = runner_files_of(dir, &k);
	int rc = 0;
	for (size_t i = 0; i < k; i++) {
		size_t len = strlen(names[i]);
		if (len > 2 && !strcmp(names[i] + len - 2, ".c") && !strchr(names[i], ' ')) {
			int w = snprintf(buf + used, n - used, " build/obj/%s/%s/%.*s.o", side, l->name,
					 (int)len - 2, names[i]);
			if (w < 0 || (size_t)w >= n - used)
				rc = -1;
			else
				used += (size_t)w;
		}
	}
	runner_files_free(names, k);
	return rc;
}

int runner_build_objects(const struct runner_tree *t, const struct runner_lab *l,
                         const struct runner_opts *o, double timeout_s, char **log)
{
	const char *side = o->solutions ? "solutions" : "exercises";
	char objects[PATH_MAX * 4];
	*log = NULL;
	if (runner_files_fresh(t, l, side) != 0) {
		*log = strdup("cannot write the kit's build/ directory");
		return -1;
	}
	if (object_targets(t, l, side, objects, sizeof objects) != 0) {
		*log = strdup("too many files in the exercise");
		return -1;
	}
	int rc = runner_build(t, objects, timeout_s, o, log);
	if (rc == 0)
		runner_files_built(t, l, side);
	return rc;
}

/*
 * A private build: the test binary at target (relative to the kit),
 * built under the kit's build lock (.hotrow/build.lock: one runner builds
 * at a time) and copied, still under it, to bin in .hotrow/run/PID/, so a
 * build that another runner starts later cannot change what this one
 * runs. private_begin fills src, dir and bin, takes the lock (pb->fd, -1
 * when it cannot be opened) and shows what is built on the status line;
 * private_end copies what was built when built is 0 (else leaves it) and
 * lets the lock go. Both return 0, or -1 (private_end: the copy failed).
 */
struct private_build {
	char src[PATH_MAX], dir[PATH_MAX], bin[PATH_MAX];
	int fd;
	int status_line;
};

static int private_begin(const struct runner_tree *t, const struct runner_opts *o,
                         const char *target, const char *bin_name, const char *shown,
                         struct private_build *pb)
{
	char lock[PATH_MAX];
	pb->fd = -1;
	pb->status_line = 0;
	if (runner_state_dir(t, NULL) != 0 || runner_path(t, lock, sizeof lock, ".hotrow/build.lock") != 0 ||
	    runner_path(t, pb->src, sizeof pb->src, "%s", target) != 0 ||
	    runner_path(t, pb->dir, sizeof pb->dir, ".hotrow/run/%ld", (long)getpid()) != 0 ||
	    snprintf(pb->bin, sizeof pb->bin, "%s/%s", pb->dir, bin_name) >= (int)sizeof pb->bin)
		return -1;
	pb->fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (pb->fd >= 0)
		while (flock(pb->fd, LOCK_EX) != 0 && errno == EINTR && !runner_proc_stopping())
			;
	pb->status_line = o->live && isatty(STDOUT_FILENO);
	if (pb->status_line) {
		printf("  %s%s ...%s\r", runner_c_dim(), shown, runner_c_off());
		fflush(stdout);
	}
	return 0;
}

static int private_end(struct private_build *pb, int built)
{
	int rc = 0;
	if (pb->status_line) {
		printf("\033[K");
		fflush(stdout);
	}
	if (built == 0 && (runner_mkdirs(pb->dir) != 0 || copy_exec(pb->src, pb->bin) != 0))
		rc = -1;
	if (pb->fd >= 0)
		close(pb->fd);   /* releases the lock */
	pb->fd = -1;
	return rc;
}

/* Build under a lock and copy the test binary to .hotrow/run/PID/, so a
 * second runner neither relinks it nor finds it busy. Fills bin. */
static int build_private(const struct runner_tree *t, const struct runner_lab *l,
                         const struct runner_opts *o, struct runner_result *r, char *bin, size_t n)
{
	char target[PATH_MAX], targets[PATH_MAX * 2], name[PATH_MAX], shown[PATH_MAX + 8];
	struct private_build pb;
	snprintf(target, sizeof target, "build/labs/%s/test-%s", l->name, o->solutions ? "solution" : "exercise");
	snprintf(targets, sizeof targets, "%s build/labs/%s/checks.i", target, l->name);
	snprintf(name, sizeof name, "test-%s", l->name);
	snprintf(shown, sizeof shown, "make %s", target);
	if (private_begin(t, o, target, name, shown, &pb) != 0 ||
	    snprintf(bin, n, "%s", pb.bin) >= (int)n) {
		private_end(&pb, -1);
		r->stray = strdup("cannot use the kit's .hotrow/ directory");
		return -1;
	}
	double limit = o->timeout_s > 0 ? 4 * o->timeout_s : 0;
	/* The student's objects first, built from the files as they are, and
	 * audited before they are linked with the checks. */
	const char *side = o->solutions ? "solutions" : "exercises";
	char why[600];
	int built = 0;
	if (runner_audit_sources(t, l, side, why, sizeof why) != 0) {
		r->refused = strdup(why);
		built = -1;
		/* the list of checks, so that every one of them fails */
		char target_list[PATH_MAX];
		snprintf(target_list, sizeof target_list, "build/labs/%s/checks.i", l->name);
		char *ignored = NULL;
		runner_build(t, target_list, limit, o, &ignored);
		free(ignored);
	}
	if (built == 0)
		built = runner_build_objects(t, l, o, limit, &r->build_log);
	if (built == 0) {
		if (runner_audit(t, l, side, why, sizeof why) != 0) {
			r->refused = strdup(why);
			built = -1;
		}
	}
	if (built == 0) {
		char *log = NULL;
		built = runner_build(t, targets, limit, o, &log);
		if (log && r->build_log) {   /* the warnings of both steps */
			str_line(&r->build_log, log);
			free(log);
		} else if (log) {
			r->build_log = log;
		}
	}
	int rc = 0;
	if (private_end(&pb, built) != 0) {
		r->stray = strdup("cannot copy the test binary into .hotrow/run/");
		rc = -1;
	} else if (built != 0) {
		r->interrupted = built == -2;
		r->build_timed_out = built == -3;
		r->cancelled = built == -4;
		rc = 1;
	}
	return rc;
}

/* Remove the private copy bin and its directory (.hotrow/run/PID/). */
static void remove_private(const char *bin)
{
	char dir[PATH_MAX];
	unlink(bin);
	snprintf(dir, sizeof dir, "%s", bin);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		rmdir(dir);
	}
}

/* Run the test binary bin (removed after, unless keep_bin) for r's checks:
 * those whose engines the runner did not give, and those of skip (one a
 * line, or NULL), are skipped. Returns 0 when it started, -1 when not. */
static int run_checks(const struct runner_tree *t, const struct runner_opts *o, struct runner_result *r,
                      char *bin, double timeout_s, int live, const char *skip_also, int keep_bin)
{
	struct run run;
	run_init_tail(&run, r, live, skip_also ? RACE_OUT_TAIL : CHECK_OUT_TAIL);
	run.on_check = o->on_check;
	char *argv[] = {bin, NULL};
	/* The checks whose engines the runner did not give: the only ones the
	 * harness skips (labtest.h), and the only skips that count as such. */
	struct buf skip = {0};
	buf_add(&skip, "HOTROW_LAB_SKIP=", 16);
	for (size_t i = 0; i < r->n; i++)
		if (r->checks[i].engines & ~r->available)
			buf_line(&skip, r->checks[i].name);
	if (r->dropped)
		buf_add(&skip, r->dropped, strlen(r->dropped));
	if (skip_also)
		buf_add(&skip, skip_also, strlen(skip_also));
	char token_env[64];
	new_token(run.token, sizeof run.token);
	snprintf(token_env, sizeof token_env, "HOTROW_REPORT_TOKEN=%s", run.token);
	/* Under ThreadSanitizer: the first report ends the process, in the
	 * check that made it, with a code of its own. io_sync=0: by default
	 * every socket shares one synchronisation object, so a reply read on
	 * one connection is ordered after every query sent on any other, and
	 * two threads that each talk to the database are ordered at every
	 * round trip; a static written by one between two statements and
	 * read by the other is then never reported (Lab 08's
	 * versions__first_calls_at_once against a block size cached behind
	 * a plain flag). With it, no file, pipe or socket orders threads;
	 * the kit and the references hand nothing from thread to thread
	 * that way, and labs/README.md tells the students so. The kit's
	 * failpoints are hidden from ThreadSanitizer too (kit/failpoint.c),
	 * so two calls failing at once are not ordered by the failpoint's
	 * own lock. */
	const char *env[] = {token_env, skip.s,
			     "TSAN_OPTIONS=halt_on_error=1 io_sync=0 exitcode=" RACE_EXIT_S,
			     "HOTROW_LAB_LEAVE_OUT=1", NULL};
	if (!skip_also)
		env[2] = NULL;
	struct runner_child c = {
		.argv = argv, .dir = t->root, .timeout_s = timeout_s, .report = 1,
		.out = on_output, .line = on_report, .arg = &run, .watch_fd = {-1, -1},
		.env = env,
	};
	if (o->watched) {
		c.watch_fd[0] = o->watch_fd[0];
		c.watch_fd[1] = o->watch_fd[1];
		c.watched = o->watched;
		c.watch_arg = o->watch_arg;
	}
	runner_proc_run(&c, &r->exit);
	free(skip.s);
	if (!keep_bin)
		remove_private(bin);
	char status[120];
	runner_proc_status(&r->exit, status, sizeof status);
	r->interrupted = r->exit.stopped;
	r->cancelled = r->exit.cancelled;
	int normal = r->exit.started && !r->exit.timed_out && !r->exit.stopped &&
		     WIFEXITED(r->exit.status);
	if (!normal)
		snprintf(r->ended, sizeof r->ended, "%s", status);
	finish(&run, status);
	if (normal && WEXITSTATUS(r->exit.status) != 0 && r->failed == 0)
		snprintf(r->ended, sizeof r->ended, "%s", status);
	return r->exit.started ? 0 : -1;
}

/* ---- the race pass ---- */

/* What ThreadSanitizer's report of a check's run says, for a student:
 * the kind, each access (its first frame in the lab's code, else its
 * first), and what to do; the report itself stays in the output. */
static void race_details(struct runner_check *c, const char *out)
{
	const char *w = strstr(out, RACE_MARK);
	size_t kl = strcspn(w + strlen(RACE_MARK), "\n(");
	char line[600];
	snprintf(line, sizeof line, "under ThreadSanitizer, a %.*s", (int)kl, w + strlen(RACE_MARK));
	while (kl && line[strlen(line) - 1] == ' ')
		line[strlen(line) - 1] = '\0';
	int is_race = !strncmp(w + strlen(RACE_MARK), "data race", 9);
	str_line(&c->details, line);
	/* the accesses: "  Read of size 8 at 0x... by main thread:", then frames */
	const char *p = w;
	int shown = 0;
	while ((p = strchr(p, '\n')) != NULL && shown < 4) {
		p++;
		if (!strncmp(p, "SUMMARY:", 8) || !strncmp(p, "==", 2))
			break;
		if (p[0] != ' ' || p[1] != ' ' || p[2] == ' ')
			continue;
		size_t hl = strcspn(p, "\n");
		if (hl < 2 || p[hl - 1] != ':' || !memmem(p, hl, " by ", 4) ||
		    !strncmp(p + 2, "Mutex ", 6) || !strncmp(p + 2, "Thread ", 7) ||
		    !strncmp(p + 2, "Location ", 9))
			continue;
		/* the header, less the address */
		char head[300];
		snprintf(head, sizeof head, "%.*s", (int)(hl - 3), p + 2);
		char *at = strstr(head, " at 0x");
		if (at) {
			char *by = strstr(at, " by ");
			if (by)
				memmove(at, by, strlen(by) + 1);
			else
				*at = '\0';
		}
		/* its frames: "    #0 func file:line (module+0x...)" */
		const char *f = p + hl, *pick = NULL;
		for (int k = 0; k < 12 && *f == '\n' && !strncmp(f + 1, "    #", 5); k++) {
			f++;
			const char *fn = strchr(f + 5, ' ');
			size_t fl = strcspn(f, "\n");
			if (fn && !pick)
				pick = fn + 1;
			if (fn && (memmem(f, fl, " exercises/", 11) || memmem(f, fl, " solutions/", 11))) {
				pick = fn + 1;
				break;
			}
			f += fl;
		}
		if (pick) {
			size_t name = strcspn(pick, " \n"), loc = 0;
			if (pick[name] == ' ')
				loc = strcspn(pick + name + 1, " \n");
			snprintf(line, sizeof line, "  %s: %.*s%s%.*s%s", head, (int)name, pick,
				 loc ? " (" : "", (int)loc, pick + name + 1, loc ? ")" : "");
		} else {
			snprintf(line, sizeof line, "  %s", head);
		}
		str_line(&c->details, line);
		shown++;
	}
	if (is_race)
		str_line(&c->details, "Two threads used the same memory, one of them writing, with "
			 "no lock or atomic between them: C calls that undefined behaviour, whatever "
			 "values came out this time. Take the lock the other side takes, or make the "
			 "shared value an _Atomic (or give each thread its own).");
	else
		str_line(&c->details, "ThreadSanitizer's report is below; the plain build passed "
			 "the check, and this build watches every memory access and every lock.");
}

/* After every check passed: run those that started threads again, built
 * with ThreadSanitizer (-fsanitize=thread), which sees two threads reach
 * the same memory with nothing ordering them. The first report ends that
 * run and fails its check. A build or run that fails for another reason
 * (no libtsan, a kernel it cannot map under, slowness past the time
 * limit) fails nothing: the plain run stands, and a notice says so. */
static void race_pass(const struct runner_tree *t, const struct runner_lab *l,
                      const struct runner_opts *o, struct runner_result *r)
{
	if (!r->built || r->failed || r->passed == 0 || r->ended[0])
		return;
	int n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->checks[i].verdict == RUNNER_PASSED && r->checks[i].threads;
	if (n == 0)
		return;
	double started = util_now();
	int status_line = o->live && isatty(STDOUT_FILENO);
	if (o->live) {
		printf("%sRaces: the %d check%s that start threads, again under ThreadSanitizer "
		       "(a build that watches every memory access; several times slower)%s\n",
		       runner_c_dim(), n, n == 1 ? "" : "s", runner_c_off());
		fflush(stdout);
	}
	char target[PATH_MAX], name[PATH_MAX], shown[PATH_MAX + 80];
	struct private_build pb;
	snprintf(target, sizeof target, "build/san-thread/labs/%s/test-%s", l->name,
		 o->solutions ? "solution" : "exercise");
	snprintf(name, sizeof name, "test-%s-races", l->name);
	snprintf(shown, sizeof shown, "make SAN=thread %s (the first time, the kit is built once more)",
		 target);
	if (private_begin(t, o, target, name, shown, &pb) != 0)
		return;
	char *log = NULL;
	int built = build_san(t, "SAN=thread", target, o->timeout_s > 0 ? 8 * o->timeout_s : 0, o, &log);
	if (private_end(&pb, built) != 0)
		built = -1;
	char *bin = pb.bin;
	if (built != 0) {
		r->interrupted = built == -2;
		r->cancelled = built == -4;
		if (built == -1 || built == -3) {
			char why[300];
			snprintf(why, sizeof why, "The race check was not run: the ThreadSanitizer build "
				 "failed (is libtsan installed? `make deps` installs it). The plain checks stand.");
			str_line(&r->notices, why);
			if (o->live) {
				printf("  %s\n", why);
				runner_build_log_print(stdout, log);
			}
		}
		free(log);
		return;
	}
	free(log);

	/* Each check in a process of its own: a check is then the first to
	 * call the lab's functions, and a cache or a table filled on first
	 * use is filled under its threads, not by an earlier check's one. */
	double limit = o->timeout_s > 0 ? RACE_SLOWER * o->timeout_s : 0;
	int k = 0, raced = 0, other = 0;
	char ended[400] = "";
	for (size_t i = 0; i < r->n && !raced && !r->interrupted && !r->cancelled; i++) {
		struct runner_check *c = &r->checks[i];
		if (!(c->verdict == RUNNER_PASSED && c->threads))
			continue;
		k++;
		if (status_line) {
			printf("  %s%d/%d %s%s\033[K\r", runner_c_dim(), k, n, c->name, runner_c_off());
			fflush(stdout);
		}
		struct runner_result r2;
		memset(&r2, 0, sizeof r2);
		r2.available = r->available;
		r2.checks = calloc(r->n, sizeof *r2.checks);
		struct buf others = {0};
		for (size_t j = 0; r2.checks && j < r->n; j++) {
			memcpy(r2.checks[j].name, r->checks[j].name, sizeof r2.checks[j].name);
			r2.checks[j].engines = r->checks[j].engines;
			if (j != i)
				buf_line(&others, r->checks[j].name);
		}
		if (r->dropped)
			buf_add(&others, r->dropped, strlen(r->dropped));
		if (!r2.checks || !others.s) {
			free(r2.checks);
			free(others.s);
			break;
		}
		r2.n = r->n;
		int rc = run_checks(t, o, &r2, bin, limit, 0, others.s, 1);
		free(others.s);
		r->interrupted |= r2.interrupted;
		r->cancelled |= r2.cancelled;
		struct runner_check *c2 = &r2.checks[i];
		if (rc == 0 && c2->output && strstr(c2->output, RACE_MARK)) {
			if (status_line)
				printf("\033[K");
			c->verdict = RUNNER_FAILED;
			race_details(c, c2->output);
			free(c->output);
			c->output = c2->output;
			c2->output = NULL;
			r->passed--;
			r->failed++;
			raced++;
			if (o->live && o->on_check)
				o->on_check(c);
		} else if (rc != 0 || c2->verdict != RUNNER_PASSED) {
			other++;   /* failed or never ran in the slower build: not counted */
			if (!ended[0])
				snprintf(ended, sizeof ended, "%s: %s", c->name, r2.ended[0] ? r2.ended :
					 "it failed there, and passed in the plain build");
		}
		runner_result_free(&r2);
	}
	remove_private(bin);
	if (status_line) {
		printf("\033[K");
		fflush(stdout);
	}
	if (o->live && !r->interrupted && !r->cancelled) {
		if (raced == 0 && other == 0)
			printf("  %sno race in the %d check%s (%.0f s)%s\n", runner_c_ok(), n,
			       n == 1 ? "" : "s", util_now() - started, runner_c_off());
		else if (raced == 0)
			printf("  %sNo race seen; %d of the %d checks did not finish in the slower build "
			       "(the first, %s). The plain checks stand.%s\n", runner_c_dim(), other, n,
			       ended, runner_c_off());
		fflush(stdout);
	}
}

int runner_check_run(const struct runner_tree *t, const struct runner_lab *l,
                     const struct runner_opts *o, struct runner_result *r)
{
	memset(r, 0, sizeof *r);
	/* A mutant run's list of checks (and a sweep's order) is make test's
	 * and scripts/mutate's, never a grade's. */
	unsetenv("HOTROW_LAB_CHECKS");
	unsetenv("HOTROW_LAB_ORDER");
	r->available = runner_engines_available();
	char bin[PATH_MAX];
	int b = build_private(t, l, o, r, bin, sizeof bin);
	if (b > 0 && !r->interrupted && !r->cancelled && load_expected(t, l, r, o->part) == 0) {
		/* Not built: every check fails, so the maximum stays what it is. */
		struct run run;
		run_init(&run, r, 0);
		char refused[700];
		snprintf(refused, sizeof refused, "not run: %s", r->refused ? r->refused : "");
		for (size_t i = 0; i < r->n; i++) {
			if (r->checks[i].engines & ~r->available)
				continue;   /* not run for want of its engine: finish skips it */
			str_line(&r->checks[i].details, r->refused ? refused :
					 r->build_timed_out ? "not run: the build timed out" :
					 "not run: the code does not compile");
			r->checks[i].state = 2;
			r->checks[i].verdict = RUNNER_FAILED;
		}
		finish(&run, "");
	}
	if (b != 0)
		return b < 0 ? -1 : 0;
	r->built = 1;
	if (load_expected(t, l, r, o->part) != 0) {
		free(r->stray);
		r->stray = strdup("cannot read the list of checks (build/labs/.../checks.i)");
		unlink(bin);
		return -1;
	}

	int rc = run_checks(t, o, r, bin, o->timeout_s, o->live, NULL, 0);
	if (rc == 0 && !o->no_races)
		race_pass(t, l, o, r);
	else if (rc == 0 && o->live && r->failed == 0 && r->passed > 0)
		printf("%sRaces: not checked (--no-races)%s\n", runner_c_dim(), runner_c_off());
	return rc;
}

void runner_result_free(struct runner_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->checks[i].said);
		free(r->checks[i].details);
		free(r->checks[i].output);
	}
	free(r->checks);
	free(r->build_log);
	free(r->notices);
	free(r->stray);
	free(r->refused);
	free(r->dropped);
	memset(r, 0, sizeof *r);
}
