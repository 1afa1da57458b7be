/*
 * unseen.h: bookkeeping kept out of ThreadSanitizer's view.
 *
 * The race pass of `hotrow lab check` (runner/check.h) runs checks in a
 * SAN=thread build, where every lock taken and every atomic read-modify-
 * write orders the threads that touch it. Two pieces of bookkeeping that
 * every statement or allocation passes through would order the student's
 * threads at each of them, and hide a race between two statements: the
 * harness's allocation table (tests/harness/alloc.c), one lock and a few
 * counters that every allocation passes through, the kit's too; and the
 * kit's failpoint table (kit/failpoint.c), one lock that every statement
 * passes through while a check has a failpoint armed. Between
 * UTIL_UNSEEN_BEGIN() and UTIL_UNSEEN_END() the calling thread's
 * synchronisation and memory accesses are not recorded (the dynamic
 * annotations ThreadSanitizer implements). Outside SAN=thread both are
 * nothing.
 */
#ifndef HOTROW_UTIL_UNSEEN_H
#define HOTROW_UTIL_UNSEEN_H

#if defined(__SANITIZE_THREAD__)
#define UTIL_UNSEEN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UTIL_UNSEEN_TSAN 1
#endif
#endif

#ifdef UTIL_UNSEEN_TSAN
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define UTIL_UNSEEN_BEGIN()                                    \
	do {                                                   \
		AnnotateIgnoreSyncBegin(__FILE__, __LINE__);   \
		AnnotateIgnoreReadsBegin(__FILE__, __LINE__);  \
		AnnotateIgnoreWritesBegin(__FILE__, __LINE__); \
	} while (0)
#define UTIL_UNSEEN_END()                                      \
	do {                                                   \
		AnnotateIgnoreWritesEnd(__FILE__, __LINE__);   \
		AnnotateIgnoreReadsEnd(__FILE__, __LINE__);    \
		AnnotateIgnoreSyncEnd(__FILE__, __LINE__);     \
	} while (0)
#else
#define UTIL_UNSEEN_BEGIN() ((void)0)
#define UTIL_UNSEEN_END() ((void)0)
#endif

#endif
