import t from 'tap'
import { build } from '../../helpers/build.js'

t.test('per-token rate limit: 409 with Retry-After', async (t) => {
  const h = await build(t, { rateLimitPerMinute: 3 })
  const org = await h.createOrganization()
  const second = (await h.admin('POST', `/organizations/${org.id}/tokens`)).json().access_token as string
  const my = (token: string) => h.call('GET', '/api/v1/organizations/my', { token })

  for (let i = 0; i < 3; i++) t.equal((await my(org.token)).statusCode, 200, `call ${i + 1} of 3`)
  const limited = await my(org.token)
  t.equal(limited.statusCode, 409)
  t.same(limited.json(), { message: limited.json().message, code: 'rate_limited' })
  const retryAfter = Number(limited.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${limited.headers['retry-after']}`)

  t.equal((await my(second)).statusCode, 200, 'another token of the same organization has its own budget')
  for (let i = 0; i < 5; i++) t.equal((await h.admin('POST', '/organizations/org_missing/suspend')).statusCode, 404, 'the admin token is not limited')

  const bad = await h.call('GET', '/api/v1/organizations/my/contracts?perPage=0', { token: second })
  t.equal(bad.statusCode, 422)
  t.equal((await my(second)).statusCode, 200)
  t.equal((await my(second)).statusCode, 409, 'invalid requests count too')
})
