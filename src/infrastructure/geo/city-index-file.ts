/**
 * The binary file of the whole gazetteer (countries, states, and the city columns of
 * ./compact-cities.ts), so a process reads the ~10 MB index straight into place instead of parsing
 * the ~4,300 JSON files of the data package, whose transient objects would set the server's peak
 * RSS. Layout, all integers little-endian (n cities, f of them findable by name):
 *
 *   "SPCITIDX"  u32 format  u32 H  header JSON (H bytes: key, counts, byte lengths, sha256)
 *   meta JSON {country[], stateCode[], stateId[], countries[], states[], cityAliases[]}  names UTF-8
 *   folded names UTF-8  zero padding to 8
 *   latitude f64[n]  longitude f64[n]  ids u32[n]  group u32[n]  names ends u32[n]
 *   folded ends u32[n]  inState u32[f]  inCountry u32[f]
 *
 * The sha256 covers everything after the header but the padding. A file of another format or key,
 * or one that is truncated or damaged, decodes to undefined and the caller rebuilds it.
 *
 * Licence: the data is the dr5hn database from @countrystatecity/countries (ODbL-1.0); this file
 * is a derived database, made on our own servers from the installed package.
 */
import { createHash } from 'node:crypto'
import {
  closeSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync,
} from 'node:fs'
import { endianness } from 'node:os'
import { dirname } from 'node:path'
import { foldName } from '../../shared/text.js'
import { type Packed, packedAt } from './compact-cities.js'
import type { Country } from './gazetteer.js'
import type { CityAlias, GazetteerColumns, StoredState } from './gazetteer-columns.js'

const MAGIC = Buffer.from('SPCITIDX', 'latin1')
/** Bump on any change of the layout above or of what the columns mean. */
export const CITY_INDEX_FORMAT = 3
const PREFIX_BYTES = MAGIC.length + 8

interface Header {
  key: string
  cities: number
  findable: number
  groups: number
  groupsBytes: number
  namesBytes: number
  namesChars: number
  foldedBytes: number
  foldedChars: number
  sha256: string
}

const pad8 = (offset: number): number => (8 - (offset % 8)) % 8

const bytesOf = (a: Float64Array | Uint32Array): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

/** UTF-8 turns lone surrogates into U+FFFD; such a text would not come back as it went in. */
function utf8Exact(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.toString('utf8') !== text) throw new Error('city index: a name is not valid Unicode text')
  return bytes
}

export function encodeCityIndex(gazetteer: GazetteerColumns, key: string): Buffer {
  return Buffer.concat(cityIndexParts(gazetteer, key))
}

/** The file's bytes in pieces, most of them views of the columns' own memory. */
function cityIndexParts(gazetteer: GazetteerColumns, key: string): Buffer[] {
  if (endianness() !== 'LE') throw new Error('city index: the file format is little-endian only')
  const columns = gazetteer.cities
  const n = columns.group.length
  const groups = Buffer.from(JSON.stringify({
    country: columns.groupCountry, stateCode: columns.groupStateCode, stateId: columns.groupStateId,
    countries: gazetteer.countries, states: gazetteer.states, cityAliases: gazetteer.cityAliases,
  }), 'utf8')
  const names = utf8Exact(columns.names.text)
  const folded = utf8Exact(columns.folded.text)
  const arrays = [
    columns.latitude, columns.longitude, columns.ids, columns.group, columns.names.ends, columns.folded.ends,
    columns.inState, columns.inCountry,
  ].map(bytesOf)
  // The header's length decides the padding, so the sha256 is over the body without it.
  const hash = createHash('sha256')
  for (const part of [groups, names, folded, ...arrays]) hash.update(part)
  const header: Header = {
    key, cities: n, findable: columns.inState.length, groups: columns.groupCountry.length, groupsBytes: groups.length,
    namesBytes: names.length, namesChars: columns.names.text.length,
    foldedBytes: folded.length, foldedChars: columns.folded.text.length, sha256: hash.digest('hex'),
  }
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8')
  const prefix = Buffer.alloc(PREFIX_BYTES)
  MAGIC.copy(prefix)
  prefix.writeUInt32LE(CITY_INDEX_FORMAT, MAGIC.length)
  prefix.writeUInt32LE(headerBytes.length, MAGIC.length + 4)
  const textsEnd = PREFIX_BYTES + headerBytes.length + groups.length + names.length + folded.length
  return [prefix, headerBytes, groups, names, folded, Buffer.alloc(pad8(textsEnd)), ...arrays]
}

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

function isHeader(h: unknown): h is Header {
  if (typeof h !== 'object' || h === null) return false
  const counts = ['cities', 'findable', 'groups', 'groupsBytes', 'namesBytes', 'namesChars', 'foldedBytes', 'foldedChars']
  return 'key' in h && typeof h.key === 'string' && 'sha256' in h && typeof h.sha256 === 'string' &&
    counts.every((name) => isCount(Reflect.get(h, name)))
}

const isStrings = (a: unknown, length: number): a is string[] =>
  Array.isArray(a) && a.length === length && a.every((s) => typeof s === 'string')

/** Every 257th city's folded name must still be what foldName makes of its name today. */
function foldingStillHolds(names: Packed, folded: Packed): boolean {
  for (let i = 0; i < names.ends.length; i += 257) {
    if (foldName(packedAt(names, i)) !== packedAt(folded, i)) return false
  }
  return true
}

/** Where the decoder reads from: exactly `into.length` bytes at `position`, or it throws. */
interface ByteSource {
  size: number
  read(into: Uint8Array, position: number): void
}

function bufferSource(file: Buffer): ByteSource {
  return {
    size: file.length,
    read(into, position) {
      if (position + into.length > file.length) throw new Error('city index: read past the end')
      into.set(file.subarray(position, position + into.length))
    },
  }
}

function fileSource(fd: number): ByteSource {
  return {
    size: fstatSync(fd).size,
    read(into, position) {
      for (let done = 0; done < into.length;) {
        const n = readSync(fd, into, done, into.length - done, position + done)
        if (n === 0) throw new Error('city index: file shorter than its header says')
        done += n
      }
    },
  }
}

const bytesFrom = (source: ByteSource, position: number, length: number): Buffer => {
  const bytes = Buffer.allocUnsafe(length)
  source.read(bytes, position)
  return bytes
}

/**
 * Reads each part once into its final place: the texts through one transient buffer, the arrays
 * straight into their own memory, so loading makes no copy of the whole file.
 */
const isStateIds = (a: unknown, length: number): a is (number | null)[] =>
  Array.isArray(a) && a.length === length && a.every((id) => id === null || Number.isSafeInteger(id))

function decode(source: ByteSource, key: string): GazetteerColumns | undefined {
  if (endianness() !== 'LE' || source.size < PREFIX_BYTES) return undefined
  const prefix = bytesFrom(source, 0, PREFIX_BYTES)
  if (!prefix.subarray(0, MAGIC.length).equals(MAGIC) || prefix.readUInt32LE(MAGIC.length) !== CITY_INDEX_FORMAT) return undefined
  const headerEnd = PREFIX_BYTES + prefix.readUInt32LE(MAGIC.length + 4)
  if (headerEnd > source.size) return undefined
  let header: unknown
  try {
    header = JSON.parse(bytesFrom(source, PREFIX_BYTES, headerEnd - PREFIX_BYTES).toString('utf8'))
  } catch {
    return undefined
  }
  if (!isHeader(header) || header.key !== key) return undefined
  const n = header.cities
  const f = header.findable
  if (f > n) return undefined
  const textsEnd = headerEnd + header.groupsBytes + header.namesBytes + header.foldedBytes
  const arraysStart = textsEnd + pad8(textsEnd)
  // Checked before allocating anything of the sizes the header claims.
  if (source.size !== arraysStart + n * (2 * 8 + 4 * 4) + f * 2 * 4) return undefined

  const hash = createHash('sha256')
  const texts = bytesFrom(source, headerEnd, textsEnd - headerEnd)
  hash.update(texts)
  let at = 0
  const text = (bytes: number): string => texts.toString('utf8', at, at += bytes)
  let groups: { country?: unknown, stateCode?: unknown, stateId?: unknown, countries?: unknown, states?: unknown, cityAliases?: unknown }
  try {
    groups = JSON.parse(text(header.groupsBytes))
  } catch {
    return undefined
  }
  const namesText = text(header.namesBytes)
  const foldedText = text(header.foldedBytes)

  at = arraysStart
  const fill = <A extends Float64Array | Uint32Array>(array: A): A => {
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength)
    source.read(bytes, at)
    hash.update(bytes)
    at += bytes.length
    return array
  }
  const latitude = fill(new Float64Array(n))
  const longitude = fill(new Float64Array(n))
  const ids = fill(new Uint32Array(n))
  const group = fill(new Uint32Array(n))
  const names = { text: namesText, ends: fill(new Uint32Array(n)) }
  const folded = { text: foldedText, ends: fill(new Uint32Array(n)) }
  const inState = fill(new Uint32Array(f))
  const inCountry = fill(new Uint32Array(f))
  if (hash.digest('hex') !== header.sha256) return undefined

  if (!isStrings(groups.country, header.groups) || !isStrings(groups.stateCode, header.groups) ||
    !isStateIds(groups.stateId, header.groups) || !Array.isArray(groups.countries) || !Array.isArray(groups.states) ||
    !Array.isArray(groups.cityAliases)) return undefined
  if (namesText.length !== header.namesChars || foldedText.length !== header.foldedChars) return undefined
  if (n > 0 && (names.ends[n - 1] !== namesText.length || folded.ends[n - 1] !== foldedText.length)) return undefined
  if (!foldingStillHolds(names, folded)) return undefined
  return {
    countries: groups.countries as Country[],
    states: groups.states as StoredState[],
    cityAliases: groups.cityAliases as CityAlias[],
    cities: {
      groupCountry: groups.country, groupStateCode: groups.stateCode, groupStateId: groups.stateId,
      ids, group, latitude, longitude, names, folded, inState, inCountry,
    },
  }
}

/** The gazetteer stored in `file`, or undefined when it is not a complete, intact file of this format for `key`. */
export function decodeCityIndex(file: Buffer, key: string): GazetteerColumns | undefined {
  return decode(bufferSource(file), key)
}

/** The columns in the file at `path` for `key`; undefined when it is missing, unreadable or not valid. */
export function readCityIndex(path: string, key: string): GazetteerColumns | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    return decode(fileSource(fd), key)
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/** Writes under a temporary name and renames, so a concurrent reader sees the old file or the whole new one. */
export function writeCityIndex(path: string, gazetteer: GazetteerColumns, key: string): void {
  const parts = cityIndexParts(gazetteer, key)
  mkdirSync(dirname(path), { recursive: true })
  const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  try {
    // Piece by piece: joining them first would double the memory the file takes.
    const fd = openSync(temporary, 'w')
    try {
      for (const part of parts) {
        for (let done = 0; done < part.length;) done += writeSync(fd, part, done, part.length - done)
      }
    } finally {
      closeSync(fd)
    }
    renameSync(temporary, path)
  } catch (err) {
    rmSync(temporary, { force: true })
    throw err
  }
}
