#!/usr/bin/python3
"""bench/seed_loop.py: the constant-rate hot-row model as a plain Python loop,
the second peer of `make bench`.

The first seed text describes the model in a few lines: likes arrive at a
fixed rate, each one takes the lock of a counter row (chosen round-robin
when there are several), keeps it for a fixed time and hands it on in
arrival order. Nothing else happens, so one pass over the requests is
enough: a request starts when both it and its row are ready, and the row is
then busy until that start plus the hold. This is the shape of simulator
people write first, and the baseline hotrow's engine should beat.

Clock in integer microseconds, like hotrow's, so both report the very same
worst wait (for 2,000/s over 1,200 s on one row with 2 ms holds:
3,599,998.5 ms, the last like's wait).

Interface:
    /usr/bin/python3 bench/seed_loop.py [--rps R] [--seconds S] [--rows N]
                                        [--hold-ms H] [--repeat K]
prints one JSON object: requests, best CPU seconds (time.process_time),
requests per CPU second and the worst lock wait in ms. Any python3 will do.
"""
import argparse
import json
import time


def worst_wait_us(rps, seconds, rows, hold_us):
    """Walk every request once; return the longest lock wait in microseconds."""
    busy_until = [0] * rows      # when each row's lock is next free
    longest = 0
    total = int(rps * seconds)
    for n in range(total):
        here = n * 1_000_000 // rps          # constant spacing, exact in µs
        row = n % rows
        begin = busy_until[row] if busy_until[row] > here else here
        if begin - here > longest:
            longest = begin - here
        busy_until[row] = begin + hold_us
    return longest, total


def main():
    p = argparse.ArgumentParser(description="constant-rate hot-row loop (the seed's model)")
    p.add_argument("--rps", type=int, default=2000)
    p.add_argument("--seconds", type=int, default=1200)
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--hold-ms", type=float, default=2.0)
    p.add_argument("--repeat", type=int, default=3, help="best of K runs")
    a = p.parse_args()
    if min(a.rps, a.seconds, a.rows, a.repeat) < 1 or a.hold_ms <= 0:
        p.error("--rps, --seconds, --rows, --repeat and --hold-ms must be positive")

    hold_us = round(a.hold_ms * 1000)
    best = None
    for _ in range(a.repeat):
        t0 = time.process_time()
        worst, total = worst_wait_us(a.rps, a.seconds, a.rows, hold_us)
        cpu = time.process_time() - t0
        if best is None or cpu < best:
            best = cpu
    print(json.dumps({
        "peer": "python-loop",
        "requests": total,
        "cpu_s": best,
        "requests_per_cpu_s": total / best if best > 0 else None,
        "worst_wait_ms": worst / 1000.0,
    }))


if __name__ == "__main__":
    main()
