/**
 * Create, append and delete through the public API on local tables, each checked against an
 * independent computation of the expected rows, plus the commit loop's behaviour under
 * concurrent writers and ambiguous storage failures.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { DuckDBInstance } from '@duckdb/node-api'
import { createFaultyStore, createLocalStore } from '../../src/storage/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'
import { logLines } from './ops-support.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'delta-rlc-write-'))
  roots.push(d)
  return join(d, 't')
}

const rowsOf = (ids: number[]) => ids.map((i) => ({ id: BigInt(i), name: `n${i}`, part: i % 3 }))
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const idsOf = async (t: DeltaTable) =>
  (await t.scan({ columns: ['id'] }).toArray()).map((r) => Number(r.id as bigint)).sort((a, b) => a - b)

describe('create, append, delete', () => {
  for (const dv of [true, false]) {
    for (const partitioned of [false, true]) {
      it(`delete by data predicate: ${dv ? 'deletion vectors' : 'copy-on-write'}, ${partitioned ? 'partitioned' : 'unpartitioned'}`, async () => {
        const dir = await tempDir()
        const table = await DeltaTable.create(dir, {
          schema: 'id long not null, name string, part int',
          partitionBy: partitioned ? ['part'] : [],
          properties: { 'delta.enableDeletionVectors': String(dv) },
        })
        try {
          const r1 = await table.append(rowsOf(range(50)))
          assert.equal(r1.version, 1n)
          await table.append(rowsOf(range(50).map((i) => i + 50)))
          assert.deepEqual(await idsOf(table), range(100))

          const del = await table.delete('id % 7 = 0 AND id < 60')
          const expected = range(100).filter((i) => !(i % 7 === 0 && i < 60))
          assert.deepEqual(await idsOf(table), expected)
          assert.equal(del.metrics.numDeletedRows, 100 - expected.length)

          const lines = await logLines(dir, Number(del.version))
          const adds = lines
            .filter((l) => l.add)
            .map((l) => l.add as { deletionVector?: unknown; dataChange: boolean })
          const removes = lines.filter((l) => l.remove)
          assert.ok(removes.length > 0)
          if (dv)
            assert.ok(adds.length > 0 && adds.every((a) => a.deletionVector !== undefined && a.dataChange))
          else assert.ok(adds.every((a) => a.deletionVector === undefined))
          // Files holding only ids >= 60 were never touched.
          assert.equal((await table.scan({ where: 'id >= 60' }).toArray()).length, 40)

          const all = await table.delete()
          assert.ok((all.metrics.numRemovedFiles ?? 0) > 0)
          assert.deepEqual(await idsOf(table), [])
        } finally {
          await table.close()
        }
      })
    }
  }

  it('a partition-only delete removes whole files without reading data', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, {
      schema: 'id long, name string, part int',
      partitionBy: ['part'],
    })
    try {
      await table.append(rowsOf(range(30)))
      const res = await table.delete('part = 1')
      assert.deepEqual(
        await idsOf(table),
        range(30).filter((i) => i % 3 !== 1),
      )
      const lines = await logLines(dir, Number(res.version))
      assert.equal(lines.filter((l) => l.add).length, 0)
      assert.equal(lines.filter((l) => l.remove).length, 1)
    } finally {
      await table.close()
    }
  })

  it('DuckDB reads every data file we wrote', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, {
      schema: 'id long, name string, part int',
      partitionBy: ['part'],
    })
    await table.append(rowsOf(range(30)))
    await table.close()
    const files: string[] = []
    for (const d of await readdir(dir, { recursive: true }))
      if (String(d).endsWith('.parquet')) files.push(join(dir, String(d)))
    const inst = await DuckDBInstance.create(':memory:')
    const con = await inst.connect()
    const r = await con.runAndReadAll(
      `SELECT count(*) FROM read_parquet([${files.map((f) => `'${f}'`).join(',')}])`,
    )
    assert.equal(Number(r.getRows()[0]?.[0]), 30)
    con.closeSync()
    inst.closeSync()
  })

  it('refuses bad input with typed errors and commits nothing', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, { schema: 'id long not null, name string' })
    try {
      await assert.rejects(table.append([{ id: null, name: 'x' }]), { code: 'DELTA_INVALID_ARGUMENT' })
      await assert.rejects(table.append([{ id: 1n, nope: 1 }]), { code: 'DELTA_INVALID_ARGUMENT' })
      await assert.rejects(table.append([{ id: 'abc' }]), { code: 'DELTA_INVALID_ARGUMENT' })
      await assert.rejects(table.delete('id = = 3'), { code: 'DELTA_INVALID_PREDICATE' })
      await assert.rejects(table.delete('nope = 3'), { code: 'DELTA_INVALID_ARGUMENT' })
      assert.equal((await table.snapshot()).version, 0n)
      await assert.rejects(DeltaTable.create(dir, { schema: 'id long' }), {
        code: 'DELTA_TABLE_ALREADY_EXISTS',
      })
      const again = await DeltaTable.create(dir, { schema: 'id long', ifExists: 'ignore' })
      assert.equal((await again.snapshot()).version, 0n)
      await again.close()
      await assert.rejects(DeltaTable.create(await tempDir(), { schema: 'id lonk' }), {
        code: 'DELTA_INVALID_ARGUMENT',
      })
      await assert.rejects(DeltaTable.create(await tempDir(), { schema: 'id long', partitionBy: ['x'] }), {
        code: 'DELTA_INVALID_ARGUMENT',
      })
    } finally {
      await table.close()
    }
  })
})

describe('commit loop', () => {
  it('concurrent blind appends both commit, one after the other', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, { schema: 'id long, name string, part int' })
    try {
      const a = await table.begin()
      const b = await table.begin()
      await a.append(rowsOf([1]))
      await b.append(rowsOf([2]))
      const ra = await a.commit()
      const rb = await b.commit()
      assert.equal(ra.version, 1n)
      assert.equal(rb.version, 2n)
      assert.equal(rb.attempts, 2)
      assert.deepEqual(await idsOf(table), [1, 2])
    } finally {
      await table.close()
    }
  })

  it('disjoint deletes on one file abort file-level, and reconcile with row-level concurrency on', async () => {
    for (const conflicts of ['none', 'all'] as const) {
      const dir = await tempDir()
      const table = await DeltaTable.create(
        dir,
        { schema: 'id long, name string, part int', properties: { 'delta.enableDeletionVectors': 'true' } },
        { conflicts },
      )
      try {
        await table.append(rowsOf(range(20)))
        const loser = await table.begin()
        await loser.delete('id = 3')
        await table.delete('id = 7')
        if (conflicts === 'none') {
          // Delta raises whichever file-level check fires first: the winner re-added the file with
          // its new DV, so the added-files check (ConcurrentAppend) does.
          await assert.rejects(loser.commit(), (err: unknown) =>
            /^DELTA_CONCURRENT_(APPEND|DELETE_READ|DELETE_DELETE)$/.test(
              (err as { code?: string }).code ?? '',
            ),
          )
          assert.deepEqual(
            await idsOf(table),
            range(20).filter((i) => i !== 7),
          )
        } else {
          const r = await loser.commit()
          assert.deepEqual(
            r.reconciliations.map((x) => x.kind),
            ['case2-dv-union'],
          )
          assert.deepEqual(
            await idsOf(table),
            range(20).filter((i) => i !== 3 && i !== 7),
          )
          const files = await (await table.snapshot()).files()
          assert.deepEqual(
            files.map((f) => Number(f.deletionVector?.cardinality ?? 0)),
            [2],
          )
        }
      } finally {
        await table.close()
      }
    }
  })

  it('an ambiguous commit put that landed is recognised by its txnId and not applied twice', async () => {
    const dir = await tempDir()
    const created = await DeltaTable.create(dir, { schema: 'id long, name string, part int' })
    await created.close()
    const store = createFaultyStore(createLocalStore(dir), {
      faults: [{ methods: 'put', match: '_delta_log/*.json', nth: 1, effect: 'ambiguous' }],
    })
    const table = await DeltaTable.open(dir, { storage: store })
    try {
      const r = await table.append(rowsOf([1, 2]))
      assert.equal(r.version, 1n)
      assert.equal((await table.snapshot()).version, 1n)
      assert.deepEqual(await idsOf(table), [1, 2])
    } finally {
      await table.close()
    }
  })

  it('idempotent writes: setTransaction reports the version already recorded for an app id', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, { schema: 'id long, name string, part int' })
    try {
      const t1 = await table.begin()
      assert.equal(t1.setTransaction('ingest', 1), undefined)
      await t1.append(rowsOf([1]))
      await t1.commit()
      const t2 = await table.begin()
      assert.equal(t2.setTransaction('ingest', 1), 1n)
    } finally {
      await table.close()
    }
  })
})

describe('history and time travel agree', () => {
  it('a timestamp from history travels back to that version', async () => {
    const dir = await tempDir()
    const table = await DeltaTable.create(dir, { schema: 'id long, name string, part int' })
    try {
      for (let i = 0; i < 3; i++) await table.append(rowsOf([i]))
      const history = await table.history()
      assert.deepEqual(
        history.map((h) => h.version),
        [3n, 2n, 1n, 0n],
      )
      for (const h of history)
        assert.equal((await table.snapshot({ timestamp: h.timestamp })).version, h.version)
    } finally {
      await table.close()
    }
  })
})

describe('commits whose outcome is unknown', () => {
  async function tableWithFaults(readFailures: number) {
    const dir = await tempDir()
    const created = await DeltaTable.create(dir, { schema: 'id long, name string, part int' })
    await created.close()
    const store = createFaultyStore(createLocalStore(dir), {
      faults: [
        { methods: 'put', match: '_delta_log/*.json', nth: 1, effect: 'ambiguous' },
        {
          methods: 'read',
          match: '_delta_log/00000000000000000001.json',
          rate: 1,
          limit: readFailures,
          retryable: true,
        },
      ],
    })
    return DeltaTable.open(dir, { storage: store })
  }

  it('an ambiguous put that cannot be checked at once is settled by the next attempt', async () => {
    const table = await tableWithFaults(1)
    try {
      const r = await table.append(rowsOf([1]))
      assert.equal(r.version, 1n)
      assert.deepEqual(await idsOf(table), [1])
      assert.equal((await table.snapshot()).version, 1n, 'committed once')
    } finally {
      await table.close()
    }
  })

  it('when the log cannot settle it, the error is CommitStateUnknown, never a plain retryable error', async () => {
    const table = await tableWithFaults(1000)
    try {
      await assert.rejects(table.append(rowsOf([1])), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'DELTA_COMMIT_STATE_UNKNOWN')
        assert.match(String((err as Error).message), /landed as version 1/)
        return true
      })
    } finally {
      await table.close()
    }
  })
})
