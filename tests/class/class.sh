#!/bin/sh
# tests/class/class.sh: `hotrow class` on a real PostgreSQL: roster names
# that fold to the same student are refused; two students cannot see,
# read, write or list each other's tables, cannot create in public,
# cannot pass their connection limit, get cancelled at their statement
# timeout; init twice changes nothing, and warns when the room's limits
# pass max_connections; the runner records a check where `class status`
# and `grade` find it, as self-reported, with every lab of the kit at its
# maximum; status --frames calls the stuck students stuck; a student whose
# schema is gone does not stop the room's status or grade; drop leaves the
# server's roles, schemas and privileges as they were before init. Prints cmocka-style
# summary lines. Needs HOTROW_PG_URL as a superuser (scripts/pg's server
# is one): skipped without it, failed without it under HOTROW_REQUIRE_PG=1.
#
# The throwaway server trusts local connections, so these tests connect as
# the students' roles without their passwords; a room's server asks for
# them (password or scram-sha-256 in pg_hba.conf): see slides/INSTRUCTOR.md.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
. "$(dirname "$0")/../harness/check.sh"

. "$(dirname "$0")/server.sh" class

# A database of this suite's own: the schemas and privileges compared
# before init and after drop are then this suite's and the server's only.
# In a database other suites share, a schema one of them made meanwhile
# (a lab driver's labNN) would count as something drop left behind.
own=hotrow_class_$$ shared=$admin
if q "DROP DATABASE IF EXISTS $own" 2>/dev/null && q "CREATE DATABASE $own"; then
	case $admin in
	postgres://*\?*|postgresql://*\?*) admin="$admin&dbname=$own" ;;
	postgres://*|postgresql://*) admin="$admin?dbname=$own" ;;
	*) admin="$admin dbname=$own" ;;
	esac
else
	own=
fi

# The roles this suite makes: other suites, in other databases of the
# same server at the same time, make roles of their own (roles belong to
# the whole server), so what is counted and compared is ours and the
# server's own.
ours="'hr_alice','hr_bob','hr_carol','hr_dave','hr_ada','hr_mary_ann'"

# What drop must give back: roles with their limits and settings, schemas
# with their privileges, the databases' privileges. (Schemas the lab
# tests make and remove on their own, lt_*, are left out. A NULL ACL means
# the defaults: a grant and its revoke leave the same defaults spelled out.)
snapshot() {
	q "select rolname, rolcanlogin, rolconnlimit, rolconfig from pg_roles
	    where rolname !~ '^hr_' or rolname in ($ours) order by 1;
	   select nspname, nspowner::regrole, coalesce(nspacl, acldefault('n', nspowner)) from pg_namespace
	    where nspname !~ '^(pg_temp|pg_toast_temp|lt_)' order by 1;
	   select datname, coalesce(datacl, acldefault('d', datdba)) from pg_database
	    where datname = current_database();
	   select setdatabase, setrole, setconfig from pg_db_role_setting
	    where setrole not in (select oid from pg_roles where rolname ~ '^hr_' and rolname not in ($ours))
	    order by 1, 2;"
}
trap 'rm -rf "$tmp"; "$bin" class drop --db "$admin" --yes >/dev/null 2>&1;
      [ -n "${opened:-}" ] && q "revoke create on schema public from public" 2>/dev/null
      [ -n "$own" ] && psql "$shared" -XAtq -c "DROP DATABASE IF EXISTS $own WITH (FORCE)" >/dev/null 2>&1' EXIT

# Be a server older than PostgreSQL 15, where PUBLIC may create in public:
# init must take that away, and drop must give it back.
opened=
if [ "$(q "select count(*) from pg_namespace n, aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a
          where n.nspname = 'public' and a.grantee = 0 and a.privilege_type = 'CREATE'")" = 0 ]; then
	q "grant create on schema public to public" && opened=1
fi
snapshot >"$tmp/before"

# class__roster_collision: names that fold to the same student are
# refused with both line numbers, and nobody is made.
printf 'Ada\nbob\nada\nmary-ann\nMary Ann\n' >"$tmp/clash"
"$bin" class init --db "$admin" --roster "$tmp/clash" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "clash:3: 'ada' and line 1's 'Ada'" "$tmp/err" &&
   grep -q "clash:5: 'Mary Ann' and line 4's 'mary-ann'" "$tmp/err" &&
   [ "$(q "select count(*) from pg_roles where rolname in ($ours)")" = 0 ]
then ok class__roster_collision
else bad class__roster_collision "exit $rc: $(cat "$tmp/err")"; fi

# class__init: one line per student, the file only the instructor reads;
# the screen (perhaps the room's projector) shows the passwords as ***.
printf 'Alice\nbob  # the second\n\n' >"$tmp/roster"
"$bin" class init --db "$admin" --roster "$tmp/roster" --out "$tmp/urls" >"$tmp/out" 2>"$tmp/err"
rc=$?
mode=$(stat -c %a "$tmp/urls" 2>/dev/null)
sed 's/:[A-Za-z0-9]\{16\}@/:***@/' "$tmp/urls" >"$tmp/hidden"
if [ "$rc" = 0 ] && [ "$(wc -l <"$tmp/out")" = 2 ] && cmp -s "$tmp/out" "$tmp/hidden" &&
   [ "$mode" = 600 ] && grep -q '^alice postgresql://hr_alice:[A-Za-z0-9]\{16\}@' "$tmp/urls"
then ok class__init
else bad class__init "exit $rc, mode $mode: $(cat "$tmp/out" "$tmp/err")"; fi
A=$(url_of alice) B=$(url_of bob)

# class__init_twice: the same roster again changes nothing, passwords included.
state() { q "select name, role, password from hotrow_class.students order by 1"; snapshot; }
state >"$tmp/s1"
"$bin" class init --db "$admin" --roster "$tmp/roster" --out "$tmp/urls2" >/dev/null 2>&1
state >"$tmp/s2"
if cmp -s "$tmp/s1" "$tmp/s2" && cmp -s "$tmp/urls" "$tmp/urls2"; then ok class__init_twice
else bad class__init_twice "the second init changed: $(diff "$tmp/s1" "$tmp/s2" | head -5)"; fi

# class__roster_respelled: a later roster naming Alice as alice is
# refused: the same student only if spelled the same way.
echo alice >"$tmp/respelled"
"$bin" class init --db "$admin" --roster "$tmp/respelled" >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "made earlier as 'Alice'" "$tmp/err"; then ok class__roster_respelled
else bad class__roster_respelled "exit $rc: $(cat "$tmp/err")"; fi

# class__conn_limit_warning: a room whose limits add up past
# max_connections is told so.
echo dave >"$tmp/dave"
"$bin" class init --db "$admin" --roster "$tmp/dave" --conn-limit 100000 >/dev/null 2>"$tmp/err"
"$bin" class drop --db "$admin" --roster "$tmp/dave" --yes >/dev/null 2>&1
if grep -q "warning: 3 student(s) may open 100040 connections in all, more than the server's" "$tmp/err"
then ok class__conn_limit_warning
else bad class__conn_limit_warning "$(cat "$tmp/err")"; fi

# class__password: the role has a password (SCRAM) and can log in.
if [ "$(q "select count(*) from pg_authid where rolname = 'hr_alice' and rolcanlogin
           and rolpassword like 'SCRAM-SHA-256\$%'")" = 1 ]; then ok class__password
else bad class__password "hr_alice has no SCRAM password"; fi

# Bob makes a table; Alice tries it every way.
as "$B" "create table secret (x int); insert into secret values (42)" >/dev/null
if [ "$(as "$B" "select x from secret")" = 42 ]; then ok class__own_schema
else bad class__own_schema "bob cannot use his own schema"; fi
out=$(as "$A" "select x from hr_bob.secret")
case "$out" in *"permission denied"*) ok class__cannot_read_other ;;
*) bad class__cannot_read_other "alice read bob's table: $out" ;; esac
out=$(as "$A" "insert into hr_bob.secret values (1)")
case "$out" in *"permission denied"*) ok class__cannot_write_other ;;
*) bad class__cannot_write_other "alice wrote bob's table: $out" ;; esac
out=$(as "$A" "create table hr_bob.mine (x int)")
case "$out" in *"permission denied"*) ok class__cannot_create_in_other ;;
*) bad class__cannot_create_in_other "alice created in bob's schema: $out" ;; esac
n=$(as "$A" "select count(*) from information_schema.tables where table_schema = 'hr_bob'")
n2=$(as "$A" "select count(*) from information_schema.schemata where schema_name = 'hr_bob'")
if [ "$n" = 0 ] && [ "$n2" = 0 ]; then ok class__cannot_list_other
else bad class__cannot_list_other "alice lists $n of bob's tables, $n2 schemas"; fi
out=$(as "$A" "create table public.mine (x int)")
case "$out" in *"permission denied"*) ok class__cannot_create_in_public ;;
*) bad class__cannot_create_in_public "alice created in public: $out" ;; esac
out=$(as "$A" "select count(*) from hotrow_class.students")
case "$out" in *"permission denied"*) ok class__cannot_read_registry ;;
*) bad class__cannot_read_registry "alice read the passwords: $out" ;; esac

# class__statement_timeout and class__conn_limit: a student added later
# with tight limits (init applies them to the students it adds).
echo carol >"$tmp/roster2"
"$bin" class init --db "$admin" --roster "$tmp/roster2" --conn-limit 2 \
	--statement-timeout-ms 300 --out "$tmp/urls" >/dev/null 2>&1
C=$(url_of carol)
out=$(as "$C" "select pg_sleep(2)")
case "$out" in *"statement timeout"*) ok class__statement_timeout ;;
*) bad class__statement_timeout "a 2 s statement ran under a 300 ms timeout: $out" ;; esac
as "$C" "set statement_timeout = 0; select pg_sleep(3)" >/dev/null &
h1=$!
as "$C" "set statement_timeout = 0; select pg_sleep(3)" >/dev/null &
h2=$!
i=0
while [ "$(q "select count(*) from pg_stat_activity where usename = 'hr_carol'")" -lt 2 ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
out=$(as "$C" "select 1")
wait $h1 $h2
case "$out" in *"too many connections"*) ok class__conn_limit ;;
*) bad class__conn_limit "a third connection got: $out" ;; esac
if [ "$(wc -l <"$tmp/urls")" = 3 ]; then ok class__init_adds
else bad class__init_adds "the file lists $(wc -l <"$tmp/urls") students, not 3"; fi

# class__record: the runner's check, as alice, lands in her schema, and
# status and grade show it. It builds and checks Lab 01 in a scratch copy
# of the kit (kit_copy): in this tree the runner would remove the Lab 01
# binaries that other suites of make test are running.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/harness/kit.sh"
kit_copy "$tmp/kit"
binabs=$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")
(cd "$tmp/kit" && HOTROW_ROOT="$tmp/kit" HOTROW_PG_URL=$A "$binabs" lab check 01 --db "$A") \
	>"$tmp/check" 2>&1
got=$(q "select lab || ' ' || total from hotrow_class.results where student = 'alice'")
case "$got" in "01-hot-row "[1-9]*) ok class__record ;;
*) bad class__record "nothing recorded for alice: $got; $(tail -3 "$tmp/check")" ;; esac

# class__check_hides_password: that check's screen names alice's server
# but not her password.
pw=${A#*hr_alice:}; pw=${pw%%@*}
if [ -n "$pw" ] && ! grep -qF "$pw" "$tmp/check" && grep -q "hr_alice:\*\*\*@" "$tmp/check"
then ok class__check_hides_password
else bad class__check_hides_password "$(grep -i postgres "$tmp/check" | head -3)"; fi
"$bin" class status --db "$admin" >"$tmp/status" 2>&1
if grep -q '^alice .* [0-9]*/[1-9][0-9]* .*ago' "$tmp/status" && grep -q '^bob  *- .*never' "$tmp/status"
then ok class__status
else bad class__status "$(cat "$tmp/status")"; fi
"$bin" class grade --db "$admin" --out "$tmp/grade" >/dev/null 2>&1
if grep -q '"name": "alice: 01-hot-row"' "$tmp/grade/results.json" &&
   grep -q '"max_score": [1-9]' "$tmp/grade/results.json"; then ok class__grade
else bad class__grade "$(cat "$tmp/grade/results.json" 2>&1 | head -5)"; fi

# class__grade_every_lab: every lab of the kit for every student; a lab
# never graded is 0 of its checks, never 0 of 0.
nlabs=$(ls -d labs/[0-9][0-9]-*/ | wc -l)
n=$(grep -c '"name": "bob: ' "$tmp/grade/results.json")
zero=$(grep '"name": "bob: ' "$tmp/grade/results.json" | grep -c '"score": 0, "max_score": [1-9]')
if [ "$n" = "$nlabs" ] && [ "$zero" = "$nlabs" ]; then ok class__grade_every_lab
else bad class__grade_every_lab "$n of $nlabs labs for bob, $zero of them 0 of a maximum"; fi

# class__self_report_not_score: alice's check is reported, not scored.
if grep -q '"name": "alice: 01-hot-row", "score": 0, "max_score": [1-9][0-9]*, "output": "not graded.*self-reported (not scored)' "$tmp/grade/results.json"
then ok class__self_report_not_score
else bad class__self_report_not_score "$(grep 'alice: 01' "$tmp/grade/results.json")"; fi

# class__watch_stuck: --frames prints the table that many times; alice,
# no new check passing for 20 minutes, and carol, the same failing result
# three runs in a row, are called stuck; bob, who ran nothing, is not.
# (carol's role has a 300 ms statement_timeout, set above: on a loaded
# machine a record could hit it, and two runs are not stuck.)
q "update hotrow_class.results set progress_at = now() - interval '20 min' where student = 'alice'"
for i in 1 2 3; do
	as "$C" "set statement_timeout = 0; select hotrow_class.record('02-sharded', 0, 1)" >/dev/null ||
		echo "class.sh: carol's run $i was not recorded" >&2
done
"$bin" class status --db "$admin" --frames 2 --interval 1 >"$tmp/watch" 2>&1
rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c '^student ' "$tmp/watch")" = 2 ] &&
   grep -q '^alice .*stuck: no new check passing in 01-hot-row for 20 min' "$tmp/watch" &&
   grep -q '^carol .*stuck: 3 runs of 02-sharded in a row at 0/1' "$tmp/watch" &&
   ! grep -q '^bob .*stuck' "$tmp/watch"
then ok class__watch_stuck
else bad class__watch_stuck "exit $rc: $(head -6 "$tmp/watch")"; fi
"$bin" class status --db "$admin" --watch </dev/null >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "needs a terminal" "$tmp/err"; then ok class__watch_needs_terminal
else bad class__watch_needs_terminal "exit $rc: $(cat "$tmp/err")"; fi

# class__watch_restores_terminal: the live table in a terminal (tmux),
# left with q and with SIGTERM; each time the terminal is back in line
# mode with echo, and SIGTERM's exit is 143.
if command -v tmux >/dev/null 2>&1; then
	fails=
	for how in q TERM; do
		tm() { tmux -L "hotrow-class-$$-$how" "$@"; }
		tm new-session -d -s w -x 160 -y 20 -c "$PWD" "'$bin' class status --db '$admin' --watch \
			--interval 1; echo EXIT=\$?; stty -a | tr ' ' '\n' | grep -x -e icanon -e echo | tr '\n' ' ';
			echo; echo DONE; sleep 30"
		i=0
		until tm capture-pane -p -t w | grep -q "q quits" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
		if [ "$how" = q ]; then tm send-keys -t w q
		else kill -TERM "$(pgrep -P "$(tm list-panes -t w -F '#{pane_pid}')")"; fi
		i=0
		until tm capture-pane -p -t w | grep -q "^DONE" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
		want=0; [ "$how" = TERM ] && want=143
		tm capture-pane -p -t w >"$tmp/pane"
		grep -q "^EXIT=$want" "$tmp/pane" && grep -q "^icanon echo" "$tmp/pane" ||
			fails="$fails [$how: $(grep -v '^$' "$tmp/pane" | tail -3 | tr '\n' ' ')]"
		tm kill-server 2>/dev/null
	done
	if [ -z "$fails" ]; then ok class__watch_restores_terminal
	else bad class__watch_restores_terminal "$fails"; fi
else
	skip class__watch_restores_terminal "tmux is not installed"
fi

# class__broken_student: bob's schema removed by hand; the room is still
# shown and graded, bob named as the one whose place is broken.
q "drop schema hr_bob cascade" >/dev/null
"$bin" class status --db "$admin" >"$tmp/status2" 2>&1
rc=$?
"$bin" class grade --db "$admin" --out "$tmp/grade2" >/dev/null 2>&1
rc2=$?
if [ "$rc" = 0 ] && [ "$rc2" = 0 ] && grep -q '^alice .*/' "$tmp/status2" &&
   grep -q '^bob .*cannot be graded: its schema hr_bob is missing' "$tmp/status2" &&
   grep -q '"name": "alice: 01-hot-row"' "$tmp/grade2/results.json"
then ok class__broken_student
else bad class__broken_student "exit $rc/$rc2: $(cat "$tmp/status2")"; fi

# class__drop_asks: without --yes nothing goes.
"$bin" class drop --db "$admin" >/dev/null 2>&1
rc=$?
if [ "$rc" = 1 ] && [ "$(q "select count(*) from pg_roles where rolname in ($ours)")" = 3 ]
then ok class__drop_asks; else bad class__drop_asks "exit $rc, roles left: $(q "select count(*) from pg_roles where rolname in ($ours)")"; fi

# class__drop_roster: only the named students go.
"$bin" class drop --db "$admin" --roster "$tmp/roster2" --yes >/dev/null 2>&1
if [ "$(q "select string_agg(rolname, ' ' order by rolname) from pg_roles where rolname in ($ours)")" = "hr_alice hr_bob" ]
then ok class__drop_roster; else bad class__drop_roster "$(q "select string_agg(rolname, ' ') from pg_roles where rolname in ($ours)")"; fi

# class__drop_restores: with alice still connected, everything goes and
# the server is as it was.
as "$A" "select pg_sleep(5)" >/dev/null 2>&1 &
i=0   # wait until alice's session is really there (a loaded machine is slow to connect)
until [ "$(q "select count(*) from pg_stat_activity where usename = 'hr_alice'")" -gt 0 ] || [ $i -ge 100 ]; do
	sleep 0.1; i=$((i + 1))
done
"$bin" class drop --db "$admin" --yes >"$tmp/drop" 2>&1
rc=$?
wait
snapshot >"$tmp/after"
if [ "$rc" = 0 ] && cmp -s "$tmp/before" "$tmp/after"; then ok class__drop_restores
else bad class__drop_restores "exit $rc: $(cat "$tmp/drop"; diff "$tmp/before" "$tmp/after" | head -8 | tr '\n' ' ')"; fi

# class__bad_usage: exit 2 and one line naming what is wrong.
for args in "init --roster $tmp/roster" "init --db $admin" "frob --db x" "init --db x --roster y --conn-limit 0"; do
	"$bin" class $args >"$tmp/o" 2>"$tmp/e"
	rc=$?
	if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/e")" != 1 ]; then
		bad class__bad_usage "'$args' gave exit $rc: $(cat "$tmp/e")"; args=failed; break
	fi
done
[ "$args" = failed ] || ok class__bad_usage
summary
