/**
 * Values of one's own DuckDB SQL as plain JavaScript (`toPlainValue`, exported by
 * `delta-rlc/duckdb`): timestamps come out as the typed conversion of the table's rows gives them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toJsValue, toPlainValue } from '../../../src/engine-default/duckdb-values.js'
import { createDuckDbInstance } from '../../../src/subpaths/duckdb.js'

describe('toPlainValue', () => {
  it('gives exact text for timestamps, decimals and dates, bytes for blobs', async () => {
    const instance = await createDuckDbInstance({ threads: 1 })
    const con = await instance.connect()
    try {
      const reader = await con.runAndReadAll(
        `SELECT TIMESTAMPTZ '1969-12-31 23:59:59.999999+00' AS at, TIMESTAMP '2024-02-29 12:00:00.000001' AS wall,
           12345678901234567890.12::DECIMAL(22, 2) AS amount, DATE '0001-01-01' AS day, '\\x01\\xFF'::BLOB AS bytes,
           42::BIGINT AS big, NULL AS nothing`,
      )
      const [row] = reader.getRows()
      assert.ok(row)
      assert.deepEqual(row.map(toPlainValue), [
        '1969-12-31T23:59:59.999999Z',
        '2024-02-29T12:00:00.000001',
        '12345678901234567890.12',
        '0001-01-01',
        new Uint8Array([1, 255]),
        42n,
        null,
      ])
      assert.equal(toPlainValue(row[0] ?? null), toJsValue(row[0] ?? null, 'timestamp'))
      assert.equal(toPlainValue(row[1] ?? null), toJsValue(row[1] ?? null, 'timestamp_ntz'))
    } finally {
      con.closeSync()
      instance.closeSync()
    }
  })
})
