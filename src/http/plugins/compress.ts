import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastifyCompress from '@fastify/compress'

/**
 * Responses compressed as the client asks (brotli at quality 4, gzip, deflate) from 1 KiB up: the
 * OpenAPI document (~0.5 MB) and the /docs script (~4.3 MB) most of all. Event streams are left
 * alone (the library skips `text/event-stream`, and they are written to the socket directly), and
 * request bodies are not decompressed: a client sends JSON as it is.
 */
export default fp(async function compress(app: FastifyInstance) {
  await app.register(fastifyCompress, {
    encodings: ['br', 'gzip', 'deflate'],
    threshold: 1024,
    globalDecompression: false,
  })
}, { name: 'compress' })
