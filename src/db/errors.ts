/** Recognises database errors that the services turn into problems. */

interface DatabaseError {
  code?: string;
  constraint?: string;
  message?: string;
}

/** A unique-constraint violation (SQLSTATE 23505), optionally of one named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as DatabaseError;
  if (e?.code !== '23505') return false;
  return constraint === undefined || e.constraint === constraint || (e.message ?? '').includes(`"${constraint}"`);
}

/**
 * Runs a write whose unique violation (of `constraint`, when named) is a duplicate the caller names: it
 * throws the error `duplicate` makes (the resource's 409 problem) instead of the database's.
 */
export async function refusingDuplicate<T>(
  write: () => Promise<T>,
  duplicate: () => Error,
  constraint?: string,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, constraint)) throw duplicate();
    throw error;
  }
}

/** A data exception (SQLSTATE class 22): the statement was refused for a value it was given. */
export function isDataException(error: unknown): boolean {
  const code = (error as DatabaseError | undefined)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** pg's message when its client-side `query_timeout` ends the wait for an answer (the error has no code). */
const CLIENT_QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/** The client stopped waiting for the database's answer (pg's `query_timeout`): it may not answer at all. */
export function isClientQueryTimeout(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error as DatabaseError).code === undefined &&
    error.message === CLIENT_QUERY_TIMEOUT_MESSAGE
  );
}

/**
 * The database did not finish a statement in time: PostgreSQL cancelled it (57014 `query_canceled`, from
 * `statement_timeout`), gave up waiting for a lock (55P03 `lock_not_available`, from `lock_timeout` where
 * one is set), or the client gave up waiting for any answer. A retry later may well succeed.
 */
export function isDatabaseTimeout(error: unknown): boolean {
  const code = (error as DatabaseError | undefined)?.code;
  return code === '57014' || isLockWaitTimeout(error) || isClientQueryTimeout(error);
}

/** PostgreSQL gave up waiting for a lock (55P03 `lock_not_available`, from `lock_timeout`): one lock, not the database. */
export function isLockWaitTimeout(error: unknown): boolean {
  return (error as DatabaseError | undefined)?.code === '55P03';
}

/**
 * PostgreSQL rolled the transaction back because it conflicted with a concurrent one (40P01 a deadlock,
 * 40001 a serialization failure): nothing of it was written, and the same request made again may succeed.
 */
export function isTransactionConflict(error: unknown): boolean {
  const code = (error as DatabaseError | undefined)?.code;
  return code === '40P01' || code === '40001';
}
