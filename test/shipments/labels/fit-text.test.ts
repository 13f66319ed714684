import t from 'tap';
import { fitLine, fitLines } from '../../../src/shipments/labels/fit-text.js';

const chars = (s: string) => Array.from(s).length;

t.test('wraps at spaces within the width', (t) => {
  t.same(fitLines('aaa bbb ccc', 7, 2, chars), ['aaa bbb', 'ccc']);
  t.same(fitLines('short', 10, 3, chars), ['short']);
  t.same(fitLines('', 10, 3, chars), []);
  t.end();
});

t.test('cuts the last line with an ellipsis, keeping as much as fits', (t) => {
  t.same(fitLines('aaa bbb ccc ddd eee', 7, 2, chars), ['aaa bbb', 'ccc dd…']);
  t.equal(fitLine('hello world', 8, chars), 'hello w…');
  t.equal(fitLine('hello world', 8, chars, '...'), 'hello...');
  t.end();
});

t.test('breaks a word wider than the box', (t) => {
  t.same(fitLines('abcdefghij', 4, 3, chars), ['abcd', 'efgh', 'ij']);
  t.same(fitLines('abcdefghijkl', 4, 2, chars), ['abcd', 'efg…']);
  t.end();
});

t.test('no line is ever wider than the box', (t) => {
  const text = 'Avenida del Libertador General San Martín 1234567890, Floor 12345, Apt 1234567890';
  for (const width of [3, 5, 8, 13, 21, 34]) {
    for (const line of fitLines(text, width, 3, chars)) t.ok(chars(line) <= width, `${JSON.stringify(line)} <= ${width}`);
  }
  t.end();
});
