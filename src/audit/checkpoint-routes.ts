import { Type } from 'typebox'
import { ErrorResponse } from '../../schemas/api/common.js'
import type { RoutesPlugin } from '../http/module.js'
import { NotFoundError } from '../shared/errors.js'
import { logVkey } from './checkpoint-note.js'
import { latestCheckpoint } from './latest-checkpoint.js'
import { auditOriginOf } from './log-origin.js'

const TEXT = 'text/plain; charset=utf-8'

/**
 * The tree heads as C2SP checkpoints (signed notes) for transparency tooling, witnesses and auditors,
 * beside the JSON heads: the latest one, with the witnesses' cosignatures when they gave them, and
 * the log's verifier key that checks them.
 */
export const checkpointRoutes: RoutesPlugin = async (app, { platform }) => {
  const origin = auditOriginOf(platform.config)
  // Read per request: with NOTARY_ROLE=off the key may be absent here (a 503 that says why).
  app.get('/audit/v1/checkpoint', {
    schema: {
      tags: ['audit'],
      summary: 'The latest tree head as a C2SP tlog-checkpoint signed note (origin, size, base64 root; the log\'s Ed25519 note signature, then any witness cosignatures)',
      produces: [TEXT],
      response: { 200: Type.String({ description: 'the checkpoint note' }), 404: ErrorResponse },
    },
  }, async (_req, reply) => {
    const latest = await latestCheckpoint(platform.db, platform.notaryKey, origin)
    if (!latest) throw new NotFoundError('Checkpoint')
    return reply.type(TEXT).send(latest.note)
  })

  app.get('/audit/v1/checkpoint/key', {
    schema: {
      tags: ['audit'],
      summary: 'The log\'s note verifier key (`<origin>+<key hash>+<base64 key>`), as witnesses and `golang.org/x/mod/sumdb/note` read it',
      produces: [TEXT],
      response: { 200: Type.String({ description: 'the verifier key and a newline' }) },
    },
  }, async (_req, reply) => reply.type(TEXT).send(`${logVkey(origin, platform.notaryKey.publicKey)}\n`))
}
