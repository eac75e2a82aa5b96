#!/usr/bin/env bash
# Checks a saved Site Services webhook delivery (signature v1) with OpenSSL:
#   bash verify.sh 'subscription secret' headers.txt body.json
# headers.txt: the request's header lines ("Name: value", names in any case);
# body.json: the body's bytes exactly as received. Prints "valid" (exit 0) or
# why not (exit 1). For debugging: the secret is on openssl's command line.
verify() {
  local secret=$1 headers=$2 body=$3 version alg ts signature now expected key
  # A header's value; one given twice gives two lines, which are refused.
  field() { tr -d '\r' < "$headers" | sed -n "s/^$1:[[:space:]]*//Ip"; }
  version=$(field x-svc-signature-version) alg=$(field x-svc-signature-alg)
  ts=$(field x-svc-timestamp) signature=$(field x-svc-signature)
  now=$(date +%s)
  if (( ${#secret} < 16 )); then
    echo "the secret has under 16 characters"; return 2
  elif [ "$version" != v1 ]; then
    echo "x-svc-signature-version is not v1 (legacy?)"
  elif [ "$alg" != hmac-sha256 ]; then
    echo "x-svc-signature-alg is not hmac-sha256"
  elif ! [[ $ts =~ ^(0|[1-9][0-9]{0,15})$ ]]; then
    echo "x-svc-timestamp is not decimal Unix seconds"
  elif (( now - ts > 300 || ts - now > 300 )); then
    echo "stale: x-svc-timestamp is over 300 s away"
  elif ! [[ $signature =~ ^[0-9a-f]{64}$ ]]; then
    echo "x-svc-signature is not lower-case hex"
  else
    # HMAC-SHA256 of timestamp "." body; then both digests under a random
    # key, so that comparing them says nothing about the expected one.
    expected=$({ printf '%s.' "$ts"; cat "$body"; } |
      openssl dgst -sha256 -hmac "$secret" -r | cut -d' ' -f1)
    key=$(openssl rand -hex 32)
    mac() { printf %s "$1" | openssl dgst -sha256 -hmac "$key" -r; }
    if [ "$(mac "$expected")" = "$(mac "$signature")" ]; then
      echo valid; return 0
    fi
    echo "x-svc-signature does not match"
  fi
  return 1
}
[ "${BASH_SOURCE[0]}" != "$0" ] || verify "$@"
