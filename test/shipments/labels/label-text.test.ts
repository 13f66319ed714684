import t from 'tap';
import { addressLines, clean, formatDate, formatWeight } from '../../../src/shipments/labels/label-text.js';
import { labelInput } from './fixtures/label-input.js';

t.test('weights under a kilo in grams, otherwise in kilos with up to two decimals', (t) => {
  t.equal(formatWeight(850), '850 g');
  t.equal(formatWeight(1000), '1 kg');
  t.equal(formatWeight(1250), '1.25 kg');
  t.equal(formatWeight(123456), '123.46 kg');
  t.end();
});

t.test('address lines join what is present and skip what is null', (t) => {
  t.same(addressLines(labelInput().origin), {
    name: 'Librería del Centro',
    street: 'Avenida Colón 1234, Floor 2, Apt B',
    locality: 'X5000 Córdoba',
    region: 'Córdoba, AR',
    phone: 'Tel. +543514000000',
  });
  const bare = { ...labelInput().destination, zipcode: null, city: null, state: null, country: null, phone: null };
  t.same(addressLines(bare), { name: 'João Gonçalves', street: 'Rua Augusta 500', locality: '', region: '', phone: '' });
  t.end();
});

t.test('control and format characters collapse to single spaces', (t) => {
  t.equal(clean(' a\n\tb\u202Ec\u0000 '), 'a b c');
  t.equal(clean(null), '');
  t.end();
});

t.test('dates print as the UTC day', (t) => {
  t.equal(formatDate('2024-05-17T23:30:00-03:00'), '2024-05-18');
  t.equal(formatDate('not a date'), 'not a date');
  t.end();
});
