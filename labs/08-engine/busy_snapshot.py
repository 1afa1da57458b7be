#!/usr/bin/env python3
"""labs/08-engine/busy_snapshot.py: SQLite's counterpart of a serialization
failure. Connection A opens a read transaction (BEGIN, then a SELECT: its
snapshot), connection B commits an update, then A tries to write on top of
its old snapshot. SQLite refuses with SQLITE_BUSY_SNAPSHOT (code 517); the
only way out is to roll back and start again. Uses a throwaway file."""
import argparse
import os
import sqlite3
import tempfile

argparse.ArgumentParser(
    prog="labs/08-engine/busy_snapshot.py",
    description=__doc__.split(": ", 1)[1],
    formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()

path = os.path.join(tempfile.mkdtemp(), "lab08.db")
a = sqlite3.connect(path, isolation_level=None, timeout=0.5)
b = sqlite3.connect(path, isolation_level=None, timeout=0.5)
a.execute("PRAGMA journal_mode = WAL")
a.execute("CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
a.execute("INSERT INTO counters VALUES (1, 0)")

a.execute("BEGIN")
print("A reads n =", a.execute("SELECT n FROM counters WHERE id = 1").fetchone()[0])
b.execute("UPDATE counters SET n = n + 1 WHERE id = 1")
print("B adds 1 and commits")
try:
    a.execute("UPDATE counters SET n = n + 1 WHERE id = 1")
    print("A's update went through")
except sqlite3.OperationalError as e:
    print("A's update fails:", e, getattr(e, "sqlite_errorname", ""))
a.execute("ROLLBACK")
os.remove(path)
