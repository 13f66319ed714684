import { Type } from 'typebox'
import { DecimalInteger, Nullable } from './common.js'
import { StoredEvent } from './shipments.js'

const Base64 = (description: string) => Type.String({ contentEncoding: 'base64', description })

export const SignedTreeHead = Type.Object({
  tree_size: Type.Integer({ minimum: 0, description: 'Leaves (events) the tree holds, in commit order.' }),
  root_hash: Base64('MTH of the tree (RFC 9162 §2.1.1), SHA-256.'),
  timestamp: Type.Integer({ description: 'Milliseconds since the epoch, as signed.' }),
  signed_at: Type.String({ format: 'date-time', description: 'The timestamp, for people.' }),
  signature: Base64('Ed25519 over RFC 9162 TreeHeadDataV2: uint64 timestamp, uint64 tree_size, root_hash with its 1-byte length, 2 zero bytes (no extensions).'),
  key_id: Base64('SHA-256 of the signing key\'s SPKI encoding.'),
  algorithm: Type.Literal('Ed25519'),
}, { title: 'SignedTreeHead' })

export const NotaryPublicKey = Type.Object({
  algorithm: Type.Literal('Ed25519'),
  key_id: Base64('SHA-256 of the key\'s SPKI encoding.'),
  public_key: Base64('The raw 32-byte public key.'),
  pem: Type.String({ description: 'The same key as an SPKI PEM (`openssl pkey -pubin` reads it).' }),
}, { title: 'NotaryPublicKey' })

export const TreeSizeParams = Type.Object({ size: DecimalInteger('A tree size, in decimal digits.') })

export const ConsistencyQuery = Type.Object({
  from: DecimalInteger('The older tree size, in decimal digits.'),
  to: DecimalInteger('The newer tree size, in decimal digits, at most the latest signed one.'),
})

export const ConsistencyProof = Type.Object({
  from: Type.Integer(),
  to: Type.Integer(),
  consistency_path: Type.Array(Base64('A subtree hash.'), { description: 'PROOF(from, D[to]) of RFC 9162 §2.1.4.1.' }),
  from_head: Nullable(SignedTreeHead),
  to_head: Nullable(SignedTreeHead),
}, { title: 'ConsistencyProof' })

export const HistoryQuery = Type.Object({
  proof: Type.Optional(Type.Boolean({ default: false, description: 'With each event its leaf in the audit tree and an inclusion proof against the latest signed tree head.' })),
})

export const EventProof = Type.Object({
  leaf_index: Type.Integer(),
  leaf_hash: Base64('The sealed leaf hash: SHA-256(0x00 ‖ RFC 8785 JSON of the sealed record).'),
  stream_id: Type.String(),
  event_id: Type.String(),
  schema_version: Type.Integer({ description: 'The schema version the event was stored with.' }),
  stored: Type.Optional(Type.Object({
    type: Type.String(), schema_version: Type.Integer(), data: Type.Unknown(),
  }, { description: 'Present when the event is shown upcast (renamed or migrated): the type and payload it was stored, and sealed, with.' })),
  sealed: Type.Optional(Type.Object({
    leaf_version: Type.Literal(2),
    recorded_at: Type.String({ description: 'The stored timestamp at its microsecond precision.' }),
    data: Type.String({ description: 'The stored jsonb text of the payload (the shown `data` is its parse, or the upcast of it).' }),
    metadata: Type.String({ description: 'The stored jsonb text of the metadata.' }),
  }, { description: 'Leaf version 2 (sealed as stored, byte for byte): the stored values the leaf was computed from. Absent for a leaf of version 1.' })),
  audit_path: Type.Array(Base64('A subtree hash.'), { description: 'PATH(leaf_index, D[tree_size]) of RFC 9162 §2.1.3.1.' }),
}, { title: 'EventProof' })

export const ProvenEvent = Type.Object({
  ...StoredEvent.properties,
  event_id: Type.Optional(Type.String({ description: 'With ?proof=true: the event\'s id, a field of its sealed record.' })),
  proof: Type.Optional(Nullable(EventProof)),
}, { title: 'ProvenEvent' })

export const SealedAbsentEvent = Type.Object({
  leaf_index: Type.Integer(),
  leaf_hash: Type.String(),
  event_id: Type.String(),
  stream_version: Type.Integer(),
  audit_path: Type.Array(Type.String()),
}, { title: 'SealedAbsentEvent', description: 'An event of this history the notary sealed that the log no longer holds.' })

export const StreamCompleteness = Type.Object({
  tree_size: Type.Integer({ description: 'The tree head the map head was signed with (the history\'s `tree_head`).' }),
  map_root: Base64('Root of the stream map (stream → last leaf, version) over the same leaves.'),
  signature: Base64('Ed25519 over `shipping-platform/stream-map/1`, a zero byte, uint64 tree_size, the tree\'s root, the map\'s root.'),
  key_id: Base64('SHA-256 of the signing key\'s SPKI encoding.'),
  stream_events: Type.Integer({ description: 'Events of this stream sealed as of the tree head: the history must show all of them.' }),
  last_leaf_index: Nullable(Type.Integer({ description: 'The leaf of the stream\'s last event as of the tree head.' })),
  bucket: Type.Integer({ description: 'The stream\'s bucket: the first two bytes of SHA-256 of its id.' }),
  bucket_entries: Type.Array(Base64('An entry hash.'), { description: 'Every entry of the bucket (opaque hashes), in ascending order.' }),
  map_path: Type.Array(Base64('A map node.'), { description: 'The 16 siblings from the bucket up to the map\'s root.' }),
}, { title: 'StreamCompleteness', description: 'Proof that the history holds every event of its stream as of the tree head: a dropped tail fails verification.' })

export const EventHistory = Type.Object({
  events: Type.Array(ProvenEvent),
  stream_id: Type.Optional(Type.String()),
  tree_head: Type.Optional(Nullable(SignedTreeHead)),
  sealed_absent: Type.Optional(Type.Array(SealedAbsentEvent)),
  completeness: Type.Optional(Nullable(StreamCompleteness)),
}, { title: 'EventHistory' })
