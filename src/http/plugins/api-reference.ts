import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import type { FastifyApiReferenceOptions } from '@scalar/fastify-api-reference'

type ReferenceConfiguration = NonNullable<FastifyApiReferenceOptions['configuration']>

/**
 * The reference page for a self-hosted team: nothing of the vendor's service (its AI agent, MCP
 * installer, developer toolbar with Share/Deploy, hosted API client, telemetry, proxy) and no
 * request to any other host — the script is the plugin's own copy (`js/scalar.js`) and the fonts
 * are the browser's.
 */
export function referenceConfiguration(title: string, documentUrl: string): ReferenceConfiguration {
  return {
    url: documentUrl,
    pageTitle: title,
    title,
    withDefaultFonts: false,
    showDeveloperTools: 'never',
    hideClientButton: true,
    agent: { disabled: true },
    mcp: { disabled: true },
    telemetry: false,
    // Requests from "Test Request" go straight to this API, never through the vendor's proxy.
    proxyUrl: '',
    // The sidebar's "Powered by Scalar" link has no option of its own.
    customCss: '.scalar-app a[href^="https://www.scalar.com"] { display: none; }',
  }
}

/**
 * The reference page's module inlines a 4 MB browser bundle, about 55 MB resident once imported:
 * it is loaded on the first visit to /docs, in a Fastify instance of its own, not at every start.
 * `prepare` registers on that instance what its routes need of the outer app's plugins
 * (compression): a hijacked reply skips the outer hooks.
 */
export function lazyReferencePage(
  routePrefix: `/${string}`,
  configuration: ReferenceConfiguration,
  prepare: (inner: FastifyInstance) => Promise<void> = async () => undefined,
) {
  let page: Promise<FastifyInstance> | undefined
  const load = async () => {
    const { default: apiReference } = await import('@scalar/fastify-api-reference')
    const inner = Fastify({ logger: false })
    await prepare(inner)
    await inner.register(apiReference, { routePrefix, configuration })
    await inner.ready()
    return inner
  }
  return {
    async serve(req: FastifyRequest, reply: FastifyReply) {
      const inner = await (page ??= load().catch((err) => { page = undefined; throw err }))
      reply.hijack()
      inner.routing(req.raw, reply.raw)
    },
    async close() { if (page) await (await page.catch(() => undefined))?.close() },
  }
}
