/**
 * Secrets kept out of the logs. Tokens belong in the Authorization header, but a client that puts
 * one in the query string (`?access_token=…`) would otherwise have it written verbatim wherever
 * the URL is: the line per request, the debug arrival line, error messages that quote the URL.
 */

/**
 * Query parameter names whose values are logged as `[REDACTED]`: compared case-insensitively,
 * percent-decoded, with '-' read as '_' and a trailing `[]` ignored. Names ending in `_token`,
 * `_secret`, `_password` or `_key` count too (refresh_token, webhook_secret, x_api_key…). None of
 * the API's own query parameters (cursor, page, status, as_of…) is among them.
 */
export const SECRET_QUERY_PARAMS: ReadonlySet<string> = new Set([
  'access_token', 'token', 'id_token', 'refresh_token', 'auth', 'authorization', 'bearer', 'jwt',
  'api_key', 'apikey', 'key', 'secret', 'client_secret', 'hmac_secret', 'password', 'passwd', 'pwd',
  'signature', 'sig', 'session', 'sessionid', 'session_id', 'credentials',
])
const SECRET_SUFFIX = /_(?:token|secret|password|key)$/

export const REDACTED = '[REDACTED]'

export function isSecretParam(name: string): boolean {
  let n = name
  if (n.includes('%') || n.includes('+')) {
    try { n = decodeURIComponent(n.replace(/\+/g, ' ')) } catch { /* malformed: compare as given */ }
  }
  n = n.toLowerCase().replace(/-/g, '_').replace(/\[[^\]]*\]$/, '')
  return SECRET_QUERY_PARAMS.has(n) || SECRET_SUFFIX.test(n)
}

// `?name=value` or `&name=value`, in a bare URL or inside a JSON log line: the value stops at
// '&', '#', whitespace or an unescaped '"', and steps over JSON escapes (`\"`, `\\`).
const PARAM = /([?&])([^=&#?\s"\\]+)=((?:[^&#\s"\\]|\\.)*)/g

/**
 * `text` with the value of every secret query parameter replaced by `[REDACTED]`. Text without a
 * '?' is returned as it is, after one scan: the common case, on every log line. A value that is
 * itself a URL (`?next=/x?token=…`) is searched too.
 */
export function redactQuerySecrets(text: string): string {
  if (text.indexOf('?') === -1) return text
  return text.replace(PARAM, redactParam)
}

function redactParam(match: string, sep: string, name: string, value: string): string {
  if (isSecretParam(name)) return `${sep}${name}=${REDACTED}`
  return value.indexOf('?') === -1 ? match : `${sep}${name}=${value.replace(PARAM, redactParam)}`
}

/**
 * One character of a path in any spelling the router (find-my-way decodes percent-escapes before
 * matching) or a sloppy client may use: itself in either case, or percent-encoded, also twice
 * (`t`, `T`, `%74`, `%54`, `%2574`). Used with the `i` flag, which covers the hex digits' case.
 */
const anySpelling = (c: string): string => {
  const codes = [...new Set([c.toLowerCase(), c.toUpperCase()])].map((x) => x.charCodeAt(0).toString(16))
  return `(?:${c === '.' ? '\\.' : c}|%(?:25)*(?:${codes.join('|')}))`
}
const word = (w: string) => [...w].map(anySpelling).join('')
const SEP = anySpelling('/')
/** Separators between two segments, with empty (`//`) and dot segments (`/./`, `/%2e%2e/`) among them. */
const SEPS = `(?:${SEP}(?:${anySpelling('.')}{1,2}(?=${SEP}))?)+`

/**
 * `/track/` or `/live/routes/` however spelled, as a regular expression's source for the `i` flag
 * (the same in JavaScript and PCRE: infra/proxy/nginx.conf's access log uses it as it is, and
 * test/http/proxy-logs.test.ts keeps the two equal).
 */
export const LINK_PAGE_PATTERN = `${SEP}(?:${word('track')}|${word('live')}${SEPS}${word('routes')})${SEPS}`

/**
 * Paths after which everything is a credential: the public tracking link's token (`/track/<token>`,
 * `/data`, `/stream`) and the live link's (`/live/routes/<token>`…). Matched by what the router
 * would decode them to, not by their literal spelling: `/%74rack/<token>`, `/track//<token>`,
 * `/TRACK/./<token>` all count (issue 31), whether the router answered them or not. The rest of the
 * path (up to '?', '#', whitespace or an unescaped '"') is redacted whole, so that a dot segment
 * (`/track/%2e%2e/track/<token>`) cannot push the token past what is redacted; a trailing `/data`
 * or `/stream` is kept to say which page it was.
 */
const SECRET_PATH = new RegExp(`(${LINK_PAGE_PATTERN})((?:[^?#\\s"\\\\]|\\\\.)+)`, 'gi')
const PAGE_SUFFIX = /\/(?:data|stream)\/?$/
/** A line without '%' names a page only with one of these words (in some case). */
const MAY_NAME_A_PAGE = /track|live/i

function redactPath(_match: string, head: string, rest: string): string {
  const page = PAGE_SUFFIX.exec(rest)
  return `${head}${REDACTED}${page && page.index > 0 ? page[0] : ''}`
}

/** `text` with everything after the prefix of a tracking or live link replaced by `[REDACTED]` (one scan when it has none). */
export function redactPathSecrets(text: string): string {
  // Most lines name neither page in any spelling: skipped after one cheap test.
  if (text.indexOf('%') === -1 && !MAY_NAME_A_PAGE.test(text)) return text
  return text.replace(SECRET_PATH, redactPath)
}

/** Both redactions: query-string secrets and link tokens in paths. */
export const redactSecrets = (text: string): string => redactPathSecrets(redactQuerySecrets(text))

/** Header values never logged, should a line ever carry the request's headers. */
const SECRET_HEADER_PATHS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key']
  .flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`])

/**
 * pino options with the redaction added: every line is passed through redactSecrets just
 * before it is written (so error messages and Fastify's own warnings are covered, not only the
 * fields we know hold a URL), and header secrets are censored by path. Fastify's req serializer
 * logs no headers; the paths guard a line that logs them (they cost only on lines with a `req`
 * or `headers` key).
 */
export function withLogRedaction<T extends boolean | object>(logger: T): T | object {
  if (logger === false) return logger
  const given = (logger === true ? {} : logger) as { hooks?: { streamWrite?: (s: string) => string }; redact?: unknown }
  const inner = given.hooks?.streamWrite
  return {
    ...given,
    redact: given.redact ?? { paths: SECRET_HEADER_PATHS, censor: REDACTED },
    hooks: { ...given.hooks, streamWrite: inner ? (s: string) => inner(redactSecrets(s)) : redactSecrets },
  }
}
