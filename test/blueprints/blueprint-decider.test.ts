import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation } from '../../src/blueprints/create-blueprint.js'
import { decider as replacement } from '../../src/blueprints/replace-blueprint.js'
import { decider as publication } from '../../src/blueprints/publish-blueprint.js'
import { DEFAULT_BLUEPRINTS } from '../../src/blueprints/default-blueprints.js'
import { decider as defaults } from '../../src/blueprints/create-default-blueprint.js'
import type { BlueprintEvent } from '../../src/blueprints/blueprint.js'
import type { Step } from '../../schemas/api/blueprints.js'
import { IllegalStateError, NotFoundError, ValidationError } from '../../src/shared/errors.js'

const now = new Date('2026-11-25T09:00:00Z')
const at = now.toISOString()
const steps: Step[] = [{ key: 'visit', name: 'Visit', task: { type: 'inspection', address: 'destination' } }]
const created: BlueprintEvent = { type: 'BlueprintCreated', data: { id: 1, organization_id: 'org_1', key: 'audit', name: 'Audit', default: false, version: 1, steps, start_steps: ['visit'], created_at: at } }
const published = (version: number): BlueprintEvent => ({ type: 'BlueprintPublished', data: { version, published_at: at } })
const drafted = (version: number, name = 'Audit 2'): BlueprintEvent => ({ type: 'BlueprintDrafted', data: { version, name, steps, start_steps: ['visit'], drafted_at: at } })
const publish = (other_keys: string[] = []) => ({ type: 'PublishBlueprint' as const, data: { organization_id: 'org_1', other_keys: new Set(other_keys), now } })
const replace = (name = 'Audit 2') => ({ type: 'ReplaceBlueprint' as const, data: { organization_id: 'org_1', name, steps, start_steps: ['visit'], now } })

t.test('create: version 1, a draft; the key taken → blueprint_exists', async (t) => {
  const spec = DeciderSpecification.for(creation)
  spec.given([]).when({ type: 'CreateBlueprint', data: { id: 1, organization_id: 'org_1', key: 'audit', name: ' Audit ', steps, start_steps: ['visit'], now } }).then(t, [created])
  spec.given([created]).when({ type: 'CreateBlueprint', data: { id: 1, organization_id: 'org_1', key: 'audit', name: 'x', steps, start_steps: ['visit'], now } })
    .thenThrows(t, IllegalStateError, { code: 'blueprint_exists' })
})

t.test('replace: the draft in place; after publication, the next version', async (t) => {
  const spec = DeciderSpecification.for(replacement)
  spec.given([created]).when(replace()).then(t, [drafted(1)])
  spec.given([created, published(1)]).when(replace()).then(t, [drafted(2)])
  spec.given([created, published(1), drafted(2), published(2)]).when(replace('Audit 3')).then(t, [drafted(3, 'Audit 3')])
  spec.given([created]).when({ ...replace(), data: { ...replace().data, organization_id: 'org_2' } }).thenThrows(t, NotFoundError)
})

t.test('publish: the latest draft, checked; a published version is not published again', async (t) => {
  const spec = DeciderSpecification.for(publication)
  spec.given([created]).when(publish()).then(t, [published(1)])
  spec.given([created, published(1), drafted(2)]).when(publish()).then(t, [published(2)])
  spec.given([created, published(1)]).when(publish()).thenThrows(t, IllegalStateError, { code: 'blueprint_published' })
  const broken: BlueprintEvent = { type: 'BlueprintDrafted', data: { version: 1, name: 'x', steps, start_steps: ['nope'], drafted_at: at } }
  spec.given([created, broken]).when(publish()).thenThrows(t, ValidationError)
})

t.test('defaults: created and published at once; made again, nothing happens', async (t) => {
  const spec = DeciderSpecification.for(defaults)
  const d = DEFAULT_BLUEPRINTS[0]!
  const cmd = { type: 'CreateDefaultBlueprint' as const, data: { ...d, id: 7, organization_id: 'org_1', now } }
  const events = spec.given([]).when(cmd).then(t, [
    { type: 'BlueprintCreated', data: { id: 7, organization_id: 'org_1', key: d.key, name: d.name, default: true, version: 1, steps: d.steps, start_steps: d.start_steps, created_at: at } },
    published(1),
  ])
  spec.given(events).when(cmd).thenNothingHappened(t)
})
