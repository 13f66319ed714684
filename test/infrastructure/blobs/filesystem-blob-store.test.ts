import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { FilesystemBlobStore } from '../../../src/infrastructure/blobs/filesystem-blob-store.js'

t.test('filesystem blob store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'blobs-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = new FilesystemBlobStore(dir)
  const stored = await store.put('labels/42/label.pdf', Buffer.from('%PDF-1.4'), 'application/pdf')
  t.same(stored, {
    key: 'labels/42/label.pdf', size: 8, content_type: 'application/pdf',
    sha256: createHash('sha256').update('%PDF-1.4').digest('hex'),
  })
  t.match(stored.sha256, /^[0-9a-f]{64}$/)
  t.same(await store.get('labels/42/label.pdf'), Buffer.from('%PDF-1.4'))
  t.equal(await store.get('labels/42/missing.pdf'), null)
  t.same(readdirSync(join(dir, 'labels/42')), ['label.pdf'], 'no temporary file left behind')
  await store.put('labels/42/label.pdf', Buffer.from('v2'), 'application/pdf')
  t.same(await store.get('labels/42/label.pdf'), Buffer.from('v2'), 'a put replaces')
  for (const bad of ['../etc/passwd', '/abs', 'a/../b', '', 'a//b', '.hidden']) {
    await t.rejects(store.put(bad, Buffer.from('x'), 'text/plain'), /invalid blob key/, bad)
    await t.rejects(store.get(bad), /invalid blob key/, bad)
  }
})
