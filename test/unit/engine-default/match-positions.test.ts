import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { ColumnSpec, DataFileRef, FileMatches } from '../../../src/engine/data-plane.js'
import { DuckDbDataPlane } from '../../../src/engine-default/duckdb-data-plane.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { parsePredicate } from '../../../src/expressions/parse-predicate.js'
import { createLocalStore } from '../../../src/storage/index.js'

/**
 * The data plane's DML match: positions of the matching live rows per file, ascending whatever
 * order DuckDB's threads aggregate them in (files of many small row groups), live row counts from
 * the footers less the positions each DV names (a DV naming a position past its file's footer
 * row count is refused), and with row tracking the row ids and bounds of the matching rows.
 */

const ROWS = 40_000
/** `v` is null on every fifth row. */
const FILES: { name: string; rows: number; deleted: number[]; baseRowId: bigint }[] = [
  { name: 'clean', rows: ROWS, deleted: [], baseRowId: 0n },
  // Every third row below 30,000.
  {
    name: 'with-dv',
    rows: ROWS,
    deleted: range(10_000).map((k) => k * 3),
    baseRowId: 1_000_000n,
  },
  { name: 'small', rows: 10, deleted: [], baseRowId: 2_000_000n },
]

const id: ColumnSpec = { name: 'id', type: 'long', physicalName: 'id', isPartition: false }
const v: ColumnSpec = { name: 'v', type: 'long', physicalName: 'v', isPartition: false }

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i)
}

/** The id of row `p` of file `f`, as the files are written. */
function idOf(f: number, p: number): number {
  return f * 1_000_000 + p
}

describe('matchPositions', () => {
  let dir: string
  let duck: DuckDbRuntime
  let plane: DuckDbDataPlane
  let files: DataFileRef[]

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'match-positions-'))
    await mkdir(join(dir, 'table'))
    duck = new DuckDbRuntime({ threads: 2 })
    const con = await duck.connect()
    try {
      for (const [f, spec] of FILES.entries()) {
        await con.run(
          `COPY (SELECT (${f * 1_000_000} + i)::BIGINT AS id, CASE WHEN i % 5 = 0 THEN NULL ELSE i END::BIGINT AS v ` +
            `FROM range(${spec.rows}) t(i) ORDER BY i) TO '${join(dir, 'table', `${spec.name}.parquet`)}' ` +
            '(FORMAT parquet, ROW_GROUP_SIZE 1024)',
        )
      }
    } finally {
      con.closeSync()
    }
    plane = new DuckDbDataPlane(createLocalStore(join(dir, 'table')), duck, join(dir, 'scratch'))
    files = FILES.map((f) => ({
      key: `${f.name}.parquet`,
      partitionValues: {},
      deletedRows: f.deleted,
      baseRowId: f.baseRowId,
      defaultRowCommitVersion: 1n,
    }))
  })
  after(async () => {
    await duck.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** The live positions of each file that `matches` selects, as an independent loop finds them. */
  function expected(matches: (id: number, p: number) => boolean): number[][] {
    return FILES.map((spec, f) => {
      const deleted = new Set(spec.deleted)
      return range(spec.rows).filter((p) => !deleted.has(p) && matches(idOf(f, p), p))
    })
  }
  const liveRows = [ROWS, ROWS - 10_000, 10]

  const cases: [string, string | undefined, (id: number, p: number) => boolean][] = [
    ['one row in seven', 'id % 7 = 0', (i) => i % 7 === 0],
    ['every live row without a predicate', undefined, () => true],
    [
      'a range across row groups and the DV',
      'id BETWEEN 29000 AND 1031000',
      (i) => i >= 29_000 && i <= 1_031_000,
    ],
    ['no row', 'id < 0', () => false],
  ]
  for (const [name, where, matches] of cases) {
    it(`finds ${name}, ascending, with each file's live rows`, async () => {
      const out = await plane.matchPositions({
        files,
        predicate: where === undefined ? undefined : parsePredicate(where),
        predicateColumns: [id],
      })
      assert.deepStrictEqual(
        out.map((m) => m.key),
        files.map((f) => f.key),
      )
      assert.deepStrictEqual(
        out.map((m) => [...m.positions]),
        expected(matches),
      )
      assert.deepStrictEqual(
        out.map((m) => m.liveRows),
        liveRows,
      )
    })
  }

  it('refuses a DV naming a position past the end of its file, by the Parquet footer', async () => {
    const past = files.map((f) =>
      f.key === 'with-dv.parquet'
        ? { ...f, deletedRows: [...Array.from(f.deletedRows ?? []), ROWS + 10] }
        : f,
    )
    await assert.rejects(
      plane.matchPositions({ files: past, predicate: undefined, predicateColumns: [id] }),
      {
        code: 'DELTA_INVALID_DELETION_VECTOR',
        path: 'with-dv.parquet',
      },
    )
  })

  it('pairs each position with its row id and bounds the matching rows with row tracking', async () => {
    const out: FileMatches[] = await plane.matchPositions({
      files,
      predicate: parsePredicate('id % 11 = 3'),
      predicateColumns: [id],
      boundsOf: [id, v],
      rowTracking: {},
    })
    const want = expected((i) => i % 11 === 3)
    for (const [f, m] of out.entries()) {
      const positions = want[f] as number[]
      assert.deepStrictEqual([...m.positions], positions)
      assert.deepStrictEqual(
        m.rowIds,
        positions.map((p) => (FILES[f]?.baseRowId as bigint) + BigInt(p)),
      )
      const ids = positions.map((p) => idOf(f, p))
      const [idBounds, vBounds] = m.bounds ?? []
      assert.deepStrictEqual(idBounds, {
        min: ids.length === 0 ? null : BigInt(ids[0] as number),
        max: ids.length === 0 ? null : BigInt(ids.at(-1) as number),
        nullCount: 0,
      })
      const values = positions.filter((p) => p % 5 !== 0)
      assert.deepStrictEqual(vBounds, {
        min: values.length === 0 ? null : BigInt(values[0] as number),
        max: values.length === 0 ? null : BigInt(values.at(-1) as number),
        nullCount: positions.length - values.length,
      })
    }
  })
})
