/**
 * Reads the rows of every golden table with data through the DV-aware scan and compares them
 * with `expected.json`: the latest rows as an unordered multiset, the row count of every listed
 * version, the documented filters, and the documented read failures.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DeltaTable } from '../../src/table/delta-table.js'
import { GOLDEN_SKIP, type GoldenExpectation, loadExpected, prepareGoldenTable } from '../helpers/golden.js'

const expected = await loadExpected()

/** Our row values in the encoding of expected.json (see the fixtures README). */
function normalize(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()
  if (v instanceof Uint8Array) return Buffer.from(v).toString('hex')
  if (v instanceof Map) return [...v.entries()].map(([k, x]) => [normalize(k), normalize(x)])
  if (Array.isArray(v)) return v.map(normalize)
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalize(x)]))
  }
  return v
}

function multiset(rows: readonly unknown[][]): string[] {
  return rows.map((r) => JSON.stringify(r)).sort()
}

async function withTable<T>(
  name: string,
  fn: (t: DeltaTable) => Promise<T>,
  opts?: { specialCharEncoded?: boolean },
) {
  const prepared = await prepareGoldenTable(name, opts)
  const table = await DeltaTable.open(prepared.dir)
  try {
    return await fn(table)
  } finally {
    await table.close()
    await prepared.cleanup()
  }
}

describe('golden tables: rows through the DV-aware scan', { skip: GOLDEN_SKIP }, () => {
  for (const name of Object.keys(expected).sort()) {
    const exp = expected[name] as GoldenExpectation
    if (!exp.expectedRows || exp.rowCount === null) continue

    it(`${name}: latest rows equal expectedRows`, async () => {
      await withTable(name, async (table) => {
        const rows = await table.scan().toArray()
        const cols = exp.expectedRows?.columns ?? []
        const actual = rows.map((r) => cols.map((c) => normalize(r[c])))
        assert.equal(rows.length, exp.rowCount)
        assert.deepEqual(multiset(actual), multiset(exp.expectedRows?.rows ?? []))
      })
    })

    const counted = Object.entries(exp.versions ?? {}).filter(([, f]) => f.rowCount !== undefined)
    if (counted.length > 0 && name !== 'snapshot-vacuumed') {
      it(`${name}: row count at every listed version`, async () => {
        await withTable(name, async (table) => {
          for (const [v, facts] of counted) {
            assert.equal(await table.scan({ version: BigInt(v) }).count(), facts.rowCount, `version ${v}`)
            assert.equal(
              (await table.scan({ version: BigInt(v) }).toArray()).length,
              facts.rowCount,
              `version ${v}`,
            )
          }
        })
      })
    }
  }

  it('snapshot-vacuumed: data of vacuumed versions cannot be read, the latest can', async () => {
    await withTable('snapshot-vacuumed', async (table) => {
      assert.equal(await table.scan().count(), 20)
      for (const v of [0n, 1n, 2n, 3n, 4n]) {
        assert.equal((await table.snapshot({ version: v })).version, v)
        await assert.rejects(table.scan({ version: v }).toArray(), { code: 'DELTA_FILE_NOT_FOUND' })
      }
    })
  })

  it('table-with-dv-special-char: the not-encoded absolute DV path is refused', async () => {
    await withTable(
      'table-with-dv-special-char',
      async (table) => {
        await assert.rejects(table.scan().toArray(), { code: 'DELTA_INVALID_DELETION_VECTOR' })
      },
      { specialCharEncoded: false },
    )
  })

  const filters: Array<[string, string, number]> = [
    ['dv-partitioned-with-checkpoint', 'part >= 7', 12],
    ['dv-partitioned-with-checkpoint', 'part = 0', 2],
    ['dv-with-columnmapping', 'part = 0', 2],
    ['data-skipping-partition-and-data-column', 'part > 0 AND id > 0', 1],
    ['table-with-dv-large', 'value < 200', 198],
    ['partitioned-table-with-dv-large', 'partCol = 0 AND id < 1000', 97],
  ]
  for (const [name, where, count] of filters) {
    it(`${name}: where ${where} -> ${count} rows`, async () => {
      await withTable(name, async (table) => {
        assert.equal((await table.scan({ where }).toArray()).length, count)
        assert.equal(await table.scan({ where }).count(), count)
      })
    })
  }

  it('columns option projects and orders columns', async () => {
    await withTable('dv-partitioned-with-checkpoint', async (table) => {
      const rows = await table.scan({ columns: ['col2', 'part'], where: 'col1 = 31' }).toArray()
      assert.deepEqual(rows, [{ col2: 'foo1', part: 1 }])
      assert.deepEqual(Object.keys(rows[0] ?? {}), ['col2', 'part'])
      await assert.rejects(table.scan({ columns: ['nope'] }).toArray(), { code: 'DELTA_INVALID_ARGUMENT' })
    })
  })
})
