import { lookup as dnsLookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/** Resolves a host name to every address it has (injectable so tests can fake DNS). */
export type HostLookup = (host: string) => Promise<string[]>

export interface UrlSafetyOptions {
  /** `ALLOW_PRIVATE_URLS=true`: loopback, private and link-local targets become acceptable. */
  allowPrivate: boolean
  lookup?: HostLookup
}

export type UrlCheck =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string }

export type AddressCheck = { ok: true } | { ok: false; reason: string }

/** Long enough for any real endpoint, short enough to keep logs and rows sane. */
export const MAX_URL_LENGTH = 2048

export const systemLookup: HostLookup = async (host) => {
  const found = await dnsLookup(host, { all: true, verbatim: true })
  return found.map((entry) => entry.address)
}

// No HTTP server can live at these, so they are refused even in development.
const NEVER_A_DESTINATION = new Set(['unspecified', 'multicast', 'broadcast'])

const RANGE_WORDS: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  linkLocal: 'link-local',
  carrierGradeNat: 'carrier-grade NAT',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
}

// ::a.b.c.d (deprecated IPv4-compatible form): ipaddr.js calls it unicast, yet it names an IPv4 host.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')

/**
 * Decides whether one resolved or literal address may be called. Without `allowPrivate` only
 * globally routable unicast passes: an allow-list, so ranges ipaddr.js learns later
 * (NAT64, 6to4, Teredo, documentation, benchmarking…) are refused rather than let through.
 */
export function checkAddress(address: string, allowPrivate: boolean): AddressCheck {
  if (!ipaddr.isValid(address)) return { ok: false, reason: `"${address}" is not an IP address` }
  // process() turns ::ffff:127.0.0.1 into 127.0.0.1, so mapped forms get the IPv4 verdict.
  const ip = ipaddr.process(address)
  const range = ip.range()
  const shown = ip.toString()
  if (NEVER_A_DESTINATION.has(range)) {
    return { ok: false, reason: `address ${shown} is ${RANGE_WORDS[range] ?? range}` }
  }
  if (allowPrivate) return { ok: true }
  if (range !== 'unicast') {
    return {
      ok: false,
      reason: `address ${shown} is ${RANGE_WORDS[range] ?? `special-purpose (${range})`}; only public addresses are allowed`,
    }
  }
  if (ip.kind() === 'ipv6' && ip.match(IPV4_COMPATIBLE)) {
    return { ok: false, reason: `address ${shown} is an IPv4-compatible IPv6 address; only public addresses are allowed` }
  }
  return { ok: true }
}

/** `[::1]` → `::1`; WHATWG URL keeps the brackets in `hostname`. */
export function bareHost(url: URL): string {
  const host = url.hostname
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host
}

/** Syntax-only half of the check (no DNS), shared by save-time and send-time validation. */
export function parseCallbackUrl(raw: string): { ok: true; url: URL } | { ok: false; reason: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { ok: false, reason: 'must be an absolute http(s) URL' }
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `must be at most ${MAX_URL_LENGTH} characters` }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { ok: false, reason: 'must be an absolute http(s) URL' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: 'must use http or https' }
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'must not contain credentials' }
  }
  if (bareHost(url) === '') return { ok: false, reason: 'must name a host' }
  return { ok: true, url }
}

/**
 * Resolves the URL's host and checks every address (one bad record is enough to refuse: the
 * client may pick any of them). Literal IPs skip DNS; the WHATWG parser has already turned
 * decimal/hex/octal IPv4 spellings (`http://2130706433/`) into dotted form.
 */
export async function resolveAndCheck(url: URL, opts: UrlSafetyOptions): Promise<UrlCheck> {
  const host = bareHost(url)
  let addresses: string[]
  if (ipaddr.isValid(host)) {
    addresses = [host]
  } else {
    try {
      addresses = await (opts.lookup ?? systemLookup)(host)
    } catch {
      return { ok: false, reason: `host ${host} does not resolve` }
    }
    if (addresses.length === 0) return { ok: false, reason: `host ${host} does not resolve` }
  }
  for (const address of addresses) {
    const verdict = checkAddress(address, opts.allowPrivate)
    if (!verdict.ok) return verdict
  }
  return { ok: true, url, addresses }
}

/** Save-time validation of `notification_url` / `quote_url` (DESIGN §3.5). */
export async function validateCallbackUrl(raw: string, opts: UrlSafetyOptions): Promise<UrlCheck> {
  const parsed = parseCallbackUrl(raw)
  if (!parsed.ok) return parsed
  return resolveAndCheck(parsed.url, opts)
}
