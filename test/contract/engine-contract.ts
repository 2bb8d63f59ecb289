/**
 * The Engine contract: what the Delta logic relies on from any {@link Engine}, as one set of
 * tests. `engineContract` registers them for an engine factory; an embedder's engine is checked
 * by calling it with its own factory. Everything used here comes from the package root and
 * `delta-rlc/engine`, so a custom engine needs nothing else.
 *
 * The cases follow the interfaces' TSDoc: the writer's files and exact statistics, the data
 * plane's live rows (deletion vectors applied, partition values from the log, physical order),
 * predicate matches, compaction order, the MERGE join, the Parquet handler's action rows, and the
 * typed errors each call documents. Each test runs on a fresh in-memory store, which an engine
 * must read through its `storage` like any remote store.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  createMemoryStore,
  FileNotFoundError,
  InvalidArgumentError,
  InvalidTableError,
  type ObjectStore,
  parseExpression,
  parsePredicate,
  type StructType,
} from '../../src/index.js'
import type {
  ColumnSpec,
  DataFileRef,
  DataWriter,
  Engine,
  MergeExecutor,
  MergeRequest,
  ScanRequest,
  WriteTarget,
  WrittenFile,
} from '../../src/subpaths/engine.js'

/** Creates the engine under test over a store; the suite closes it. */
export type EngineFactory = (storage: ObjectStore) => Engine | Promise<Engine>

const SCHEMA: StructType = {
  type: 'struct',
  fields: [
    { name: 'id', type: 'long', nullable: false, metadata: {} },
    { name: 'part', type: 'string', nullable: true, metadata: {} },
    { name: 'amount', type: 'decimal(10,2)', nullable: true, metadata: {} },
    { name: 'day', type: 'date', nullable: true, metadata: {} },
  ],
}
const TARGET: WriteTarget = { schema: SCHEMA, partitionColumns: ['part'], columnMappingMode: 'none' }
const UNPARTITIONED: WriteTarget = { schema: SCHEMA, partitionColumns: [], columnMappingMode: 'none' }

const COLUMNS: readonly ColumnSpec[] = SCHEMA.fields.map((f) => ({
  name: f.name,
  type: f.type,
  physicalName: f.name,
  isPartition: f.name === 'part',
}))
const UNPARTITIONED_COLUMNS = COLUMNS.map((c) => ({ ...c, isPartition: false }))

function rowsOf(ids: readonly number[], part: string | null = 'a'): Record<string, unknown>[] {
  return ids.map((i) => ({ id: BigInt(i), part, amount: `${i}.50`, day: '2024-02-29' }))
}

const ref = (f: WrittenFile, deletedRows?: number[]): DataFileRef => ({
  key: f.key,
  partitionValues: f.partitionValues,
  ...(deletedRows === undefined ? {} : { deletedRows }),
})

async function ids(engine: Engine, files: readonly DataFileRef[], columns = COLUMNS): Promise<number[]> {
  const out: number[] = []
  for await (const batch of engine.data.scan({ files, columns, physicalOrder: true })) {
    for (const r of batch) out.push(Number(r.id as bigint))
  }
  return out
}

/** Writes rows that land in one file, and returns it. */
async function writeOne(
  writer: DataWriter,
  rows: readonly Record<string, unknown>[],
  target: WriteTarget = TARGET,
): Promise<WrittenFile> {
  const files = await writer.writeRows({ rows, target })
  assert.equal(files.length, 1)
  return files[0] as WrittenFile
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const m of store.listRecursive('')) keys.push(m.key)
  return keys.sort()
}

/**
 * Registers the Engine contract for `factory`.
 *
 * @param name - the engine's name in test titles
 * @param factory - creates the engine under test over a store
 */
export function engineContract(name: string, factory: EngineFactory): void {
  const withEngine =
    (fn: (engine: Engine, store: ObjectStore) => Promise<void>) => async (): Promise<void> => {
      const store = createMemoryStore()
      const engine = await factory(store)
      try {
        await fn(engine, store)
      } finally {
        await engine.close()
      }
    }

  describe(`Engine contract: ${name}`, () => {
    describe('writer', () => {
      it(
        'writes rows into one file per partition with exact statistics, and they read back unchanged',
        withEngine(async (engine, store) => {
          const rows = [...rowsOf([1, 2, 3], 'a'), ...rowsOf([4], null)]
          const files = await engine.writer.writeRows({ rows, target: TARGET })
          assert.equal(files.length, 2)
          const a = files.find((f) => f.partitionValues.part === 'a') as WrittenFile
          const nul = files.find((f) => f.partitionValues.part === null) as WrittenFile
          assert.ok(a.key.startsWith('part=a/') && nul.key.startsWith('part=__HIVE_DEFAULT_PARTITION__/'))
          assert.equal(a.numRecords, 3)
          const stats = JSON.parse(a.stats)
          assert.equal(stats.numRecords, 3)
          assert.equal(stats.minValues.id, 1)
          assert.equal(stats.maxValues.id, 3)
          assert.equal(stats.nullCount.amount, 0)
          assert.deepEqual(await keysOf(store), files.map((f) => f.key).sort())
          assert.equal((await store.head(a.key)).size, a.size)
          const back: Record<string, unknown>[] = []
          for await (const b of engine.data.scan({
            files: [ref(a), ref(nul)],
            columns: COLUMNS,
            physicalOrder: true,
          }))
            back.push(...b)
          assert.deepEqual(back, rows)
        }),
      )

      it(
        'refuses a row with an unknown column with InvalidArgumentError and stores nothing',
        withEngine(async (engine, store) => {
          await assert.rejects(
            engine.writer.writeRows({ rows: [...rowsOf([1]), { id: 2n, nope: 1 }], target: TARGET }),
            InvalidArgumentError,
          )
          assert.deepEqual(await keysOf(store), [])
        }),
      )

      it(
        'writes batches from an async iterable as one write: files per partition across batches, rows in order',
        withEngine(async (engine, store) => {
          const batches = [rowsOf([1, 2], 'a'), rowsOf([3], null), [], rowsOf([4, 5], 'a')]
          let released = 0
          async function* gen() {
            for (const b of batches) {
              yield b
              released++
            }
          }
          const files = await engine.writer.writeRows({ rows: gen(), target: TARGET })
          // One file per partition although partition 'a' came in two batches.
          assert.equal(files.length, 2)
          assert.equal(released, batches.length)
          const a = files.find((f) => f.partitionValues.part === 'a') as WrittenFile
          const nul = files.find((f) => f.partitionValues.part === null) as WrittenFile
          assert.equal(a.numRecords, 4)
          assert.equal(JSON.parse(a.stats).maxValues.id, 5)
          assert.deepEqual(await ids(engine, [ref(a)]), [1, 2, 4, 5])
          assert.deepEqual(await ids(engine, [ref(nul)]), [3])
          assert.deepEqual(await keysOf(store), files.map((f) => f.key).sort())
          const none = await engine.writer.writeRows({ rows: (async function* () {})(), target: TARGET })
          assert.deepEqual(none, [])
        }),
      )

      it(
        'names a bad row of a later batch by its index in the whole input, and stores nothing',
        withEngine(async (engine, store) => {
          async function* gen() {
            yield rowsOf([0, 1, 2], 'a')
            yield rowsOf([3, 4], 'b')
            yield [...rowsOf([5]), { id: null, part: 'a' }]
          }
          await assert.rejects(
            engine.writer.writeRows({ rows: gen(), target: UNPARTITIONED }),
            (err: unknown) =>
              err instanceof InvalidArgumentError &&
              /\bRow 6\b/.test(err.message) &&
              /'id'/.test(err.message),
          )
          async function* unknown() {
            yield rowsOf([0, 1])
            yield [{ id: 2n, nope: 1 }]
          }
          await assert.rejects(
            engine.writer.writeRows({ rows: unknown(), target: TARGET }),
            (err: unknown) => err instanceof InvalidArgumentError && /\bRow 2\b/.test(err.message),
          )
          assert.deepEqual(await keysOf(store), [])
        }),
      )

      it(
        'throws the error an async iterable of batches throws as it is, and stores nothing',
        withEngine(async (engine, store) => {
          const failure = new RangeError('the input broke')
          async function* gen() {
            yield rowsOf([1, 2])
            throw failure
          }
          await assert.rejects(
            engine.writer.writeRows({ rows: gen(), target: TARGET }),
            (err) => err === failure,
          )
          assert.deepEqual(await keysOf(store), [])
        }),
      )

      it(
        'rewrites the live rows a predicate selects with new values, leaving the rows a DV deletes',
        withEngine(async (engine) => {
          const src = await writeOne(engine.writer, rowsOf([0, 1, 2, 3, 4, 5]))
          const out = await engine.writer.rewrite({
            sources: [ref(src, [1])],
            where: parsePredicate('id < 4'),
            set: { id: parseExpression('id + 100'), part: parseExpression("'b'") },
            target: TARGET,
          })
          assert.equal(out.length, 1)
          assert.equal(out[0]?.partitionValues.part, 'b')
          assert.deepEqual(
            await ids(
              engine,
              out.map((f) => ref(f)),
            ),
            [100, 102, 103],
          )
        }),
      )

      it(
        'rewrites only the given positions, or every live row but them',
        withEngine(async (engine) => {
          const src = await writeOne(engine.writer, rowsOf([0, 1, 2, 3]), UNPARTITIONED)
          const positions = new Map([[src.key, [0, 2]]])
          const include = await engine.writer.rewrite({
            sources: [ref(src)],
            positions,
            target: UNPARTITIONED,
          })
          const exclude = await engine.writer.rewrite({
            sources: [ref(src, [3])],
            positions,
            positionsMode: 'exclude',
            target: UNPARTITIONED,
          })
          assert.deepEqual(
            await ids(
              engine,
              include.map((f) => ref(f)),
              UNPARTITIONED_COLUMNS,
            ),
            [0, 2],
          )
          assert.deepEqual(
            await ids(
              engine,
              exclude.map((f) => ref(f)),
              UNPARTITIONED_COLUMNS,
            ),
            [1],
          )
        }),
      )

      it(
        'compacts each bin into one file, sources in bin order and rows in physical order, DVs applied',
        withEngine(async (engine) => {
          const write = (from: number) => writeOne(engine.writer, rowsOf([from, from + 1, from + 2]))
          const [f0, f1, f2] = [await write(0), await write(10), await write(20)]
          const [out, empty] = await engine.writer.compact({
            bins: [[ref(f1, [0]), ref(f0)], [ref(f2, [0, 1, 2])]],
            target: TARGET,
          })
          assert.ok(out?.file)
          assert.deepEqual(
            out.sources.map((s) => [s.key, s.rowOffsetInTarget, s.rowCount, s.physicalRowCount]),
            [
              [f1.key, 0, 2, 3],
              [f0.key, 2, 3, 3],
            ],
          )
          assert.deepEqual(await ids(engine, [ref(out.file)]), [11, 12, 0, 1, 2])
          assert.equal(empty?.file, null)
          assert.deepEqual(
            empty?.sources.map((s) => s.rowCount),
            [0],
          )
        }),
      )
      it(
        'writes change data files under _change_data/: selected rows (DVs applied) or whole files, each with _change_type',
        withEngine(async (engine, store) => {
          // An engine without change data (the member is optional) has nothing to check here.
          if (engine.writer.writeChangeData === undefined) return
          const f = await writeOne(engine.writer, rowsOf([1, 2, 3]))
          const g = await writeOne(engine.writer, rowsOf([4], null))
          const before = await keysOf(store)
          const files = await engine.writer.writeChangeData({
            parts: [
              { changeType: 'delete', sources: [ref(f, [2])], positions: new Map([[f.key, [0]]]) },
              { changeType: 'update_preimage', sources: [ref(f, [2])], positions: new Map([[f.key, [1]]]) },
              { changeType: 'insert', sources: [ref(g)] },
            ],
            target: TARGET,
          })
          assert.deepEqual(
            files.map((c) => c.key.replace(/cdc-\d+-[0-9a-f-]+\.c000\.snappy\.parquet$/, 'cdc')).sort(),
            ['_change_data/part=__HIVE_DEFAULT_PARTITION__/cdc', '_change_data/part=a/cdc'],
          )
          assert.deepEqual(
            (await keysOf(store)).filter((k) => !before.includes(k)),
            files.map((c) => c.key).sort(),
          )
          const typeColumn: ColumnSpec = {
            name: '_change_type',
            type: 'string',
            physicalName: '_change_type',
            isPartition: false,
          }
          const back: unknown[][] = []
          for await (const b of engine.data.scan({
            files: files.map((c) => ref(c)),
            columns: [...COLUMNS, typeColumn],
          })) {
            for (const r of b) back.push([Number(r.id as bigint), r.part, r._change_type])
          }
          back.sort((x, y) => (x[0] as number) - (y[0] as number))
          assert.deepEqual(back, [
            [1, 'a', 'delete'],
            [2, 'a', 'update_preimage'],
            [4, null, 'insert'],
          ])
          assert.deepEqual(await engine.writer.writeChangeData({ parts: [], target: TARGET }), [])
        }),
      )
    })

    describe('data plane', () => {
      it(
        'scans live rows only, in file then physical order, with partition values from the log',
        withEngine(async (engine) => {
          const a = await writeOne(engine.writer, rowsOf([0, 1, 2, 3]))
          const b = await writeOne(engine.writer, rowsOf([10, 11]))
          // The log's value wins over anything the file or its directory says.
          const files = [ref(b), { ...ref(a, [0, 2]), partitionValues: { part: 'from-log' } }]
          const rows: Record<string, unknown>[] = []
          for await (const batch of engine.data.scan({
            files,
            columns: COLUMNS,
            physicalOrder: true,
            batchSize: 1,
          }))
            rows.push(...batch)
          assert.deepEqual(
            rows.map((r) => [Number(r.id as bigint), r.part]),
            [
              [10, 'a'],
              [11, 'a'],
              [1, 'from-log'],
              [3, 'from-log'],
            ],
          )
          assert.equal(await engine.data.count({ files, columns: COLUMNS }), 4)
        }),
      )

      it(
        'scanColumns, when the data plane has it, gives the rows scan gives, as columns of their types',
        withEngine(async (engine) => {
          const scanColumns = engine.data.scanColumns?.bind(engine.data)
          if (scanColumns === undefined) return
          const rows = rowsOf([0, 1, 2, 3, 4]).map((r, i) => ({ ...r, amount: i === 3 ? null : r.amount }))
          const a = await writeOne(engine.writer, rows)
          const b = await writeOne(engine.writer, rowsOf([10, 11], null))
          const request = {
            files: [ref(a, [0, 2]), ref(b)],
            columns: COLUMNS,
            physicalOrder: true,
            batchSize: 2,
          }
          const expected: Record<string, unknown>[] = []
          for await (const batch of engine.data.scan(request)) expected.push(...batch)
          const got: Record<string, unknown>[] = []
          for await (const batch of scanColumns(request)) {
            assert.equal(batch.columns.length, COLUMNS.length)
            const [id, part, amount, day] = batch.columns as NonNullable<(typeof batch.columns)[number]>[]
            assert.ok(id?.values instanceof BigInt64Array && day?.values instanceof Int32Array)
            assert.ok(Array.isArray(part?.values) && Array.isArray(amount?.values))
            for (let i = 0; i < batch.length; i++) {
              const isNull = (c: (typeof batch.columns)[number]) =>
                c.validity !== undefined && ((c.validity[i >> 3] as number) & (1 << (i & 7))) === 0
              const date = new Date(Number(day.values[i]) * 86_400_000).toISOString().slice(0, 10)
              got.push({
                id: isNull(id) ? null : id.values[i],
                part: (part.values as readonly unknown[])[i],
                amount: (amount.values as readonly unknown[])[i],
                day: isNull(day) ? null : date,
              })
            }
            const nulls = (amount.values as readonly unknown[]).filter((v) => v === null).length
            assert.equal(amount.nullCount, nulls)
          }
          assert.deepEqual(got, expected)
          assert.equal(got.length, 5)
        }),
      )

      it(
        'counts and matches positions of the live rows a predicate is TRUE for (NULL is no match)',
        withEngine(async (engine) => {
          const rows = rowsOf([0, 1, 2, 3, 4]).map((r, i) => ({ ...r, amount: i === 3 ? null : r.amount }))
          const f = await writeOne(engine.writer, rows)
          const files = [ref(f, [1])]
          const predicate = parsePredicate('amount > 0.6')
          assert.equal(await engine.data.count({ files, columns: COLUMNS, predicate }), 2)
          assert.deepEqual(
            await engine.data.matchPositions({ files, predicate, predicateColumns: COLUMNS }),
            [{ key: f.key, positions: [2, 4], liveRows: 4 }],
          )
        }),
      )

      it(
        'fails with FileNotFoundError for a file the store does not have',
        withEngine(async (engine) => {
          const files = [{ key: 'part=a/missing.parquet', partitionValues: { part: 'a' } }]
          await assert.rejects(engine.data.count({ files, columns: COLUMNS }), FileNotFoundError)
        }),
      )

      it(
        'with rowTracking adds _row_id and _row_commit_version: materialized where not null, else baseRowId + physical position',
        withEngine(async (engine) => {
          // The materialized columns are hidden Parquet columns, outside the table's columns.
          const withHidden: WriteTarget = {
            ...TARGET,
            schema: {
              type: 'struct',
              fields: [
                ...SCHEMA.fields,
                { name: 'mat_row_id', type: 'long', nullable: true, metadata: {} },
                { name: 'mat_version', type: 'long', nullable: true, metadata: {} },
              ],
            },
          }
          const hidden = (id: number, version: number | null): Record<string, unknown> => ({
            mat_row_id: id % 2 === 0 ? BigInt(500 + id) : null,
            mat_version: version === null ? null : BigInt(version),
          })
          const rows = rowsOf([0, 1, 2, 3, 4]).map((r, i) => ({ ...r, ...hidden(i, i === 1 ? 9 : null) }))
          const a = await writeOne(engine.writer, rows, withHidden)
          const b = await writeOne(engine.writer, rowsOf([10, 11]))
          const rowTracking: ScanRequest['rowTracking'] = {
            materializedRowIdColumn: 'mat_row_id',
            materializedRowCommitVersionColumn: 'mat_version',
          }
          const files: DataFileRef[] = [
            { ...ref(a, [2]), baseRowId: 40n, defaultRowCommitVersion: 3n },
            { ...ref(b), baseRowId: 2n ** 60n, defaultRowCommitVersion: 4n },
          ]
          const out: Record<string, unknown>[] = []
          for await (const batch of engine.data.scan({
            files,
            columns: COLUMNS.filter((c) => c.name === 'id' || c.name === 'part'),
            physicalOrder: true,
            rowTracking,
          }))
            out.push(...batch)
          assert.deepEqual(out, [
            { id: 0n, part: 'a', _row_id: 500n, _row_commit_version: 3n },
            { id: 1n, part: 'a', _row_id: 41n, _row_commit_version: 9n },
            // Position 2 is deleted; the rows after it keep their positions.
            { id: 3n, part: 'a', _row_id: 43n, _row_commit_version: 3n },
            { id: 4n, part: 'a', _row_id: 504n, _row_commit_version: 3n },
            { id: 10n, part: 'a', _row_id: 2n ** 60n, _row_commit_version: 4n },
            { id: 11n, part: 'a', _row_id: 2n ** 60n + 1n, _row_commit_version: 4n },
          ])
          // Without rowTracking the same files give the columns only.
          const plain: Record<string, unknown>[] = []
          for await (const batch of engine.data.scan({
            files,
            columns: COLUMNS.slice(0, 1),
            physicalOrder: true,
          }))
            plain.push(...batch)
          assert.deepEqual(plain, [{ id: 0n }, { id: 1n }, { id: 3n }, { id: 4n }, { id: 10n }, { id: 11n }])
        }),
      )
    })

    describe('merge', () => {
      it(
        'updates matched rows, inserts unmatched source rows and deletes rows no source row matches',
        withEngine(async (engine) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const merge: MergeExecutor = engine.merge
          const f = await writeOne(engine.writer, rowsOf([1, 2, 3]))
          const request: MergeRequest = {
            files: [ref(f, [2])],
            targetColumns: COLUMNS,
            sourceColumns: [{ name: 'id', type: 'long' }],
            sourceRows: [{ id: 1n }, { id: 7n }],
            on: parsePredicate('target.id = source.id'),
            whenMatched: [{ kind: 'update', set: { amount: parseExpression('9.99') } }],
            whenNotMatched: [{ values: { id: parseExpression('source.id'), part: parseExpression("'z'") } }],
            whenNotMatchedBySource: [{ kind: 'delete' }],
            allowMultipleMatches: false,
          }
          const result = await merge.execute(request)
          assert.deepEqual(result.files, [{ key: f.key, positions: [0, 1], liveRows: 2 }])
          assert.deepEqual(
            result.rows.map((r) => [Number(r.id as bigint), r.part, r.amount]),
            [
              [1, 'a', '9.99'],
              [7, 'z', null],
            ],
          )
          assert.equal(result.numSourceRows, 2)
          assert.equal(result.numTargetRowsMatchedUpdated, 1)
          assert.equal(result.numTargetRowsNotMatchedBySourceDeleted, 1)
          assert.equal(result.numTargetRowsInserted, 1)
          assert.equal(result.multipleMatch, undefined)
        }),
      )

      it(
        'reports, when asked, the matched target rows no clause acted on in the files rows leave',
        withEngine(async (engine) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const touched = await writeOne(engine.writer, rowsOf([1, 2, 3, 4]))
          const untouched = await writeOne(engine.writer, rowsOf([7, 8]))
          const result = await engine.merge.execute({
            files: [ref(touched), ref(untouched)],
            targetColumns: COLUMNS,
            sourceColumns: [{ name: 'id', type: 'long' }],
            sourceRows: [{ id: 4n }, { id: 1n }, { id: 2n }, { id: 7n }, { id: 9n }],
            on: parsePredicate('target.id = source.id'),
            // Only id 1 is updated: ids 2, 4 and 7 are matched and stay as they are.
            whenMatched: [
              {
                kind: 'update',
                condition: parsePredicate('source.id = 1'),
                set: { amount: parseExpression('1') },
              },
            ],
            whenNotMatched: [{ values: { id: parseExpression('source.id') } }],
            whenNotMatchedBySource: [],
            allowMultipleMatches: false,
            reportKeptMatched: true,
          })
          assert.deepEqual(
            result.files.map((f) => f.positions),
            [[0], []],
          )
          // The untouched file's matched row (id 7) is not listed: no row leaves that file.
          assert.deepEqual(result.keptMatched, [[1, 3], []])
          assert.deepEqual(
            result.rows.map((r) => Number(r.id as bigint)),
            [1, 9],
          )
        }),
      )

      it(
        'reports, when asked, which leaving target rows an update clause replaced',
        withEngine(async (engine) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const f = await writeOne(engine.writer, rowsOf([1, 2, 3, 4]))
          const result = await engine.merge.execute({
            files: [ref(f)],
            targetColumns: COLUMNS,
            sourceColumns: [{ name: 'id', type: 'long' }],
            sourceRows: [{ id: 1n }, { id: 3n }],
            on: parsePredicate('target.id = source.id'),
            whenMatched: [
              { kind: 'delete', condition: parsePredicate('source.id = 3') },
              { kind: 'update', set: { amount: parseExpression('1') } },
            ],
            whenNotMatched: [],
            whenNotMatchedBySource: [{ kind: 'update', condition: parsePredicate('target.id = 4'), set: {} }],
            allowMultipleMatches: false,
            reportUpdated: true,
          })
          assert.deepEqual(
            result.files.map((m) => m.positions),
            [[0, 2, 3]],
          )
          assert.deepEqual(result.updatedPositions, [[0, 3]])
        }),
      )

      it(
        'reports a target row two source rows would update, and changes nothing',
        withEngine(async (engine) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const f = await writeOne(engine.writer, rowsOf([1, 2]))
          const result = await engine.merge.execute({
            files: [ref(f)],
            targetColumns: COLUMNS,
            sourceColumns: [{ name: 'id', type: 'long' }],
            sourceRows: [{ id: 2n }, { id: 2n }],
            on: parsePredicate('target.id = source.id'),
            whenMatched: [{ kind: 'update', set: { amount: parseExpression('1') } }],
            whenNotMatched: [],
            whenNotMatchedBySource: [],
            allowMultipleMatches: false,
          })
          assert.deepEqual(result.multipleMatch, { key: f.key, position: 1, sourceRows: [0, 1] })
          assert.deepEqual([result.files, result.rows], [[], []])
        }),
      )

      it(
        'asked to write the new rows, writes them (images and inserts apart) or returns them, and refuses a NULL for a NOT NULL column with nothing written',
        withEngine(async (engine, store) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const f = await writeOne(engine.writer, rowsOf([1, 2, 3]))
          const request: MergeRequest = {
            files: [ref(f)],
            targetColumns: COLUMNS,
            sourceColumns: [{ name: 'id', type: 'long' }],
            sourceRows: [{ id: 8n }, { id: 1n }, { id: 7n }],
            on: parsePredicate('target.id = source.id'),
            whenMatched: [{ kind: 'update', set: { amount: parseExpression('9.99') } }],
            whenNotMatched: [{ values: { id: parseExpression('source.id'), part: parseExpression("'z'") } }],
            whenNotMatchedBySource: [],
            allowMultipleMatches: false,
            write: { target: TARGET, separate: true },
          }
          const result = await engine.merge.execute(request)
          assert.deepEqual(result.files, [{ key: f.key, positions: [0], liveRows: 3 }])
          assert.equal(result.numTargetRowsMatchedUpdated, 1)
          assert.equal(result.numTargetRowsInserted, 2)
          const shown = (rows: readonly Readonly<Record<string, unknown>>[]) =>
            rows.map((r) => [Number(r.id as bigint), r.part, r.amount, r.day])
          const image = [[1, 'a', '9.99', '2024-02-29']]
          const inserted = [
            [8, 'z', null, null],
            [7, 'z', null, null],
          ]
          if (result.written === undefined) {
            assert.deepEqual(shown(result.rows), [...image, ...inserted])
          } else {
            assert.deepEqual(result.rows, [])
            const read = async (files: readonly WrittenFile[]) => {
              const out: Record<string, unknown>[] = []
              for await (const b of engine.data.scan({
                files: files.map((w) => ref(w)),
                columns: COLUMNS,
                physicalOrder: true,
              }))
                out.push(...b)
              return out
            }
            assert.deepEqual(shown(await read(result.written.images)), image)
            assert.deepEqual(shown(await read(result.written.inserts)), inserted)
            assert.deepEqual(
              [...result.written.images, ...result.written.inserts].map((w) => [
                w.partitionValues,
                w.numRecords,
              ]),
              [
                [{ part: 'a' }, 1],
                [{ part: 'z' }, 2],
              ],
            )
          }

          // No value for the NOT NULL column id: refused before any file is written, or returned
          // for the caller's writer to refuse.
          const before = await keysOf(store)
          const outcome = await engine.merge
            .execute({
              ...request,
              whenMatched: [],
              whenNotMatched: [{ values: { part: parseExpression("'z'") } }],
            })
            .catch((err: unknown) => err)
          if (outcome instanceof Error) {
            assert.ok(outcome instanceof InvalidArgumentError, String(outcome))
            assert.deepEqual(await keysOf(store), before)
          } else {
            const returned = outcome as Awaited<ReturnType<MergeExecutor['execute']>>
            assert.equal(returned.written, undefined)
            assert.deepEqual(
              returned.rows.map((r) => r.id ?? null),
              [null, null],
            )
          }
        }),
      )

      it(
        'asked to write the new rows, writes nested values as they are, and refuses a null in a non-nullable nested field',
        withEngine(async (engine, store) => {
          // An engine without MERGE (the member is optional) has nothing to check here.
          if (engine.merge === undefined) return
          const field = (name: string, type: StructType['fields'][number]['type'], nullable = true) => ({
            name,
            type,
            nullable,
            metadata: {},
          })
          const struct = (aNullable: boolean): StructType => ({
            type: 'struct',
            fields: [field('a', 'integer', aNullable), field('b', 'string')],
          })
          const schema: StructType = {
            type: 'struct',
            fields: [
              field('id', 'long', false),
              field('s', struct(false)),
              field('l', { type: 'array', elementType: 'integer', containsNull: false }),
            ],
          }
          const target: WriteTarget = { schema, partitionColumns: [], columnMappingMode: 'none' }
          const columns = schema.fields.map((f) => ({
            name: f.name,
            type: f.type,
            physicalName: f.name,
            isPartition: false,
          }))
          const f = await writeOne(engine.writer, [{ id: 1n, s: { a: 1, b: 'x' }, l: [1, 2] }], target)
          const request: MergeRequest = {
            files: [ref(f)],
            targetColumns: columns,
            // The source declares the field nullable: only the target refuses its null.
            sourceColumns: [
              { name: 'id', type: 'long' },
              { name: 's', type: struct(true) },
            ],
            sourceRows: [
              { id: 1n, s: { a: 5, b: 'y' } },
              { id: 2n, s: { a: 7, b: null } },
            ],
            on: parsePredicate('target.id = source.id'),
            whenMatched: [{ kind: 'update', set: { s: parseExpression('source.s') } }],
            whenNotMatched: [
              { values: { id: parseExpression('source.id'), s: parseExpression('source.s') } },
            ],
            whenNotMatchedBySource: [],
            allowMultipleMatches: false,
            write: { target, separate: false },
          }
          const result = await engine.merge.execute(request)
          let rows: readonly Readonly<Record<string, unknown>>[] = result.rows
          if (result.written !== undefined) {
            const out: Record<string, unknown>[] = []
            const files = [...result.written.images, ...result.written.inserts].map((w) => ref(w))
            for await (const b of engine.data.scan({ files, columns, physicalOrder: true })) out.push(...b)
            rows = out
          }
          assert.deepEqual(
            rows.map((r) => [Number(r.id as bigint), r.s, r.l]),
            [
              [1, { a: 5, b: 'y' }, [1, 2]],
              [2, { a: 7, b: null }, null],
            ],
          )

          const before = await keysOf(store)
          const outcome = await engine.merge
            .execute({ ...request, sourceRows: [{ id: 3n, s: { a: null, b: 'q' } }] })
            .catch((err: unknown) => err)
          if (outcome instanceof Error) {
            assert.ok(outcome instanceof InvalidArgumentError, String(outcome))
            assert.deepEqual(await keysOf(store), before)
          } else {
            const returned = outcome as Awaited<ReturnType<MergeExecutor['execute']>>
            assert.equal(returned.written, undefined)
            assert.deepEqual(
              returned.rows.map((r) => r.s),
              [{ a: null, b: 'q' }],
            )
          }
        }),
      )
    })

    describe('parquet handler', () => {
      it(
        'writes action rows and reads them back in order, 64-bit integers exact, batched or whole',
        withEngine(async (engine) => {
          const lines = [
            '{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}',
            '{"add":{"path":"a.parquet","partitionValues":{"p":"x"},"size":9007199254740993,"modificationTime":1,"dataChange":true}}',
          ]
          const size = await engine.parquet.writeActionRows(
            '_delta_log/00000000000000000001.checkpoint.parquet',
            lines,
          )
          assert.ok(size > 0)
          const read = await engine.parquet.readActionRows([
            '_delta_log/00000000000000000001.checkpoint.parquet',
          ])
          assert.equal(read.length, 2)
          assert.deepEqual(JSON.parse(read[0] as string).protocol.minWriterVersion, 2)
          assert.match(read[1] as string, /"size":9007199254740993[,}]/)
          assert.deepEqual(JSON.parse(read[1] as string).add.partitionValues, { p: 'x' })
          if (engine.parquet.readActionRowBatches) {
            let rows = 0
            await engine.parquet.readActionRowBatches(
              ['_delta_log/00000000000000000001.checkpoint.parquet'],
              (batch) => {
                rows += batch.length
              },
            )
            assert.equal(rows, 2)
          }
        }),
      )

      it(
        'fails with FileNotFoundError for a missing file and invalid-checkpoint for one that is not Parquet',
        withEngine(async (engine, store) => {
          await assert.rejects(engine.parquet.readActionRows(['_delta_log/none.parquet']), FileNotFoundError)
          await store.put('_delta_log/junk.parquet', new TextEncoder().encode('not parquet'))
          await assert.rejects(
            engine.parquet.readActionRows(['_delta_log/junk.parquet']),
            (err: unknown) => err instanceof InvalidTableError && err.reason === 'invalid-checkpoint',
          )
        }),
      )
    })

    it(
      'close is idempotent',
      withEngine(async (engine) => {
        await engine.close()
        await engine.close()
      }),
    )
  })
}
