# pg_lib.sh - a PostgreSQL of a test's own (sourced): initdb in a temporary
# directory, the server on a unix socket there (no TCP: listen_addresses is
# empty), as the current user (as nobody when that is root, which PostgreSQL
# refuses to be; its superuser is still named after the current user, whom
# trust lets in over the socket); stopped by pg_stop (call it from a trap).
#   pg_start      starts it: sets PG_DIR, PG_PORT; exports BERTH_TEST_PG_HOST/_PORT
#   pg_newdb NAME makes a database; pg_url NAME prints its URL
#   pg_stop       stops it and removes its directory
# PG_BIN: where initdb and postgres are (Debian's postgresql-15 by default).
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

pg_missing() { # prints why PostgreSQL cannot run here, or nothing
	local b
	for b in initdb pg_ctl postgres createdb; do
		[ -x "$PG_BIN/$b" ] || { echo "no $PG_BIN/$b (Debian's postgresql)"; return; }
	done
	[ "$(id -u)" != 0 ] || command -v setpriv >/dev/null || echo "root, and no setpriv to be nobody"
}

pg_as() { # runs a PostgreSQL binary as the one who owns the cluster
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
	else
		"$@"
	fi
}

pg_start() {
	PG_DIR=$(mktemp -d /tmp/berth-pg.XXXXXX) || return 1
	[ "$(id -u)" != 0 ] || chown nobody:nogroup "$PG_DIR"
	# a port of its own (the socket's name): free on this machine's loopback too
	PG_PORT=$((20000 + $$ % 20000))
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U "$(id -un)" --locale=C -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
		{ cat "$PG_DIR/initdb.log" >&2; return 1; }
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
		-o "-k $PG_DIR -p $PG_PORT -c listen_addresses= -c max_connections=400 -c shared_buffers=64MB" \
		start >/dev/null || { cat "$PG_DIR/server.log" >&2; return 1; }
	export BERTH_TEST_PG_HOST=$PG_DIR BERTH_TEST_PG_PORT=$PG_PORT
}

pg_url() { printf 'postgresql:///%s?host=%s&port=%s' "$1" "$PG_DIR" "$PG_PORT"; }

pg_newdb() { "$PG_BIN/createdb" -U "$(id -un)" -h "$PG_DIR" -p "$PG_PORT" "$1"; }

pg_stop() {
	[ -n "${PG_DIR:-}" ] || return 0
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$PG_DIR"
	PG_DIR=
}
