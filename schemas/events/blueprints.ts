import { Type, type Static } from 'typebox'
import { Step } from '../api/blueprints.js'

// Event payloads of the blueprint stream `blueprint-<bpr_id>`, version 1 (DESIGN §1: upcast on read, never rewritten).

/** Stream `blueprint-key-<org>-<key>`: the key is this blueprint's (DESIGN §3.9: keys name blueprints). */
export const BlueprintKeyReserved = Type.Object({ organization_id: Type.String(), key: Type.String(), blueprint_id: Type.Integer() })
export type BlueprintKeyReserved = Static<typeof BlueprintKeyReserved>

export const BlueprintCreated = Type.Object({
  id: Type.Integer(),
  organization_id: Type.String(),
  key: Type.String(),
  name: Type.String(),
  /** One of the two blueprints every organization starts with. */
  default: Type.Boolean(),
  version: Type.Integer(),
  steps: Type.Array(Step),
  start_steps: Type.Array(Type.String()),
  created_at: Type.String(),
})
export type BlueprintCreated = Static<typeof BlueprintCreated>

/** The draft of `version` is now this content: the same version while a draft, the next one after a publication. */
export const BlueprintDrafted = Type.Object({
  version: Type.Integer(),
  name: Type.String(),
  steps: Type.Array(Step),
  start_steps: Type.Array(Type.String()),
  drafted_at: Type.String(),
})
export type BlueprintDrafted = Static<typeof BlueprintDrafted>

/** `version` is frozen: workflows started from now on use it. */
export const BlueprintPublished = Type.Object({ version: Type.Integer(), published_at: Type.String() })
export type BlueprintPublished = Static<typeof BlueprintPublished>

/** The events of a `blueprint-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const BlueprintEvents = { BlueprintCreated, BlueprintDrafted, BlueprintPublished } as const

/** The event of a `blueprint-key-<organization>-<key>` stream: an organization's claim on one key. */
export const BlueprintKeyEvents = { BlueprintKeyReserved } as const
