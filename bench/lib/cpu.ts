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

/**
 * Starts counting the CPU of the service `pid` (and its children) and of the database's backends; the
 * returned function stops and divides by the requests served meanwhile. Backends are those connected
 * at the start (the service's pool is warm by then); the bench's own connection is left out.
 */
export async function startCpuCount(
  pid: number,
  pool: pg.Pool,
  database: string,
): Promise<(requests: number) => Promise<CpuPerRequest>> {
  const servicePids = [pid, ...(await childPids(pid))];
  const backends = await pool.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  const backendPids = backends.rows.map((row) => row.pid);
  const before = await cpuMicros([...servicePids, ...backendPids]);
  return async (requests) => {
    const after = await cpuMicros([...servicePids, ...backendPids]);
    const spent = (pids: number[]) =>
      pids.reduce((sum, each) => sum + Math.max(0, (after.get(each) ?? 0) - (before.get(each) ?? 0)), 0);
    const per = (micros: number) => (requests > 0 ? micros / requests : NaN);
    return { serviceUs: per(spent(servicePids)), databaseUs: per(spent(backendPids)) };
  };
}
