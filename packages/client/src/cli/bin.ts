#!/usr/bin/env node
// The `svc` command (package.json `bin`): built to dist/cli/bin.js, so it runs on plain Node.js.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), process.env);
