#!/usr/bin/env bash
# Lays out the hightick image's root filesystem in a directory:
#
#   rootfs.sh BINARY DEST
#
#   /usr/local/bin/hightick      BINARY, debug info stripped (symbols kept, so
#                                a panic's backtrace still names functions)
#   <each library ldd names>     at the path ldd gives, plus the dynamic loader
#   /etc/ssl/certs/              this machine's CA certificates
#   /etc/passwd, /etc/group      root and hightick (uid/gid 10001), nobody
#   /etc/nsswitch.conf           hosts: files dns
#   /var/lib/hightick            the state dir (results outbox, SQLite), owned by hightick
#   /tmp                         1777
#
# Both build paths use it: the Dockerfile's build stage and build.sh
# (buildah, no registry), so the two images hold the same files.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY DEST" >&2
  exit 2
fi
binary=$1
dest=$2
[ -x "$binary" ] || { echo "rootfs.sh: $binary is not an executable file" >&2; exit 1; }

uid=10001
gid=10001

rm -rf "$dest"
mkdir -p "$dest/usr/local/bin" "$dest/etc/ssl" "$dest/var/lib/hightick" "$dest/tmp"

install -m 0755 "$binary" "$dest/usr/local/bin/hightick"
strip --strip-debug "$dest/usr/local/bin/hightick"

# The shared libraries and the loader, at the paths ldd names (both the
# `name => /path` lines and the loader's own `/path` line), copied as files.
libs=$(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
if [ -z "$libs" ]; then
  echo "rootfs.sh: ldd named no libraries for $binary (a static binary needs none: drop this check)" >&2
  exit 1
fi
for lib in $libs; do
  mkdir -p "$dest$(dirname "$lib")"
  cp -L "$lib" "$dest$lib"
done

cp -rL /etc/ssl/certs "$dest/etc/ssl/certs"

cat > "$dest/etc/passwd" <<EOF
root:x:0:0:root:/root:/sbin/nologin
hightick:x:$uid:$gid:hightick:/var/lib/hightick:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
EOF
cat > "$dest/etc/group" <<EOF
root:x:0:
hightick:x:$gid:
nogroup:x:65534:
EOF
echo 'hosts: files dns' > "$dest/etc/nsswitch.conf"

chown "$uid:$gid" "$dest/var/lib/hightick"
chmod 0755 "$dest/var/lib/hightick"
chmod 1777 "$dest/tmp"

echo "rootfs.sh: $dest holds hightick and $(echo "$libs" | wc -l) libraries:" $libs
