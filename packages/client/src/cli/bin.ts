#!/usr/bin/env node
// The `svc` command, built to dist/cli/bin.js so it runs on plain Node.js; package.json's `bin` is bin/svc.js,
// which loads it.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2), process.env);
