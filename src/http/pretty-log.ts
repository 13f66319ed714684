import type { DestinationStream } from 'pino'

/** `LOG_FORMAT`: readable lines for a person at a terminal, JSON lines for everything else. */
export function wantsPrettyLogs(format: 'auto' | 'json' | 'pretty', stdoutIsTerminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTerminal)
}

/**
 * pino-pretty as the logger's destination, in this thread (not a worker transport): a terminal
 * session logs little, and a line written at once is never lost at exit. Loaded only when used.
 */
export async function prettyStdout(): Promise<DestinationStream> {
  const { default: pretty } = await import('pino-pretty')
  // `startup`: the start line's fields, which its message already says in words.
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,startup' })
}
