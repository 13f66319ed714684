// User text must never reach a ZPL printer as commands: '^' and '~' start commands anywhere,
// even inside ^FD data.

/**
 * Field data for use right after `^FH` (hex indicator '_', the default) in a `^CI28` label:
 * printable ASCII passes, and '^', '~', '_' and every non-ASCII UTF-8 byte become `_XX`.
 */
export function zplHexField(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const passThrough = byte >= 0x20 && byte <= 0x7e && byte !== 0x5e && byte !== 0x7e && byte !== 0x5f;
    out += passThrough ? String.fromCharCode(byte) : `_${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// In ^BC field data '>' starts an invocation code, and '^', '>' and '~' are written as one
// (ZPL II Programming Guide, Code 128 invocation characters: >< is '^', >0 is '>', >= is '~').
const CODE128_INVOCATIONS: Record<string, string> = { '^': '><', '>': '>0', '~': '>=' };

/** ^BC field data in subset B (start code `>:`) for printable-ASCII text. */
export function zplCode128Field(text: string): string {
  return '>:' + Array.from(text, (ch) => CODE128_INVOCATIONS[ch] ?? ch).join('');
}
