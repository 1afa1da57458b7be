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
 *
 * The wrapper also keeps track of every thread it started (pthread_join
 * and pthread_detach are wrapped too) until it is reaped: joined, or
 * detached and returned from its start function (or pthread_exit). A
 * check takes lt_thread_unreaped() before a call that starts threads and
 * after the call that should end them (stop_flusher): a thread neither
 * joined nor detached-and-finished by then is still running, or will be
 * a zombie for the life of the process, whatever the timing.
 *   int before = lt_thread_unreaped();
 *   start_flusher(&f, st, db, 100, 500);
 *   stop_flusher(f);
 *   ...lt_thread_settle(1000) == before...   // every thread it started is gone
 */
#ifndef HOTROW_TESTS_THREADS_H
#define HOTROW_TESTS_THREADS_H

#include <stdbool.h>

/* pthread_create calls made through the wrapper since the process
 * started, refused ones included: the difference around a call is how
 * many threads it tried to start. */
long lt_thread_starts(void);

/* Those and the kit's own (a load's threads) together: whether a check
 * ran code in more than one thread, which `lab check` runs again under
 * ThreadSanitizer (runner/check.h). */
long lt_thread_starts_all(void);

/* In a thread started through the wrapper, its start's number (what
 * lt_thread_starts() said just before its pthread_create); -1 in any
 * other thread. */
long lt_thread_start_no(void);

/* Refuse the k-th pthread_create (k >= 1) from now, once, with EAGAIN. */
void lt_thread_arm(int k);

/* Disarm; true when the armed start was reached (it was refused), false
 * when fewer than k were made. */
bool lt_thread_disarm(void);

/* Threads started through the wrapper and not reaped yet (neither joined
 * nor detached-and-finished), and those of them still in their start
 * function. A start beyond the table (256 at once) counts as both. */
int lt_thread_unreaped(void);
int lt_thread_running(void);

/* Wait up to ms milliseconds for every detached thread to return (one
 * that was told to stop may still be on its way out), then return
 * lt_thread_unreaped(). A joinable thread nobody joins is never waited
 * for: it stays unreaped. */
int lt_thread_settle(int ms);
/* Whether a pthread_join of the started thread whose start's number is no
 * (lt_thread_start_no in it) has begun: a check can tell a call that is
 * waiting for a thread to end from one that goes on beside it. */
bool lt_thread_join_begun(long no);
/* A head start for every thread started through the wrapper from now
 * (0: none, the default): pthread_create returns only once the new
 * thread has run for ms milliseconds (or ended), so that what it reads
 * first it reads before its creator's next line. Code that fills in what
 * a thread uses after pthread_create (the thread "will not need it
 * yet") works only when the creator happens to win that race; with a
 * head start the thread wins it every time:
 *   lt_thread_head_start(20);
 *   start_flusher(&f, st, db, 1000, 100);   // the thread has begun its first wait
 *   lt_thread_head_start(0); */
void lt_thread_head_start(int ms);
/* Whether the started thread whose start's number is no is still
 * unreaped (neither joined nor detached-and-finished). */
bool lt_thread_unreaped_no(long no);

#endif
