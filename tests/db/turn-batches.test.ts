/**
 * One-statement writes of the same turn run as one transaction on PostgreSQL (src/db/turn-batches.ts,
 * src/db/statement-batch.ts): together when all succeed, each alone again when any fails, never beside a
 * statement with the same `apart` key, and as they are inside a transaction. Reads batch in a lane of their own.
 */
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { type AppDatabase, openPostgres } from '../../src/db/database.js';
import { prepared } from '../../src/db/prepared-statements.js';
import { readInTurnBatch, runInTurnBatch } from '../../src/db/turn-batches.js';
import { openTestDatabase } from '../helpers/app.js';

const databaseUrl = inject('databaseUrl');

describe.skipIf(!databaseUrl)('statements batched per turn', () => {
  let database: AppDatabase;
  const table = `turn_batch_test_${process.pid}_${Date.now()}`;

  /** Inserts `id` (a duplicate inserts nothing); the transaction it ran in, and whether it inserted. */
  const insert = (id: number, apart?: string) =>
    runInTurnBatch(
      database.db,
      sql<{ tx: string; inserted: boolean }>`with inserted as (
          insert into ${sql.table(table)} (id) values (${id}) on conflict do nothing returning 1)
        select txid_current()::text as tx, exists (select from inserted) as inserted ${prepared()}`,
      undefined,
      apart,
    ).then((rows) => rows[0]!);

  beforeAll(async () => {
    database = await openTestDatabase();
    await sql`create table ${sql.table(table)} (id int primary key check (id > 0))`.execute(database.db);
  });

  afterAll(async () => {
    await sql`drop table if exists ${sql.table(table)}, ${sql.table(`${table}_free`)}`.execute(database.db);
    await database.close();
  });

  it('runs the statements of one turn in one transaction, each with its own rows', async () => {
    const results = await Promise.all([1, 2, 3, 4].map((id) => insert(id)));
    expect(new Set(results.map((result) => result.tx)).size).toBe(1);
    expect(results.map((result) => result.inserted)).toEqual([true, true, true, true]);
    // A later statement of the batch sees what an earlier one wrote: a duplicate in the same turn is refused.
    const [first, again] = await Promise.all([insert(5), insert(5)]);
    expect([first.inserted, again.inserted]).toEqual([true, false]);
    const count = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(database.db);
    expect(count.rows[0]!.n).toBe(5);
  });

  it('runs every statement alone again when one of them fails, so that only that one fails', async () => {
    const outcomes = await Promise.allSettled([insert(10), insert(-1), insert(11)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23514' });
    const [ten, eleven] = [outcomes[0], outcomes[2]].map(
      (outcome) => (outcome as PromiseFulfilledResult<{ tx: string; inserted: boolean }>).value,
    );
    expect([ten!.inserted, eleven!.inserted]).toEqual([true, true]);
    // Run again alone: each in a transaction of its own.
    expect(ten!.tx).not.toBe(eleven!.tx);
    const rows = await sql<{ id: number }>`select id from ${sql.table(table)} where id in (10, 11) order by id`.execute(
      database.db,
    );
    expect(rows.rows.map((row) => row.id)).toEqual([10, 11]);
  });

  it('never puts two statements with the same apart key in one transaction', async () => {
    const [a, b, c] = await Promise.all([insert(20, 'key'), insert(21, 'key'), insert(22, 'other')]);
    expect(a!.tx).toBe(c!.tx);
    expect(b!.tx).not.toBe(a!.tx);
  });

  it('reads the reads of one turn in one round trip, apart from the writes', async () => {
    const read = () =>
      readInTurnBatch(
        database.db,
        sql<{ started: string; pid: number }>`select now()::text as started, pg_backend_pid() as pid ${prepared()}`,
        undefined,
      ).then((rows) => rows[0]!);
    const [first, second, write] = await Promise.all([read(), read(), insert(30)]);
    // One transaction on one connection: the same start, the same backend.
    expect(second).toEqual(first);
    expect(write.inserted).toBe(true);
  });

  it('answers a statement that timed out, and those queued behind it, with the timeout; the rest alone', async () => {
    // The same database with a short statement timeout, and a statement that outlasts it (a database that
    // does not answer in time).
    const impatient = openPostgres(database.pool!.options.connectionString!, 4, 300);
    try {
      await sql`create table if not exists ${sql.table(`${table}_free`)} (id int primary key)`.execute(database.db);
      const into = (id: number) =>
        runInTurnBatch(
          impatient.db,
          sql`insert into ${sql.table(`${table}_free`)} (id) values (${id}) returning id ${prepared()}`,
          undefined,
        );
      const slow = () => runInTurnBatch(impatient.db, sql`select pg_sleep(2) ${prepared()}`, undefined);
      const outcomes = await Promise.allSettled([into(1), slow(), into(2)]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      for (const outcome of outcomes.slice(1))
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: '57014' });
    } finally {
      await impatient.close();
    }
  });

  it('answers the others of a batch while one of its statements waits for a lock (hostile-tenant probe)', async () => {
    // A tenant's own long transaction (a rename of a site with many visits) held a row its next create
    // waited for, and every other tenant's statement of that create's batch waited as long.
    const holder = new pg.Client({ connectionString: database.pool!.options.connectionString });
    await holder.connect();
    let held = true;
    try {
      await sql`create table if not exists ${sql.table(`${table}_free`)} (id int primary key)`.execute(database.db);
      await holder.query('begin');
      await holder.query(`lock table ${table} in access exclusive mode`);
      const into = (name: string, id: number) =>
        runInTurnBatch(
          database.db,
          sql`insert into ${sql.table(name)} (id) values (${id}) returning id ${prepared()}`,
          undefined,
        );
      const [three, waiting, four] = [into(`${table}_free`, 3), into(table, 41), into(`${table}_free`, 4)];
      // Answered while the lock is held; before, they waited for it with the one that needs it.
      expect(await Promise.all([three, four])).toEqual([[{ id: 3 }], [{ id: 4 }]]);
      expect(held).toBe(true);
      held = false;
      await holder.query('commit');
      expect(await waiting).toEqual([{ id: 41 }]);
    } finally {
      if (held) await holder.query('rollback');
      await holder.end();
    }
  });

  it('never runs again a write batch whose connection was lost after its commit was asked for', async () => {
    // The batch commits and the connection is lost before its ReadyForQuery arrives: whether it committed is
    // unknown to the service. Running each statement alone again created every row of the batch twice.
    await sql`create table if not exists ${sql.table(`${table}_log`)} (id serial primary key, note text)`.execute(
      database.db,
    );
    const cutter = await ReadyForQueryCutter.start(new URL(database.pool!.options.connectionString!));
    const cut = openPostgres(cutter.url, 1);
    try {
      await sql`select 1`.execute(cut.db);
      cutter.armed = true;
      const into = (note: string) =>
        runInTurnBatch(
          cut.db,
          sql`insert into ${sql.table(`${table}_log`)} (note) values (${note}) returning id ${prepared()}`,
          undefined,
        );
      const outcomes = await Promise.allSettled([into('a'), into('b')]);
      expect(cutter.cuts).toBe(1);
      // Answered with the lost connection (a 503 the client retries under its Idempotency-Key), not created again.
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
      const rows = await sql<{ note: string }>`select note from ${sql.table(`${table}_log`)} order by note`.execute(
        database.db,
      );
      expect(rows.rows.map((row) => row.note)).toEqual(['a', 'b']);
      // Reads change nothing: a read batch cut the same way is read again, each alone.
      await sql`select 1`.execute(cut.db);
      cutter.armed = true;
      const read = (n: number) =>
        readInTurnBatch(cut.db, sql<{ n: number }>`select ${n}::int as n ${prepared()}`, undefined);
      expect(await Promise.all([read(1), read(2)])).toEqual([[{ n: 1 }], [{ n: 2 }]]);
      expect(cutter.cuts).toBe(2);
    } finally {
      await cut.close();
      await cutter.close();
    }
  });

  it('runs a statement inside a transaction on that transaction', async () => {
    await database.db.transaction().execute(async (tx) => {
      const own = await sql<{ tx: string }>`select txid_current()::text as tx`.execute(tx);
      const [result] = await runInTurnBatch(
        tx,
        sql<{ tx: string }>`select txid_current()::text as tx ${prepared()}`,
        undefined,
      );
      expect(result!.tx).toBe(own.rows[0]!.tx);
    });
  });
});

/**
 * A TCP proxy to PostgreSQL that, once armed, cuts the connection instead of passing on the next ReadyForQuery
 * ('Z'): what the service sees when the database or the network fails after a commit and before its answer.
 */
class ReadyForQueryCutter {
  armed = false;
  cuts = 0;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async start(target: URL): Promise<ReadyForQueryCutter> {
    let cutter: ReadyForQueryCutter | undefined;
    const server = net.createServer((client) => cutter!.pass(client, Number(target.port || 5432), target.hostname));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String((server.address() as net.AddressInfo).port);
    cutter = new ReadyForQueryCutter(server, url.toString());
    return cutter;
  }

  private pass(client: net.Socket, port: number, host: string): void {
    const upstream = net.connect(port, host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    // The server's messages: a type byte and a length (itself included), read whole before passing on.
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      let end = 0;
      while (pending.length >= end + 5) {
        const length = pending.readInt32BE(end + 1);
        if (pending.length < end + 1 + length) break;
        if (this.armed && pending[end] === 0x5a) {
          this.armed = false;
          this.cuts += 1;
          client.end(pending.subarray(0, end), () => client.destroy());
          upstream.destroy();
          return;
        }
        end += 1 + length;
      }
      client.write(pending.subarray(0, end));
      pending = pending.subarray(end);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
