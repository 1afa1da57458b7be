# tests/class/: class mode on a real PostgreSQL (HOTROW_PG_URL, as a
# superuser: the throwaway server of scripts/pg is one).
SCRIPT_TESTS += tests/class/class.sh
# its `lab check 01` builds Lab 01 in this tree: last in make test
LAST_SCRIPTS += tests/class/class.sh
SCRIPT_TESTS += tests/class/attacks.sh tests/class/rebuild.sh
