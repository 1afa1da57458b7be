/*
 * views.c: Lab 04 reference solution — buffer views in the store, drain
 * them atomically (one script, in Lua for Redis and in C for the
 * in-process store), add them to the database in one upsert per flush.
 */
#include "labs/04-drain/views.h"

#include "kit/failpoint.h"

#include <assert.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- §3 record ---- */

/* Add views to videos' deltas and mark them dirty, as one step: the step
 * record_view runs, and the one that puts a refused flush back.
 * KEYS: the dirty set, the delta key prefix. ARGV: id, n, id, n, ...
 * A command that fails inside a script does not undo the ones before it
 * (README §2), so the step first reads every key it will write: a key of
 * the wrong type stops it before it has changed anything. */
static int add_step(struct kit_store *st, struct kit_store_call *c)
{
	char key[64];
	int64_t seen;
	int rc = kit_store_scard(st, c->keys[0], &seen);
	for (int i = 0; rc == 0 && i + 1 < c->nargs; i += 2) {
		snprintf(key, sizeof key, "%s%s", c->keys[1], c->args[i]);
		rc = kit_store_get(st, key, &seen);
	}
	for (int i = 0; rc == 0 && i + 1 < c->nargs; i += 2) {
		snprintf(key, sizeof key, "%s%s", c->keys[1], c->args[i]);
		rc = kit_store_incrby(st, key, strtoll(c->args[i + 1], NULL, 10), NULL);
		if (rc == 0)
			rc = kit_store_sadd(st, c->keys[0], c->args[i], NULL);
	}
	return rc;
}

/* Lua's test of a string for a 64-bit integer, as Redis's INCRBY reads
 * one: an optional minus, no leading zero ("007" and "-0" are none), at
 * most 19 digits and within int64_t. A looser pattern ('^%-?%d+$') takes
 * "007" for 7 and "99999999999999999999" for a number, which INCRBY then
 * refuses. */
#define LUA_INT \
	"local function int(v)\n" \
	"  if v == '0' then return true end\n" \
	"  local d = string.match(v, '^%-?([1-9]%d*)$')\n" \
	"  if not d or #d > 19 then return false end\n" \
	"  return #d < 19 or d <= (string.sub(v, 1, 1) == '-' and '9223372036854775808'\n" \
	"                                                     or '9223372036854775807')\n" \
	"end\n"

static const struct kit_store_script add_script = {
	"add",
	LUA_INT
	"redis.call('SCARD', KEYS[1])\n"
	"for i = 1, #ARGV, 2 do\n"
	"  local v = redis.call('GET', KEYS[2] .. ARGV[i])\n"
	"  if v and not int(v) then\n"
	"    return redis.error_reply('not an integer: ' .. KEYS[2] .. ARGV[i])\n"
	"  end\n"
	"end\n"
	"for i = 1, #ARGV, 2 do\n"
	"  redis.call('INCRBY', KEYS[2] .. ARGV[i], ARGV[i + 1])\n"
	"  redis.call('SADD', KEYS[1], ARGV[i])\n"
	"end\n",
	add_step,
};

static const char *const view_keys[] = { VIEWS_DIRTY, VIEWS_DELTA_PREFIX };

/* Run add_script for rows[0 .. n-1]. */
static int add_views(struct kit_store *st, const struct view_delta *rows, int n)
{
	char (*text)[24] = malloc((size_t)n * 2 * sizeof *text);
	const char **args = malloc((size_t)n * 2 * sizeof *args);
	int rc = KIT_STORE_NOMEM;
	if (text && args) {
		for (int i = 0; i < n; i++) {
			snprintf(text[2 * i], sizeof text[0], "%" PRId64, rows[i].video_id);
			snprintf(text[2 * i + 1], sizeof text[0], "%" PRId64, rows[i].n);
			args[2 * i] = text[2 * i];
			args[2 * i + 1] = text[2 * i + 1];
		}
		struct kit_store_call c = { 2, view_keys, 2 * n, args, NULL, 0, 0 };
		rc = kit_store_eval(st, &add_script, &c);
	}
	free(args);
	free(text);
	return rc;
}

int record_view(struct kit_store *st, int64_t video_id)
{
	return add_views(st, &(struct view_delta){ video_id, 1 }, 1);
}

/* ---- §4 drain ---- */

/* Pop up to ARGV[1] dirty ids (KEYS[1]) into ids and read each one's
 * delta (KEYS[2] .. id) into n, the reads before any delta is written:
 * when one fails (a delta key of the wrong type), the ids go back into
 * the dirty set and the step ends there, nothing taken. */
static int take_dirty(struct kit_store *st, struct kit_store_call *c, char **ids, int64_t *n,
                      int *nids)
{
	char key[64];
	int rc = kit_store_spop(st, c->keys[0], atoi(c->args[0]), ids, nids);
	for (int i = 0; rc == 0 && i < *nids; i++) {
		snprintf(key, sizeof key, "%s%s", c->keys[1], ids[i]);
		rc = kit_store_get(st, key, &n[i]);
	}
	if (rc != 0) {
		for (int i = 0; i < *nids; i++) {
			kit_store_sadd(st, c->keys[0], ids[i], NULL);
			free(ids[i]);
		}
		*nids = 0;
	}
	return rc;
}

/* Take up to ARGV[1] dirty ids and their deltas, each delta read and
 * removed in the one step; answer id, n, id, n, ... for the deltas that
 * were not zero. */
static int drain_step(struct kit_store *st, struct kit_store_call *c)
{
	char *ids[VIEWS_MAX_BATCH];
	int64_t n[VIEWS_MAX_BATCH];
	int nids = 0;
	int rc = take_dirty(st, c, ids, n, &nids);
	for (int i = 0; i < nids; i++) {
		char key[64];
		snprintf(key, sizeof key, "%s%s", c->keys[1], ids[i]);
		if (rc == 0)
			rc = kit_store_del(st, key, NULL);
		if (rc == 0 && n[i] != 0) {
			c->out[c->nout++] = strtoll(ids[i], NULL, 10);
			c->out[c->nout++] = n[i];
		}
		free(ids[i]);
	}
	return rc;
}

/* The Lua of take_dirty: SPOP, then every delta read with pcall, which
 * hands an error back instead of stopping the script, so that the ids
 * can go back first. A delta that is a string but no integer (another
 * program's SET) is such an error too: GET returns it as it is. */
#define TAKE_DIRTY_LUA \
	"local ids = redis.call('SPOP', KEYS[1], ARGV[1])\n" \
	"local vs = {}\n" \
	"for i, id in ipairs(ids) do\n" \
	"  vs[i] = redis.pcall('GET', KEYS[2] .. id)\n" \
	"  if type(vs[i]) == 'string' and not int(vs[i]) then\n" \
	"    vs[i] = redis.error_reply('not an integer: ' .. KEYS[2] .. id)\n" \
	"  end\n" \
	"  if type(vs[i]) == 'table' then\n" \
	"    redis.call('SADD', KEYS[1], unpack(ids))\n" \
	"    return vs[i]\n" \
	"  end\n" \
	"end\n"

static const struct kit_store_script drain_script = {
	"drain",
	LUA_INT
	TAKE_DIRTY_LUA
	"local out = {}\n"
	"for i, id in ipairs(ids) do\n"
	"  redis.call('DEL', KEYS[2] .. id)\n"
	"  local n = tonumber(vs[i] or 0)\n"
	"  if n ~= 0 then\n"
	"    out[#out + 1] = tonumber(id)\n"
	"    out[#out + 1] = n\n"
	"  end\n"
	"end\n"
	"return out\n",
	drain_step,
};

int drain_views(struct kit_store *st, int max, struct view_delta *out, int *n)
{
	assert(max >= 1 && max <= VIEWS_MAX_BATCH);
	int64_t got[2 * VIEWS_MAX_BATCH];
	char count[16];
	snprintf(count, sizeof count, "%d", max);
	struct kit_store_call c = { 2, view_keys, 1, (const char *[]){ count }, got, 2 * max, 0 };
	int rc = kit_store_eval(st, &drain_script, &c);
	*n = 0;
	for (int i = 0; rc == 0 && i + 1 < c.nout; i += 2)
		out[(*n)++] = (struct view_delta){ got[i], got[i + 1] };
	return rc;
}

/* ---- §5 flush ---- */

static int by_id(const void *a, const void *b)
{
	const struct view_delta *x = a, *y = b;
	return (x->video_id > y->video_id) - (x->video_id < y->video_id);
}

/* Add rows[0..n-1] to video_counts in one statement. Sorted ids keep two
 * concurrent upserts from locking rows in opposite orders. */
static int upsert(struct kit_db *db, struct view_delta *rows, int n)
{
	qsort(rows, (size_t)n, sizeof *rows, by_id);
	size_t cap = 128 + (size_t)n * 32;
	char *sql = malloc(cap);
	char (*text)[24] = malloc((size_t)n * 2 * sizeof *text);
	const char **params = malloc((size_t)n * 2 * sizeof *params);
	int rc = KIT_DB_ERR;
	if (sql && text && params) {
		size_t len = (size_t)snprintf(sql, cap, "INSERT INTO video_counts (video_id, views) VALUES ");
		for (int i = 0; i < n; i++) {
			len += (size_t)snprintf(sql + len, cap - len, "%s($%d, $%d)",
			                        i ? ", " : "", 2 * i + 1, 2 * i + 2);
			snprintf(text[2 * i], sizeof text[0], "%" PRId64, rows[i].video_id);
			snprintf(text[2 * i + 1], sizeof text[0], "%" PRId64, rows[i].n);
			params[2 * i] = text[2 * i];
			params[2 * i + 1] = text[2 * i + 1];
		}
		/* MariaDB words the upsert its own way (README §5). */
		snprintf(sql + len, cap - len, "%s", kit_db_engine(db) == KIT_DB_MYSQL
		         ? " ON DUPLICATE KEY UPDATE views = views + VALUES(views)"
		         : " ON CONFLICT (video_id) DO UPDATE SET views = video_counts.views + excluded.views");
		rc = kit_db_exec(db, sql, 2 * n, params);
	}
	free(params);
	free(text);
	free(sql);
	return rc;
}

/* ---- §5b exactly once: the flush token ---- */

/* The drain of drain_step, parking what it takes: under a new token
 * (INCR KEYS[5]) marked in the set KEYS[4], each "id=n" in the set
 * KEYS[3] .. token. Answers token, id, n, id, n, ... or nothing. In Lua
 * the member is built from GETDEL's text and the park's name from the
 * token written with %d: Lua writes a number with 14 significant digits,
 * so 123456789012345 would be parked as "1.2345678901234e+14", and token
 * 10^14's park named "views:park:1e+14" (while SADD, handed the number,
 * lists it in views:parked as "100000000000000"). */
static int park_step(struct kit_store *st, struct kit_store_call *c)
{
	char *ids[VIEWS_MAX_BATCH];
	int64_t n[VIEWS_MAX_BATCH];
	char park[64], tok[24], member[48];
	int nids = 0;
	int64_t token = 0, last = 0, size = 0;
	int rc = kit_store_scard(st, c->keys[0], &size);
	if (rc != 0 || size == 0)
		return rc;
	rc = kit_store_get(st, c->keys[4], &last);
	if (rc == 0 && last == 0) {   /* the counter is gone (a restart): take nothing */
		c->out[c->nout++] = -1;
		return 0;
	}
	/* the sets the park will add to, read before anything is taken */
	snprintf(tok, sizeof tok, "%" PRId64, last + 1);
	snprintf(park, sizeof park, "%s%s", c->keys[2], tok);
	if (rc == 0)
		rc = kit_store_scard(st, park, &size);
	if (rc == 0)
		rc = kit_store_scard(st, c->keys[3], &size);
	if (rc == 0)
		rc = take_dirty(st, c, ids, n, &nids);
	for (int i = 0; i < nids; i++) {
		char key[64];
		snprintf(key, sizeof key, "%s%s", c->keys[1], ids[i]);
		if (rc == 0)
			rc = kit_store_del(st, key, NULL);
		if (rc == 0 && n[i] != 0 && token == 0) {
			rc = kit_store_incrby(st, c->keys[4], 1, &token);
			if (rc == 0)
				rc = kit_store_sadd(st, c->keys[3], tok, NULL);
			c->out[c->nout++] = token;
		}
		if (rc == 0 && n[i] != 0) {
			snprintf(member, sizeof member, "%s=%" PRId64, ids[i], n[i]);
			rc = kit_store_sadd(st, park, member, NULL);
			c->out[c->nout++] = strtoll(ids[i], NULL, 10);
			c->out[c->nout++] = n[i];
		}
		free(ids[i]);
	}
	return rc;
}

static const struct kit_store_script park_script = {
	"park",
	LUA_INT
	"if redis.call('SCARD', KEYS[1]) == 0 then return {} end\n"
	"local last = redis.call('GET', KEYS[5])\n"
	"if not last then return {-1} end\n"
	"if not int(last) then\n"
	"  return redis.error_reply('not an integer: ' .. KEYS[5])\n"
	"end\n"
	"local park = KEYS[3] .. string.format('%d', tonumber(last) + 1)\n"
	"redis.call('SCARD', park)\n"
	"redis.call('SCARD', KEYS[4])\n"
	TAKE_DIRTY_LUA
	"local out = {}\n"
	"for i, id in ipairs(ids) do\n"
	"  redis.call('DEL', KEYS[2] .. id)\n"
	"  local n = tonumber(vs[i] or 0)\n"
	"  if n ~= 0 then\n"
	"    if #out == 0 then\n"
	"      out[1] = redis.call('INCR', KEYS[5])\n"
	"      redis.call('SADD', KEYS[4], out[1])\n"
	"    end\n"
	"    redis.call('SADD', park, id .. '=' .. vs[i])\n"
	"    out[#out + 1] = tonumber(id)\n"
	"    out[#out + 1] = n\n"
	"  end\n"
	"end\n"
	"return out\n",
	park_step,
};

static const char *const park_keys[] = { VIEWS_DIRTY, VIEWS_DELTA_PREFIX, VIEWS_PARK_PREFIX,
                                          VIEWS_PARKED, VIEWS_TOKEN };

int park_views(struct kit_store *st, int max, int64_t *token, struct view_delta *out, int *n)
{
	assert(max >= 1 && max <= VIEWS_MAX_BATCH);
	int64_t got[2 * VIEWS_MAX_BATCH + 1];
	char count[16];
	snprintf(count, sizeof count, "%d", max);
	struct kit_store_call c = { 5, park_keys, 1, (const char *[]){ count }, got, 2 * max + 1, 0 };
	int rc = kit_store_eval(st, &park_script, &c);
	*n = 0;
	if (rc == 0 && c.nout == 1 && got[0] == -1) {
		*token = 0;
		return VIEWS_NO_TOKEN;
	}
	*token = rc == 0 && c.nout > 0 ? got[0] : 0;
	for (int i = 1; rc == 0 && i + 1 < c.nout; i += 2)
		out[(*n)++] = (struct view_delta){ got[i], got[i + 1] };
	return rc;
}

/* Set the counter KEYS[1] to ARGV[1] only when it is still missing (a
 * missing key reads as 0 here, as in park_step). Two flushers may both
 * find it missing: one that stalled between its read of the database and
 * this step would otherwise set the counter back under tokens the other
 * has used since, and reuse one of them. */
static int settoken_step(struct kit_store *st, struct kit_store_call *c)
{
	int64_t last = 0;
	int rc = kit_store_get(st, c->keys[0], &last);
	if (rc == 0 && last == 0)
		rc = kit_store_set(st, c->keys[0], strtoll(c->args[0], NULL, 10));
	return rc;
}

static const struct kit_store_script settoken_script = {
	"settoken",
	"if not redis.call('GET', KEYS[1]) then\n"
	"  redis.call('SET', KEYS[1], ARGV[1])\n"
	"end\n",
	settoken_step,
};

static int set_token(struct kit_store *st, int64_t token)
{
	char tok[24];
	snprintf(tok, sizeof tok, "%" PRId64, token);
	struct kit_store_call c = { 1, (const char *[]){ VIEWS_TOKEN }, 1, (const char *[]){ tok },
	                            NULL, 0, 0 };
	return kit_store_eval(st, &settoken_script, &c);
}

/* Delete a park; with ARGV[2] = "back", first give its deltas back as
 * record_view would have left them. KEYS: the dirty set, the delta
 * prefix, the park prefix, the parked set. ARGV: token, "back" or "drop".
 * Every key it writes is read first, as in add_step: a park that cannot
 * be given back whole stays parked whole, for the next recovery. */
static int unpark_step(struct kit_store *st, struct kit_store_call *c)
{
	char park[64], key[64];
	char *members[VIEWS_MAX_BATCH];
	int n = 0;
	int64_t seen;
	bool back = !strcmp(c->args[1], "back");
	snprintf(park, sizeof park, "%s%s", c->keys[2], c->args[0]);
	int rc = kit_store_scard(st, c->keys[3], &seen);
	if (rc == 0)
		rc = kit_store_smembers(st, park, VIEWS_MAX_BATCH, members, &n);
	if (rc == 0 && back)
		rc = kit_store_scard(st, c->keys[0], &seen);
	for (int i = 0; rc == 0 && back && i < n; i++) {
		char *eq = strchr(members[i], '=');
		if (!eq)
			continue;
		snprintf(key, sizeof key, "%s%.*s", c->keys[1], (int)(eq - members[i]), members[i]);
		rc = kit_store_get(st, key, &seen);
	}
	for (int i = 0; i < n; i++) {
		char *eq = strchr(members[i], '=');
		if (rc == 0 && eq && back) {
			*eq = '\0';
			snprintf(key, sizeof key, "%s%s", c->keys[1], members[i]);
			rc = kit_store_incrby(st, key, strtoll(eq + 1, NULL, 10), NULL);
			if (rc == 0)
				rc = kit_store_sadd(st, c->keys[0], members[i], NULL);
		}
		free(members[i]);
	}
	if (rc == 0)
		rc = kit_store_del(st, park, NULL);
	if (rc == 0)
		rc = kit_store_srem(st, c->keys[3], c->args[0], NULL);
	return rc;
}

static const struct kit_store_script unpark_script = {
	"unpark",
	LUA_INT
	"local park = KEYS[3] .. ARGV[1]\n"
	"redis.call('SCARD', KEYS[4])\n"
	"local members = redis.call('SMEMBERS', park)\n"
	"if ARGV[2] == 'back' then\n"
	"  redis.call('SCARD', KEYS[1])\n"
	"  for _, m in ipairs(members) do\n"
	"    local k = KEYS[2] .. string.match(m, '^(.*)=')\n"
	"    local v = redis.call('GET', k)\n"
	"    if v and not int(v) then\n"
	"      return redis.error_reply('not an integer: ' .. k)\n"
	"    end\n"
	"  end\n"
	"  for _, m in ipairs(members) do\n"
	"    local id, n = string.match(m, '^(.*)=(.*)$')\n"
	"    redis.call('INCRBY', KEYS[2] .. id, n)\n"
	"    redis.call('SADD', KEYS[1], id)\n"
	"  end\n"
	"end\n"
	"redis.call('DEL', park)\n"
	"redis.call('SREM', KEYS[4], ARGV[1])\n",
	unpark_step,
};

static int unpark(struct kit_store *st, int64_t token, bool back)
{
	char tok[24];
	snprintf(tok, sizeof tok, "%" PRId64, token);
	struct kit_store_call c = { 4, park_keys, 2, (const char *[]){ tok, back ? "back" : "drop" },
	                            NULL, 0, 0 };
	return kit_store_eval(st, &unpark_script, &c);
}

/* What a crash at a failpoint leaves: everything as it is. */
#define CRASHED 1

/* One transaction: the token in applied_flushes, the deltas in
 * video_counts. Returns 0, CRASHED, or the database's code (rolled back;
 * *at_commit says whether it was COMMIT itself that failed). */
static int apply(struct kit_db *db, int64_t token, struct view_delta *rows, int n, bool *at_commit)
{
	char tok[24];
	snprintf(tok, sizeof tok, "%" PRId64, token);
	*at_commit = false;
	int rc = kit_db_begin(db);
	if (rc == 0)
		rc = kit_db_exec(db, "INSERT INTO applied_flushes (token) VALUES ($1)", 1,
		                 (const char *[]){ tok });
	if (rc == 0)
		rc = upsert(db, rows, n);
	if (rc == 0 && kit_fp_hit("flush-before-commit") != 0)
		return CRASHED;
	if (rc == 0) {
		rc = kit_db_commit(db);
		*at_commit = rc != 0;
		return rc;
	}
	kit_db_rollback(db);
	return rc;
}

/* The views a parked batch holds, read back from the store. */
static int read_park(struct kit_store *st, const char *token, struct view_delta *rows, int *n)
{
	char park[64];
	char *members[VIEWS_MAX_BATCH];
	int got = 0;
	snprintf(park, sizeof park, VIEWS_PARK_PREFIX "%s", token);
	int rc = kit_store_smembers(st, park, VIEWS_MAX_BATCH, members, &got);
	*n = 0;
	for (int i = 0; i < got; i++) {
		char *eq = strchr(members[i], '=');
		if (eq)
			rows[(*n)++] = (struct view_delta){ strtoll(members[i], NULL, 10),
			                                    strtoll(eq + 1, NULL, 10) };
		free(members[i]);
	}
	return rc;
}

int64_t recover_flushes(struct kit_store *st, struct kit_db *db)
{
	int64_t views = 0;
	for (;;) {
		char *tokens[16];
		int ntok = 0;
		int rc = kit_store_smembers(st, VIEWS_PARKED, 16, tokens, &ntok);
		if (rc != 0 || ntok == 0)
			return rc != 0 ? rc : views;
		for (int i = 0; i < ntok; i++) {
			int64_t token = strtoll(tokens[i], NULL, 10), applied = 0;
			struct view_delta rows[VIEWS_MAX_BATCH];
			int n = 0;
			bool at_commit;
			if (rc == 0)
				rc = kit_db_query_int(db, "SELECT COUNT(*) FROM applied_flushes WHERE token = $1",
				                      1, (const char *[]){ tokens[i] }, &applied);
			if (rc == 0 && !applied)
				rc = read_park(st, tokens[i], rows, &n);
			if (rc == 0 && !applied && n > 0) {
				rc = apply(db, token, rows, n, &at_commit);
				for (int k = 0; rc == 0 && k < n; k++)
					views += llabs(rows[k].n);
			}
			if (rc == CRASHED)
				rc = KIT_DB_ERR;
			else if (rc == 0)
				rc = unpark(st, token, false);
			free(tokens[i]);
		}
		if (rc != 0)
			return rc;
	}
}

int64_t flush_views(struct kit_store *st, struct kit_db *db, int max)
{
	struct view_delta rows[VIEWS_MAX_BATCH];
	int64_t parked = 0, token = 0;
	int n = 0;
	int rc = kit_store_scard(st, VIEWS_PARKED, &parked);
	int64_t views = rc == 0 && parked > 0 ? recover_flushes(st, db) : rc;
	if (views < 0)
		return views;
	rc = park_views(st, max, &token, rows, &n);
	if (rc == VIEWS_NO_TOKEN) {
		/* a new store, or one that restarted: go on after the last token
		 * the database has, never reusing one; set only while still
		 * missing, as another flusher may have set it and used tokens
		 * since this one read the database */
		int64_t last = 0;
		rc = kit_db_query_int(db, "SELECT COALESCE(MAX(token), 0) FROM applied_flushes", 0, NULL,
		                      &last);
		if (rc == 0)
			rc = set_token(st, last + 1);
		if (rc == 0)
			rc = park_views(st, max, &token, rows, &n);
	}
	if (rc != 0 || n == 0)
		return rc != 0 ? rc : views;
	if (kit_fp_hit("flush-after-drain") != 0)
		return KIT_DB_ERR;
	bool at_commit;
	rc = apply(db, token, rows, n, &at_commit);
	if (rc == CRASHED)
		return KIT_DB_ERR;
	if (rc == KIT_DB_CONSTRAINT && !at_commit) {
		/* The token may be taken: a recovery that took this flusher for
		 * dead applied the batch, and may have died before it deleted the
		 * park. Applied, the park is only deleted; not known, it stays
		 * parked for the next flush's recovery to ask again. */
		char tok[24];
		int64_t applied = 0;
		snprintf(tok, sizeof tok, "%" PRId64, token);
		int asked = kit_db_query_int(db, "SELECT COUNT(*) FROM applied_flushes WHERE token = $1",
		                             1, (const char *[]){ tok }, &applied);
		if (asked != 0 || applied != 0) {
			if (asked == 0 && unpark(st, token, false) != 0)
				fprintf(stderr, "flush_views: token %" PRId64 " applied elsewhere, its park "
				        "left for recovery\n", token);
			return rc;
		}
	}
	if (rc != 0 && !at_commit) {
		/* the database said no: the views go back for the next flush */
		if (kit_fp_hit("flush-mid-putback") != 0)
			return KIT_DB_ERR;
		int back = unpark(st, token, true);
		if (back != 0)
			fprintf(stderr, "flush_views: %d videos' views stay parked under token %" PRId64
			        ": %s\n", n, token, kit_store_strerror(back));
		return rc;
	}
	if (rc != 0)
		return rc;   /* COMMIT's outcome unknown: parked, for the next flush to ask */
	if (kit_fp_hit("flush-after-commit") != 0)
		return KIT_DB_ERR;
	if (unpark(st, token, false) != 0)
		fprintf(stderr, "flush_views: token %" PRId64 " applied, its park left for recovery\n",
		        token);
	for (int i = 0; i < n; i++)
		views += llabs(rows[i].n);   /* a delta below zero is views too */
	return views;
}

/* ---- §6 the flush loop ---- */

struct flusher {
	pthread_t thread;
	struct kit_store *st;
	struct kit_db *db;
	int interval_ms, max;

	pthread_mutex_t mu;       /* guards what follows */
	pthread_cond_t wake;
	bool stopping;
	struct flusher_stats stats;
};

static int64_t flush_counted(struct flusher *f)
{
	int64_t r = flush_views(f->st, f->db, f->max);
	pthread_mutex_lock(&f->mu);
	f->stats.flushes++;
	if (r < 0)
		f->stats.failed++;
	else
		f->stats.views += r;
	pthread_mutex_unlock(&f->mu);
	return r;
}

static void *flusher_main(void *arg)
{
	struct flusher *f = arg;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&f->mu);
	while (!f->stopping) {
		next.tv_nsec += (long)f->interval_ms * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		while (!f->stopping &&
		       pthread_cond_timedwait(&f->wake, &f->mu, &next) == 0)
			;   /* woken early but not stopping: keep waiting */
		if (f->stopping)
			break;
		pthread_mutex_unlock(&f->mu);
		flush_counted(f);
		/* A flush that overran the next tick (a lock wait, a slow
		 * COMMIT) skips it: the next one is an interval after this one
		 * ends, not the missed ticks sent back to back. */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t late = (now.tv_sec - next.tv_sec) * 1000000000LL + (now.tv_nsec - next.tv_nsec);
		if (late >= (int64_t)f->interval_ms * 1000000LL)
			next = now;
		pthread_mutex_lock(&f->mu);
	}
	pthread_mutex_unlock(&f->mu);
	return NULL;
}

int start_flusher(struct flusher **out, struct kit_store *st, struct kit_db *db,
                  int interval_ms, int max)
{
	*out = NULL;
	if (interval_ms < 1 || max < 1 || max > VIEWS_MAX_BATCH)
		return KIT_DB_ERR;
	struct flusher *f = calloc(1, sizeof *f);
	if (!f)
		return KIT_STORE_NOMEM;
	f->st = st;
	f->db = db;
	f->interval_ms = interval_ms;
	f->max = max;
	pthread_mutex_init(&f->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&f->thread, NULL, flusher_main, f) != 0) {
		pthread_cond_destroy(&f->wake);
		pthread_mutex_destroy(&f->mu);
		free(f);
		return KIT_DB_ERR;
	}
	*out = f;
	return 0;
}

void flusher_stats(struct flusher *f, struct flusher_stats *out)
{
	pthread_mutex_lock(&f->mu);
	*out = f->stats;
	pthread_mutex_unlock(&f->mu);
}

int stop_flusher(struct flusher *f)
{
	if (!f)
		return 0;
	pthread_mutex_lock(&f->mu);
	f->stopping = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->mu);
	pthread_join(f->thread, NULL);

	/* the thread is gone: what is left is flushed from here */
	int64_t r, dirty = 0;
	do {
		r = flush_counted(f);
		if (r >= 0)
			r = kit_store_scard(f->st, VIEWS_DIRTY, &dirty);
	} while (r == 0 && dirty > 0);
	pthread_cond_destroy(&f->wake);
	pthread_mutex_destroy(&f->mu);
	free(f);
	return (int)r;
}
