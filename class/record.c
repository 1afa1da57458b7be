/*
 * record.c: the student's side of class mode (see class.h): their results
 * and their exercise files into hotrow_class, through the functions init
 * made. Quiet unless the URL names a class role and the write fails.
 *
 * Nothing here is trusted by the instructor: it runs on the student's
 * machine, with the student's code linked into the checks. The server's
 * functions check who calls, the lab and the numbers; the instructor's
 * tools show these results as self-reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "class/class.h"
#include "class/class_impl.h"
#include "kit/db.h"

/* The server behind url, when it is PostgreSQL and url's role is a
 * student of a class there (hotrow_class.record may be executed); NULL
 * otherwise. */
static struct kit_db *open_class(const char *url)
{
	if (url == NULL || *url == '\0' || strncmp(url, "sqlite:", 7) == 0)
		return NULL;
	struct kit_db *db;
	int64_t ours = 0;
	if (kit_db_open(&db, url) != 0 || kit_db_engine(db) != KIT_DB_POSTGRES ||
	    kit_db_query_int(db, "SELECT pg_catalog.count(*) FROM pg_catalog.pg_proc p"
	                     " JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
	                     " WHERE n.nspname = 'hotrow_class' AND p.proname = 'record'"
	                     " AND pg_catalog.has_function_privilege(p.oid, 'EXECUTE')",
	                     0, NULL, &ours) != 0 || !ours) {
		kit_db_close(db);
		return NULL;
	}
	return db;
}

int class_record(const char *url, const char *lab, int passed, int total)
{
	/* class_rebuild's runs are the instructor's, not the student's own */
	const char *quiet = getenv("HOTROW_CLASS_NO_RECORD");
	struct kit_db *db = quiet && *quiet ? NULL : open_class(url);
	if (!db)
		return 0;   /* not a class role, or no server: nothing to record */
	char p[16], t[16];
	snprintf(p, sizeof p, "%d", passed);
	snprintf(t, sizeof t, "%d", total);
	int rc = kit_db_exec(db, "SELECT hotrow_class.record($1, $2::int, $3::int)",
	                     3, (const char *[]){lab, p, t});
	if (rc != 0)
		fprintf(stderr, "hotrow: could not record the result for the class: %s\n", kit_db_errmsg(db));
	kit_db_close(db);
	return rc == 0 ? 1 : -1;
}

/* A file's bytes as bytea's hex input, "\x..."; malloc'ed, or NULL (said). */
static char *read_hex(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "hotrow class submit: %s is not a regular file\n", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (st.st_size > CLASS_SUBMIT_FILE_BYTES) {
		fprintf(stderr, "hotrow class submit: %s holds %lld bytes; a file may hold %d\n",
		        path, (long long)st.st_size, CLASS_SUBMIT_FILE_BYTES);
		close(fd);
		return NULL;
	}
	unsigned char *raw = malloc((size_t)st.st_size + 1);
	char *hex = malloc(2 * (size_t)st.st_size + 3);
	ssize_t n = raw && hex ? read(fd, raw, (size_t)st.st_size + 1) : -1;
	close(fd);
	if (n < 0 || n != st.st_size) {
		fprintf(stderr, "hotrow class submit: cannot read %s%s\n", path,
		        n < 0 ? "" : " (it changed while read)");
		free(raw);
		free(hex);
		return NULL;
	}
	static const char digits[] = "0123456789abcdef";
	hex[0] = '\\', hex[1] = 'x';
	for (ssize_t i = 0; i < n; i++) {
		hex[2 + 2 * i] = digits[raw[i] >> 4];
		hex[3 + 2 * i] = digits[raw[i] & 15];
	}
	hex[2 + 2 * n] = '\0';
	free(raw);
	*size = (size_t)n;
	return hex;
}

static int exercise_file(const char *name)
{
	size_t n = strlen(name);
	return name[0] != '.' && n > 2 && n <= 64 && name[n - 2] == '.' &&
	       (name[n - 1] == 'c' || name[n - 1] == 'h');
}

int class_submit(const char *url, const char *lab, const char *dir)
{
	struct kit_db *db = open_class(url);
	if (!db) {
		fprintf(stderr, "hotrow class submit: HOTROW_PG_URL does not name a student of a class "
		        "(use the URL your instructor gave you)\n");
		return 1;
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "hotrow class submit: cannot read %s: %s\n", dir, strerror(errno));
		kit_db_close(db);
		return 1;
	}
	int rc = kit_db_begin(db) != 0 ||
	         kit_db_exec(db, "SELECT hotrow_class.submit_clear($1)", 1, (const char *[]){lab}) != 0;
	int files = 0;
	size_t bytes = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (!exercise_file(e->d_name))
			continue;
		char path[4096];
		size_t size = 0;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		char *hex = read_hex(path, &size);
		if (!hex) {
			rc = 2;
			break;
		}
		if (kit_db_exec(db, "SELECT hotrow_class.submit_file($1, $2, $3::bytea)", 3,
		                (const char *[]){lab, e->d_name, hex}) != 0)
			rc = 1;
		free(hex);
		files++;
		bytes += size;
	}
	closedir(d);
	if (rc == 0 && files == 0) {
		fprintf(stderr, "hotrow class submit: %s holds no .c or .h file\n", dir);
		rc = 2;
	}
	if (rc == 0 && kit_db_commit(db) != 0)
		rc = 1;
	if (rc == 1)
		fprintf(stderr, "hotrow class submit: %s\n", kit_db_errmsg(db));
	if (rc != 0)
		kit_db_rollback(db);
	else
		printf("submitted %s: %d file(s), %zu bytes; your instructor's `class grade --rebuild` "
		       "builds and checks them\n", lab, files, bytes);
	kit_db_close(db);
	return rc ? 1 : 0;
}
