/*
 * hot_row.h: Lab 01, one like counter on one row.
 *
 * A post's likes are counted in posts.likes; who liked what is kept in
 * likes, one row per (post, user), so nobody likes a post twice.
 *
 *   posts(id, likes)              primary key id
 *   likes(post_id, user_id)       primary key (post_id, user_id)
 *
 * Interface:
 *   kit_db_exec(db, HOT_ROW_SCHEMA, 0, NULL);       once per database
 *   kit_db_exec(db, "INSERT INTO posts (id) VALUES (1)", 0, NULL);
 *   struct hot_row_app app = { spam_check, &filter };   or NULL: no check
 *   int rc = like_post(db, 1, user, &app);
 *   if (rc == HOT_ROW_DUPLICATE) ...already liked...
 * A connection is used by one thread at a time; many threads, each with
 * its own connection, may like the same post at the same time.
 */
#ifndef HOTROW_LAB01_HOT_ROW_H
#define HOTROW_LAB01_HOT_ROW_H

#include <stdint.h>

#include "kit/db.h"

/* Both engines accept this text as it is. */
#define HOT_ROW_SCHEMA \
	"CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0);" \
	"CREATE TABLE likes (post_id BIGINT NOT NULL, user_id BIGINT NOT NULL," \
	" PRIMARY KEY (post_id, user_id))"

/* like_post() results besides 0 and the KIT_DB_* codes. */
enum {
	HOT_ROW_DUPLICATE = KIT_DB_CONSTRAINT, /* the user already liked the post */
	HOT_ROW_NO_POST = KIT_DB_NOROW,        /* there is no such post */
	HOT_ROW_REFUSED = -10,                 /* the app's check said no */
};

/* The application's own work for a like (a spam filter, a call to another
 * service): slow, milliseconds, and nothing to do with the database. It
 * returns 0 to let the like through, anything else to refuse it (its
 * return value is its answer: errno is not part of it). It may be
 * called from several threads at once. */
struct hot_row_app {
	int (*check)(void *arg, int64_t post_id, int64_t user_id);
	void *arg;
};

/* Record that user_id likes post_id, and add 1 to the post's counter.
 * Ids are any int64_t values, up to INT64_MAX.
 *
 * Calls app->check exactly once (unless app or app->check is NULL) and
 * returns HOT_ROW_REFUSED, writing nothing, if it says no (any value but
 * 0, negative ones included), however long the check takes to answer:
 * the like waits for it (no deadline of its own) and takes its answer
 * as it is, however late (a late yes is a yes). Otherwise writes
 * the like and the counter in one transaction, so that either both happen
 * or neither does: HOT_ROW_DUPLICATE if the user already liked the post,
 * HOT_ROW_NO_POST if the post does not exist, the failed call's own
 * negative KIT_DB_* code if the database failed (KIT_DB_BUSY when the kit
 * says so, a lock wait that timed out, a deadlock or a serialization
 * failure, and only then: KIT_DB_ERR stays KIT_DB_ERR, whatever its
 * message says); in every one of those cases nothing changes and the
 * connection is ready for the next call. like_post does not try again
 * itself: the first statement refused ends the call with its code, at
 * once. Whether and when to retry a busy like is the caller's choice (it
 * knows its deadline; a retry inside would hold it, and its connection,
 * for a lock wait more each time), and app->check is called once per
 * like_post() call, the caller's retries included. (One exception no code can
 * avoid: when COMMIT ran but its answer was lost, the like is there and an
 * error is returned; the same like tried again says HOT_ROW_DUPLICATE.)
 * 0 is returned only for a like that is written. An allocation that
 * fails (malloc, strdup... returning NULL, asprintf -1, if your code
 * allocates) is such a failure: KIT_DB_ERR, nothing written, app->check
 * called once all the same (ask it first). No call leaves a block
 * allocated. A ROLLBACK after a failed step that fails too changes
 * nothing about the answer: it is the failed step's own code.
 *
 * Many threads may call it for the same post at once: every like that
 * returned 0 is counted exactly once. Nothing in it makes one like wait
 * for another but the counter's row lock: as many likes as the caller
 * has connections run their app checks at once (no cap of its own on
 * checks in flight). The counter row is locked from its
 * UPDATE to the COMMIT, so that stretch must be as short as it can be.
 * A like that finds the row held by another waits for it as long as the
 * connection's own limit allows (the caller's: kit_db_set_lock_timeout),
 * and sets no lock wait of its own, shorter or longer, not even one it
 * puts back after.
 *
 * Send it as a transaction of its own (kit_db_begin, at the isolation
 * level the caller's connection has), the INSERT of the like, the UPDATE
 * of the counter, kit_db_commit, and no other statement, now or every
 * so many likes (a NOTIFY, a PRAGMA, a SELECT): the checks watch those
 * statements. The like in one statement, with no transaction around it,
 * is Lab 08's lesson, not this one's. On MariaDB an INSERT ... SELECT
 * FROM posts reads the post's row with a shared lock, so two likes of a
 * post deadlock when each turns its lock into the counter's write lock:
 * read nothing from posts before the UPDATE. */
int like_post(struct kit_db *db, int64_t post_id, int64_t user_id,
              const struct hot_row_app *app);

#endif
