#!/bin/sh
# labs/08-engine/keys.sh URL: which locks a like's foreign key check
# collides with, on a real PostgreSQL.
#
# Makes posts and likes (likes.post_id references posts) in a schema of
# its own, then, for each pair, holds the first statement open in a
# transaction on one connection for 3 s and runs the second on another
# with lock_timeout = 1s: it either finishes at once or says it timed out.
# The schema is dropped at the end.
set -eu
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
pair() { # held statement, then the one that may wait
	user=$((user + 1))
	held=$(echo "$1" | sed "s/USER/$user/")
	(echo "SET search_path = $schema; BEGIN; $held"; sleep 3; echo "COMMIT;") |
		psql "$url" -X -q >/dev/null 2>&1 &
	sleep 1
	user=$((user + 1))
	other=$(echo "$2" | sed "s/USER/$user/")
	if psql "$url" -X -q -v ON_ERROR_STOP=1 -c "SET search_path = $schema" \
	        -c "SET lock_timeout = '1s'" -c "$other" >/dev/null 2>&1; then
		verdict="ran at once"
	else
		verdict="WAITED (lock timeout)"
	fi
	printf '%-52s then %-52s %s\n' "$held" "$other" "$verdict"
	wait
}

pair "UPDATE posts SET likes = likes + 1 WHERE id = 1;" "INSERT INTO likes VALUES (1, USER)"
pair "INSERT INTO likes VALUES (1, USER);" "UPDATE posts SET likes = likes + 1 WHERE id = 1"
pair "INSERT INTO likes VALUES (1, USER);" "SELECT id FROM posts WHERE id = 1 FOR NO KEY UPDATE"
pair "INSERT INTO likes VALUES (1, USER);" "SELECT id FROM posts WHERE id = 1 FOR UPDATE"
pair "INSERT INTO likes VALUES (1, USER);" "DELETE FROM posts WHERE id = 1"
pair "SELECT id FROM posts WHERE id = 1 FOR UPDATE;" "INSERT INTO likes VALUES (1, USER)"
