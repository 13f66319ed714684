import { isIPv6 } from 'node:net'

/**
 * The key a per-address limit counts a request under: its client address (`req.ip`: behind a proxy,
 * what TRUST_PROXY makes of X-Forwarded-For). An IPv4 address as itself (also when written as
 * IPv4-mapped IPv6, `::ffff:192.0.2.1`); an IPv6 address by its /64, the block one subscriber is
 * given: otherwise a single client could take a new address per request from it and never be limited.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)
  if (mapped) return mapped[1]!
  if (!isIPv6(ip)) return ip
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`
}

/** The eight groups of an IPv6 address, each without leading zeros (a zone such as `%eth0` dropped). */
function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::')
  const groups = (s: string | undefined) => (s ? s.split(':') : [])
  const left = groups(head)
  const right = groups(tail)
  // A trailing dotted IPv4 part (`64:ff9b::192.0.2.1`) is two groups.
  const last = right.length ? right : left
  if (last.length && last[last.length - 1]!.includes('.')) {
    const o = last.pop()!.split('.').map(Number)
    last.push(((o[0]! << 8) | o[1]!).toString(16), ((o[2]! << 8) | o[3]!).toString(16))
  }
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16).toString(16))
}
