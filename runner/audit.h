/*
 * audit.h: what a student's code may define and call, read from its
 * sources and its compiled objects before they are linked with the checks.
 *
 * The checks and the student's functions share one process, so a grade
 * means something only when the student's code cannot reach the code that
 * judges it. The audit allows, in each exercises/NN-name/ file:
 *   - global definitions only of names the lab's headers (the .h files of labs/NN-name/)
 *     declare; everything else is static;
 *   - calls and references only to the lab's header names, the kit's API
 *     (the headers in kit/, less the switches the checks use: failpoints, hooks) and a
 *     list of plain libc and pthread functions: strings, memory, formatting
 *     into buffers and onto stdout, numbers, time, sleeping, threads, locks;
 *   - no constructors or destructors (.init_array, .ctors, .preinit_array
 *     and the like), no indirect functions (ifunc), no versioned or unique
 *     symbols, no sections of unknown kind, no system call instructions;
 *   - in the source: no `asm`, and #include only of system headers, the
 *     lab's and the kit's headers, and the exercise's own files.
 * So nothing in an exercise can write on the report channel, call the
 * harness (its skip, its failure handler), replace a libc or cmocka
 * function, start or signal a process, or run before a check calls it.
 * A refused file gets one line naming the file, the symbol and the rule.
 *
 * Interface:
 *   char why[512];
 *   int rc = runner_audit(&tree, lab, "exercises", why, sizeof why);
 *   // 0 allowed; 1 refused (why says what and which rule); -1 not readable (why says)
 *   rc = runner_audit_file(&tree, lab, "x.c", "path/to/x.o", why, sizeof why);
 */
#ifndef HOTROW_RUNNER_AUDIT_H
#define HOTROW_RUNNER_AUDIT_H

#include <stddef.h>

#include "runner/tree.h"

/* Audit every .c file of SIDE/NN-name/ (side "exercises" or "solutions") and its
 * object build/obj/SIDE/NN-name/X.o, which must be built. Returns 0 when
 * all are allowed, 1 when one is refused, -1 when one cannot be read;
 * why gets one line (no newline) unless 0. */
int runner_audit(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                 char *why, size_t n);

/* The sources alone, before anything is compiled (an #include of a device
 * is refused before the compiler reads it). Returns as runner_audit. */
int runner_audit_sources(const struct runner_tree *t, const struct runner_lab *l, const char *side,
                         char *why, size_t n);

/* Audit one source file and its object (either may be NULL) against lab
 * l's rules; returns and fills why as runner_audit does. */
int runner_audit_file(const struct runner_tree *t, const struct runner_lab *l, const char *src,
                      const char *obj, char *why, size_t n);

#endif
