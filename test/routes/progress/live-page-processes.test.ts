import t from 'tap'
import { build } from '../../helpers/build.js'
import { secondConnection } from '../../helpers/test-database.js'
import { createPlatform } from '../../../src/platform.js'
import { buildApp } from '../../../src/http/app.js'
import { listen, openSse, progressWorld } from './fixtures.js'

t.test('a live page\'s stream held by one API process gets the changes and the driver\'s positions made through another', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const database = await secondConnection(t, h.platform.database as typeof h.platform.database & { url?: string })
  const second = await createPlatform(h.platform.config, { database })
  const app2 = await buildApp(second, { logger: false })
  t.teardown(async () => { await app2.close(); await second.close() })

  const [a, b] = await w.tasks(2)
  const id = await w.route({ tasks: [a!, b!], publish: true })
  const other = await w.route({ tasks: [], publish: true, driverId: w.dispatcher.id })
  const link = (await h.call('POST', `/api/v1/routes/${id}/live-links`, { token: w.carrier.token, body: {} })).json().url as string
  const otherLink = (await h.call('POST', `/api/v1/routes/${other}/live-links`, { token: w.carrier.token, body: {} })).json().url as string
  const page = await openSse(`${base}${new URL(link).pathname}/stream`)
  const otherPage = await openSse(`${base}${new URL(otherLink).pathname}/stream`)
  await page.until((e) => e.some((x) => x.event === 'snapshot'))
  await otherPage.until((e) => e.some((x) => x.event === 'snapshot'))

  const via2 = (url: string, token: string, body: unknown = {}) =>
    app2.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` }, payload: body as any })
  t.equal((await via2(`/api/v1/tasks/${a}/start`, w.carrier.token)).statusCode, 200)
  const at = new Date().toISOString()
  t.equal((await via2('/api/v1/drivers/me/positions', w.driver.token, { positions: [{ lat: -32.9, lng: -60.6, recorded_at: at }] })).statusCode, 202)
  const got = await page.until((e) => e.some((x) => x.event === 'driver.position') && e.some((x) => x.event === 'task.started'))
  const pos = got.find((x) => x.event === 'driver.position')!
  t.same(JSON.parse(pos.data!), { route_id: id, lat: -32.9, lng: -60.6, recorded_at: at }, 'the position, from the other process')
  t.equal(pos.id, undefined, 'no id: the feed\'s Last-Event-ID is left alone')
  await new Promise((r) => setTimeout(r, 300))
  t.notOk(otherPage.events.some((x) => x.event === 'driver.position'), 'another driver\'s route hears nothing of it')
  page.close()
  otherPage.close()
})
