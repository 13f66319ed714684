/** One step of a payload: schema version v to v + 1. */
export type UpcastStep = (data: any) => unknown

/** How the event schemas changed since events were first stored. */
export interface SchemaChanges {
  /**
   * Old type name → its current name. An event stored under the old name is read under the new
   * one; its payload and schema version are those it was stored with (a rename alone changes no
   * payload). A name renamed twice may be listed as A → B and B → C.
   */
  renames?: Record<string, string>
  /** Per current type name, `steps[type][v]` turns schema version v into v + 1 (after the rename). */
  steps?: Record<string, Record<number, UpcastStep>>
}

/**
 * How stored events become the current ones on read, without rewriting the log (the event store
 * applies this table: `upcasters` in src/infrastructure/event-store/upcasting.ts):
 * - `renames`: old type name → current name (the store's `type` column keeps the name an event
 *   was written under; everything above the store sees the current one);
 * - `steps`: per current type, the steps from schema version v to v + 1. Empty while every
 *   payload is at v1; an entry here is how a payload change ships.
 */
export const eventRenames: Readonly<Record<string, string>> = {
  // The names of the owner's design card (issue 16): the carrier's label upload and its status reports.
  ShipmentDocumented: 'LabelUploaded',
  CarrierStatusReported: 'StatusReported',
}

export const eventSteps: Readonly<Record<string, Record<number, UpcastStep>>> = {
  // Issue 37: a delay names its lateness as a task's `eta` does. Before, its minutes late were the
  // lateness, and it was late since it was found late.
  TaskDelayed: {
    1: (d: { minutes_late: number; delayed_at: string; late_by_minutes?: number; late_since?: string }) => ({
      ...d, late_by_minutes: d.late_by_minutes ?? d.minutes_late, late_since: d.late_since ?? d.delayed_at,
    }),
  },
}

export const schemaChanges: SchemaChanges = { renames: eventRenames, steps: eventSteps }

/** The schema version an event of this (current) type is written at: one past its last step. */
export function currentSchemaVersion(type: string): number {
  const chain = Object.hasOwn(eventSteps, type) ? eventSteps[type]! : undefined
  return chain ? Math.max(0, ...Object.keys(chain).map(Number)) + 1 : 1
}
