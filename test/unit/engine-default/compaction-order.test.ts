/**
 * The read-back check behind OPTIMIZE's composition tags: a compacted file is accepted only if
 * every source's live rows sit exactly at the recorded offset, in order. Swapped, shifted or
 * reordered runs are all caught.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import {
  checkCompactionOutput,
  sourceFingerprints,
  verifyCompactionOrder,
} from '../../../src/engine-default/duckdb-writer.js'

describe('compaction order check', () => {
  let dir: string
  let instance: DuckDBInstance
  let con: DuckDBConnection
  const out = () => join(dir, 'out.parquet')
  // Source 0: ids 0..4 (physical rows 0..4, row 2 deleted); source 1: ids 10..12.
  const sources = `SELECT * FROM (VALUES (0, 0, 0::BIGINT, 'a'), (0, 1, 1, 'b'), (0, 3, 3, 'd'), (0, 4, 4, 'e'),
    (1, 0, 10, 'x'), (1, 1, 11, 'y'), (1, 2, 12, 'z')) t(__i, __f, id, name)`
  const planned = [
    { key: 's0', rowOffsetInTarget: 0, rowCount: 4 },
    { key: 's1', rowOffsetInTarget: 4, rowCount: 3 },
  ]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-order-'))
    instance = await DuckDBInstance.create(':memory:')
    con = await instance.connect()
  })
  after(async () => {
    con.closeSync()
    instance.closeSync()
    await rm(dir, { recursive: true, force: true })
  })

  async function writeOutput(rows: string): Promise<void> {
    await con.run(`COPY (SELECT * FROM (VALUES ${rows}) t(id, name)) TO '${out()}' (FORMAT parquet)`)
  }

  it('accepts an output with every source at its offset, in order', async () => {
    await writeOutput(`(0::BIGINT, 'a'), (1, 'b'), (3, 'd'), (4, 'e'), (10, 'x'), (11, 'y'), (12, 'z')`)
    await verifyCompactionOrder(con, sources, out(), planned)
  })

  const wrong: Array<[string, string]> = [
    ['sources swapped', `(10::BIGINT, 'x'), (11, 'y'), (12, 'z'), (0, 'a'), (1, 'b'), (3, 'd'), (4, 'e')`],
    [
      'rows reordered inside a source',
      `(1::BIGINT, 'b'), (0, 'a'), (3, 'd'), (4, 'e'), (10, 'x'), (11, 'y'), (12, 'z')`,
    ],
    [
      'a deleted row written',
      `(0::BIGINT, 'a'), (1, 'b'), (2, 'c'), (3, 'd'), (10, 'x'), (11, 'y'), (12, 'z')`,
    ],
    ['a value changed', `(0::BIGINT, 'a'), (1, 'b'), (3, 'd'), (4, 'E'), (10, 'x'), (11, 'y'), (12, 'z')`],
  ]
  for (const [name, rows] of wrong) {
    it(`refuses an output with ${name}`, async () => {
      await writeOutput(rows)
      await assert.rejects(verifyCompactionOrder(con, sources, out(), planned), { code: 'DELTA_INTERNAL' })
    })
  }

  // Sources without deletions: ranks are their positions, so no window is needed to check them.
  const whole = `SELECT * FROM (VALUES (0, 0, 0::BIGINT, 'a'), (0, 1, 1, 'b'), (0, 2, 2, 'c'),
    (1, 0, 10, 'x'), (1, 1, 11, 'y')) t(__i, __f, id, name)`
  const wholePlan = [
    { key: 's0', rowOffsetInTarget: 0, rowCount: 3 },
    { key: 's1', rowOffsetInTarget: 3, rowCount: 2 },
  ]
  it('ranks sources without deletions by position, as the window does', async () => {
    const byPosition = await sourceFingerprints(con, whole, 'position')
    assert.deepEqual(byPosition, await sourceFingerprints(con, whole, 'window'))
    assert.deepEqual([...byPosition].map(([i, f]) => [i, f.rows]).sort(), [
      [0, 3],
      [1, 2],
    ])
    await writeOutput(`(0::BIGINT, 'a'), (1, 'b'), (2, 'c'), (10, 'x'), (11, 'y')`)
    await checkCompactionOutput(con, out(), wholePlan, byPosition)
  })
  for (const [name, rows] of [
    ['a row moved to the next source', `(0::BIGINT, 'a'), (1, 'b'), (10, 'x'), (2, 'c'), (11, 'y')`],
    ['the last two rows swapped', `(0::BIGINT, 'a'), (1, 'b'), (2, 'c'), (11, 'y'), (10, 'x')`],
    ['a row missing', `(0::BIGINT, 'a'), (1, 'b'), (2, 'c'), (10, 'x')`],
  ] as const) {
    it(`refuses, ranking by position, an output with ${name}`, async () => {
      await writeOutput(rows)
      await assert.rejects(
        checkCompactionOutput(con, out(), wholePlan, await sourceFingerprints(con, whole, 'position')),
        { code: 'DELTA_INTERNAL' },
      )
    })
  }
})
