/**
 * `npm run witness -- --log <url> --key <file>`: a C2SP tlog-witness anyone (a carrier, a shipper,
 * an auditor) can host for the platform's audit log. It keeps the last checkpoint it cosigned in a
 * state file, refuses one that does not extend it (409, 422), and cosigns the others. Give the
 * printed line (`<vkey>@<url>`) to the platform's operator for AUDIT_WITNESSES.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { cosignerVkey } from '../audit/checkpoint-note.js'
import { generatedNotaryKeyPem, notaryKeyFrom } from '../audit/tree-head.js'
import { parseVerifierKey } from '../audit/signed-note.js'
import { startWitness } from '../audit/witness/witness-server.js'
import { messageOf } from '../shared/thrown.js'

const usage = `usage: npm run witness -- --log <url|vkey> --key <file> [--name <name>] [--state <file>] [--port N] [--host H]
  --log    the platform's address (its verifier key is read from <url>/audit/v1/checkpoint/key
           and pinned in the state file), or the log's verifier key itself; repeatable
  --key    the witness's Ed25519 key (PKCS#8 PEM or base64 seed); created when the file is absent
  --name   the witness's key name (default <hostname>/witness); part of its verifier key
  --state  where the last cosigned checkpoints are kept (default: witness-state.json beside the key)
  --port   default 4100 (0: a free port); --host default 127.0.0.1
`

class UsageError extends Error {}

async function logKey(log: string): Promise<string> {
  if (!/^https?:\/\//.test(log)) return parseVerifierKey(log) && log.trim()
  const url = `${log.replace(/\/+$/, '')}/audit/v1/checkpoint/key`
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) })
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`)
  const vkey = (await res.text()).trim()
  parseVerifierKey(vkey)
  return vkey
}

async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      log: { type: 'string', multiple: true }, key: { type: 'string' }, name: { type: 'string' }, state: { type: 'string' },
      port: { type: 'string' }, host: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) { process.stdout.write(usage); return }
  if (!values.key || !values.log?.length) throw new UsageError(usage)
  const port = Number(values.port ?? '4100')
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: expected 0-65535, got "${values.port}"\n`)
  const keyFile = resolve(values.key)
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true })
    writeFileSync(keyFile, generatedNotaryKeyPem(), { mode: 0o600 })
    process.stdout.write(`[witness] created a new key in ${keyFile}\n`)
  }
  const { privateKey } = notaryKeyFrom(readFileSync(keyFile, 'utf8'), `--key ${keyFile}`)
  const name = values.name ?? `${hostname()}/witness`
  const logs = await Promise.all(values.log.map(logKey))
  const witness = await startWitness({
    key: { name, privateKey },
    stateFile: resolve(values.state ?? `${dirname(keyFile)}/witness-state.json`),
    logs,
    port,
    ...(values.host ? { host: values.host } : {}),
    log: (line) => process.stdout.write(`[witness] ${line}\n`),
  })
  process.stdout.write(`[witness] witnessing ${logs.map((l) => l.split('+')[0]).join(', ')}; listening on ${witness.url}\n`)
  process.stdout.write(`[witness] AUDIT_WITNESSES entry: ${cosignerVkey({ name, privateKey })}@${witness.url}\n`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void witness.close().then(() => process.exit(0)) })
}

try {
  await main(process.argv.slice(2))
} catch (err) {
  process.stderr.write(err instanceof UsageError ? err.message : `witness: ${messageOf(err)}\n`)
  process.exitCode = err instanceof UsageError ? 2 : 1
}
