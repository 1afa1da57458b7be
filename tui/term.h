/*
 * term.h: owning the terminal, and giving it back whatever happens.
 *
 * tui_term_start puts the terminal in full-screen mode (cbreak, no echo,
 * keypad, hidden cursor, input that never blocks longer than asked) and
 * registers the ways back: an atexit handler; SIGINT/SIGTERM/SIGHUP
 * handlers that only set a flag for the main loop (a second one ends the
 * process at once); and for every other signal that ends a process
 * (SIGQUIT from Ctrl-\, SIGPIPE, SIGALRM, SIGUSR1/2, SIGXCPU, and the
 * crashes SIGSEGV, SIGBUS, SIGFPE, SIGABRT...) a handler that restores the
 * terminal with async-signal-safe calls only (the saved termios and the
 * terminal's reset strings, captured at start) and dies of the same
 * signal. tui_fatal restores the terminal before printing and aborting.
 * A terminal that cannot address the cursor (TERM=dumb) is refused. The
 * TUI allocates through the engine's xmalloc (engine/xmalloc.h); its
 * out-of-memory hook is set here to give the terminal back first.
 *
 * Interface:
 *   if (tui_term_start(colour) < 0) ...   no terminal: nothing changed
 *   while (!tui_term_quit_requested()) { ... tui_term_key(timeout_ms) ... }
 *   tui_term_stop();                      idempotent; also runs at exit
 *   tui_term_exit_signalled();            after cleaning up: SIGTERM/SIGHUP kill
 */
#ifndef HOTROW_TUI_TERM_H
#define HOTROW_TUI_TERM_H

#include <stdbool.h>
#include <stddef.h>

/* Take the terminal on stdin/stdout. colour false (NO_COLOR, --no-color)
 * keeps to bold, reverse and dim. Returns 0, or -1 when stdout is not a
 * terminal, $TERM cannot move the cursor (dumb), or ncurses cannot start
 * (the terminal is left as it was). Can be called again after
 * tui_term_stop. */
int tui_term_start(bool colour);
/* Give the terminal back (endwin, delscreen); safe to call twice or
 * without start. */
void tui_term_stop(void);
bool tui_term_active(void);

/* One key, waiting at most timeout_ms (0: just look); -1 when none.
 * KEY_RESIZE comes through as a key. */
int tui_term_key(int timeout_ms);
/* The terminal's size now. */
void tui_term_size(int *w, int *h);

/* True once SIGINT, SIGTERM or SIGHUP arrived. */
bool tui_term_quit_requested(void);
/* If SIGTERM or SIGHUP asked the screen to quit: give the terminal back,
 * flush stdio and die of that signal (so the caller sees a kill, not a
 * clean exit). Otherwise return. Call once the screen's work is done. */
void tui_term_exit_signalled(void);

/* Restore the terminal, print "hotrow: MSG" on stderr and abort. */
_Noreturn void tui_fatal(const char *msg);

#endif
