/*
 * steps.c: the step failpoints of steps.h, over kit/failpoint.
 */
#include "tests/harness/steps.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kit/failpoint.h"
#include "tests/harness/sql.h"

static const char *const names[] = { "db-stmt-fails", "db-reply-lost", "db-stmt-busy" };
static int armed = -1;   /* which of names, or -1 */
static int armed_k;

/* Arm how's failpoint with action from the k-th statement on; who names
 * the caller in the failure. */
static void arm(enum lt_step how, int k, enum kit_fp_action action, const char *who)
{
	lt_step_disarm();
	if (kit_fp_set(names[how], action, k) != 0)
		fail_msg("%s: cannot arm %s at statement %d", who, names[how], k);
	armed = (int)how;
	armed_k = k;
}

void lt_step_arm(enum lt_step how, int k)
{
	arm(how, k, KIT_FP_ONCE, "lt_step_arm");
}

void lt_step_arm_from(enum lt_step how, int k)
{
	arm(how, k, KIT_FP_ERROR, "lt_step_arm_from");
}

bool lt_step_disarm(void)
{
	if (armed < 0)
		return false;
	bool fired = kit_fp_count(names[armed]) >= armed_k;
	kit_fp_set(names[armed], KIT_FP_OFF, 1);
	armed = -1;
	return fired;
}

const char *lt_step_what(enum lt_step how)
{
	return how == LT_STEP_FAILS ? "refused" : how == LT_STEP_BUSY ? "refused as busy (KIT_DB_BUSY)"
	       : "ran but its answer was lost";
}

bool lt_step_refused(enum lt_step how)
{
	return how != LT_STEP_REPLY_LOST;
}

static void refusals_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_refusals *r = arg;

	(void)t_ns;
	if (ev != KIT_DB_STMT_START && ev != KIT_DB_TX_STMT_START)
		return;
	if (sql && strstr(sql, "log_progress"))
		r->progress_reads++;
	if (++r->stmts == 200)
		kit_fp_clear();
}

void lt_refusals_arm(struct kit_db *db, struct lt_refusals *r, int kind)
{
	static const char *const fps[LT_REFUSAL_KINDS] = { "db-stmt-fails", "db-stmt-busy" };

	r->stmts = 0;
	r->progress_reads = 0;
	kit_db_set_hook(db, refusals_hook, r);
	kit_fp_clear();
	kit_fp_set(fps[kind], KIT_FP_ERROR, 1);
}

void lt_refusals_disarm(struct kit_db *db)
{
	kit_fp_clear();
	kit_db_set_hook(db, NULL, NULL);
}

static bool is_write(const char *sql)
{
	static const char *const verbs[] = { "INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE" };
	bool with = lt_sql_is(sql, "WITH");
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (with ? lt_sql_names(sql, verbs[i]) : lt_sql_is(sql, verbs[i]))
			return true;
	return false;
}

/* Whether any statement of a text is a write: a simple query may hold
 * several ("SET LOCAL ...; UPDATE ..."), run as one implicit transaction.
 * Quotes ('...', "...", $tag$...$tag$) are skipped, so a ';' inside one
 * starts nothing. */
static bool text_writes(const char *sql)
{
	if (is_write(sql))
		return true;
	for (const char *p = sql; *p; p++) {
		if (*p == '\'' || *p == '"') {
			const char *end = strchr(p + 1, *p);
			if (!end)
				return false;
			p = end;
		} else if (*p == '$') {
			const char *tag_end = strchr(p + 1, '$');
			size_t len = tag_end ? (size_t)(tag_end - p + 1) : 0;
			if (!tag_end || len > 64 || strspn(p + 1, "abcdefghijklmnopqrstuvwxyz"
			                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != len - 2)
				continue;
			char tag[66];
			memcpy(tag, p, len);
			tag[len] = '\0';
			const char *close = strstr(tag_end + 1, tag);
			if (!close)
				return false;
			p = close + len - 1;
		} else if (*p == ';' && is_write(p + 1)) {
			return true;
		}
	}
	return false;
}

void lt_tx_watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_tx_watch *w = arg;

	(void)t_ns;
	if (ev == KIT_DB_TX_BEGIN)
		w->open = true;
	else if (ev == KIT_DB_TX_COMMIT || ev == KIT_DB_TX_ROLLBACK)
		w->open = false;
	else if (ev == KIT_DB_STMT_START && !w->open && sql && is_write(sql) &&
	         w->outside++ == 0)
		snprintf(w->first, sizeof w->first, "%s", lt_sql_verb(sql));
}

bool lt_sql_locking_read(const char *sql)
{
	static const char *const clauses[] = { " FOR UPDATE", " FOR NO KEY UPDATE", " FOR SHARE",
	                                       " FOR KEY SHARE" };
	if (!lt_sql_is(sql, "SELECT"))
		return false;
	for (size_t i = 0; i < sizeof clauses / sizeof clauses[0]; i++)
		if (strcasestr(sql, clauses[i]))
			return true;
	return false;
}

void lt_lock_watch_hook(void *arg, enum kit_db_event ev, const char *sql, int64_t t_ns)
{
	struct lt_lock_watch *w = arg;

	(void)t_ns;
	if (ev == KIT_DB_TX_BEGIN) {
		w->open = true;
		w->locked = false;
	} else if (ev == KIT_DB_TX_COMMIT || ev == KIT_DB_TX_ROLLBACK) {
		w->open = w->locked = false;
	} else if (ev == KIT_DB_STMT_START && sql && !lt_sql_is(sql, "COMMIT") &&
	           !lt_sql_is(sql, "END") && !lt_sql_is(sql, "ROLLBACK")) {
		if (w->open && w->locked && w->after++ == 0)
			snprintf(w->what, sizeof w->what, "%s", sql);
		bool ours = lt_sql_names(sql, w->table);
		if (ours && text_writes(sql)) {
			w->writes++;
			w->locked = true;
		} else if (ours && lt_sql_locking_read(sql)) {
			w->locked = true;
		}
	}
}
