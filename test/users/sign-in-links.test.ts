import { Writable } from 'node:stream'
import t from 'tap'
import { build } from '../helpers/build.js'

// Issue 38 §1: a dispatcher signs a driver's phone in with a one-time link or short code; the phone
// trades it (in a POST body, never a URL) for the driver's own token.

t.test('sign-in links: single use, minutes of validity, revocable, rate limited, one organization\'s, never in a log', async (t) => {
  let logs = ''
  const stream = new Writable({ write(chunk, _enc, cb) { logs += String(chunk); cb() } })
  const h = await build(t, {}, {}, { logger: { level: 'debug', stream } })
  const org = await h.createOrganization({ roles: ['carrier'], name: 'Rápido SA' })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const create = async (body: object) => {
    const r = await h.call('POST', '/api/v1/users', { token: org.token, body })
    t.equal(r.statusCode, 201, r.body)
    return r.json()
  }
  const driver = await create({ name: 'Dana Driver', email: 'dana@example.com', role: 'driver' })
  const dispatcher = await create({ name: 'Sam Dispatcher', email: 'sam@example.com', role: 'dispatcher' })
  const link = (userId: string, token: string = dispatcher.access_token, body?: object) =>
    h.call('POST', `/api/v1/users/${userId}/sign-in-links`, { token, ...(body ? { body } : {}) })
  const redeem = (code: string) => h.call('POST', '/driver/sign-in', { body: { code } })
  const codes: string[] = []
  const tokens: string[] = []

  const made = await link(driver.user.id, dispatcher.access_token, { ttl_minutes: 10 })
  t.equal(made.statusCode, 201, made.body)
  const first = made.json().sign_in_link
  codes.push(first.code)
  t.match(first.id, /^sil_/)
  t.match(first.code, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/)
  t.equal(new URL(first.url).pathname + new URL(first.url).search, '/driver', 'no code in the path or the query')
  t.equal(new URL(first.url).hash, `#code=${first.code}`, 'the code rides in the fragment, which no server sees')
  const ttl = Date.parse(first.expires_at) - Date.now()
  t.ok(ttl > 9 * 60_000 && ttl <= 10 * 60_000, `expires in the minutes asked (${ttl} ms)`)
  t.match(made.headers['cache-control'], /no-store/)

  t.test('the code is kept only as a hash, under a kind the API never accepts as a token', async (t) => {
    const row = await h.platform.rm.selectFrom('access_tokens').selectAll().where('token_id', '=', first.id).executeTakeFirstOrThrow()
    t.equal(row.kind, 'sign_in_link')
    t.equal(row.subject_id, driver.user.id)
    t.not(row.token_hash, first.code)
    const events = await h.platform.store.readStream(`user-${driver.user.id}`)
    t.notOk(JSON.stringify(events).includes(first.code), 'no event holds the code')
    t.equal((await h.call('GET', '/api/v1/routes', { token: first.code })).statusCode, 401, 'the code is not a bearer token')
  })

  await t.test('opened once: the phone gets the driver\'s token, which reaches what a driver reaches and no more', async (t) => {
    const r = await redeem(first.code)
    t.equal(r.statusCode, 200, r.body)
    const s = r.json()
    t.match(s, { user: { id: driver.user.id, name: 'Dana Driver' }, organization: { name: 'Rápido SA' } })
    t.match(s.access_token, /^sk_/)
    tokens.push(s.access_token)
    t.match(r.headers['cache-control'], /no-store/)
    t.equal((await h.call('GET', '/api/v1/routes', { token: s.access_token })).statusCode, 200, 'a driver\'s own routes')
    const users = await h.call('GET', '/api/v1/users', { token: s.access_token })
    t.equal(users.statusCode, 403)
    t.equal(users.json().code, 'driver_not_allowed')
    t.equal((await link(driver.user.id, s.access_token)).statusCode, 403, 'a driver cannot make links')
    const again = await redeem(first.code)
    t.equal(again.statusCode, 401, 'single use')
    t.match(again.json().message, /used, revoked or expired/)
    const events = (await h.platform.store.readStream(`user-${driver.user.id}`)).map((e) => e.type)
    t.same(events.slice(-2), ['UserSignInLinkRedeemed', 'UserTokenIssued'])
  })

  await t.test('typed by hand: case, spaces and dashes do not matter', async (t) => {
    const code = (await link(driver.user.id)).json().sign_in_link.code as string
    codes.push(code)
    const r = await redeem(` ${code.toLowerCase().replace(/-/g, ' ')} `)
    t.equal(r.statusCode, 200, r.body)
    tokens.push(r.json().access_token)
  })

  await t.test('expired after its minutes', async (t) => {
    const l = (await link(driver.user.id, org.token, { ttl_minutes: 1 })).json().sign_in_link
    codes.push(l.code)
    const real = h.platform.clock
    h.platform.clock = () => new Date(real().getTime() + 61_000)
    t.teardown(() => { h.platform.clock = real })
    t.equal((await redeem(l.code)).statusCode, 401)
    h.platform.clock = real
  })

  await t.test('revoked by the dispatcher before use', async (t) => {
    const l = (await link(driver.user.id)).json().sign_in_link
    codes.push(l.code)
    const del = await h.call('DELETE', `/api/v1/users/${driver.user.id}/sign-in-links/${l.id}`, { token: dispatcher.access_token })
    t.equal(del.statusCode, 200, del.body)
    t.same(del.json().sign_in_link, { id: l.id, state: 'revoked' })
    t.equal((await redeem(l.code)).statusCode, 401)
    t.equal((await h.call('DELETE', `/api/v1/users/${driver.user.id}/sign-in-links/${l.id}`, { token: org.token })).statusCode, 200, 'revoking twice changes nothing')
    const used = await h.call('DELETE', `/api/v1/users/${driver.user.id}/sign-in-links/${first.id}`, { token: org.token })
    t.same(used.json().sign_in_link, { id: first.id, state: 'redeemed' }, 'a used link says so')
    t.equal((await h.call('DELETE', `/api/v1/users/${driver.user.id}/sign-in-links/sil_nope`, { token: org.token })).statusCode, 404)
  })

  await t.test('another organization\'s user is unknown (404), and only drivers get links', async (t) => {
    const foreign = await link(driver.user.id, other.token)
    t.equal(foreign.statusCode, 404)
    t.equal((await h.call('DELETE', `/api/v1/users/${driver.user.id}/sign-in-links/${first.id}`, { token: other.token })).statusCode, 404)
    const notDriver = await link(dispatcher.user.id, org.token)
    t.equal(notDriver.statusCode, 409)
    t.equal(notDriver.json().code, 'not_a_driver')
    const bad = await link(driver.user.id, org.token, { ttl_minutes: 600, extra: 1 })
    t.equal(bad.statusCode, 422)
  })

  await t.test('rate limited per driver: a few links a minute', async (t) => {
    const ana = await create({ name: 'Ana Driver', email: 'ana@example.com', role: 'driver' })
    const answers: number[] = []
    for (let i = 0; i < 6; i++) {
      const r = await link(ana.user.id)
      answers.push(r.statusCode)
      if (r.statusCode === 201) codes.push(r.json().sign_in_link.code)
      else {
        t.equal(r.json().code, 'rate_limited')
        t.ok(Number(r.headers['retry-after']) >= 1)
      }
    }
    t.same(answers, [201, 201, 201, 201, 201, 409])
  })

  await t.test('deactivating the driver revokes the phone\'s token and every open link', async (t) => {
    const lee = await create({ name: 'Lee Driver', email: 'lee@example.com', role: 'driver' })
    const a = (await link(lee.user.id)).json().sign_in_link
    const b = (await link(lee.user.id)).json().sign_in_link
    codes.push(a.code, b.code)
    const token = (await redeem(a.code)).json().access_token as string
    tokens.push(token)
    t.equal((await h.call('GET', '/api/v1/routes', { token })).statusCode, 200)
    t.equal((await h.call('POST', `/api/v1/users/${lee.user.id}/deactivate`, { token: org.token })).statusCode, 200)
    t.equal((await h.call('GET', '/api/v1/routes', { token })).statusCode, 401, 'signed out at the next request')
    t.equal((await redeem(b.code)).statusCode, 401)
  })

  await t.test('guessing is cut short per address (429 with Retry-After)', async (t) => {
    let status = 0
    let tries = 0
    let retryAfter: string | undefined
    while (tries < 15) {
      const r = await redeem(`WRONG-CODE-${tries}`)
      tries++
      status = r.statusCode
      if (status === 429) { retryAfter = r.headers['retry-after'] as string; break }
      t.equal(status, 401)
    }
    t.equal(status, 429, `refused after ${tries} tries`)
    t.ok(Number(retryAfter) >= 1)
  })

  t.test('no code and no token in any log line', async (t) => {
    t.ok(logs.includes('/driver/sign-in'), 'the requests were logged')
    for (const c of codes) t.notOk(logs.includes(c) || logs.includes(c.replace(/-/g, '')), `code ${c.slice(0, 4)}… not logged`)
    for (const k of tokens) t.notOk(logs.includes(k), 'token not logged')
  })
})
