import t from 'tap'
import { normalizePhone } from '../../src/shared/phone.js'

t.test('international numbers in any formatting become E.164', async (t) => {
  const cases: [string, string][] = [
    ['+54 9 11 4321-5678', '+5491143215678'],
    ['+1 (202) 555-0143', '+12025550143'],
    ['+1.202.555.0143', '+12025550143'],
    ['+44 20 7946 0958', '+442079460958'],
    ['+55 (11) 91234-5678', '+5511912345678'],
    ['tel:+1-202-555-0143', '+12025550143'],
  ]
  for (const [raw, e164] of cases) t.match(normalizePhone(raw), { ok: true, e164 }, raw)
})

t.test('national numbers need the default country', async (t) => {
  t.match(normalizePhone('011 15-4321-5678', 'AR'), { ok: true, e164: '+5491143215678', countryIso: 'AR' })
  t.match(normalizePhone('(202) 555-0143', 'us'), { ok: true, e164: '+12025550143', countryIso: 'US' })
  t.match(normalizePhone('11 91234-5678', 'BR'), { ok: true, e164: '+5511912345678' })
  t.same(normalizePhone('(202) 555-0143'), { ok: false })
  // An international number keeps its own country whatever the default.
  t.match(normalizePhone('+54 11 4321 5678', 'US'), { ok: true, e164: '+541143215678', countryIso: 'AR' })
})

t.test('the 00 international prefix is read with or without a default country', async (t) => {
  t.match(normalizePhone('0054 11 4321 5678'), { ok: true, e164: '+541143215678' })
  t.match(normalizePhone('0054 11 4321 5678', 'AR'), { ok: true, e164: '+541143215678' })
})

t.test('raw keeps what was typed (trimmed), extension included', async (t) => {
  t.same(normalizePhone('  +1 202 555 0143 ext. 12 '), { ok: true, e164: '+12025550143', raw: '+1 202 555 0143 ext. 12', countryIso: 'US' })
})

t.test('invalid numbers are refused', async (t) => {
  for (const bad of ['', '   ', 'hello', '+54 11 1234', '+1 202 123 4567', '123', '+999 1234 5678', `+1 202 555 0143${' '.repeat(80)}x`]) {
    t.same(normalizePhone(bad), { ok: false }, JSON.stringify(bad))
  }
  // Right length, unassigned range: only the full ("max") metadata catches it.
  t.same(normalizePhone('(351) 15 123-4567', 'AR'), { ok: false })
  t.same(normalizePhone(5491143215678), { ok: false })
  t.same(normalizePhone(null, 'AR'), { ok: false })
})
