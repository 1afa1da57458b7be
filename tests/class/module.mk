# tests/class/: class mode on a real PostgreSQL (HOTROW_PG_URL, as a
# superuser: the throwaway server of scripts/pg is one).
SCRIPT_TESTS += tests/class/class.sh
SCRIPT_TESTS += tests/class/attacks.sh tests/class/rebuild.sh
