#!/usr/bin/env node
// Runs tap test files, each in its own `node` process, up to --jobs at a time, and writes one TAP
// stream as tap's runner does: each file a subtest (its own output indented), `ok N - file #
// time=…ms` as each ends, then `1..N` and `# { total, pass, fail, skip, todo }` summed over every
// assertion. The files still use tap's library; what this replaces is tap's CLI, which starts
// every test process (and every process a test starts) with @tapjs/processinfo's and @tapjs/mock's
// module hooks, for coverage and mocking this suite does not use: measured on one file, 2.4 s of
// CPU without them and 5.0 s with them, most of it loading modules.
// Usage: run-test-files.mjs [--jobs N] [--timeout SECONDS] [--node-arg ARG]... FILE...
import { spawn } from 'node:child_process'
import { availableParallelism } from 'node:os'

const files = []
const nodeArgs = []
let jobs = availableParallelism()
let timeoutMs = 300_000
const argv = process.argv.slice(2)
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i]
  if (arg === '--jobs') jobs = Number(argv[++i])
  else if (arg === '--timeout') timeoutMs = Number(argv[++i]) * 1000
  else if (arg === '--node-arg') nodeArgs.push(argv[++i])
  else if (arg.startsWith('-')) throw new Error(`run-test-files: unknown option ${arg}`)
  else files.push(arg)
}
if (files.length === 0) {
  console.error('run-test-files: no test file named')
  process.exit(1)
}

const out = (text) => process.stdout.write(text)
const indent = (text) => text.split('\n').map((line) => (line === '' ? line : `    ${line}`)).join('\n')
const total = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
let finished = 0
let failedFiles = 0
const running = new Set()
// Stopped (Ctrl-C, CI's timeout): the test processes stop too, and run their teardowns.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of running) child.kill('SIGTERM')
    process.exit(signal === 'SIGINT' ? 130 : 143)
  })
}

out('TAP version 14\n')

function runFile(file, job) {
  return new Promise((resolve) => {
    const started = performance.now()
    // The library's own timeout (else 30 s), as tap's runner sets it. Unlike tap's runner, no
    // TAP_CHILD_ID: a process-root test then ends with its counts (`# { total: …, pass: … }`).
    // No colours, as tap's runner with its TAP reporter sets them (a pretty log a test reads is plain).
    const env = { ...process.env, TAP: '1', TAP_TIMEOUT: String(timeoutMs / 1000), TAP_JOB_ID: String(job), FORCE_COLOR: '0', NO_COLOR: '1' }
    const child = spawn(process.execPath, [...nodeArgs, file], { stdio: ['ignore', 'pipe', 'inherit'], env })
    running.add(child)
    let output = ''
    let timedOut = false
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk) => { output += chunk })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGTERM')
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
    }, timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child)
      const ms = performance.now() - started
      // Every assertion at any depth: the counts the file's root test prints last. tap exits
      // non-zero when any of them failed.
      const counted = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 }
      const countsLine = output.split('\n').filter((line) => /^# \{.*\}\s*$/.test(line)).pop()
      for (const [, key, n] of countsLine?.matchAll(/(\w+):\s*(\d+)/g) ?? []) if (key in counted) counted[key] = Number(n)
      const ok = !timedOut && code === 0 && countsLine !== undefined && counted.fail === 0 && counted.total > 0
      // A file that failed without a failing assertion (a crash, a timeout) counts as one failure.
      if (!ok && counted.fail === 0) { counted.fail = 1; counted.total += 1 }
      for (const key of Object.keys(total)) total[key] += counted[key]
      finished += 1
      if (!ok) failedFiles += 1
      const why = timedOut ? `timeout after ${timeoutMs / 1000} s` : code !== 0 ? `exit ${code ?? signal}` : ''
      out(`# Subtest: ${file}\n${indent(output.endsWith('\n') || output === '' ? output : `${output}\n`)}`)
      out(`${ok ? 'ok' : 'not ok'} ${finished} - ${file}${why ? ` (${why})` : ''} # time=${ms.toFixed(3)}ms\n`)
      resolve()
    })
  })
}

const queue = [...files]
await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, files.length)) }, async (_, job) => {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) await runFile(file, job)
}))

out(`1..${finished}\n`)
const counts = Object.entries(total).filter(([key, n]) => key === 'total' || n > 0).map(([key, n]) => `${key}: ${n}`)
out(`# { ${counts.join(', ')} }\n`)
// Not process.exit(): stdout may be a pipe with output still queued, which exit() would cut off.
process.exitCode = failedFiles === 0 ? 0 : 1
