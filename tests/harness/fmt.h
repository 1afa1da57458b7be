/*
 * fmt.h: hold a thread inside the formatting call that writes a chosen
 * text, so a check can see whether another thread's calls change what
 * the first one formatted.
 *
 * A lab's test binary is linked with -Wl,--wrap for snprintf, sprintf,
 * vsnprintf and vsprintf (LABTEST_WRAP in labs/module.mk): every such
 * call made by code linked into the binary (the student's, the
 * harness's, the kit's) goes through fmt.c, which formats as the C
 * library does. When a hold is armed, the first call whose result is
 * exactly the armed text waits there, after writing it, until
 * lt_fmt_release(). A buffer the code under test shares between threads
 * (a static one, a static ring of them) is then written by the other
 * thread's calls while the first one has not yet used what it wrote.
 *
 * Interface:
 *   lt_fmt_hold_on("777777");            // then, in thread A: a call that formats 777777
 *   if (lt_fmt_held(5000)) {             // A is inside that snprintf now
 *       ...thread B's calls run whole...
 *   }
 *   lt_fmt_release();                    // lets A go on (or disarms)
 * Calls in shared libraries (libpq, libsqlite3, the MariaDB client) are
 * not seen.
 */
#ifndef HOTROW_TESTS_FMT_H
#define HOTROW_TESTS_FMT_H

#include <stdbool.h>

void lt_fmt_hold_on(const char *text);
bool lt_fmt_held(int ms);
void lt_fmt_release(void);

#endif
