import { randomBytes } from 'node:crypto'
import pg from 'pg'

/**
 * A scratch database on the server in DATABASE_URL for one benchmark run, dropped at the end.
 * Start a server with `bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a`
 * (the env file has no `export`).
 */
export async function scratchDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.DATABASE_URL
  if (!admin) {
    process.stderr.write('DATABASE_URL is not set: bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a\n')
    process.exit(2)
  }
  return scratchDatabaseAt(admin, label)
}

/** The same on a server named explicitly (benches that take BENCH_DATABASE_URL or TEST_DATABASE_URL). */
export async function scratchDatabaseAt(admin: string, label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${label}_${randomBytes(4).toString('hex')}`
  const c = new pg.Client({ connectionString: admin })
  await c.connect()
  await c.query(`create database ${name}`)
  await c.end()
  const url = new URL(admin)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const d = new pg.Client({ connectionString: admin })
      await d.connect()
      await d.query(`drop database if exists ${name} with (force)`)
      await d.end()
    },
  }
}

export const percentile = (sorted: number[], p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN

export const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 50)

export const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
