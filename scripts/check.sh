#!/usr/bin/env bash
# npm run check: Biome (format and lint), dependency-cruiser (the layers) and tsc. The project and its tools
# need a maintained Node.js line (22 or newer, package.json engines; dependency-cruiser refuses to start on
# anything older). Run by an older node (a system Node.js past its end of life), the checks run on CI's LTS
# line instead, installed by .ci/node.sh into .tools/ on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)'; then
  lts=$(sed -n 's/^NODE_LTS=//p' .ci/run)
  echo "check: Node.js $(node --version) is past its end of life; running the checks on Node.js $lts" >&2
  PATH="$(bash .ci/node.sh "$lts"):$PATH"
  export PATH
fi
biome check .
depcruise src --config .dependency-cruiser.cjs --output-type err
tsc --noEmit
