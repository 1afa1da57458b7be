# tests/class/server.sh: what the class mode tests share, sourced after
# tests/harness/check.sh with $tmp set and $1 the suite's short name.
# Sets admin (HOTROW_PG_URL, a superuser), or ends the suite: skipped
# without a server, failed without one under HOTROW_REQUIRE_PG=1.
#   q SQL          as the administrator, rows as text
#   as URL SQL     as whoever URL names, errors included in the output
#   url_of NAME    a student's URL from $tmp/urls (class init --out)
admin=${HOTROW_PG_URL:-}
if [ -z "$admin" ] || ! psql "$admin" -Atqc 'select 1' >/dev/null 2>&1; then
	if [ "${HOTROW_REQUIRE_PG:-}" = 1 ]; then
		bad "class__${1}_server" "HOTROW_PG_URL is unset or unreachable (HOTROW_REQUIRE_PG=1)"
	else
		skip "class__${1}_server" "HOTROW_PG_URL is unset (make pg-up prints one)"
	fi
	summary
fi
q()  { psql "$admin" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }
as() { psql "$1" -XAtq -v ON_ERROR_STOP=1 -c "$2" 2>&1; }
url_of() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/urls"; }
