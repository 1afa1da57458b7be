/*
 * pgbench.c: run pgbench on a custom script and read its report.
 * See bench.h for the interface. pgbench comes with postgresql-client.
 */
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

int bench_pgbench_found(void)
{
	const char *path = getenv("PATH");
	char dir[4096], file[4200];

	if (path == NULL)
		return 0;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(dir, sizeof dir, "%.*s", (int)n, p);
		snprintf(file, sizeof file, "%s/pgbench", dir[0] ? dir : ".");
		if (access(file, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* What to run. Debian's /usr/bin/pgbench is pg_wrapper, a Perl script
 * that picks a version and then runs /usr/lib/postgresql/V/bin/pgbench in
 * the same process: 20 to 80 ms of CPU each run before pgbench starts,
 * which a run's CPU per transaction would count as pgbench's. The newest
 * such binary is what the wrapper picks with no cluster named; run it
 * directly when there is one, else pgbench from PATH. */
static const char *program(char *buf, size_t len)
{
	const char *dir = "/usr/lib/postgresql/";
	glob_t g;
	long best = -1;

	snprintf(buf, len, "pgbench");
	if (glob("/usr/lib/postgresql/*/bin/pgbench", 0, NULL, &g) != 0)
		return buf;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long v = strtol(g.gl_pathv[i] + strlen(dir), NULL, 10);
		if (v > best && access(g.gl_pathv[i], X_OK) == 0) {
			best = v;
			snprintf(buf, len, "%s", g.gl_pathv[i]);
		}
	}
	globfree(&g);
	return buf;
}

/* Read pgbench's report from in into *out, keeping its text in log. */
static int parse(FILE *in, struct bench_pgbench *out, char *log, size_t loglen)
{
	char line[512];
	size_t used = 0;
	bool got_n = false, got_tps = false;
	double v;
	long long n;

	log[0] = '\0';
	while (fgets(line, sizeof line, in)) {
		int len = snprintf(log + used, loglen - used, "%s", line);
		if (len > 0 && used + (size_t)len < loglen)
			used += (size_t)len;
		if (sscanf(line, "number of transactions actually processed: %lld", &n) == 1) {
			out->transactions = n;
			got_n = true;
		} else if (sscanf(line, "number of failed transactions: %lld", &n) == 1) {
			out->failed = n;
		} else if (sscanf(line, "latency average = %lf ms", &v) == 1) {
			out->mean_ms = v;
		} else if (sscanf(line, "tps = %lf (without initial connection time)", &v) == 1) {
			out->tps = v;
			got_tps = true;
		}
	}
	return got_n && got_tps ? 0 : -1;
}

int bench_pgbench_run(const char *url, const char *script, const char *mode, int clients,
                      int seconds, struct bench_pgbench *out, char *log, size_t loglen)
{
	char path[] = "/tmp/hotrow-pgbench-XXXXXX";
	char nclients[16], secs[16], prog[256];
	int fd = mkstemp(path), pipefd[2], status, rc = -1;
	FILE *in;
	pid_t pid;

	memset(out, 0, sizeof *out);
	if (fd < 0) {
		snprintf(log, loglen, "pgbench script: %s\n", strerror(errno));
		return -1;
	}
	if (write(fd, script, strlen(script)) != (ssize_t)strlen(script)) {
		snprintf(log, loglen, "pgbench script: %s\n", strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	snprintf(nclients, sizeof nclients, "%d", clients);
	snprintf(secs, sizeof secs, "%d", seconds);
	program(prog, sizeof prog);
	fflush(NULL);
	if (pipe(pipefd) != 0 || (pid = fork()) < 0) {
		snprintf(log, loglen, "starting pgbench: %s\n", strerror(errno));
		unlink(path);
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execlp(prog, "pgbench", "-n", "-M", mode, "-f", path, "-c", nclients,
		       "-j", nclients, "-T", secs, url, (char *)NULL);
		fprintf(stderr, "cannot run pgbench: %s (it comes with postgresql-client)\n",
			strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	in = fdopen(pipefd[0], "r");
	if (in) {
		rc = parse(in, out, log, loglen);
		fclose(in);
	} else {
		close(pipefd[0]);
		snprintf(log, loglen, "reading pgbench: %s\n", strerror(errno));
	}
	waitpid(pid, &status, 0);
	unlink(path);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		rc = -1;
	return rc;
}
