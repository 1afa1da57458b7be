#!/bin/sh
# tests/class/attacks.sh: a hostile student on the class server tries to
# make the instructor's routine commands run their code, and fails.
#
# Mallory, a student, plants what an admin session could find by name or
# by reading: a view hr_mallory.hotrow_results (where class mode once kept
# results) calling her function; functions named like the catalog's
# (quote_ident, count, now, format, pg_terminate_backend, ...) and an =
# operator in her schema and in a schema named after the administrator's
# role (the "$user" of the default search_path), among them
# quote_ident(name), which beats pg_catalog's quote_ident(text) for
# quote_ident(current_database()) even with pg_catalog searched first; a
# type with a cast to text on a contended row's key, for `hotrow top`; a
# row-level security policy for a top run as a pg_monitor role; triggers,
# rules, policies and event triggers on what the administrator writes. Each of her functions, when
# it runs, writes current_user into her table and tries ALTER ROLE
# hr_mallory SUPERUSER. Then init, status, status --frames, grade, drop
# and top run as the administrator, through a URL that even puts her
# schema first on the search_path (a careless instructor), with
# track_functions = all. Checked after, one verdict per way in: her
# table holds no other user's name for it; she is no superuser; and
# pg_stat_user_functions counts no call
# of a function a student owns (the count is shown to work first, on a
# call made on purpose). Prints cmocka-style summary lines; needs
# HOTROW_PG_URL as a superuser, like class.sh.
. "$(dirname "$0")/../harness/usage.sh"
set -u
[ -n "${TRACE:-}" ] && set -x
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
. "$(dirname "$0")/../harness/check.sh"

. "$(dirname "$0")/server.sh" attacks
me=$(q "select current_user")
case "$admin" in *\?*) sep='&' ;; *) sep='?' ;; esac
# The administrator as a careless instructor might name the server: her
# schema first on the path; and every function call counted.
careless="${admin}${sep}options=-csearch_path%3Dhr_mallory%2C%22%24user%22%2Cpublic%20-ctrack_functions%3Dall"

opened=
trap 'rm -rf "$tmp"; "$bin" class drop --db "$admin" --yes >/dev/null 2>&1;
      q "drop schema if exists \"$me\" cascade; drop role if exists hr_watcher" >/dev/null 2>&1
      [ -n "$opened" ] && q "revoke create on database \"$(q "select current_database()")\" from public" 2>/dev/null' EXIT

# A server where PUBLIC may create schemas (granted by hand, or an old
# default): init must take that away, or attack 3 needs no more.
db=$(q "select current_database()")
if [ "$(q "select has_database_privilege('public', current_database(), 'CREATE')")" = f ]; then
	q "grant create on database \"$db\" to public" && opened=1
fi
printf 'mallory\nvictim\n' >"$tmp/roster"
"$bin" class init --db "$admin" --roster "$tmp/roster" --out "$tmp/urls" >/dev/null 2>"$tmp/err"
M=$(url_of mallory)

# class__no_create_on_database: a student cannot make a schema, so not
# one named after the administrator either.
out=$(as "$M" "create schema \"$me\"")
case "$out" in *"permission denied"*) ok class__no_create_on_database ;;
*) bad class__no_create_on_database "mallory made a schema: $out $(cat "$tmp/err")" ;; esac

# Mallory's kit. pwn() runs as whoever calls it.
as "$M" "
create table hr_mallory.log (who text, via text);
grant usage on schema hr_mallory to public;
grant insert on hr_mallory.log to public;
create function hr_mallory.pwn(via text) returns int language plpgsql as \$\$
begin
  -- a read-only transaction refuses the insert: she carries on, and the
  -- call is still counted (track_functions)
  begin insert into hr_mallory.log values (current_user::text, via); exception when others then null; end;
  begin execute 'alter role hr_mallory superuser'; exception when others then null; end;
  return 1;
end \$\$;
grant execute on function hr_mallory.pwn(text) to public;
create function hr_mallory.trg() returns trigger language plpgsql as
  \$\$ begin perform hr_mallory.pwn('trigger'); return new; end \$\$;
create function hr_mallory.etrg() returns event_trigger language plpgsql as
  \$\$ begin perform hr_mallory.pwn('event'); end \$\$;
create function hr_mallory.via_cast() returns int language plpgsql as \$\$ begin return hr_mallory.pwn('cast'); end \$\$;
create function hr_mallory.via_policy() returns int language plpgsql as \$\$ begin return hr_mallory.pwn('policy'); end \$\$;
grant execute on function hr_mallory.via_cast(), hr_mallory.via_policy() to public;
create function hr_mallory.harmless() returns int language plpgsql as 'begin return 1; end';
drop table if exists hr_mallory.hotrow_results;
create view hr_mallory.hotrow_results as
  select '01-hot-row'::text as lab, hr_mallory.pwn('view') as passed, 1 as total, 1 as runs,
         now() as at;
create function hr_mallory.quote_ident(name) returns text language sql as 'select hr_mallory.pwn(''path'')::text || \$1';
create function hr_mallory.quote_ident(text) returns text language sql as 'select hr_mallory.pwn(''path'')::text || \$1';
create function hr_mallory.current_database() returns name language sql as 'select (hr_mallory.pwn(''path'')::text)::name';
create function hr_mallory.count(text) returns bigint language sql as 'select hr_mallory.pwn(''path'')::bigint';
create function hr_mallory.now() returns timestamptz language sql as 'select hr_mallory.pwn(''path''); select pg_catalog.now()';
create function hr_mallory.format(text, variadic text[]) returns text language sql as 'select hr_mallory.pwn(''path'')::text';
create function hr_mallory.pg_terminate_backend(integer) returns boolean language sql as 'select hr_mallory.pwn(''path'') = 1';
create function hr_mallory.texteq(text, text) returns boolean language sql as 'select hr_mallory.pwn(''path'') = 1 and pg_catalog.texteq(\$1, \$2)';
create operator hr_mallory.= (leftarg = text, rightarg = text, function = hr_mallory.texteq);
" >"$tmp/plant" 2>&1
planted=1
if grep -q ERROR "$tmp/plant"; then planted=; bad class__plant "$(grep -B1 -A2 ERROR "$tmp/plant" | head -8)"; fi

# The counting works: a call of hers made on purpose, as the
# administrator with track_functions on, is counted (then forgotten).
calls() {
	q "select pg_stat_force_next_flush(); select pg_stat_clear_snapshot();" >/dev/null
	q "select coalesce(sum(f.calls), 0) from pg_stat_user_functions f join pg_proc p on p.oid = f.funcid
	   join pg_roles r on r.oid = p.proowner where r.rolname like 'hr\_%'"
}
c0=$(calls)
psql "$careless" -XAtqc "select hr_mallory.harmless()" >/dev/null
c1=$(calls)
if [ "$c1" -gt "$c0" ]; then ok class__counting_works
else bad class__counting_works "a call made on purpose was not counted ($c0 -> $c1)"; fi
q "select pg_stat_reset()" >/dev/null
c0=$(calls)

# `hotrow top` on her contended row, whose key is of her type with her cast.
as "$M" "
create type hr_mallory.k as enum ('a', 'b');
create function hr_mallory.k_text(hr_mallory.k) returns text language sql as 'select hr_mallory.via_cast()::text';
create cast (hr_mallory.k as text) with function hr_mallory.k_text(hr_mallory.k);
create table hr_mallory.hot (U&\"id\\001b[2J\" hr_mallory.k primary key, n int);
insert into hr_mallory.hot values ('a', 0);
" >"$tmp/plant2" 2>&1
if [ "$(as "$M" "select U&\"id\\001b[2J\"::text from hr_mallory.hot")" = 1 ]; then ok class__cast_planted
else bad class__cast_planted "her cast is not used by id::text: $(cat "$tmp/plant2")"; fi
# A pg_monitor role she grants her table to, with a policy for it (made
# before her row is held: ENABLE ROW LEVEL SECURITY waits for every lock).
q "create role hr_watcher login in role pg_monitor" >/dev/null
as "$M" "grant select on hr_mallory.hot to hr_watcher;
alter table hr_mallory.hot enable row level security;
create policy p on hr_mallory.hot for select using (hr_mallory.via_policy() = 1);" >/dev/null
q "alter role hr_watcher set track_functions = 'all'" >/dev/null
as "$M" "set statement_timeout = 0; begin; update hr_mallory.hot set n = n + 1; select pg_sleep(60); commit" >/dev/null &
h1=$!
i=0
until [ "$(q "select count(*) from pg_locks l join pg_stat_activity a using (pid) where a.usename = 'hr_mallory' and l.locktype = 'transactionid' and l.granted and a.state like 'active'")" -gt 0 ] || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
as "$M" "set statement_timeout = 0; update hr_mallory.hot set n = n + 1" >/dev/null &
h2=$!
i=0
until [ "$(q "select count(*) from pg_stat_activity where usename = 'hr_mallory' and wait_event_type = 'Lock'")" -gt 0 ] || [ $i -ge 300 ]; do
	sleep 0.1; i=$((i + 1))
done
"$bin" top --db "$admin${sep}options=-ctrack_functions%3Dall" --dump --after 0.3 >"$tmp/top" 2>&1
"$bin" top --db "$careless" --dump --after 0.3 >"$tmp/top1" 2>&1
watcher=$(printf %s "${admin}${sep}options=-csearch_path%3Dhr_mallory" | sed "s/user=$me/user=hr_watcher/")
"$bin" top --db "$watcher" --dump --after 0.3 >"$tmp/top2" 2>&1
# the holder's minute is not waited out (a loaded machine gets the whole
# of it for the steps above)
q "select count(pg_terminate_backend(pid)) from pg_stat_activity where usename = 'hr_mallory'" >/dev/null
wait $h1 $h2

# The same names in a schema called like the administrator's role (made
# for her by a superuser here: she can no longer make it herself).
q "create schema \"$me\" authorization hr_mallory" >/dev/null
as "$M" "
create function \"$me\".quote_ident(name) returns text language sql as 'select hr_mallory.pwn(''user_schema'')::text || \$1';
create function \"$me\".current_database() returns name language sql as 'select (hr_mallory.pwn(''user_schema'')::text)::name';
create function \"$me\".now() returns timestamptz language sql as 'select hr_mallory.pwn(''user_schema''); select pg_catalog.now()';
create function \"$me\".texteq(text, text) returns boolean language sql as 'select hr_mallory.pwn(''user_schema'') = 1 and pg_catalog.texteq(\$1, \$2)';
create operator \"$me\".= (leftarg = text, rightarg = text, function = \"$me\".texteq);
" >>"$tmp/plant" 2>&1
if grep -q ERROR "$tmp/plant"; then planted=; bad class__plant "$(grep -B1 -A2 ERROR "$tmp/plant" | head -8)"; fi

# The routine commands: init as the administrator's default search_path
# ("$user", public) has it, then all of them as the careless one.
as "$M" "select hotrow_class.record('01-hot-row', 1, 2)" >/dev/null
echo eve >"$tmp/roster0"
"$bin" class init --db "$admin${sep}options=-ctrack_functions%3Dall" --roster "$tmp/roster0" \
	--out "$tmp/urls0" >"$tmp/o0" 2>&1
echo trudy >"$tmp/roster2"
"$bin" class init   --db "$careless" --roster "$tmp/roster2" --out "$tmp/urls2" >"$tmp/o1" 2>&1
"$bin" class status --db "$careless" >"$tmp/o2" 2>&1
"$bin" class status --db "$careless" --frames 2 --interval 1 >"$tmp/o3" 2>&1
"$bin" class grade  --db "$careless" --out "$tmp/grade" >"$tmp/o4" 2>&1
"$bin" class drop   --db "$careless" --roster "$tmp/roster2" --yes >"$tmp/o5" 2>&1
"$bin" class drop   --db "$careless" >"$tmp/o6" 2>&1   # lists, removes nothing


# class__top_key_not_cast: the lane shows her row by its key's own text
# (the key column's name holds an escape sequence: shown as ?, never sent
# to the terminal).
esc=$(printf '\033')
if grep -q 'hot (0,[0-9]*) "id?\[2J"=a' "$tmp/top" && grep -q 'hot (0,[0-9]*) "id?\[2J"=a' "$tmp/top1" &&
   ! grep -q "$esc" "$tmp/top" "$tmp/top1"; then ok class__top_key_not_cast
else bad class__top_key_not_cast "no lane hot (0,N) \"id?[2J\"=a: $(grep -A1 'CONTENDED' "$tmp/top" "$tmp/top1" | tr -d '\033')"; fi

# The verdicts, one per attack: did her code run as anyone else, by
# which way in; and is she a superuser now.
ran() {
	q "select pg_stat_clear_snapshot()" >/dev/null
	q "select coalesce(string_agg(distinct who, ' '), '') || coalesce((select ' (' || calls || ' counted call(s))'
	   from pg_stat_user_functions where schemaname = 'hr_mallory' and funcname = 'via_$1'), '')
	   from hr_mallory.log where who <> 'hr_mallory' and via = '$1'"
}
verdict() {   # NAME VIA WHAT
	r=$(ran "$2")
	if [ -n "$planted" ] && [ -z "$r" ]; then ok "$1"; else bad "$1" "$3 ran her code as: $r"; fi
}
verdict class__view_in_her_schema view "status or grade, reading hr_mallory.hotrow_results,"
verdict class__admin_user_schema user_schema "init, through a schema named after the administrator,"
verdict class__careless_search_path path "a command whose URL put her schema on the path"
verdict class__top_cast_on_key cast "top, looking up her row's key,"
if grep -q "hot (0,[0-9]*)" "$tmp/top2"; then verdict class__top_policy policy "top as a pg_monitor role, reading her table,"
else bad class__top_policy "top as hr_watcher showed no lane: $(head -c 300 "$tmp/top2")"; fi
super=$(q "select rolsuper from pg_roles where rolname = 'hr_mallory'")
c1=$(calls)
if [ -n "$planted" ] && [ "$super" = f ]; then ok class__student_not_superuser
else bad class__student_not_superuser "hr_mallory is a superuser now: $super"; fi
if [ -n "$planted" ] && [ "$c1" = "$c0" ]; then ok class__no_student_function_in_admin_session
else bad class__no_student_function_in_admin_session "$((c1 - c0)) call(s) of student-owned functions:
$(q "select p.oid::regprocedure, f.calls from pg_stat_user_functions f join pg_proc p on p.oid = f.funcid join pg_roles r on r.oid = p.proowner where r.rolname like 'hr\_%'")"; fi

# class__commands_still_work: the routine commands did their work.
if grep -q "^mallory " "$tmp/o2" && grep -q "^victim " "$tmp/o2" && [ "$(grep -c '^mallory ' "$tmp/o3")" = 2 ] &&
   grep -q '"name": "mallory: 01-hot-row"' "$tmp/grade/results.json" && grep -q "removed trudy" "$tmp/o5"; then
	ok class__commands_still_work
else bad class__commands_still_work "$(cat "$tmp/o1" "$tmp/o2" "$tmp/o4" "$tmp/o5" | head -8)"; fi

# class__registry_closed: what a student may not do to what the
# administrator's commands read and write.
fails=
for sql in "select * from hotrow_class.students" "select * from hotrow_class.results" \
	"insert into hotrow_class.results values ('mallory', '01-hot-row', 9, 9)" \
	"update hotrow_class.graded set passed = 99" \
	"create table hotrow_class.x (a int)" \
	"create function hotrow_class.me() returns text language sql as 'select 1'" \
	"create trigger t before insert on hotrow_class.results for each row execute function hr_mallory.trg()" \
	"create rule r as on insert to hotrow_class.results do also select hr_mallory.pwn('rule')" \
	"create policy p on hotrow_class.results using (hr_mallory.pwn('policy') = 1)" \
	"alter table hotrow_class.results add column x int" \
	"create event trigger e on ddl_command_start execute function hr_mallory.etrg()" \
	"create table public.hotrow_results (a int)" \
	"select hotrow_class.me()" "select hotrow_class.lab_max('01-hot-row')" \
	"set role hr_victim" "set session authorization hr_victim" \
	"select hotrow_class.record('01-hot-row', 3, 2)" "select hotrow_class.record('99-nope', 1, 2)" \
	"select hotrow_class.record(E'01-hot-row\\033[2J', 1, 2)" \
	"select hotrow_class.record('01-hot-row', 1, 100000)" \
	"select hotrow_class.submit_file('01-hot-row', '../Makefile', '\\x00')" \
	"select hotrow_class.submit_file('01-hot-row', 'module.mk', '\\x00')"; do
	out=$(as "$M" "$sql")
	case "$out" in *"does not exist"*) fails="$fails [$sql: refused for another reason: $out]" ;;
	*ERROR*) ;; *) fails="$fails [$sql: $out]" ;; esac
done
if [ -z "$fails" ]; then ok class__registry_closed
else bad class__registry_closed "a student could:$fails"; fi

# class__init_took_create: init took CREATE on the database from PUBLIC,
# and drop gives back what it took.
now=$(q "select has_database_privilege('public', current_database(), 'CREATE')")
"$bin" class drop --db "$admin" --yes >"$tmp/drop" 2>&1
after=$(q "select has_database_privilege('public', current_database(), 'CREATE')")
if [ "$now" = f ] && [ "$after" = t ]; then ok class__init_took_create
else bad class__init_took_create "PUBLIC CREATE on the database: $now under the class, $after after drop: $(cat "$tmp/drop")"; fi
summary
