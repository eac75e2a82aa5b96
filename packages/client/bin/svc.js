#!/usr/bin/env node
// The `svc` command: loads the TypeScript source through tsx (a dependency), so it runs right after
// `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2), process.env);
