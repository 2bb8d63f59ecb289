import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { liveEndedDeletionMask } from '../../../src/engine-default/duckdb-deletion-mask.js'
import {
  defineLiveRows,
  deletionForm,
  FILE_INDEX_COL,
  type LiveRowsColumn,
} from '../../../src/engine-default/duckdb-live-rows.js'
import { createDuckDbInstance, FILE_COL, ROW_COL } from '../../../src/engine-default/duckdb-runtime.js'

const ROWS = 5000

/** Deleted positions of each test file, and the form each one's deletions take. */
const DELETIONS: { name: string; positions: number[]; form: 'mask' | 'list' | 'none' }[] = [
  // Every third row: dense, a mask.
  { name: 'dense', positions: range(ROWS).filter((p) => p % 3 === 0), form: 'mask' },
  // Three rows in 5000: a list.
  { name: 'sparse', positions: [0, 2500, ROWS - 1], form: 'list' },
  // Dense at the start only: a mask shorter than the file, whose later rows are all live.
  { name: 'prefix', positions: range(40).map((p) => p * 2), form: 'mask' },
  { name: 'clean', positions: [], form: 'none' },
  // Dense up to 1023, the last bit of a byte, then live: rows past it must not take its bit.
  { name: 'byte-end', positions: [...range(256).map((p) => p * 4), 1023], form: 'mask' },
]

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i)
}

describe('live rows: deletion vectors as masks and lists', () => {
  let dir: string
  let instance: DuckDBInstance
  let con: DuckDBConnection
  const paths: string[] = []

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'live-rows-dv-'))
    instance = await createDuckDbInstance()
    con = await instance.connect()
    await con.run(`SET TimeZone = 'UTC'`)
    for (const [f, d] of DELETIONS.entries()) {
      const path = join(dir, `${d.name}.parquet`)
      // Small row groups, so positions run across row groups as the protocol counts them.
      await con.run(
        `COPY (SELECT (${f * ROWS} + i)::BIGINT AS id FROM range(${ROWS}) t(i) ORDER BY i) ` +
          `TO '${path}' (FORMAT parquet, ROW_GROUP_SIZE 1024)`,
      )
      paths.push(path)
    }
  })
  after(async () => {
    con.closeSync()
    instance.closeSync()
    await rm(dir, { recursive: true, force: true })
  })

  it('picks a mask for dense deletions and a list for sparse or far positions', () => {
    for (const d of DELETIONS) if (d.form !== 'none') assert.equal(deletionForm(d.positions), d.form, d.name)
    assert.equal(deletionForm([2 ** 31]), 'list')
    assert.equal(deletionForm([0]), 'mask')
  })

  it('encodes a mask with exactly the deleted positions set', async () => {
    const positions = [0, 7, 8, 9, 63, 64, 100]
    const bits = (
      await con.runAndReadAll(
        `SELECT list(get_bit(m, i::INTEGER) ORDER BY i) FROM (SELECT $mask AS m), range(bit_length(m)) t(i)`,
        { mask: liveEndedDeletionMask(positions) },
      )
    ).getRowsJS()[0]?.[0] as number[]
    assert.equal(bits.length, 104)
    const set = bits.flatMap((b, i) => (b === 1 ? [i] : []))
    assert.deepEqual(set, positions)
  })

  it('ends every live-rows mask with a clear bit past its last deleted position', async () => {
    for (const positions of [[0, 7, 8, 9, 63, 64, 100], [7], [15], [0], []]) {
      const bits = (
        await con.runAndReadAll(
          `SELECT list(get_bit(m, i::INTEGER) ORDER BY i) FROM (SELECT $mask AS m), range(bit_length(m)) t(i)`,
          { mask: liveEndedDeletionMask(positions) },
        )
      ).getRowsJS()[0]?.[0] as number[]
      const last = positions.length === 0 ? -1 : Math.max(...positions)
      assert.ok(bits.length >= last + 2 && bits.length % 8 === 0, `${bits.length} bits for last ${last}`)
      assert.equal(bits.at(-1), 0)
      assert.deepEqual(
        bits.flatMap((b, i) => (b === 1 ? [i] : [])),
        positions,
      )
    }
  })

  const variants = ['no per-row join', 'with file index', 'with a partition column'] as const
  const fileSets = [
    { label: 'masks and lists', files: [0, 1, 2, 3, 4] },
    { label: 'lists only', files: [1, 3] },
  ]
  for (const variant of variants) {
    for (const set of fileSets) {
      it(`leaves out exactly the deleted rows of every file (${set.label}, ${variant})`, async () => {
        const chosen = set.files.map((f) => ({ ...(DELETIONS[f] as (typeof DELETIONS)[number]), f }))
        const columns: LiveRowsColumn[] = [
          { name: 'id', physicalName: 'id', type: 'long', isPartition: false },
        ]
        if (variant === 'with a partition column')
          columns.push({ name: 'p', physicalName: 'p', type: 'string', isPartition: true })
        const live = await defineLiveRows(con, {
          files: chosen.map((d) => ({ deletedRows: d.positions, partitionValues: { p: d.name } })),
          paths: chosen.map((d) => paths[d.f] as string),
          columns,
          tables: { files: 't_files', deletedRows: 't_dv' },
          withFileIndex: variant === 'with file index',
        })
        const extra = variant === 'with file index' ? `, "${FILE_INDEX_COL}"` : ''
        const part = variant === 'with a partition column' ? ', c1' : ''
        const rows = (
          await con.runAndReadAll(
            `SELECT "${FILE_COL}", "${ROW_COL}", c0${extra}${part} FROM (${live.sql}) ORDER BY 1, 2`,
          )
        ).getRowsJS()
        const expected = chosen
          .flatMap((d, i) => {
            const deleted = new Set(d.positions)
            return range(ROWS)
              .filter((p) => !deleted.has(p))
              .map((p) => {
                const row: unknown[] = [paths[d.f], BigInt(p), BigInt(d.f * ROWS + p)]
                if (variant === 'with file index') row.push(i)
                if (variant === 'with a partition column') row.push(d.name)
                return row
              })
          })
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]))
        assert.equal(rows.length, chosen.length * ROWS - chosen.reduce((n, d) => n + d.positions.length, 0))
        assert.deepEqual(rows, expected)
        // Lists alone need no per-row join with the files table; masks live in it.
        const masks = chosen.some((d) => d.form === 'mask')
        assert.deepEqual(
          new Set(live.tables),
          new Set([
            't_dv',
            ...(masks ? ['t_dv_masks'] : []),
            ...(variant === 'no per-row join' && !masks ? [] : ['t_files']),
          ]),
        )
      })
    }
  }

  it('matches rows to files by path when a data column is named file_index', async () => {
    const a = join(dir, 'shadow-a.parquet')
    const b = join(dir, 'shadow-b.parquet')
    // The column holds the other file's index, so a join on it would pick the wrong deletions.
    await con.run(`COPY (SELECT 1 AS FILE_INDEX, i AS v FROM range(100) t(i)) TO '${a}' (FORMAT parquet)`)
    await con.run(`COPY (SELECT 0 AS FILE_INDEX, i AS v FROM range(100) t(i)) TO '${b}' (FORMAT parquet)`)
    const dense = range(50).map((p) => p * 2)
    for (const deletedRows of [dense, [5]]) {
      const live = await defineLiveRows(con, {
        files: [{ deletedRows, partitionValues: {} }, { partitionValues: {} }],
        paths: [a, b],
        columns: [{ name: 'v', physicalName: 'v', type: 'long', isPartition: false }],
        tables: { files: 's_files', deletedRows: 's_dv' },
      })
      const rows = (
        await con.runAndReadAll(`SELECT "${FILE_COL}", c0 FROM (${live.sql}) ORDER BY 1, 2`)
      ).getRowsJS()
      const gone = new Set(deletedRows)
      const expected = [
        ...range(100)
          .filter((v) => !gone.has(v))
          .map((v) => [a, BigInt(v)]),
        ...range(100).map((v) => [b, BigInt(v)]),
      ]
      assert.deepEqual(rows, expected)
    }
  })
})
