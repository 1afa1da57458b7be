/*
 * unseen.h: the harness's own bookkeeping, kept out of ThreadSanitizer's
 * view.
 *
 * The race pass of `hotrow lab check` (runner/check.h) runs checks in a
 * SAN=thread build, where every lock taken and every atomic read-modify-
 * write orders the threads that touch it. The harness's allocation
 * table is one lock and a few counters that every allocation passes
 * through, the kit's too: left in view, they would order the student's
 * threads at every statement, and hide a race between two statements.
 * Between LT_UNSEEN_BEGIN() and LT_UNSEEN_END() the calling thread's
 * synchronisation and memory accesses are not recorded (the dynamic
 * annotations ThreadSanitizer implements). The allocator's own calls
 * stay outside: it records each new block as fresh memory. Outside
 * SAN=thread both are nothing.
 */
#ifndef HOTROW_TESTS_UNSEEN_H
#define HOTROW_TESTS_UNSEEN_H

#if defined(__SANITIZE_THREAD__)
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define LT_UNSEEN_BEGIN()                                 \
	do {                                              \
		AnnotateIgnoreSyncBegin(__FILE__, __LINE__);   \
		AnnotateIgnoreReadsBegin(__FILE__, __LINE__);  \
		AnnotateIgnoreWritesBegin(__FILE__, __LINE__); \
	} while (0)
#define LT_UNSEEN_END()                                   \
	do {                                              \
		AnnotateIgnoreWritesEnd(__FILE__, __LINE__);   \
		AnnotateIgnoreReadsEnd(__FILE__, __LINE__);    \
		AnnotateIgnoreSyncEnd(__FILE__, __LINE__);     \
	} while (0)
#else
#define LT_UNSEEN_BEGIN() ((void)0)
#define LT_UNSEEN_END() ((void)0)
#endif

#endif
