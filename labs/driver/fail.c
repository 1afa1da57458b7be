/*
 * fail.c: one line for a driver's first error. See fail.h.
 */
#include <stdio.h>
#include <string.h>

#include "labs/driver/fail.h"

int drv_fail(const char *cmd, const char *what, const char *msg)
{
	if (!msg || !msg[0])
		msg = "failed without a message";
	int len = (int)strcspn(msg, "\n");
	while (len > 0 && (msg[len - 1] == ' ' || msg[len - 1] == '\t'))
		len--;
	fprintf(stderr, "%s: %s%s%.*s\n", cmd, what ? what : "", what ? ": " : "", len, msg);
	return 1;
}

int drv_fail_db(const char *cmd, const char *what, const struct kit_db *db)
{
	const char *msg = db ? kit_db_errmsg(db) : NULL;
	if (!msg || !msg[0])   /* the lab's code returned an error and said nothing */
		msg = "failed without a database error (is the lab's code still a TODO?)";
	if (db && !kit_db_connected(db)) {
		char line[256];
		snprintf(line, sizeof line, "the database went away%s%s", what ? ": " : "",
		         what ? what : "");
		return drv_fail(cmd, line, msg);
	}
	return drv_fail(cmd, what, msg);
}
