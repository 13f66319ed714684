import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { chromium, type Browser, type Page } from 'playwright-core'

/** Debian's Chromium, headless, with nothing of its own going out (the pages must make no outside request). */
export const launch = (): Promise<Browser> => chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
})

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

// The function below runs in the page (the project's types carry no DOM library).
declare const document: unknown
declare const window: { axe: { run(doc: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string; nodes: { target?: string[] }[] }[] }> } }

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE}\n;undefined`)
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] })
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, target: v.nodes[0]?.target?.join(' ') ?? '' }))
  })
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.impact}: ${v.id} at ${v.target}`)
}
