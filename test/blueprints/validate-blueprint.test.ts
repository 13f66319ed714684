import t from 'tap'
import type { Step } from '../../schemas/api/blueprints.js'
import { validateBlueprint } from '../../src/blueprints/validate-blueprint.js'
import { DEFAULT_BLUEPRINTS } from '../../src/blueprints/default-blueprints.js'

// Given a draft, when published, then these problems at these paths (or none).

const step = (key: string, extra: Partial<Step> = {}): Step => ({ key, name: key, task: { type: 'delivery', address: 'destination' }, ...extra })
const problems = (steps: Step[], start_steps: string[], others: string[] = []) =>
  validateBlueprint('mine', { name: 'Mine', steps, start_steps }, new Set(['mine', ...others])).errors

t.test('the default blueprints are valid', async (t) => {
  const keys = new Set(DEFAULT_BLUEPRINTS.map((b) => b.key))
  for (const b of DEFAULT_BLUEPRINTS) t.same({ ...validateBlueprint(b.key, b, keys).errors }, {}, b.key)
})

t.test('unknown step keys, wherever they are named', async (t) => {
  const e = problems([step('a', { depends_on: ['zz'], on_complete: [{ do: 'create_task', step: 'b' }], on_fail: [{ do: 'create_task', step: 'nope' }] }), step('b')], ['a', 'ghost'])
  t.same(Object.keys(e).sort(), ['start_steps.1', 'steps.0.depends_on.0', 'steps.0.on_fail.0.step'])
})

t.test('unknown blueprint keys, and a blueprint starting itself', async (t) => {
  const e = problems([step('a', { on_complete: [{ do: 'start_workflow', blueprint_key: 'returns' }, { do: 'start_workflow', blueprint_key: 'mine' }, { do: 'start_workflow', blueprint_key: 'other' }] })], ['a'], ['other'])
  t.same(Object.keys(e).sort(), ['steps.0.on_complete.0.blueprint_key', 'steps.0.on_complete.1.blueprint_key'])
})

t.test('depends_on cycles, named at the edge that closes them', async (t) => {
  const e = problems([
    step('a', { on_complete: [{ do: 'create_task', step: 'b' }, { do: 'create_task', step: 'c' }] }),
    step('b', { depends_on: ['c'] }),
    step('c', { depends_on: ['b'] }),
  ], ['a'])
  t.same(Object.keys(e), ['steps.2.depends_on.0'])
  t.match(e['steps.2.depends_on.0']![0], /cycle: b → c → b/)
  t.ok(problems([step('a', { depends_on: ['a'] })], ['a'])['steps.0.depends_on.0'], 'a step depending on itself')
})

t.test('steps that no start step or create_task action reaches', async (t) => {
  const e = problems([step('a', { on_fail: [{ do: 'retry', max_attempts: 2 }] }), step('b', { on_complete: [{ do: 'create_task', step: 'c' }] }), step('c')], ['a'])
  t.same(Object.keys(e).sort(), ['steps.1', 'steps.2'], 'b is unreachable, and c only through b')
})

t.test('retries need a bound, at most 10', async (t) => {
  const e = problems([step('a', { on_fail: [{ do: 'retry' }, { do: 'retry', max_attempts: 11 }, { do: 'retry', max_attempts: 10 }] })], ['a'])
  t.same(Object.keys(e).sort(), ['steps.0.on_fail.0.max_attempts', 'steps.0.on_fail.1.max_attempts'])
})

t.test('only the statuses the routes operations set (in_facility is the carrier\'s), substatuses from the catalog; duplicate keys; start steps depend only on start steps', async (t) => {
  const e = problems([
    step('a', { on_complete: [{ do: 'set_shipment_status', status: 'in_facility' }, { do: 'set_shipment_status', status: 'delivered', substatus: 'nope' }, { do: 'create_task', step: 'b' }] }),
    step('a'),
    step('b'),
    step('s', { depends_on: ['b'] }),
  ], ['a', 'a', 's'])
  t.same(Object.keys(e).sort(), ['start_steps.1', 'steps.0.on_complete.0.status', 'steps.0.on_complete.1.substatus', 'steps.1.key', 'steps.3.depends_on.0'])
})
