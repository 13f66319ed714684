import t from 'tap'
import { decodeTime, isValid } from 'ulidx'
import { newUlid, ulidFromKey } from '../../src/shared/ids.js'

t.test('ulidFromKey: deterministic per key and time, time-ordered, a valid ULID', async (t) => {
  const at = new Date('2026-11-26T10:00:00.123Z')
  const key = 'workflow:7:step:delivery:attempt:2:action:0'
  const id = ulidFromKey(key, at)
  t.ok(isValid(id), id)
  t.equal(id.length, 26)
  t.equal(decodeTime(id), at.getTime(), 'the time part reads back')
  t.equal(ulidFromKey(key, at), id, 'the same key and time: the same id')
  t.not(ulidFromKey(`${key}x`, at), id, 'another key: another id')
  t.equal(ulidFromKey(`${key}x`, at).slice(0, 10), id.slice(0, 10), '…with the same time part')
  const later = ulidFromKey(key, new Date(at.getTime() + 1))
  t.ok(later > id, 'a later time sorts after, whatever the key')
  const before = newUlid()
  t.ok(ulidFromKey('k', new Date()) >= before.slice(0, 10), 'sorts among ids made now')
  // The 80 bits come from the hash: different keys spread over the whole alphabet.
  const chars = new Set(Array.from({ length: 200 }, (_, i) => ulidFromKey(`k${i}`, at).slice(10)).join(''))
  t.equal(chars.size, 32, 'every Crockford character appears in the random part')
})
