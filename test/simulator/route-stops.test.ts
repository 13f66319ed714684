import t from 'tap'
import { parseRouteSpec } from '../../src/simulator/existing-routes.js'
import { decideStop, type RouteTaskView, stopName } from '../../src/simulator/route-stops.js'

// Which stops of an existing route the simulator drives, and what it says of the others (issue 31
// §4: four city-level stops were skipped without a word, "0 open stops").

const task = (address: Partial<NonNullable<RouteTaskView['address']>> | null, status = 'pending'): RouteTaskView => ({
  ulid: '01JTESTTASK0000000000000000', position: 2, status, time_windows: [],
  address: address && { street: 'Calle', street_number: '10', city: { name: 'Rosario' }, geo_latitude: -32.95, geo_longitude: -60.66, geo_precision: 'exact', ...address },
})

t.test('a stop is named by its position, ulid, street and city', async (t) => {
  t.equal(stopName(task({})), 'stop 2 (01JTESTTASK0000000000000000, Calle 10, Rosario)')
  t.equal(stopName(task(null)), 'stop 2 (01JTESTTASK0000000000000000)')
})

t.test('exact coordinates are driven to as they are, without a word', async (t) => {
  t.same(decideStop(task({})), { drive: true, point: { lat: -32.95, lng: -60.66 } })
})

t.test('a city-level address is driven to the city\'s point, with a warning that says so', async (t) => {
  const d = decideStop(task({ geo_precision: 'city' }))
  t.equal(d.drive, true)
  t.match(d, { point: { lat: -32.95, lng: -60.66 }, warning: "a city-level address (geo_precision city): driven to Rosario's point -32.95000,-60.66000" })
})

t.test('a state- or country-level address, or none, is skipped with the reason', async (t) => {
  t.same(decideStop(task({ geo_precision: 'state' })), { drive: false, final: false, reason: "its address is only placed at its state's centre (geo_precision state): nowhere to drive to" })
  t.match(decideStop(task({ geo_precision: 'country' })), { drive: false, final: false, reason: /country's centre/ })
  t.same(decideStop(task({ geo_latitude: null })), { drive: false, final: false, reason: 'its address has no coordinates' })
  t.same(decideStop(task(null)), { drive: false, final: false, reason: 'its address has no coordinates' })
})

t.test('an unknown precision is driven to its coordinates with a warning', async (t) => {
  t.match(decideStop(task({ geo_precision: null })), { drive: true, warning: /precision is not known \(geo_precision null\)/ })
})

t.test('a stop under way is named as skipped; a final one is counted, not driven', async (t) => {
  t.same(decideStop(task({}, 'started')), { drive: false, final: false, reason: 'already started: only pending stops are driven' })
  t.same(decideStop(task({}, 'complete')), { drive: false, final: true, reason: 'already complete' })
  t.same(decideStop(task({}, 'cancelled')), { drive: false, final: true, reason: 'already cancelled' })
})

t.test('--route takes ID:TOKEN', async (t) => {
  t.same(parseRouteSpec('12:usr_tok.en-1'), { id: 12, token: 'usr_tok.en-1' })
  t.throws(() => parseRouteSpec('12'), /--route 12: expected <route id>:<driver token>/)
  t.throws(() => parseRouteSpec('x:tok'), /expected <route id>:<driver token>/)
})
