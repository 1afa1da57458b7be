#!/bin/sh
# labs/08-engine/keys.sh URL: which locks a like's foreign key check
# collides with, on a real PostgreSQL.
#
# Makes posts and likes (likes.post_id references posts) in a schema of
# its own, then, for each pair, holds the first statement open in a
# transaction on one connection, waits until pg_locks shows that
# connection holding its transaction id (so the first statement has run,
# however slow the machine), and runs the second on another with
# lock_timeout = 1s: it either finishes at once or says it timed out.
# Then the first connection commits. The schema is dropped at the end.
set -eu
case ${1-} in
-h|--help) sed -n '2s/^# /usage: /p; 3,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-?*) echo "labs/08-engine/keys.sh: unknown option '$1' (labs/08-engine/keys.sh --help shows the usage)" >&2; exit 2 ;;
esac
url=${1:?usage: labs/08-engine/keys.sh POSTGRES_URL}
schema=lab08_keys_$$
q() { PGOPTIONS="-c client_min_messages=warning" psql "$url" -X -q -v ON_ERROR_STOP=1 "$@"; }

q -c "CREATE SCHEMA $schema" -c "SET search_path = $schema" \
  -c "CREATE TABLE posts (id BIGINT PRIMARY KEY, likes BIGINT NOT NULL DEFAULT 0)" \
  -c "CREATE TABLE likes (post_id BIGINT NOT NULL REFERENCES posts, user_id BIGINT NOT NULL,
                          PRIMARY KEY (post_id, user_id))" \
  -c "INSERT INTO posts (id) VALUES (1)"
trap 'q -c "DROP SCHEMA $schema CASCADE"' EXIT

user=100
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; q -c "DROP SCHEMA $schema CASCADE"' EXIT
pair() { # held statement, then the one that may wait
	user=$((user + 1))
	tag=lab08_keys_held_$$_$user
	held=$(echo "$1" | sed "s/USER/$user/")
	rm -f "$tmp/done"
	(echo "SET application_name = '$tag'; SET search_path = $schema; BEGIN; $held"
	 while [ ! -e "$tmp/done" ]; do sleep 0.1; done; echo "COMMIT;") |
		psql "$url" -X -q >/dev/null 2>&1 &
	# Wait until the held statement has run: its connection then holds
	# the transaction id its write (or FOR UPDATE) took.
	tries=0
	until [ "$(psql "$url" -X -Atc "SELECT count(*) FROM pg_locks l
	            JOIN pg_stat_activity a ON a.pid = l.pid
	            WHERE a.application_name = '$tag' AND l.locktype = 'transactionid'
	              AND l.granted")" = 1 ]; do
		tries=$((tries + 1))
		if [ $tries -gt 300 ]; then
			echo "keys.sh: the held statement ($held) took no lock within 30 s" >&2
			touch "$tmp/done"
			exit 1
		fi
		sleep 0.1
	done
	user=$((user + 1))
	other=$(echo "$2" | sed "s/USER/$user/")
	if psql "$url" -X -q -v ON_ERROR_STOP=1 -c "SET search_path = $schema" \
	        -c "SET lock_timeout = '1s'" -c "$other" >/dev/null 2>&1; then
		verdict="ran at once"
	else
		verdict="WAITED (lock timeout)"
	fi
	touch "$tmp/done"
	printf '%-52s then %-52s %s\n' "$held" "$other" "$verdict"
	wait
}

pair "UPDATE posts SET likes = likes + 1 WHERE id = 1;" "INSERT INTO likes VALUES (1, USER)"
pair "INSERT INTO likes VALUES (1, USER);" "UPDATE posts SET likes = likes + 1 WHERE id = 1"
pair "INSERT INTO likes VALUES (1, USER);" "SELECT id FROM posts WHERE id = 1 FOR NO KEY UPDATE"
pair "INSERT INTO likes VALUES (1, USER);" "SELECT id FROM posts WHERE id = 1 FOR UPDATE"
pair "INSERT INTO likes VALUES (1, USER);" "DELETE FROM posts WHERE id = 1"
pair "SELECT id FROM posts WHERE id = 1 FOR UPDATE;" "INSERT INTO likes VALUES (1, USER)"
