/**
 * Stages a planned operation on a transaction through the public transaction API.
 */
import { type CommitResult, UnsupportedError } from '../index.js'
import type { PlannedOp } from './plan.js'

/**
 * The part of a transaction the race drives (the shapes of api.md). UPDATE, MERGE and OPTIMIZE
 * are optional so that a build without one of them still runs the other kinds and reports the
 * missing one as unsupported.
 */
export interface RaceTransaction {
  readonly readVersion: bigint
  setTransaction(appId: string, version: number | bigint): bigint | undefined
  append(rows: readonly Readonly<Record<string, unknown>>[]): Promise<unknown>
  delete(where?: string): Promise<unknown>
  update?(options: { where?: string; set: Readonly<Record<string, string>> }): Promise<unknown>
  merge?(
    sourceRows: readonly Readonly<Record<string, unknown>>[],
    options: {
      on: string
      whenMatched?: ReadonlyArray<{ update: Readonly<Record<string, string>> }>
      whenNotMatched?: ReadonlyArray<{ insert: '*' }>
      whenNotMatchedBySource?: ReadonlyArray<{ if: string; update: Readonly<Record<string, string>> }>
      sourceSchema?: string
    },
  ): Promise<unknown>
  optimize?(options?: { targetFileSize?: number; zOrderBy?: readonly string[] }): Promise<unknown>
  commit(): Promise<CommitResult>
}

/**
 * The predicate `id IN (...)` over explicit keys.
 *
 * @param keys - the keys
 * @returns the SQL predicate text
 */
export function keyPredicate(keys: readonly number[]): string {
  return `id IN (${keys.join(', ')})`
}

/**
 * Stages `op` on `txn`: appends write rows with fresh keys; DELETE and UPDATE act on `id IN
 * (keys)`; MERGE upserts one source row per key (matched: add `delta` to `val`; not matched:
 * insert); a merge-insert MERGE also adds `delta` to the rows its NOT MATCHED BY SOURCE clause
 * selects by tag; OPTIMIZE compacts, and a Z-order OPTIMIZE rewrites the table in Z-order.
 *
 * @param txn - an open transaction
 * @param op - the planned operation
 * @throws {UnsupportedError} when the transaction lacks the operation
 */
export async function stageOperation(txn: RaceTransaction, op: PlannedOp): Promise<void> {
  switch (op.kind) {
    case 'append':
      await txn.append(op.keys.map((id) => ({ id: BigInt(id), val: 1n, tag: op.tag })))
      return
    case 'delete':
      await txn.delete(keyPredicate(op.keys))
      return
    case 'update':
      if (txn.update === undefined) throw missing('UPDATE')
      await txn.update({
        where: keyPredicate(op.keys),
        set: { val: `val + ${op.delta}`, tag: `'${op.tag}'` },
      })
      return
    case 'merge':
      if (txn.merge === undefined) throw missing('MERGE')
      await txn.merge(
        op.keys.map((id) => ({ id: BigInt(id), val: BigInt(op.delta), tag: op.tag })),
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: { val: 'target.val + source.val', tag: 'source.tag' } }],
          whenNotMatched: [{ insert: '*' }],
          sourceSchema: 'id long not null, val long not null, tag string',
        },
      )
      return
    case 'merge-insert':
      if (txn.merge === undefined) throw missing('MERGE')
      await txn.merge(
        op.keys.map((id) => ({ id: BigInt(id), val: BigInt(op.delta), tag: op.tag })),
        {
          on: 'target.id = source.id',
          whenMatched: [{ update: { val: 'target.val + source.val', tag: 'source.tag' } }],
          whenNotMatched: [{ insert: '*' }],
          whenNotMatchedBySource: [
            {
              if: `target.tag = '${op.bySourceTag}'`,
              update: { val: `target.val + ${op.delta}`, tag: `'${op.updatedTag}'` },
            },
          ],
          sourceSchema: 'id long not null, val long not null, tag string',
        },
      )
      return
    case 'optimize':
      if (txn.optimize === undefined) throw missing('OPTIMIZE')
      await txn.optimize({})
      return
    case 'zorder':
      if (txn.optimize === undefined) throw missing('OPTIMIZE')
      await txn.optimize({ zOrderBy: op.zOrderBy })
      return
    case 'vacuum':
      throw new UnsupportedError('VACUUM runs outside a transaction', {
        hint: 'The race writer runs it through table.vacuum().',
      })
  }
}

function missing(what: string): UnsupportedError {
  return new UnsupportedError(`This build of delta-rlc has no ${what} on transactions`, {
    hint: 'Run the race without writers of that kind.',
  })
}
