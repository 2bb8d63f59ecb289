/**
 * The race verifier's compaction check on real OPTIMIZE commits: untouched tags pass, plain and
 * re-pointed (`remappedCompactionInfo`) alike, and a tag edited in the log afterwards (an offset
 * shifted by one row, a re-pointed tombstone that forgot its read-time DV) is reported with the
 * source, the output and the rows that disagree.
 */
import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { COMPACTION_INFO_TAG, REMAPPED_COMPACTION_INFO_TAG } from '../../src/conflict/composition-tags.js'
import { commitKey } from '../../src/protocol/log-files.js'
import { checkCompactionOffsets } from '../../src/race/verify-compaction.js'
import { committed, openTable, settle, tableT } from './scenarios/harness.js'

/** A commit line, as far as the edits below look into it. */
interface LoggedAction {
  remove?: { tags?: Record<string, string> }
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
})
