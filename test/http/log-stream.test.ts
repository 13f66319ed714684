import { mkdtempSync, openSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { batchedStdout } from '../../src/http/log-stream.js'

// An open descriptor, like stdout (fd 1) in production: the writer is ready at once.
const file = () => join(mkdtempSync(join(tmpdir(), 'log-stream-')), 'out.log')
const fdOf = (path: string) => openSync(path, 'w')
const read = (path: string) => { try { return readFileSync(path, 'utf8') } catch { return '' } }
const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
}

t.test('lines below the batch size wait; a full batch is written whole and in order', async (t) => {
  const path = file()
  const s = batchedStdout({ maxBytes: 64, flushMs: 60_000, dest: fdOf(path) })
  t.teardown(() => s.close())
  s.write('{"a":1}\n')
  s.write('{"ñandú":"café"}\n')
  await new Promise((r) => setTimeout(r, 50))
  t.equal(read(path), '', 'nothing written below the batch size')
  for (let i = 0; i < 5; i++) s.write(`{"i":${i}}\n`)
  const expected = '{"a":1}\n{"ñandú":"café"}\n' + [0, 1, 2, 3, 4].map((i) => `{"i":${i}}\n`).join('')
  await waitFor(() => read(path).length > 0)
  t.ok(read(path).length > 0, 'a full batch is written without a flush')
  s.flush()
  await waitFor(() => read(path) === expected)
  t.equal(read(path), expected, 'every line, whole and in order')
})

t.test('a quiet logger still writes within flushMs', async (t) => {
  const path = file()
  const s = batchedStdout({ flushMs: 20, dest: fdOf(path) })
  t.teardown(() => s.close())
  s.write('late\n')
  await waitFor(() => read(path) === 'late\n')
  t.equal(read(path), 'late\n')
})

t.test('close writes what is buffered', async (t) => {
  const path = file()
  const s = batchedStdout({ flushMs: 60_000, dest: fdOf(path) })
  s.write('last words\n')
  s.close()
  await waitFor(() => read(path) === 'last words\n')
  t.equal(read(path), 'last words\n')
})
