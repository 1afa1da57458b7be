/*
 * threads.h: count the threads the code under test starts, and refuse
 * the k-th start.
 *
 * A lab's test binary is linked with -Wl,--wrap=pthread_create
 * (LABTEST_WRAP in labs/module.mk): every pthread_create made by code
 * linked into the binary (the student's, the harness's) goes through
 * threads.c first. The kit's go straight to the C library, under another
 * name (its archive is linked with pthread_create renamed,
 * tests/harness/threads.syms): a lab's check refuses a thread the
 * student's code starts, not one the kit's load generator does. Threads
 * started inside shared libraries are not seen.
 *
 * Like the allocation failpoint (alloc.h), a check arms the failpoint
 * for the k-th start from now, makes the call, and disarms; the armed
 * pthread_create starts nothing and returns EAGAIN (as the C library
 * does when the system is out of threads), once.
 *
 * Interface:
 *   size_t blocks = lt_alloc_live();
 *   lt_thread_arm(1);
 *   int rc = start_flusher(&f, st, db, 100, 500);
 *   if (!lt_thread_disarm())
 *       ...                              // the call started no thread
 *   ...rc < 0, f == NULL, lt_alloc_live() == blocks, a later start works...
 * Arm just before the call and disarm just after; start nothing else in
 * between.
 */
#ifndef HOTROW_TESTS_THREADS_H
#define HOTROW_TESTS_THREADS_H

#include <stdbool.h>

/* pthread_create calls made through the wrapper since the process
 * started, refused ones included: the difference around a call is how
 * many threads it tried to start. */
long lt_thread_starts(void);

/* Refuse the k-th pthread_create (k >= 1) from now, once, with EAGAIN. */
void lt_thread_arm(int k);

/* Disarm; true when the armed start was reached (it was refused), false
 * when fewer than k were made. */
bool lt_thread_disarm(void);

#endif
