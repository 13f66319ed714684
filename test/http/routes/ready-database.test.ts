// /ready and a database that stops answering (a TCP proxy between the API and a real PostgreSQL
// holds the server's answers): one missed `select 1` is a slow database, `degraded` with 200, so a
// machine short of CPU does not take the process out of its load balancer; unanswered for
// DOWN_AFTER_MS it is down, 503 `not_ready`; answering again, `ready`.
import t from 'tap'
import { build } from '../../helpers/build.js'
import { tcpProxy } from '../../helpers/tcp-proxy.js'
import { createScratchDatabase } from '../../helpers/test-database.js'
import { openDatabase } from '../../../src/infrastructure/database/connection.js'
import { DOWN_AFTER_MS } from '../../../src/http/health-monitor.js'

/** Forwards to `target`; while stalled, the server's answers are held back (queries hang), then sent on. */
async function stallingProxy(target: URL) {
  let stalled = false
  const held: (() => void)[] = []
  const proxy = await tcpProxy(target, {
    fromServer(chunk, send) {
      if (stalled) held.push(() => send(chunk))
      else send(chunk)
    },
  })
  return {
    ...proxy,
    stall() { stalled = true },
    resume() { stalled = false; for (const send of held.splice(0)) send() },
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('/ready: a database slow for a probe is degraded (200), one silent for DOWN_AFTER_MS is down (503), then ready again', async (t) => {
  const proxy = await stallingProxy(new URL(await createScratchDatabase(t)))
  t.teardown(() => proxy.close())
  const database = await openDatabase({ url: proxy.url, poolSize: 5, connectTimeoutMs: 10_000 })
  const h = await build(t, {}, {}, { database })
  const ready = async () => {
    const res = await h.call('GET', '/ready')
    return { at: Date.now(), status: res.statusCode, body: res.json() as { status: string; checks: Record<string, { status: string; message?: string }> } }
  }
  await sleep(1200) // the background ping has answered at least once since the start
  const before = await ready()
  t.equal(before.status, 200, 'ready before the stall')
  t.equal(before.body.checks['database']?.status, 'ok')

  const stalledAt = Date.now()
  proxy.stall()
  const seen: Awaited<ReturnType<typeof ready>>[] = []
  while (Date.now() - stalledAt < DOWN_AFTER_MS + 4000) {
    seen.push(await ready())
    if (seen.at(-1)!.status === 503) break
    await sleep(150)
  }
  const firstDown = seen.find((r) => r.status === 503)
  const slow = seen.filter((r) => r.status === 200 && r.body.checks['database']?.status === 'degraded')
  t.ok(slow.length > 0, `the database was reported slow (degraded, 200) first: ${slow.length} answers`)
  t.match(slow[0]?.body, { status: 'degraded', checks: { database: { message: /no answer within/ } } }, 'saying why')
  t.ok(seen.every((r) => r.status === 200 || r.status === 503), 'only 200 or 503')
  t.ok(firstDown, `then down: 503 (${seen.length} answers in ${Date.now() - stalledAt} ms)`)
  t.ok(firstDown && firstDown.at - stalledAt >= DOWN_AFTER_MS - 1000, `not before the database was silent for about DOWN_AFTER_MS (${firstDown ? firstDown.at - stalledAt : '-'} ms after the stall)`)
  t.match(firstDown?.body, { status: 'not_ready', checks: { database: { status: 'error', message: /no answer within/ } } })

  proxy.resume()
  const resumedAt = Date.now()
  let back = await ready()
  while (back.status !== 200 && Date.now() - resumedAt < 10_000) {
    await sleep(200)
    back = await ready()
  }
  t.equal(back.status, 200, `ready again ${Date.now() - resumedAt} ms after the database answered`)
  t.equal(back.body.checks['database']?.status, 'ok')
})
