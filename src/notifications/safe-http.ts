import http from 'node:http'
import https from 'node:https'
import type { LookupAddress } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { parseCallbackUrl, resolveAndCheck, type HostLookup } from './url-safety.js'
import { errnoOf } from '../shared/thrown.js'

export interface PostOptions {
  /** Hard limit for the whole call: DNS, connect, TLS, request and reading the response. */
  timeoutMs: number
  allowPrivate: boolean
  signal?: AbortSignal
  /** Tests replace DNS with this; production uses the system resolver. */
  lookup?: HostLookup
  /** Bytes of response body kept; the rest is dropped and the connection closed. */
  maxBodyBytes?: number
}

export interface PostResult {
  /** HTTP status, or 0 when no response arrived (refused URL, network error, timeout, abort). */
  status: number
  /** From the start of the call until the (possibly capped) body was read or the call failed. */
  latencyMs: number
  body: string
  error?: string
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024
const USER_AGENT = 'shipping-platform-webhooks/1'

// Shared keep-alive pools: high-rate dispatch to one receiver reuses sockets instead of paying a
// handshake per webhook. LIFO keeps the warmest sockets busy and lets idle ones age out.
const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, scheduling: 'lifo' as const }
const httpAgent = new http.Agent(agentOptions)
const httpsAgent = new https.Agent(agentOptions)

/** Closes pooled sockets (tests, shutdown). */
export function closeIdleConnections(): void {
  httpAgent.destroy()
  httpsAgent.destroy()
}

class CallFailure extends Error {}

/**
 * POSTs `body` to a callback URL without trusting DNS between validation and connection: the
 * host is resolved and every address checked at send time, and the socket may only connect to
 * those checked addresses (pinned through the request's `lookup`), so a record that flips to
 * 127.0.0.1 after the URL was saved cannot redirect the call. Host header, SNI and certificate
 * check keep the original host name. Redirects are not followed. Never throws: every failure
 * comes back as status 0 with `error`, so the caller can log each attempt.
 */
export async function postJson(
  rawUrl: string | URL,
  body: string,
  headers: Record<string, string>,
  opts: PostOptions,
): Promise<PostResult> {
  const started = performance.now()
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100
  const fail = (error: string): PostResult => ({ status: 0, latencyMs: elapsed(), body: '', error })

  // One controller per call, timer cleared at the end: nothing lingers on a long-lived caller
  // signal at thousands of calls per second.
  const controller = new AbortController()
  const signal = controller.signal
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort()
  }, opts.timeoutMs)
  const onCallerAbort = () => controller.abort()
  if (opts.signal?.aborted) controller.abort()
  else opts.signal?.addEventListener('abort', onCallerAbort, { once: true })
  const abortReason = () => (timedOut ? `timeout after ${opts.timeoutMs} ms` : 'aborted')

  try {
    const parsed = parseCallbackUrl(typeof rawUrl === 'string' ? rawUrl : rawUrl.href)
    if (!parsed.ok) return fail(`refused: ${parsed.reason}`)
    const checked = await raceSignal(resolveAndCheck(parsed.url, opts), signal, abortReason)
    if (!checked.ok) return fail(`refused: ${checked.reason}`)

    const send = () => sendOnce(checked.url, checked.addresses, body, headers, signal, opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES)
    let outcome = await send()
    // A pooled socket the receiver closed while idle fails before any byte of response:
    // one immediate retry on a fresh socket, still inside the same deadline.
    if ('stale' in outcome) outcome = await send()
    if ('stale' in outcome || 'error' in outcome) {
      const error = signal.aborted ? abortReason() : outcome.error
      return fail(error)
    }
    return { status: outcome.status, latencyMs: elapsed(), body: outcome.body }
  } catch (err) {
    if (signal.aborted) return fail(abortReason())
    return fail(err instanceof CallFailure ? err.message : describe(err))
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', onCallerAbort)
  }
}

type SendOutcome = { status: number; body: string } | { error: string } | { stale: true; error: string }

function sendOnce(
  url: URL,
  addresses: string[],
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  maxBodyBytes: number,
): Promise<SendOutcome> {
  return new Promise((resolve) => {
    let settled = false
    const settle = (outcome: SendOutcome) => {
      if (settled) return
      settled = true
      resolve(outcome)
    }
    const isHttps = url.protocol === 'https:'
    const payload = Buffer.from(body, 'utf8')
    const req = (isHttps ? https : http).request(url, {
      method: 'POST',
      agent: isHttps ? httpsAgent : httpAgent,
      lookup: pinnedLookup(addresses),
      signal,
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...headers,
        'content-length': String(payload.length),
      },
    })
    let responded = false
    req.on('error', (err) => {
      const code = errnoOf(err)
      if (!responded && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
        settle({ stale: true, error: describe(err) })
      } else {
        settle({ error: describe(err) })
      }
    })
    req.on('response', (res) => {
      responded = true
      const chunks: Buffer[] = []
      let kept = 0
      const finish = () => settle({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') })
      res.on('data', (chunk: Buffer) => {
        if (kept >= maxBodyBytes) return
        const room = maxBodyBytes - kept
        chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room))
        kept += Math.min(room, chunk.length)
        if (kept >= maxBodyBytes) {
          // Enough to log; a receiver streaming megabytes must not hold the worker.
          finish()
          res.destroy()
        }
      })
      res.on('end', finish)
      res.on('error', (err) => settle({ error: describe(err) }))
      res.on('close', () => {
        if (!res.complete) settle({ error: 'connection closed before the response ended' })
      })
    })
    req.end(payload)
  })
}

/** A `lookup` that answers only with the addresses validated a moment ago. */
function pinnedLookup(addresses: string[]): LookupFunction {
  const entries: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
  return (_host, options, callback) => {
    // net asks with { all: true } when it races address families (autoSelectFamily).
    if (options?.all) callback(null, entries)
    else callback(null, entries[0]!.address, entries[0]!.family)
  }
}

function raceSignal<T>(work: Promise<T>, signal: AbortSignal, reason: () => string): Promise<T> {
  if (signal.aborted) return Promise.reject(new CallFailure(reason()))
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new CallFailure(reason()))
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = errnoOf(err)
    return code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message
  }
  return String(err)
}
