import { fork, type ChildProcess } from 'node:child_process'

// The receiver runs in its own process, as a carrier's or subscriber's endpoint would, so it does
// not share the dispatcher's event loop. It reports its count on request.
const RECEIVER = `
  const http = require('node:http')
  let n = 0
  const server = http.createServer({ keepAliveTimeout: 60000 }, (req, res) => { req.resume(); req.on('end', () => { n++; res.end('ok') }) })
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
  process.on('message', (m) => { if (m === 'count') process.send({ count: n }); if (m === 'reset') n = 0 })
`

export interface LoopbackReceiver { child: ChildProcess; url: string; count(): Promise<number>; reset(): void }

/** A webhook endpoint on 127.0.0.1 in a child process that answers 200 and counts what it got. */
export function startReceiver(): Promise<LoopbackReceiver> {
  const child = fork('-e', [RECEIVER], { execArgv: ['-e', RECEIVER], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve) => {
    child.once('message', (m: any) => resolve({
      child,
      url: `http://127.0.0.1:${m.port}/hooks`,
      count: () => new Promise((r) => { child.once('message', (x: any) => r(x.count)); child.send('count') }),
      reset: () => child.send('reset'),
    }))
  })
}
