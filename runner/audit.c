/*
 * audit.c: the rules of audit.h, applied to a source file and to the ELF
 * object the compiler made of it.
 *
 * The object is read directly (ELF64, relocatable): its section headers
 * say whether anything runs before main (constructors) and its symbol
 * table says what it defines and what it refers to, however the source
 * spelled it (a macro, an alias, a #pragma). Only the system call
 * instructions are found through objdump's disassembly.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "runner/audit.h"
#include "runner/proc.h"

#define MAX_SOURCE (4u << 20)    /* bytes of one source file read */
#define MAX_OBJECT (64u << 20)   /* bytes of one object read */

/* ---- sets of names ---- */

struct names {
	char **v;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_add(struct names *s, const char *name, size_t len)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return;
		s->v = v;
		s->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return;
	memcpy(copy, name, len);
	copy[len] = '\0';
	s->v[s->n++] = copy;
}

static void names_sort(struct names *s)
{
	if (s->n)
		qsort(s->v, s->n, sizeof *s->v, cmp_str);
}

static int names_has(const struct names *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof *s->v, cmp_str) != NULL;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}

/* What an exercise may call besides its lab's and the kit's names: plain
 * libc and pthreads (and the names the compiler and glibc's headers turn
 * those calls into). Nothing here opens, writes or closes a descriptor,
 * starts, signals or ends a process, or changes the environment. */
static const char *const libc_ok[] = {
	/* memory and strings */
	"malloc", "calloc", "realloc", "reallocarray", "free", "aligned_alloc", "posix_memalign",
	"memcpy", "memmove", "memset", "memcmp", "memchr", "memrchr", "mempcpy",
	"strlen", "strnlen", "strcmp", "strncmp", "strcpy", "strncpy", "strcat", "strncat",
	"stpcpy", "stpncpy", "strchr", "strrchr", "strchrnul", "strstr", "strspn", "strcspn",
	"strpbrk", "strdup", "strndup", "__strdup", "__strndup", "strtok_r", "strcasecmp",
	"strncasecmp", "strerror", "strerror_r", "__xpg_strerror_r", "strsignal",
	"__memcpy_chk", "__memmove_chk", "__memset_chk", "__mempcpy_chk", "__strcpy_chk",
	"__strncpy_chk", "__strcat_chk", "__strncat_chk", "__stpcpy_chk", "__stpncpy_chk",
	"__explicit_bzero_chk", "explicit_bzero", "bzero", "strsep", "strlcpy", "strlcat", "memccpy",
	"strcoll", "qsort_r",
	/* formatting: into buffers, and onto stdout / stderr */
	"snprintf", "sprintf", "vsnprintf", "vsprintf", "asprintf", "vasprintf",
	"__snprintf_chk", "__sprintf_chk", "__vsnprintf_chk", "__vsprintf_chk", "__asprintf_chk",
	"printf", "vprintf", "fprintf", "vfprintf", "puts", "putchar", "fputs", "fputc", "putc",
	"fwrite", "fflush", "perror", "__printf_chk", "__vprintf_chk", "__fprintf_chk",
	"__vfprintf_chk", "stdout", "stderr",
	"sscanf", "vsscanf", "__isoc99_sscanf", "__isoc99_vsscanf", "__isoc23_sscanf",
	"__isoc23_vsscanf",
	/* numbers */
	"strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof", "strtold", "strtoimax",
	"strtoumax", "__isoc23_strtol", "__isoc23_strtoll", "__isoc23_strtoul", "__isoc23_strtoull",
	"__isoc23_strtoimax", "__isoc23_strtoumax", "atoi", "atol", "atoll", "atof",
	"abs", "labs", "llabs", "imaxabs", "div", "ldiv", "lldiv", "qsort", "bsearch",
	"__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc", "tolower", "toupper",
	"isalpha", "isdigit", "isalnum", "isspace", "isupper", "islower", "isxdigit", "isprint",
	/* <math.h>: every C99 function, in double, float and long double */
	"acos", "acosf", "acosl", "asin", "asinf", "asinl", "atan", "atanf", "atanl", "atan2", "atan2f",
	"atan2l", "cos", "cosf", "cosl", "sin", "sinf", "sinl", "tan", "tanf", "tanl", "acosh", "acoshf",
	"acoshl", "asinh", "asinhf", "asinhl", "atanh", "atanhf", "atanhl", "cosh", "coshf", "coshl",
	"sinh", "sinhf", "sinhl", "tanh", "tanhf", "tanhl", "exp", "expf", "expl", "exp2", "exp2f",
	"exp2l", "expm1", "expm1f", "expm1l", "frexp", "frexpf", "frexpl", "ilogb", "ilogbf", "ilogbl",
	"ldexp", "ldexpf", "ldexpl", "log", "logf", "logl", "log10", "log10f", "log10l", "log1p",
	"log1pf", "log1pl", "log2", "log2f", "log2l", "logb", "logbf", "logbl", "modf", "modff", "modfl",
	"scalbn", "scalbnf", "scalbnl", "scalbln", "scalblnf", "scalblnl", "cbrt", "cbrtf", "cbrtl",
	"fabs", "fabsf", "fabsl", "hypot", "hypotf", "hypotl", "pow", "powf", "powl", "sqrt", "sqrtf",
	"sqrtl", "erf", "erff", "erfl", "erfc", "erfcf", "erfcl", "lgamma", "lgammaf", "lgammal",
	"tgamma", "tgammaf", "tgammal", "ceil", "ceilf", "ceill", "floor", "floorf", "floorl",
	"nearbyint", "nearbyintf", "nearbyintl", "rint", "rintf", "rintl", "lrint", "lrintf", "lrintl",
	"llrint", "llrintf", "llrintl", "round", "roundf", "roundl", "lround", "lroundf", "lroundl",
	"llround", "llroundf", "llroundl", "trunc", "truncf", "truncl", "fmod", "fmodf", "fmodl",
	"remainder", "remainderf", "remainderl", "remquo", "remquof", "remquol", "copysign", "copysignf",
	"copysignl", "nan", "nanf", "nanl", "nextafter", "nextafterf", "nextafterl", "nexttoward",
	"nexttowardf", "nexttowardl", "fdim", "fdimf", "fdiml", "fmax", "fmaxf", "fmaxl", "fmin",
	"fminf", "fminl", "fma", "fmaf", "fmal", "__isnan", "__isnanf", "__isinf", "__isinff",
	"__finite", "__finitef", "__fpclassify", "__fpclassifyf", "__signbit", "__signbitf",
	/* randomness */
	"rand", "rand_r", "srand", "random", "srandom", "random_r", "srandom_r",
	"drand48_r", "srand48_r", "lrand48_r", "getrandom", "arc4random", "arc4random_uniform",
	"getpid", "gettid",
	/* time and sleeping */
	"time", "clock", "clock_gettime", "clock_getres", "gettimeofday", "nanosleep",
	"clock_nanosleep", "usleep", "sleep", "difftime", "localtime_r", "gmtime_r", "mktime",
	"timegm", "strftime", "sched_yield", "ctime_r", "asctime_r",
	"timespec_get",
	/* threads, locks, atomics */
	"pthread_create", "pthread_join", "pthread_detach", "pthread_self", "pthread_equal",
	"pthread_once", "pthread_exit", "pthread_attr_init", "pthread_attr_destroy",
	"pthread_attr_setstacksize", "pthread_attr_setdetachstate",
	"pthread_mutex_init", "pthread_mutex_destroy", "pthread_mutex_lock", "pthread_mutex_unlock",
	"pthread_mutex_trylock", "pthread_mutex_timedlock", "pthread_mutexattr_init",
	"pthread_mutexattr_destroy", "pthread_mutexattr_settype",
	"pthread_cond_init", "pthread_cond_destroy", "pthread_cond_wait", "pthread_cond_timedwait",
	"pthread_cond_signal", "pthread_cond_broadcast", "pthread_condattr_init",
	"pthread_condattr_destroy", "pthread_condattr_setclock", "pthread_cond_clockwait",
	"pthread_rwlock_init", "pthread_rwlock_destroy", "pthread_rwlock_rdlock",
	"pthread_rwlock_wrlock", "pthread_rwlock_unlock", "pthread_rwlock_tryrdlock",
	"pthread_rwlock_trywrlock", "pthread_spin_init", "pthread_spin_destroy", "pthread_spin_lock",
	"pthread_spin_unlock", "pthread_spin_trylock", "pthread_barrier_init",
	"pthread_barrier_destroy", "pthread_barrier_wait", "pthread_key_create", "pthread_key_delete",
	"pthread_getspecific", "pthread_setspecific",
	"sem_init", "sem_destroy", "sem_wait", "sem_trywait", "sem_timedwait", "sem_post",
	"sem_getvalue",
	"__atomic_load", "__atomic_store", "__atomic_exchange", "__atomic_compare_exchange",
	"__atomic_load_8", "__atomic_store_8", "__atomic_fetch_add_8", "__atomic_load_16",
	"__atomic_store_16", "__atomic_compare_exchange_16", "__atomic_fetch_add_16",
	/* what the compiler itself refers to */
	"__errno_location", "__assert_fail", "__stack_chk_fail", "__stack_chk_guard",
	"_GLOBAL_OFFSET_TABLE_", "__tls_get_addr", "__udivti3", "__divti3", "__umodti3", "__modti3",
	"__muloti4", "__popcountdi2", "__floatditf",
};

static struct names libc_names;

/* Names an exercise never refers to, with the rule each breaks. A name
 * ending in '*' is a prefix. */
static const struct deny {
	const char *name;
	const char *rule;
} denied[] = {
#define PROCESS "an exercise may not start, signal or end processes"
	{"fork", PROCESS}, {"vfork", PROCESS}, {"clone", PROCESS}, {"clone3", PROCESS},
	{"__clone", PROCESS}, {"posix_spawn*", PROCESS}, {"exec*", PROCESS}, {"fexecve", PROCESS},
	{"system", PROCESS}, {"popen", PROCESS}, {"daemon", PROCESS}, {"setsid", PROCESS},
	{"setpgid", PROCESS}, {"setpgrp", PROCESS}, {"kill", PROCESS}, {"killpg", PROCESS},
	{"tgkill", PROCESS}, {"tkill", PROCESS}, {"raise", PROCESS}, {"abort", PROCESS},
	{"ptrace", PROCESS}, {"prctl", PROCESS}, {"syscall", PROCESS}, {"exit", PROCESS},
	{"_exit", PROCESS}, {"_Exit", PROCESS}, {"quick_exit", PROCESS}, {"atexit", PROCESS},
	{"at_quick_exit", PROCESS}, {"on_exit", PROCESS}, {"__cxa_atexit", PROCESS},
	{"pthread_kill", PROCESS}, {"pthread_atfork", PROCESS},
#define SIGNALS "an exercise may not change how signals are handled"
	{"signal", SIGNALS}, {"sigaction", SIGNALS}, {"sigprocmask", SIGNALS},
	{"pthread_sigmask", SIGNALS}, {"sigignore", SIGNALS}, {"sigset", SIGNALS},
	{"bsd_signal", SIGNALS}, {"__sysv_signal", SIGNALS}, {"sigaltstack", SIGNALS},
#define DYNAMIC "an exercise may not look up or load code while it runs"
	{"dl*", DYNAMIC}, {"__libc_dl*", DYNAMIC},
#define FDS "an exercise may not open, write or close descriptors (print with printf)"
	{"write", FDS}, {"pwrite*", FDS}, {"writev", FDS}, {"read", FDS}, {"open*", FDS},
	{"creat*", FDS}, {"close", FDS}, {"dup", FDS}, {"dup2", FDS}, {"dup3", FDS},
	{"fdopen", FDS}, {"fopen*", FDS}, {"freopen*", FDS}, {"fileno", FDS}, {"dprintf", FDS},
	{"vdprintf", FDS}, {"__dprintf_chk", FDS}, {"__vdprintf_chk", FDS}, {"pipe*", FDS},
	{"socket*", FDS}, {"fcntl*", FDS}, {"ioctl", FDS}, {"mmap*", FDS}, {"mprotect", FDS},
	{"sendfile*", FDS}, {"splice", FDS}, {"__open*", FDS}, {"__write*", FDS},
	{"process_vm_*", FDS},
#define ENVIRON "an exercise may not read or change the environment"
	{"setenv", ENVIRON}, {"putenv", ENVIRON}, {"unsetenv", ENVIRON}, {"clearenv", ENVIRON},
	{"getenv", ENVIRON}, {"secure_getenv", ENVIRON}, {"environ", ENVIRON},
	{"__environ", ENVIRON},
#define SHARED "it keeps its state in one static buffer every thread shares (glibc marks it " \
	"MT-Unsafe): call its _r form (strtok_r, localtime_r, gmtime_r, rand_r)"
	{"strtok", SHARED}, {"localtime", SHARED},
	{"gmtime", SHARED}, {"drand48", SHARED}, {"erand48", SHARED}, {"lrand48", SHARED},
	{"nrand48", SHARED}, {"mrand48", SHARED}, {"jrand48", SHARED}, {"srand48", SHARED},
	{"seed48", SHARED}, {"lcong48", SHARED},
#define HARNESS "the checks' harness (cmocka, labtest) is not the exercise's to call"
	{"labtest_*", HARNESS}, {"lt_*", HARNESS}, {"_fail", HARNESS}, {"_skip", HARNESS},
	{"cmocka_*", HARNESS}, {"_cmocka_*", HARNESS}, {"mock_*", HARNESS}, {"_mock*", HARNESS},
	{"_assert_*", HARNESS}, {"_check_expected*", HARNESS}, {"_expect_*", HARNESS},
	{"_will_return", HARNESS}, {"_function_called", HARNESS}, {"_test_*", HARNESS},
	{"print_error", HARNESS}, {"print_message", HARNESS}, {"vprint_*", HARNESS},
	{"global_*", HARNESS}, {"_run_test*", HARNESS}, {"run_test*", HARNESS},
#define SWITCHES "the checks' switches (failpoints, hooks) are not the exercise's to turn"
	{"kit_fp_set", SWITCHES}, {"kit_fp_clear", SWITCHES}, {"kit_fp_parse", SWITCHES},
	{"kit_fp_count", SWITCHES}, {"kit_db_set_hook", SWITCHES}, {"kit_store_set_hook", SWITCHES},
	{"kit_store_lose_replies", SWITCHES}, {"kit_store_refuse", SWITCHES},
#define THREADS "an exercise starts threads with pthread_create, which the checks count and can refuse"
	{"__real_pthread_create", THREADS}, {"__wrap_pthread_create", THREADS},
	{"__pthread_create*", THREADS},
#define ALLOCATOR "an exercise allocates with malloc, calloc, realloc and free, which the checks count"
	{"__real_*", ALLOCATOR}, {"__wrap_*", ALLOCATOR}, {"__libc_malloc", ALLOCATOR},
	{"__libc_calloc", ALLOCATOR}, {"__libc_realloc", ALLOCATOR}, {"__libc_free", ALLOCATOR},
};

static const char *denied_rule(const char *name)
{
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++) {
		const char *d = denied[i].name;
		size_t k = strlen(d);
		if (d[k - 1] == '*' ? !strncmp(name, d, k - 1) : !strcmp(name, d))
			return denied[i].rule;
	}
	return NULL;
}

/* ---- reading files ---- */

/* The whole file (at most max bytes, NUL-terminated) into *len; NULL when
 * it cannot be read or is larger. The caller frees. */
static char *read_all(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 65536 + 1 > cap) {
			cap = cap ? 2 * cap : 65536 * 2;
			char *nb = cap <= 2 * (size_t)max + 131072 ? realloc(b, cap) : NULL;
			if (!nb) {
				free(b);
				fclose(f);
				return NULL;
			}
			b = nb;
		}
		size_t k = fread(b + n, 1, 65536, f);
		n += k;
		if (n > max) {
			free(b);
			fclose(f);
			return NULL;
		}
		if (k == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return NULL;
	}
	b[n] = '\0';
	*len = n;
	return b;
}

static void say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

/* C source with lines spliced (backslash-newline removed), comments
 * blanked and, when strings is set, string and character literals blanked
 * too (their quotes kept). Edits text in place. */
static void plain_source(char *text, int strings)
{
	char *w = text;
	for (const char *r = text; *r; r++) {
		if (r[0] == '\\' && r[1] == '\n') {
			r++;
			continue;
		}
		*w++ = *r;
	}
	*w = '\0';
	for (char *p = text; *p; p++) {
		if (p[0] == '/' && p[1] == '*') {
			char *end = strstr(p + 2, "*/");
			char *stop = end ? end + 2 : p + strlen(p);
			for (; p < stop; p++)
				if (*p != '\n')
					*p = ' ';
			p--;
		} else if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++)
				*p = ' ';
			p--;
		} else if (*p == '"' || *p == '\'') {
			char q = *p;
			for (p++; *p && *p != q && *p != '\n'; p++) {
				if (*p == '\\' && p[1] && p[1] != '\n') {
					if (strings)
						*p = ' ';
					p++;
				}
				if (strings)
					*p = ' ';
			}
			if (!*p)
				p--;
		}
	}
}

static int ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

/* Every identifier of a header into s. Returns 0, or -1 when unreadable. */
static int header_names(const char *path, struct names *s)
{
	size_t len;
	char *text = read_all(path, MAX_SOURCE, &len);
	if (!text)
		return -1;
	plain_source(text, 1);
	for (const char *p = text; *p; ) {
		if (ident_start(*p) && (p == text || !ident_char(p[-1]))) {
			const char *q = p;
			while (ident_char(*q))
				q++;
			names_add(s, p, (size_t)(q - p));
			p = q;
		} else {
			p++;
		}
	}
	free(text);
	return 0;
}

/* The identifiers of every header in dir (relative to the kit), into s.
 * With prefix, only those starting with it. */
static int dir_header_names(const struct runner_tree *t, const char *dir, struct names *s)
{
	char path[PATH_MAX];
	if (runner_path(t, path, sizeof path, "%s", dir) != 0)
		return -1;
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *e;
	int rc = 0;
	while ((e = readdir(d))) {
		size_t k = strlen(e->d_name);
		char file[PATH_MAX + 260];
		if (k < 3 || strcmp(e->d_name + k - 2, ".h") || e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof file, "%s/%s", path, e->d_name);
		if (header_names(file, s) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

/* ---- the source ---- */

/* An #include's path: allowed? (see audit.h) */
static const char *include_rule(const struct runner_tree *t, const struct runner_lab *l, const char *path,
                                int quoted, const char *src_dir)
{
	size_t k = strlen(path);
	if (strstr(path, "..") || path[0] == '/' || k < 3 || strcmp(path + k - 2, ".h"))
		return "an exercise includes headers only (no .c files, no paths out of the kit)";
	if (strstr(path, "cmocka"))
		return "the checks' harness (cmocka, labtest) is not the exercise's to include";
	char lab[PATH_MAX];
	snprintf(lab, sizeof lab, "labs/%s/", l->name);
	if (!strncmp(path, lab, strlen(lab)) || !strncmp(path, "kit/", 4))
		return NULL;
	if (quoted && !strchr(path, '/')) {   /* a file of the exercise's own */
		char own[PATH_MAX * 2];
		struct stat st;
		snprintf(own, sizeof own, "%s/%s", src_dir, path);
		if (stat(own, &st) == 0)
			return NULL;
	}
	/* <stdio.h>, <sys/types.h>: a system header, unless the kit has a
	 * directory of that name (tests/, runner/, solutions/, ...). */
	char first[PATH_MAX], dir[PATH_MAX * 2];
	struct stat st;
	snprintf(first, sizeof first, "%.*s", (int)strcspn(path, "/"), path);
	snprintf(dir, sizeof dir, "%s/%s", t->root, first);
	if (strchr(path, '/') && stat(dir, &st) == 0)
		return "an exercise includes only its lab's headers, the kit's and the system's";
	if (quoted)
		return "an exercise includes only its lab's headers, the kit's and the system's";
	return NULL;
}

static int audit_source(const struct runner_tree *t, const struct runner_lab *l, const char *src,
                        const char *shown, char *why, size_t n)
{
	size_t len;
	char *text = read_all(src, MAX_SOURCE, &len);
	if (!text) {
		say(why, n, "%s: cannot be read (or is larger than %u MB)", shown, MAX_SOURCE >> 20);
		return -1;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", src);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	int rc = 0, line = 1;
	/* The directives, with their literals (an #include's path) kept. */
	plain_source(text, 0);
	for (char *p = text; *p && rc == 0; line++) {
		char *eol = strchr(p, '\n');
		size_t ln = eol ? (size_t)(eol - p) : strlen(p);
		char *q = p + strspn(p, " \t");
		if (*q == '#') {
			q += 1 + strspn(q + 1, " \t");
			if (!strncmp(q, "include", 7) || !strncmp(q, "import", 6)) {
				q += strspn(q, "abcdefghijklmnopqrstuvwxyz_");
				q += strspn(q, " \t");
				char close = *q == '<' ? '>' : *q == '"' ? '"' : 0;
				char *end = close ? memchr(q + 1, close, ln - (size_t)(q + 1 - p)) : NULL;
				char path[PATH_MAX];
				const char *rule = "an #include names its header directly, not through a macro";
				if (end) {
					snprintf(path, sizeof path, "%.*s", (int)(end - q - 1), q + 1);
					rule = include_rule(t, l, path, close == '"', dir);
				}
				if (rule) {
					say(why, n, "%s:%d: #include %.*s: %s", shown, line,
					    end ? (int)(end - q + 1) : (int)(ln - (size_t)(q - p)), q, rule);
					rc = 1;
				}
			}
		}
		p = eol ? eol + 1 : p + ln;
	}
	/* asm anywhere in the code, outside literals. */
	plain_source(text, 1);
	line = 1;
	for (char *r = text; *r && rc == 0; r++) {
		if (*r == '\n')
			line++;
		if (!ident_start(*r) || (r > text && ident_char(r[-1])))
			continue;
		char *e = r;
		while (ident_char(*e))
			e++;
		size_t k = (size_t)(e - r);
		if ((k == 3 && !strncmp(r, "asm", 3)) || (k == 5 && !strncmp(r, "__asm", 5)) ||
		    (k == 7 && !strncmp(r, "__asm__", 7))) {
			say(why, n, "%s:%d: %.*s: an exercise is written in C only (no assembly)",
			    shown, line, (int)k, r);
			rc = 1;
		}
		r = e - 1;
	}
	free(text);
	return rc;
}

/* ---- the object ---- */

/* Sections a compiler makes of plain C; anything else was asked for. */
static int section_ok(const char *name)
{
	static const char *const ok[] = {
		".text", ".data", ".bss", ".rodata", ".tdata", ".tbss", ".data.rel.ro", ".data.rel",
		".debug_", ".eh_frame", ".gcc_except_table", ".note.GNU-stack", ".note.gnu.property",
	};
	static const char *const exact[] = {"", ".comment", ".symtab", ".strtab", ".shstrtab", ".group",
					    ".llvm_addrsig", ".sframe", ".rela.sframe"};
	for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
		if (!strcmp(name, exact[i]))
			return 1;
	if (!strncmp(name, ".rela", 5))
		name += 5;
	else if (!strncmp(name, ".rel", 4))
		name += 4;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		size_t k = strlen(ok[i]);
		if (!strncmp(name, ok[i], k) && (name[k] == '\0' || name[k] == '.' || ok[i][k - 1] == '_'))
			return 1;
	}
	return 0;
}

static int ctor_section(const char *name, unsigned type)
{
	static const char *const ctor[] = {".init_array", ".fini_array", ".preinit_array", ".ctors", ".dtors",
					   ".init", ".fini"};
	if (type == SHT_INIT_ARRAY || type == SHT_FINI_ARRAY || type == SHT_PREINIT_ARRAY)
		return 1;
	if (!strncmp(name, ".rela", 5))
		name += 5;
	for (size_t i = 0; i < sizeof ctor / sizeof ctor[0]; i++) {
		size_t k = strlen(ctor[i]);
		if (!strncmp(name, ctor[i], k) && (name[k] == '\0' || name[k] == '.'))
			return 1;
	}
	return 0;
}

/* A name an exercise may refer to? NULL when yes, else the rule. */
static const char *call_rule(const char *name, const struct names *api, const struct names *kit)
{
	const char *rule = denied_rule(name);
	if (rule)
		return rule;
	if (!strncmp(name, "kit_", 4) && strstr(name, "__"))
		return "the kit's internals (names with __) are not the exercise's to call";
	if (names_has(api, name) || names_has(&libc_names, name) ||
	    (!strncmp(name, "kit_", 4) && names_has(kit, name)))
		return NULL;
	return "not among what an exercise may call (its lab's header, kit/ and plain libc; "
	       "see runner/audit.c)";
}

static int audit_elf(const char *data, size_t len, const char *shown, const struct runner_lab *l,
                     const struct names *api, const struct names *kit, char *why, size_t n)
{
	const Elf64_Ehdr *eh = (const void *)data;
	if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_type != ET_REL || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
	    (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum) {
		say(why, n, "%s: its object is not one the kit's compiler makes (a 64-bit ELF object)", shown);
		return 1;
	}
	const Elf64_Shdr *sh = (const void *)(data + eh->e_shoff);
	const Elf64_Shdr *names_sh = &sh[eh->e_shstrndx];
	if (names_sh->sh_offset > len || names_sh->sh_size > len - names_sh->sh_offset) {
		say(why, n, "%s: its object's section names cannot be read", shown);
		return 1;
	}
	const char *secnames = data + names_sh->sh_offset;
	size_t secnames_len = names_sh->sh_size;
	const Elf64_Shdr *symtab = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= secnames_len || !memchr(secnames + sh[i].sh_name, '\0',
							     secnames_len - sh[i].sh_name)) {
			say(why, n, "%s: its object's section names cannot be read", shown);
			return 1;
		}
		const char *name = secnames + sh[i].sh_name;
		if (ctor_section(name, sh[i].sh_type)) {
			say(why, n, "%s: has a constructor or destructor (section %s): an exercise's code "
			    "runs only when a check calls it", shown, name);
			return 1;
		}
		if (!section_ok(name)) {
			say(why, n, "%s: has a section %s: an exercise's code and data go where the "
			    "compiler puts them (no section attributes)", shown, name);
			return 1;
		}
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
	}
	if (!symtab)
		return 0;
	if (symtab->sh_link >= eh->e_shnum || symtab->sh_offset > len ||
	    symtab->sh_size > len - symtab->sh_offset || sh[symtab->sh_link].sh_offset > len ||
	    sh[symtab->sh_link].sh_size > len - sh[symtab->sh_link].sh_offset) {
		say(why, n, "%s: its object's symbols cannot be read", shown);
		return 1;
	}
	const Elf64_Sym *sym = (const void *)(data + symtab->sh_offset);
	size_t nsym = symtab->sh_size / sizeof *sym;
	const char *str = data + sh[symtab->sh_link].sh_offset;
	size_t strlen_ = sh[symtab->sh_link].sh_size;
	for (size_t i = 1; i < nsym; i++) {
		if (sym[i].st_name >= strlen_ || !memchr(str + sym[i].st_name, '\0', strlen_ - sym[i].st_name)) {
			say(why, n, "%s: its object's symbols cannot be read", shown);
			return 1;
		}
		const char *name = str + sym[i].st_name;
		unsigned bind = ELF64_ST_BIND(sym[i].st_info), type = ELF64_ST_TYPE(sym[i].st_info);
		if (type == STT_SECTION || type == STT_FILE)
			continue;
		if (type == STT_GNU_IFUNC) {
			say(why, n, "%s: %s is an indirect function (ifunc): its resolver would run before "
			    "any check", shown, name);
			return 1;
		}
		if (bind == STB_GNU_UNIQUE || strchr(name, '@')) {
			say(why, n, "%s: %s is a unique or versioned symbol: an exercise's names are plain "
			    "C names", shown, name);
			return 1;
		}
		if (sym[i].st_shndx == SHN_UNDEF) {
			const char *rule = name[0] ? call_rule(name, api, kit) : NULL;
			if (rule) {
				say(why, n, "%s: refers to %s: %s", shown, name, rule);
				return 1;
			}
		} else if (bind != STB_LOCAL) {
			if (!names_has(api, name) || denied_rule(name)) {
				say(why, n, "%s: defines %s, which labs/%s/ does not declare: an exercise "
				    "defines only its lab's functions (make a helper static)", shown, name,
				    l->name);
				return 1;
			}
		}
	}
	return 0;
}

/* A system call instruction in the object's code (asm the source scan
 * could not see: a macro that pastes the keyword together)? */
static int audit_insns(const char *obj, const char *shown, char *why, size_t n)
{
	char *argv[] = {"objdump", "-d", "--no-show-raw-insn", (char *)obj, NULL};
	char *text = NULL;
	struct runner_exit e;
	runner_proc_collect(NULL, argv, 60, &text, &e);
	if (!e.started || !WIFEXITED(e.status) || WEXITSTATUS(e.status) != 0) {
		say(why, n, "%s: cannot be disassembled (is objdump, from binutils, installed?)", shown);
		free(text);
		return -1;
	}
	static const char *const calls[] = {"\tsyscall", "\tsysenter", "\tint    $0x80", "\tsvc\t", "\tsvc "};
	int rc = 0;
	for (size_t i = 0; text && i < sizeof calls / sizeof calls[0] && !rc; i++)
		if (strstr(text, calls[i])) {
			say(why, n, "%s: makes a system call itself (%s): an exercise calls the kit and "
			    "libc only", shown, calls[i] + 1);
			rc = 1;
		}
	free(text);
	return rc;
}

/* The names lab l's headers declare (api) and the kit's (kit). */
static int load_names(const struct runner_tree *t, const struct runner_lab *l, struct names *api,
                      struct names *kit, char *why, size_t n)
{
	if (!libc_names.n) {
		for (size_t i = 0; i < sizeof libc_ok / sizeof libc_ok[0]; i++)
			names_add(&libc_names, libc_ok[i], strlen(libc_ok[i]));
		names_sort(&libc_names);
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "labs/%s", l->name);
	if (dir_header_names(t, dir, api) != 0 || dir_header_names(t, "kit", kit) != 0) {
		say(why, n, "cannot read the headers of labs/%s/ or kit/", l->name);
		return -1;
	}
	names_sort(api);
	names_sort(kit);
	return 0;
}

static int audit_side(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                      int objects, char *why, size_t n);

int runner_audit_file(const struct runner_tree *t, const struct runner_lab *l, const char *src,
                      const char *obj, char *why, size_t n)
{
	struct names api = {0}, kit = {0};
	const char *shown = src ? src : obj;
	if (src && !strncmp(src, t->root, strlen(t->root)) && src[strlen(t->root)] == '/')
		shown = src + strlen(t->root) + 1;
	int rc = load_names(t, l, &api, &kit, why, n);
	if (rc == 0 && src)
		rc = audit_source(t, l, src, shown, why, n);
	if (rc == 0 && obj) {
		size_t len;
		char *data = read_all(obj, MAX_OBJECT, &len);
		if (!data) {
			say(why, n, "%s: its object %s cannot be read", shown, obj);
			rc = -1;
		} else {
			rc = audit_elf(data, len, shown, l, &api, &kit, why, n);
			free(data);
		}
	}
	if (rc == 0 && obj)
		rc = audit_insns(obj, shown, why, n);
	names_free(&api);
	names_free(&kit);
	return rc;
}

int runner_audit(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                 char *why, size_t n)
{
	return audit_side(t, l, side, 1, why, n);
}

int runner_audit_sources(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                         char *why, size_t n)
{
	return audit_side(t, l, side, 0, why, n);
}

static int audit_side(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                      int objects, char *why, size_t n)
{
	char dir[PATH_MAX];
	if (runner_path(t, dir, sizeof dir, "%s/%s", side, l->name) != 0)
		return -1;
	struct dirent **e;
	int k = scandir(dir, &e, NULL, alphasort);
	if (k < 0)
		return 0;   /* no files: nothing of the student's is linked */
	int rc = 0;
	for (int i = 0; i < k; i++) {
		const char *f = e[i]->d_name;
		size_t len = strlen(f);
		char src[PATH_MAX + 260], obj[PATH_MAX + 260];
		if (rc == 0 && f[0] != '.' && len > 2 && (!strcmp(f + len - 2, ".c") || !strcmp(f + len - 2, ".h"))) {
			snprintf(src, sizeof src, "%s/%s", dir, f);
			struct stat st;
			if (lstat(src, &st) != 0 || !S_ISREG(st.st_mode)) {
				say(why, n, "%s/%s/%s: is not a plain file (a link, a device, a pipe?): an "
				    "exercise's files are its own sources", side, l->name, f);
				rc = 1;
				free(e[i]);
				continue;
			}
			int is_c = objects && f[len - 1] == 'c';
			if (is_c)
				snprintf(obj, sizeof obj, "%s/build/obj/%s/%s/%.*s.o", t->root, side, l->name,
					 (int)len - 2, f);
			rc = runner_audit_file(t, l, src, is_c ? obj : NULL, why, n);
		}
		free(e[i]);
	}
	free(e);
	return rc;
}
