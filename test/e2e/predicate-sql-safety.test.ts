/**
 * Predicates reach DuckDB intact and DuckDB's verdicts reach the caller as the right error.
 *
 * A string literal holding a NUL character is rendered so DuckDB reads it whole (its parser ends
 * a quoted string at NUL), so such a row can be found, updated, merged on and deleted by value. A
 * predicate DuckDB cannot evaluate (a value that does not convert, a decimal out of its type's
 * range, an integer overflow, a function over the wrong type) is DELTA_INVALID_PREDICATE, an
 * expression that cannot be evaluated is DELTA_INVALID_ARGUMENT, a damaged data file is
 * DELTA_STORAGE_ERROR, and in every case the table is left as it was.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

type Row = Record<string, unknown>

const ROWS: readonly Row[] = [
  { id: 1n, name: 'a\u0000b', amount: '1.50' },
  { id: 2n, name: 'ab', amount: '12.00' },
  { id: 3n, name: '\u0000', amount: '3.00' },
  { id: 4n, name: "it's\u0000", amount: '4.00' },
  { id: 5n, name: 'a', amount: '5.00' },
]

let root: string
let seq = 0

async function newTable(deletionVectors: boolean): Promise<DeltaTable> {
  const table = await DeltaTable.create(join(root, `t${seq++}`), {
    schema: 'id long not null, name string, amount decimal(10,2)',
    properties: { 'delta.enableDeletionVectors': String(deletionVectors) },
  })
  await table.append(ROWS)
  return table
}

async function rowsOf(table: DeltaTable, where?: string): Promise<Row[]> {
  const rows = await table.scan(where === undefined ? {} : { where }).toArray()
  return rows.sort((a, b) => Number((a.id as bigint) - (b.id as bigint)))
}

async function idsOf(table: DeltaTable, where?: string): Promise<number[]> {
  return (await rowsOf(table, where)).map((r) => Number(r.id))
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-predicate-sql-'))
})
after(async () => {
  await rm(root, { recursive: true, force: true })
})

describe('NUL characters in string literals', () => {
  for (const dv of [true, false]) {
    it(`rows holding NUL are deleted by value, the others remain (deletionVectors=${dv})`, async () => {
      const table = await newTable(dv)
      try {
        const first = await table.delete("name = 'a\u0000b'")
        assert.equal(first.metrics.numDeletedRows, 1)
        assert.deepEqual(await idsOf(table), [2, 3, 4, 5])
        await table.delete("name IN ('\u0000', 'it''s\u0000')")
        assert.deepEqual(await rowsOf(table), [ROWS[1], ROWS[4]])
      } finally {
        await table.close()
      }
    })
  }

  it('scan, count, LIKE and UPDATE see exactly the rows whose text holds the NUL', async () => {
    const table = await newTable(true)
    try {
      assert.deepEqual(await rowsOf(table, "name = 'a\u0000b'"), [ROWS[0]])
      assert.equal(await table.scan({ where: "name = '\u0000'" }).count(), 1)
      assert.deepEqual(await idsOf(table, "name LIKE 'a\u0000%'"), [1])
      assert.deepEqual(await idsOf(table, "name LIKE '%\u0000'"), [3, 4])
      await table.update({ where: "name = 'it''s\u0000'", set: { name: "'x\u0000y'" } })
      assert.deepEqual(await rowsOf(table, "name = 'x\u0000y'"), [
        { id: 4n, name: 'x\u0000y', amount: '4.00' },
      ])
      assert.deepEqual(await idsOf(table), [1, 2, 3, 4, 5])
    } finally {
      await table.close()
    }
  })

  it('MERGE joins on a key holding NUL and updates only that row', async () => {
    const table = await newTable(true)
    try {
      const r = await table.merge([{ name: 'a\u0000b', amount: '9.00' }], {
        on: 'target.name = source.name',
        whenMatched: [{ update: { amount: 'source.amount' } }],
      })
      assert.equal(r.metrics.numTargetRowsUpdated, 1)
      assert.deepEqual(await rowsOf(table), [{ ...ROWS[0], amount: '9.00' }, ...ROWS.slice(1)])
    } finally {
      await table.close()
    }
  })
})

describe("DuckDB's verdict on a predicate or expression", () => {
  let table: DeltaTable
  let version: bigint

  before(async () => {
    table = await newTable(true)
    version = (await table.snapshot()).version
  })
  after(async () => {
    await table.close()
  })

  const PREDICATES = [
    ['a value that does not convert (Conversion)', 'CAST(name AS int) = 1'],
    ['a decimal outside its type (Conversion)', 'CAST(amount AS decimal(3,2)) = 12'],
    ['an integer overflow (Out of Range)', 'abs(id * 9223372036854775807) > 0'],
    ['a function over the wrong type (Binder)', "lower(id) = 'x'"],
  ] as const

  const isPredicateError = (err: unknown): boolean =>
    isDeltaError(err, 'DELTA_INVALID_PREDICATE') &&
    /^The predicate cannot be evaluated over the table: (Conversion|Out of Range|Binder) Error: /.test(
      err.message,
    )

  for (const [what, where] of PREDICATES) {
    it(`${what}: scan, count and DELETE fail with DELTA_INVALID_PREDICATE, nothing changes`, async () => {
      await assert.rejects(table.scan({ where }).toArray(), isPredicateError)
      await assert.rejects(table.scan({ where }).count(), isPredicateError)
      await assert.rejects(table.delete(where), isPredicateError)
      assert.equal((await table.snapshot()).version, version)
      assert.deepEqual(await rowsOf(table), ROWS)
    })
  }

  it('an UPDATE value out of its column type fails with DELTA_INVALID_ARGUMENT, nothing changes', async () => {
    await assert.rejects(
      table.update({ where: 'id = 2', set: { amount: '1e40' } }),
      (err) => isDeltaError(err, 'DELTA_INVALID_ARGUMENT') && /Conversion Error/.test(err.message),
    )
    assert.equal((await table.snapshot()).version, version)
    assert.deepEqual(await rowsOf(table), ROWS)
  })

  it('a MERGE expression that does not convert fails with DELTA_INVALID_ARGUMENT, nothing changes', async () => {
    await assert.rejects(
      table.merge([{ id: 2n, name: 'not a number' }], {
        on: 'target.id = source.id',
        whenMatched: [{ update: { amount: 'CAST(source.name AS decimal(10,2))' } }],
      }),
      (err) =>
        isDeltaError(err, 'DELTA_INVALID_ARGUMENT') &&
        /^Cannot evaluate the MERGE: Conversion Error/.test(err.message),
    )
    assert.equal((await table.snapshot()).version, version)
    assert.deepEqual(await rowsOf(table), ROWS)
  })
})

it('a damaged data file under a predicate is DELTA_STORAGE_ERROR, not a predicate error', async () => {
  const table = await newTable(true)
  try {
    const dir = join(root, `t${seq - 1}`)
    const file = (await readdir(dir)).find((f) => f.endsWith('.parquet')) as string
    await writeFile(join(dir, file), 'not parquet at all, only text')
    for (const run of [() => table.scan({ where: 'id > 0' }).toArray(), () => table.delete('id = 1')]) {
      await assert.rejects(
        run(),
        (err) => isDeltaError(err, 'DELTA_STORAGE_ERROR') && /magic bytes/.test(err.message),
      )
    }
  } finally {
    await table.close()
  }
})
