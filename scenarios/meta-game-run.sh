#!/usr/bin/env bash
# The meta-game mix against a real gateway, with the gateway's CPU measured: the
# method behind the "Meta-game mix at 20,000 players" table in docs/PERFORMANCE.md.
#
#   scenarios/meta-game-run.sh BIN USERS RAMP_S HOLD_S [DATABASE_URL]
#   scenarios/meta-game-run.sh target/release/hightick 20000 30 60
#   TLS=1 scenarios/meta-game-run.sh target/release/hightick 5000 10 60
#   scenarios/meta-game-run.sh target/release/hightick 20000 30 60 \
#       postgres://hightick:hightick@127.0.0.1:5432/hightick_test
#
# Starts `BIN gateway` (per-IP rate limit off; SQLite in a fresh temporary data
# directory, or DATABASE_URL, whose public schema is emptied first), runs
# `BIN swarm run scenarios/meta-game.toml` against it, and prints the swarm's
# table and FIGURE lines: requests/s and p99 over the whole run (the swarm's own
# figures, ramp-up included), requests/s over the hold, and the gateway's CPU
# over the hold from /proc (cores, per request, requests/s per core), and
# PostgreSQL's (all `postgres` processes).
# TLS=1: the gateway terminates TLS itself ([tls], a P-256 certificate from a
# throwaway CA, tls-test-ca.sh) and the swarm speaks https:// and wss:// with
# that CA ([http] ca_file); the FIGUREs are named meta_<backend>_tls_<users>_*
# and add the TLS handshakes the gateway counted (full, resumed) per login.
# Needs bash, bc, jq, xxd; psql for a DATABASE_URL; openssl and curl for TLS=1.
set -euo pipefail
BIN=$1 USERS=$2 RAMP=$3 HOLD=$4 DB=${5:-}
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${PORT:-18080}
W=$(mktemp -d "${TMPDIR:-/tmp}/meta-game-XXXX")
cat > "$W/gateway.toml" <<EOF
listen = "127.0.0.1:$PORT"
data_dir = "$W/data"
rate_limit_per_s = 0
EOF
TLS=${TLS:-0}
scheme=http
scenario="$HERE/meta-game.toml"
curl_ca=()
if [ "$TLS" = 1 ]; then
  scheme=https
  "$HERE/tls-test-ca.sh" "$W"
  printf '[tls]\ncert_file = "%s"\nkey_file = "%s"\n' "$W/gateway.crt" "$W/gateway.key" >> "$W/gateway.toml"
  sed "/^\[http\]/a ca_file = \"$W/ca.crt\"" "$HERE/meta-game.toml" > "$W/meta-game.toml"
  scenario="$W/meta-game.toml"
  curl_ca=(--cacert "$W/ca.crt")
fi
HIGHTICK_KEY=$(head -c32 /dev/urandom | xxd -p -c64)
HIGHTICK_SERVER_SECRET=$(head -c24 /dev/urandom | xxd -p -c64)
export HIGHTICK_KEY HIGHTICK_SERVER_SECRET
args=(gateway --config "$W/gateway.toml")
backend=sqlite
if [ -n "$DB" ]; then
  backend=postgres
  psql -q "$DB" -c 'DROP SCHEMA public CASCADE; CREATE SCHEMA public;' >/dev/null
  args+=(--database-url "$DB")
fi
"$BIN" "${args[@]}" > "$W/gateway.log" 2>&1 &
gw=$!
trap 'kill $gw 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$W/gateway.log" && break; sleep 0.1; done

ticks=$(getconf CLK_TCK)
cpu_of() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_cpu() {
  local t=0 p
  for p in $(pgrep -x postgres || true); do t=$((t + $(cpu_of "$p"))); done
  echo $t
}
(
  sleep "$RAMP"
  echo "$(cpu_of $gw) $(pg_cpu) $(date +%s.%N)" > "$W/cpu0"
  sleep "$HOLD"
  echo "$(cpu_of $gw) $(pg_cpu) $(date +%s.%N)" > "$W/cpu1"
) &
sampler=$!
echo "== $backend, $scheme, $USERS players, ramp-up ${RAMP}s, hold ${HOLD}s; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" swarm run "$scenario" --users "$USERS" --ramp-up "${RAMP}s" \
  --duration "${HOLD}s" --target "gateway=$scheme://127.0.0.1:$PORT" \
  --json "$W/result.json" --report "$W/report.html" --quiet > "$W/swarm.log" 2>&1 || true
wait $sampler
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E '^(step|login|profile|shop|purchase|leaderboard|match history|all) ' "$W/swarm.log"

read -r g0 p0 t0 < "$W/cpu0"
read -r g1 p1 t1 < "$W/cpu1"
hold_requests=$(jq --argjson r "$RAMP" '[.timeline[] | select(.t_s > $r) | .requests] | add' "$W/result.json")
secs=$(echo "$t1 - $t0" | bc -l)
name="meta_${backend}_${USERS}"
if [ "$TLS" = 1 ]; then name="meta_${backend}_tls_${USERS}"; fi
printf 'FIGURE %s_req_per_s %.0f req/s\n' "$name" "$(jq .total.rps "$W/result.json")"
printf 'FIGURE %s_p99_ms %.2f ms\n' "$name" "$(jq '.total.p99_us / 1000' "$W/result.json")"
printf 'FIGURE %s_errors %d requests\n' "$name" "$(jq .total.failed "$W/result.json")"
printf 'FIGURE %s_hold_req_per_s %.0f req/s\n' "$name" "$(echo "$hold_requests / $HOLD" | bc -l)"
printf 'FIGURE %s_gateway_cpu_cores %.3f cores\n' "$name" "$(echo "($g1 - $g0) / $ticks / $secs" | bc -l)"
printf 'FIGURE %s_gateway_cpu_per_req_us %.0f us\n' "$name" \
  "$(echo "($g1 - $g0) / $ticks * 1000000 / $hold_requests" | bc -l)"
printf 'FIGURE %s_req_per_gateway_core %.0f req/s\n' "$name" \
  "$(echo "$hold_requests / (($g1 - $g0) / $ticks)" | bc -l)"
if [ "$backend" = postgres ]; then
  printf 'FIGURE %s_postgres_cpu_cores %.3f cores\n' "$name" "$(echo "($p1 - $p0) / $ticks / $secs" | bc -l)"
fi
if [ "$TLS" = 1 ]; then
  metrics=$(curl -s "${curl_ca[@]}" "https://127.0.0.1:$PORT/metrics")
  counted() { echo "$metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
  full=$(counted hightick_gateway_tls_handshakes_full_total)
  resumed=$(counted hightick_gateway_tls_handshakes_resumed_total)
  logins=$(counted hightick_gateway_logins_total)
  printf 'FIGURE %s_tls_full_handshakes %d handshakes\n' "$name" "$full"
  printf 'FIGURE %s_tls_resumed_handshakes %d handshakes\n' "$name" "$resumed"
  printf 'FIGURE %s_tls_handshakes_per_login %.4f handshakes\n' "$name" \
    "$(echo "($full + $resumed) / $logins" | bc -l)"
fi
kill $gw 2>/dev/null || true
wait $gw 2>/dev/null || true
echo "files: $W"
