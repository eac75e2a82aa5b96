/**
 * The maintenance loop's first pass comes shortly after `start()`, not an interval later: a process restarted
 * more often than the interval (ten minutes) never purged anything, and its counters stayed at 0.
 */
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { Maintenance } from '../../src/runtime/maintenance.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

async function completedPasses(registry: Registry): Promise<number> {
  const passes = (await registry.getSingleMetric('maintenance_passes_total')?.get())?.values ?? [];
  return passes.find((sample) => sample.labels.outcome === 'completed')?.value ?? 0;
}

it('runs its first pass after firstPassAfterMs, though the interval is an hour', async () => {
  const registry = new Registry();
  const maintenance = new Maintenance(t.database.db, systemClock, createLogger(t.config), {
    intervalMs: 3_600_000,
    firstPassAfterMs: 10,
    registry,
  });
  maintenance.start();
  try {
    const deadline = Date.now() + 60_000;
    while ((await completedPasses(registry)) === 0) {
      if (Date.now() > deadline) throw new Error('no maintenance pass within a minute of start()');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await completedPasses(registry)).toBe(1);
  } finally {
    await maintenance.stop();
  }
});
