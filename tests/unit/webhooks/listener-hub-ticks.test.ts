/**
 * The listener hub's periodic tick when the database fails (a restart, a lost connection): the tick runs
 * from a timer, where nothing awaits it, so a failed tick must be logged and the next one tried; a rejection
 * left unhandled would end the API process (Node's default), taking every client request down with it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppDatabase } from '../../../src/db/database.js';
import { ManualClock } from '../../../src/lib/clock.js';
import { ListenerHub } from '../../../src/modules/webhook-listeners/hub.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  unhandled.length = 0;
});

describe('the listener hub tick', () => {
  it('logs a tick the database failed and keeps ticking, without an unhandled rejection', async () => {
    process.on('unhandledRejection', onUnhandled);
    const down = () => Promise.reject(new Error('connection terminated'));
    const database = {
      db: { transaction: () => ({ execute: down }) },
      // The hub listens for notifications first; that worked before the database went away.
      pglite: { listen: async () => async () => undefined },
      pool: undefined,
    } as unknown as AppDatabase;
    const logger = { warn: vi.fn(), info: vi.fn(), error: vi.fn() };
    const hub = new ListenerHub({
      database,
      clock: new ManualClock(),
      logger: logger as never,
      // A grace of 400 ms ticks every 100 ms.
      config: { listenerGraceMs: 400, timeoutMs: 1_000, leaseMs: 10_000 } as never,
      keys: { webhookEncryptionKey: Buffer.alloc(32), legacyWebhookKey: Buffer.alloc(32) },
      credentialStatus: { checkedRecently: () => undefined, lookup: down },
    });
    await hub.activate();
    // Two ticks take 200 ms on an idle machine; the bound is for a loaded one (CI's parallel files), where 5 s
    // once saw only one.
    await vi.waitFor(() => expect(logger.warn.mock.calls.length).toBeGreaterThanOrEqual(2), { timeout: 60_000 });
    await hub.stop();
    expect(unhandled).toEqual([]);
    expect(logger.warn.mock.calls[0]![1]).toMatch(/tick failed/);
  });
});
