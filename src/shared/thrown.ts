/**
 * What a caught value says. JavaScript can throw anything, so `catch (err)` holds `unknown`; these
 * read it without assuming it is an Error.
 */
export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/** The stack when there is one (it starts with the message), else the message. */
export const stackOf = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err))

/** A system error's code (`ENOENT`, `EEXIST`, `ECONNREFUSED`, …), when the caught value carries one. */
export const errnoOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined
