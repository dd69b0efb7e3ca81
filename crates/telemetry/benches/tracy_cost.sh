#!/usr/bin/env bash
# The Tracy feature's cost: the scope bench built without and with
# `--features tracy`, run in turn ROUNDS times (default 7; interleaved, so
# both builds see the same machine), the median of each build's figures, and
# the ratios against the build without the feature:
#   off        the default build (nothing of Tracy compiled in)
#   on         built with the feature, no profiler attached (the client idles)
#   connected  built with the feature, a stand-in profiler attached and
#              draining what the client streams
# BASELINE=path/to/another/scope-bench-binary adds a fourth column (e.g. the
# bench built on main, to show the build without the feature is unchanged).
#
# Run: crates/telemetry/benches/tracy_cost.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds=${ROUNDS:-7}

build() {
  cargo bench -p hightick-telemetry --bench scope --no-run "$@" 2>&1 \
    | sed -n 's/.*Executable benches\/scope.rs (\(.*\))/\1/p' | tail -1
}
off=$(build)
on=$(build --features tracy)
[[ -x "$off" && -x "$on" ]] || { echo "could not build the scope bench" >&2; exit 1; }

# A free port for the Tracy client, so the stand-in profiler finds this
# process's client and no other.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

figure() { sed -n "s/^FIGURE $1 \([0-9.]*\) ns$/\1/p"; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$rounds"); do
  "$off" | figure telemetry_scope_ns >>"$tmp/off"
  out=$(TRACY_PORT=$port "$on")
  figure telemetry_scope_ns <<<"$out" >>"$tmp/on"
  figure telemetry_scope_tracy_connected_ns <<<"$out" >>"$tmp/connected"
  if [[ -n "${BASELINE:-}" ]]; then
    "$BASELINE" | figure telemetry_scope_ns >>"$tmp/baseline"
  fi
  echo "round $i/$rounds: off $(tail -1 "$tmp/off") on $(tail -1 "$tmp/on") connected $(tail -1 "$tmp/connected") ns" >&2
done

off_ns=$(median <"$tmp/off")
on_ns=$(median <"$tmp/on")
connected_ns=$(median <"$tmp/connected")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "FIGURE telemetry_scope_tracy_off_ns $off_ns ns"
echo "FIGURE telemetry_scope_tracy_on_ns $on_ns ns"
echo "FIGURE telemetry_scope_tracy_connected_ns $connected_ns ns"
echo "FIGURE telemetry_scope_tracy_on_ratio $(ratio "$on_ns" "$off_ns") x"
echo "FIGURE telemetry_scope_tracy_connected_ratio $(ratio "$connected_ns" "$off_ns") x"
if [[ -s "$tmp/baseline" ]]; then
  baseline_ns=$(median <"$tmp/baseline")
  echo "FIGURE telemetry_scope_baseline_ns $baseline_ns ns"
  echo "FIGURE telemetry_scope_off_vs_baseline_ratio $(ratio "$off_ns" "$baseline_ns") x"
fi
echo "medians of $rounds interleaved rounds; each round's figure is itself a median of 301 batches"
