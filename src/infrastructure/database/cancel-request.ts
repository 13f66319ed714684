import { connect } from 'node:net'

/** What PostgreSQL needs to cancel a backend's statement: where it listens, and the backend's key. */
export interface CancelKey {
  host: string
  port: number
  processId: number
  secretKey: number
}

/**
 * The cancel key of a connected node-postgres client. pg keeps it (BackendKeyData) on the client
 * but its typings do not declare it, so it is checked here rather than asserted.
 */
export function cancelKeyOf(client: object): CancelKey | undefined {
  if (!('processID' in client) || typeof client.processID !== 'number') return undefined
  if (!('secretKey' in client) || typeof client.secretKey !== 'number') return undefined
  if (!('host' in client) || typeof client.host !== 'string') return undefined
  if (!('port' in client) || typeof client.port !== 'number') return undefined
  return { host: client.host, port: client.port, processId: client.processID, secretKey: client.secretKey }
}

/** The CancelRequest message's code (1234 5678), as the protocol defines it. */
const CANCEL_REQUEST_CODE = 80877102

/**
 * PostgreSQL's cancel request: a fresh socket carrying the backend's key, which the server reads
 * before any authentication. It takes no connection from a pool that may be full of the very
 * statements to cancel. Best effort: resolves when the server closed the socket, or on any failure
 * (the statement timeout still bounds what is not cancelled).
 */
export function sendCancelRequest(key: CancelKey, timeoutMs = 5000): Promise<void> {
  const packet = Buffer.alloc(16)
  packet.writeInt32BE(16, 0)
  packet.writeInt32BE(CANCEL_REQUEST_CODE, 4)
  packet.writeInt32BE(key.processId, 8)
  packet.writeInt32BE(key.secretKey, 12)
  return new Promise((resolve) => {
    // A host starting with a slash is the directory of the server's Unix socket (as in libpq).
    const socket = key.host.startsWith('/') ? connect(`${key.host}/.s.PGSQL.${key.port}`) : connect(key.port, key.host)
    socket.setTimeout(timeoutMs, () => socket.destroy())
    socket.once('connect', () => socket.end(packet))
    socket.once('error', () => socket.destroy())
    socket.once('close', () => resolve())
  })
}
