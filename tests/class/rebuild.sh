#!/bin/sh
# tests/class/rebuild.sh: `hotrow class submit` and `class grade
# --rebuild` on a real PostgreSQL. Sam submits a lab's reference solution
# from a kit of his own; Rita submits nothing but tells the server she
# has full marks (hotrow_class.record, as any student can). The rebuild
# builds and checks Sam's files in a fresh copy of the kit as Sam (the
# lab checks take their schemas from hotrow_class.new_schema, which only a
# student's session can call), and the grade gives Sam the lab's maximum
# and Rita 0 of it, her claim shown as self-reported. Submissions past
# the caps, and files that are not .c or .h, are refused whole. Prints
# cmocka-style summary lines; needs HOTROW_PG_URL as a superuser.
. "$(dirname "$0")/../harness/usage.sh"
set -u
bin=${HOTROW_BIN:-build/hotrow}
tmp=$(mktemp -d)
. "$(dirname "$0")/../harness/check.sh"

. "$(dirname "$0")/server.sh" rebuild
trap 'rm -rf "$tmp"; "$bin" class drop --db "$admin" --yes >/dev/null 2>&1' EXIT

printf 'rita\nsam\n' >"$tmp/roster"
if ! "$bin" class init --db "$admin" --roster "$tmp/roster" --out "$tmp/urls" >"$tmp/init" 2>&1; then
	bad class__rebuild_init "class init failed: $(head -c 600 "$tmp/init")"
	summary
fi
A=$(url_of rita) B=$(url_of sam)
max=$(q "select max_score from hotrow_class.labs where name = '01-hot-row'")

# Sam's own kit: enough of one for `class submit` to find exercises/01-hot-row.
kit=$tmp/sam
mkdir -p "$kit/labs/01-hot-row" "$kit/exercises/01-hot-row"
: >"$kit/Makefile"; : >"$kit/labs/module.mk"
head -n 1 labs/01-hot-row/README.md >"$kit/labs/01-hot-row/README.md"
cp solutions/01-hot-row/*.c "$kit/exercises/01-hot-row/"

# class__submit_caps: a file past the size cap, or a submission of too
# many files, stores nothing (not even the files before it).
head -c 70000 /dev/zero | tr '\0' 'x' >"$kit/exercises/01-hot-row/zz_big.c"
HOTROW_ROOT=$kit HOTROW_PG_URL=$B "$bin" class submit 01 >"$tmp/s1" 2>&1
rc1=$?
rm "$kit/exercises/01-hot-row/zz_big.c"
i=0; while [ $i -lt 17 ]; do echo "int f$i;" >"$kit/exercises/01-hot-row/extra$i.c"; i=$((i + 1)); done
HOTROW_ROOT=$kit HOTROW_PG_URL=$B "$bin" class submit 01 >"$tmp/s2" 2>&1
rc2=$?
rm "$kit/exercises/01-hot-row/"extra*.c
n=$(q "select count(*) from hotrow_class.submissions")
if [ $rc1 = 1 ] && [ $rc2 = 1 ] && [ "$n" = 0 ] && grep -q "65536" "$tmp/s1" && grep -q "at most 16 files" "$tmp/s2"
then ok class__submit_caps
else bad class__submit_caps "exits $rc1 $rc2, $n file(s) stored: $(cat "$tmp/s1" "$tmp/s2" | head -4)"; fi

# class__submit: the files are stored, as Sam's.
HOTROW_ROOT=$kit HOTROW_PG_URL=$B "$bin" class submit 01 >"$tmp/s3" 2>&1
rc=$?
stored=$(q "select student || ' ' || lab || ' ' || file from hotrow_class.submissions")
if [ $rc = 0 ] && [ "$stored" = "sam 01-hot-row hot_row.c" ]; then ok class__submit
else bad class__submit "exit $rc, stored: $stored; $(cat "$tmp/s3")"; fi

# Rita claims full marks without submitting anything.
psql "$A" -XAtqc "select hotrow_class.record('01-hot-row', $max, $max)" >/dev/null 2>&1
places=$(q "select last_value from hotrow_class.places")
"$bin" class grade --db "$admin" --rebuild --out "$tmp/grade" >"$tmp/g" 2>&1
rc=$?
places2=$(q "select last_value from hotrow_class.places")
j=$tmp/grade/results.json

# class__rebuild_scores_submission: Sam's solution earns the maximum,
# and its checks ran as Sam (his session asked for their schemas).
got=$(grep -o '"name": "sam: 01-hot-row", "score": [0-9]*, "max_score": [0-9]*' "$j" | tr -dc '0-9 ' | awk '{ print $(NF-1), $NF }')
if [ $rc = 0 ] && [ "${got% *}" = "${got#* }" ] && [ "${got% *}" -gt 0 ] &&
   [ "$places2" -gt "$places" ]; then ok class__rebuild_scores_submission
else bad class__rebuild_scores_submission "exit $rc, schemas made as a student: $places -> $places2: $(cat "$tmp/g"; grep 'sam: 01' "$j")"; fi

# class__self_report_is_no_score: Rita's claim is shown, and scores 0.
if grep -q "\"name\": \"rita: 01-hot-row\", \"score\": 0, \"max_score\": $max, \"output\": \"not graded.*self-reported (not scored): $max of $max" "$j"
then ok class__self_report_is_no_score
else bad class__self_report_is_no_score "$(grep 'rita: 01' "$j")"; fi
summary
