import t from 'tap'
import { checkAddress, validateCallbackUrl, type HostLookup } from '../../src/notifications/url-safety.js'

const dnsOf = (records: Record<string, string[]>): HostLookup => async (host) => {
  const found = records[host]
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' })
  return found
}
const publicDns = dnsOf({ 'hooks.example.com': ['93.184.216.34'] })

t.test('refuses URLs that are not absolute http(s) or carry credentials', async (t) => {
  for (const url of ['ftp://x', 'ftp://hooks.example.com/a', '/webhooks', 'webhooks', '', 'javascript:alert(1)', 'file:///etc/passwd', 'http://']) {
    const result = await validateCallbackUrl(url, { allowPrivate: true, lookup: publicDns })
    t.equal(result.ok, false, `${JSON.stringify(url)} refused`)
  }
  const creds = await validateCallbackUrl('https://user:pw@hooks.example.com/x', { allowPrivate: false, lookup: publicDns })
  t.same(creds, { ok: false, reason: 'must not contain credentials' })
  const userOnly = await validateCallbackUrl('https://user@hooks.example.com/x', { allowPrivate: false, lookup: publicDns })
  t.equal(userOnly.ok, false)
  const long = await validateCallbackUrl(`https://hooks.example.com/${'a'.repeat(3000)}`, { allowPrivate: false, lookup: publicDns })
  t.equal(long.ok, false)
})

t.test('accepts a public https URL and reports the checked addresses', async (t) => {
  const result = await validateCallbackUrl('https://hooks.example.com/carrier?x=1', { allowPrivate: false, lookup: publicDns })
  t.equal(result.ok, true)
  if (result.ok) {
    t.equal(result.url.href, 'https://hooks.example.com/carrier?x=1')
    t.same(result.addresses, ['93.184.216.34'])
  }
  t.equal((await validateCallbackUrl('http://93.184.216.34:8080/x', { allowPrivate: false })).ok, true)
  t.equal((await validateCallbackUrl('http://[2606:4700::1111]/x', { allowPrivate: false })).ok, true)
})

t.test('refuses literal loopback, private, link-local, CGNAT and mapped addresses', async (t) => {
  const refused = [
    'http://127.0.0.1/',
    'http://127.1.2.3:8080/',
    'http://[::1]/',
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[fd00::1]/',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::127.0.0.1]/',
    // Alternative IPv4 spellings the URL parser normalizes to 127.0.0.1.
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://127.1/',
  ]
  for (const url of refused) {
    const result = await validateCallbackUrl(url, { allowPrivate: false, lookup: publicDns })
    t.match(result, { ok: false, reason: /^address / }, `${url} refused for its address`)
  }
  const meta = await validateCallbackUrl('http://169.254.169.254/', { allowPrivate: false })
  t.match(meta, { ok: false, reason: /link-local/ })
  const mapped = await validateCallbackUrl('http://[::ffff:127.0.0.1]/', { allowPrivate: false })
  t.match(mapped, { ok: false, reason: /127\.0\.0\.1 is loopback/ })
})

t.test('172.15 and 172.32 are public, only 172.16/12 is private', async (t) => {
  t.equal(checkAddress('172.15.255.255', false).ok, true)
  t.equal(checkAddress('172.32.0.1', false).ok, true)
  t.equal(checkAddress('172.16.0.1', false).ok, false)
  t.equal(checkAddress('100.63.255.255', false).ok, true)
  t.equal(checkAddress('100.128.0.1', false).ok, true)
  t.equal(checkAddress('100.127.255.255', false).ok, false)
})

t.test('a host name is refused when any of its addresses is not public', async (t) => {
  const lookup = dnsOf({
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
    'v6.example.com': ['::ffff:192.168.0.10'],
    'empty.example.com': [],
  })
  t.match(await validateCallbackUrl('https://internal.example.com/h', { allowPrivate: false, lookup }), { ok: false, reason: /private/ })
  t.match(await validateCallbackUrl('https://mixed.example.com/h', { allowPrivate: false, lookup }), { ok: false, reason: /loopback/ })
  t.equal((await validateCallbackUrl('https://metadata.example.com/h', { allowPrivate: false, lookup })).ok, false)
  t.equal((await validateCallbackUrl('https://v6.example.com/h', { allowPrivate: false, lookup })).ok, false)
  t.match(await validateCallbackUrl('https://empty.example.com/h', { allowPrivate: false, lookup }), { ok: false, reason: /does not resolve/ })
  t.match(await validateCallbackUrl('https://nowhere.example.com/h', { allowPrivate: false, lookup }), { ok: false, reason: /does not resolve/ })
})

t.test('allowPrivate accepts loopback, private and link-local but still needs a resolvable host', async (t) => {
  const lookup = dnsOf({ 'internal.example.com': ['10.1.2.3'] })
  for (const url of ['http://127.0.0.1:3000/hook', 'http://[::1]/', 'http://10.0.0.1/', 'http://169.254.169.254/', 'http://[::ffff:127.0.0.1]/', 'https://internal.example.com/h']) {
    t.equal((await validateCallbackUrl(url, { allowPrivate: true, lookup })).ok, true, `${url} accepted`)
  }
  t.equal((await validateCallbackUrl('https://nowhere.example.com/h', { allowPrivate: true, lookup })).ok, false)
  // No server listens on these in any environment.
  t.equal((await validateCallbackUrl('http://0.0.0.0/', { allowPrivate: true })).ok, false)
  t.equal((await validateCallbackUrl('http://224.0.0.1/', { allowPrivate: true })).ok, false)
})

t.test('the system resolver is used when no lookup is injected', async (t) => {
  const result = await validateCallbackUrl('http://localhost:9/', { allowPrivate: false })
  t.equal(result.ok, false, 'localhost resolves to loopback and is refused')
  const allowed = await validateCallbackUrl('http://localhost:9/', { allowPrivate: true })
  t.equal(allowed.ok, true)
})
