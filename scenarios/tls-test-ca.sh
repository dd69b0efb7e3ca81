#!/usr/bin/env bash
# A throwaway CA and a gateway certificate for 127.0.0.1 it signed (P-256),
# for the TLS measurements (meta-game-run.sh with TLS=1,
# tls-handshake-cost.sh); never for production.
#
#   scenarios/tls-test-ca.sh DIR   # writes DIR/ca.crt, DIR/gateway.crt, DIR/gateway.key
#
# Needs openssl 3.
set -euo pipefail
D=$1
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=hightick test CA" \
  -keyout "$D/ca.key" -out "$D/ca.crt" 2>/dev/null
openssl req "${ec[@]}" -subj "/CN=hightick gateway" -addext "subjectAltName=IP:127.0.0.1" \
  -keyout "$D/gateway.key" -out "$D/gateway.csr" 2>/dev/null
openssl x509 -req -in "$D/gateway.csr" -CA "$D/ca.crt" -CAkey "$D/ca.key" -CAcreateserial \
  -days 2 -copy_extensions copy -out "$D/gateway.crt" 2>/dev/null
