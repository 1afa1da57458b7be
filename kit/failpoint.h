/*
 * failpoint.h: named places where a test can crash the process for real.
 *
 * A failpoint is a call kit_fp_hit("after-upsert") left in the code under
 * test. Unarmed (the normal case) it costs one atomic load and returns 0.
 * Armed with "kill" it sends SIGKILL to its own process on the chosen hit:
 * no atexit handlers, no buffers flushed, open transactions abandoned, file
 * locks dropped by the kernel; exactly what a power cut or an OOM kill does
 * to a consumer. Armed with "stop" it stops its own process (SIGSTOP) on
 * that hit, once: the process keeps its locks and connections and goes on
 * where it was when someone sends SIGCONT, as after a long pause. Armed
 * with "error" it makes kit_fp_hit() return -1 from that hit on, for code
 * that wants to simulate a refused call instead; armed with "once" it
 * returns -1 on that hit only (one refused step, the rest untouched).
 *
 * Interface:
 *   // in the code under test
 *   if (kit_fp_hit("after-upsert") != 0) return -1;
 *
 *   // arm it from the environment (read once, on the first kit_fp_ call) ...
 *   HOTROW_FAILPOINTS="after-upsert=kill@2,mid-batch=error" ./consumer
 *   // ... or from code, e.g. in a forked child before it starts working
 *   kit_fp_set("after-upsert", KIT_FP_KILL, 2);   // die on the 2nd hit
 *
 * The table is process-wide and thread-safe; a forked child inherits its
 * parent's table and usually calls kit_fp_clear() before arming its own.
 */
#ifndef HOTROW_KIT_FAILPOINT_H
#define HOTROW_KIT_FAILPOINT_H

enum kit_fp_action {
	KIT_FP_OFF = 0,   /* disarm */
	KIT_FP_KILL,      /* raise(SIGKILL) on the nth hit */
	KIT_FP_ERROR,     /* kit_fp_hit() returns -1 from the nth hit on */
	KIT_FP_STOP,      /* raise(SIGSTOP) on the nth hit only: a stall until SIGCONT */
	KIT_FP_ONCE,      /* kit_fp_hit() returns -1 on the nth hit only */
};

/* The environment variable kit_fp_ reads on first use. */
#define KIT_FP_ENV "HOTROW_FAILPOINTS"

/* Arm (or, with KIT_FP_OFF, disarm) the failpoint called name so that it
 * fires on its nth hit from now (nth >= 1; 1 = the next hit). The name is
 * copied. Returns 0, or -1 when the name is empty or longer than 63 bytes,
 * nth < 1, or the table (32 entries) is full; the table is then unchanged. */
int kit_fp_set(const char *name, enum kit_fp_action action, int nth);

/* Arm every failpoint in spec, the syntax of HOTROW_FAILPOINTS:
 * "NAME=ACTION[@N][,NAME=ACTION[@N]]..." with ACTION kill, error, once,
 * stop or off and
 * N the hit that fires (default 1). Returns 0, or -1 on a malformed spec,
 * in which case nothing at all is armed by this call. */
int kit_fp_parse(const char *spec);

/* Disarm every failpoint and forget their hit counts. The environment is
 * not read again afterwards. */
void kit_fp_clear(void);

/* Pass the failpoint called name. Returns 0 when it does not fire, -1 when
 * an error or once action fires; never returns when a kill action fires. */
int kit_fp_hit(const char *name);

/* How many times the armed failpoint called name has been hit since it was
 * armed; 0 for a name that is not armed. */
long kit_fp_count(const char *name);

#endif
