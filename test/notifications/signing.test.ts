import t from 'tap'
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { generateSecret, signHeaders } from '../../src/notifications/signing.js'

const body = JSON.stringify({ notification_id: 'ntf_1', event: 'new', shipment_id: 42, carrier_id: 'car_1', occurred_at: '2026-01-01T00:00:00Z' })

t.test('generateSecret gives whsec_ + base64 of 32 random bytes', async (t) => {
  const a = generateSecret()
  const b = generateSecret()
  t.match(a, /^whsec_[A-Za-z0-9+/]+={0,2}$/)
  t.equal(Buffer.from(a.slice('whsec_'.length), 'base64').length, 32)
  t.not(a, b)
  t.doesNotThrow(() => new Webhook(a))
})

t.test('headers verify with the package and match the documented HMAC', async (t) => {
  const secret = generateSecret()
  const now = new Date()
  const headers = signHeaders([secret], 'ntf_1', now, body)
  t.equal(headers['webhook-id'], 'ntf_1')
  t.equal(headers['webhook-timestamp'], String(Math.floor(now.getTime() / 1000)))
  t.same(new Webhook(secret).verify(body, headers), JSON.parse(body))
  // Independent recomputation: base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" (DESIGN §3.6).
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const expected = createHmac('sha256', key).update(`ntf_1.${headers['webhook-timestamp']}.${body}`).digest('base64')
  t.equal(headers['webhook-signature'], `v1,${expected}`)
})

t.test('during a rotation both secrets sign and each verifies alone', async (t) => {
  const oldSecret = generateSecret()
  const newSecret = generateSecret()
  const headers = signHeaders([oldSecret, newSecret], 'ntf_2', new Date(), body)
  const entries = headers['webhook-signature'].split(' ')
  t.equal(entries.length, 2)
  for (const entry of entries) t.match(entry, /^v1,[A-Za-z0-9+/]+={0,2}$/)
  t.doesNotThrow(() => new Webhook(oldSecret).verify(body, headers))
  t.doesNotThrow(() => new Webhook(newSecret).verify(body, headers))
  t.throws(() => new Webhook(generateSecret()).verify(body, headers), /No matching signature/)
  t.equal(signHeaders([oldSecret, oldSecret], 'ntf_2', new Date(), body)['webhook-signature'].split(' ').length, 1, 'a repeated secret signs once')
})

t.test('a tampered body, id or timestamp fails verification', async (t) => {
  const secret = generateSecret()
  const headers = signHeaders([secret], 'ntf_3', new Date(), body)
  const wh = new Webhook(secret)
  t.throws(() => wh.verify(body.replace('"new"', '"cancelled"'), headers), /No matching signature/)
  t.throws(() => wh.verify(body, { ...headers, 'webhook-id': 'ntf_4' }), /No matching signature/)
  const shifted = String(Number(headers['webhook-timestamp']) - 1)
  t.throws(() => wh.verify(body, { ...headers, 'webhook-timestamp': shifted }), /No matching signature/)
})

t.test('a timestamp older than 5 minutes is rejected by verifiers', async (t) => {
  const secret = generateSecret()
  const headers = signHeaders([secret], 'ntf_5', new Date(Date.now() - 6 * 60_000), body)
  t.throws(() => new Webhook(secret).verify(body, headers), /too old/)
})

t.test('signing needs a secret', async (t) => {
  t.throws(() => signHeaders([], 'ntf_6', new Date(), body))
})
