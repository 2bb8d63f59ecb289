/**
 * An upsert service: several workers apply change batches (insert, update, delete by key) to one
 * customers table with MERGE, concurrently, each batch exactly once.
 *
 * - Each worker owns a partition of the key space (as consumers of a partitioned queue would), so
 *   their MERGEs touch disjoint rows, often in the same data files. Row-level reconciliation
 *   (`conflicts: 'all'`) lets them commit side by side where file-level Delta would abort them.
 * - Each batch is committed with an idempotency marker, `setTransaction(appId, batchNumber)`: a
 *   batch redelivered after a crash or a timeout is recognised and skipped.
 *
 * Run: npx tsx examples/upsert-service.ts [table-dir]
 * (In an application, import from 'delta-rlc' instead of '../src/index.js'.)
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConcurrentModificationError, DeltaTable } from '../src/index.js'

const WORKERS = 3
const BATCHES_PER_WORKER = 4
const CUSTOMERS = 3_000

/** One change event from the queue. */
interface Change {
  readonly op: 'upsert' | 'delete'
  readonly id: bigint
  readonly name: string
  readonly tier: string
}

/** The batches worker `w` receives: upserts and deletes of keys congruent to `w`. */
function batchesFor(w: number): Change[][] {
  return Array.from({ length: BATCHES_PER_WORKER }, (_, b) =>
    Array.from({ length: 50 }, (_, k) => {
      const id = BigInt((b * 50 + k) * WORKERS + w)
      // Every fifth change deletes the customer; the rest update existing ones or insert new ones.
      return {
        op: k % 5 === 0 ? 'delete' : 'upsert',
        id: id * 7n,
        name: `customer-${id * 7n}-v${b}`,
        tier: b % 2 ? 'gold' : 'basic',
      }
    }),
  )
}

/**
 * Applies one batch with MERGE, exactly once: the batch number is recorded in the same commit,
 * and a batch already recorded for this worker is skipped.
 *
 * @returns false when the batch had already been applied
 */
async function applyBatch(
  table: DeltaTable,
  appId: string,
  batchNo: number,
  changes: readonly Change[],
): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const txn = await table.begin()
    const done = txn.setTransaction(appId, batchNo)
    if (done !== undefined && done >= BigInt(batchNo)) return false
    await txn.merge(
      changes.map((c) => ({ ...c })),
      {
        on: 'target.id = source.id',
        whenMatched: [
          { if: "source.op = 'delete'", delete: true },
          { update: { name: 'source.name', tier: 'source.tier' } },
        ],
        whenNotMatched: [
          {
            if: "source.op = 'upsert'",
            insert: { id: 'source.id', name: 'source.name', tier: 'source.tier' },
          },
        ],
      },
    )
    try {
      const result = await txn.commit()
      const how = [...new Set(result.reconciliations.map((r) => r.kind))].join(', ')
      console.log(
        `${appId} batch ${batchNo} -> version ${result.version}${how ? ` (reconciled: ${how})` : ''}`,
      )
      return true
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt === 5) throw err
      console.log(`${appId} batch ${batchNo}: ${err.code}, retrying on the latest version`)
    }
  }
}

async function main(): Promise<void> {
  const given = process.argv[2]
  const root = given ?? (await mkdtemp(join(tmpdir(), 'delta-rlc-example-')))
  const location = join(root, 'customers')
  try {
    const setup = await DeltaTable.create(location, {
      schema: 'id long not null, name string, tier string',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    await setup.append(
      Array.from({ length: CUSTOMERS }, (_, i) => ({ id: BigInt(i), name: `customer-${i}`, tier: 'basic' })),
    )
    await setup.close()

    // The expected final state, computed from the same changes without Delta.
    const expected = new Map<bigint, { name: string; tier: string }>()
    for (let i = 0; i < CUSTOMERS; i++) expected.set(BigInt(i), { name: `customer-${i}`, tier: 'basic' })
    for (let w = 0; w < WORKERS; w++) {
      for (const batch of batchesFor(w)) {
        for (const c of batch) {
          if (c.op === 'delete') expected.delete(c.id)
          else expected.set(c.id, { name: c.name, tier: c.tier })
        }
      }
    }

    await Promise.all(
      Array.from({ length: WORKERS }, async (_, w) => {
        const table = await DeltaTable.open(location, { conflicts: 'all' })
        try {
          const appId = `upsert-worker-${w}`
          const batches = batchesFor(w)
          for (const [i, batch] of batches.entries()) await applyBatch(table, appId, i + 1, batch)
          // The queue redelivers the last batch: it is recognised and skipped.
          const again = await applyBatch(table, appId, batches.length, batches.at(-1) as Change[])
          assert.equal(again, false, 'a redelivered batch must not be applied twice')
        } finally {
          await table.close()
        }
      }),
    )

    const check = await DeltaTable.open(location)
    try {
      const rows = await check.scan().toArray()
      const actual = new Map(
        rows.map((r) => [r.id as bigint, { name: r.name as string, tier: r.tier as string }]),
      )
      assert.equal(rows.length, actual.size, 'no duplicate keys')
      assert.deepEqual(actual, expected)
      console.log(`verified: ${actual.size} customers, every batch applied exactly once`)
    } finally {
      await check.close()
    }
  } finally {
    if (!given) await rm(root, { recursive: true, force: true })
  }
}

await main()
