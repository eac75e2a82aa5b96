/**
 * Why the PostgreSQL server DATABASE_URL names could not be used when the service (or `npm run migrate`)
 * opened it, said as what the operator can do about it: nothing answers at that address, the host name does
 * not resolve, the database does not exist, or the server refused the user. Any other failure is not
 * explained here (it keeps its stack). The message never repeats the connection string (it may hold a
 * password): it names the host, port, database and user.
 */

/** What DATABASE_URL names, as far as its URL says (a host given as a socket directory is named as such). */
interface Target {
  address: string;
  /** The options of `createdb` and `psql` that reach it. */
  options: string;
  database: string;
  user: string;
}

function targetOf(connectionString: string): Target {
  let url: URL | undefined;
  try {
    url = new URL(connectionString);
  } catch {
    url = undefined;
  }
  const query = url?.searchParams;
  const host = (url?.hostname || query?.get('host')) ?? 'localhost';
  const port = (url?.port || query?.get('port')) ?? '5432';
  const user = decodeURIComponent(url?.username ?? '') || query?.get('user') || process.env.PGUSER || 'postgres';
  const database = decodeURIComponent(url?.pathname.replace(/^\//, '') ?? '') || query?.get('dbname') || user;
  const address = host.startsWith('/') ? `the socket in ${host}` : `${host}:${port}`;
  return { address, options: `-h ${host} -p ${port} -U ${user}`, database, user };
}

export class PostgresUnusable extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'PostgresUnusable';
  }
}

/**
 * The explained failure for `error`, met opening the database `variable` (DATABASE_URL, or the tests'
 * TEST_DATABASE_URL) names; undefined when not explained.
 */
export function explainedPostgresFailure(
  connectionString: string,
  error: unknown,
  variable = 'DATABASE_URL',
): PostgresUnusable | undefined {
  const failure = error as { code?: string; message?: string };
  const { address, options, database, user } = targetOf(connectionString);
  const said = failure?.message ?? String(error);
  const explain = (text: string) => new PostgresUnusable(text.replaceAll('DATABASE_URL', variable), error);
  switch (failure?.code) {
    case 'ECONNREFUSED':
    case 'ENOENT':
      return explain(
        `nothing accepts connections at ${address}, the PostgreSQL server of DATABASE_URL (${said}): start ` +
          `PostgreSQL there, or correct the host and port of DATABASE_URL${variable === 'DATABASE_URL' ? ' (unset, the service uses its embedded database in DATA_DIR)' : ''}`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return explain(`the host of DATABASE_URL does not resolve (${said}): correct the host of DATABASE_URL`);
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return explain(
        `no answer from ${address}, the PostgreSQL server of DATABASE_URL (${said}): check that it runs and ` +
          'that this machine may reach it',
      );
    case '3D000':
      return explain(
        `the database "${database}" does not exist on ${address} (DATABASE_URL): create it ` +
          `(\`createdb ${options} ${database}\`; an empty database is migrated when first used), or name an ` +
          'existing database in DATABASE_URL',
      );
    case '28P01':
    case '28000':
      return explain(
        `PostgreSQL at ${address} refused user "${user}" (${said}): correct the user and password of ` +
          "DATABASE_URL, or the server's pg_hba.conf",
      );
    case '57P03':
      return explain(`PostgreSQL at ${address} is not accepting connections yet (${said}): start again once it is`);
  }
  if (/timeout exceeded when trying to connect|connection timeout/i.test(said))
    return explain(
      `no answer from ${address}, the PostgreSQL server of DATABASE_URL, within the connection timeout: check ` +
        'that it runs and that this machine may reach it',
    );
  return undefined;
}
