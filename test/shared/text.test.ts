import t from 'tap'
import { foldName, tidyName } from '../../src/shared/text.js'

t.test('foldName ignores case, accents, punctuation and spacing', async (t) => {
  t.equal(foldName('  Córdoba '), 'cordoba')
  t.equal(foldName('CÓRDOBA'), foldName('cordoba'))
  t.equal(foldName('São Paulo'), 'sao paulo')
  t.equal(foldName('Bogotá D.C.'), 'bogota dc')
  t.equal(foldName('Saint-Étienne'), 'saint etienne')
  t.equal(foldName("Cox's Bazar"), foldName('Cox’s Bāzār'))
  t.equal(foldName('Straße'), 'strasse')
  t.equal(foldName('Łódź'), 'lodz')
  t.equal(foldName('København'), 'kobenhavn')
  t.equal(foldName('Xique-Xique'), foldName('Xique  Xique'))
  t.equal(foldName('---'), '')
})

t.test('tidyName trims and collapses spaces but keeps the spelling', async (t) => {
  t.equal(tidyName('  Villa   del  Rosario\t'), 'Villa del Rosario')
  t.equal(tidyName('Córdoba'), 'Córdoba')
})
