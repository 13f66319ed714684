import { randomBytes } from 'node:crypto'
import t from 'tap'
import { decryptSecret, encryptSecret } from '../../src/carriers/secret-box.js'

t.test('HMAC secrets are sealed with AES-256-GCM', async (t) => {
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
