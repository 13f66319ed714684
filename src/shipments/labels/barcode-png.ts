// Loaded at the first barcode, not at start (memory of a server that prints no label).
type Bwip = typeof import('bwip-js');
let bwip: Promise<Bwip> | undefined;
const loadBwip = (): Promise<Bwip> => (bwip ??= import('bwip-js').then((m) => m.default));

/** Code 128 of `text` as a PNG, with its human-readable line and quiet zones. */
export async function code128Png(text: string): Promise<Buffer> {
  const bwipjs = await loadBwip();
  return bwipjs.toBuffer({
    bcid: 'code128',
    text,
    scale: 3,
    height: 14,
    includetext: true,
    textxalign: 'center',
    // Opaque white behind the bars, so a PDF rasterizer that ignores the alpha mask still prints them.
    backgroundcolor: 'FFFFFF',
    // Code 128 needs a quiet zone of 10 modules each side; inside the image it survives any scaling.
    paddingwidth: 10,
  });
}
