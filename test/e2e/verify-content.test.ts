/**
 * The race verifier's content comparison and its compaction check on copies of one race table
 * (append, update and OPTIMIZE writers), each tampered with behind the race's back in a commit
 * dressed as the append writer's operation 100: a value changed, a key inserted twice, a key the
 * replay never had, and an OPTIMIZE tag shifted by one row. Each is reported at its version with
 * the rows that disagree; the untouched table passes.
 */
import assert from 'node:assert/strict'
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { COMPACTION_INFO_TAG } from '../../src/protocol/composition-tags.js'
import { commitKey } from '../../src/protocol/log-files.js'
import { type RaceConfig, type RunEvent, readEvents, runRace, verifyRace } from '../../src/race/index.js'
import { appIdOf } from '../../src/race/plan.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import type { Transaction } from '../../src/table/transaction.js'

describe('race verifier: content and compaction on tampered copies', () => {
  let root: string
  let location: string
  let eventsPath: string
  let config: RaceConfig
  let copies = 0

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'delta-rlc-verify-content-'))
    location = join(root, 'table')
    const report = await runRace({
      location,
      writers: { append: 1, update: 1, optimize: 1 },
      conflicts: 'all',
      seed: 5,
      durationMs: 60_000,
      opsPerWriter: 3,
      rows: 500,
      initialFiles: 2,
    })
    const run = report.runs[0]!
    eventsPath = run.eventsPath
    config = ((await readEvents(eventsPath))[0] as RunEvent).config
    assert.ok(run.verify?.ok, 'the untouched table passes')
  })
  after(() => rm(root, { recursive: true, force: true }))

  /** A copy of the race table with one more commit, staged by `stage` under the append writer's marker. */
  async function tampered(
    stage: (txn: Transaction, smallest: { id: number; val: number; tag: string }) => Promise<unknown>,
  ): Promise<{ dir: string; version: number; smallest: { id: number; val: number; tag: string } }> {
    const dir = join(root, `copy-${copies++}`)
    await cp(location, dir, { recursive: true })
    const table = await DeltaTable.open(dir)
    try {
      const rows = (await table.scan({ columns: ['id', 'val', 'tag'] }).toArray())
        .map((r) => ({ id: Number(r.id), val: Number(r.val), tag: String(r.tag) }))
        .sort((a, b) => a.id - b.id)
      const smallest = rows[0]!
      const txn = await table.begin()
      txn.setTransaction(appIdOf(config.runId, 0), 100)
      await stage(txn, smallest)
      return { dir, version: Number((await txn.commit()).version), smallest }
    } finally {
      await table.close()
    }
  }

  it('names the key whose value was changed, with both rows', async () => {
    const t = await tampered((txn, s) => txn.update({ where: `id = ${s.id}`, set: { val: 'val + 1000' } }))
    const v = await verifyRace(t.dir, eventsPath, { fullCheckEvery: 1000 })
    assert.equal(v.ok, false)
    const d = v.firstDivergence!
    assert.equal(d.check, 'content-matches-serial-replay')
    assert.equal(d.version, t.version)
    assert.equal(d.key, t.smallest.id)
    assert.equal(d.expected, `{id: ${t.smallest.id}, val: ${t.smallest.val}, tag: ${t.smallest.tag}}`)
    assert.equal(d.actual, `{id: ${t.smallest.id}, val: ${t.smallest.val + 1000}, tag: ${t.smallest.tag}}`)
    assert.equal(v.checks.find((c) => c.name === 'no-duplicate-keys')?.ok, true)
  })

  it('reports a key inserted twice as a duplicate', async () => {
    const t = await tampered((txn, s) => txn.append([{ id: BigInt(s.id), val: 1n, tag: 'again' }]))
    const v = await verifyRace(t.dir, eventsPath, { fullCheckEvery: 1000 })
    assert.equal(v.ok, false)
    const d = v.firstDivergence!
    assert.equal(d.version, t.version)
    assert.equal(d.key, t.smallest.id)
    assert.equal(d.actual, `1 duplicate rows, first for key ${t.smallest.id}`)
    assert.equal(v.checks.find((c) => c.name === 'no-duplicate-keys')?.ok, false)
  })

  it('names a key the replay does not have when it is the smallest that differs', async () => {
    const t = await tampered((txn) => txn.append([{ id: -5n, val: 1n, tag: 'stray' }]))
    const v = await verifyRace(t.dir, eventsPath, { fullCheckEvery: 1000 })
    const d = v.firstDivergence!
    assert.equal(d.version, t.version)
    assert.equal(d.key, -5)
    assert.equal(d.expected, 'no row')
    assert.equal(d.actual, '{id: -5, val: 1, tag: stray}')
    assert.match(d.message, new RegExp(`version ${t.version}, key -5: the table has \\{id: -5`))
  })

  it('reports an OPTIMIZE tag shifted by one row at its version, the content still matching', async () => {
    const dir = join(root, `copy-${copies++}`)
    await cp(location, dir, { recursive: true })
    // The last OPTIMIZE with a source past row 0 of its output.
    let shifted: number | undefined
    for (
      let version = (await readdirVersions(dir)).at(-1)!;
      version > 0 && shifted === undefined;
      version--
    ) {
      const path = join(dir, commitKey(BigInt(version)))
      const lines = (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '')
      let edited = false
      const out = lines.map((l) => {
        const a = JSON.parse(l)
        const tag = a.remove?.tags?.[COMPACTION_INFO_TAG]
        if (tag === undefined) return l
        const [entry] = JSON.parse(tag)
        if (entry.rowOffsetInTarget === 0) return l
        edited = true
        a.remove.tags[COMPACTION_INFO_TAG] = JSON.stringify([
          { ...entry, rowOffsetInTarget: entry.rowOffsetInTarget + 1 },
        ])
        return JSON.stringify(a)
      })
      if (!edited) continue
      await writeFile(path, `${out.join('\n')}\n`)
      shifted = version
    }
    assert.ok(shifted !== undefined, 'the race committed an OPTIMIZE of several files')
    const v = await verifyRace(dir, eventsPath)
    assert.equal(v.ok, false)
    assert.equal(v.firstDivergence?.check, 'compaction-offsets-exact')
    assert.equal(v.firstDivergence?.version, shifted)
    assert.equal(v.checks.find((c) => c.name === 'compaction-offsets-exact')?.ok, false)
    assert.equal(v.checks.find((c) => c.name === 'content-matches-serial-replay')?.ok, true)
  })
})

/** The commit versions in a table's log, ascending. */
async function readdirVersions(dir: string): Promise<number[]> {
  return (await readdir(join(dir, '_delta_log')))
    .filter((n) => /^\d{20}\.json$/.test(n))
    .map((n) => Number(n.slice(0, 20)))
    .sort((a, b) => a - b)
}
