/**
 * Headers for serving files that someone uploaded: their bytes are untrusted, so the declared type
 * is never taken on faith where a browser would render it (every response also carries
 * `X-Content-Type-Options: nosniff`, see app.ts).
 */

const PDF_MAGIC = Buffer.from('%PDF-')

/** `application/pdf` only for bytes that start like a PDF; anything else is opaque bytes. */
export const pdfContentType = (bytes: Buffer): string =>
  bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC) ? 'application/pdf' : 'application/octet-stream'

/**
 * `Content-Disposition` (RFC 6266) with the name twice: an ASCII `filename` for old clients (no
 * quotes, backslashes, percent signs or control characters, which clients unescape differently)
 * and the exact name as an RFC 5987 `filename*`.
 */
export function contentDisposition(type: 'attachment' | 'inline', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_')
  // encodeURIComponent leaves ' ( ) * unencoded; RFC 5987's attr-char does not allow them.
  const exact = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `${type}; filename="${ascii}"; filename*=UTF-8''${exact}`
}
