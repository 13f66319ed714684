/**
 * How a test starts one of the project's scripts in a child process: from the JavaScript when the
 * suite runs compiled (infra/local/test.sh, tsc's output in .local/build, where this file is
 * .js too), through tsx otherwise (SKIP_TYPECHECK=1, a single file run by hand). Loading through
 * tsx's hooks takes about three times as long as the compiled file.
 */
const compiled = import.meta.url.endsWith('.js')

/** node's arguments to run `script` (a path like `src/main.ts`, relative to the checkout). */
export function nodeArgs(script: string): string[] {
  return compiled ? [script.replace(/\.ts$/, '.js')] : ['--import', 'tsx', script]
}
