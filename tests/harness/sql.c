/*
 * sql.c: a statement's first words and the names in it, read the way
 * the server's parser reads them (sql.h).
 */
#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "tests/harness/sql.h"

/* sql past blanks and comments. An unterminated comment runs to the end,
 * as it does for the server (which then refuses the statement). */
static const char *skip_space(const char *sql)
{
	for (;;) {
		while (isspace((unsigned char)*sql))
			sql++;
		if (sql[0] == '-' && sql[1] == '-') {
			sql += strcspn(sql, "\n");
		} else if (sql[0] == '/' && sql[1] == '*') {
			const char *end = strstr(sql + 2, "*/");
			sql = end ? end + 2 : sql + strlen(sql);
		} else {
			return sql;
		}
	}
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

const char *lt_sql_verb(const char *sql)
{
	if (sql == NULL)
		return "";
	for (sql = skip_space(sql); *sql == '('; sql = skip_space(sql + 1))
		;
	return sql;
}

bool lt_sql_is(const char *sql, const char *words)
{
	if (sql == NULL)
		return false;
	sql = lt_sql_verb(sql);
	while (*words) {
		size_t n = strcspn(words, " ");
		if (strncasecmp(sql, words, n) != 0 || word_char(sql[n]))
			return false;
		sql += n;
		words += n;
		if (*words == ' ') {
			const char *next = skip_space(sql);
			if (next == sql)
				return false;
			sql = next;
			words++;
		}
	}
	return true;
}

bool lt_sql_names(const char *sql, const char *name)
{
	size_t n = strlen(name);
	if (sql == NULL || n == 0)
		return false;
	char quote = 0;
	for (const char *p = sql; *p; p++) {
		/* a comment names nothing: past it, and the blanks after it */
		if (quote == 0 && ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*'))) {
			p = skip_space(p) - 1;
			continue;
		}
		if (strncasecmp(p, name, n) == 0 && (p == sql || !word_char(p[-1])) && !word_char(p[n]))
			return true;
		if (*p == '\'' || *p == '"' || *p == '`')
			quote = quote == 0 ? *p : quote == *p ? 0 : quote;
	}
	return false;
}
