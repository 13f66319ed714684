import type { LabelInput } from './label-input.js';

// Code 128 subset B (the one both renderers use) covers printable ASCII only. Encoding a
// substitute would print a barcode that scans as a different package, so refuse instead.
const ENCODABLE = /^[\x20-\x7E]+$/;

export class LabelCodeNotEncodableError extends Error {
  constructor(
    readonly packageId: number,
    readonly labelCode: string,
  ) {
    super(
      `package ${packageId}: label_code ${JSON.stringify(labelCode)} cannot be encoded as Code 128 (needs 1+ printable ASCII characters)`,
    );
    this.name = 'LabelCodeNotEncodableError';
  }
}

/** Throws RangeError without packages (a label is one page per package) and LabelCodeNotEncodableError. */
export function assertPrintable(input: LabelInput): void {
  if (input.packages.length === 0) throw new RangeError('a label needs at least one package');
  for (const pkg of input.packages) {
    if (!ENCODABLE.test(pkg.label_code)) throw new LabelCodeNotEncodableError(pkg.id, pkg.label_code);
  }
}
