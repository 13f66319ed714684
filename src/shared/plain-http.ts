import type http from 'node:http'

/**
 * For the small `node:http` servers beside the API (the witness, the webhook sink): a request's
 * body as text, or null when it passed `maxBytes`, which is answered 413 and the request dropped.
 */
export function readBodyText(req: http.IncomingMessage, res: http.ServerResponse, maxBytes: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) { res.writeHead(413).end(); req.destroy(); resolve(null); return }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(res.writableEnded ? null : Buffer.concat(chunks).toString('utf8')))
  })
}

/** Listens on `host:port` (port 0: any free one) and returns the port it got. */
export async function listenOn(server: http.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address()
  // A server listening on a host and port has an AddressInfo; only one on a pipe has a string.
  if (typeof address !== 'object' || address === null) throw new Error(`not listening on a port: ${address}`)
  return address.port
}
