import { stat } from 'node:fs/promises'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { DataFileRef, RowTrackingColumns } from '../engine/data-plane.js'
import type { WrittenFile, ZOrderOutput, ZOrderPermutation } from '../engine/data-writer.js'
import { InternalError } from '../errors/index.js'
import { FILE_COL, openStream, sqlFilePath, sqlString } from './duckdb-runtime.js'
import { verifyCompactionOrder } from './duckdb-writer.js'
import type { WriteLayout } from './write-layout.js'

/** Bits per column in the interleaved Z-order key. */
export const Z_ORDER_BITS = 16

/** What the Z-order rewrite needs from its write job (the writer's `WriteJob`). */
export interface ZOrderJob {
  readonly con: DuckDBConnection
  readonly layout: WriteLayout
  check(): void
  /** The live rows of `sources`: `__idx`, `__frn`, `d<i>` and, with row tracking, `__rid`, `__rcv`. */
  sourceRelation(
    sources: readonly DataFileRef[],
    withPartitions: boolean,
    rowTracking?: RowTrackingColumns,
  ): Promise<{ sql: string; paths: string[] }>
  /** COPY one select to one new scratch file; the non-empty files written. */
  copyToScratchFile(select: string): Promise<{ path: string; count: number }[]>
  /** Computes statistics of scratch files and stores them under fresh names, in order. */
  finishFiles(
    files: readonly { localPath: string; partitionValues: Readonly<Record<string, string | null>> }[],
  ): Promise<WrittenFile[]>
}

/** One partition's Z-order rewrite, as the writer checked it. */
export interface ZOrderPlan {
  readonly sources: readonly DataFileRef[]
  readonly partitionValues: Readonly<Record<string, string | null>>
  /** Indexes into `layout.dataColumns` of the clustering columns, in key order. */
  readonly columns: readonly number[]
  /** The select list of every output row: data columns, then any hidden row-tracking columns. */
  readonly selectList: string
  readonly rowTracking: RowTrackingColumns | undefined
  readonly keepPermutationUpTo: number
  readonly beforeWrite: ((liveRows: number) => void) | undefined
}

/**
 * Rewrites one partition in Z-order, all in DuckDB: each clustering column's values are ranked
 * (`dense_rank`, NULL first), scaled to {@link Z_ORDER_BITS} bits, and interleaved into a key
 * held as 64-bit words (compared in order, they compare as the whole key); the rows are numbered
 * in key order (ties by source, then physical position) into a temporary table. The outputs are
 * cut from that numbering at a row count estimated from the sources' bytes per row, so that each
 * file comes near the target size, and each is written by one COPY in order of the numbering:
 * output `k` holds rows `k * per` to `(k + 1) * per - 1`. That makes the permutation a function
 * of each row's number, read back per source in physical order when it is kept; each output is
 * then read back and its order proven, as a compaction's is.
 *
 * @param job - the write job
 * @param plan - the checked request
 * @returns the files, the live rows per source and the permutation when kept
 */
export async function writeZOrdered(job: ZOrderJob, plan: ZOrderPlan): Promise<ZOrderOutput> {
  const { con, layout } = job
  const { sql: rel, paths } = await job.sourceRelation(plan.sources, false, plan.rowTracking)
  const k = plan.columns.length
  const ranks = plan.columns.map(
    (d, c) => `dense_rank() OVER (ORDER BY d${d} ASC NULLS FIRST) - 1 AS __zr${c}`,
  )
  await con.run(`CREATE OR REPLACE TEMP TABLE z_ranked AS SELECT r.*, ${ranks.join(', ')} FROM (${rel}) r`)
  job.check()
  // A rank scaled to 16 bits: rank * 2^16 / (distinct values, NULL counted once).
  const scaled = plan.columns.map(
    (_, c) => `(__zr${c} * ${2 ** Z_ORDER_BITS}) // (max(__zr${c}) OVER () + 1) AS __zs${c}`,
  )
  const hidden = plan.rowTracking === undefined ? '' : ', __rid, __rcv'
  const data = layout.dataColumns.map((_, i) => `d${i}`).join(', ')
  await con.run(
    `CREATE OR REPLACE TEMP TABLE z_sorted AS SELECT ${data}${hidden}, __idx, __frn, ` +
      `row_number() OVER (ORDER BY ${[...keyWords(k), '__idx', '__frn'].join(', ')}) - 1 AS __ord ` +
      `FROM (SELECT *, ${scaled.join(', ')} FROM z_ranked)`,
  )
  await con.run('DROP TABLE z_ranked')
  job.check()

  const counts = new Map(
    (await con.runAndReadAll('SELECT __idx, count(*) FROM z_sorted GROUP BY __idx'))
      .getRows()
      .map((r) => [Number(r[0]), Number(r[1])] as const),
  )
  const liveRows = plan.sources.map((_, i) => counts.get(i) ?? 0)
  const total = liveRows.reduce((n, c) => n + c, 0)
  plan.beforeWrite?.(total)
  if (total === 0) return Object.freeze({ files: Object.freeze([]), liveRows: Object.freeze(liveRows) })

  const perFile = await rowsPerFile(con, paths, layout.targetFileSize)
  const outputs = Math.max(1, Math.ceil(total / perFile))
  const per = Math.ceil(total / outputs)
  const scratch: { localPath: string; partitionValues: Readonly<Record<string, string | null>> }[] = []
  const keep = plan.keepPermutationUpTo > 0 && total <= plan.keepPermutationUpTo
  for (let o = 0; o * per < total; o++) {
    job.check()
    const from = o * per
    const to = Math.min(total, from + per)
    const range = `__ord >= ${from} AND __ord < ${to}`
    const written = await job.copyToScratchFile(
      `SELECT ${plan.selectList} FROM z_sorted WHERE ${range} ORDER BY __ord`,
    )
    const [file] = written
    if (written.length !== 1 || file?.count !== to - from) {
      throw new InternalError(
        `Z-order wrote ${written.length} file(s) with ${file?.count} rows where one with ${to - from} rows was planned`,
      )
    }
    // The permutation says where each row is; it is kept only once that is proven.
    if (keep) {
      await verifyCompactionOrder(
        con,
        `SELECT 0 AS __i, __ord AS __f, ${plan.selectList} FROM z_sorted WHERE ${range}`,
        file.path,
        [{ key: `Z-order output ${o}`, rowOffsetInTarget: 0, rowCount: to - from }],
      )
    }
    scratch.push({ localPath: file.path, partitionValues: plan.partitionValues })
  }
  const permutation = keep ? await readPermutation(job, liveRows, per, scratch.length) : undefined
  const files = await job.finishFiles(scratch)
  await con.run('DROP TABLE z_sorted')
  return Object.freeze({
    files: Object.freeze(files),
    liveRows: Object.freeze(liveRows),
    ...(permutation === undefined ? {} : { permutation }),
  })
}

/**
 * The interleaved key as SQL expressions of 64-bit words, most significant first. Bit `b` of
 * column `c` (of `k`) is bit `(15 - b) * k + c` of the key counted from its most significant end,
 * which is what interleaving from the top gives.
 *
 * @param k - the number of clustering columns
 * @returns one expression per word
 */
function keyWords(k: number): string[] {
  const total = Z_ORDER_BITS * k
  const words: string[][] = Array.from({ length: Math.ceil(total / 64) }, () => [])
  for (let b = Z_ORDER_BITS - 1; b >= 0; b--) {
    for (let c = 0; c < k; c++) {
      const m = (Z_ORDER_BITS - 1 - b) * k + c
      const shift = 63 - (m % 64)
      words[Math.floor(m / 64)]?.push(`(((__zs${c} >> ${b}) & 1)::UBIGINT << ${shift})`)
    }
  }
  return words.map((terms) => `(${terms.join(' | ')})`)
}

/**
 * Rows per output: the target size over the sources' bytes per physical row (their files' sizes
 * over their row counts), at least one.
 */
async function rowsPerFile(con: DuckDBConnection, paths: readonly string[], target: number): Promise<number> {
  let bytes = 0
  for (const p of paths) bytes += (await stat(p)).size
  const list = `[${paths.map(sqlFilePath).join(', ')}]`
  const rows = Number(
    (
      await con.runAndReadAll(
        `SELECT count(*) FROM read_parquet(${list}, filename = ${sqlString(FILE_COL)}, union_by_name = true, hive_partitioning = false)`,
      )
    ).getRows()[0]?.[0] ?? 0,
  )
  if (rows === 0 || bytes === 0) return Number.MAX_SAFE_INTEGER
  return Math.max(1, Math.floor(target / (bytes / rows)))
}

/**
 * Reads each row's number back in source order (source, then physical position) and turns it
 * into (output, row): output `floor(n / per)`, row `n mod per`.
 */
async function readPermutation(
  job: ZOrderJob,
  liveRows: readonly number[],
  per: number,
  outputs: number,
): Promise<ZOrderPermutation> {
  const wide = outputs > 0xffff
  const outputIndex = liveRows.map((n) => (wide ? new Uint32Array(n) : new Uint16Array(n)))
  const outputRow = liveRows.map((n) => new Uint32Array(n))
  const stream = await openStream(job.con, `SELECT CAST(__ord AS BIGINT) FROM z_sorted ORDER BY __idx, __frn`)
  let source = 0
  let rank = 0
  for await (const chunk of stream.chunks()) {
    job.check()
    const ords = chunk.getColumnVector(0)
    const count = chunk.rowCount
    for (let i = 0; i < count; i++) {
      while (source < liveRows.length && rank >= (liveRows[source] as number)) {
        source++
        rank = 0
      }
      const n = Number(ords.getItem(i) as bigint)
      ;(outputIndex[source] as Uint16Array | Uint32Array)[rank] = Math.floor(n / per)
      ;(outputRow[source] as Uint32Array)[rank] = n % per
      rank++
    }
  }
  return Object.freeze({ outputIndex: Object.freeze(outputIndex), outputRow: Object.freeze(outputRow) })
}
