#!/usr/bin/env bash
# The container image (deploy/image/), built and run: podman, buildah and
# runc installed if missing, the release binary, the image built from it with
# buildah (no registry), then a server and a gateway in containers of it with a
# swarm match-play run against their published ports (deploy/image/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

began=$SECONDS
bash deploy/image/podman-setup.sh
cargo build --release -p hightick-cli --locked
bash deploy/image/build.sh target/release/hightick hightick:latest
bash deploy/image/test.sh hightick:latest target/release/hightick
echo "the image: built and tested in $((SECONDS - began)) s"
