/**
 * One data file, many spellings: relative or absolute, `/x`, `file:/x`, `file:///x`,
 * `file://localhost/x`, percent-encoded or not. The engine writes a table; the test then commits,
 * by hand, actions that name its files in another spelling, and checks that replay, the conflict
 * checker and VACUUM treat them as the same file.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { createInlineDescriptor, initDeletionVectors, RoaringBitmapArray } from '../../src/dv/index.js'
import { isDeltaError } from '../../src/errors/index.js'
import { parseCommitFile, serializeCommit } from '../../src/protocol/action-json.js'
import type { Action, AddFile } from '../../src/protocol/actions.js'
import { commitFileName, LOG_DIR } from '../../src/protocol/log-files.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
before(() => initDeletionVectors())
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/** A table of two appends (ids 0-4, then 5-9): its directory and the add of each append. */
async function twoFileTable(dv = false): Promise<{ dir: string; first: AddFile; second: AddFile }> {
  // A space in the directory makes the percent-encoding of absolute paths matter.
  const base = await mkdtemp(join(tmpdir(), 'delta-rlc-paths '))
  roots.push(base)
  const dir = join(base, 't')
  const table = await DeltaTable.create(dir, {
    schema: 'id long not null',
    properties: dv ? { 'delta.enableDeletionVectors': 'true' } : {},
  })
  await table.append([0, 1, 2, 3, 4].map((i) => ({ id: BigInt(i) })))
  await table.append([5, 6, 7, 8, 9].map((i) => ({ id: BigInt(i) })))
  await table.close()
  const addOf = async (v: bigint) =>
    parseCommitFile(await readFile(join(dir, LOG_DIR, commitFileName(v)), 'utf8')).flatMap((a) =>
      'add' in a ? [a.add] : [],
    )[0] as AddFile
  return { dir, first: await addOf(1n), second: await addOf(2n) }
}

/** Absolute spellings of a relative log path of the table at `dir`. */
function spellings(dir: string, path: string): Record<string, string> {
  const abs = encodeURI(join(dir, decodeURIComponent(path)))
  return {
    'bare absolute path': abs,
    'file:/': `file:${abs}`,
    'file:///': `file://${abs}`,
    'file://localhost/': `file://localhost${abs}`,
    'percent-encoded relative path': path.replace(/-/g, '%2D').replace(/\./g, '%2e'),
  }
}

async function commit(dir: string, version: bigint, actions: Action[]): Promise<void> {
  const info: Action = {
    commitInfo: { timestamp: BigInt(Date.now()), operation: 'MANUAL', txnId: randomUUID() },
  }
  await writeFile(join(dir, LOG_DIR, commitFileName(version)), serializeCommit([info, ...actions]))
}

const removeOf = (path: string, add: AddFile, extra: Partial<AddFile> = {}): Action => ({
  remove: {
    path,
    deletionTimestamp: BigInt(Date.now()),
    dataChange: true,
    size: add.size,
    ...(extra.deletionVector ? { deletionVector: extra.deletionVector } : {}),
  },
})

async function ids(dir: string): Promise<number[]> {
  const table = await DeltaTable.open(dir)
  try {
    const rows = await table.scan().toArray()
    assert.equal(await table.scan().count(), rows.length)
    return rows.map((r) => Number(r.id as bigint)).sort((a, b) => a - b)
  } finally {
    await table.close()
  }
}

describe('one file, many spellings of its path', () => {
  const kinds = [
    'bare absolute path',
    'file:/',
    'file:///',
    'file://localhost/',
    'percent-encoded relative path',
  ]

  for (const kind of kinds) {
    it(`a remove spelled as a ${kind} removes the file added with a relative path`, async () => {
      const { dir, first } = await twoFileTable()
      await commit(dir, 3n, [removeOf(spellings(dir, first.path)[kind] as string, first)])
      assert.deepEqual(await ids(dir), [5, 6, 7, 8, 9])
    })

    it(`an add spelled as a ${kind} is read, and removed by its relative path`, async () => {
      const { dir, first } = await twoFileTable()
      const other = spellings(dir, first.path)[kind] as string
      await commit(dir, 3n, [
        removeOf(first.path, first),
        { add: { ...first, path: other, dataChange: false } },
      ])
      assert.deepEqual(await ids(dir), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      await commit(dir, 4n, [removeOf(first.path, first)])
      assert.deepEqual(await ids(dir), [5, 6, 7, 8, 9])
    })
  }

  it('add "/abs/part.parquet" then remove "file:/abs/part.parquet" leaves the table empty of it', async () => {
    const { dir, first, second } = await twoFileTable()
    const abs = encodeURI(join(dir, first.path))
    await commit(dir, 3n, [removeOf(first.path, first), { add: { ...first, path: abs, dataChange: false } }])
    await commit(dir, 4n, [removeOf(`file:${abs}`, first)])
    await commit(dir, 5n, [removeOf(second.path, second)])
    assert.deepEqual(await ids(dir), [])
  })

  it('the (path, deletion vector) key matches across spellings', async () => {
    const { dir, first } = await twoFileTable(true)
    const deletionVector = createInlineDescriptor(RoaringBitmapArray.fromSorted([0]))
    await commit(dir, 3n, [
      removeOf(first.path, first),
      { add: { ...first, deletionVector, dataChange: true } },
    ])
    assert.deepEqual(await ids(dir), [1, 2, 3, 4, 5, 6, 7, 8, 9])
    const abs = `file://${encodeURI(join(dir, first.path))}`
    await commit(dir, 4n, [removeOf(abs, first, { deletionVector })])
    assert.deepEqual(await ids(dir), [5, 6, 7, 8, 9])
  })

  it('a concurrent remove spelled as an absolute path conflicts with a transaction that read the file', async () => {
    const { dir, first } = await twoFileTable()
    const table = await DeltaTable.open(dir)
    try {
      const txn = await table.begin()
      await txn.delete('id = 1')
      await commit(dir, 3n, [removeOf(`file://localhost${encodeURI(join(dir, first.path))}`, first)])
      await assert.rejects(
        () => txn.commit(),
        (err: unknown) => isDeltaError(err, 'DELTA_CONCURRENT_DELETE_READ', 'DELTA_CONCURRENT_DELETE_DELETE'),
      )
    } finally {
      await table.close()
    }
    assert.deepEqual(await ids(dir), [5, 6, 7, 8, 9])
  })

  it('VACUUM keeps a live file the log names by an absolute path and deletes it once removed in another spelling', async () => {
    const { dir, first } = await twoFileTable()
    const abs = `file:///${encodeURI(join(dir, first.path)).slice(1)}`
    await commit(dir, 3n, [removeOf(first.path, first), { add: { ...first, path: abs, dataChange: false } }])
    const file = join(dir, decodeURIComponent(first.path))
    const table = await DeltaTable.open(dir)
    try {
      await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(existsSync(file))
      assert.deepEqual(await ids(dir), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      await commit(dir, 4n, [removeOf(first.path.replace(/-/g, '%2D'), first)])
      await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.ok(!existsSync(file))
    } finally {
      await table.close()
    }
    assert.deepEqual(await ids(dir), [5, 6, 7, 8, 9])
  })
})
