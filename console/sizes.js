// Byte counts as the operator reads them, in the units the service's limits are set in (MiB). A module without
// imports, so that its rule is tested as it is (tests/unit/console/sizes.test.ts).

const KIB = 1024;
const MIB = 1024 * KIB;

/** "373 bytes", "12.3 KiB", "4.5 MiB": a tenant holding a few files no longer reads "0.0 MiB used". */
export function sizeText(bytes) {
  if (bytes < KIB) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`;
  if (bytes < MIB) return `${(bytes / KIB).toFixed(1)} KiB`;
  return `${(bytes / MIB).toFixed(1)} MiB`;
}
