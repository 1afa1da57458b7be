/*
 * db_mysql.c: kit/db_mysql.h over libmariadb.
 *
 * Statements with parameters go through the binary protocol (prepare,
 * bind, execute, fetch into text); those without go through the text
 * protocol, which also runs several statements separated by ';'. The
 * connection keeps autocommit on, so a statement outside BEGIN ... COMMIT
 * commits by itself, as on the other engines.
 */
#include "kit/db_mysql.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/socket.h>

#include <mysql.h>
#include <mysqld_error.h>
#include <errmsg.h>

#define CONNECT_TIMEOUT_S 5u

struct kit_my {
	MYSQL *conn;
	bool lost;      /* the server went away: no statement will work */
	bool failed;    /* a busy error ended the transaction; until ROLLBACK/COMMIT */
};

static void cause(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cause(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The kit's code for a server or client error number. */
static int code_of(unsigned no)
{
	switch (no) {
	case ER_LOCK_DEADLOCK:            /* 1213 */
	case ER_LOCK_WAIT_TIMEOUT:        /* 1205 */
		return KIT_DB_BUSY;
	case ER_DUP_ENTRY:                /* 1062 */
	case ER_DUP_ENTRY_WITH_KEY_NAME:
	case ER_BAD_NULL_ERROR:           /* 1048 */
	case ER_NO_REFERENCED_ROW:
	case ER_ROW_IS_REFERENCED:
	case ER_NO_REFERENCED_ROW_2:      /* 1452 */
	case ER_ROW_IS_REFERENCED_2:      /* 1451 */
	case ER_CONSTRAINT_FAILED:        /* 4025, CHECK */
		return KIT_DB_CONSTRAINT;
	default:
		return KIT_DB_ERR;
	}
}

/* After a failed call: note a lost connection, end a transaction that a
 * busy error failed, write the cause and return the kit's code. */
static int fail(struct kit_my *my, unsigned no, const char *sqlstate, const char *msg,
                bool was_in_tx, char *err, size_t errlen)
{
	if (no == CR_SERVER_GONE_ERROR || no == CR_SERVER_LOST || no == CR_CONN_HOST_ERROR ||
	    no == CR_CONNECTION_ERROR)
		my->lost = true;
	int rc = code_of(no);
	const char *ended = "";
	if (rc == KIT_DB_BUSY && was_in_tx && !my->lost) {
		/* A lock wait timeout undid only the statement; undo the rest so
		 * the transaction ends as it does after a deadlock. */
		mysql_query(my->conn, "ROLLBACK");
		my->failed = true;
		ended = "; the transaction was rolled back: ROLLBACK (or COMMIT) to end it";
	}
	cause(err, errlen, "ERROR %u (%s): %s%s", no, sqlstate, msg, ended);
	return rc;
}

static int conn_fail(struct kit_my *my, bool was_in_tx, char *err, size_t errlen)
{
	return fail(my, mysql_errno(my->conn), mysql_sqlstate(my->conn), mysql_error(my->conn),
	            was_in_tx, err, errlen);
}

static int stmt_fail(struct kit_my *my, MYSQL_STMT *st, bool was_in_tx, char *err, size_t errlen)
{
	return fail(my, mysql_stmt_errno(st), mysql_stmt_sqlstate(st), mysql_stmt_error(st),
	            was_in_tx, err, errlen);
}

static bool server_in_tx(const struct kit_my *my)
{
	unsigned status = 0;
	if (mariadb_get_infov(my->conn, MARIADB_CONNECTION_SERVER_STATUS, &status) != 0)
		return false;
	return (status & SERVER_STATUS_IN_TRANS) != 0;
}

int kit_my_in_tx(const struct kit_my *my)
{
	return my->failed || (!my->lost && server_in_tx(my));
}

void kit_my_fail_tx(struct kit_my *my)
{
	if (my->lost || my->failed || !server_in_tx(my))
		return;
	mysql_query(my->conn, "ROLLBACK");
	my->failed = true;
}

int kit_my_connected(const struct kit_my *my)
{
	return my && my->conn && !my->lost;
}

void kit_my_sever(struct kit_my *my)
{
	if (!my || !my->conn || my->lost)
		return;
	my_socket fd = mysql_get_socket(my->conn);
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	my->lost = true;
}

/* ---- the URL ---- */

int kit_my_url(const char *url)
{
	return strncmp(url, "mysql://", 8) == 0 || strncmp(url, "mariadb://", 10) == 0;
}

/* Copy s[0..n) into out (len bytes), decoding %XX; false if it does not fit
 * or an escape is broken. */
static bool decode(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) || !isxdigit((unsigned char)s[i + 2]))
				return false;
			char hex[3] = { s[i + 1], s[i + 2], '\0' };
			c = (char)strtol(hex, NULL, 16);
			i += 2;
		}
		if (o + 1 >= len)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return true;
}

struct my_url {
	char user[128], pass[128], host[256], db[128], socket[256];
	unsigned port;
	bool has_pass;
};

/* Parse mysql://[USER[:PASS]@][HOST][:PORT]/DB[?socket=PATH]. */
static bool parse_url(const char *url, struct my_url *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof *u);
	const char *p = strstr(url, "://") + 3;
	const char *slash = strchr(p, '/');
	const char *q = strchr(p, '?');
	if (slash == NULL || (q && q < slash)) {
		cause(err, errlen, "no database in the URL (use mysql://USER@HOST/DATABASE?socket=PATH)");
		return false;
	}
	const char *at = memchr(p, '@', (size_t)(slash - p));
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		const char *uend = colon ? colon : at;
		if (!decode(p, (size_t)(uend - p), u->user, sizeof u->user) ||
		    (colon && !decode(colon + 1, (size_t)(at - colon - 1), u->pass, sizeof u->pass)))
			goto bad;
		u->has_pass = colon != NULL;
		p = at + 1;
	}
	const char *colon = memchr(p, ':', (size_t)(slash - p));
	const char *hend = colon ? colon : slash;
	if (!decode(p, (size_t)(hend - p), u->host, sizeof u->host))
		goto bad;
	if (colon) {
		char *end;
		errno = 0;
		long port = strtol(colon + 1, &end, 10);
		if (end != slash || errno || port <= 0 || port > 65535) {
			cause(err, errlen, "bad port in the URL");
			return false;
		}
		u->port = (unsigned)port;
	}
	const char *dend = q ? q : slash + strlen(slash);
	if (!decode(slash + 1, (size_t)(dend - slash - 1), u->db, sizeof u->db) || !u->db[0]) {
		cause(err, errlen, "no database in the URL (use mysql://USER@HOST/DATABASE?socket=PATH)");
		return false;
	}
	for (const char *k = q ? q + 1 : NULL; k && *k;) {
		const char *amp = strchr(k, '&');
		size_t n = amp ? (size_t)(amp - k) : strlen(k);
		if (strncmp(k, "socket=", 7) == 0) {
			if (!decode(k + 7, n - 7, u->socket, sizeof u->socket))
				goto bad;
		} else {
			cause(err, errlen, "unknown setting \"%.*s\" in the URL (only socket=PATH)",
			      (int)strcspn(k, "=&"), k);
			return false;
		}
		k = amp ? amp + 1 : NULL;
	}
	return true;
bad:
	cause(err, errlen, "a piece of the URL is too long or badly %%-encoded");
	return false;
}

int kit_my_open(struct kit_my **out, const char *url, char *err, size_t errlen)
{
	struct kit_my *my = calloc(1, sizeof *my);
	*out = my;
	if (my == NULL) {
		cause(err, errlen, "out of memory");
		return KIT_DB_ERR;
	}
	struct my_url u;
	if (!parse_url(url, &u, err, errlen))
		return KIT_DB_ERR;
	my->conn = mysql_init(NULL);
	if (my->conn == NULL) {
		cause(err, errlen, "out of memory");
		return KIT_DB_ERR;
	}
	unsigned timeout = CONNECT_TIMEOUT_S;
	mysql_optionsv(my->conn, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_optionsv(my->conn, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	/* A client must not reconnect on its own: a silent new session would
	 * lose the transaction and the lock timeout without a word. */
	my_bool no = 0;
	mysql_optionsv(my->conn, MYSQL_OPT_RECONNECT, &no);
	if (u.socket[0]) {
		unsigned proto = MYSQL_PROTOCOL_SOCKET;
		mysql_optionsv(my->conn, MYSQL_OPT_PROTOCOL, &proto);
	}
	if (!mysql_real_connect(my->conn, u.host[0] ? u.host : "localhost",
	                        u.user[0] ? u.user : NULL, u.has_pass ? u.pass : NULL, u.db,
	                        u.port, u.socket[0] ? u.socket : NULL,
	                        CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS)) {
		cause(err, errlen, "cannot connect: %s", mysql_error(my->conn));
		my->lost = true;
		return KIT_DB_ERR;
	}
	return 0;
}

void kit_my_close(struct kit_my *my)
{
	if (my == NULL)
		return;
	if (my->conn)
		mysql_close(my->conn);
	free(my);
}

/* ---- placeholders ---- */

/* Where a quoted run or comment starting at s ends (the byte after it), or
 * s itself when none starts there. Backslash escapes count inside quotes,
 * as they do in MariaDB's default sql_mode. */
static const char *skip_quoted(const char *s)
{
	if (*s == '\'' || *s == '"' || *s == '`') {
		char q = *s++;
		while (*s) {
			if (*s == '\\' && q != '`' && s[1])
				s += 2;
			else if (*s == q && s[1] == q)
				s += 2;
			else if (*s == q)
				return s + 1;
			else
				s++;
		}
		return s;
	}
	if ((s[0] == '-' && s[1] == '-' && (s[2] == ' ' || s[2] == '\t' || s[2] == '\n')) || s[0] == '#') {
		while (*s && *s != '\n')
			s++;
		return s;
	}
	if (s[0] == '/' && s[1] == '*') {
		const char *e = strstr(s + 2, "*/");
		return e ? e + 2 : s + strlen(s);
	}
	return s;
}

/* Rewrite sql's $N into "?" in *out (malloc'd; the caller frees), the
 * parameter behind each "?" into (*order)[i] (0-based), their count into
 * *nmarks. Checks that the statement uses exactly $1..$nparams. */
static int rewrite(const char *sql, int nparams, char **out, int **order, int *nmarks,
                   char *err, size_t errlen)
{
	size_t len = strlen(sql);
	char *s = malloc(len + 1);
	int *ord = malloc((len / 2 + 1) * sizeof *ord);
	bool *used = calloc((size_t)nparams + 1, sizeof *used);
	if (!s || !ord || !used) {
		free(s), free(ord), free(used);
		cause(err, errlen, "out of memory");
		return KIT_DB_ERR;
	}
	size_t o = 0;
	int n = 0, top = 0;
	for (const char *p = sql; *p;) {
		const char *e = skip_quoted(p);
		if (e != p) {
			memcpy(s + o, p, (size_t)(e - p));
			o += (size_t)(e - p);
			p = e;
		} else if (*p == '$' && isdigit((unsigned char)p[1])) {
			char *end;
			long k = strtol(p + 1, &end, 10);
			if (k < 1 || k > 65535) {
				free(s), free(ord), free(used);
				cause(err, errlen, "placeholder $%ld: numbers start at $1", k);
				return KIT_DB_ERR;
			}
			if (k > top)
				top = (int)k;
			if (k <= nparams)
				used[k] = true;
			ord[n++] = (int)k - 1;
			s[o++] = '?';
			p = end;
		} else if (*p == '?') {
			free(s), free(ord), free(used);
			cause(err, errlen, "a \"?\" placeholder: write $1, $2, ... as on the other engines");
			return KIT_DB_ERR;
		} else {
			s[o++] = *p++;
		}
	}
	s[o] = '\0';
	int rc = 0;
	if (top != nparams) {
		cause(err, errlen, "%d parameter%s given, but the statement uses %d",
		      nparams, nparams == 1 ? "" : "s", top);
		rc = KIT_DB_ERR;
	}
	for (int k = 1; rc == 0 && k <= nparams; k++)
		if (!used[k]) {
			cause(err, errlen, "parameter $%d is given but the statement does not use it", k);
			rc = KIT_DB_ERR;
		}
	free(used);
	if (rc != 0) {
		free(s), free(ord);
		return rc;
	}
	*out = s;
	*order = ord;
	*nmarks = n;
	return 0;
}

/* ---- statements ---- */

/* Statements that end a transaction, and what a failed one allows. */
static bool starts_with(const char *sql, const char *word)
{
	while (isspace((unsigned char)*sql))
		sql++;
	size_t n = strlen(word);
	return strncasecmp(sql, word, n) == 0 && !isalnum((unsigned char)sql[n]) && sql[n] != '_';
}

/* Refuse a statement in a failed transaction (true: refused), and end the
 * failed state on ROLLBACK. */
static bool refused_after_failure(struct kit_my *my, const char *sql, char *err, size_t errlen)
{
	if (!my->failed)
		return false;
	if (starts_with(sql, "ROLLBACK") && !strcasestr(sql, " TO ")) {
		my->failed = false;
		return false;
	}
	cause(err, errlen, "the transaction failed earlier and was rolled back: "
	      "statements are refused until ROLLBACK");
	return true;
}

/* Prepare and execute sql with its parameters; *out the statement, open. */
static int stmt_run(struct kit_my *my, const char *sql, int nparams, const char *const *params,
                    MYSQL_STMT **out, char *err, size_t errlen)
{
	char *q;
	int *order, n;
	*out = NULL;
	int rc = rewrite(sql, nparams, &q, &order, &n, err, errlen);
	if (rc != 0)
		return rc;
	bool was_in_tx = server_in_tx(my);
	MYSQL_STMT *st = mysql_stmt_init(my->conn);
	MYSQL_BIND *b = calloc((size_t)n + 1, sizeof *b);
	long long *ints = calloc((size_t)n + 1, sizeof *ints);
	if (!st || !b || !ints) {
		cause(err, errlen, "out of memory");
		rc = KIT_DB_ERR;
		goto out;
	}
	if (mysql_stmt_prepare(st, q, (unsigned long)strlen(q)) != 0) {
		rc = stmt_fail(my, st, was_in_tx, err, errlen);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *v = params[order[i]];
		if (v == NULL) {
			b[i].buffer_type = MYSQL_TYPE_NULL;
		} else if (kit_db_plain_integer(v)) {
			ints[i] = strtoll(v, NULL, 10);
			b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			b[i].buffer = &ints[i];
		} else {
			b[i].buffer_type = MYSQL_TYPE_STRING;
			b[i].buffer = (void *)v;
			b[i].buffer_length = (unsigned long)strlen(v);
		}
	}
	if ((n > 0 && mysql_stmt_bind_param(st, b) != 0) || mysql_stmt_execute(st) != 0) {
		rc = stmt_fail(my, st, was_in_tx, err, errlen);
		goto out;
	}
	*out = st;
	st = NULL;
out:
	if (st)
		mysql_stmt_close(st);
	free(b), free(ints), free(q), free(order);
	return rc;
}

/* Fetch st's rows as text, calling row for each (row NULL: just drain). */
static int stmt_rows(struct kit_my *my, MYSQL_STMT *st, kit_db_row_fn *row, void *arg,
                     char *err, size_t errlen)
{
	MYSQL_RES *meta = mysql_stmt_result_metadata(st);
	if (meta == NULL)
		return 0;   /* no result set */
	unsigned ncols = mysql_num_fields(meta);
	mysql_free_result(meta);
	MYSQL_BIND *b = calloc(ncols + 1, sizeof *b);
	unsigned long *lens = calloc(ncols + 1, sizeof *lens);
	my_bool *nulls = calloc(ncols + 1, sizeof *nulls);
	char **bufs = calloc(ncols + 1, sizeof *bufs);
	size_t *caps = calloc(ncols + 1, sizeof *caps);
	const char **vals = calloc(ncols + 1, sizeof *vals);
	int rc = 0;
	if (!b || !lens || !nulls || !bufs || !caps || !vals) {
		cause(err, errlen, "out of memory");
		rc = KIT_DB_ERR;
		goto out;
	}
	/* Fetch with no room first: the lengths come back, then each column
	 * is fetched again into a buffer that fits, converted to text. */
	for (unsigned i = 0; i < ncols; i++) {
		b[i].buffer_type = MYSQL_TYPE_STRING;
		b[i].length = &lens[i];
		b[i].is_null = &nulls[i];
	}
	if (mysql_stmt_bind_result(st, b) != 0 || mysql_stmt_store_result(st) != 0) {
		rc = stmt_fail(my, st, false, err, errlen);
		goto out;
	}
	for (;;) {
		int f = mysql_stmt_fetch(st);
		if (f == MYSQL_NO_DATA)
			break;
		if (f == 1) {
			rc = stmt_fail(my, st, false, err, errlen);
			goto out;
		}
		for (unsigned i = 0; i < ncols; i++) {
			vals[i] = NULL;
			if (nulls[i])
				continue;
			if (caps[i] < lens[i] + 1) {
				char *nb = realloc(bufs[i], lens[i] + 1);
				if (nb == NULL) {
					cause(err, errlen, "out of memory");
					rc = KIT_DB_ERR;
					goto out;
				}
				bufs[i] = nb;
				caps[i] = lens[i] + 1;
			}
			MYSQL_BIND one = { 0 };
			unsigned long got = 0;
			one.buffer_type = MYSQL_TYPE_STRING;
			one.buffer = bufs[i];
			one.buffer_length = caps[i];
			one.length = &got;
			if (mysql_stmt_fetch_column(st, &one, i, 0) != 0) {
				rc = stmt_fail(my, st, false, err, errlen);
				goto out;
			}
			bufs[i][got < caps[i] ? got : caps[i] - 1] = '\0';
			vals[i] = bufs[i];
		}
		if (row && (rc = row(arg, (int)ncols, vals)) != 0)
			goto out;
	}
out:
	if (bufs)
		for (unsigned i = 0; i < ncols; i++)
			free(bufs[i]);
	free(b), free(lens), free(nulls), free(bufs), free(caps), free(vals);
	mysql_stmt_free_result(st);
	return rc;
}

/* Walk a text-protocol result (row NULL: just drain it). */
static int text_rows(MYSQL_RES *res, kit_db_row_fn *row, void *arg, char *err, size_t errlen)
{
	unsigned ncols = mysql_num_fields(res);
	MYSQL_ROW r;
	int rc = 0;
	/* The row's values with a NULL after them (kit/db.h), as the others. */
	const char **vals = row ? calloc(ncols + 1, sizeof *vals) : NULL;
	if (row && vals == NULL) {
		cause(err, errlen, "out of memory");
		rc = KIT_DB_ERR;
	}
	while ((r = mysql_fetch_row(res)) != NULL)
		if (row && rc == 0) {
			memcpy(vals, r, ncols * sizeof *vals);
			rc = row(arg, (int)ncols, vals);
		}
	free(vals);
	return rc;
}

/* Run sql (no parameters) through the text protocol: every statement of
 * it, every result drained, row called for each row of each result. */
static int text_run(struct kit_my *my, const char *sql, kit_db_row_fn *row, void *arg,
                    int64_t *changes, char *err, size_t errlen)
{
	bool was_in_tx = server_in_tx(my);
	if (mysql_real_query(my->conn, sql, (unsigned long)strlen(sql)) != 0)
		return conn_fail(my, was_in_tx, err, errlen);
	int stop = 0, more;
	do {
		MYSQL_RES *res = mysql_store_result(my->conn);
		if (res) {
			if (stop == 0)
				stop = text_rows(res, row, arg, err, errlen);
			else
				text_rows(res, NULL, NULL, err, errlen);
			mysql_free_result(res);
		} else if (mysql_field_count(my->conn) != 0) {
			return conn_fail(my, was_in_tx, err, errlen);
		} else if (changes) {
			*changes = (int64_t)mysql_affected_rows(my->conn);
		}
		more = mysql_next_result(my->conn);
		if (more > 0)
			return conn_fail(my, was_in_tx, err, errlen);
	} while (more == 0);
	return stop;
}

/* One statement, either protocol: rows to row (NULL: drained), the
 * affected rows to *changes (NULL: not wanted). */
static int run(struct kit_my *my, const char *sql, int nparams, const char *const *params,
               kit_db_row_fn *row, void *arg, int64_t *changes, char *err, size_t errlen)
{
	if (refused_after_failure(my, sql, err, errlen))
		return KIT_DB_ERR;
	if (nparams == 0)
		return text_run(my, sql, row, arg, changes, err, errlen);
	MYSQL_STMT *st;
	int rc = stmt_run(my, sql, nparams, params, &st, err, errlen);
	if (rc != 0)
		return rc;
	if (changes)
		*changes = (int64_t)mysql_stmt_affected_rows(st);
	rc = stmt_rows(my, st, row, arg, err, errlen);
	mysql_stmt_close(st);
	return rc;
}

int kit_my_exec(struct kit_my *my, const char *sql, int nparams, const char *const *params,
                int64_t *changes, char *err, size_t errlen)
{
	return run(my, sql, nparams, params, NULL, NULL, changes, err, errlen);
}

int kit_my_query(struct kit_my *my, const char *sql, int nparams, const char *const *params,
                 kit_db_row_fn *row, void *arg, char *err, size_t errlen)
{
	return run(my, sql, nparams, params, row, arg, NULL, err, errlen);
}

int kit_my_commit(struct kit_my *my, char *err, size_t errlen)
{
	if (my->failed) {
		my->failed = false;
		cause(err, errlen, "the transaction had already failed, so COMMIT rolled it back");
		return KIT_DB_ERR;
	}
	int64_t ignored;
	int rc = text_run(my, "COMMIT", NULL, NULL, &ignored, err, errlen);
	/* A COMMIT that failed leaves nothing open, as on the other engines. */
	if (rc != 0 && !my->lost && server_in_tx(my))
		mysql_query(my->conn, "ROLLBACK");
	my->failed = false;
	return rc;
}

int kit_my_set_lock_timeout(struct kit_my *my, int ms, char *err, size_t errlen)
{
	char sql[80];
	if (ms == 0)
		snprintf(sql, sizeof sql, "SET SESSION innodb_lock_wait_timeout = DEFAULT");
	else
		snprintf(sql, sizeof sql, "SET SESSION innodb_lock_wait_timeout = %d", (ms + 999) / 1000);
	int64_t ignored;
	return text_run(my, sql, NULL, NULL, &ignored, err, errlen);
}
