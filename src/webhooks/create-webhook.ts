import { CreatedWebhook, CreateWebhookBody } from '../../schemas/api/webhooks.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { encryptSecret } from '../shared/secret-box.js'
import { handleCommand } from '../shared/command-handler.js'
import { generateSecret } from '../notifications/signing.js'
import { validateCallbackUrl } from '../notifications/url-safety.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { webhookDeciderOf, webhookStream, type WebhookEvent, type WebhookState } from './webhook.js'
import { patternProblem } from './event-patterns.js'
import { secretContext } from './endpoint.js'
import { findWebhook, toWebhook } from './queries.js'

export interface CreateWebhook {
  type: 'CreateWebhook'
  data: { id: string; organization_id: string; url: string; events: string[]; secret_encrypted: string; now: Date }
}

/** Patterns are kept once each, in the order given. */
export function decide(command: CreateWebhook, state: WebhookState): WebhookEvent[] {
  if (state.exists) throw new IllegalStateError('The webhook already exists.', 'webhook_exists')
  const d = command.data
  return [{
    type: 'WebhookCreated',
    data: { id: d.id, organization_id: d.organization_id, url: d.url, events: [...new Set(d.events)], secret_encrypted: d.secret_encrypted, created_at: d.now.toISOString() },
  }]
}

export const decider = webhookDeciderOf(decide)

/** The URL by the carrier URLs' SSRF rules (ALLOW_PRIVATE_URLS opens loopback), and each pattern: one 422 for all. */
export async function checkWebhookFields(platform: Platform, body: CreateWebhookBody, errors: ErrorBag): Promise<void> {
  const verdict = await validateCallbackUrl(body.url, { allowPrivate: platform.config.allowPrivateUrls })
  if (!verdict.ok) errors.add('url', `The url ${verdict.reason}.`)
  if (body.events.length === 0) errors.add('events', 'The events must name at least one event type or pattern.')
  body.events.forEach((pattern, i) => {
    const problem = patternProblem(pattern)
    if (problem) errors.add(`events.${i}`, problem)
  })
}

export const createWebhookRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/webhooks', {
    schema: {
      tags: ['webhooks'], summary: 'Subscribe a URL to the organization\'s events; the signing secret is shown once',
      body: CreateWebhookBody, response: { 201: CreatedWebhook, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const errors = new ErrorBag()
    await checkWebhookFields(platform, req.body, errors)
    errors.throwIfAny()
    const id = publicId('whk')
    const secret = generateSecret()
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, webhookStream(id), decider, {
      type: 'CreateWebhook',
      data: { id, organization_id: org.id, url: req.body.url, events: req.body.events, secret_encrypted: encryptSecret(platform.secretsKey, secret, secretContext(id)), now: ctx.now },
    }, ctx)
    const row = await findWebhook(platform.rm, org.id, id)
    return reply.code(201).send({ success: true, webhook: toWebhook(row!), secret })
  })
}
