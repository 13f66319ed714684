import t from 'tap';
import { LabelCodeNotEncodableError } from '../../../src/shipments/labels/label-checks.js';
import { renderLabelZpl } from '../../../src/shipments/labels/render-zpl.js';
import { labelInput, labelPackage } from './fixtures/label-input.js';
import { zplBarcodeFields, zplLabels, zplTextFields } from './fixtures/zpl-inspect.js';

// Every command the renderer emits; anything else starting with ^ or ~ would be injected.
const OWN_COMMANDS = /^\^(XA|XZ|CI28|PW|LL|LH|FO|A0N|FB|FH|FD|FS|GB|BY|BC)/;

function commands(zpl: string): string[] {
  return Array.from(zpl.matchAll(/[\^~][^\^~]*/g), (m) => m[0]);
}

t.test('one 10x15 cm label at 203 dpi per package', (t) => {
  const zpl = renderLabelZpl(labelInput(3));
  const labels = zplLabels(zpl);
  t.equal(labels.length, 3);
  t.equal(zpl.match(/\^XA/g)?.length, 3);
  t.equal(zpl.match(/\^XZ/g)?.length, 3);
  for (const label of labels) {
    t.match(label, /\^PW800\n/, '100 mm at 8 dots/mm');
    t.match(label, /\^LL1200\n/, '150 mm at 8 dots/mm');
    t.match(label, /\^CI28\n/, 'UTF-8 field data');
    t.equal(label.match(/\^BC/g)?.length, 1, 'one Code 128');
  }
  t.end();
});

t.test('each label has the control number, its package n/N, addresses and its label_code barcode', (t) => {
  const input = labelInput(3);
  zplLabels(renderLabelZpl(input)).forEach((label, i) => {
    const pkg = input.packages[i]!;
    const fields = zplTextFields(label);
    t.ok(fields.includes('K7Q2M'), 'control number');
    t.match(label, /\^A0N,110,110\^FB740,1,0,C\^FH\^FDK7Q2M\^FS/, 'control number is big and centred');
    t.ok(fields.includes(`${i + 1}/3`), 'package n/N');
    t.ok(fields.includes('João Gonçalves'), 'recipient name, accents through ^FH');
    t.ok(fields.includes('01305-000 São Paulo'));
    t.ok(fields.includes('Avenida Colón 1234, Floor 2, Apt B'), 'sender street');
    t.ok(fields.includes('X5000 Córdoba, Córdoba, AR'));
    t.ok(fields.includes(`${pkg.length_cm} x ${pkg.width_cm} x ${pkg.height_cm} cm`));
    t.ok(fields.includes('Ref: ORDER-2024-0001'));
    t.same(zplBarcodeFields(label), [`>:${pkg.label_code}`], 'subset B start code, then the label_code');
  });
  t.end();
});

t.test('^ and ~ in user text cannot inject commands', (t) => {
  const evil = 'Evil ^XZ^XA^FO0,0^FDPWNED^FS ~JR ~DGR:X_41 \\& back\\slash';
  const shortEvil = '^XZ~JR_41 \\&\\';
  const input = labelInput(2, {
    carrier_name: evil,
    control_number: '^XZ~',
    external_reference: evil,
    destination: { ...labelInput().destination, name: shortEvil, city: '^FS^XZ' },
  });
  const zpl = renderLabelZpl(input);
  t.equal(zplLabels(zpl).length, 2, 'still two labels');
  t.notOk(zpl.includes('~'), 'no ~ anywhere');
  t.same(commands(zpl).filter((c) => !OWN_COMMANDS.test(c)), [], 'every ^ starts a command the renderer wrote');
  const fields = zplTextFields(zplLabels(zpl)[0]!);
  t.ok(fields.includes(shortEvil), 'recipient name prints exactly as given');
  t.ok(fields.some((f) => f.startsWith('Ref: Evil ^XZ^XA^FO0,0')), 'a long one is cut, not broken');
  t.ok(fields.includes('^XZ~'), 'control number prints exactly as given');
  t.ok(fields.includes('01305-000 ^FS^XZ'));
  t.end();
});

t.test('^, > and ~ in a label_code use Code 128 invocation codes', (t) => {
  const zpl = renderLabelZpl(labelInput(1, { packages: [labelPackage(1, { label_code: 'A^B>C~D' })] }));
  t.same(zplBarcodeFields(zpl), ['>:A><B>0C>=D']);
  t.notOk(zpl.includes('~'));
  t.end();
});

t.test('non-Latin text is carried as UTF-8 without breaking the label', (t) => {
  const zpl = renderLabelZpl(labelInput(1, { shipper_name: 'Зоопарк 東京 🚚' }));
  t.match(zpl, /^[\x20-\x7E\n]*$/, 'the ZPL itself is plain ASCII');
  t.ok(zplTextFields(zplLabels(zpl)[0]!).includes('Shipper: Зоопарк 東京 🚚'));
  t.end();
});

t.test('long texts are cut with an ellipsis to the estimated field width', (t) => {
  const zpl = renderLabelZpl(labelInput(1, { carrier_name: 'W'.repeat(100), external_reference: 'X'.repeat(50) }));
  const fields = zplTextFields(zplLabels(zpl)[0]!);
  const carrier = fields.find((f) => f.startsWith('WWW'));
  t.ok(carrier?.endsWith('...'));
  t.ok((carrier?.length ?? 0) * 40 * 0.6 <= 560, 'fits the 560-dot header block at 0.6 em per character');
  t.ok(fields.some((f) => /^Ref: X+\.\.\.$/.test(f)));
  t.end();
});

t.test('refuses label codes Code 128 cannot carry, and an empty package list', (t) => {
  t.throws(() => renderLabelZpl(labelInput(1, { packages: [labelPackage(1, { label_code: 'Ñ-1' })] })), LabelCodeNotEncodableError);
  t.throws(() => renderLabelZpl(labelInput(1, { packages: [labelPackage(1, { label_code: 'A\nB' })] })), LabelCodeNotEncodableError);
  t.throws(() => renderLabelZpl(labelInput(0)), RangeError);
  t.end();
});

t.test('the same input gives the same text', (t) => {
  t.equal(renderLabelZpl(labelInput(2)), renderLabelZpl(labelInput(2)));
  t.end();
});
