// node-postgres's own conversion of a parameter to the text it sends (exported, untyped).
declare module 'pg/lib/utils' {
  const utils: { prepareValue(value: unknown): string | Buffer | null }
  export default utils
}
