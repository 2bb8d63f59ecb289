/**
 * Arrow output is built column by column from the data plane's columnar scan: every type, null
 * in every column, rows a deletion vector removes, batches that split DuckDB's chunks, and row
 * tracking give exactly the Arrow data the row path (`rowsToRecordBatch` over the scanned rows)
 * gives.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { type RecordBatch, Table } from 'apache-arrow'
import { arrowSchemaOf } from '../../src/arrow/arrow-schema.js'
import { rowsToRecordBatch } from '../../src/arrow/rows-to-arrow.js'
import { ROW_TRACKING_FIELDS } from '../../src/scan/row-tracking-scan.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const SCHEMA =
  'id long not null, b byte, s short, i int, f float, d double, flag boolean, name string, bin binary, ' +
  'day date, ts timestamp, tsn timestamp_ntz, amount decimal(12,2), big decimal(38,5), ' +
  'st struct<a: int, t: timestamp>, arr array<long>, m map<string, int>'

/** Row `n`; every nullable column is null in every fifth row, each at its own offset. */
function row(n: number): Record<string, unknown> {
  const isNull = (k: number) => (n + k) % 5 === 0
  return {
    id: BigInt(n),
    b: isNull(0) ? null : (n % 200) - 100,
    s: isNull(1) ? null : -n * 3,
    i: isNull(2) ? null : n * 1000,
    f: isNull(3) ? null : 0.5 * n,
    d: isNull(4) ? null : n / 3,
    flag: isNull(0) ? null : n % 3 === 0,
    name: isNull(1) ? null : `name-${n}-é`,
    bin: isNull(2) ? null : new Uint8Array([n & 255, 0, 255]),
    day: isNull(3) ? null : `19${String(10 + (n % 90))}-02-${String(1 + (n % 28)).padStart(2, '0')}`,
    ts: isNull(4) ? null : `2024-03-01T12:00:00.${String(n).padStart(6, '0')}Z`,
    tsn: isNull(0) ? null : `1969-12-31T23:59:59.${String(n).padStart(6, '0')}`,
    amount: isNull(1) ? null : `-${n}.25`,
    big: isNull(2) ? null : `${n}123456789012345678901234.00001`,
    st: isNull(3) ? null : { a: n, t: '2024-01-01T00:00:00.000001Z' },
    arr: isNull(4) ? null : [BigInt(n), null, 9_007_199_254_740_993n],
    m: isNull(0) ? null : new Map([['k', n]]),
  }
}

/**
 * Every row as text of every value (null where the validity bitmap says so), sorted: the two
 * scans need not return rows in the same order.
 */
function contents(table: Table): string[] {
  const columns = table.schema.fields.map((f) => table.getChild(f.name))
  const rows: string[] = []
  for (let i = 0; i < table.numRows; i++) {
    const values = columns.map((c) => {
      assert.ok(c !== null)
      return c.isValid(i) ? c.get(i) : null
    })
    rows.push(JSON.stringify(values, (_, x) => (typeof x === 'bigint' ? `${x}n` : x)))
  }
  return rows.sort()
}

describe('columnar Arrow scan', () => {
  it('gives exactly the Arrow data of the row path: every type, nulls everywhere, deleted rows, odd batches', async () => {
    const root = await mkdtemp(join(tmpdir(), 'delta-rlc-arrow-columnar-'))
    roots.push(root)
    const table = await DeltaTable.create(join(root, 't'), {
      schema: SCHEMA,
      properties: { 'delta.enableDeletionVectors': 'true', 'delta.enableRowTracking': 'true' },
    })
    try {
      // Two files of more than one DuckDB chunk (2048 rows), and rows deleted from both.
      await table.append(Array.from({ length: 2500 }, (_, n) => row(n)))
      await table.append(Array.from({ length: 2500 }, (_, n) => row(2500 + n)))
      await table.delete('id % 7 = 0 OR id BETWEEN 2000 AND 2600')
      for (const options of [{ batchSize: 1000 }, { batchSize: 3 }, { withRowTracking: true }]) {
        const scan = () => table.scan(options)
        const columnar = await scan().toArrow()
        const fields = [...(await table.snapshot()).schema.fields]
        if (options.withRowTracking === true) fields.push(...ROW_TRACKING_FIELDS)
        const schema = arrowSchemaOf(fields)
        const batches: RecordBatch[] = []
        for await (const rows of scan()) batches.push(rowsToRecordBatch(rows, fields, schema))
        const fromRows = new Table(batches)
        assert.equal(columnar.numRows, 5000 - 715 - 601 + 86)
        assert.equal(columnar.numRows, fromRows.numRows)
        assert.deepEqual(
          columnar.schema.fields.map((f) => [f.name, String(f.type), f.nullable]),
          fromRows.schema.fields.map((f) => [f.name, String(f.type), f.nullable]),
        )
        assert.deepEqual(contents(columnar), contents(fromRows))
        // The streamed batches are the same rows, in batches of at most the size asked for.
        let streamed = 0
        for await (const batch of scan().batches({ format: 'arrow' })) {
          if (options.batchSize !== undefined) assert.ok(batch.numRows <= Math.max(options.batchSize, 2048))
          streamed += batch.numRows
        }
        assert.equal(streamed, columnar.numRows)
      }
    } finally {
      await table.close()
    }
  })
})
