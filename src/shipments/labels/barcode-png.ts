import bwipjs from 'bwip-js';

/** Code 128 of `text` as a PNG, with its human-readable line and quiet zones. */
export function code128Png(text: string): Promise<Buffer> {
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
