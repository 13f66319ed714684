import type { Action, Step } from '../../schemas/api/blueprints.js'
import { SUBSTATUSES_OF } from '../shipments/status-catalog.js'
import { ROUTES_SETTABLE_STATUSES } from '../shipments/routes-status.js'
import { ErrorBag } from '../shared/errors.js'
import type { BlueprintContent } from './blueprint.js'

/** A retry's bound may not exceed this many attempts of one step in all. */
export const MAX_ATTEMPTS = 10

/**
 * What publishing checks (DESIGN §3.9), every problem at once, each at its path
 * (`steps.2.on_fail.0.step`): duplicate or unknown step keys, unknown blueprint keys, `depends_on`
 * cycles, steps nothing can reach, unbounded retries, unknown shipment statuses. Pure: the
 * organization's other blueprint keys come in as `otherKeys`.
 */
export function validateBlueprint(key: string, content: BlueprintContent, otherKeys: ReadonlySet<string>): ErrorBag {
  const errors = new ErrorBag()
  const { steps, start_steps } = content
  const index = new Map<string, number>()
  steps.forEach((s, i) => {
    if (index.has(s.key)) errors.add(`steps.${i}.key`, `The step key "${s.key}" is already used by steps.${index.get(s.key)}.`)
    else index.set(s.key, i)
  })
  const starts = new Set<string>()
  start_steps.forEach((k, i) => {
    if (!index.has(k)) errors.add(`start_steps.${i}`, `No step has the key "${k}".`)
    else if (starts.has(k)) errors.add(`start_steps.${i}`, `"${k}" is listed twice.`)
    starts.add(k)
  })

  steps.forEach((s, i) => {
    s.depends_on?.forEach((d, j) => {
      if (!index.has(d)) errors.add(`steps.${i}.depends_on.${j}`, `No step has the key "${d}".`)
      else if (d === s.key) errors.add(`steps.${i}.depends_on.${j}`, 'A step cannot depend on itself.')
      else if (starts.has(s.key) && !starts.has(d)) errors.add(`steps.${i}.depends_on.${j}`, `A start step can depend only on other start steps ("${d}" is not one): its task is made when the workflow starts.`)
    })
    for (const list of ['on_complete', 'on_fail'] as const) s[list]?.forEach((a, j) => checkAction(a, `steps.${i}.${list}.${j}`, key, index, otherKeys, errors))
  })

  for (const [path, message] of dependencyCycles(steps, index)) errors.add(path, message)

  const reached = reachable(steps, index, start_steps)
  steps.forEach((s, i) => {
    if (index.get(s.key) === i && !reached.has(s.key)) errors.add(`steps.${i}`, `No start step or create_task action reaches the step "${s.key}".`)
  })
  return errors
}

function checkAction(a: Action, path: string, ownKey: string, index: Map<string, number>, otherKeys: ReadonlySet<string>, errors: ErrorBag): void {
  switch (a.do) {
    case 'create_task':
      if (!index.has(a.step)) errors.add(`${path}.step`, `No step has the key "${a.step}".`)
      break
    case 'start_workflow':
      if (a.blueprint_key === ownKey) errors.add(`${path}.blueprint_key`, 'A blueprint cannot start itself: the chain would never end.')
      else if (!otherKeys.has(a.blueprint_key)) errors.add(`${path}.blueprint_key`, `The organization has no blueprint with the key "${a.blueprint_key}".`)
      break
    case 'retry':
      if (a.max_attempts === undefined) errors.add(`${path}.max_attempts`, `A retry needs a bound: max_attempts, from 1 to ${MAX_ATTEMPTS}.`)
      else if (a.max_attempts > MAX_ATTEMPTS) errors.add(`${path}.max_attempts`, `At most ${MAX_ATTEMPTS} attempts.`)
      break
    case 'set_shipment_status':
      if (!Object.hasOwn(ROUTES_SETTABLE_STATUSES, a.status)) {
        errors.add(`${path}.status`, `"${a.status}" is not a status the routes operations set; one of: ${Object.keys(ROUTES_SETTABLE_STATUSES).join(', ')}.`)
      }
      else if (a.substatus !== undefined && !(SUBSTATUSES_OF[a.status] ?? []).includes(a.substatus)) {
        errors.add(`${path}.substatus`, `"${a.substatus}" is not a substatus of ${a.status}.`)
      }
      break
    default:
      break
  }
}

/** Each `depends_on` edge that closes a cycle, at its path. */
function dependencyCycles(steps: Step[], index: Map<string, number>): Array<[string, string]> {
  const found: Array<[string, string]> = []
  const state = new Map<string, 'open' | 'done'>()
  const visit = (k: string, trail: string[]): void => {
    state.set(k, 'open')
    const i = index.get(k)!
    steps[i]!.depends_on?.forEach((d, j) => {
      if (!index.has(d) || d === k) return
      if (state.get(d) === 'open') {
        const cycle = [...trail.slice(trail.indexOf(d)), k, d]
        found.push([`steps.${i}.depends_on.${j}`, `This dependency closes a cycle: ${cycle.join(' → ')}.`])
      } else if (!state.has(d)) visit(d, [...trail, k])
    })
    state.set(k, 'done')
  }
  for (const k of index.keys()) if (!state.has(k)) visit(k, [])
  return found
}

/** Steps a workflow can ever make a task for: the start steps, then whatever their actions create. */
function reachable(steps: Step[], index: Map<string, number>, startSteps: string[]): Set<string> {
  const seen = new Set(startSteps.filter((k) => index.has(k)))
  const queue = [...seen]
  while (queue.length > 0) {
    const s = steps[index.get(queue.shift()!)!]!
    for (const a of [...(s.on_complete ?? []), ...(s.on_fail ?? [])]) {
      if (a.do === 'create_task' && index.has(a.step) && !seen.has(a.step)) { seen.add(a.step); queue.push(a.step) }
    }
  }
  return seen
}
