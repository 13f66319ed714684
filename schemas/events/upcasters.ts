import { upcasterFrom } from '../../src/infrastructure/event-store/upcasting.js'

/**
 * Per event type, the steps from schema version v to v + 1. Empty while every payload is at v1;
 * an entry here is how a payload change ships without rewriting stored events.
 */
export const upcasters = upcasterFrom({})
