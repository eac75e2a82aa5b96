#!/usr/bin/env bash
# The client package as an integrator gets it: `npm pack` of packages/client, installed from the tarball into
# a fresh project outside the repository, and there, against a running server (this checkout, a fresh
# DATA_DIR, a free port):
#   - a plain `node` ESM script creates a client, lists the sandbox's sites, and verifies a real signed
#     webhook delivery to an HTTPS receiver of its own (client-package/client.mjs);
#   - `tsc --noEmit` of consumers with `strict`, the default lib (DOM included) and skipLibCheck off, with and
#     without @types/node (client-package/consumer*.ts);
#   - the README's ten-line example, as written;
#   - the installed `svc --help`, `svc token` (bare, usable as a bearer token) and `svc token --json`.
# Before that, no file of the tarball may cite the project's specification, its decisions record or an issue.
# About a minute on an idle 2-core machine (the compiled server, dist/, is built by npm ci); called by .ci/run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
fixtures="$repo/.ci/client-package"
work="$(mktemp -d "${TMPDIR:-/tmp}/client-package.XXXXXX")"
case "$work/" in "$repo"/*) echo "client-package: $work is inside the repository" >&2; exit 1 ;; esac
started=$(date +%s)
note() { printf '[client-package %3ss] %s\n' "$(($(date +%s) - started))" "$*"; }
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "client-package: $*" >&2
  echo "--- server log (tail)" >&2
  tail -n 40 "$work/server.log" >&2 2>/dev/null || true
  exit 1
}
free_port() {
  node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# A CA the server trusts (NODE_EXTRA_CA_CERTS) and the receiver's certificate for 127.0.0.1, made by the
# tests' own helper (no OpenSSL binary needed).
cd "$repo"
node --import tsx --input-type=module -e "
  const { createTestCertificates } = await import('./tests/helpers/certificates.ts');
  const { writeFileSync } = await import('node:fs');
  const made = await createTestCertificates();
  writeFileSync('$work/ca.pem', made.caPem);
  writeFileSync('$work/receiver.pem', made.certPem);
  writeFileSync('$work/receiver.key', made.keyPem);
"

# The server, started first: its first start (embedded database) is the slowest step, so it runs while the
# package is packed and installed.
port=$(free_port)
receiver_port=$(free_port)
base="http://127.0.0.1:$port"
mkdir "$work/data"
(
  exec env -u DATABASE_URL DATA_DIR="$work/data" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn \
    NODE_EXTRA_CA_CERTS="$work/ca.pem" WEBHOOK_TEST_ALLOWED_DESTINATIONS="127.0.0.1:$receiver_port" \
    node dist/server.js
) >"$work/server.log" 2>&1 &
server_pid=$!
note "server starting on $base (pid $server_pid)"

# The tarball: `npm pack` runs the package's prepack script, which builds dist/.
tarball="$work/$(cd "$repo/packages/client" && npm pack --silent --pack-destination "$work" | tail -n 1)"
note "packed $(basename "$tarball")"
listing=$(tar tzf "$tarball")
for expected in package/dist/index.js package/dist/index.d.ts package/dist/cli/bin.js package/bin/svc.js package/LICENSE; do
  grep -qx "$expected" <<<"$listing" || fail "the tarball lacks $expected"
done
if grep -E '^package/src/|\.ts$' <<<"$listing" | grep -qv '\.d\.ts$'; then fail "the tarball ships TypeScript sources"; fi
# Integrators never see the project's specification, docs/decisions.md or issue tracker: no published file
# (declarations and their hover docs, JavaScript, README) cites them (tests/helpers/internal-citations.ts).
mkdir "$work/unpacked"
tar xzf "$tarball" -C "$work/unpacked"
citations=$(node --import tsx --input-type=module -e "
  const { readdirSync, readFileSync } = await import('node:fs');
  const path = await import('node:path');
  const { internalCitations } = await import('./tests/helpers/internal-citations.ts');
  const root = process.argv[1];
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    for (const line of internalCitations(readFileSync(file, 'utf8'))) console.log(path.relative(root, file), line);
  }
" "$work/unpacked/package") || fail "could not read the unpacked tarball"
[ -z "$citations" ] || fail "published files cite internal documents:
$citations"
note "no published file cites the specification, the decisions record or an issue"

# A fresh project that knows nothing of the repository; TypeScript and @types/node at the repository's versions.
mkdir "$work/consumer"
cd "$work/consumer"
printf '{ "name": "client-package-consumer", "private": true, "type": "module" }\n' >package.json
cp "$fixtures"/client.mjs "$fixtures"/consumer.ts "$fixtures"/consumer-node.ts "$fixtures"/tsconfig*.json .
version_of() { node -p "require('$repo/node_modules/$1/package.json').version"; }
npm install --prefer-offline --no-audit --no-fund --loglevel=warn \
  "$tarball" "typescript@$(version_of typescript)" "@types/node@$(version_of @types/node)" >/dev/null 2>install.log ||
  fail "npm install of the tarball failed: $(cat install.log)"
# The package runs nothing at install: npm would list a lifecycle script (prepare included) for the integrator
# to approve, for a build their copy has no sources for.
if grep -q 'install-scripts' install.log; then fail "installing the tarball lists install scripts: $(cat install.log)"; fi
[ ! -e node_modules/tsx ] || fail "tsx was installed: the package must not need a TypeScript loader"
note "installed into $work/consumer"

# Both at once (two cores); each checks the DOM lib and the package's declarations in full.
./node_modules/.bin/tsc -p tsconfig.json >tsc-node.log 2>&1 &
with_node=$!
./node_modules/.bin/tsc -p tsconfig.no-node.json >tsc-no-node.log 2>&1 &
without_node=$!
wait "$with_node" || fail "tsc: the consumer with @types/node does not compile: $(cat tsc-node.log)"
wait "$without_node" || fail "tsc: the consumer without @types/node does not compile: $(cat tsc-no-node.log)"
note "tsc --noEmit (strict, default lib with DOM, skipLibCheck off): both consumers compile"

usage=$(./node_modules/.bin/svc --help) || fail "svc --help failed"
grep -q 'svc token' <<<"$usage" || fail "svc --help does not print the usage"
note "svc --help"

for _ in $(seq 1 900); do
  [ -f "$work/data/credentials.json" ] && curl -fs "$base/ready" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || fail "the server exited"
  sleep 0.1
done
curl -fs "$base/ready" >/dev/null || fail "the server was not ready within 90 s"
note "server ready"

BASE_URL="$base" CREDENTIALS="$work/data/credentials.json" RECEIVER_PORT="$receiver_port" \
  RECEIVER_KEY="$work/receiver.key" RECEIVER_CERT="$work/receiver.pem" node client.mjs ||
  fail "the plain node script failed"

# The README's ten-line example, as written, beside the credential packet.
node -e '
  const text = require("node:fs").readFileSync(process.argv[1], "utf8");
  const example = /Ten lines that list[^]*?```js\n([^]*?)```/.exec(text);
  if (!example) process.exit(1);
  require("node:fs").writeFileSync("example.mjs", example[1]);
' "$repo/README.md" || fail "the README has no ten-line example"
cp "$work/data/credentials.json" credentials.json
node example.mjs | grep -q "$(node -p 'require("./credentials.json").siteCode')" || fail "the README example failed"
note "the README example lists the sandbox site"

export SVC_CREDENTIALS_FILE="$work/data/credentials.json"
token=$(./node_modules/.bin/svc token)
[[ "$token" =~ ^[A-Za-z0-9._~+/=-]+$ ]] || fail "svc token did not print a bare token: $token"
curl -fsS -o /dev/null -H "Authorization: Bearer $token" "$base/api/v1/sites" || fail "the token from svc token was refused"
./node_modules/.bin/svc token --json | node -e \
  'const r = JSON.parse(require("node:fs").readFileSync(0, "utf8")); if (!r.access_token || !r.expires_in) process.exit(1)' ||
  fail "svc token --json did not print the token response"
note "svc token: a bare token the API accepts; --json: the whole response"
note "done"
