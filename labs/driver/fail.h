/*
 * fail.h: how a lab driver stops on an error: one line, the first error.
 *
 * A driver that meets an error stops at once: no prediction block, no
 * "exact" or "NOT EXACT" line (a count read after a failure would blame
 * correct code), and one line on stderr that names the first error. When
 * the error is the database going away (a server stopped mid-run), the
 * line says so first. libpq's messages run over several lines; the first
 * says it all, so only that is printed.
 *
 * Interface:
 *   if (kit_db_query_int(db, sql, 0, NULL, &n) != 0)
 *       return drv_fail_db("hotrow lab run 01", "the count", db);   // 1
 *   if (rc != 0)
 *       return drv_fail("hotrow lab run 01", "16 threads", m.r.error);
 */
#ifndef HOTROW_DRIVER_FAIL_H
#define HOTROW_DRIVER_FAIL_H

#include "kit/db.h"

/* "CMD: WHAT: MSG" on stderr (WHAT may be NULL), MSG up to its first
 * newline. Returns 1, a driver's exit status for a failed run. */
int drv_fail(const char *cmd, const char *what, const char *msg);

/* drv_fail with db's message (or, when it has none, a nudge: is the lab's
 * code still a TODO?); "CMD: the database went away: WHAT: MSG" when db's
 * connection is gone. Returns 1. */
int drv_fail_db(const char *cmd, const char *what, const struct kit_db *db);

#endif
