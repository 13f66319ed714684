/**
 * Fields of a value whose shape is not known, read without assuming it: an event's payload (a
 * consumer's subjects carry several event types, other modules' markers too, and a field may be on
 * some of them only, or absent from events written before it was added), a driver's error.
 */
export const fieldOf = (data: unknown, key: string): unknown =>
  typeof data === 'object' && data !== null ? Reflect.get(data, key) : undefined

/** A payload field that is a string, else undefined. */
export const textOf = (data: unknown, key: string): string | undefined => {
  const v = fieldOf(data, key)
  return typeof v === 'string' ? v : undefined
}

/** A nullable integer id of the payload (`route_id`, `workflow_id`): undefined when absent (older events). */
export const idFieldOf = (data: unknown, key: string): number | null | undefined => {
  const v = fieldOf(data, key)
  return typeof v === 'number' || v === null ? v : undefined
}
