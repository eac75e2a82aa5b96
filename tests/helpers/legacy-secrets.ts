/**
 * A client secret and the hash the service stored for it before client secrets were hashed with SHA-256: made
 * by that version's hashSecret (scrypt, N=16384, r=8, p=1, `scrypt$N$r$p$salt$hash`), as the rows of a
 * deployment started before hold them. Tests put it in a row of their own to see such a row verified and
 * rewritten.
 */
export const LEGACY_SCRYPT_PAIR = {
  secret: 'secret_zpa62jy0jzhe1eh62102evgb9fsefe17j67xadbxn37hxfatcrng',
  hash: 'scrypt$16384$8$1$geVifb6OYzElk6bddn8xrQ$O0UEjhxENEeMlAz_Flk00ujnpfwrkE88CFx7SLXGxpc',
} as const;
