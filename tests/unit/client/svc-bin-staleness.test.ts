/**
 * `svc`'s bin in the service's checkout says when its build is older than its sources (`npm start` rebuilds the
 * service, not the client), and says nothing in an installed package (no src/) or with a current build. A copy
 * of the bin beside a stand-in build, so nothing of the checkout's is touched.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, '../../../packages/client/bin/svc.js');
let directory: string;

/** A package with the real bin and a build that prints `ran`; with src/ when `sourceAge` is given (ms from the build). */
function packageCopy(sourceAge?: number): string {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bin-'));
  fs.mkdirSync(path.join(directory, 'bin'));
  fs.copyFileSync(BIN, path.join(directory, 'bin', 'svc.js'));
  fs.writeFileSync(path.join(directory, 'package.json'), '{"type":"module"}');
  fs.mkdirSync(path.join(directory, 'dist', 'cli'), { recursive: true });
  const built = path.join(directory, 'dist', 'cli', 'bin.js');
  fs.writeFileSync(built, "process.stdout.write('ran');");
  const builtAt = new Date('2026-01-01T00:00:00Z');
  fs.utimesSync(built, builtAt, builtAt);
  if (sourceAge !== undefined) {
    const source = path.join(directory, 'src', 'cli', 'main.ts');
    fs.mkdirSync(path.dirname(source), { recursive: true });
    fs.writeFileSync(source, '');
    const at = new Date(builtAt.getTime() + sourceAge);
    fs.utimesSync(source, at, at);
  }
  return path.join(directory, 'bin', 'svc.js');
}

function run(bin: string): { stdout: string; stderr: string } {
  const stderrFile = path.join(directory, 'stderr');
  const stdout = execFileSync(process.execPath, [bin], { stdio: ['ignore', 'pipe', fs.openSync(stderrFile, 'w')] });
  return { stdout: stdout.toString(), stderr: fs.readFileSync(stderrFile, 'utf8') };
}

afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

describe("svc's bin and a stale build", () => {
  it('says the build is older than a source, on stderr, and runs it', () => {
    const { stdout, stderr } = run(packageCopy(60_000));
    expect(stdout).toBe('ran');
    expect(stderr).toMatch(/^svc: this build is older than its sources .*npm run build --workspace packages\/client/);
  });

  it('says nothing with a build newer than its sources, or without sources (an installed package)', () => {
    expect(run(packageCopy(-60_000))).toEqual({ stdout: 'ran', stderr: '' });
    fs.rmSync(directory, { recursive: true, force: true });
    expect(run(packageCopy())).toEqual({ stdout: 'ran', stderr: '' });
  });
});
