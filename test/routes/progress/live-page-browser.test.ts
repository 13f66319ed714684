import t from 'tap'
import { chromium, type Browser } from 'playwright-core'
import { build } from '../../helpers/build.js'
import { liveLinkKey, signLiveToken } from '../../../src/routes/progress/live-token.js'
import { listen, progressWorld } from './fixtures.js'

// The functions below run in the page (the project's types carry no DOM library).
declare const document: any
declare const window: any

const launch = (): Promise<Browser> => chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})

t.test('the live page in a real browser: tasks in order, statuses and progress, updating as they change; bad links show nothing', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const [a, b, c] = await w.tasks(3)
  const id = await w.route({ tasks: [a!, b!, c!], publish: true })
  const browser = await launch()
  t.teardown(() => browser.close())
  const made = await h.call('POST', `/api/v1/routes/${id}/live-links`, { token: w.carrier.token, body: { ttl_minutes: 60 } })
  t.equal(made.statusCode, 201)
  const path = new URL(made.json().url).pathname

  const page = await browser.newPage()
  await page.goto(`${base}${path}`)
  await page.waitForFunction(() => document.querySelectorAll('#tasks li').length === 3)
  const rows = () => page.$$eval('#tasks li', (lis: any[]) => lis.map((li) => [li.getAttribute('data-ulid'), li.querySelector('.status').textContent]))
  t.same(await rows(), [[a, 'pending'], [b, 'pending'], [c, 'pending']], 'in route order, all pending')
  t.equal(await page.textContent('#route-status'), 'published')
  t.equal(await page.getAttribute('#bar', 'aria-valuenow'), '0')

  t.equal((await w.transition(b!, 'complete', { signed_by: 'Bo' })).statusCode, 200, 'completed through the API')
  await page.waitForFunction((ulid) => document.querySelector(`#tasks li[data-ulid="${ulid}"] .status`)?.textContent === 'complete', b)
  t.same(await rows(), [[a, 'pending'], [b, 'complete'], [c, 'pending']])
  t.equal(await page.getAttribute('#bar', 'aria-valuenow'), '33')
  t.match(await page.evaluate(() => document.getElementById('fill').style.width), '33%')
  t.match(await page.textContent('#summary'), /1 complete/)

  await w.removeTask(id, a!)
  await page.waitForFunction(() => document.querySelectorAll('#tasks li').length === 2)
  t.same(await rows(), [[b, 'complete'], [c, 'pending']], 'a removal shows')
  await w.routeEvent(id, 'RouteBlocked', { reason: '<img src=x onerror="window.pwned=1">', blocked_at: new Date().toISOString() })
  await page.waitForFunction(() => document.getElementById('route-status').textContent.startsWith('blocked'))
  t.equal(await page.textContent('#route-status'), 'blocked: <img src=x onerror="window.pwned=1">', 'the reason, as text')
  t.equal(await page.$$eval('#route-status img', (l: any[]) => l.length), 0)
  t.notOk(await page.evaluate(() => window.pwned), 'data never becomes markup')
  await page.screenshot({ path: '/tmp/live-page.png' }).catch(() => undefined)

  t.test('an altered or expired link shows nothing of the route', async (t) => {
    const [route, expires, sig] = path.split('/').pop()!.split('.')
    const altered = `${route}.${expires}.${(sig![0] === 'A' ? 'B' : 'A') + sig!.slice(1)}`
    const expired = signLiveToken(liveLinkKey(h.platform.secretsKey), id, w.carrier.id, new Date(Date.now() - 60_000))
    for (const [what, token] of [['altered', altered], ['expired', expired]] as const) {
      const p = await browser.newPage()
      const res = await p.goto(`${base}/live/routes/${token}`)
      t.equal(res?.status(), 404, what)
      await p.waitForTimeout(300)
      const text = await p.textContent('body')
      t.match(text, /expired or invalid/i, what)
      for (const ulid of [b, c]) t.notMatch(text, ulid!, `${what}: no task shown`)
      t.equal(await p.$$eval('li', (l: any[]) => l.length), 0, `${what}: no list`)
      await p.close()
    }
  })

  t.test('a page left open when its link expires clears the route', async (t) => {
    const soon = signLiveToken(liveLinkKey(h.platform.secretsKey), id, w.carrier.id, new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000))
    const p = await browser.newPage()
    await p.goto(`${base}/live/routes/${soon}`)
    await p.waitForFunction(() => document.querySelectorAll('#tasks li').length === 2)
    await p.waitForFunction(() => /expired/.test(document.getElementById('state').textContent ?? ''), undefined, { timeout: 15_000 })
    t.equal(await p.$$eval('#tasks li', (l: any[]) => l.length), 0)
    t.equal(await p.textContent('#summary'), '')
    await p.close()
  })
})
