import t from 'tap';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderLabelPdf } from '../../../src/shipments/labels/render-pdf.js';
import { labelInput } from './fixtures/label-input.js';
import { pdfPages } from './fixtures/pdf-inspect.js';

/**
 * Names in the scripts addresses come in, read back from the PDF by poppler's pdftotext, an
 * independent reader: the text of each line must equal what was typed. pdftotext returns
 * right-to-left text in logical (typed) order, wrapped in the embedding marks U+202B…U+202C; those
 * marks are dropped before comparing, nothing else is.
 */
const NAMES = {
  Polish: { name: 'Józef Żółkiewski-Gęśla', city: 'Łódź' },
  Cyrillic: { name: 'Ольга Петрова', city: 'Москва' },
  Greek: { name: 'Αθηνά Παπαδοπούλου', city: 'Θεσσαλονίκη' },
  Chinese: { name: '王小明', city: '北京市' },
  Arabic: { name: 'محمد العلي', city: 'الرياض' },
};

const extract = (pdf: Buffer, dir: string): string[] => {
  const file = join(dir, 'label.pdf');
  writeFileSync(file, pdf);
  return execFileSync('pdftotext', ['-enc', 'UTF-8', file, '-'], { encoding: 'utf8' })
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, '')
    .split('\n')
    .map((l) => l.trim());
};

for (const [script, { name, city }] of Object.entries(NAMES)) {
  t.test(`${script}: the recipient's name and city come out of the PDF as they went in`, async (t) => {
    const base = labelInput(1);
    const pdf = await renderLabelPdf(labelInput(1, {
      destination: { ...base.destination, name, city, zipcode: '' },
      origin: { ...base.origin, name },
    }));
    const lines = extract(pdf, t.testdir());
    t.ok(lines.includes(name), `"${name}" in ${JSON.stringify(lines.slice(7, 12))}`);
    t.ok(lines.includes(city), `"${city}"`);
    t.notOk(lines.some((l) => l.includes('?')), 'no character replaced');
  });
}

t.test('Arabic: a street with its house number reads right to left and the number stays 12', async (t) => {
  const base = labelInput(1);
  const street = 'شارع الملك فهد';
  const pdf = await renderLabelPdf(labelInput(1, { destination: { ...base.destination, street, street_number: '12', floor: null, apartment: null } }));
  const lines = extract(pdf, t.testdir());
  // pdftotext reads the line as a left-to-right one with a right-to-left part: the number the
  // Arabic words are typed before (as this line's reader sees it) comes out first; each part is
  // in typed order.
  t.ok(lines.includes(`12 ${street}`), `"12 ${street}" in ${JSON.stringify(lines.slice(7, 12))}`);
  // Drawn left to right: the number is the leftmost run of the line, the Arabic words after it.
  const page = pdfPages(pdf)[0]!;
  const runs = page.texts.filter((r) => r.y === page.texts.find((x) => x.text.includes('ﻓ') || /[\u0600-\u06ff\ufb50-\ufeff]/.test(x.text))!.y);
  t.equal(runs.length, 2, 'two runs: the number and the Arabic words');
  t.ok(runs[0]!.x < runs[1]!.x && /12/.test(runs[0]!.text), `the number first from the left: ${JSON.stringify(runs.map((r) => r.text))}`);
});

t.test('all five scripts on one label, in the fonts that have them', async (t) => {
  const base = labelInput(1);
  const pdf = await renderLabelPdf(labelInput(1, {
    destination: { ...base.destination, name: `${NAMES.Polish.city} ${NAMES.Cyrillic.city} ${NAMES.Greek.city}`, city: NAMES.Chinese.city, zipcode: '', state: NAMES.Arabic.city },
  }));
  const lines = extract(pdf, t.testdir());
  t.ok(lines.includes('Łódź Москва Θεσσαλονίκη'), 'Latin, Cyrillic and Greek in one line');
  t.ok(lines.includes('北京市'));
  t.ok(lines.some((l) => l.includes('الرياض')), 'Arabic');
  const fonts = new Set(pdfPages(pdf)[0]!.texts.map((r) => r.font));
  t.ok(fonts.has('NotoSans-Bold') && fonts.has('NotoSansHans-Regular') && fonts.has('NotoNaskhArabic'), [...fonts].join(', '));
});
