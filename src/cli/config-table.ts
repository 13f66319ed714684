/** `npm run docs:config`: writes the README's configuration table from the settings' schema (src/config.ts). */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { configurationTable } from '../config.js'

export const README = join(import.meta.dirname, '..', '..', 'README.md')
export const TABLE_PATTERN = /(<!-- config-table[^\n]*-->\n)[\s\S]*?(\n<!-- \/config-table -->)/

if (process.argv[1] === import.meta.filename) {
  const text = readFileSync(README, 'utf8')
  if (!TABLE_PATTERN.test(text)) throw new Error('README.md has no <!-- config-table --> section')
  writeFileSync(README, text.replace(TABLE_PATTERN, (_, open: string, close: string) => `${open}${configurationTable()}${close}`))
  process.stdout.write('README.md: configuration table written\n')
}
