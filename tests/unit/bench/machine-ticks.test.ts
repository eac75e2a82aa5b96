/** The bench's reading of /proc/stat (bench/lib/cpu.ts): the machine's idle share is idle and iowait over all. */
import { describe, expect, it } from 'vitest';
import { machineTicks } from '../../../bench/lib/cpu.js';

describe('machineTicks', () => {
  it('sums the first eight fields of the cpu line and counts idle and iowait as idle', () => {
    const stat = 'cpu  100 5 50 800 40 3 2 0 0 0\ncpu0 50 2 25 400 20 1 1 0 0 0\nintr 1 2 3\n';
    // user nice system idle iowait irq softirq steal; guest and guest_nice are already in user and nice.
    expect(machineTicks(stat)).toEqual({ total: 1000, idle: 840 });
  });
});
