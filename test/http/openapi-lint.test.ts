import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { build } from '../helpers/build.js'

/**
 * `/openapi.json` as a new integrator checks it: `redocly lint` with its recommended rules, no
 * configuration of ours (the run is in an empty directory), and nothing waived: 0 errors, 0 warnings.
 */
const redocly = fileURLToPath(new URL('../../node_modules/.bin/redocly', import.meta.url))

t.test('redocly lint (recommended): 0 errors, 0 warnings', async (t) => {
  const h = await build(t, {}, { PUBLIC_BASE_URL: 'https://api.shipping.test' })
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'openapi.json'), res.body)

  const { stdout } = await promisify(execFile)(redocly, ['lint', 'openapi.json', '--extends=recommended', '--format=json', '--max-problems=50'], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }))
  const report = JSON.parse(stdout)
  const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 0 }, problems.join('\n'))
})
