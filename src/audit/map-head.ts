import { type KeyObject, sign, verify } from 'node:crypto'
import { HASH_BYTES } from './merkle.js'

/**
 * What the notary signs beside each tree head (issue 36): the tree's size and root, and the stream
 * map's root over the same leaves. The bytes: the ASCII text `shipping-platform/stream-map/1`, a zero
 * byte, uint64 tree_size, the tree's root (32 bytes), the map's root (32 bytes); Ed25519 with the
 * notary's key. Beside the head, not in it: the checkpoint's own format stays what transparency
 * tools read, and a history that does not ask for completeness need not know of the map.
 */
export interface MapHead {
  treeSize: number
  treeRoot: Buffer
  mapRoot: Buffer
}

export interface SignedMapHead extends MapHead {
  signature: Buffer
  keyId: string
}

const CONTEXT = Buffer.from('shipping-platform/stream-map/1\0', 'ascii')

export function mapHeadBytes({ treeSize, treeRoot, mapRoot }: MapHead): Buffer {
  if (treeRoot.length !== HASH_BYTES || mapRoot.length !== HASH_BYTES) throw new Error('a root is 32 bytes')
  const size = Buffer.alloc(8)
  size.writeBigUInt64BE(BigInt(treeSize))
  return Buffer.concat([CONTEXT, size, treeRoot, mapRoot])
}

export const signMapHead = (head: MapHead, privateKey: KeyObject): Buffer => sign(null, mapHeadBytes(head), privateKey)

export function mapHeadSignatureHolds(head: MapHead, signature: Uint8Array, publicKey: KeyObject): boolean {
  try {
    return verify(null, mapHeadBytes(head), publicKey, signature)
  } catch {
    return false
  }
}
