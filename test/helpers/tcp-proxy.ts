import net from 'node:net'

/** One proxied connection: the client's socket and the server's; `cut` closes both. */
export interface ProxiedConnection {
  client: net.Socket
  upstream: net.Socket
  cut(): void
}

/**
 * A TCP proxy on 127.0.0.1 in front of `target` (a PostgreSQL URL), for tests that act on the
 * database's real sockets: each connection's data passes through `fromClient` and `fromServer`,
 * which forward it (`send`) or not. `url` is `target` through the proxy.
 */
export async function tcpProxy(target: URL, handlers: {
  fromClient?: (chunk: Buffer, send: (c: Buffer) => void, conn: ProxiedConnection) => void
  fromServer?: (chunk: Buffer, send: (c: Buffer) => void, conn: ProxiedConnection) => void
}) {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    sockets.add(client).add(upstream)
    const conn: ProxiedConnection = { client, upstream, cut: () => { client.destroy(); upstream.destroy() } }
    const toServer = (c: Buffer) => upstream.write(c)
    const toClient = (c: Buffer) => client.write(c)
    client.on('data', (chunk) => (handlers.fromClient ? handlers.fromClient(chunk, toServer, conn) : toServer(chunk)))
    upstream.on('data', (chunk) => (handlers.fromServer ? handlers.fromServer(chunk, toClient, conn) : toClient(chunk)))
    client.on('error', conn.cut).on('close', conn.cut)
    upstream.on('error', conn.cut).on('close', conn.cut)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String((server.address() as net.AddressInfo).port)
  return {
    url: url.toString(),
    close: () => new Promise<void>((r) => { for (const s of sockets) s.destroy(); server.close(() => r()) }),
  }
}
