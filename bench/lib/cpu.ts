/**
 * CPU time spent per request, from Linux /proc: the service's processes (a cluster primary and its
 * children) and the PostgreSQL backends serving the bench database. Unlike throughput, CPU per request
 * hardly moves when other work shares the machine, so it shows what a change bought on a noisy machine.
 */
import { readFile } from 'node:fs/promises';
import type pg from 'pg';

/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on every common Linux). */
const TICKS_PER_SECOND = 100;

/** User + system CPU in a /proc stat file (a process's, or one thread's under task/), in microseconds. */
async function statCpuMicros(file: string): Promise<number> {
  try {
    const stat = await readFile(file, 'utf8');
    // Fields after the command name (which may contain spaces) start at index 2 (state); utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** User + system CPU of each process, in microseconds (a process that is gone counts 0). */
export async function cpuMicros(pids: readonly number[]): Promise<Map<number, number>> {
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await statCpuMicros(`/proc/${pid}/stat`)] as const)));
}

/** User + system CPU of a process's main thread (its JavaScript, for Node), in microseconds. */
export function mainThreadCpuMicros(pid: number): Promise<number> {
  return statCpuMicros(`/proc/${pid}/task/${pid}/stat`);
}

async function childPids(pid: number): Promise<number[]> {
  try {
    return (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export interface CpuPerRequest {
  /** The service's processes, µs per request. */
  serviceUs: number;
  /** The PostgreSQL backends of the bench database, µs per request. */
  databaseUs: number;
}

/** How often the backends of the bench database are looked for while counting. */
const BACKEND_SCAN_MS = 200;

/** The parent of a process (field 4 of its stat file). */
async function parentPid(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * The backends of one database, followed while they come and go: a pool opens connections under load and
 * closes idle ones, so the backends connected at the start are not all that serve a round. The postmaster's
 * children are scanned every BACKEND_SCAN_MS; a backend names its database in its process title
 * ("postgres: user database host(port) state"). One that connects meanwhile counts from zero (all its CPU
 * is the round's); one that exits counts as last read (losing at most one scan's worth).
 */
class DatabaseBackends {
  /** Each backend's CPU when first seen (0 if it connected during the count) and when last read. */
  private readonly seen = new Map<number, { first: number; last: number }>();
  private readonly titleMark: string;
  private timer: NodeJS.Timeout | undefined;
  private scanning: Promise<void> = Promise.resolve();

  constructor(
    private readonly postmaster: number,
    database: string,
    private readonly excluded: number,
  ) {
    this.titleMark = ` ${database} `;
  }

  async start(): Promise<void> {
    await this.scan(true);
    this.timer = setInterval(() => {
      this.scanning = this.scanning.then(() => this.scan(false));
    }, BACKEND_SCAN_MS);
  }

  /** Stops following and answers the CPU the backends spent since the start, in microseconds. */
  async stop(): Promise<number> {
    clearInterval(this.timer);
    await this.scanning;
    await this.scan(false);
    let spent = 0;
    for (const { first, last } of this.seen.values()) spent += Math.max(0, last - first);
    return spent;
  }

  private async scan(atStart: boolean): Promise<void> {
    for (const pid of await childPids(this.postmaster)) {
      if (pid === this.excluded) continue;
      const known = this.seen.get(pid);
      if (known === undefined && !(await this.servesDatabase(pid))) continue;
      const cpu = await statCpuMicros(`/proc/${pid}/stat`);
      if (cpu === 0 && known !== undefined) continue; // gone between the scan and the read
      if (known) known.last = cpu;
      else this.seen.set(pid, { first: atStart ? cpu : 0, last: cpu });
    }
  }

  private async servesDatabase(pid: number): Promise<boolean> {
    try {
      return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).includes(this.titleMark);
    } catch {
      return false;
    }
  }
}

/**
 * Starts counting the CPU of the service `pid` (and its children) and of the database's backends (those
 * connected now and those that connect meanwhile; the bench's own connection is left out); the returned
 * function stops and divides by the requests served meanwhile.
 */
export async function startCpuCount(
  pid: number,
  pool: pg.Pool,
  database: string,
): Promise<(requests: number) => Promise<CpuPerRequest>> {
  const servicePids = [pid, ...(await childPids(pid))];
  const own = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const backends = new DatabaseBackends(await parentPid(own), database, own);
  await backends.start();
  const before = await cpuMicros(servicePids);
  return async (requests) => {
    const after = await cpuMicros(servicePids);
    const databaseMicros = await backends.stop();
    const serviceMicros = servicePids.reduce(
      (sum, each) => sum + Math.max(0, (after.get(each) ?? 0) - (before.get(each) ?? 0)),
      0,
    );
    const per = (micros: number) => (requests > 0 ? micros / requests : NaN);
    return { serviceUs: per(serviceMicros), databaseUs: per(databaseMicros) };
  };
}

/** The machine's CPU time from /proc/stat's first line: all of it and the idle part (idle and iowait), in ticks. */
export function machineTicks(procStat: string): { total: number; idle: number } {
  const fields = procStat.slice(0, procStat.indexOf('\n')).trim().split(/\s+/).slice(1, 9).map(Number);
  const [, , , idle = 0, iowait = 0] = fields;
  return { total: fields.reduce((sum, value) => sum + value, 0), idle: idle + iowait };
}

/**
 * Starts counting the machine's idle share (all cores); the returned function stops and answers it (0 to 1).
 * Whether a scenario leaves cores idle tells a rate bound by its latency (a closed loop of connections each
 * waiting for its answer) from one bound by the CPU.
 */
export async function startIdleCount(): Promise<() => Promise<number>> {
  const before = machineTicks(await readFile('/proc/stat', 'utf8'));
  return async () => {
    const after = machineTicks(await readFile('/proc/stat', 'utf8'));
    const total = after.total - before.total;
    return total > 0 ? (after.idle - before.idle) / total : NaN;
  };
}
