/**
 * Ingestion, a GDPR erasure and compaction running side by side on one table.
 *
 * Three independent writers share an events table, each through its own handle as separate
 * services would:
 * - an ingester appends batches of new events, continuously;
 * - a privacy job erases every event of one user (DELETE with deletion vectors);
 * - a maintenance job compacts the small files the ingester leaves behind (OPTIMIZE).
 *
 * With file-level conflict checking, the erasure and the compaction would abort each other and
 * the ingester's appends would make the erasure abort too. With the row-level reconciliations on
 * (`conflicts: 'all'`), all of them commit. The example checks the outcome at the end: the user is
 * gone, every other event is there exactly once.
 *
 * Run: npx tsx examples/ingest-gdpr-compaction.ts [table-dir]
 * (In an application, import from 'delta-rlc' instead of '../src/index.js'.)
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type CommitResult, ConcurrentModificationError, DeltaTable } from '../src/index.js'

const ERASED_USER = 42
const INITIAL_EVENTS = 20_000
const INGEST_BATCHES = 6
const BATCH_EVENTS = 2_000

/** Runs a write, and reruns it on the latest version when a concurrent writer truly conflicts. */
async function withRerun(what: string, write: () => Promise<CommitResult>): Promise<CommitResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write()
    } catch (err) {
      if (!(err instanceof ConcurrentModificationError) || attempt === 5) throw err
      console.log(`  ${what}: ${err.code}, rerunning on the latest version`)
    }
  }
}

function events(from: number, count: number, users: (i: number) => number) {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k
    return {
      event_id: BigInt(i),
      user_id: BigInt(users(i)),
      kind: i % 3 === 0 ? 'click' : 'view',
      value: i % 100,
    }
  })
}

async function main(): Promise<void> {
  const given = process.argv[2]
  const root = given ?? (await mkdtemp(join(tmpdir(), 'delta-rlc-example-')))
  const location = join(root, 'events')
  try {
    const setup = await DeltaTable.create(location, {
      schema: 'event_id long not null, user_id long not null, kind string, value int',
      properties: { 'delta.enableDeletionVectors': 'true' },
    })
    // Existing history: 100 users, including the one who asks to be forgotten; small files.
    for (let part = 0; part < 4; part++) {
      const n = INITIAL_EVENTS / 4
      await setup.append(events(part * n, n, (i) => i % 100))
    }
    await setup.close()

    const open = () => DeltaTable.open(location, { conflicts: 'all' })
    const [ingester, privacy, maintenance] = await Promise.all([open(), open(), open()])
    const results: Record<string, CommitResult[]> = { ingest: [], erase: [], compact: [] }
    try {
      await Promise.all([
        (async () => {
          // New events come from new users only: the erased user is not coming back.
          for (let b = 0; b < INGEST_BATCHES; b++) {
            const from = INITIAL_EVENTS + b * BATCH_EVENTS
            results.ingest?.push(
              await withRerun('ingest', () =>
                ingester.append(events(from, BATCH_EVENTS, (i) => 1000 + (i % 50))),
              ),
            )
          }
        })(),
        (async () => {
          results.erase?.push(await withRerun('erase', () => privacy.delete(`user_id = ${ERASED_USER}`)))
        })(),
        (async () => {
          results.compact?.push(await withRerun('compact', () => maintenance.optimize()))
        })(),
      ])
    } finally {
      await Promise.all([ingester.close(), privacy.close(), maintenance.close()])
    }

    for (const [job, list] of Object.entries(results)) {
      for (const r of list) {
        const how = [...new Set(r.reconciliations.map((x) => x.kind))].join(', ')
        console.log(
          `${job.padEnd(8)} version ${String(r.version).padStart(3)}  ${r.operation.padEnd(8)}${how ? ` reconciled: ${how}` : ''}`,
        )
      }
    }

    const check = await DeltaTable.open(location)
    try {
      const erased = await check.scan({ where: `user_id = ${ERASED_USER}` }).count()
      const total = await check.scan().count()
      const expected = INITIAL_EVENTS - INITIAL_EVENTS / 100 + INGEST_BATCHES * BATCH_EVENTS
      const ids = new Set<bigint>()
      for await (const batch of check.scan({ columns: ['event_id'] }))
        for (const r of batch) ids.add(r.event_id as bigint)
      assert.equal(erased, 0, `user ${ERASED_USER} still has events`)
      assert.equal(total, expected, 'live events')
      assert.equal(ids.size, expected, 'distinct event ids')
      const files = (await check.snapshot()).activeFiles().length
      console.log(
        `verified: user ${ERASED_USER} erased, ${total} events kept exactly once, ${files} live files`,
      )
    } finally {
      await check.close()
    }
  } finally {
    if (!given) await rm(root, { recursive: true, force: true })
  }
}

await main()
