import { ErrorResponse, ValidationErrorResponse } from '../../schemas/api/common.js'
import { ConsistencyProof, ConsistencyQuery, NotaryPublicKey, SignedTreeHead, TreeSizeParams } from '../../schemas/api/audit.js'
import type { RoutesPlugin } from '../http/module.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { headJson } from './history.js'
import { checkpointRoutes } from './checkpoint-routes.js'
import { consistencyProof } from './proofs.js'
import { publicKeyPem, publicKeyRaw } from './tree-head.js'
import { headOfSize, latestHead } from './tree-store.js'

const errors = { 404: ErrorResponse, 422: ValidationErrorResponse }

/**
 * `/audit/v1`: what anyone needs to check the log's proofs, without credentials, as a Certificate
 * Transparency log serves its heads: the public key, signed tree heads, consistency proofs. The
 * histories with their inclusion proofs stay behind each module's own access rules.
 */
export const auditRoutes: RoutesPlugin = async (app, { platform }) => {
  await checkpointRoutes(app, { platform })

  app.get('/audit/v1/public-key', {
    schema: { tags: ['audit'], summary: 'The notary\'s Ed25519 public key, which checks every signed tree head', response: { 200: NotaryPublicKey } },
  }, async () => {
    const key = platform.notaryKey
    return { algorithm: 'Ed25519' as const, key_id: key.keyId, public_key: publicKeyRaw(key.publicKey).toString('base64'), pem: publicKeyPem(key.publicKey) }
  })

  app.get('/audit/v1/tree-heads/latest', {
    schema: { tags: ['audit'], summary: 'The latest signed tree head', response: { 200: SignedTreeHead, ...errors } },
  }, async () => {
    const head = await latestHead(platform.db)
    if (!head) throw new NotFoundError('Tree head')
    return headJson(head)
  })

  app.get('/audit/v1/tree-heads/:size', {
    schema: { tags: ['audit'], summary: 'The tree head signed at this size (404 when none was signed at exactly this size)', params: TreeSizeParams, response: { 200: SignedTreeHead, ...errors } },
  }, async (req) => {
    const size = Number(req.params.size)
    const latest = await latestHead(platform.db)
    if (size > (latest?.treeSize ?? 0)) throw ValidationError.field('size', `The size may not be greater than the latest signed tree size (${latest?.treeSize ?? 0}).`)
    const head = await headOfSize(platform.db, size)
    if (!head) throw new NotFoundError('Tree head')
    return headJson(head)
  })

  app.get('/audit/v1/consistency', {
    schema: {
      tags: ['audit'], summary: 'Proof that the tree of `from` leaves is a prefix of the tree of `to` leaves (RFC 9162 §2.1.4)',
      querystring: ConsistencyQuery, response: { 200: ConsistencyProof, ...errors },
    },
  }, async (req) => {
    const from = Number(req.query.from)
    const to = Number(req.query.to)
    const latest = await latestHead(platform.db)
    const limit = latest?.treeSize ?? 0
    const problems: Record<string, string[]> = {}
    if (from > to) problems.from = ['The from may not be greater than to.']
    if (to > limit) problems.to = [`The to may not be greater than the latest signed tree size (${limit}).`]
    if (Object.keys(problems).length > 0) throw new ValidationError(problems)
    const [path, fromHead, toHead] = await Promise.all([consistencyProof(platform.db, from, to), headOfSize(platform.db, from), headOfSize(platform.db, to)])
    return {
      from, to, consistency_path: path.map((h) => h.toString('base64')),
      from_head: fromHead ? headJson(fromHead) : null, to_head: toHead ? headJson(toHead) : null,
    }
  })
}
