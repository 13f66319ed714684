import { randomBytes } from 'node:crypto'
import t from 'tap'
import { decryptSecret, encryptSecret, isSealed } from '../../src/shared/secret-box.js'

t.test('secrets are sealed with AES-256-GCM', async (t) => {
  const key = randomBytes(32)
  const secret = 'whsec_' + randomBytes(32).toString('base64')
  const a = encryptSecret(key, secret)
  const b = encryptSecret(key, secret)
  t.not(a, b, 'a fresh nonce each time')
  t.notOk(a.includes(secret.slice(6)), 'no plaintext inside')
  t.equal(decryptSecret(key, a), secret)
  t.throws(() => decryptSecret(randomBytes(32), a), 'another key cannot open it')
  const parts = a.split('.')
  const body = Buffer.from(parts[3]!, 'base64url')
  body[0] = body[0]! ^ 1
  t.throws(() => decryptSecret(key, [parts[0], parts[1], parts[2], body.toString('base64url')].join('.')), 'tampering is detected')
  t.throws(() => decryptSecret(key, 'plain'), 'unknown format')
})

t.test('a context binds the sealed value to its record', async (t) => {
  const key = randomBytes(32)
  const sealed = encryptSecret(key, '{"access_token":"sk_x"}', 'scope\nkey-a')
  t.equal(decryptSecret(key, sealed, 'scope\nkey-a'), '{"access_token":"sk_x"}')
  t.throws(() => decryptSecret(key, sealed, 'scope\nkey-b'), 'another context cannot open it')
  t.throws(() => decryptSecret(key, sealed), 'nor none')
  t.throws(() => decryptSecret(key, encryptSecret(key, 'x'), 'scope\nkey-a'), 'nor one sealed without a context')
})

t.test('sealed values are told from plain JSON', async (t) => {
  t.ok(isSealed(encryptSecret(randomBytes(32), '{}')))
  for (const plain of ['{"a":1}', '[]', '"v1.x"', 'null', '']) t.notOk(isSealed(plain), plain)
})
