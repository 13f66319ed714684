import t from 'tap'
import { loadConfig } from '../src/config.js'

t.test('ROUTING_SPEED_KMH: 30 by default, a number above 0', async (t) => {
  t.equal(loadConfig({}).routingSpeedKmh, 30)
  t.equal(loadConfig({ ROUTING_SPEED_KMH: '22.5' }).routingSpeedKmh, 22.5)
  t.throws(() => loadConfig({ ROUTING_SPEED_KMH: 'fast' }), /expected a number/)
  t.throws(() => loadConfig({ ROUTING_SPEED_KMH: '0' }), /ROUTING_SPEED_KMH must be above 0/)
  t.throws(() => loadConfig({ ROUTING_SPEED_KMH: '-5' }), /ROUTING_SPEED_KMH must be above 0/)
})
