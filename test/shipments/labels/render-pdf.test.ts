import PDFDocument from 'pdfkit';
import t from 'tap';
import { code128Png } from '../../../src/shipments/labels/barcode-png.js';
import { LabelCodeNotEncodableError } from '../../../src/shipments/labels/label-checks.js';
import { LABEL_HEIGHT_PT, LABEL_WIDTH_PT, renderLabelPdf } from '../../../src/shipments/labels/render-pdf.js';
import { fontFile } from '../../../src/shipments/labels/label-fonts.js';
import { labelInput, labelPackage } from './fixtures/label-input.js';
import { pageText, pdfPages, pngRgb } from './fixtures/pdf-inspect.js';

t.test('is a PDF with exactly one 10x15 cm page per package', async (t) => {
  const pdf = await renderLabelPdf(labelInput(3));
  t.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
  const pages = pdfPages(pdf);
  t.equal(pages.length, 3);
  t.match(pdf.toString('latin1'), /\/Type \/Pages\n\/Count 3\n/);
  for (const page of pages) {
    const [x0, y0, x1, y1] = page.mediaBox;
    t.same([x0, y0], [0, 0]);
    t.ok(Math.abs((x1 ?? 0) - 283.46) < 0.01, `width ${x1} pt`);
    t.ok(Math.abs((y1 ?? 0) - 425.2) < 0.01, `height ${y1} pt`);
  }
});

t.test('each page carries the shipment and its own package data', async (t) => {
  const input = labelInput(3);
  const pages = pdfPages(await renderLabelPdf(input));
  pages.forEach((page, i) => {
    const text = pageText(page);
    const pkg = input.packages[i]!;
    t.match(text, /^K7Q2M$/m, 'control number');
    t.ok(page.texts.some((r) => r.text === 'K7Q2M' && r.size >= 30), 'control number is big');
    t.match(text, new RegExp(`^${i + 1}/3$`, 'm'), 'package n/N');
    t.match(text, 'Andes Express');
    t.match(text, 'Standard 48h');
    t.match(text, 'João Gonçalves', 'recipient, accents kept');
    t.match(text, '01305-000 São Paulo');
    t.match(text, 'Avenida Colón 1234, Floor 2, Apt B', 'sender street');
    t.match(text, 'X5000 Córdoba, Córdoba, AR');
    t.match(text, `${pkg.length_cm} x ${pkg.width_cm} x ${pkg.height_cm} cm`);
    t.match(text, pkg.label_code);
    t.match(text, 'Ref: ORDER-2024-0001');
  });
  t.match(pageText(pages[0]!), /^1\.25 kg$/m, 'weight of package 1 (1250 g)');
  t.match(pageText(pages[2]!), /^3\.75 kg$/m, 'weight of package 3 (3750 g)');
});

t.test("each page draws the Code 128 image of that page's label_code", async (t) => {
  const input = labelInput(3);
  const pages = pdfPages(await renderLabelPdf(input));
  for (const [i, page] of pages.entries()) {
    t.equal(page.images.length, 1, `page ${i + 1} draws one image`);
    const image = page.images[0]!;
    const expected = pngRgb(await code128Png(input.packages[i]!.label_code));
    t.match(image.dict, `/Width ${expected.width}\n`);
    t.match(image.dict, `/Height ${expected.height}\n`);
    t.ok(image.stream?.equals(expected.rgb), `page ${i + 1} pixels are the barcode of ${input.packages[i]!.label_code}`);
  }
});

t.test('the same input gives the same bytes', async (t) => {
  // Several pages, rendered many times at once: the barcode images are prepared on zlib's thread
  // pool, and their order in the file once depended on which finished first.
  const a = await renderLabelPdf(labelInput(3));
  const again = await Promise.all(Array.from({ length: 30 }, () => renderLabelPdf(labelInput(3))));
  t.equal(again.filter((b) => !a.equals(b)).length, 0, 'every rendering is byte for byte the first');
  t.match(a.toString('latin1'), '/CreationDate', 'dated');
  t.match(a.toString('latin1'), '(D:20240517134510Z)', 'with the shipment created_at');
});

t.test('text is drawn in embedded Noto fonts; a character no font has becomes ?', async (t) => {
  const input = labelInput(1, {
    shipper_name: 'Зоопарк 東京 🚚 Łódź',
    destination: { ...labelInput().destination, name: 'Ærøskøbing “Straße” – €5', city: 'Kraków' },
  });
  const page = pdfPages(await renderLabelPdf(input))[0]!;
  const text = pageText(page);
  t.match(text, 'Ærøskøbing “Straße” – €5', 'typographic punctuation and the euro sign kept');
  t.match(text, 'Kraków');
  t.match(text, 'Shipper: Зоопарк ', 'Cyrillic as it is');
  t.match(text, '東京', 'Chinese in its own font');
  t.match(text, 'Shipper: Зоопарк 東京 ? Łódź', 'the emoji, in no font, is one ?; Polish letters kept');
  t.same([...new Set(page.texts.map((r) => r.font))].sort(), ['NotoSans-Bold', 'NotoSans-Regular', 'NotoSansHans-Regular'], 'only the fonts used are embedded');
  const latinOnly = pdfPages(await renderLabelPdf(labelInput(1)))[0]!;
  t.notOk(latinOnly.texts.some((r) => r.font.startsWith('NotoSansHans')), 'a label without Chinese carries no CJK font');
});

t.test('long texts are cut to fit inside the page', async (t) => {
  const long = 'W'.repeat(100);
  const address = {
    name: long,
    street: 'M'.repeat(100),
    street_number: '1234567890',
    floor: '12345',
    apartment: '1234567890',
    zipcode: '1234567890',
    city: 'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch',
    state: 'S'.repeat(60),
    country: 'AR',
    phone: '+541112345678',
  };
  const input = labelInput(1, {
    carrier_name: long,
    service_type_name: long,
    control_number: 'WWWWWWWWWWWWWWWWWWWWWWWWWWWWWW',
    external_reference: 'X'.repeat(50),
    shipper_name: long,
    origin: address,
    destination: { ...address, street: 'Avenida del Libertador General San Martín '.repeat(3) },
    packages: [labelPackage(1, { label_code: 'ABCDEFGHIJKLMNOPQRST', description: 'D '.repeat(95), grams: 123456 })],
  });
  const pages = pdfPages(await renderLabelPdf(input));
  t.equal(pages.length, 1, 'still one page');
  const measure = new PDFDocument({ autoFirstPage: false });
  for (const run of pages[0]!.texts) {
    const width = measure.font(fontFile('latin', run.font.endsWith('Bold'))).fontSize(run.size).widthOfString(run.text);
    t.ok(run.x >= 0 && run.x + width <= LABEL_WIDTH_PT, `"${run.text}" fits the width`);
    t.ok(run.y >= 0 && run.y + run.size <= LABEL_HEIGHT_PT, `"${run.text}" fits the height`);
  }
  t.ok(pages[0]!.texts.some((r) => r.text.endsWith('…')), 'cut texts end with an ellipsis');
});

t.test('refuses label codes Code 128 cannot carry, and an empty package list', async (t) => {
  await t.rejects(renderLabelPdf(labelInput(1, { packages: [labelPackage(1, { label_code: 'Ñ-1' })] })), LabelCodeNotEncodableError);
  await t.rejects(renderLabelPdf(labelInput(1, { packages: [labelPackage(1, { label_code: '' })] })), LabelCodeNotEncodableError);
  await t.rejects(renderLabelPdf(labelInput(0)), RangeError);
});
