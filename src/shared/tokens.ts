import { createHash } from 'node:crypto'

/**
 * Bearer tokens and API keys are stored only as this hash: what the auth plugin looks up, and what
 * the commands that issue one record. High-entropy random tokens need no salt or slow hash.
 */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex')
