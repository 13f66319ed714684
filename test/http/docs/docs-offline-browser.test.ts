import t from 'tap'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { build } from '../../helpers/build.js'

// The functions below run in the page (the project's types carry no DOM library).
declare const document: any

/** The vendor's own features, by the text each shows; none of them may be on the page. */
const VENDOR_TEXTS = ['Ask AI', 'Generate MCP', 'VS Code', 'Cursor', 'Developer Tools', 'Configure', 'Share', 'Deploy', 'Powered by Scalar', 'Open API Client']

t.test('/docs in Chromium with every outside request failing: the API\'s title, its operations, nothing of the vendor\'s, no outside request', async (t) => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  const outside: string[] = []
  await context.route('**/*', (route) => {
    const { hostname, protocol } = new URL(route.request().url())
    if (hostname === '127.0.0.1' || protocol === 'data:' || protocol === 'blob:') return route.continue()
    outside.push(route.request().url())
    return route.abort('internetdisconnected')
  })
  const page = await context.newPage()
  await page.goto(`${base}/docs/`)
  await page.getByRole('heading', { name: 'Shipping platform API' }).first().waitFor({ timeout: 30_000 })
  await page.getByText('Carrier shipments', { exact: true }).first().waitFor()

  t.equal(await page.title(), 'Shipping platform API', 'the tab shows the API\'s title')
  for (const text of VENDOR_TEXTS) {
    const visible = await page.getByText(text, { exact: true }).filter({ visible: true }).count()
    t.equal(visible, 0, `no "${text}"`)
  }
  t.notMatch(await page.evaluate(() => document.body.innerText), /scalar/i, 'the vendor is not named on the page')

  // The in-page client that "Test Request" opens loads nothing from outside either.
  await page.getByRole('button', { name: /Test Request/ }).first().click()
  await page.waitForTimeout(1500)
  await page.keyboard.press('Escape')
  await page.screenshot({ path: '/tmp/docs-offline.png' }).catch(() => undefined)

  t.same(outside, [], 'no request left this machine (fonts, scripts, telemetry)')
  const fonts = await page.evaluate(() => Array.from(document.fonts as Iterable<any>, (f: any) => f.family))
  t.same(fonts, [], 'no web font is loaded: the browser\'s own fonts are used')
})
