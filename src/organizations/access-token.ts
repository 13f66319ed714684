import { randomBytes } from 'node:crypto'
import { publicId } from '../shared/ids.js'
import { hashToken } from '../shared/tokens.js'

/** A new access token (shown once), its public id and the hash kept in its TokenIssued. */
export const newAccessToken = () => {
  const token = `sk_${randomBytes(32).toString('base64url')}`
  return { token, tokenId: publicId('tok'), tokenHash: hashToken(token) }
}
