// Labels have fixed boxes: text is wrapped to a width and cut with an ellipsis, never overflowed.

export type Measure = (text: string) => number;

export function fitLines(
  text: string,
  maxWidth: number,
  maxLines: number,
  measure: Measure,
  ellipsis = '…',
): string[] {
  if (maxLines < 1) return [];
  const lines = wrap(text, maxWidth, measure);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, maxLines - 1);
  // The last line takes everything left and is cut by characters, so it shows as much as fits.
  kept.push(withEllipsis(lines.slice(maxLines - 1).join(' '), maxWidth, measure, ellipsis));
  return kept;
}

export function fitLine(text: string, maxWidth: number, measure: Measure, ellipsis = '…'): string {
  return fitLines(text, maxWidth, 1, measure, ellipsis)[0] ?? '';
}

function wrap(text: string, maxWidth: number, measure: Measure): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ').filter((w) => w !== '')) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (measure(candidate) <= maxWidth) {
      current = candidate;
      continue;
    }
    if (current !== '') lines.push(current);
    current = '';
    // A word wider than the box (a long reference, a phone number) is broken by characters.
    for (const ch of word) {
      if (current !== '' && measure(current + ch) > maxWidth) {
        lines.push(current);
        current = '';
      }
      current += ch;
    }
  }
  if (current !== '') lines.push(current);
  return lines;
}

function withEllipsis(text: string, maxWidth: number, measure: Measure, ellipsis: string): string {
  const chars = Array.from(text);
  // Binary search for the longest prefix that fits with the ellipsis: measuring is the cost.
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measure(chars.slice(0, mid).join('').trimEnd() + ellipsis) <= maxWidth) lo = mid;
    else hi = mid - 1;
  }
  return chars.slice(0, lo).join('').trimEnd() + ellipsis;
}
