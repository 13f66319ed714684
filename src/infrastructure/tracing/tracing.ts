import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api'
import { messageOf } from '../../shared/thrown.js'

/**
 * Tracing through the OpenTelemetry API only (the SDK is started by ./start-tracing.ts, or by a
 * test). The thread of a trace is the W3C `traceparent`: events carry it in their metadata, bus
 * messages and outgoing webhooks in a header, outbox rows in a column. While no SDK is started,
 * every helper here returns at once and nothing is recorded or added (no cost, no header).
 */
let enabled = false

/** Called by whoever registers a tracer provider (start-tracing.ts, the tests). */
export const setTracingEnabled = (on: boolean): void => { enabled = on }
export const tracingEnabled = (): boolean => enabled

const tracer = () => trace.getTracer('shipping-platform')

export const traceparentOf = (ctx: Context): string | undefined => {
  const carrier: Record<string, string> = {}
  propagation.inject(ctx, carrier)
  return carrier['traceparent']
}

export const contextOf = (traceparent: string | undefined, tracestate?: string): Context =>
  traceparent ? propagation.extract(ROOT_CONTEXT, tracestate ? { traceparent, tracestate } : { traceparent }) : ROOT_CONTEXT

/** A span context to link to (another event of the same batch). */
export function linkTo(traceparent: string | undefined): Link | undefined {
  const sc = traceparent ? trace.getSpanContext(contextOf(traceparent)) : undefined
  return sc ? { context: sc } : undefined
}

export interface SpanOptions {
  kind?: SpanKind
  attributes?: Attributes
  links?: (Link | undefined)[]
}

/** Starts a span under `parent` (a traceparent, or none for a new trace); undefined while tracing is off. */
export function startSpan(name: string, parent: string | undefined, opts: SpanOptions = {}): Span | undefined {
  if (!enabled) return undefined
  const links = (opts.links ?? []).filter((l): l is Link => l !== undefined)
  return tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes ?? {}, links }, contextOf(parent))
}

export const traceparentOfSpan = (span: Span | undefined): string | undefined =>
  span ? traceparentOf(trace.setSpan(ROOT_CONTEXT, span)) : undefined

/**
 * Runs `fn` in a span under `parent`, the span active for the OpenTelemetry context (so code that
 * reads the active context sees it), ended when `fn` settles; an error marks it. Off: just `fn`.
 */
export async function inSpan<T>(name: string, parent: string | undefined, opts: SpanOptions, fn: (traceparent: string | undefined) => Promise<T>): Promise<T> {
  const span = startSpan(name, parent, opts)
  if (!span) return fn(undefined)
  try {
    return await context.with(trace.setSpan(contextOf(parent), span), () => fn(traceparentOfSpan(span)))
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err))
    span.setStatus({ code: SpanStatusCode.ERROR, message: messageOf(err) })
    throw err
  } finally {
    span.end()
  }
}

export { SpanKind, SpanStatusCode }
