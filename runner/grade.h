/*
 * grade.h: `hotrow lab grade`, every lab (or one) checked and scored.
 *
 * One point per check expected (read before anything runs, so a crash or
 * an early exit fails the rest and never lowers the maximum). Checks
 * skipped for a missing engine (PostgreSQL without a server) count for
 * nothing; a check skipped for a reason of its own ("the direct checks
 * must pass first") counts as not earned. MariaDB is optional: its checks
 * skipped for want of a server are out of the maximum, and the table and
 * results.json's output say which engines ran. A lab that does not compile
 * scores 0 of its checks (0 of 1 when even their list is missing). Prints an xv6-style table, then writes
 *   DIR/junit.xml     JUnit XML: a testsuite per lab, a testcase per check
 *   DIR/results.json  Gradescope's format: {"score", "max_score", "output",
 *                     "tests": [{"name", "score", "max_score", "status",
 *                     "output"}]}
 *
 * Interface:
 *   int rc = runner_grade(&tree, NULL or one lab, "out/dir" or NULL for .hotrow/grade,
 *                    &opts);
 */
#ifndef HOTROW_RUNNER_GRADE_H
#define HOTROW_RUNNER_GRADE_H

#include "runner/check.h"

/* Grade every lab, or only `only` when it is not NULL. Returns the exit
 * code: 0 full marks, 1 otherwise or when the reports cannot be written.
 * Records each lab's progress, as a check does (not with --solutions). */
int runner_grade(const struct runner_tree *t, const struct runner_lab *only, const char *out,
              const struct runner_opts *o);

#endif
