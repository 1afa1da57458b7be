/*
 * log.h: a durable partitioned log with consumer groups, Kafka-style.
 *
 * A log is a directory holding one append-only file per partition. Each
 * record gets the next offset of its partition (0, 1, 2, ...). A record on
 * disk is a 4-byte length, a 4-byte checksum and the payload; a record cut
 * short by a crash (a torn tail) fails its checksum, is never shown to a
 * reader and is cut off by the next append. Several processes may append
 * and read at once: appends take an exclusive file lock on the partition.
 *
 * A consumer group is a name. The log keeps, per group and partition, the
 * committed offset: the next offset the group said it would read. It is a
 * hint, written after the work it describes, so after a crash it can lag:
 * whoever needs exactly-once keeps its own position next to its results.
 *
 * Consumers join a group under a member name and share its partitions:
 * the live members, sorted by name, take partition p when p % members is
 * their rank. Each consumer holds a file lock on its membership for as long
 * as it lives, so a crashed consumer (even one killed by SIGKILL) leaves
 * the group the moment its process dies. With a session timeout
 * (kit_log_set_session_timeout), a member must also poll within it: one
 * that stays silent longer (stopped, swapping, stuck) is out of the group
 * while still alive, as in Kafka. A partition is owned through a lease
 * with a generation number that grows at every change of owner; a new
 * owner takes it once the old one let go, died, or fell silent. The old
 * one, if it wakes up, may still hand the batch it had read to its handler
 * (a zombie: the handler's fence must refuse it); it then finds its lease
 * gone, does not commit the hint, and drops the partition at its next
 * poll. kit_log_poll() rebalances: it revokes the partitions this member
 * should give up or lost (calling revoked()), takes the ones it should own,
 * sets their position to the committed hint and calls assigned(), which
 * may seek elsewhere.
 *
 * Interface:
 *   struct kit_log *log;
 *   if (kit_log_open(&log, "/tmp/views", 4) != 0) { puts(kit_log_errmsg(log)); ... }
 *   kit_log_append(log, 2, &(struct kit_log_iov){ &ev, sizeof ev }, 1, &off);
 *
 *   struct kit_log_consumer *c;
 *   struct kit_log_callbacks cb = { .assigned = on_assign, .arg = db };
 *   kit_log_join(&c, log, "counters", "worker-1", &cb);
 *   while (running)
 *       kit_log_poll(c, 1000, apply_batch, db);   // commits the hint after each batch
 *   kit_log_leave(c);
 *   kit_log_close(log);
 *
 * Every call returns 0 (or a count) on success and a negative KIT_LOG_*
 * code on failure; kit_log_errmsg(log) then says what failed and why. A
 * handle and its consumers are used by one thread at a time; processes
 * each open their own handle (never share one across fork()).
 *
 * Failpoints (kit/failpoint.h) in kit_log_poll, for crash tests:
 *   "log-mid-batch"       half of the batch has been read, none handled
 *   "log-before-handler"  the batch is read, the handler not yet called
 *   "log-before-commit"   the handler succeeded, the hint is not yet written
 */
#ifndef HOTROW_KIT_LOG_H
#define HOTROW_KIT_LOG_H

#include <stdint.h>

enum {
	KIT_LOG_OK = 0,
	KIT_LOG_ERR = -1,       /* a system call failed; errmsg has errno's text */
	KIT_LOG_INVAL = -2,     /* a bad argument: partition, length, name */
	KIT_LOG_BUSY = -3,      /* the member name is taken by a live consumer */
	KIT_LOG_RANGE = -4,     /* an offset past the end of the partition */
};

#define KIT_LOG_MAX_PARTITIONS 64
#define KIT_LOG_MAX_RECORD (1u << 20)   /* largest payload, in bytes */

struct kit_log;
struct kit_log_consumer;

/* One record to append: a payload and its length. */
struct kit_log_iov {
	const void *data;
	uint32_t len;
};

/* One record read back: valid only during the callback that receives it. */
struct kit_log_record {
	int64_t offset;
	uint32_t len;
	const void *data;
};

/* Open the log in dir with npartitions partitions, creating the directory
 * and its files when missing. A log keeps the partition count it was made
 * with: opening it with another count fails with KIT_LOG_INVAL. *out is
 * always set (to a handle carrying the message on failure) and must be
 * given to kit_log_close(). */
int kit_log_open(struct kit_log **out, const char *dir, int npartitions);
void kit_log_close(struct kit_log *log);          /* NULL is fine */
const char *kit_log_errmsg(const struct kit_log *log);
int kit_log_partitions(const struct kit_log *log);

/* Append n records to partition part as one write, under the partition's
 * lock; *first (may be NULL) gets the offset of the first. A torn tail
 * left by a crashed writer is cut off first. Not synced: see kit_log_sync.
 * On failure nothing was appended that a reader can see. */
int kit_log_append(struct kit_log *log, int part, const struct kit_log_iov *recs,
                   int n, int64_t *first);

/* Force partition part (or, with part = -1, every partition) to disk. */
int kit_log_sync(struct kit_log *log, int part);

/* The offset the next append to part will get (records written by any
 * process so far, torn tail excluded). */
int kit_log_end(struct kit_log *log, int part, int64_t *end);

/* Call fn(arg, record) for up to max records of part from offset from on,
 * in order. Returns the number of records passed (0 at the end), a nonzero
 * value returned by fn (which stops the walk), or a negative code;
 * KIT_LOG_RANGE when from is past the end. */
typedef int kit_log_record_fn(void *arg, const struct kit_log_record *rec);
int kit_log_read(struct kit_log *log, int part, int64_t from, int max,
                 kit_log_record_fn *fn, void *arg);

/* The group's committed offset (hint) for part: *next = the next offset to
 * read, 0 when the group never committed. commit replaces it atomically
 * (write, then rename), so a crash leaves the old or the new value. */
int kit_log_committed(struct kit_log *log, const char *group, int part, int64_t *next);
int kit_log_commit(struct kit_log *log, const char *group, int part, int64_t next);

/* Consumer groups. assigned(arg, c, part) runs when this consumer takes
 * part, after its position was set to the committed hint; revoked runs
 * before it lets part go. Either may be NULL. A negative return from a
 * callback makes kit_log_rebalance() and kit_log_poll() return it; a
 * partition whose assigned() failed is let go again (and taken afresh, with
 * another assigned() call, on a later rebalance), so nothing is ever read
 * from a position the callback did not approve. A revoked() failure is
 * reported, and the partition is let go anyway. */
typedef int kit_log_rebalance_fn(void *arg, struct kit_log_consumer *c, int part);
struct kit_log_callbacks {
	kit_log_rebalance_fn *assigned;
	kit_log_rebalance_fn *revoked;
	void *arg;
};

/* Join group under member (letters, digits, '-', '_', '.'; up to 63
 * bytes). Owns no partition until the first kit_log_poll(). KIT_LOG_BUSY
 * when a live consumer already uses that member name. The consumer keeps a
 * pointer to log (which must outlive it); cb is copied. */
int kit_log_join(struct kit_log_consumer **out, struct kit_log *log, const char *group,
                 const char *member, const struct kit_log_callbacks *cb);

/* Leave the group: revoke every owned partition (revoked() is called),
 * drop the membership and free c. NULL is fine. */
void kit_log_leave(struct kit_log_consumer *c);

/* The session timeout, in ms: this consumer treats a member whose last
 * poll is older than that as gone (0, the default: only a dead process is
 * gone). Every member of a group should use the same value. */
int kit_log_set_session_timeout(struct kit_log_consumer *c, int ms);
/* The generation of c's lease on part (KIT_LOG_INVAL when not owned):
 * 1 for the partition's first owner, one more at every change of owner. */
int kit_log_generation(const struct kit_log_consumer *c, int part, int64_t *epoch);

/* Bring the assignment up to date with the live members (see above).
 * kit_log_poll() calls it; call it alone to react without reading. */
int kit_log_rebalance(struct kit_log_consumer *c);

/* Where the consumer reads part next; KIT_LOG_INVAL when it does not own
 * part. seek moves it (an offset past the end is allowed: the consumer
 * then waits for it). */
int kit_log_seek(struct kit_log_consumer *c, int part, int64_t next);
int kit_log_position(const struct kit_log_consumer *c, int part, int64_t *next);
int kit_log_owns(const struct kit_log_consumer *c, int part);   /* 1 or 0 */
struct kit_log *kit_log_of(const struct kit_log_consumer *c);
const char *kit_log_group(const struct kit_log_consumer *c);

/* One step of a consumer: rebalance, pick the next owned partition with
 * records past its position (round robin), read up to max of them and call
 * fn(arg, part, recs, n) once with the whole batch. When fn returns 0 the
 * position moves past the batch and the hint is committed (the hint of a
 * partition whose position was moved by a seek is committed too, even
 * when there is nothing to read: it follows the position); a negative
 * return leaves both where they were and is returned. Returns the number of
 * records handled (0: nothing to read) or a negative code. */
typedef int kit_log_batch_fn(void *arg, int part, const struct kit_log_record *recs, int n);
int kit_log_poll(struct kit_log_consumer *c, int max, kit_log_batch_fn *fn, void *arg);

/* Remove a log directory made by kit_log_open and everything in it. */
int kit_log_remove(const char *dir);

#endif
