/**
 * Change data feed: DML on a table with `delta.enableChangeDataFeed = true` writes `cdc` files
 * with the rows it changes, and `changes()` (and `delta-rlc changes`) reads them back version by
 * version, with add and remove rows standing in for versions without change data files.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, stat, utimes } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { type DeltaErrorCode, isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { runCliInProcess } from '../helpers/cli-in-process.js'
import { type LogLine, logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-cdf-'))
  roots.push(d)
  return join(d, 't')
}

interface Layout {
  readonly name: string
  readonly dv: boolean
  readonly partitioned: boolean
}

const LAYOUTS: readonly Layout[] = [
  { name: 'deletion vectors', dv: true, partitioned: false },
  { name: 'copy-on-write', dv: false, partitioned: false },
  { name: 'partitioned, deletion vectors', dv: true, partitioned: true },
  { name: 'partitioned, copy-on-write', dv: false, partitioned: true },
]

async function cdfTable(layout: Layout, dir?: string): Promise<{ dir: string; table: DeltaTable }> {
  const location = dir ?? (await tempDir())
  const table = await DeltaTable.create(location, {
    schema: 'id long not null, v string, p int',
    ...(layout.partitioned ? { partitionBy: ['p'] } : {}),
    properties: {
      'delta.enableChangeDataFeed': 'true',
      'delta.enableDeletionVectors': String(layout.dv),
    },
  })
  return { dir: location, table }
}

const row = (id: number, v: string): Record<string, unknown> => ({ id: BigInt(id), v, p: id % 2 })

/** The change rows of a range as `type version id v`, sorted within each version. */
async function feed(table: DeltaTable, from: number, to?: number): Promise<string[]> {
  const rows = await table
    .changes({ startingVersion: from, ...(to === undefined ? {} : { endingVersion: to }) })
    .toArray()
  return rows
    .map((r) => `${r._commit_version} ${r._change_type} ${r.id} ${r.v} ${r.p}`)
    .sort((a, b) => Number(a.split(' ')[0]) - Number(b.split(' ')[0]) || a.localeCompare(b))
}

function cdcLines(lines: readonly LogLine[]): LogLine[] {
  return lines.filter((l) => l.cdc !== undefined).map((l) => l.cdc)
}

describe('change data feed: writing and reading each DML', () => {
  for (const layout of LAYOUTS) {
    it(`${layout.name}: DELETE, UPDATE, MERGE write exactly their change rows; append and OPTIMIZE none`, async () => {
      const { dir, table } = await cdfTable(layout)
      try {
        await table.append([row(1, 'a'), row(2, 'b'), row(3, 'c'), row(4, 'd'), row(5, 'e')]) // v1
        await table.delete('id = 1') // v2
        await table.update({ where: 'id >= 4', set: { v: "'x'" } }) // v3
        await table.merge(
          [
            { id: 2n, v: 'B', p: 0 },
            { id: 3n, v: 'gone', p: 1 },
            { id: 6n, v: 'f', p: 0 },
          ],
          {
            on: 'target.id = source.id',
            whenMatched: [{ if: "source.v = 'gone'", delete: true }, { update: '*' }],
            whenNotMatched: [{ insert: '*' }],
          },
        ) // v4
        await table.optimize() // v5
        assert.deepEqual(await feed(table, 1), [
          '1 insert 1 a 1',
          '1 insert 2 b 0',
          '1 insert 3 c 1',
          '1 insert 4 d 0',
          '1 insert 5 e 1',
          '2 delete 1 a 1',
          '3 update_postimage 4 x 0',
          '3 update_postimage 5 x 1',
          '3 update_preimage 4 d 0',
          '3 update_preimage 5 e 1',
          '4 delete 3 c 1',
          '4 insert 6 f 0',
          '4 update_postimage 2 B 0',
          '4 update_preimage 2 b 0',
        ])
        // The log: appends and OPTIMIZE carry no cdc action, each DML at least one, in the shape the
        // protocol gives (dataChange false, the file's size, its partition values, under _change_data/).
        for (const v of [1, 5]) assert.deepEqual(cdcLines(await logLines(dir, v)), [])
        for (const v of [2, 3, 4]) {
          const cdc = cdcLines(await logLines(dir, v))
          assert.ok(cdc.length > 0, `version ${v} has change data files`)
          for (const c of cdc) {
            assert.deepEqual(Object.keys(c).sort(), ['dataChange', 'partitionValues', 'path', 'size'])
            assert.equal(c.dataChange, false)
            const prefix = layout.partitioned
              ? `_change_data/p=${c.partitionValues.p}/cdc-`
              : '_change_data/cdc-'
            assert.ok(String(c.path).startsWith(prefix), `${c.path} starts with ${prefix}`)
            assert.deepEqual(Object.keys(c.partitionValues), layout.partitioned ? ['p'] : [])
            assert.equal((await stat(join(dir, c.path))).size, Number(c.size))
          }
        }
        const metrics = (await table.history({ limit: 3 })).map((h) => h.commitInfo?.operationMetrics)
        assert.ok(Number((metrics[1] as Record<string, unknown>).numTargetChangeFilesAdded) > 0)
        // The table itself reads as usual: the change data is not part of it.
        const live = (await table.scan().toArray()).map((r) => `${r.id} ${r.v}`).sort()
        assert.deepEqual(live, ['2 B', '4 x', '5 x', '6 f'])
      } finally {
        await table.close()
      }
    })
  }

  it('a DELETE by partition removes whole files without change data files; readers take the removes', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: true })
    try {
      await table.append([row(1, 'a'), row(2, 'b'), row(3, 'c')])
      await table.delete('p = 1')
      assert.deepEqual(cdcLines(await logLines(dir, 2)), [])
      assert.deepEqual(await feed(table, 2), ['2 delete 1 a 1', '2 delete 3 c 1'])
    } finally {
      await table.close()
    }
  })

  it('a MERGE that only inserts writes no change data file; its adds are the inserts', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a')])
      await table.merge([row(1, 'x'), row(2, 'b')], {
        on: 'target.id = source.id',
        whenNotMatched: [{ insert: '*' }],
      })
      assert.deepEqual(cdcLines(await logLines(dir, 2)), [])
      assert.deepEqual(await feed(table, 2), ['2 insert 2 b 0'])
    } finally {
      await table.close()
    }
  })

  it('RESTORE writes no change data file; a file re-added under another deletion vector gives only the rows that vector change shows again or hides', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a'), row(2, 'b'), row(3, 'c')]) // v1
      await table.delete('id = 2') // v2
      await table.restore({ version: 1 }) // v3: remove(P, dv) + add(P)
      await table.restore({ version: 2 }) // v4: remove(P) + add(P, dv)
      assert.deepEqual(cdcLines(await logLines(dir, 3)), [])
      assert.deepEqual(await feed(table, 3), ['3 insert 2 b 0', '4 delete 2 b 0'])
    } finally {
      await table.close()
    }
  })

  it('an overwrite with replaceWhere records the rows it replaced and the new ones; a whole overwrite reads as removes and adds', async () => {
    const { table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a'), row(2, 'b'), row(3, 'c')])
      await table.append([row(2, 'B')], { mode: 'overwrite', replaceWhere: 'id = 2' })
      await table.append([row(9, 'z')], { mode: 'overwrite' })
      assert.deepEqual(await feed(table, 2), [
        '2 delete 2 b 0',
        '2 insert 2 B 0',
        '3 delete 1 a 1',
        '3 delete 2 B 0',
        '3 delete 3 c 1',
        '3 insert 9 z 1',
      ])
    } finally {
      await table.close()
    }
  })

  it('a DELETE reconciled onto a concurrent OPTIMIZE (Case 4b) keeps exactly its own change rows', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: false })
    await table.close()
    const t = await DeltaTable.open(dir, { conflicts: 'all' })
    try {
      await t.append([row(1, 'a'), row(2, 'b')])
      await t.append([row(3, 'c'), row(4, 'd')])
      const del = await t.begin()
      await del.delete('id = 3')
      await t.optimize() // v3
      const result = await del.commit() // v4
      assert.deepEqual(
        result.reconciliations.map((r) => r.kind),
        ['case4b-reverse-remap'],
      )
      assert.deepEqual(await feed(t, 3), ['4 delete 3 c 1'])
      assert.deepEqual((await t.scan().toArray()).map((r) => Number(r.id)).sort(), [1, 2, 4])
    } finally {
      await t.close()
    }
  })
})

describe('change data feed: ranges and errors', () => {
  it('reads a range by timestamps over create, append, delete, update, merge and optimize', async () => {
    const { table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a'), row(2, 'b')])
      await table.delete('id = 1')
      await table.update({ set: { v: "'u'" } })
      await table.merge([row(3, 'c')], { on: 'target.id = source.id', whenNotMatched: [{ insert: '*' }] })
      await table.optimize()
      const times = new Map((await table.history()).map((h) => [Number(h.version), h.timestamp]))
      const rows = await table
        .changes({
          startingTimestamp: new Date(times.get(2)!).toISOString(),
          endingTimestamp: new Date(times.get(4)!),
        })
        .toArray()
      assert.deepEqual(
        rows.map((r) => [r._commit_version, r._change_type, Number(r.id)]),
        [
          [2n, 'delete', 1],
          [3n, 'update_preimage', 2],
          [3n, 'update_postimage', 2],
          [4n, 'insert', 3],
        ],
      )
      // _commit_timestamp is the commit time, as scans return timestamps.
      assert.equal(rows[0]!._commit_timestamp, new Date(times.get(2)!).toISOString().replace('Z', '000Z'))
      // Version 0 (the create) has no rows; the whole range reads the same as its parts.
      assert.deepEqual((await feed(table, 0)).length, (await feed(table, 1)).length)
      const arrow = await table.changes({ startingVersion: 2, endingVersion: 3 }).toArrow()
      assert.equal(arrow.numRows, 3)
      assert.deepEqual(
        arrow.schema.fields.map((f) => f.name),
        ['id', 'v', 'p', '_change_type', '_commit_version', '_commit_timestamp'],
      )
    } finally {
      await table.close()
    }
  })

  it('turned on by ALTER: the protocol gains the feature, and reads before it fail with DELTA_MISSING_CHANGE_DATA', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, { schema: 'id long not null, v string, p int' })
    try {
      await table.append([row(1, 'a'), row(2, 'b')]) // v1
      await table.alter.setProperties({ 'delta.enableChangeDataFeed': 'true' }) // v2
      const protocol = (await table.snapshot()).protocol
      assert.ok(
        protocol.minWriterVersion === 4 ||
          (protocol.minWriterVersion === 7 && (protocol.writerFeatures ?? []).includes('changeDataFeed')),
        `the protocol supports changeDataFeed: ${JSON.stringify(protocol)}`,
      )
      await table.delete('id = 2') // v3
      assert.deepEqual(await feed(table, 2), ['3 delete 2 b 0'])
      await assert.rejects(feed(table, 1), (e: unknown) => {
        assert.ok(isDeltaError(e, 'DELTA_MISSING_CHANGE_DATA'))
        assert.equal((e as { version?: bigint }).version, 1n)
        assert.ok(e.hint)
        return true
      })
      await table.alter.setProperties({ 'delta.enableChangeDataFeed': 'false' }) // v4
      await assert.rejects(feed(table, 2), (e: unknown) => {
        assert.ok(isDeltaError(e, 'DELTA_MISSING_CHANGE_DATA'))
        assert.equal((e as { version?: bigint }).version, 4n)
        return true
      })
    } finally {
      await table.close()
    }
  })

  it('refuses ranges it cannot serve with typed errors, and change data files VACUUM deleted with a hint', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a'), row(2, 'b')])
      await table.delete('id = 1') // v2
      const cases: [Parameters<DeltaTable['changes']>[0], DeltaErrorCode][] = [
        [{ startingVersion: 5 }, 'DELTA_INVALID_CDC_RANGE'],
        [{ startingVersion: 1, endingVersion: 9 }, 'DELTA_INVALID_CDC_RANGE'],
        [{ startingVersion: 2, endingVersion: 1 }, 'DELTA_INVALID_CDC_RANGE'],
        [{ startingTimestamp: '2999-01-01T00:00:00Z' }, 'DELTA_INVALID_CDC_RANGE'],
        [{ startingVersion: 0, endingTimestamp: '2000-01-01T00:00:00Z' }, 'DELTA_INVALID_CDC_RANGE'],
      ]
      for (const [options, code] of cases) {
        await assert.rejects(table.changes(options).toArray(), (e: unknown) => {
          assert.ok(isDeltaError(e, code), `${JSON.stringify(options, (_, v) => String(v))}: ${String(e)}`)
          return true
        })
      }
      for (const bad of [{}, { startingVersion: -1 }, { startingVersion: 1, startingTimestamp: 'x' }]) {
        assert.throws(
          () => table.changes(bad as never),
          (e: unknown) => isDeltaError(e, 'DELTA_INVALID_ARGUMENT'),
        )
      }
      const [cdc] = cdcLines(await logLines(dir, 2))
      assert.ok(cdc)
      // VACUUM deletes change data files past the retention, as Delta's does. They are named by no
      // add or tombstone, so like any untracked file they must also be older than the minimum age.
      const old = new Date(Date.now() - 2 * 3_600_000)
      await utimes(join(dir, cdc.path), old, old)
      const vacuumed = await table.vacuum({ retentionHours: 0, enforceRetentionDuration: false })
      assert.deepEqual(vacuumed.files, [cdc.path])
      await assert.rejects(table.changes({ startingVersion: 2 }).toArray(), (e: unknown) => {
        assert.ok(isDeltaError(e, 'DELTA_CHANGE_DATA_FILE_NOT_FOUND'))
        assert.match(e.hint ?? '', /VACUUM/)
        return true
      })
      // Version 1 does not need the missing file.
      assert.deepEqual(await feed(table, 1, 1), ['1 insert 1 a 1', '1 insert 2 b 0'])
    } finally {
      await table.close()
    }
  })
})

describe('delta-rlc changes', () => {
  it('prints the change rows as JSON lines and as a table, and exits 1 on a usage error', async () => {
    const { dir, table } = await cdfTable({ name: '', dv: true, partitioned: false })
    try {
      await table.append([row(1, 'a'), row(2, 'b')])
      await table.update({ where: 'id = 2', set: { v: "'x'" } })
    } finally {
      await table.close()
    }
    const json = await runCliInProcess(['changes', dir, '--from', '2', '--format', 'json'])
    assert.equal(json.code, 0, json.stderr)
    assert.deepEqual(
      json.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((r) => [r._commit_version, r._change_type, r.id, r.v]),
      [
        [2, 'update_preimage', 2, 'b'],
        [2, 'update_postimage', 2, 'x'],
      ],
    )
    const text = await runCliInProcess(['changes', dir, '--from', '1', '--to', '1'])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /_change_type/)
    assert.equal(text.stdout.match(/ insert /g)?.length, 2)
    const usage = await runCliInProcess(['changes', dir])
    assert.equal(usage.code, 1)
    const beyond = await runCliInProcess(['changes', dir, '--from', '7'])
    assert.equal(beyond.code, 3)
    assert.match(beyond.stderr, /DELTA_INVALID_CDC_RANGE/)
    const help = await runCliInProcess(['changes', '--help'])
    assert.match(help.stdout, /--from/)
    assert.ok((await readdir(join(dir, '_change_data'))).length > 0)
  })
})
