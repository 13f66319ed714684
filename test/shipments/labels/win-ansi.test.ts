import t from 'tap';
import { toWinAnsi } from '../../../src/shipments/labels/win-ansi.js';

t.test('keeps Latin-1 and the Windows-1252 extras', (t) => {
  t.equal(toWinAnsi('Córdoba'), 'Córdoba');
  t.equal(toWinAnsi('São Paulo'), 'São Paulo');
  t.equal(toWinAnsi('Ærøskøbing ß ñ ü'), 'Ærøskøbing ß ñ ü');
  t.equal(toWinAnsi('€ “a” ‘b’ – — … • ™ Œ š Ÿ'), '€ “a” ‘b’ – — … • ™ Œ š Ÿ');
  t.end();
});

t.test('composes decomposed accents first', (t) => {
  t.equal(toWinAnsi('Co\u0301rdoba'), 'Córdoba');
  t.end();
});

t.test('strips what WinAnsi lacks down to its base letter', (t) => {
  t.equal(toWinAnsi('Łódź'), 'Lódz');
  t.equal(toWinAnsi('Đakovo Şişli Ħamrun'), 'Dakovo Sisli Hamrun');
  t.equal(toWinAnsi('ﬁle'), 'file', 'compatibility ligature');
  t.end();
});

t.test('replaces the rest with one ? per code point', (t) => {
  t.equal(toWinAnsi('東京'), '??');
  t.equal(toWinAnsi('Зоопарк'), '???????');
  t.equal(toWinAnsi('🚚 ok'), '? ok', 'astral characters count once');
  t.equal(toWinAnsi('a\u0080b'), 'a?b', 'C1 controls are not WinAnsi glyphs');
  t.end();
});
