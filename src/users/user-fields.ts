import type { ErrorBag } from '../shared/errors.js'
import { normalizePhone } from '../shared/phone.js'
import type { Platform } from '../platform.js'
import { emailTaken } from './queries.js'

// A user request's field checks, shared by create and update.

/** Checks that need a look-up or a library: reported together, as one 422. */
export async function checkUserFields(
  platform: Platform, orgId: string, body: { email?: string | undefined; phone?: string | null | undefined }, errors: ErrorBag, exceptUserId?: string,
): Promise<string | null | undefined> {
  let phone: string | null | undefined
  if (typeof body.phone === 'string') {
    const p = normalizePhone(body.phone)
    if (p.ok) phone = p.e164
    else errors.add('phone', 'The phone must be a valid phone number in E.164 form (+5491143215678).')
  } else if (body.phone === null) phone = null
  if (body.email !== undefined && await emailTaken(platform.rm, orgId, body.email, exceptUserId)) {
    errors.add('email', 'The email has already been taken by another active user.')
  }
  return phone
}
