/**
 * Which budget of a per-address limit a client address counts against (the client API's rate limit, the
 * operator's wrong tokens).
 *
 * An IPv4 address is one budget, as SPEC's limit says ("per observed request IP"). An IPv6 address is not
 * what one client has: a host is given a whole /64 (SLAAC, every cloud VM and home line), and picks any of
 * its 2^64 addresses for each connection, so counted one by one a single host had as many budgets as it
 * liked (hostile-tenant probe). Its /64 is what one client holds, as an IPv4 address behind NAT is; clients in
 * one /64 share a budget as clients behind one egress IPv4 address already do. An IPv4-mapped IPv6 address
 * (what a dual-stack socket reports for an IPv4 peer) is its IPv4 address.
 */
import ipaddr from 'ipaddr.js';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The key of the budget `address` counts against: the IPv4 address, or the IPv6 address's /64. */
export function addressBudget(address: string): string {
  // IPv4, the common case, without parsing.
  if (!address.includes(':')) return address;
  const mapped = MAPPED_IPV4.exec(address);
  if (mapped) return mapped[1]!;
  const unzoned = address.replace(/%.*$/, '');
  if (!ipaddr.IPv6.isValid(unzoned)) return address;
  const parts = ipaddr.IPv6.parse(unzoned).parts;
  return `${parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}
