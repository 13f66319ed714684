import { fitLine, fitLines } from './fit-text.js';
import { assertPrintable } from './label-checks.js';
import type { LabelAddress, LabelInput, LabelPackage } from './label-input.js';
import {
  addressLines,
  clean,
  footerLine,
  formatDimensions,
  formatWeight,
  packageCounter,
  serviceLine,
} from './label-text.js';
import { zplCode128Field, zplHexField } from './zpl-escape.js';

// 203 dpi print heads are 8 dots/mm, so 10 x 15 cm is 800 x 1200 dots (it also fits 4 x 6 in stock).
export const ZPL_WIDTH_DOTS = 800;
export const ZPL_HEIGHT_DOTS = 1200;

const MARGIN = 30;
const CONTENT_WIDTH = ZPL_WIDTH_DOTS - 2 * MARGIN;
const BARCODE_HEIGHT = 160;
// ZPL cannot measure text; font 0 (CG Triumvirate Bold Condensed) averages under 0.6 em per
// character, so this estimate keeps ordinary text inside its box, and ^FB catches the rest.
const EM_PER_CHAR = 0.6;
const ELLIPSIS = '...';

type Align = 'L' | 'C' | 'R';

/** One ^XA...^XZ label per package, in the order given. Throws as assertPrintable does. */
export function renderLabelZpl(input: LabelInput): string {
  assertPrintable(input);
  return input.packages.map((pkg, index) => renderPackage(input, pkg, index)).join('\n') + '\n';
}

function renderPackage(input: LabelInput, pkg: LabelPackage, index: number): string {
  const out: string[] = ['^XA', '^CI28', `^PW${ZPL_WIDTH_DOTS}`, `^LL${ZPL_HEIGHT_DOTS}`, '^LH0,0'];
  const left = MARGIN;
  const counterWidth = 170;
  const headerWidth = CONTENT_WIDTH - counterWidth - 10;
  const counterLeft = ZPL_WIDTH_DOTS - MARGIN - counterWidth;

  out.push(field(left, 30, 40, clean(input.carrier_name), headerWidth));
  out.push(field(left, 78, 28, serviceLine(input), headerWidth));
  out.push(field(counterLeft, 30, 20, 'PACKAGE', counterWidth, 'R'));
  out.push(field(counterLeft, 55, 50, packageCounter(index, input.packages.length), counterWidth, 'R'));
  out.push(rule(115));

  out.push(field(left, 125, 20, 'CONTROL NUMBER', CONTENT_WIDTH, 'C'));
  out.push(field(left, 150, 110, clean(input.control_number), CONTENT_WIDTH, 'C'));
  out.push(rule(270));

  out.push(barcode(pkg.label_code, 290));
  out.push(rule(500));

  out.push(...addressBlock('SHIP TO', input.destination, 510, { name: 44, body: 34, streetLines: 2 }));
  out.push(rule(790));
  out.push(...addressBlock('FROM', input.origin, 800, { name: 28, body: 26, streetLines: 1 }));
  out.push(rule(965));

  const half = CONTENT_WIDTH / 2;
  out.push(field(left, 975, 20, 'WEIGHT', half));
  out.push(field(left, 1000, 34, formatWeight(pkg.grams), half));
  out.push(field(left + half, 975, 20, 'DIMENSIONS (L x W x H)', half));
  out.push(field(left + half, 1000, 34, formatDimensions(pkg), half));
  out.push(...paragraph(clean(pkg.description), 1045, 24, 2));
  out.push(rule(1105));

  const reference = clean(input.external_reference);
  out.push(field(left, 1112, 28, reference !== '' ? `Ref: ${reference}` : 'Ref: -', CONTENT_WIDTH));
  out.push(field(left, 1145, 22, `Shipper: ${clean(input.shipper_name)}`, CONTENT_WIDTH));
  out.push(field(left, 1172, 20, footerLine(input), CONTENT_WIDTH));

  out.push('^XZ');
  return out.filter((line) => line !== '').join('\n');
}

interface AddressStyle {
  name: number;
  body: number;
  streetLines: number;
}

function addressBlock(caption: string, address: LabelAddress, top: number, style: AddressStyle): string[] {
  const lines = addressLines(address);
  const out = [field(MARGIN, top, 20, caption, CONTENT_WIDTH)];
  let y = top + 25;
  out.push(field(MARGIN, y, style.name, lines.name, CONTENT_WIDTH));
  y += advance(style.name);
  const street = paragraph(lines.street, y, style.body, style.streetLines);
  out.push(...street);
  y += advance(style.body) * Math.max(street.length, 1);
  const rest =
    style.streetLines > 1
      ? [lines.locality, lines.region, lines.phone]
      : [[lines.locality, lines.region].filter((s) => s !== '').join(', '), lines.phone];
  for (const line of rest) {
    out.push(field(MARGIN, y, style.body, line, CONTENT_WIDTH));
    y += advance(style.body);
  }
  return out;
}

function paragraph(text: string, top: number, height: number, maxLines: number): string[] {
  return fitLines(text, CONTENT_WIDTH, maxLines, measure(height), ELLIPSIS).map((line, i) =>
    field(MARGIN, top + i * advance(height), height, line, CONTENT_WIDTH),
  );
}

function field(x: number, y: number, height: number, text: string, width: number, align: Align = 'L'): string {
  const line = fitLine(text, width, measure(height), ELLIPSIS);
  if (line === '') return '';
  const w = Math.round(width);
  // Inside ^FB a backslash starts an escape (\& is a line break), and \\ prints one backslash.
  const data = zplHexField(line.replaceAll('\\', '\\\\'));
  return `^FO${Math.round(x)},${y}^A0N,${height},${height}^FB${w},1,0,${align}^FH^FD${data}^FS`;
}

function barcode(labelCode: string, y: number): string {
  // Subset B: start, one symbol per character, check, then the 13-module stop.
  const modules = 11 * labelCode.length + 35;
  // Leave the 10-module quiet zone on each side inside the content width.
  const moduleWidth = Math.min(4, Math.max(1, Math.floor(CONTENT_WIDTH / (modules + 20))));
  const x = MARGIN + Math.max(0, Math.floor((CONTENT_WIDTH - modules * moduleWidth) / 2));
  return `^BY${moduleWidth},3,${BARCODE_HEIGHT}^FO${x},${y}^BCN,${BARCODE_HEIGHT},Y,N,N^FD${zplCode128Field(labelCode)}^FS`;
}

function measure(height: number): (s: string) => number {
  return (s) => Array.from(s).length * height * EM_PER_CHAR;
}

function advance(height: number): number {
  return Math.ceil(height * 1.15);
}

function rule(y: number): string {
  return `^FO${MARGIN},${y}^GB${CONTENT_WIDTH},3,3^FS`;
}
