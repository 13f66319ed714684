import { type Kysely, sql } from 'kysely'

// Frozen once landed: each tree head's checkpoint note (C2SP tlog-checkpoint) with the cosignatures
// the configured witnesses returned for it (C2SP tlog-witness), for `/audit/v1/checkpoint` and the
// webhooks. Only a start for the notary: what a witness holds is checked with the witness.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table audit_checkpoints (
      tree_size bigint primary key,
      checkpoint text not null
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_checkpoints`.execute(db)
}
