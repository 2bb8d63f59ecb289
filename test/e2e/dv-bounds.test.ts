/**
 * A deletion vector with a valid checksum that names rows past the end of its data file is
 * refused with DELTA_INVALID_DELETION_VECTOR, naming the data file, by count() and scan() alike,
 * for inline and on-disk DVs. The table is written by the engine; the test then commits, by hand,
 * a DV update of its data file with the bad DV. Older versions stay readable.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  buildDvFile,
  createFileDescriptor,
  createInlineDescriptor,
  type DvDescriptor,
  initDeletionVectors,
  RoaringBitmapArray,
} from '../../src/dv/index.js'
import { isDeltaError } from '../../src/errors/index.js'
import { parseCommitFile, serializeCommit } from '../../src/protocol/action-json.js'
import type { AddFile } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { createLocalStore } from '../../src/storage/local-store.js'
import type { ByteRange, StoreCallOptions } from '../../src/storage/object-store.js'
import { passThroughStore } from '../../src/storage/pass-through-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const ROWS = 10
const roots: string[] = []
before(() => initDeletionVectors())
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** A DV table with one data file of ROWS rows (commit 1), then a DV update of it (commit 2). */
async function tableWithDv(
  dv: (dir: string) => Promise<DvDescriptor>,
): Promise<{ dir: string; file: string }> {
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-dvbounds-'))
  roots.push(base)
  const dir = join(base, 't')
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  await table.append(Array.from({ length: ROWS }, (_, i) => ({ id: BigInt(i) })))
  await table.close()
  const text = await readFile(join(dir, LOG_DIR, commitFileName(1n)), 'utf8')
  const add = parseCommitFile(text).flatMap((a) => ('add' in a ? [a.add] : []))[0] as AddFile
  const now = BigInt(Date.now())
  const withDv: AddFile = { ...add, deletionVector: await dv(dir), dataChange: true }
  await writeFile(
    join(dir, LOG_DIR, commitFileName(2n)),
    serializeCommit([
      { commitInfo: { timestamp: now, operation: 'DELETE', txnId: randomUUID() } },
      { remove: { path: add.path, deletionTimestamp: now, dataChange: true, size: add.size } },
      { add: withDv },
    ]),
  )
  return { dir, file: add.path }
}

async function onDisk(dir: string, positions: number[]): Promise<DvDescriptor> {
  const uuid = randomUUID()
  const built = buildDvFile([RoaringBitmapArray.fromSorted(positions)])
  await writeFile(join(dir, `deletion_vector_${uuid}.bin`), built.bytes)
  const entry = built.entries[0]!
  return createFileDescriptor({ uuid, ...entry })
}

async function refusal(run: () => Promise<unknown>, file: string): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(isDeltaError(err, 'DELTA_INVALID_DELETION_VECTOR'), String(err))
    assert.ok((err as Error).message.includes(file), (err as Error).message)
    return true
  })
}

async function assertRefused(dir: string, file: string): Promise<void> {
  const table = await DeltaTable.open(dir)
  try {
    await refusal(() => table.scan().count(), file)
    await refusal(() => table.scan().toArray(), file)
    await refusal(() => table.scan({ where: 'id >= 0' }).count(), file)
    // The version before the bad DV reads in full.
    assert.equal(await table.scan({ version: 1n }).count(), ROWS)
    assert.equal((await table.scan({ version: 1n }).toArray()).length, ROWS)
  } finally {
    await table.close()
  }
}

describe('deletion vectors that name rows past the end of the file', () => {
  it('an inline DV deleting position numRecords is refused by count and scan', async () => {
    const { dir, file } = await tableWithDv(async () =>
      createInlineDescriptor(RoaringBitmapArray.fromSorted([3, ROWS])),
    )
    await assertRefused(dir, file)
  })

  it('an on-disk DV deleting positions past the end is refused by count and scan', async () => {
    const { dir, file } = await tableWithDv((d) => onDisk(d, [0, ROWS, ROWS + 5]))
    await assertRefused(dir, file)
  })

  it('a DV whose cardinality exceeds numRecords is refused from the log alone', async () => {
    // The descriptor points at a DV file that does not exist: the refusal must come from the
    // cardinality in the log, before any DV is read.
    const { dir, file } = await tableWithDv(async () =>
      createFileDescriptor({ uuid: randomUUID(), offset: 1, sizeInBytes: 40, cardinality: ROWS + 2 }),
    )
    const table = await DeltaTable.open(dir)
    try {
      for (const run of [() => table.scan().count(), () => table.scan().toArray()]) {
        await assert.rejects(run, (err: unknown) => {
          assert.ok(isDeltaError(err, 'DELTA_INVALID_DELETION_VECTOR'), String(err))
          assert.match(
            (err as Error).message,
            new RegExp(`deletes ${ROWS + 2} rows, but the file has ${ROWS} rows`),
          )
          assert.ok((err as Error).message.includes(file))
          return true
        })
      }
    } finally {
      await table.close()
    }
  })

  it('a plain count loads each DV once per engine, not once per count', async () => {
    const { dir } = await tableWithDv((d) => onDisk(d, [0, ROWS - 1]))
    const inner = createLocalStore(dir)
    const dvReads: string[] = []
    const counting = {
      ...passThroughStore(inner),
      read: (key: string, range?: ByteRange, opts?: StoreCallOptions) => {
        if (key.includes('deletion_vector_')) dvReads.push(key)
        return inner.read(key, range, opts)
      },
    }
    const table = await DeltaTable.open(dir, { storage: counting })
    try {
      for (let i = 0; i < 3; i++) assert.equal(await table.scan().count(), ROWS - 2)
      assert.equal(dvReads.length, 1, `DV reads: ${dvReads.join(', ')}`)
    } finally {
      await table.close()
    }
  })

  it('a DV deleting exactly the last row is accepted', async () => {
    const { dir } = await tableWithDv((d) => onDisk(d, [0, ROWS - 1]))
    const table = await DeltaTable.open(dir)
    try {
      assert.equal(await table.scan().count(), ROWS - 2)
      const ids = (await table.scan().toArray()).map((r) => Number(r.id as bigint)).sort((a, b) => a - b)
      assert.deepEqual(
        ids,
        Array.from({ length: ROWS }, (_, i) => i).filter((i) => i !== 0 && i !== ROWS - 1),
      )
    } finally {
      await table.close()
    }
  })
})
