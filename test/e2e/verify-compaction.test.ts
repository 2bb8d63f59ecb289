/**
 * The race verifier's compaction check on real OPTIMIZE commits: untouched tags pass, plain and
 * re-pointed (`remappedCompactionInfo`) alike, and a tag edited in the log afterwards (an offset
 * shifted by one row, a re-pointed tombstone that forgot its read-time DV) is reported with the
 * source, the output and the rows that disagree. The files of several OPTIMIZE commits are read
 * in one request and told apart exactly; a file that cannot be read fails the check as a read of
 * that file alone does.
 */
import assert from 'node:assert/strict'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { COMPACTION_INFO_TAG, REMAPPED_COMPACTION_INFO_TAG } from '../../src/protocol/composition-tags.js'
import { commitKey } from '../../src/protocol/log-files.js'
import { checkCompactionOffsets } from '../../src/race/verify-compaction.js'
import { columnSpecs } from '../../src/scan/column-specs.js'
import type { DeltaTable } from '../../src/table/delta-table.js'
import { commitActions, committed, openTable, settle, span, tableT } from './scenarios/harness.js'

/** A commit line, as far as the edits below look into it. */
interface LoggedAction {
  remove?: { tags?: Record<string, string> }
}

/** Shifts the offset of every tagged source of a commit but the one at row 0 by one row. */
function shiftOffsets(a: LoggedAction): void {
  const tags = a.remove?.tags
  if (tags?.[COMPACTION_INFO_TAG] === undefined) return
  const [entry] = JSON.parse(tags[COMPACTION_INFO_TAG])
  if (entry.rowOffsetInTarget === 0) return
  tags[COMPACTION_INFO_TAG] = JSON.stringify([{ ...entry, rowOffsetInTarget: entry.rowOffsetInTarget + 1 }])
}

/**
 * Three rounds of append, delete and OPTIMIZE on T(300, 3): the first OPTIMIZE compacts the
 * three initial files and the appended one, each later one the previous output (with a DV) and
 * the new file.
 */
async function threeCompactions(table: DeltaTable): Promise<number[]> {
  const versions: number[] = []
  for (let k = 0; k < 3; k++) {
    await table.append(span(1000 + 10 * k, 1010 + 10 * k).map((i) => ({ id: BigInt(i) })))
    await table.delete(`id = ${7 + k}`)
    versions.push(Number((await table.optimize()).version))
  }
  return versions
}

/** Rewrites one commit file's JSON lines in place. */
async function editCommit(dir: string, version: bigint, edit: (action: LoggedAction) => void): Promise<void> {
  const path = join(dir, commitKey(version))
  const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '')
  const out = lines.map((l) => {
    const a = JSON.parse(l) as LoggedAction
    edit(a)
    return JSON.stringify(a)
  })
  await writeFile(path, `${out.join('\n')}\n`)
}

describe('race verifier: compaction offsets', () => {
  it('passes a plain OPTIMIZE and reports an offset shifted by one row', async () => {
    const dir = await tableT(300, 3)
    const table = await openTable(dir, 'all')
    await table.delete('id >= 100 AND id < 103')
    const r = await table.optimize()
    assert.deepEqual(await checkCompactionOffsets(table, [Number(r.version)]), { sources: 3 })
    await editCommit(dir, r.version, (a) => {
      const tags = a.remove?.tags
      if (tags?.[COMPACTION_INFO_TAG] === undefined) return
      const [entry] = JSON.parse(tags[COMPACTION_INFO_TAG])
      if (entry.rowOffsetInTarget === 0) return
      tags[COMPACTION_INFO_TAG] = JSON.stringify([
        { ...entry, rowOffsetInTarget: entry.rowOffsetInTarget + 1 },
      ])
    })
    const reopened = await openTable(dir, 'all')
    const check = await checkCompactionOffsets(reopened, [Number(r.version)])
    assert.ok(check.mismatch, 'the shifted offset is found')
    assert.equal(check.mismatch.version, Number(r.version))
    assert.match(check.mismatch.message, /live row 0 of source .* should sit at row \d+ of .*, which holds/)
    await Promise.all([table.close(), reopened.close()])
  })

  it('passes re-pointed tombstones and reports one whose read-time DV was dropped', async () => {
    const dir = await tableT(300, 3)
    const loser = await openTable(dir, 'all')
    const winner = await openTable(dir, 'all')
    await winner.delete('id >= 100 AND id < 105')
    const txn = await loser.begin()
    await txn.optimize()
    await winner.delete('id = 150')
    await winner.delete('id = 160')
    const r = committed(await settle(txn.commit()))
    assert.equal(r.reconciliations.length, 2)
    assert.deepEqual(await checkCompactionOffsets(loser, [Number(r.version)]), { sources: 3 })
    await editCommit(dir, r.version, (a) => {
      const tag = a.remove?.tags?.[REMAPPED_COMPACTION_INFO_TAG]
      if (tag === undefined) return
      a.remove!.tags![REMAPPED_COMPACTION_INFO_TAG] = JSON.stringify({
        ...JSON.parse(tag),
        readDeletionVector: null,
      })
    })
    const reopened = await openTable(dir, 'all')
    const check = await checkCompactionOffsets(reopened, [Number(r.version)])
    assert.ok(check.mismatch, 'the dropped read-time DV is found')
    assert.match(
      check.mismatch.message,
      /live row 0 of source .* \(id 100\) should sit at row \d+ of .*, which holds id 105/,
    )
    await Promise.all([loser.close(), winner.close(), reopened.close()])
  })

  it('tells the files of several OPTIMIZE commits apart and names the commit whose offset was shifted', async () => {
    const dir = await tableT(300, 3)
    const table = await openTable(dir, 'all')
    const versions = await threeCompactions(table)
    assert.deepEqual(await checkCompactionOffsets(table, versions), { sources: 8 })
    await editCommit(dir, BigInt(versions[1]!), shiftOffsets)
    const reopened = await openTable(dir, 'all')
    const check = await checkCompactionOffsets(reopened, versions)
    assert.equal(check.mismatch?.version, versions[1])
    assert.equal(
      check.sources,
      6,
      'the first commit passed (4 sources), the second failed at its shifted source',
    )
    assert.match(
      check.mismatch?.message ?? '',
      /live row 0 of source .* should sit at row \d+ of .*, which holds/,
    )
    await Promise.all([table.close(), reopened.close()])
  })

  it('fails as a read of that file alone does when a compacted source is gone, unless an earlier mismatch is found', async () => {
    const dir = await tableT(300, 3)
    const table = await openTable(dir, 'all')
    const versions = await threeCompactions(table)
    // The file appended before the second OPTIMIZE (its other source is the first one's output).
    const firstOutput = (await commitActions(dir, BigInt(versions[0]!))).flatMap((a) =>
      'add' in a ? [a.add.path] : [],
    )
    const gone = (await commitActions(dir, BigInt(versions[1]!))).flatMap((a) =>
      'remove' in a && !firstOutput.includes(a.remove.path) ? [a.remove.path] : [],
    )
    assert.equal(gone.length, 1)
    await rm(join(dir, gone[0]!))
    const alone = table.engine.data.scan({
      files: [{ key: gone[0]!, partitionValues: {} }],
      columns: columnSpecs(await table.snapshot(), ['id']),
      physicalOrder: true,
    })
    const direct = await (async () => {
      for await (const _ of alone) return undefined
    })().then(
      () => assert.fail('the removed file was read'),
      (err: unknown) => err,
    )
    assert.ok(isDeltaError(direct))
    await assert.rejects(checkCompactionOffsets(table, versions), { code: direct.code, name: direct.name })
    // A mismatch in an earlier commit of the same batch is found first: the file is never needed.
    await editCommit(dir, BigInt(versions[0]!), shiftOffsets)
    const reopened = await openTable(dir, 'all')
    const check = await checkCompactionOffsets(reopened, versions)
    assert.equal(check.mismatch?.version, versions[0])
    await Promise.all([table.close(), reopened.close()])
  })
})
