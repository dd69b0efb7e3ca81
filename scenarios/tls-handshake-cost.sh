#!/usr/bin/env bash
# What one TLS handshake costs the gateway, in its own CPU: the method behind
# the "handshake per login" line of the TLS figure in docs/PERFORMANCE.md.
#
#   scenarios/tls-handshake-cost.sh BIN [SECONDS]
#   scenarios/tls-handshake-cost.sh target/release/hightick 10
#
# Starts two `BIN gateway`s, one with [tls] (a throwaway CA, tls-test-ca.sh)
# and one plain, and for SECONDS each opens connections one after another,
# each asking `GET /healthz` (HTTP/1.0: the gateway closes it after the
# answer):
#   full     openssl s_time -new    (a full TLS handshake per connection)
#   resumed  openssl s_time -reuse  (each resumes the first's session)
#   plain    bash /dev/tcp          (no TLS)
# The gateway's CPU (utime + stime from /proc) over each, divided by the
# connections it counted (TLS: its handshake counters; plain: the client's
# count), is its CPU per connection; less the plain one, per handshake.
# Needs bash, bc, openssl 3, curl, xxd.
set -euo pipefail
BIN=$1 SECS=${2:-10}
HERE=$(cd "$(dirname "$0")" && pwd)
TLS_PORT=${TLS_PORT:-18443} PLAIN_PORT=${PLAIN_PORT:-18081}
W=$(mktemp -d "${TMPDIR:-/tmp}/tls-cost-XXXX")
"$HERE/tls-test-ca.sh" "$W"
HIGHTICK_KEY=$(head -c32 /dev/urandom | xxd -p -c64)
HIGHTICK_SERVER_SECRET=$(head -c24 /dev/urandom | xxd -p -c64)
export HIGHTICK_KEY HIGHTICK_SERVER_SECRET
printf 'listen = "127.0.0.1:%s"\ndata_dir = "%s"\nrate_limit_per_s = 0\n[tls]\ncert_file = "%s"\nkey_file = "%s"\n' \
  "$TLS_PORT" "$W/tls-data" "$W/gateway.crt" "$W/gateway.key" > "$W/tls.toml"
printf 'listen = "127.0.0.1:%s"\ndata_dir = "%s"\nrate_limit_per_s = 0\n' \
  "$PLAIN_PORT" "$W/plain-data" > "$W/plain.toml"
"$BIN" gateway --config "$W/tls.toml" > "$W/tls.log" 2>&1 &
tls_gw=$!
"$BIN" gateway --config "$W/plain.toml" > "$W/plain.log" 2>&1 &
plain_gw=$!
trap 'kill $tls_gw $plain_gw 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q listening "$W/tls.log" && grep -q listening "$W/plain.log" && break
  sleep 0.1
done

ticks=$(getconf CLK_TCK)
cpu_of() { awk '{print $14+$15}' "/proc/$1/stat"; }
counter() {
  curl -s --cacert "$W/ca.crt" "https://127.0.0.1:$TLS_PORT/metrics" |
    awk -v n="hightick_gateway_tls_handshakes_$1_total" '$1 == n { print $2 }'
}
# per_connection NAME PID CONNECTIONS CPU0 CPU1: prints and returns the us.
report() {
  local us
  us=$(echo "($5 - $4) / $ticks * 1000000 / $3" | bc -l)
  printf '%-8s %7d connections  gateway CPU %8.1f us per connection\n' "$1" "$3" "$us" >&2
  echo "$us"
}
s_time() {
  openssl s_time -connect "127.0.0.1:$TLS_PORT" -CAfile "$W/ca.crt" -www /healthz \
    -time "$SECS" "$1" > "$W/s_time$1.log" 2>&1 || true
}

echo "== TLS handshakes, ${SECS}s each; load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
kind_full=$(counter full) c0=$(cpu_of $tls_gw)
s_time -new
n=$(( $(counter full) - kind_full ))
full_us=$(report full $tls_gw "$n" "$c0" "$(cpu_of $tls_gw)")

kind_resumed=$(counter resumed) c0=$(cpu_of $tls_gw)
s_time -reuse
n=$(( $(counter resumed) - kind_resumed ))
resumed_us=$(report resumed $tls_gw "$n" "$c0" "$(cpu_of $tls_gw)")

n=0 c0=$(cpu_of $plain_gw) end=$(( $(date +%s) + SECS ))
while [ "$(date +%s)" -lt "$end" ]; do
  exec 3<>"/dev/tcp/127.0.0.1/$PLAIN_PORT"
  printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
  while read -r -u 3 _; do :; done
  exec 3<&-
  n=$((n + 1))
done
plain_us=$(report plain $plain_gw "$n" "$c0" "$(cpu_of $plain_gw)")
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

printf 'FIGURE tls_full_handshake_gateway_cpu_us %.0f us\n' "$(echo "$full_us - $plain_us" | bc -l)"
printf 'FIGURE tls_resumed_handshake_gateway_cpu_us %.0f us\n' "$(echo "$resumed_us - $plain_us" | bc -l)"
printf 'FIGURE tls_plain_connection_gateway_cpu_us %.0f us\n' "$plain_us"
echo "files: $W" >&2
