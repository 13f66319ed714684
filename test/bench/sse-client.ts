// The benches' server-sent-event client: one stream on a connection of its own (no agent), as a
// browser page holds it.
import http from 'node:http'

export interface Subscriber {
  routeId: number
  close(): void
  /** Every frame after the snapshot that has data (parsed), with when its chunk arrived (performance.now()). */
  onEvent?: (event: string, data: any, at: number) => void
}

/** Opens the stream at `url`; resolves once its `snapshot` frame arrived, rejects on a status other than 200. */
export function subscribe(url: string, routeId: number, headers: Record<string, string> = {}): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const sub: Subscriber = { routeId, close: () => req.destroy() }
    const req = http.get(url, { agent: false, headers: { ...headers, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream ${routeId}: ${res.statusCode}`))
      res.setEncoding('utf8')
      let buffer = ''
      res.on('data', (chunk: string) => {
        const at = performance.now()
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1]
          const data = /^data: (.*)$/m.exec(block)?.[1]
          if (event === 'snapshot') resolve(sub)
          else if (event && data) sub.onEvent?.(event, JSON.parse(data), at)
        }
      })
      res.on('error', () => undefined)
    })
    req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
  })
}

/** A route's progress stream through the API, as the dispatcher's app opens it. */
export const subscribeRouteProgress = (base: string, token: string, routeId: number): Promise<Subscriber> =>
  subscribe(`${base}/api/v1/routes/${routeId}/progress/stream`, routeId, { authorization: `Bearer ${token}` })
