import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { DataFileRef } from '../../../src/engine/data-plane.js'
import type { RewriteRequest, WrittenFile } from '../../../src/engine/data-writer.js'
import { FileNotFoundError, InvalidArgumentError } from '../../../src/errors/index.js'
import { parseExpression, parsePredicate } from '../../../src/expressions/parse-predicate.js'
import {
  listKeys,
  parseStatsText,
  readFileRows,
  schemaOf,
  targetOf,
  type WriterEnv,
  writerEnv,
} from './writer-helpers.js'

const schema = schemaOf(
  { name: 'id', type: 'long', nullable: false },
  { name: 'name', type: 'string' },
  { name: 'score', type: 'integer' },
  { name: 'part', type: 'string' },
)
const target = targetOf(schema, { partitionColumns: ['part'] })

type Row = { id: bigint; name: string | null; score: number | null; part: string | null }

const FIRST: Row[] = [0, 1, 2, 3, 4].map((i) => ({
  id: BigInt(i),
  name: i === 2 ? null : `n${i}`,
  score: i * 10,
  part: 'a',
}))
const SECOND: Row[] = [5, 6, 7, 8, 9].map((i) => ({
  id: BigInt(i),
  name: `n${i}`,
  score: i % 2 === 0 ? null : i * 10,
  part: 'b',
}))

describe('rewrite', () => {
  let env: WriterEnv
  let sources: DataFileRef[]
  let initialKeys: string[]

  before(async () => {
    env = await writerEnv()
    const [a] = await env.writer.writeRows({ rows: FIRST, target })
    const [b] = await env.writer.writeRows({ rows: SECOND, target })
    const fa = a as WrittenFile
    const fb = b as WrittenFile
    // Positions 1 and 3 of the first file are deleted by its DV.
    sources = [
      { key: fa.key, partitionValues: fa.partitionValues, deletedRows: [1, 3] },
      { key: fb.key, partitionValues: fb.partitionValues },
    ]
    initialKeys = await listKeys(env.store)
  })
  after(async () => {
    await env.close()
  })

  /** Rewrites, reads every output back, and removes the outputs again. */
  async function run(
    extra: Omit<RewriteRequest, 'sources' | 'target'>,
  ): Promise<{ files: WrittenFile[]; rows: Row[] }> {
    const files = await env.writer.rewrite({ sources, target, ...extra })
    const rows: Row[] = []
    for (const f of files) {
      const back = await readFileRows(env.store, f.key, schema, { partitionColumns: ['part'] })
      assert.equal(back.rows.length, f.numRecords)
      assert.equal((parseStatsText(f.stats) as { numRecords: string }).numRecords, `#${f.numRecords}`)
      for (const r of back.rows)
        rows.push({ ...(r as Omit<Row, 'part'>), part: f.partitionValues.part ?? null })
      await env.store.delete(f.key)
    }
    rows.sort((x, y) => Number(x.id - y.id))
    return { files, rows }
  }

  const live = [...FIRST.filter((_, i) => i !== 1 && i !== 3), ...SECOND]
  const byIds = (...ids: number[]) => live.filter((r) => ids.includes(Number(r.id)))
  const positions = new Map([
    [0, [0, 1, 4]],
    [1, [2]],
  ])

  const cases: [string, () => Omit<RewriteRequest, 'sources' | 'target'>, Row[]][] = [
    ['without a selector keeps every live row', () => ({}), live],
    [
      'where keeps the rows the predicate matches',
      () => ({ where: parsePredicate('id >= 3') }),
      byIds(4, 5, 6, 7, 8, 9),
    ],
    [
      'where treats NULL as no match',
      () => ({ where: parsePredicate("name <> 'n0'") }),
      byIds(4, 5, 6, 7, 8, 9),
    ],
    [
      'a copy-on-write delete keeps the rows where the predicate is not true',
      () => ({ where: parsePredicate('(score > 60) IS NOT TRUE') }),
      byIds(0, 2, 4, 5, 6, 8),
    ],
    [
      'included positions select only those live rows',
      () => ({ positions: keyed(positions), positionsMode: 'include' }),
      byIds(0, 4, 7),
    ],
    [
      'excluded positions select every other live row',
      () => ({ positions: keyed(positions), positionsMode: 'exclude' }),
      byIds(2, 5, 6, 8, 9),
    ],
    [
      'a source missing from included positions contributes nothing',
      () => ({ positions: new Map([[sourceKey(1), [0, 4]]]) }),
      byIds(5, 9),
    ],
    [
      'positions and where combine with AND',
      () => ({ positions: keyed(positions), where: parsePredicate('id > 0') }),
      byIds(4, 7),
    ],
    [
      'set applies expressions over the row as read',
      () => ({
        where: parsePredicate('id IN (0, 5)'),
        set: { name: parseExpression('upper(name)'), score: parseExpression('score + id') },
      }),
      [
        { id: 0n, name: 'N0', score: 0, part: 'a' },
        { id: 5n, name: 'N5', score: 55, part: 'b' },
      ],
    ],
    [
      'setting a partition column moves the rows to the new partition',
      () => ({ where: parsePredicate('id IN (4, 6)'), set: { part: parseExpression("'c/d'") } }),
      [
        { id: 4n, name: 'n4', score: 40, part: 'c/d' },
        { id: 6n, name: 'n6', score: null, part: 'c/d' },
      ],
    ],
    [
      'setting a partition column to null writes the null partition',
      () => ({ where: parsePredicate('id = 9'), set: { PART: parseExpression('NULL') } }),
      [{ id: 9n, name: 'n9', score: 90, part: null }],
    ],
    ['a selection without rows writes nothing', () => ({ where: parsePredicate('id > 100') }), []],
  ]

  function sourceKey(i: number): string {
    return (sources[i] as DataFileRef).key
  }
  function keyed(byIndex: Map<number, number[]>): Map<string, number[]> {
    return new Map([...byIndex].map(([i, p]) => [sourceKey(i), p]))
  }

  for (const [name, request, expected] of cases) {
    it(name, async () => {
      const { files, rows } = await run(request())
      assert.deepStrictEqual(rows, expected)
      const parts = new Set(expected.map((r) => r.part))
      assert.equal(files.length, parts.size, 'one file per partition')
      for (const f of files) {
        const dir =
          f.partitionValues.part === null
            ? '__HIVE_DEFAULT_PARTITION__'
            : f.partitionValues.part?.replace('/', '%2F')
        assert.ok(f.key.startsWith(`part=${dir}/`), f.key)
      }
      assert.deepStrictEqual(await listKeys(env.store), initialKeys)
    })
  }

  const errors: [string, () => Omit<RewriteRequest, 'sources' | 'target'>, RegExp][] = [
    ['an unknown column in where', () => ({ where: parsePredicate('nope = 1') }), /Unknown column 'nope'/],
    [
      'an unknown column in set',
      () => ({ set: { nope: parseExpression('1') } }),
      /Cannot set unknown column 'nope'/,
    ],
    [
      'a null set into a non-nullable column',
      () => ({ set: { id: parseExpression('NULL') } }),
      /'id' is null in 8 row/,
    ],
    [
      'a set value out of the column range',
      () => ({ set: { score: parseExpression('score * 100000000') } }),
      /Cannot evaluate/,
    ],
    [
      'positions of a file that is not a source',
      () => ({ positions: new Map([['other.parquet', [0]]]) }),
      /not among the sources/,
    ],
    ['negative positions', () => ({ positions: new Map([[sourceKey(0), [-1]]]) }), /non-negative/],
  ]
  for (const [name, request, message] of errors) {
    it(`rejects ${name} and writes nothing`, async () => {
      await assert.rejects(env.writer.rewrite({ sources, target, ...request() }), (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError, String(err))
        assert.match(err.message, message)
        return true
      })
      assert.deepStrictEqual(await listKeys(env.store), initialKeys)
    })
  }

  it('fails with FileNotFoundError for a missing source', async () => {
    await assert.rejects(
      env.writer.rewrite({
        sources: [{ key: 'part=a/missing.parquet', partitionValues: { part: 'a' } }],
        target,
      }),
      FileNotFoundError,
    )
  })
})

describe('rewrite of an unpartitioned table, positions as masks and as lists', () => {
  const flat = schemaOf({ name: 'id', type: 'long', nullable: false }, { name: 'score', type: 'integer' })
  const flatTarget = targetOf(flat)
  /** Past 2^16 rows, so that a few positions near the end are too sparse for a mask. */
  const BIG = 70_000
  let env: WriterEnv
  let sources: DataFileRef[]
  let initialKeys: string[]

  before(async () => {
    env = await writerEnv()
    const rows = Array.from({ length: BIG }, (_, i) => ({ id: BigInt(i), score: i % 1000 }))
    const [big] = await env.writer.writeRows({ rows, target: flatTarget })
    const [small] = await env.writer.writeRows({
      rows: [0, 1, 2].map((i) => ({ id: BigInt(BIG + i), score: i })),
      target: flatTarget,
    })
    // The big file's DV hides positions 3 and BIG - 2.
    sources = [
      { key: (big as WrittenFile).key, partitionValues: {}, deletedRows: [3, BIG - 2] },
      { key: (small as WrittenFile).key, partitionValues: {} },
    ]
    initialKeys = await listKeys(env.store)
  })
  after(async () => {
    await env.close()
  })

  const dense = Array.from({ length: BIG / 10 }, (_, k) => k * 10 + 3)
  const sparse = [5, 3, BIG - 2, BIG - 1].sort((a, b) => a - b)
  const liveBig = (p: number) => p !== 3 && p !== BIG - 2
  const cases: [string, 'include' | 'exclude', number[], number[], number[]][] = [
    // name, mode, big file's positions, small file's positions, expected ids
    ['dense included positions (masks)', 'include', dense, [1], [...dense.filter(liveBig), BIG + 1]],
    [
      'dense excluded positions (masks)',
      'exclude',
      dense,
      [1],
      [...range(BIG).filter((p) => liveBig(p) && !dense.includes(p)), BIG, BIG + 2],
    ],
    ['sparse included positions (lists)', 'include', sparse, [], [5, BIG - 1]],
    [
      'sparse excluded positions (lists)',
      'exclude',
      sparse,
      [],
      [...range(BIG).filter((p) => liveBig(p) && !sparse.includes(p)), BIG, BIG + 1, BIG + 2],
    ],
  ]
  for (const [name, mode, big, small, ids] of cases) {
    it(`selects the live rows of ${name} and applies set`, async () => {
      const files = await env.writer.rewrite({
        sources,
        target: flatTarget,
        positions: new Map([
          [(sources[0] as DataFileRef).key, big],
          [(sources[1] as DataFileRef).key, small],
        ]),
        positionsMode: mode,
        set: { score: parseExpression('score + 1') },
      })
      const got: { id: bigint; score: number }[] = []
      for (const f of files) {
        const back = await readFileRows(env.store, f.key, flat)
        assert.equal(back.rows.length, f.numRecords)
        got.push(...(back.rows as { id: bigint; score: number }[]))
        await env.store.delete(f.key)
      }
      got.sort((x, y) => Number(x.id - y.id))
      assert.deepStrictEqual(
        got,
        ids.map((i) => ({ id: BigInt(i), score: i >= BIG ? i - BIG + 1 : (i % 1000) + 1 })),
      )
      assert.deepStrictEqual(await listKeys(env.store), initialKeys)
    })
  }

  it('rejects a set value out of the column range, written straight to the files, and writes nothing', async () => {
    await assert.rejects(
      env.writer.rewrite({
        sources,
        target: flatTarget,
        positions: new Map([[(sources[0] as DataFileRef).key, dense]]),
        set: { score: parseExpression('score * 100000000') },
      }),
      (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError, String(err))
        assert.match(err.message, /Cannot evaluate/)
        return true
      },
    )
    assert.deepStrictEqual(await listKeys(env.store), initialKeys)
  })
})

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i)
}
