#!/usr/bin/env bash
# The image test: a game server and a gateway, each in its own container of
# the image, reached from this machine only through ports published on
# 127.0.0.1 under other numbers than the ones they listen on; a swarm
# `match-play` run from this machine (outside the containers) logs in,
# is matched, plays whole matches, and every result must be recorded with
# no desync.
#
#   deploy/image/test.sh [IMAGE] [HOST_BINARY]
#
# IMAGE defaults to hightick:latest (deploy/image/build.sh), HOST_BINARY (the
# swarm) to target/release/hightick. Needs podman and runc (podman-setup.sh).
# Exits non-zero on any failure, printing the containers' logs, and always
# removes its containers and network. Prints
# `FIGURE container_start_to_first_match_s <value> s`: from starting the first
# container to the first match result written on the server.
#
# Networking: the two containers are on a bridge network of their own, each
# at a fixed address, so that the server can be told where the gateway is
# (--gateway) and what admin address to give it (--advertise-admin); podman's
# CNI bridge here has no name resolution between containers. The server tells
# players the published address (--public-address 127.0.0.1:30001), not the
# one it binds. Ports and subnet can be moved with the variables below.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
image=${1:-hightick:latest}
host_bin=${2:-$root/target/release/hightick}

name=${HIGHTICK_IMAGE_TEST_NAME:-hightick-imagetest}
subnet_prefix=${HIGHTICK_IMAGE_TEST_SUBNET:-10.90.77}   # a /24 of its own
game_port=${HIGHTICK_IMAGE_TEST_GAME_PORT:-30001}       # -> 7777/udp in the server
gateway_port=${HIGHTICK_IMAGE_TEST_GATEWAY_PORT:-30080} # -> 8080/tcp in the gateway
duration=${HIGHTICK_IMAGE_TEST_DURATION:-45s}           # the swarm's hold
users=10                                                # one 5v5 match at a time
gateway_ip=$subnet_prefix.10
server_ip=$subnet_prefix.11
network=$name
gateway_ctr=$name-gateway
server_ctr=$name-server
podman=(podman)
run=("${podman[@]}" run --detach --pull never --runtime runc --network "$network")

[ -x "$host_bin" ] || { echo "test.sh: no host binary $host_bin (cargo build --release -p hightick-cli)" >&2; exit 1; }
"${podman[@]}" image exists "$image" || { echo "test.sh: no image $image (deploy/image/build.sh)" >&2; exit 1; }

work=$(mktemp -d /tmp/hightick-imagetest.XXXXXX)
poller=
ok=0

cleanup() {
  local status=$?
  [ -n "$poller" ] && kill "$poller" 2>/dev/null || true
  if [ "$ok" != 1 ]; then
    for c in "$gateway_ctr" "$server_ctr"; do
      if "${podman[@]}" container exists "$c"; then
        echo "---- logs of $c" >&2
        "${podman[@]}" logs "$c" 2>&1 | tail -n 80 >&2 || true
      fi
    done
    echo "test.sh: FAILED" >&2
    [ "$status" = 0 ] && status=1
  fi
  "${podman[@]}" rm --force --time 0 "$gateway_ctr" "$server_ctr" >/dev/null 2>&1 || true
  "${podman[@]}" network rm --force "$network" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "test.sh: $*" >&2; exit 1; }

# Leftovers of an earlier run that was killed.
"${podman[@]}" rm --force --time 0 "$gateway_ctr" "$server_ctr" >/dev/null 2>&1 || true
"${podman[@]}" network rm --force "$network" >/dev/null 2>&1 || true

# Secrets both sides share (as deploy/ mounts them: /etc/hightick/secrets),
# the gateway's config, the server's state dir (the image's user, uid 10001,
# owns it: the results file and outbox are read from here after the run).
mkdir -p "$work/secrets" "$work/server-state"
for f in token-key session-key server-secret; do
  od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$work/secrets/$f"
done
server_secret=$(cat "$work/secrets/server-secret")
chmod 0755 "$work" "$work/secrets"
chmod 0644 "$work/secrets/"*
chown 10001:10001 "$work/server-state"
# Short matches: one round to win, a 1 s buy phase, 10 s of combat.
settings='{ rounds_to_win = 1, buy_seconds = 1.0, combat_seconds = 10.0 }'
cat > "$work/gateway.toml" <<EOF
listen = "0.0.0.0:8080"
# Every virtual player comes from 127.0.0.1 (NATed to the bridge's address).
rate_limit_per_s = 0.0
token_key_file = "/etc/hightick/secrets/token-key"
session_key_file = "/etc/hightick/secrets/session-key"
server_secret_file = "/etc/hightick/secrets/server-secret"

[[modes]]
name = "5v5"
players = 10
settings = $settings
EOF
# scenarios/match-play.toml with the same match settings for the bots.
awk -v s="$settings" '{ print } /^\[matches\]/ { print "settings = " s }' \
  "$root/scenarios/match-play.toml" > "$work/match-play.toml"
grep -q '^settings = ' "$work/match-play.toml" || fail "scenarios/match-play.toml has no [matches] table"

"${podman[@]}" network create --subnet "$subnet_prefix.0/24" "$network" >/dev/null

echo "== containers of $image on $network ($subnet_prefix.0/24)"
start=$(date +%s.%N)
"${run[@]}" --name "$gateway_ctr" --ip "$gateway_ip" \
  --publish "127.0.0.1:$gateway_port:8080/tcp" \
  --volume "$work/secrets:/etc/hightick/secrets:ro" \
  --volume "$work/gateway.toml:/etc/hightick/gateway.toml:ro" \
  "$image" gateway --config /etc/hightick/gateway.toml >/dev/null
"${run[@]}" --name "$server_ctr" --ip "$server_ip" \
  --publish "127.0.0.1:$game_port:7777/udp" \
  --volume "$work/secrets:/etc/hightick/secrets:ro" \
  --volume "$work/server-state:/var/lib/hightick" \
  "$image" serve \
  --bind 0.0.0.0:7777 --admin 0.0.0.0:7780 --workers 1 \
  --public-address "127.0.0.1:$game_port" --advertise-admin "$server_ip:7780" \
  --key-file /etc/hightick/secrets/token-key \
  --server-secret-file /etc/hightick/secrets/server-secret \
  --gateway "http://$gateway_ip:8080" \
  --state-dir /var/lib/hightick --results /var/lib/hightick/results.jsonl \
  --drain-timeout 10 >/dev/null

gateway=http://127.0.0.1:$gateway_port
hosts=
for _ in $(seq 1 300); do
  hosts=$(curl -fsS -m 2 -H "authorization: Bearer $server_secret" "$gateway/v1/hosts" 2>/dev/null || true)
  case $hosts in *'"host_id"'*) break ;; esac
  for c in "$gateway_ctr" "$server_ctr"; do
    [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$c")" = true ] || fail "$c exited"
  done
  sleep 0.1
done
case $hosts in *'"host_id"'*) ;; *) fail "the server did not register with the gateway within 30 s" ;; esac
registered=$(date +%s.%N)
echo "the gateway (published at $gateway) lists the server: $hosts"
echo "containers started to server registered: $(awk -v a="$start" -v b="$registered" 'BEGIN { printf "%.1f", b - a }') s"

# The first result the server writes: when the first whole match was played.
(
  while [ ! -s "$work/server-state/results.jsonl" ]; do sleep 0.1; done
  date +%s.%N > "$work/first-result"
) &
poller=$!

echo "== swarm: $users players, match-play, $duration, against $gateway (game traffic to 127.0.0.1:$game_port)"
swarm_status=0
timeout 300 "$host_bin" swarm run "$work/match-play.toml" \
  --users "$users" --ramp-up 2s --duration "$duration" \
  --target "gateway=$gateway" \
  --json "$work/swarm.json" --report "$work/swarm-report.html" --quiet \
  > "$work/swarm.log" 2>&1 || swarm_status=$?
cat "$work/swarm.log"

# SIGTERM: the server drains (matches still running end within
# --drain-timeout) and posts every result before it exits.
"${podman[@]}" stop --time 40 "$server_ctr" >/dev/null
server_exit=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$server_ctr")
metrics=$(curl -fsS -m 5 "$gateway/metrics") || fail "the gateway's /metrics did not answer"

[ "$swarm_status" = 0 ] || fail "the swarm run failed (exit $swarm_status)"
[ "$server_exit" = 0 ] || fail "the server exited with $server_exit after SIGTERM"

# The swarm's JSON result: its "matches" summary (python3: .ci/run installs it).
read -r desyncs matches_played < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1])).get("matches") or {}
print(m.get("desyncs", ""), m.get("finished", ""))
' "$work/swarm.json") || true
[ -n "$desyncs" ] || fail "no desyncs figure in the swarm's JSON"
[ "$desyncs" = 0 ] || fail "$desyncs desyncs"

finished=$(grep -c . "$work/server-state/results.jsonl" 2>/dev/null || true)
finished=${finished:-0}
abandoned=$(grep -c '"outcome":"abandoned"' "$work/server-state/results.jsonl" 2>/dev/null || true)
abandoned=${abandoned:-0}
pending=$(find "$work/server-state/outbox/pending" -name '*.json' 2>/dev/null | wc -l)
rejected=$(find "$work/server-state/outbox/rejected" -name '*.json' 2>/dev/null | wc -l)
recorded=$(echo "$metrics" | awk '/^hightick_gateway_requests_total\{/ && /route="\/v1\/results"/ && /status="200"/ { n += $NF } END { print n + 0 }')
echo "matches: $finished finished on the server ($abandoned ended by the drain), $recorded results recorded by the gateway (200s), outbox: $pending pending, $rejected rejected; bots finished ${matches_played:-?}; desyncs $desyncs"
[ "$((finished - abandoned))" -ge 1 ] || fail "no whole match was played"
[ "$pending" = 0 ] && [ "$rejected" = 0 ] || fail "results left in the server's outbox"
[ "$recorded" -ge "$finished" ] || fail "the gateway recorded $recorded results of $finished"

[ -s "$work/first-result" ] || fail "no first result time"
echo "FIGURE container_start_to_first_match_s $(awk -v a="$start" -v b="$(cat "$work/first-result")" 'BEGIN { printf "%.1f", b - a }') s"
ok=1
echo "test.sh: passed"
