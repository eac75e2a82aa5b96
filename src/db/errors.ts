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

/** A data exception (SQLSTATE class 22): the statement was refused for a value it was given. */
export function isDataException(error: unknown): boolean {
  const code = (error as DatabaseError | undefined)?.code;
  return typeof code === 'string' && code.startsWith('22');
}
