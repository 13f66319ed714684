// pdfkit's built-in fonts (Helvetica) are WinAnsi-encoded: a code point outside that set is
// written as garbage rather than rejected. Keep what WinAnsi has, strip accents from what it
// lacks (ő -> o), and replace the rest with '?'.

// The 0x80-0x9F slots of Windows-1252, which Unicode places elsewhere.
const CP1252_EXTRAS = new Set(Array.from('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ', (c) => c.codePointAt(0)));

// Latin letters with a stroke have no Unicode decomposition to strip.
const STROKED: Record<string, string> = {
  Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', Ŧ: 'T', ŧ: 't', ı: 'i', Ŀ: 'L', ŀ: 'l', Ƶ: 'Z', ƶ: 'z',
};

function isWinAnsi(ch: string): boolean {
  const cp = ch.codePointAt(0) ?? 0;
  return (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff) || CP1252_EXTRAS.has(cp);
}

export function toWinAnsi(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (isWinAnsi(ch)) {
      out += ch;
      continue;
    }
    const stripped = STROKED[ch] ?? ch.normalize('NFKD').replace(/\p{M}/gu, '');
    out += stripped !== '' && Array.from(stripped).every(isWinAnsi) ? stripped : '?';
  }
  return out;
}
