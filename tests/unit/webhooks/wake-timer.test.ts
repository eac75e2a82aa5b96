/** The delivery worker's timer (outbox/wake-timer.ts): one wake pending, at the earliest time asked for. */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { WakeTimer } from '../../../src/modules/outbox/wake-timer.js';

let wakes: number;
let timer: WakeTimer;
beforeEach(() => {
  vi.useFakeTimers();
  wakes = 0;
  timer = new WakeTimer(() => wakes++);
});
afterEach(() => {
  timer.clear();
  vi.useRealTimers();
});

it('wakes once, when set, and a later set replaces the earlier one', () => {
  timer.set(100);
  timer.set(300);
  vi.advanceTimersByTime(299);
  expect(wakes).toBe(0);
  vi.advanceTimersByTime(1);
  expect(wakes).toBe(1);
  vi.advanceTimersByTime(1_000);
  expect(wakes).toBe(1);
});

it('brings a wake forward, never back', () => {
  timer.set(500);
  timer.setAtLatest(1_000);
  vi.advanceTimersByTime(500);
  expect(wakes).toBe(1);
  timer.set(500);
  timer.setAtLatest(100);
  vi.advanceTimersByTime(100);
  expect(wakes).toBe(2);
  vi.advanceTimersByTime(1_000);
  expect(wakes).toBe(2);
});

it('sets a wake when none is pending, and clearing cancels it', () => {
  timer.setAtLatest(50);
  timer.clear();
  vi.advanceTimersByTime(1_000);
  expect(wakes).toBe(0);
  timer.setAtLatest(50);
  vi.advanceTimersByTime(50);
  expect(wakes).toBe(1);
});
