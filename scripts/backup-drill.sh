#!/usr/bin/env bash
# The PostgreSQL backup recipes of docs/backups.md, run end to end on throwaway clusters (initdb into a temp
# dir, ports from 55632 up, unix sockets in that dir); it never touches a server on 5432 and removes everything
# at the end (KEEP=1 keeps the temp dir).
#
#   1. A primary with WAL archiving on (the postgresql.conf lines of the doc), the service's migrations, and
#      the service itself (node scripts/run.mjs main) taking money over HTTP: a paid QR and a transfer.
#   2. pg_dump -Fc of that database, pg_restore into a new database, mps ledger check there.
#   3. pg_basebackup of the running primary; more money (a second QR); the recovery target time noted; then
#      "the mistake" (a third QR of 777.00) after it; the WAL switched and archived.
#   4. The base backup unpacked into a second cluster with restore_command and recovery_target_time: it
#      replays the archive up to the target and is promoted. There: mps ledger check, the balance (with the
#      second QR, without the mistake), and the merchant's API key still answering.
#
# Usage: scripts/backup-drill.sh   (from the repository; needs initdb/pg_ctl/pg_basebackup, psql, curl, jq)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PORT=${DRILL_PORT:-55632}          # the primary; the restored cluster takes PORT+1, the service PORT+2
RPORT=$((PORT + 1))
SPORT=$((PORT + 2))
ADMIN_TOKEN=drill-admin-token-0123456789abcdef
WORK=$(mktemp -d /tmp/mps-backup-drill.XXXXXX)
SERVICE_PID=

say() { printf '\n== %s\n' "$*"; }
# initdb and postgres refuse to run as root: as root, they run as the postgres OS user (as faults/cluster.ts does).
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg() { as_pg "$PGBIN/$1" "${@:2}"; }
sql() { psql -X -q -t -A -h 127.0.0.1 -p "$1" -U postgres -d "$2" -c "$3"; }
mps() { (cd "$REPO" && DATABASE_URL="$1" node bin/mps.js "${@:2}"); }
api() { # METHOD PATH [BODY] [API_KEY]: the service's HTTP API, failing on any status >= 300
  local auth=(-H "Authorization: Bearer $ADMIN_TOKEN")
  [ -n "${4:-}" ] && auth=(-H "X-API-KEY: $4" -H "Idempotency-Key: $(cat /proc/sys/kernel/random/uuid)")
  local body=()
  [ -n "${3:-}" ] && body=(-H 'Content-Type: application/json' -d "$3")
  curl -sS --fail-with-body -X "$1" "http://127.0.0.1:$SPORT$2" "${auth[@]}" "${body[@]}"
}
cleanup() {
  [ -n "$SERVICE_PID" ] && kill "$SERVICE_PID" 2>/dev/null && wait "$SERVICE_PID" 2>/dev/null || true
  for dir in "$WORK/primary" "$WORK/restored"; do
    [ -f "$dir/postmaster.pid" ] && pg pg_ctl -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

chmod 711 "$WORK"
mkdir -m 700 "$WORK/primary" "$WORK/archive" "$WORK/base" "$WORK/restored" "$WORK/sockets" "$WORK/logs"
if [ "$(id -u)" = 0 ]; then chown postgres: "$WORK/primary" "$WORK/archive" "$WORK/base" "$WORK/restored" "$WORK/sockets" "$WORK/logs"; fi

say "primary: initdb, WAL archiving on ($("$PGBIN/postgres" --version))"
pg initdb -D "$WORK/primary" -U postgres --auth=trust -E UTF8 --no-locale >/dev/null
as_pg tee -a "$WORK/primary/postgresql.conf" >/dev/null <<EOF
# --- backup drill: the settings of docs/backups.md ---
port = $PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK/sockets'
wal_level = replica
archive_mode = on
archive_command = 'test ! -f $WORK/archive/%f && cp %p $WORK/archive/%f'
archive_timeout = 60
EOF
pg pg_ctl -D "$WORK/primary" -l "$WORK/logs/primary.log" -w start >/dev/null
sql "$PORT" postgres 'create database mps' >/dev/null
URL="postgres://postgres@127.0.0.1:$PORT/mps"
echo "migrations applied: $(mps "$URL" migrate | jq '.applied | length')"

say "the service on the primary, money through its API"
(cd "$REPO" && exec env DATABASE_URL="$URL" PORT=$SPORT HOST=127.0.0.1 ADMIN_TOKEN=$ADMIN_TOKEN MODE=sandbox \
  SANDBOX_SETTLEMENT=off LOG_LEVEL=warn node scripts/run.mjs main >"$WORK/logs/service.log" 2>&1) &
SERVICE_PID=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$SPORT/readyz" >/dev/null && break; sleep 0.5; done
MERCHANT=$(api POST /admin/v1/merchants '{"name":"Tienda Simulacro","ach_enabled":true}')
CODE=$(jq -r .business_code <<<"$MERCHANT"); KEY=$(jq -r .api_key <<<"$MERCHANT")
pay() { # AMOUNT: a QR of the merchant, paid on the sandbox rail
  local qr; qr=$(api POST /api/v2/simple-qrs "{\"business_code\":$CODE,\"amount\":$1}" "$KEY" | jq -r .id)
  api POST "/api/v2/sandbox/simple-qrs/$qr/payments" '' "$KEY" >/dev/null
}
pay 100
api POST /api/v2/transfers "{\"business_code\":$CODE,\"amount\":30,\"currency\":\"BOB\",\"destination\":{\"type\":\"bank_account\",\"bank_code\":1001,\"account_number\":\"10000123454321\",\"account_titular\":\"Ana\"}}" "$KEY" >/dev/null
echo "merchant $CODE after a paid QR of 100.00 and a transfer of 30.00: $(api GET /api/v2/balance '' "$KEY" | jq -c '{available, pending_out}')"

say "pg_dump -Fc, pg_restore into a new database, ledger check there"
pg pg_dump -h 127.0.0.1 -p "$PORT" -U postgres -Fc -f "$WORK/base/mps.dump" mps
sql "$PORT" postgres 'create database mps_from_dump' >/dev/null
pg pg_restore -h 127.0.0.1 -p "$PORT" -U postgres -d mps_from_dump --no-owner "$WORK/base/mps.dump"
echo "dump: $(du -h "$WORK/base/mps.dump" | cut -f1)"
echo "ledger check of the restored dump: $(mps "postgres://postgres@127.0.0.1:$PORT/mps_from_dump" ledger check | jq -c .)"

say "pg_basebackup of the running primary"
pg pg_basebackup -h 127.0.0.1 -p "$PORT" -U postgres -D "$WORK/base/basebackup" -Ft -z -X stream -c fast
ls -l "$WORK/base/basebackup" | awk 'NR > 1 { print $5, $9 }'

say "more money after the base backup, the recovery target, then the mistake"
pay 50
BEFORE=$(api GET /api/v2/balance '' "$KEY" | jq -c '{available, pending_out}')
echo "balance with the second QR (50.00): $BEFORE"
sleep 1
TARGET=$(sql "$PORT" postgres "select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'")
echo "recovery_target_time = '$TARGET'"
sleep 1
pay 777
echo "after the mistake (a QR of 777.00): $(api GET /api/v2/balance '' "$KEY" | jq -c '{available, pending_out}')"
kill "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true; SERVICE_PID=
WAL=$(sql "$PORT" postgres 'select pg_walfile_name(pg_switch_wal())')
for _ in $(seq 1 60); do
  [ "$(sql "$PORT" postgres 'select last_archived_wal from pg_stat_archiver')" \> "$WAL" ] || \
  [ "$(sql "$PORT" postgres 'select last_archived_wal from pg_stat_archiver')" = "$WAL" ] && break; sleep 0.5
done
echo "archived up to $(sql "$PORT" postgres 'select last_archived_wal from pg_stat_archiver'); $(ls "$WORK/archive" | wc -l) files in the archive"

say "point-in-time recovery into a second cluster"
as_pg tar -xzf "$WORK/base/basebackup/base.tar.gz" -C "$WORK/restored"
as_pg tee -a "$WORK/restored/postgresql.conf" >/dev/null <<EOF
# --- backup drill: recovery settings of docs/backups.md ---
port = $RPORT
unix_socket_directories = '$WORK/sockets'
archive_mode = off
restore_command = 'cp $WORK/archive/%f %p'
recovery_target_time = '$TARGET'
recovery_target_action = 'promote'
EOF
as_pg touch "$WORK/restored/recovery.signal"
pg pg_ctl -D "$WORK/restored" -l "$WORK/logs/restored.log" -w -t 120 start >/dev/null
for _ in $(seq 1 120); do [ "$(sql "$RPORT" postgres 'select pg_is_in_recovery()')" = f ] && break; sleep 0.5; done
grep -E 'recovery stopping|selected new timeline|archive recovery complete|database system is ready' "$WORK/logs/restored.log" | sed 's/^[^]]*] //; s/^.*LOG: */LOG: /'
RURL="postgres://postgres@127.0.0.1:$RPORT/mps"
echo "ledger check of the recovered cluster: $(mps "$RURL" ledger check | jq -c .)"

say "the service on the recovered cluster: the same API key, the balance as at the target"
(cd "$REPO" && exec env DATABASE_URL="$RURL" PORT=$SPORT HOST=127.0.0.1 ADMIN_TOKEN=$ADMIN_TOKEN MODE=sandbox \
  SANDBOX_SETTLEMENT=off LOG_LEVEL=warn node scripts/run.mjs main >"$WORK/logs/service-restored.log" 2>&1) &
SERVICE_PID=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$SPORT/readyz" >/dev/null && break; sleep 0.5; done
AFTER=$(api GET /api/v2/balance '' "$KEY" | jq -c '{available, pending_out}')
echo "balance on the recovered cluster: $AFTER"
if [ "$AFTER" = "$BEFORE" ]; then echo "DRILL OK: recovered to $TARGET, the second QR kept, the 777.00 mistake gone"
else echo "DRILL FAILED: expected $BEFORE"; exit 1; fi
