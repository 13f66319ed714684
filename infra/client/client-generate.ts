import { writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import { CLIENT_TYPES_FILE, clientTypes, currentDocument } from './client-types.js'

/** `npm run client:generate`: writes schemas/client/openapi.ts from this checkout's routes. */
const types = await clientTypes(await currentDocument())
writeFileSync(CLIENT_TYPES_FILE, types)
console.log(`${relative(process.cwd(), CLIENT_TYPES_FILE)}: ${types.split('\n').length} lines written`)
