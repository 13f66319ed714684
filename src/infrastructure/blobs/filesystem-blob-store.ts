import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { assertBlobKey, type BlobStore, type StoredBlob } from './blob-store.js'
import { errnoOf } from '../../shared/thrown.js'

/**
 * The embedded default: files under BLOB_DIR (default `DATA_DIR/blobs`). A write goes to a
 * temporary file first and is renamed into place, so a reader never sees half a file.
 */
export class FilesystemBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  async put(key: string, data: Buffer, contentType: string): Promise<StoredBlob> {
    assertBlobKey(key)
    const path = join(this.root, key)
    await mkdir(dirname(path), { recursive: true })
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`
    await writeFile(tmp, data)
    await rename(tmp, path)
    return { key, size: data.length, sha256: createHash('sha256').update(data).digest('hex'), content_type: contentType }
  }

  async get(key: string): Promise<Buffer | null> {
    assertBlobKey(key)
    try {
      return await readFile(join(this.root, key))
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return null
      throw err
    }
  }
}
