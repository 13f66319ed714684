import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { nodeArgs } from './node-script.js'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

export interface CliProcess {
  child: ChildProcess
  stdout(): string
  stderr(): string
  exited: Promise<number | null>
}

/**
 * One of the project's command-line scripts as a child process, as an operator runs it: the
 * environment of the test minus `unset` (so a test's own DATABASE_URL or NATS_URL does not leak in),
 * plus `env`.
 */
export function spawnCli(script: string, args: string[], env: Record<string, string> = {}, unset: readonly string[] = []): CliProcess {
  const clean = { ...process.env }
  for (const name of unset) delete clean[name]
  const child = spawn(process.execPath, [...nodeArgs(script), ...args], { cwd: repoRoot, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => { stdout += String(d) })
  child.stderr!.on('data', (d) => { stderr += String(d) })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Runs `src/cli/index.ts` with `args` to its end. */
export async function runCli(args: string[], env: Record<string, string>, unset: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnCli('src/cli/index.ts', args, env, unset)
  const code = await p.exited
  return { code, stdout: p.stdout(), stderr: p.stderr() }
}
