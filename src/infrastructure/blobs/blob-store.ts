/**
 * Port for binary objects (labels, waybills, attachments) (DESIGN §2 "Blobs"). Events carry only
 * references (`BlobRef`); the bytes live here. Keys are content-independent paths chosen by the
 * caller (`labels/<shipment>/<sha256>.pdf`), so a replayed command rewrites the same key harmlessly.
 */
export interface StoredBlob {
  key: string
  size: number
  sha256: string
  content_type: string
}

export interface BlobStore {
  put(key: string, data: Buffer, contentType: string): Promise<StoredBlob>
  /** Null when there is no such blob. */
  get(key: string): Promise<Buffer | null>
}

/** Keys are relative paths of safe segments: no `..`, no absolute paths, no odd characters. */
export function assertBlobKey(key: string): void {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/.test(key) || key.split('/').includes('..') || key.length > 512) {
    throw new Error(`invalid blob key: ${JSON.stringify(key)}`)
  }
}
