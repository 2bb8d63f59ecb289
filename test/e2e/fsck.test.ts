/**
 * FSCK: a live file whose data file or deletion-vector file is gone makes every scan fail; fsck
 * reports it, and with `repair` one FSCK commit removes it, after which the table scans again
 * with exactly the rows of the files that are still there. A concurrent commit that removes a
 * missing file first makes the repair check again; a concurrent append does not disturb it.
 * Also the CLI commands `fsck` and `cleanup-metadata`.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { parse } from 'lossless-json'
import { resolveDvLocation } from '../../src/dv/index.js'
import { InvalidArgumentError } from '../../src/errors/index.js'
import type { AddFile } from '../../src/protocol/actions.js'
import { tombstoneOf } from '../../src/protocol/file-action-rewrites.js'
import { createLocalStore } from '../../src/storage/index.js'
import type { ObjectStore, PutOptions } from '../../src/storage/object-store.js'
import { passThroughStore } from '../../src/storage/pass-through-store.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

/**
 * A table of three files (ids 0-9, 10-19, 20-29), the second with a deletion vector hiding ids
 * 10-12. Returns the dir and the three live files, in id order.
 */
async function threeFileTable(): Promise<{ dir: string; files: AddFile[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-fsck-'))
  roots.push(dir)
  const table = await DeltaTable.create(dir, {
    schema: 'id long',
    properties: { 'delta.enableDeletionVectors': 'true' },
  })
  try {
    for (let f = 0; f < 3; f++)
      await table.append(Array.from({ length: 10 }, (_, i) => ({ id: BigInt(f * 10 + i) })))
    await table.delete('id >= 10 AND id <= 12')
    const live = (await table.snapshot()).activeFiles()
    const minId = (f: AddFile) => Number(JSON.parse(f.stats ?? '{}').minValues?.id)
    const files = [...live].sort((a, b) => minId(a) - minId(b))
    assert.equal(files.length, 3)
    assert.ok(files[1]?.deletionVector !== undefined, 'the middle file has a DV')
    return { dir, files }
  } finally {
    await table.close()
  }
}

function dvKey(f: AddFile): string {
  const loc = resolveDvLocation(f.deletionVector as NonNullable<AddFile['deletionVector']>)
  assert.equal(loc.kind, 'relative')
  return (loc as { path: string }).path
}

async function ids(table: DeltaTable): Promise<bigint[]> {
  const rows = await table.scan().toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => BigInt(from + i))

/** The actions of a commit file, parsed. */
async function commitActions(
  dir: string,
  version: bigint,
): Promise<Record<string, Record<string, unknown>>[]> {
  const text = await readFile(join(dir, '_delta_log', `${String(version).padStart(20, '0')}.json`), 'utf8')
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => parse(l) as Record<string, Record<string, unknown>>)
}

describe('fsck', () => {
  it('reports a missing data file and a missing DV file, repairs them in one FSCK commit, and the table scans the rest exactly', async () => {
    const { dir, files } = await threeFileTable()
    const [first, second, third] = files as [AddFile, AddFile, AddFile]
    await unlink(join(dir, first.path))
    await unlink(join(dir, dvKey(second)))
    const table = await DeltaTable.open(dir)
    try {
      await assert.rejects(() => table.scan().toArray(), 'a scan fails on the missing objects')
      const report = await table.fsck()
      assert.equal(report.repair, false)
      assert.equal(report.commit, undefined)
      assert.equal(report.filesChecked, 3)
      assert.deepEqual(
        [...report.missing].sort((a, b) => (a.path < b.path ? -1 : 1)),
        [
          { path: first.path, missing: 'data', key: first.path },
          { path: second.path, missing: 'deletion-vector', key: dvKey(second) },
        ].sort((a, b) => (a.path < b.path ? -1 : 1)),
      )
      const before = (await table.snapshot()).version

      const repaired = await table.fsck({ repair: true })
      assert.equal(repaired.missing.length, 2)
      assert.equal(repaired.commit?.version, before + 1n)
      assert.equal(repaired.commit?.operation, 'FSCK')
      assert.deepEqual(repaired.commit?.metrics, {
        numFilesChecked: 3,
        numMissingFiles: 1,
        numMissingDeletionVectors: 1,
        numRemovedFiles: 2,
      })
      const actions = await commitActions(dir, before + 1n)
      const removes = actions.filter((a) => 'remove' in a).map((a) => a.remove as Record<string, unknown>)
      assert.deepEqual(removes.map((r) => r.path).sort(), [first.path, second.path].sort())
      for (const r of removes) assert.equal(r.dataChange, true)
      assert.ok(!actions.some((a) => 'add' in a), 'FSCK adds nothing')
      assert.equal(actions.find((a) => 'commitInfo' in a)?.commitInfo?.operation, 'FSCK')

      assert.deepEqual(await ids(table), range(20, 30), 'only the third file is left')
      assert.deepEqual(
        (await table.snapshot()).activeFiles().map((f) => f.path),
        [third.path],
      )
      const again = await table.fsck({ repair: true })
      assert.deepEqual(again.missing, [])
      assert.equal(again.commit, undefined, 'nothing missing: no commit')
      assert.equal((await table.history())[0]?.operation, 'FSCK')
    } finally {
      await table.close()
    }
  })

  it('a concurrent commit that removes a missing file first makes the repair check again; a concurrent append does not conflict', async () => {
    const { dir, files } = await threeFileTable()
    const [first, second] = files as [AddFile, AddFile, AddFile]
    await unlink(join(dir, first.path))
    await unlink(join(dir, dvKey(second)))
    const other = await DeltaTable.open(dir)
    let before: (() => Promise<void>) | undefined
    const inner = createLocalStore(dir)
    const store: ObjectStore = {
      ...passThroughStore(inner),
      put: async (key: string, data: Uint8Array, opts?: PutOptions) => {
        // Right before fsck's commit lands, another writer commits.
        if (/^_delta_log\/\d{20}\.json$/.test(key) && before !== undefined) {
          const run = before
          before = undefined
          await run()
        }
        return inner.put(key, data, opts)
      },
    }
    const table = await DeltaTable.open(dir, { storage: store })
    try {
      const start = (await table.snapshot()).version
      // 1. Another writer removes the file whose data is missing: FSCK checks again and
      //    removes only the file whose DV is missing.
      before = async () => {
        const txn = await other.begin()
        txn.stageActions([{ remove: tombstoneOf(first, BigInt(Date.now()), true) }], { operation: 'DELETE' })
        await txn.commit()
      }
      const repaired = await table.fsck({ repair: true })
      assert.equal(repaired.commit?.version, start + 2n)
      assert.deepEqual(
        repaired.missing.map((m) => [m.path, m.missing]),
        [[second.path, 'deletion-vector']],
      )
      assert.equal(repaired.version, start + 1n, 'the check that committed read the other commit')
      assert.deepEqual(await ids(table), range(20, 30))

      // 2. An append lands while FSCK commits: both stay.
      await unlink(join(dir, (await table.snapshot()).activeFiles()[0]?.path as string))
      before = async () => {
        await other.append([{ id: 100n }])
      }
      const withAppend = await table.fsck({ repair: true })
      assert.equal(withAppend.commit?.version, start + 4n)
      assert.equal(withAppend.commit?.attempts, 2, 'one retry past the append, no second check')
      assert.deepEqual(await ids(table), [100n])
    } finally {
      await table.close()
      await other.close()
    }
  })
})

describe('fsck and cleanupMetadata options', () => {
  it('refuse a misspelt or mistyped option with DELTA_INVALID_ARGUMENT before any I/O', async () => {
    const { dir } = await threeFileTable()
    const table = await DeltaTable.open(dir)
    // Unknown keys and wrong types on purpose: the casts stand for JavaScript callers.
    // biome-ignore lint/suspicious/noExplicitAny: see above
    const bad = (v: unknown): any => v
    try {
      const refused = (argument: string, guess: RegExp) => (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError, String(err))
        assert.equal(err.argument, argument)
        assert.match(err.message, guess)
        return true
      }
      await assert.rejects(() => table.fsck(bad({ repiar: true })), refused('options.repiar', /'repair'/))
      await assert.rejects(
        () => table.fsck(bad({ repair: 'yes' })),
        refused('options.repair', /true or false/),
      )
      await assert.rejects(
        () => table.cleanupMetadata(bad({ dryrun: true })),
        refused('options.dryrun', /'dryRun'/),
      )
      await assert.rejects(
        () => table.cleanupMetadata(bad({ dryRun: 1 })),
        refused('options.dryRun', /true or false/),
      )
      assert.equal((await table.snapshot()).version, 4n, 'nothing was committed')
    } finally {
      await table.close()
    }
  })
})

describe('delta-rlc fsck and cleanup-metadata', () => {
  it('fsck reports as JSON, --repair commits, and cleanup-metadata --dry-run on a young log deletes nothing', async () => {
    const { dir, files } = await threeFileTable()
    await unlink(join(dir, (files[0] as AddFile).path))
    const report = await runCliInProcess(['fsck', dir, '--json'])
    assert.equal(report.code, 0, report.stderr)
    const json = parse(report.stdout) as Record<string, unknown>
    assert.equal(json.repair, false)
    assert.deepEqual(
      (json.missing as Record<string, unknown>[]).map((m) => m.missing),
      ['data'],
    )
    const human = await runCliInProcess(['fsck', dir])
    assert.match(human.stdout, /1 live file with a missing object/)
    assert.match(human.stdout, /--repair/)

    const repair = await runCliInProcess(['fsck', dir, '--repair'])
    assert.equal(repair.code, 0, repair.stderr)
    assert.match(repair.stdout, /repaired: version 5 removes them/)
    const table = await DeltaTable.open(dir)
    try {
      assert.deepEqual(await ids(table), [...range(13, 30)])
    } finally {
      await table.close()
    }

    const cleanup = await runCliInProcess(['cleanup-metadata', dir, '--dry-run', '--json'])
    assert.equal(cleanup.code, 0, cleanup.stderr)
    const c = parse(cleanup.stdout) as Record<string, unknown>
    assert.equal(c.dryRun, true)
    assert.deepEqual(c.files, [])
    assert.equal(c.boundary, null)
    const text = await runCliInProcess(['cleanup-metadata', dir])
    assert.match(text.stdout, /deleted 0 log files/)
    assert.match(text.stdout, /no checkpoint is older than the cutoff/)
  })
})
