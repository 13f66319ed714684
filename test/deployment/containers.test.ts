// No Docker engine runs on these machines, so the container files are checked as text: the compose
// file gives the server every variable it needs, every service has a health check, and the
// Dockerfile builds and starts the server the way package.json does.
import t from 'tap'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { SETTINGS } from '../../src/config.js'

const root = join(import.meta.dirname, '..', '..')
const read = (path: string) => readFileSync(join(root, path), 'utf8')
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> }

interface Service {
  networks?: Record<string, { ipv4_address?: string } | null>
  image?: string; build?: unknown; profiles?: string[]; pull_policy?: string; command?: unknown; environment?: Record<string, string>; ports?: string[]
  healthcheck?: { test?: string[] | string }; depends_on?: Record<string, { condition: string; required?: boolean }>; volumes?: string[]
}
const compose = parse(read('infra/compose.yaml'), { merge: true }) as {
  services: Record<string, Service>; networks?: Record<string, { ipam?: { config?: { subnet?: string }[] } }>
}
const services = compose.services
const API_IMAGE = 'shipping-platform:local'
const apis = Object.entries(services).filter(([, s]) => s.image === API_IMAGE)

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourceFiles(path) : name.endsWith('.ts') ? [path] : []
  })
}

/** Variables the server process reads: its settings (src/config.ts) and every other `env.X` in src/ outside the command-line tools. */
const serverVariables = [...new Set([...Object.keys(SETTINGS), ...sourceFiles(join(root, 'src'))
  .filter((f) => !f.includes(`${join('src', 'cli')}`))
  .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\benv(?:\.|\[['"])([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!))])].sort()

/** Settings the server gives a value when the variable is unset (src/config.ts: a default, or one derived at start). */
const defaulted = (name: string) => {
  const setting = (SETTINGS as Record<string, { schema: { default?: unknown }; shownDefault?: string }>)[name]
  return setting !== undefined && (setting.schema.default !== undefined || setting.shownDefault !== undefined)
}

t.test('the compose file has the stack of DESIGN §5', async (t) => {
  t.ok(services['postgres']?.image?.startsWith('postgres:'), 'PostgreSQL')
  // A 3-node JetStream cluster (issue 33): each node routed to the other two, a store of its own.
  const nats = ['nats-1', 'nats-2', 'nats-3']
  for (const name of nats) {
    const s = services[name]
    t.ok(s?.image?.startsWith('nats:'), `${name}: NATS`)
    const command = s?.command as string[]
    t.ok(command.includes('-js'), `${name}: with JetStream`)
    t.equal(command[command.indexOf('--server_name') + 1], name, `${name}: named`)
    t.equal(command[command.indexOf('--cluster_name') + 1], 'shipping', `${name}: in the cluster`)
    t.same(command[command.indexOf('--routes') + 1]?.split(',').sort(), nats.filter((n) => n !== name).map((n) => `nats://${n}:6222`), `${name}: routes to the other two`)
    t.same(s?.volumes, [`${name}:/data`], `${name}: its own store`)
  }
  t.notOk(services['nats'], 'no single NATS server beside the cluster')
  t.match(services['kurrentdb']?.image ?? '', /^kurrentplatform\/kurrentdb:/, 'KurrentDB, the official image')
  t.same(services['kurrentdb']?.profiles, ['kurrentdb'], 'KurrentDB only under its profile')
  t.equal(apis.length, 2, 'two API processes of the project\'s image')
  const builders = apis.filter(([, s]) => s.build !== undefined)
  t.equal(builders.length, 1, 'the image is built once')
  t.match(builders[0]?.[1].build, { context: '..', dockerfile: 'Dockerfile' })
  for (const [name, s] of apis.filter(([, s]) => s.build === undefined)) t.equal(s.pull_policy, 'never', `${name} runs the built image, never pulls it`)
  const proxy = Object.entries(services).find(([, s]) => s.image?.startsWith('nginx'))
  t.ok(proxy, 'a proxy in front')
  const conf = read('infra/proxy/nginx.conf')
  for (const [name] of apis) t.match(conf, new RegExp(`server ${name}:3000`), `the proxy sends to ${name}`)
  t.match(conf, /proxy_buffering off/, 'server-sent events pass unbuffered')
})

t.test('the API trusts the proxy alone, and the proxy forwards the address it saw (issue 31)', async (t) => {
  const proxy = Object.values(services).find((s) => s.image?.startsWith('nginx'))
  const address = proxy?.networks?.['default']?.ipv4_address
  t.match(address, /^\d+\.\d+\.\d+\.\d+$/, 'the proxy has a fixed address')
  const subnet = compose.networks?.['default']?.ipam?.config?.[0]?.subnet ?? ''
  const [net, bits] = subnet.split('/')
  const asNumber = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0)
  const mask = 2 ** 32 - 2 ** (32 - Number(bits))
  t.ok(Number(bits) >= 16 && Number(bits) <= 29, `a fixed subnet (${subnet})`)
  t.equal(((asNumber(address ?? '') & mask) >>> 0), ((asNumber(net ?? '') & mask) >>> 0), `${address} is in ${subnet}`)
  for (const [name, s] of apis) t.equal(s.environment?.['TRUST_PROXY'], `\${TRUST_PROXY:-${address}}`, `${name} trusts the proxy's address alone by default`)
  const conf = read('infra/proxy/nginx.conf').split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n')
  t.match(conf, /^\s*proxy_set_header X-Forwarded-For \$remote_addr;/m, 'the client\'s own X-Forwarded-For is replaced, not appended to')
  t.notMatch(conf, /\$proxy_add_x_forwarded_for/)
})

t.test('every service has a health check, and the API waits for healthy dependencies', async (t) => {
  for (const [name, s] of Object.entries(services)) {
    t.ok(Array.isArray(s.healthcheck?.test) && s.healthcheck!.test.length > 1, `${name} has a health check`)
  }
  for (const [name, s] of apis) {
    t.match(JSON.stringify(s.healthcheck?.test), /\/health/, `${name} is checked on /health`)
    for (const dep of ['postgres', 'nats-1', 'nats-2', 'nats-3', 'kurrentdb']) t.equal(s.depends_on?.[dep]?.condition, 'service_healthy', `${name} waits for ${dep}`)
    t.equal(s.depends_on?.['kurrentdb']?.required, false, `${name} starts without the kurrentdb profile`)
  }
})

t.test('every variable the server reads is set in compose or defaulted by the configuration', async (t) => {
  t.ok(serverVariables.includes('DATABASE_URL') && serverVariables.includes('SECRETS_KEY'), `found the variables (${serverVariables.join(', ')})`)
  for (const [name, s] of apis) {
    const env = s.environment ?? {}
    const missing = serverVariables.filter((v) => !(v in env) && !defaulted(v))
    t.same(missing, [], `${name}: read by the server, neither set nor defaulted`)
    // What a cluster of two processes must share or reach, whatever the defaults are.
    t.match(env, {
      HOST: '0.0.0.0',
      DATABASE_URL: /^postgres:\/\/.+@postgres:5432\//,
      NATS_URL: 'nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222',
      NATS_STREAM_REPLICAS: '3',
      EVENTSTORE_URL: '${EVENTSTORE_URL:-}',
      SECRETS_KEY: /^\$\{SECRETS_KEY:\?/,
      ADMIN_TOKEN: /^\$\{ADMIN_TOKEN:\?/,
    }, `${name}: services by name, shared secrets required from the environment`)
  }
  t.same(apis[0]![1].environment, apis[1]![1].environment, 'both API processes are configured alike')
})

t.test('the Dockerfile builds and starts the server as package.json does', async (t) => {
  const dockerfile = read('Dockerfile')
  const lines = dockerfile.split('\n').filter((l) => !l.trimStart().startsWith('#'))
  t.ok(lines.filter((l) => /^FROM /.test(l)).length >= 2, 'multi-stage')
  t.match(dockerfile, /^RUN npm run build$/m, 'compiles with the build script')
  // tsc, then the driver's app's static files (src/driver/public) beside the compiled server.
  t.match(pkg.scripts['build'], /^tsc -p tsconfig\.build\.json( && |$)/)
  const start = pkg.scripts['start:dist']!.split(' ')
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)
  t.ok(cmd, 'an exec-form CMD')
  t.same(JSON.parse(cmd![1]!), start, `CMD is start:dist (${pkg.scripts['start:dist']})`)
  t.match(dockerfile, /npm ci --omit=dev/, 'production dependencies only in the image')
  t.match(dockerfile, /^COPY --from=deps \/app\/node_modules/m, 'the image takes node_modules from the production stage')
  t.match(dockerfile, /^USER node$/m, 'a non-root user')
  t.match(dockerfile, /^HEALTHCHECK [\s\S]*\/health/m, 'HEALTHCHECK on /health')
  const index = /dist\/src\/cli\/([a-z-]+)\.js/.exec(dockerfile)
  t.ok(index && pkg.scripts['gazetteer:index']?.includes(`src/cli/${index[1]}.ts`), 'the city index is built at image build time, by the gazetteer:index script\'s program')
  t.notMatch(dockerfile, /COPY \. /, 'nothing copied wholesale (secrets, data, .git)')
})

t.test('the image: a current Node LTS that package.json "engines" names, DATA_DIR a volume, no tsx, source maps on', async (t) => {
  const dockerfile = read('Dockerfile')
  const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string> }
  const image = /^ARG NODE_IMAGE=node:(\d+)-/m.exec(dockerfile)
  t.ok(image, 'one Node image for every stage')
  const major = Number(image![1])
  t.ok(major >= 22 && major % 2 === 0, `an LTS line, 22 or later (node:${major})`)
  t.equal(dockerfile.split('\n').filter((l) => /^FROM /.test(l)).every((l) => l.startsWith('FROM ${NODE_IMAGE}')), true, 'every stage on it')
  t.ok(manifest.engines.node.split('||').some((range) => range.trim() === '>=22' || range.trim() === `>=${major}`), `"engines" (${manifest.engines.node}) admits node ${major}`)
  const dataDir = /^ENV .*\bDATA_DIR=(\S+)/m.exec(dockerfile)?.[1]
  t.ok(dataDir, 'DATA_DIR set in the image')
  t.match(dockerfile, new RegExp(`^VOLUME \\["${dataDir}"\\]$`, 'm'), 'DATA_DIR is a volume')
  t.notOk('tsx' in manifest.dependencies, 'tsx is not a production dependency')
  t.ok('tsx' in manifest.devDependencies, 'npm start (through tsx) still works after npm ci')
  t.ok(!/\btsx\b/.test(JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!).join(' ')), 'the image runs dist/, not tsx')
  t.match(pkg.scripts['start:dist'], /--enable-source-maps/, 'stack traces point into src/*.ts')
  t.equal((JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { sourceMap?: boolean } }).compilerOptions.sourceMap, true, 'the build writes source maps')
  t.match(dockerfile, /^ENV .*\bLOG_FORMAT=json\b/m, 'JSON logs in the image, terminal or not')
})

t.test('the image keeps exactly the CJK font weights the labels use', async (t) => {
  const { fontFile } = await import('../../src/shipments/labels/label-fonts.js')
  const kept = [...read('Dockerfile').matchAll(/! -name '([^']+\.otf)'/g)].map((m) => m[1]).sort()
  t.same(kept, [fontFile('cjk', true), fontFile('cjk', false)].map((f) => f.split('/').pop()).sort())
})

t.test('NOTICE carries the ODbL attribution of the city data and the font licence, and ships in the image', async (t) => {
  const notice = read('NOTICE')
  t.match(notice, /Countries States Cities Database/)
  t.match(notice, /@countrystatecity\/countries/)
  t.match(notice, /Open Database License \(ODbL\) v1\.0: https:\/\/opendatacommons\.org\/licenses\/odbl\/1\.0\//)
  t.match(notice, /Database Contents\s+License/)
  t.match(notice, /SIL Open Font License 1\.1/)
  const manifest = JSON.parse(read('node_modules/@countrystatecity/countries/package.json')) as { license: string }
  t.equal(manifest.license, 'ODbL-1.0', 'the package is still ODbL (re-read NOTICE if this changes)')
  t.match(read('Dockerfile'), /^COPY [^\n]*\bNOTICE\b[^\n]* \.\/$/m, 'NOTICE is copied into the image')
})
