/**
 * Builds large tables quickly for tests and benchmarks, without going through the writer under
 * test: DuckDB generates the Parquet files, the DV module encodes deletion vectors, and the log
 * is written with the protocol serializer. Rows: `id` long = global row number, `value` double,
 * `name` string, `part` int = file index % 4 (not a partition column).
 */
import { randomUUID } from 'node:crypto'
import { mkdir, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { buildDvFile, createFileDescriptor, initDeletionVectors } from '../../src/dv/index.js'
import { RoaringBitmapArray } from '../../src/dv/roaring-bitmap-array.js'
import { serializeCommit } from '../../src/protocol/action-json.js'
import type { Action } from '../../src/protocol/actions.js'

/** What was built, with the independent truth about its live rows. */
export interface SyntheticTable {
  readonly dir: string
  readonly files: readonly string[]
  readonly totalRows: number
  readonly liveRows: number
  /** Live rows of each file, in file order. */
  readonly liveRowsPerFile: readonly number[]
  /** Sum of `id` over live rows. */
  readonly liveIdSum: bigint
}

/**
 * Writes a table of `files` files with `rowsPerFile` rows each; when `deleteFraction` > 0,
 * every file gets a DV deleting that fraction of its rows (a seeded choice).
 */
export async function buildSyntheticTable(
  dir: string,
  opts: { files: number; rowsPerFile: number; deleteFraction?: number; seed?: number },
): Promise<SyntheticTable> {
  await mkdir(join(dir, '_delta_log'), { recursive: true })
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  })
  const con = await instance.connect()
  await initDeletionVectors()
  const names: string[] = []
  const bitmaps: RoaringBitmapArray[] = []
  let rand = opts.seed ?? 42
  const next = () => {
    rand = (Math.imul(rand, 1103515245) + 12345) >>> 0
    return rand / 2 ** 32
  }
  let liveRows = 0
  let liveIdSum = 0n
  const liveRowsPerFile: number[] = []
  for (let f = 0; f < opts.files; f++) {
    const name = `part-${String(f).padStart(5, '0')}-${randomUUID()}.c000.snappy.parquet`
    const start = f * opts.rowsPerFile
    await con.run(
      `COPY (SELECT (${start} + i)::BIGINT AS id, ((${start} + i) * 0.5)::DOUBLE AS value, 'n' || ((${start} + i) % 1000) AS name, ${f % 4}::INTEGER AS part ` +
        `FROM range(${opts.rowsPerFile}) t(i) ORDER BY i) TO '${join(dir, name)}' (FORMAT parquet, COMPRESSION snappy)`,
    )
    names.push(name)
    const deleted: number[] = []
    const fraction = opts.deleteFraction ?? 0
    if (fraction > 0) for (let i = 0; i < opts.rowsPerFile; i++) if (next() < fraction) deleted.push(i)
    bitmaps.push(RoaringBitmapArray.fromSorted(deleted))
    const deletedSet = new Set(deleted)
    liveRowsPerFile.push(opts.rowsPerFile - deleted.length)
    for (let i = 0; i < opts.rowsPerFile; i++) {
      if (!deletedSet.has(i)) {
        liveRows++
        liveIdSum += BigInt(start + i)
      }
    }
  }
  con.closeSync()
  instance.closeSync()

  const actions: Action[] = [
    { commitInfo: { timestamp: BigInt(Date.now()), operation: 'WRITE', txnId: randomUUID() } },
    ...syntheticTableSetup(BigInt(Date.now())),
  ]
  const withDv = bitmaps.filter((b) => !b.isEmpty)
  const dvFile = withDv.length > 0 ? buildDvFile(withDv) : undefined
  const uuid = randomUUID()
  if (dvFile) await writeFile(join(dir, `deletion_vector_${uuid}.bin`), dvFile.bytes)
  let k = 0
  for (const [f, name] of names.entries()) {
    const size = (await stat(join(dir, name))).size
    const start = f * opts.rowsPerFile
    const bitmap = bitmaps[f] as RoaringBitmapArray
    const entry = bitmap.isEmpty ? undefined : dvFile?.entries[k++]
    const stats = JSON.stringify({
      numRecords: opts.rowsPerFile,
      minValues: { id: start, value: start * 0.5, part: f % 4 },
      maxValues: {
        id: start + opts.rowsPerFile - 1,
        value: (start + opts.rowsPerFile - 1) * 0.5,
        part: f % 4,
      },
      nullCount: { id: 0, value: 0, name: 0, part: 0 },
      tightBounds: !entry,
    })
    actions.push({
      add: {
        path: name,
        partitionValues: {},
        size: BigInt(size),
        modificationTime: BigInt(Date.now()),
        dataChange: true,
        stats,
        ...(entry
          ? {
              deletionVector: createFileDescriptor({
                uuid,
                offset: entry.offset,
                sizeInBytes: entry.sizeInBytes,
                cardinality: entry.cardinality,
              }),
            }
          : {}),
      },
    })
  }
  await writeFile(join(dir, '_delta_log', '00000000000000000000.json'), serializeCommit(actions))
  return { dir, files: names, totalRows: opts.files * opts.rowsPerFile, liveRows, liveRowsPerFile, liveIdSum }
}

/**
 * The protocol and metadata of a synthetic table (the schema described above, deletion vectors
 * on), as its first commit carries them.
 *
 * @param createdTime - the metadata's creation time, ms since the epoch
 * @returns the `protocol` and `metaData` actions
 */
export function syntheticTableSetup(createdTime: bigint): Action[] {
  const schema = {
    type: 'struct',
    fields: [
      { name: 'id', type: 'long', nullable: true, metadata: {} },
      { name: 'value', type: 'double', nullable: true, metadata: {} },
      { name: 'name', type: 'string', nullable: true, metadata: {} },
      { name: 'part', type: 'integer', nullable: true, metadata: {} },
    ],
  }
  return [
    {
      protocol: {
        minReaderVersion: 3,
        minWriterVersion: 7,
        readerFeatures: ['deletionVectors'],
        writerFeatures: ['deletionVectors'],
      },
    },
    {
      metaData: {
        id: randomUUID(),
        format: { provider: 'parquet', options: {} },
        schemaString: JSON.stringify(schema),
        partitionColumns: [],
        configuration: { 'delta.enableDeletionVectors': 'true' },
        createdTime,
      },
    },
  ]
}
