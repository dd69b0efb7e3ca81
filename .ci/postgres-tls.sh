#!/usr/bin/env bash
# A second PostgreSQL 15 cluster, `15/tls`, that takes TCP logins over TLS only,
# for crates/store/tests/postgres_tls.rs. Run as root; .ci/run calls it.
#
#   .ci/postgres-tls.sh DIR PORT
#
# DIR (owned by postgres) gets a CA of our own (ca.pem, ca.key) and a server
# certificate it signed (server.pem, server.key: CN localhost, SAN localhost,
# 127.0.0.1 and ::1), made with the openssl CLI; keys are mode 0600. The cluster
# listens on PORT, has `ssl = on` with those files, and pg_hba.conf allows TCP
# only as `hostssl` (scram-sha-256). It gets the role hightick (password
# hightick) and the database hightick_test, like the main cluster on 5432.
#
# Idempotent: a rerun keeps certificates that still verify and are valid for
# another day (else remakes all four files), keeps the cluster, rewrites its
# settings and restarts it. The cluster is set to start manually (DIR may not
# survive a reboot); the main cluster is never touched.
set -euo pipefail

dir=${1:?usage: $0 DIR PORT}
port=${2:?usage: $0 DIR PORT}
version=15
cluster=tls

if ! command -v openssl >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends openssl >/dev/null
fi

# --- certificates
if [ -L "$dir" ] || { [ -e "$dir" ] && [ "$(stat -c %U "$dir")" != postgres ]; }; then
  echo "$dir exists but is not a directory owned by postgres: remove it first" >&2
  exit 1
fi
install -d -o postgres -g postgres -m 0755 "$dir"

certs_ok() {
  [ -s "$dir/ca.pem" ] && [ -s "$dir/ca.key" ] && [ -s "$dir/server.pem" ] && [ -s "$dir/server.key" ] \
    && openssl verify -CAfile "$dir/ca.pem" "$dir/server.pem" >/dev/null 2>&1 \
    && openssl x509 -checkend 86400 -noout -in "$dir/server.pem" >/dev/null \
    && openssl x509 -checkend 86400 -noout -in "$dir/ca.pem" >/dev/null
}

if certs_ok; then
  echo "certificates in $dir still valid: kept"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cat >"$work/ca.cnf" <<'EOF'
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3_ca
[dn]
CN = hightick test CA
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
EOF
  cat >"$work/server.ext" <<'EOF'
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
EOF
  (
    umask 077
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/ca.key" 2>/dev/null
    openssl req -x509 -new -config "$work/ca.cnf" -key "$work/ca.key" -days 3650 -out "$work/ca.pem"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/server.key" 2>/dev/null
    openssl req -new -key "$work/server.key" -subj /CN=localhost -out "$work/server.csr"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" \
      -set_serial "0x$(openssl rand -hex 16)" -days 825 -extfile "$work/server.ext" \
      -out "$work/server.pem" 2>/dev/null
  )
  install -o postgres -g postgres -m 0600 "$work/ca.key" "$work/server.key" "$dir/"
  install -o postgres -g postgres -m 0644 "$work/ca.pem" "$work/server.pem" "$dir/"
  certs_ok || { echo "the certificates just made in $dir do not verify" >&2; exit 1; }
  echo "certificates made in $dir (CA: $dir/ca.pem)"
fi

# --- the cluster
if pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1 == v && $2 == c { found = 1 } END { exit !found }'; then
  echo "cluster $version/$cluster exists: reconfigured"
else
  taken=$(pg_lsclusters -h | awk -v p="$port" '$3 == p { print $1 "/" $2 }')
  if [ -n "$taken" ]; then
    echo "port $port is taken by cluster $taken" >&2
    exit 1
  fi
  pg_createcluster "$version" "$cluster" --port "$port" --start-conf manual >/dev/null
  echo "cluster $version/$cluster created on port $port"
fi

conf=/etc/postgresql/$version/$cluster
pg_conftool "$version" "$cluster" set port "$port"
pg_conftool "$version" "$cluster" set listen_addresses localhost
pg_conftool "$version" "$cluster" set ssl on
pg_conftool "$version" "$cluster" set ssl_cert_file "$dir/server.pem"
pg_conftool "$version" "$cluster" set ssl_key_file "$dir/server.key"
echo manual >"$conf/start.conf"
cat >"$conf/pg_hba.conf" <<'EOF'
# Written by hightick's .ci/postgres-tls.sh: TCP only over TLS.
local   all   postgres                 peer
local   all   all                      peer
hostssl all   all        127.0.0.1/32  scram-sha-256
hostssl all   all        ::1/128       scram-sha-256
EOF
chown postgres:postgres "$conf/pg_hba.conf"

pg_ctlcluster "$version" "$cluster" restart
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p "$port"

psql_tls() { su postgres -c "psql -p $port -v ON_ERROR_STOP=1 -tAc \"$1\""; }
psql_tls "SELECT 1 FROM pg_roles WHERE rolname='hightick'" | grep -q 1 \
  || psql_tls "CREATE ROLE hightick LOGIN PASSWORD 'hightick'" >/dev/null
psql_tls "SELECT 1 FROM pg_database WHERE datname='hightick_test'" | grep -q 1 \
  || psql_tls "CREATE DATABASE hightick_test OWNER hightick" >/dev/null
echo "PostgreSQL $version/$cluster up on port $port, TLS only (ssl = $(psql_tls 'SHOW ssl'))"
