/*
 * hold.h: one thread stopped at a chosen point until the check lets it go.
 *
 * The harness's holds share it: alloc.c's (the next allocation of the
 * code under test) and fmt.c's (the formatting call that writes a chosen
 * text). A check arms the hold; the first thread to pass the point while
 * it is armed (and, where the point says, the one it was armed for) takes
 * it and waits there; the check waits until a thread is held, does what
 * it must while that one stands still, and releases it.
 *
 * Interface:
 *   static struct lt_hold h = LT_HOLD_INIT;
 *   lt_hold_arm(&h);                      // the check
 *   lt_hold_here(&h, NULL, NULL);         // at the point, in the code's thread
 *   if (lt_hold_held(&h, 5000)) ...       // the check: a thread is held now
 *   lt_hold_release(&h);                  // lets it go (or disarms)
 */
#ifndef HOTROW_TESTS_HOLD_H
#define HOTROW_TESTS_HOLD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct lt_hold {
	pthread_mutex_t m;
	pthread_cond_t cv;
	atomic_bool armed;               /* the next pass that matches takes it */
	bool holding, released;          /* guarded by m */
};

#define LT_HOLD_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, false }

/* Arm h: the next lt_hold_here() that matches waits there. */
void lt_hold_arm(struct lt_hold *h);

/* Whether h is armed and no thread has taken it yet (no lock: a hint). */
bool lt_hold_armed(struct lt_hold *h);

/* The point: when h is armed and match(arg) (asked under h's lock; NULL
 * matches every pass) says this is the pass, disarm h and wait until
 * lt_hold_release(). Returns whether it held. */
bool lt_hold_here(struct lt_hold *h, bool (*match)(const void *arg), const void *arg);

/* Wait up to ms for a thread to be held at h's point; true once one is. */
bool lt_hold_held(struct lt_hold *h, int ms);

/* Disarm h and let a held thread go; returns once it has left the point. */
void lt_hold_release(struct lt_hold *h);

#endif
