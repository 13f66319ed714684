import t from 'tap'
import { currencyMinorUnits, isIso4217, MAX_CURRENCY_LENGTH, normalizeCurrency } from '../../src/shared/currency.js'

t.test('ISO 4217 codes in any case are normalized to upper case', async (t) => {
  t.equal(normalizeCurrency('USD'), 'USD')
  t.equal(normalizeCurrency('usd'), 'USD')
  t.equal(normalizeCurrency(' ars '), 'ARS')
  t.equal(normalizeCurrency('Brl'), 'BRL')
  t.ok(isIso4217('EUR'))
})

t.test('anything else is refused', async (t) => {
  for (const bad of ['ZZZ', 'US', 'USDX', 'EURO', '', '$', 'U$S', '123', 'us d']) {
    t.equal(normalizeCurrency(bad), undefined, bad)
    t.notOk(isIso4217(bad), bad)
  }
  t.equal(normalizeCurrency(undefined), undefined)
  t.equal(normalizeCurrency(840), undefined)
  t.equal(MAX_CURRENCY_LENGTH, 4)
})

t.test('minor units come from the ISO list', async (t) => {
  t.equal(currencyMinorUnits('usd'), 2)
  t.equal(currencyMinorUnits('JPY'), 0)
  t.equal(currencyMinorUnits('KWD'), 3)
  t.equal(currencyMinorUnits('ZZZ'), undefined)
})
