/*
 * hot_row.c: Lab 01 reference solution.
 *
 * The order is the whole point: the slow check runs before the
 * transaction opens; inside it, the like goes in first (it locks only its
 * own new key, and a duplicate fails here, before the counter is touched);
 * the counter UPDATE comes last, so its row lock is held for one statement
 * and the commit, and nothing else.
 */
#include "labs/01-hot-row/hot_row.h"

#include <inttypes.h>
#include <stdio.h>

int like_post(struct kit_db *db, int64_t post_id, int64_t user_id,
              const struct hot_row_app *app)
{
	if (app && app->check && app->check(app->arg, post_id, user_id) != 0)
		return HOT_ROW_REFUSED;

	char post[24], user[24];
	snprintf(post, sizeof post, "%" PRId64, post_id);
	snprintf(user, sizeof user, "%" PRId64, user_id);
	const char *params[] = { post, user };

	int rc = kit_db_begin(db);
	if (rc != 0)
		return rc;
	rc = kit_db_exec(db, "INSERT INTO likes (post_id, user_id) VALUES ($1, $2)", 2, params);
	if (rc == 0)
		rc = kit_db_exec(db, "UPDATE posts SET likes = likes + 1 WHERE id = $1", 1, params);
	if (rc == 0 && kit_db_changes(db) != 1)
		rc = HOT_ROW_NO_POST;
	if (rc == 0)
		return kit_db_commit(db);
	kit_db_rollback(db);
	return rc;
}
