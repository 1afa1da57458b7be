/*
 * hold.c: one thread stopped at a chosen point (hold.h).
 */
#include "tests/harness/hold.h"

#include "tests/harness/deadline.h"

void lt_hold_arm(struct lt_hold *h)
{
	pthread_mutex_lock(&h->m);
	h->released = false;
	atomic_store(&h->armed, true);
	pthread_mutex_unlock(&h->m);
}

bool lt_hold_armed(struct lt_hold *h)
{
	return atomic_load(&h->armed);
}

bool lt_hold_here(struct lt_hold *h, bool (*match)(const void *arg), const void *arg)
{
	if (!atomic_load(&h->armed))
		return false;
	pthread_mutex_lock(&h->m);
	/* another thread may have taken it, or the check disarmed it */
	if (!atomic_load(&h->armed) || (match && !match(arg))) {
		pthread_mutex_unlock(&h->m);
		return false;
	}
	atomic_store(&h->armed, false);
	h->holding = true;
	pthread_cond_broadcast(&h->cv);
	while (!h->released)
		pthread_cond_wait(&h->cv, &h->m);
	h->holding = false;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->m);
	return true;
}

bool lt_hold_held(struct lt_hold *h, int ms)
{
	struct timespec until = lt_deadline_ms(ms);
	pthread_mutex_lock(&h->m);
	while (!h->holding && pthread_cond_timedwait(&h->cv, &h->m, &until) == 0)
		;
	bool held = h->holding;
	pthread_mutex_unlock(&h->m);
	return held;
}

void lt_hold_release(struct lt_hold *h)
{
	pthread_mutex_lock(&h->m);
	atomic_store(&h->armed, false);
	h->released = true;
	pthread_cond_broadcast(&h->cv);
	while (h->holding)
		pthread_cond_wait(&h->cv, &h->m);
	pthread_mutex_unlock(&h->m);
}
