/** A stream's category: its name up to the first '-' (`shipment-42` → `shipment`), the whole name without one. */
export const streamCategory = (streamId: string): string => streamId.slice(0, Math.max(0, streamId.indexOf('-'))) || streamId
