import { parseArgs } from 'node:util'
import { formatDelivery, startWebhookSink } from './webhook-sink-server.js'
import { CheckpointKeeper } from './webhook-sink-checkpoints.js'
import { parseVerifierKey } from '../audit/signed-note.js'
import { messageOf } from '../shared/thrown.js'

const USAGE = `usage: npm run webhook-sink -- [--port N] [--secret whsec_… …]
  Receives the platform's carrier webhooks on http://127.0.0.1:<port>/ (any path), checks their
  Standard Webhooks signature and prints one line per delivery.
  --port    default $WEBHOOK_SINK_PORT, else 4000 (0: a free port)
  --secret  the carrier's hmac_secret (repeatable: old and new during a rotation);
            default $WEBHOOK_SECRET. Without one, deliveries are printed UNVERIFIED and accepted.
  --checkpoints DIR   keep the audit checkpoints the webhooks carry (Audit-Checkpoint) in DIR, and
            print REWRITE when one contradicts the last kept: a rewritten log
  --log URL the platform's address: its verifier key (/audit/v1/checkpoint/key) checks the
            checkpoints, and its consistency proofs show each new one extends the last kept
  --log-key VKEY      the log's verifier key, when it is not to be fetched from --log`

/** `npm run webhook-sink`: a local receiver for trying carrier webhooks out (README, "A carrier"). */
async function main(): Promise<void> {
  let values
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string', short: 'p' },
        secret: { type: 'string', short: 's', multiple: true },
        checkpoints: { type: 'string' },
        log: { type: 'string' },
        'log-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (err) {
    process.stderr.write(`${messageOf(err)}\n${USAGE}\n`)
    process.exit(2)
  }
  if (values.help) { process.stdout.write(`${USAGE}\n`); return }
  const rawPort = values.port ?? process.env.WEBHOOK_SINK_PORT ?? '4000'
  const port = Number(rawPort)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port: expected 0-65535, got "${rawPort}"\n`)
    process.exit(2)
  }
  const secrets = values.secret ?? (process.env.WEBHOOK_SECRET ? [process.env.WEBHOOK_SECRET] : [])
  let sink
  try {
    let keeper: CheckpointKeeper | undefined
    if (values.checkpoints) {
      let vkey = values['log-key']
      if (!vkey && values.log) {
        const res = await fetch(`${values.log.replace(/\/+$/, '')}/audit/v1/checkpoint/key`, { signal: AbortSignal.timeout(10_000) })
        if (res.status !== 200) throw new Error(`${values.log}/audit/v1/checkpoint/key answered ${res.status}`)
        vkey = (await res.text()).trim()
      }
      if (!vkey) {
        process.stderr.write(`--checkpoints needs the log's key: --log <url> or --log-key <vkey>\n${USAGE}\n`)
        process.exit(2)
      }
      keeper = new CheckpointKeeper(values.checkpoints, parseVerifierKey(vkey), values.log)
      process.stdout.write(`[webhook-sink] keeping checkpoints of ${vkey.split('+')[0]} in ${values.checkpoints}${keeper.latest ? ` (last kept: size ${keeper.latest.size})` : ''}\n`)
    }
    sink = await startWebhookSink({ port, secrets, ...(keeper ? { keeper } : {}), onDelivery: (d) => process.stdout.write(`[webhook-sink] ${formatDelivery(d)}\n`) })
  } catch (err) {
    process.stderr.write(`webhook-sink: ${messageOf(err)}\n`)
    process.exit(1)
  }
  process.stdout.write(`[webhook-sink] listening on ${sink.url} (${secrets.length ? `verifying with ${secrets.length} secret${secrets.length > 1 ? 's' : ''}` : 'no secret: nothing is verified'})\n`)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => { void sink.close().then(() => process.exit(0)) })
  }
}

await main()
