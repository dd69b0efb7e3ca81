#!/usr/bin/env bash
# Makes this (Debian, root) machine able to build and run the hightick image
# without a registry: installs podman, buildah and runc if missing, and sets
# `default_ulimits = []` in /etc/containers/containers.conf (podman's default
# ulimits are refused on the CI machines), keeping any other settings there.
# The containers run with `--runtime runc`: crun fails on these machines
# (cgroups v1 / hybrid).
set -euo pipefail

if ! command -v podman >/dev/null || ! command -v buildah >/dev/null || ! command -v runc >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman buildah runc >/dev/null
fi

conf=${CONTAINERS_CONF:-/etc/containers/containers.conf}  # podman reads this variable too
mkdir -p "$(dirname "$conf")"
touch "$conf"
# Any default_ulimits (one line or an array over several) becomes the empty
# list, under [containers]; everything else in the file stays as it was.
awk '
  skipping { if ($0 ~ /\]/) skipping = 0; next }
  /^[[:space:]]*default_ulimits[[:space:]]*=/ {
    if ($0 ~ /\[/ && $0 !~ /\]/) skipping = 1
    next
  }
  { print }
  /^[[:space:]]*\[containers\][[:space:]]*$/ { print "default_ulimits = []"; done = 1 }
  END { if (!done) printf "\n[containers]\ndefault_ulimits = []\n" }
' "$conf" > "$conf.new"
mv "$conf.new" "$conf"

podman --version
buildah --version
runc --version | head -1
