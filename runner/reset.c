/*
 * reset.c: pristine copies of the skeletons, backups, and reset.
 * See reset.h for where the skeleton comes from.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runner/files.h"
#include "runner/proc.h"
#include "runner/reset.h"

/* Export HEAD:exercises/NAME/ into dst (or, when count_only, only count
 * its files; dst.list is still used as scratch). Returns the number of
 * files, 0 when git does not track it (or is missing), -1 on a write
 * error. */
static int git_export(const struct runner_tree *t, const struct runner_lab *l, const char *rev,
                      const char *dst, int count_only)
{
	char list[PATH_MAX + 16], pathspec[128];
	snprintf(list, sizeof list, "%s.list", dst);
	snprintf(pathspec, sizeof pathspec, "exercises/%s/", l->name);
	int fd = open(list, O_RDWR | O_CREAT | O_TRUNC, 0666);
	if (fd < 0)
		return -1;
	char *ls[] = {"git", "ls-tree", "--name-only", (char *)rev, "--", pathspec, NULL};
	int rc = runner_proc_to_fd(t->root, ls, fd, 30);
	close(fd);
	FILE *f = rc == 0 ? fopen(list, "r") : NULL;
	int count = 0;
	char line[PATH_MAX];
	while (f && count >= 0 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		const char *base = strrchr(line, '/');
		base = base ? base + 1 : line;
		if (!*base || *base == '.')
			continue;
		if (count_only) {
			count++;
			continue;
		}
		char spec[PATH_MAX + 8], out[PATH_MAX + 260];
		snprintf(spec, sizeof spec, "%s:./%s", rev, line);
		snprintf(out, sizeof out, "%s/%s", dst, base);
		if (count == 0 && mkdir(dst, 0777) != 0 && errno != EEXIST) {
			count = -1;
			break;
		}
		int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		char *show[] = {"git", "show", spec, NULL};
		if (ofd < 0 || runner_proc_to_fd(t->root, show, ofd, 30) != 0)
			count = -1;
		else
			count++;
		if (ofd >= 0)
			close(ofd);
	}
	if (f)
		fclose(f);
	unlink(list);
	return count;
}

/* The commit at HEAD, when exercises/NAME/ is exactly as committed there
 * (so it is the kit's skeleton, not work in progress). Returns 0 or -1. */
static int git_clean_commit(const struct runner_tree *t, const struct runner_lab *l, char *rev, size_t n)
{
	char pathspec[128], out[PATH_MAX];
	snprintf(pathspec, sizeof pathspec, "exercises/%s/", l->name);
	char *diff[] = {"git", "diff", "--quiet", "HEAD", "--", pathspec, NULL};
	char *untracked[] = {"git", "ls-files", "--others", "--exclude-standard", "--", pathspec, NULL};
	char *head[] = {"git", "rev-parse", "--verify", "HEAD", NULL};
	if (runner_path(t, out, sizeof out, ".hotrow/pristine/rev-%s", l->name) != 0)
		return -1;
	int fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -1;
	int rc = -1;
	char b[128] = "";
	if (runner_proc_to_fd(t->root, diff, -1, 30) == 0 &&
	    runner_proc_to_fd(t->root, untracked, fd, 30) == 0 && lseek(fd, 0, SEEK_END) == 0 &&
	    runner_proc_to_fd(t->root, head, fd, 30) == 0 && pread(fd, b, sizeof b - 1, 0) > 0) {
		b[strcspn(b, "\n")] = '\0';
		if (strlen(b) >= 40 && strlen(b) < n) {
			snprintf(rev, n, "%.*s", (int)n - 1, b);
			rc = 0;
		}
	}
	close(fd);
	unlink(out);
	return rc;
}

/* .hotrow/pristine/NAME.commit: the commit whose exercises/NAME/ is the
 * skeleton, recorded the first time the runner saw it untouched. */
static void record_commit(const struct runner_tree *t, const struct runner_lab *l, const char *rev)
{
	char p[PATH_MAX];
	if (runner_path(t, p, sizeof p, ".hotrow/pristine/%s.commit", l->name) != 0)
		return;
	FILE *f = fopen(p, "wx");   /* never replaced: the first record is the one */
	if (f) {
		fprintf(f, "%s\n", rev);
		fclose(f);
	}
}

static int recorded_commit(const struct runner_tree *t, const struct runner_lab *l, char *rev, size_t n)
{
	char p[PATH_MAX], line[128];
	if (runner_path(t, p, sizeof p, ".hotrow/pristine/%s.commit", l->name) != 0)
		return -1;
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int rc = fgets(line, sizeof line, f) && strlen(line) >= 40 ? 0 : -1;
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (rc == 0)
		snprintf(rev, n, "%.*s", (int)n - 1, line);
	return rc;
}

void runner_reset_snapshot(const struct runner_tree *t)
{
	for (size_t i = 0; i < t->nlabs; i++) {
		const struct runner_lab *l = &t->labs[i];
		char pristine[PATH_MAX], ex[PATH_MAX], probe[PATH_MAX];
		struct stat st;
		if (runner_path(t, pristine, sizeof pristine, ".hotrow/pristine/%s", l->name) != 0 ||
		    runner_path(t, ex, sizeof ex, "exercises/%s", l->name) != 0 ||
		    runner_path(t, probe, sizeof probe, ".hotrow/pristine/probe-%s", l->name) != 0)
			continue;
		char commit[PATH_MAX];
		if (stat(pristine, &st) == 0 || stat(ex, &st) != 0 ||
		    (runner_path(t, commit, sizeof commit, ".hotrow/pristine/%s.commit", l->name) == 0 &&
		     stat(commit, &st) == 0))
			continue;
		if (runner_state_dir(t, "pristine") != 0)
			return;
		char rev[64];
		if (git_clean_commit(t, l, rev, sizeof rev) == 0 && git_export(t, l, rev, probe, 1) > 0) {
			record_commit(t, l, rev);   /* git has it, untouched, in rev */
			continue;
		}
		if (git_export(t, l, "HEAD", probe, 1) > 0)
			continue;   /* in git but already changed: no copy is the skeleton */
		if (runner_files_copy(ex, pristine) < 0)
			runner_files_remove(pristine);
	}
}

/* The skeleton by content: each "BLOB NAME" line of labs/NAME/skeleton.sum
 * read from git's objects into dst. Returns the number of files, or 0 when
 * there is no list, no git, or a blob git does not have. */
static int git_blobs(const struct runner_tree *t, const struct runner_lab *l, const char *dst)
{
	char sums[PATH_MAX], line[PATH_MAX];
	if (runner_path(t, sums, sizeof sums, "labs/%s/skeleton.sum", l->name) != 0)
		return 0;
	FILE *f = fopen(sums, "r");
	if (!f)
		return 0;
	int count = 0;
	while (count >= 0 && fgets(line, sizeof line, f)) {
		char blob[64], name[256], out[PATH_MAX + 260];
		if (sscanf(line, "%63[0-9a-f] %255[^\n/]", blob, name) != 2 || name[0] == '.' || strlen(blob) < 40) {
			count = -1;
			break;
		}
		if (count == 0 && mkdir(dst, 0777) != 0 && errno != EEXIST) {
			count = -1;
			break;
		}
		snprintf(out, sizeof out, "%s/%s", dst, name);
		int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		char *cat[] = {"git", "cat-file", "blob", blob, NULL};
		if (ofd < 0 || runner_proc_to_fd(t->root, cat, ofd, 30) != 0)
			count = -1;
		else
			count++;
		if (ofd >= 0)
			close(ofd);
	}
	fclose(f);
	if (count <= 0)
		runner_files_remove(dst);
	return count > 0 ? count : 0;
}

/* Where the skeleton comes from; fills dir (may be a temporary export that
 * the caller removes when *temp). Returns a description, or NULL. */
static const char *find_pristine(const struct runner_tree *t, const struct runner_lab *l, char *dir, size_t n,
                                 int *temp)
{
	char marker[PATH_MAX];
	struct stat st;
	*temp = 0;
	if (runner_path(t, marker, sizeof marker, ".hotrow/pristine/SHIPPED") != 0 ||
	    runner_path(t, dir, n, ".hotrow/pristine/%s", l->name) != 0)
		return NULL;
	int have = stat(dir, &st) == 0;
	if (have && stat(marker, &st) == 0)
		return "the copy shipped in .hotrow/pristine/";
	char tmp[PATH_MAX];
	if (runner_state_dir(t, NULL) == 0 &&
	    runner_path(t, tmp, sizeof tmp, ".hotrow/reset-%s", l->name) == 0) {
		runner_files_remove(tmp);
		static char from[160];
		char rev[64];
		if (git_blobs(t, l, tmp) > 0) {
			snprintf(dir, n, "%s", tmp);
			*temp = 1;
			snprintf(from, sizeof from, "git, by the contents labs/%s/skeleton.sum records", l->name);
			return from;
		}
		if (recorded_commit(t, l, rev, sizeof rev) == 0 && git_export(t, l, rev, tmp, 0) > 0) {
			snprintf(dir, n, "%s", tmp);
			*temp = 1;
			snprintf(from, sizeof from, "git, the kit's commit %.12s", rev);
			return from;
		}
		runner_files_remove(tmp);
	}
	return have ? "the copy saved in .hotrow/pristine/ when the runner first saw the lab" : NULL;
}

static int confirm(const struct runner_lab *l)
{
	char answer[16];
	printf("Put the skeleton back in exercises/%s/? Your files are backed up first. [y/N] ",
	       l->name);
	fflush(stdout);
	if (!fgets(answer, sizeof answer, stdin))
		return 0;
	return answer[0] == 'y' || answer[0] == 'Y';
}

int runner_reset(const struct runner_tree *t, const struct runner_lab *l, int yes)
{
	char src[PATH_MAX], ex[PATH_MAX], backup[PATH_MAX];
	int temp;
	const char *from = find_pristine(t, l, src, sizeof src, &temp);
	if (!from) {
		fprintf(stderr, "hotrow lab reset: no pristine copy of exercises/%s/ (not in git, "
			"none in .hotrow/pristine/); the student kit ships one\n", l->name);
		return 1;
	}
	int rc = 1;
	if (runner_path(t, ex, sizeof ex, "exercises/%s", l->name) != 0)
		goto out;
	if (!runner_files_differ(ex, src)) {
		printf("exercises/%s/ is already the skeleton; nothing to do.\n", l->name);
		rc = 0;
		goto out;
	}
	if (!yes && !isatty(STDIN_FILENO)) {
		fprintf(stderr, "hotrow lab reset: not asking without a terminal; add --yes to reset "
			"exercises/%s/\n", l->name);
		rc = 2;
		goto out;
	}
	if (!yes && !confirm(l)) {
		printf("Left exercises/%s/ as it is.\n", l->name);
		goto out;
	}

	/* Back up everything first; touch nothing unless that worked. */
	char stamp[32];
	time_t now = time(NULL);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime(&now));
	struct stat st;
	if (runner_state_dir(t, "backup") != 0 ||
	    runner_path(t, backup, sizeof backup, ".hotrow/backup/%s-%s", l->name, stamp) != 0)
		goto fail;
	for (int k = 2; stat(backup, &st) == 0 && k < 100; k++)
		runner_path(t, backup, sizeof backup, ".hotrow/backup/%s-%s-%d", l->name, stamp, k);
	int saved = runner_files_copy(ex, backup);
	if (saved < 0)
		goto fail;

	runner_files_clear(ex);
	int restored = runner_files_copy(src, ex);
	if (restored < 0)
		goto fail;
	struct runner_progress p;
	runner_progress_get(t, l, &p);
	p.passed = p.total = 0;
	runner_progress_put(t, l, &p);
	printf("Restored exercises/%s/ (%d file%s) from %s.\nYour version (%d file%s) is in %s/.\n",
	       l->name, restored, restored == 1 ? "" : "s", from, saved, saved == 1 ? "" : "s",
	       backup + strlen(t->root) + 1);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "hotrow lab reset: %s; exercises/%s/ is as it was, or backed up in "
		".hotrow/backup/\n", strerror(errno), l->name);
out:
	if (temp)
		runner_files_remove(src);
	return rc;
}
