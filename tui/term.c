/*
 * term.c: ncurses start and stop, signal flags, the fatal path.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <ncurses.h>

#include "engine/xmalloc.h"
#include "tui/screen.h"
#include "tui/term.h"

static bool active;
static bool registered;
static SCREEN *term;
static volatile sig_atomic_t quit_flag;

static void on_signal(int sig)
{
	(void)sig;
	quit_flag = 1;
}

/* A crash (a failed assertion, a bad pointer) must not leave the terminal
 * in raw mode: put it back, then die of the same signal. endwin is not
 * async-signal-safe, but the process is going down anyway; htop does the
 * same. */
static void on_crash(int sig)
{
	if (active) {
		active = false;
		endwin();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void at_exit(void)
{
	tui_term_stop();
}

int tui_term_start(bool colour)
{
	if (active)
		return 0;
	if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
		return -1;
	term = newterm(NULL, stdout, stdin);
	if (!term)
		return -1;
	set_term(term);
	active = true;
	if (!registered) {
		struct sigaction sa = {0};
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
		sa.sa_handler = on_crash;
		sa.sa_flags = SA_RESETHAND;
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGFPE, &sa, NULL);
		sigaction(SIGABRT, &sa, NULL);
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
	if (!active)
		return;
	active = false;
	curs_set(1);
	endwin();
	fflush(stdout);
}

bool tui_term_active(void)
{
	return active;
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
	return quit_flag != 0;
}

_Noreturn void tui_fatal(const char *msg)
{
	tui_term_stop();
	fprintf(stderr, "hotrow: %s\n", msg);
	abort();
}
