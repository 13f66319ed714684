import { code128Png } from './barcode-png.js';
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
import type { Font } from 'fontkit';
import { fontName, parsedFont, type Face } from './label-fonts.js';
import { visualRuns } from './script-runs.js';

const PT_PER_CM = 72 / 2.54;
/** 10 x 15 cm, the size the specification fixes for labels. */
export const LABEL_WIDTH_PT = 10 * PT_PER_CM;
export const LABEL_HEIGHT_PT = 15 * PT_PER_CM;

const MARGIN = 10;
const CONTENT_WIDTH = LABEL_WIDTH_PT - 2 * MARGIN;
const COUNTER_WIDTH = 60;
const BARCODE_HEIGHT = 68;

interface Style {
  bold: boolean;
  size: number;
}
const CAPTION: Style = { bold: true, size: 6 };
const REGULAR = (size: number): Style => ({ bold: false, size });
const BOLD = (size: number): Style => ({ bold: true, size });
/**
 * Where a line's baseline sits below the top of its box, in ems: Helvetica's ascender, for which
 * the layout was drawn. Every font of a line shares that baseline, whatever its own ascender.
 */
const BASELINE = 0.718;
/** Arabic runs are shaped whole (see script-runs.ts); any feature list makes pdfkit do that. */
const SHAPED = { features: ['rlig' as const] };

// Loaded at the first label, not at start: pdfkit is ~7 MB of heap a server that prints no label
// never needs (issue 2's memory figure); the fonts are read at the first label that uses each.
type PdfKit = typeof import('pdfkit');
let pdfkit: Promise<PdfKit> | undefined;
const loadPdfKit = (): Promise<PdfKit> =>
  (pdfkit ??= import('pdfkit').then((m) => m.default));

/** One page per package, in the order given. Throws as assertPrintable does. */
export async function renderLabelPdf(input: LabelInput): Promise<Buffer> {
  assertPrintable(input);
  const [PDFDocument, barcodes] = await Promise.all([
    loadPdfKit(),
    Promise.all(input.packages.map((pkg) => code128Png(pkg.label_code))),
  ]);

  const doc = new PDFDocument({
    size: [LABEL_WIDTH_PT, LABEL_HEIGHT_PT],
    margin: 0,
    autoFirstPage: false,
    // pdfkit derives the file /ID from the info dictionary, so a fixed date makes the bytes repeatable.
    info: {
      CreationDate: creationDate(input.created_at),
      Title: `Label ${clean(input.control_number)}`,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const images: EmbeddedImage[] = [];
  for (const png of barcodes) images.push(await embedImage(doc, png));
  const finished = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });

  input.packages.forEach((pkg, index) => {
    doc.addPage();
    drawPage(doc, input, pkg, index, images[index]!);
  });
  doc.end();
  await finished;
  return Buffer.concat(chunks);
}

/** pdfkit's image object (not in its type definitions): `doc.image` accepts it in place of the bytes. */
interface EmbeddedImage { width: number; height: number; embed(doc: PDFKit.PDFDocument): void; finalize(): void }

// What pdfkit does at run time and its type definitions leave out: `openImage`, `image` of an
// opened image (it is drawn as it is, not opened again), and `registerFont` of a parsed fontkit
// font (its font factory takes any object with a `layout` method).
declare global {
  namespace PDFKit.Mixins {
    interface PDFImage {
      openImage(src: Buffer): EmbeddedImage;
      image(src: EmbeddedImage, x?: number, y?: number, options?: ImageOption): this;
    }
    interface PDFFont {
      registerFont(name: string, src: Font): this;
    }
  }
}

/**
 * Opens and embeds one image, and resolves once pdfkit has written it. bwip-js PNGs carry an alpha
 * channel, which pdfkit splits off on zlib's thread pool: embedded from drawPage, the images of a
 * multi-page label landed in the file in whatever order those jobs finished, so the same label
 * gave different bytes now and then. One at a time, the order is fixed.
 */
const EMBED_TIMEOUT_MS = 10_000;

function embedImage(doc: PDFKit.PDFDocument, png: Buffer): Promise<EmbeddedImage> {
  const image = doc.openImage(png);
  return new Promise((resolve, reject) => {
    // The alpha split runs in a zlib callback: an image pdfkit never finishes fails the label
    // instead of holding the request forever.
    const timer = setTimeout(() => reject(new Error('pdfkit did not finish embedding a barcode image')), EMBED_TIMEOUT_MS);
    const finalize = image.finalize.bind(image);
    image.finalize = () => {
      // Caught here, not thrown into zlib's callback (where nothing would catch it).
      try {
        finalize();
        resolve(image);
      } catch (err) {
        reject(err);
      } finally {
        clearTimeout(timer);
      }
    };
    try {
      image.embed(doc);
    } catch (err) {
      clearTimeout(timer);
      reject(err);
    }
  });
}

function creationDate(createdAt: string): Date {
  const date = new Date(createdAt);
  // An unparsable date would make pdfkit write "Invalid Date"; the epoch keeps output valid and repeatable.
  return Number.isNaN(date.getTime()) ? new Date(0) : date;
}

function drawPage(
  doc: PDFKit.PDFDocument,
  input: LabelInput,
  pkg: LabelPackage,
  index: number,
  barcode: EmbeddedImage,
): void {
  const left = MARGIN;
  const right = LABEL_WIDTH_PT - MARGIN;
  const headerWidth = CONTENT_WIDTH - COUNTER_WIDTH - 4;

  // Header: carrier and service on the left, package n/N on the right.
  text(doc, clean(input.carrier_name), left, 10, headerWidth, BOLD(12));
  text(doc, serviceLine(input), left, 26, headerWidth, REGULAR(9));
  text(doc, 'PACKAGE', right - COUNTER_WIDTH, 10, COUNTER_WIDTH, CAPTION, 'right');
  text(doc, packageCounter(index, input.packages.length), right - COUNTER_WIDTH, 18, COUNTER_WIDTH, BOLD(16), 'right');
  rule(doc, 40);

  text(doc, 'CONTROL NUMBER', left, 44, CONTENT_WIDTH, CAPTION, 'center');
  const control = clean(input.control_number);
  text(doc, control, left, 52, CONTENT_WIDTH, BOLD(shrinkToFit(doc, control, 34)), 'center');
  rule(doc, 88);

  doc.image(barcode, left, 93, { fit: [CONTENT_WIDTH, BARCODE_HEIGHT], align: 'center', valign: 'center' });
  rule(doc, 166);

  addressBlock(doc, 'SHIP TO', input.destination, 170, {
    name: BOLD(12),
    body: REGULAR(10),
    streetLines: 2,
  });
  rule(doc, 258);

  addressBlock(doc, 'FROM', input.origin, 262, {
    name: BOLD(8),
    body: REGULAR(8),
    streetLines: 1,
  });
  rule(doc, 314);

  const half = CONTENT_WIDTH / 2;
  text(doc, 'WEIGHT', left, 318, half, CAPTION);
  text(doc, formatWeight(pkg.grams), left, 326, half, BOLD(10));
  text(doc, 'DIMENSIONS (L x W x H)', left + half, 318, half, CAPTION);
  text(doc, formatDimensions(pkg), left + half, 326, half, BOLD(10));
  paragraph(doc, clean(pkg.description), left, 340, CONTENT_WIDTH, 2, REGULAR(8));
  rule(doc, 364);

  const reference = clean(input.external_reference);
  text(doc, reference !== '' ? `Ref: ${reference}` : 'Ref: -', left, 368, CONTENT_WIDTH, BOLD(9));
  text(doc, `Shipper: ${clean(input.shipper_name)}`, left, 381, CONTENT_WIDTH, REGULAR(8));
  text(doc, footerLine(input), left, 393, CONTENT_WIDTH, REGULAR(7));
  text(doc, `Package id ${pkg.id} | ${clean(pkg.label_code)}`, left, 403, CONTENT_WIDTH, REGULAR(7));
}

interface AddressStyle {
  name: Style;
  body: Style;
  streetLines: number;
}

function addressBlock(doc: PDFKit.PDFDocument, caption: string, address: LabelAddress, top: number, style: AddressStyle): void {
  const lines = addressLines(address);
  let y = top;
  text(doc, caption, MARGIN, y, CONTENT_WIDTH, CAPTION);
  y += 9;
  y = text(doc, lines.name, MARGIN, y, CONTENT_WIDTH, style.name);
  y = paragraph(doc, lines.street, MARGIN, y, CONTENT_WIDTH, style.streetLines, style.body);
  // Locality and region share a line on the small sender block to keep its height fixed.
  if (style.streetLines > 1) {
    y = text(doc, lines.locality, MARGIN, y, CONTENT_WIDTH, style.body);
    y = text(doc, lines.region, MARGIN, y, CONTENT_WIDTH, style.body);
  } else {
    y = text(doc, [lines.locality, lines.region].filter((s) => s !== '').join(', '), MARGIN, y, CONTENT_WIDTH, style.body);
  }
  text(doc, lines.phone, MARGIN, y, CONTENT_WIDTH, style.body);
}

/** Registers a font with the document at its first use: a label only embeds the fonts it draws with. */
const registered = new WeakMap<PDFKit.PDFDocument, Set<string>>();
function useFont(doc: PDFKit.PDFDocument, face: Face, bold: boolean): PDFKit.PDFDocument {
  const name = fontName(face, bold);
  let names = registered.get(doc);
  if (!names) registered.set(doc, (names = new Set()));
  if (!names.has(name)) {
    doc.registerFont(name, parsedFont(face, bold));
    names.add(name);
  }
  return doc.font(name);
}

function measureWith(doc: PDFKit.PDFDocument, style: Style): (s: string) => number {
  return (s) => visualRuns(s).reduce((width, run) =>
    width + useFont(doc, run.face, style.bold).fontSize(style.size).widthOfString(run.text, run.shaped ? SHAPED : {}), 0);
}

/** One line, cut to the width; returns the y of the next line. */
function text(
  doc: PDFKit.PDFDocument,
  raw: string,
  x: number,
  y: number,
  width: number,
  style: Style,
  align: 'left' | 'center' | 'right' = 'left',
): number {
  const measure = measureWith(doc, style);
  const line = fitLine(raw.normalize('NFC'), width, measure);
  if (line !== '') {
    let at = x + (align === 'left' ? 0 : (width - measure(line)) / (align === 'center' ? 2 : 1));
    for (const run of visualRuns(line)) {
      useFont(doc, run.face, style.bold).fontSize(style.size);
      // lineBreak: false keeps pdfkit from wrapping or adding pages on its own.
      doc.text(run.text, at, y + BASELINE * style.size, { lineBreak: false, baseline: 'alphabetic', ...(run.shaped ? SHAPED : {}) });
      at += doc.widthOfString(run.text, run.shaped ? SHAPED : {});
    }
  }
  return y + lineAdvance(style);
}

function paragraph(doc: PDFKit.PDFDocument, raw: string, x: number, y: number, width: number, maxLines: number, style: Style): number {
  const lines = fitLines(raw.normalize('NFC'), width, maxLines, measureWith(doc, style));
  let next = y;
  for (const line of lines) next = text(doc, line, x, next, width, style);
  return next;
}

function shrinkToFit(doc: PDFKit.PDFDocument, raw: string, size: number): number {
  const width = measureWith(doc, BOLD(size))(raw);
  // Below 14 pt the control number stops being "big"; fitLine then cuts what is left.
  return width <= CONTENT_WIDTH ? size : Math.max(14, Math.floor((size * CONTENT_WIDTH) / width));
}

function lineAdvance(style: Style): number {
  return Math.ceil(style.size * 1.2);
}

function rule(doc: PDFKit.PDFDocument, y: number): void {
  doc.moveTo(MARGIN, y).lineTo(LABEL_WIDTH_PT - MARGIN, y).lineWidth(0.8).stroke();
}
