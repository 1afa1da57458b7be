/*
 * crashes.h: seeded crash schedules for Lab 05's consumers.
 *
 * A schedule (a plan) is made from one 64-bit seed: how many events, which
 * video each is for and which partition it lands in, and for each consumer
 * process in turn ("incarnation") its batch size and how it ends: killed
 * by SIGKILL at a named failpoint on its Nth pass, leaving the group
 * politely after N batches, or running to the end. crash_run() writes the
 * events to a fresh log, runs CRASH_CONSUMERS consumer processes (fork;
 * each opens its own database connection and log handle), restarts every
 * one that dies or leaves, waits until the group has consumed everything,
 * and compares every video's count and every partition's stored offset
 * with the truth.
 *
 * Interface:
 *   struct crash_plan pl;
 *   crash_plan_make(&pl, seed, 2000, 20, 300);
 *   if (crash_run(t, &pl, 0, why, sizeof why) != 0) printf("seed %llx: %s\n", ...);
 * The database must hold FENCE_SCHEMA and the CRASH_PARTITIONS progress
 * rows; crash_run resets them first. The same seed gives the same plan
 * and the same events; how the processes interleave is up to the kernel.
 */
#ifndef HOTROW_TEST_LAB05_CRASHES_H
#define HOTROW_TEST_LAB05_CRASHES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/harness/labtest.h"

#define CRASH_PARTITIONS 4
#define CRASH_CONSUMERS 3
#define CRASH_VIDEOS 16
#define CRASH_MAX_STEPS 12

enum crash_kind {
	CRASH_NONE,          /* run to the end */
	CRASH_BEFORE_TX,     /* killed with a batch read, before its transaction */
	CRASH_MID_BATCH,     /* killed half-way through reading a batch */
	CRASH_AFTER_UPSERT,  /* killed after the upsert, before the commit */
	CRASH_AFTER_COMMIT,  /* killed after the commit, before the log's offset commit */
	CRASH_AFTER_DB_COMMIT, /* killed the moment the database's COMMIT returns */
	CRASH_LEAVE,         /* leaves the group cleanly */
	CRASH_KINDS
};

struct crash_step {
	enum crash_kind kind;
	int nth;             /* on the nth pass of the failpoint (leave: after n batches) */
	int batch;           /* most events per batch for this incarnation */
};

struct crash_plan {
	uint64_t seed;
	int events;
	int bmin, bmax;
	int nsteps;          /* incarnations 0 .. nsteps-1 follow steps[]; later ones run to the end */
	struct crash_step steps[CRASH_MAX_STEPS];
};

void crash_plan_make(struct crash_plan *pl, uint64_t seed, int events, int bmin, int bmax);
void crash_plan_print(const struct crash_plan *pl, FILE *out);

/* The kth seed of the fixed list the suite runs. */
uint64_t crash_seed(int k);

/* What a run did, added up over runs. */
struct crash_stats {
	int started;         /* consumer processes */
	int killed;          /* ... killed at a failpoint */
	int left;            /* ... that left the group before the end */
};

/* Run plan pl against t's database. Returns 0 when every count and offset
 * is exact; otherwise -1 with the first difference (or what went wrong)
 * in why. verbose prints each consumer's start and end; stats (may be
 * NULL) is added to. */
int crash_run(struct labtest *t, const struct crash_plan *pl, int verbose,
              struct crash_stats *stats, char *why, size_t whylen);

#endif
