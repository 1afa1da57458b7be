/*
 * term.c: ncurses start and stop, signal flags, the fatal path.
 *
 * Two ways back to the shell's terminal. The normal one is endwin (and
 * delscreen, so that `slides`' x, which stops and starts the screen around
 * every command, does not leak a SCREEN each time). The other runs inside a
 * signal handler, where ncurses may not be called: at start-up we save the
 * shell's termios and the terminal's own reset strings (sgr0, cnorm, rmkx,
 * rmcup), and the handler only calls tcsetattr and write, both
 * async-signal-safe, then dies of the same signal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <ncurses.h>
#include <term.h>

#include "engine/xmalloc.h"
#include "tui/screen.h"
#include "tui/term.h"

static volatile sig_atomic_t active;    /* the screen is ours */
static bool registered;
static SCREEN *term;
static volatile sig_atomic_t quit_sig;  /* the signal that asked to quit, 0 if none */

/* For the signal path: filled before the screen is taken. */
static struct termios saved_tio;
static bool saved_tio_ok;
static char reset_seq[256];
static size_t reset_len;

/* Signals that end the process: restore the terminal, then let each do
 * what it does by default (terminate, or dump core). */
static const int fatal_signals[] = {
	SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGPIPE,
	SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS,
};

/* Only async-signal-safe calls: write and tcsetattr. */
static void restore_raw(void)
{
	if (!active)
		return;
	active = 0;
	if (reset_len) {
		ssize_t r = write(STDOUT_FILENO, reset_seq, reset_len);
		(void)r;
	}
	if (saved_tio_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void die_of(int sig)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

static void on_fatal(int sig)
{
	restore_raw();
	die_of(sig);
}

/* SIGINT, SIGTERM, SIGHUP: ask the main loop to quit. A second one while
 * it has not yet (a long computation between frames) ends it at once. */
static void on_quit(int sig)
{
	if (quit_sig) {
		restore_raw();
		die_of(sig);
		return;
	}
	quit_sig = sig;
}

static void at_exit(void)
{
	tui_term_stop();
}

/* Append terminfo capability cap to the reset sequence, if it has one. */
static void add_reset(const char *cap)
{
	const char *s = tigetstr(cap);
	size_t n;

	if (!s || s == (char *)-1)
		return;
	n = strlen(s);
	if (reset_len + n < sizeof reset_seq) {
		memcpy(reset_seq + reset_len, s, n);
		reset_len += n;
	}
}

/* Whether $TERM can address the cursor: "dumb" and the like cannot, and
 * ncurses would show a blank screen that never changes. */
static bool can_draw(void)
{
	int err = 0;
	const char *cup;
	bool ok;

	if (setupterm(NULL, STDOUT_FILENO, &err) != OK)
		return false;
	cup = tigetstr("cup");
	ok = cup && cup != (char *)-1;
	del_curterm(cur_term);
	return ok;
}

int tui_term_start(bool colour)
{
	if (active)
		return 0;
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO) || !can_draw())
		return -1;
	saved_tio_ok = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	term = newterm(NULL, stdout, stdin);
	if (!term)
		return -1;
	set_term(term);
	reset_len = 0;
	add_reset("sgr0");
	add_reset("cnorm");
	add_reset("rmkx");
	add_reset("rmcup");
	active = 1;
	if (!registered) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_quit;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = on_fatal;
		for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
			struct sigaction old;
			/* A signal the shell set to be ignored stays ignored. */
			if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
				continue;
			sigaction(fatal_signals[i], &sa, NULL);
		}
		atexit(at_exit);
		sim_set_oom_hook(tui_term_stop);
		registered = true;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	tui_screen_colors(colour);
	return 0;
}

void tui_term_stop(void)
{
	if (!active || !term)
		return;
	curs_set(1);
	endwin();
	active = 0;
	fflush(stdout);
	delscreen(term);
	term = NULL;
}

bool tui_term_active(void)
{
	return active != 0;
}

int tui_term_key(int timeout_ms)
{
	timeout(timeout_ms < 0 ? 0 : timeout_ms);
	int k = getch();
	return k == ERR ? -1 : k;
}

void tui_term_size(int *w, int *h)
{
	*w = COLS;
	*h = LINES;
}

bool tui_term_quit_requested(void)
{
	return quit_sig != 0;
}

void tui_term_exit_signalled(void)
{
	int sig = quit_sig;

	if (sig != SIGTERM && sig != SIGHUP)
		return;
	tui_term_stop();
	fflush(NULL);
	die_of(sig);
}

_Noreturn void tui_fatal(const char *msg)
{
	tui_term_stop();
	fprintf(stderr, "hotrow: %s\n", msg);
	abort();
}
