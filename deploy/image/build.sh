#!/usr/bin/env bash
# Builds the hightick image from a binary already built, with buildah and no
# registry (the image starts from scratch):
#
#   deploy/image/build.sh [BINARY] [TAG]
#
# BINARY defaults to target/release/hightick, TAG to hightick:latest (what
# deploy/ references). The files come from rootfs.sh, as in the Dockerfile's
# build stage; the image's config (user, entrypoint, env, labels, workdir,
# ports) is the Dockerfile's `runtime` stage itself, run by `buildah bud`
# with its `COPY --from=build /rootfs` read from a local directory instead.
# So both paths give the same layout. HIGHTICK_BUILD (env and labels) is the
# git commit, with `-dirty` when the tree has changes, or $HIGHTICK_BUILD.
# Prints `FIGURE image_size_mb <value> MB`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
binary=${1:-$root/target/release/hightick}
tag=${2:-hightick:latest}

command -v buildah >/dev/null || { echo "build.sh: buildah not found (apt-get install buildah)" >&2; exit 1; }

if [ -z "${HIGHTICK_BUILD:-}" ]; then
  HIGHTICK_BUILD=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  if [ "$HIGHTICK_BUILD" != unknown ] && [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    HIGHTICK_BUILD=$HIGHTICK_BUILD-dirty
  fi
fi

context=$(mktemp -d /tmp/hightick-image.XXXXXX)
trap 'rm -rf "$context"' EXIT

bash "$here/rootfs.sh" "$binary" "$context/rootfs"

# The Dockerfile's runtime stage, its files from the directory beside it.
awk '/^FROM scratch AS runtime/ { on = 1 } on' "$here/Dockerfile" \
  | sed -e 's#--from=build ##' -e 's# /rootfs# rootfs#' > "$context/Containerfile"
grep -q '^COPY rootfs /$' "$context/Containerfile" \
  || { echo "build.sh: the Dockerfile's runtime stage no longer starts with COPY --from=build /rootfs /" >&2; exit 1; }

buildah bud --quiet \
  --file "$context/Containerfile" \
  --build-arg "HIGHTICK_BUILD=$HIGHTICK_BUILD" \
  --tag "$tag" \
  "$context" >/dev/null

echo "build.sh: built $tag (HIGHTICK_BUILD=$HIGHTICK_BUILD)"
if command -v podman >/dev/null; then
  size=$(podman image inspect --format '{{.Size}}' "$tag")
else
  size=$(du -sb "$context/rootfs" | cut -f1)  # what the image holds
fi
echo "FIGURE image_size_mb $(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1000000 }') MB"
