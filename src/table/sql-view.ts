import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { ColumnSpec, DataFileRef } from '../engine/data-plane.js'
import { partitionValueLiteral } from '../engine-default/duckdb-partition-literal.js'
import { FILE_COL, ROW_COL, sqlIdent, sqlString } from '../engine-default/duckdb-runtime.js'
import { duckType, isPrimitive } from '../engine-default/duckdb-types.js'
import { defaultScratchDir, scratchEntryName } from '../engine-default/scratch-dir.js'
import { type StagedFile, stageForRead } from '../engine-default/staging.js'
import { InvalidArgumentError, isDeltaError, StorageError } from '../errors/index.js'
import type { Version } from '../protocol/actions.js'
import { columnSpecs, dataFileRefs } from '../scan/table-scan.js'
import type { LoadSnapshotOptions } from '../snapshot/load-snapshot.js'
import { optionsObject } from './arguments.js'
import type { DeltaTable } from './delta-table.js'

/** Options of {@link createSnapshotView}. */
export interface SnapshotViewOptions extends LoadSnapshotOptions {
  /** Name of the view (default `t`). Helper tables get this name plus a suffix. */
  readonly name?: string | undefined
}

/** A DuckDB view over the live rows of one snapshot. */
export interface SnapshotView {
  /** The view's name. */
  readonly name: string
  /** The snapshot version the view shows. */
  readonly version: Version
  /** Data files behind the view. */
  readonly files: number
  /** Rows hidden by deletion vectors (physical rows in the files that the view leaves out). */
  readonly deletedRows: number
  /** Drops the view and its helper tables, and deletes local copies of remote files. */
  release(): Promise<void>
}

/**
 * Defines a temporary DuckDB view that shows exactly the live rows of a table snapshot, so that
 * any DuckDB query can run over a Delta table with deletion vectors.
 *
 * The view reads the snapshot's Parquet files with `file_row_number` and removes the rows named
 * by each file's deletion vector with an anti-join, so the positions are the physical positions
 * the protocol defines. Partition values come from the log, and columns carry their logical
 * names even under column mapping. Files on remote stores are copied to a private local folder
 * first; {@link SnapshotView.release} deletes the copies.
 *
 * ### Examples
 * ```ts
 * import { DuckDBInstance } from '@duckdb/node-api'
 * const con = await (await DuckDBInstance.create(':memory:')).connect()
 * const view = await createSnapshotView(con, table, { version: 3n })
 * const reader = await con.runAndReadAll('SELECT part, count(*) FROM t GROUP BY part')
 * await view.release()
 * ```
 *
 * @param connection - the DuckDB connection the view is created on (temporary objects are per connection)
 * @param table - the open table
 * @param options - `name` of the view, and `version` / `timestamp` for time travel
 * @returns the view and a release function
 * @throws {InvalidArgumentError} when the view name is empty
 * @throws {VersionNotFoundError} when the version or timestamp is not in the log
 * @throws {InvalidDeletionVectorError} on a malformed deletion vector
 * @throws {StorageError} when DuckDB cannot read the data files
 */
export async function createSnapshotView(
  connection: DuckDBConnection,
  table: DeltaTable,
  options: SnapshotViewOptions = {},
): Promise<SnapshotView> {
  if (typeof (connection as { run?: unknown } | null)?.run !== 'function') {
    throw new InvalidArgumentError('connection must be a DuckDB connection (DuckDBConnection)', {
      argument: 'connection',
    })
  }
  if (typeof (table as { snapshot?: unknown } | null)?.snapshot !== 'function') {
    throw new InvalidArgumentError('table must be an open DeltaTable', { argument: 'table' })
  }
  optionsObject(options, 'options')
  const name = options.name ?? 't'
  if (typeof name !== 'string' || name.trim() === '') {
    throw new InvalidArgumentError('The view name must be a non-empty string', { argument: 'name' })
  }
  const snap = await table.snapshot({
    version: options.version,
    timestamp: options.timestamp,
    signal: options.signal,
  })
  const columns = columnSpecs(snap, undefined)
  const files = snap.activeFiles()
  const refs = await dataFileRefs(table.engine, files, options.signal)
  const dvTable = `${name}__deleted_rows`
  const filesTable = `${name}__files`
  // Inside the scratch directory, named after this process, so that what a killed process left
  // here is swept like every other scratch entry.
  const scratchRoot = defaultScratchDir()
  await mkdir(scratchRoot, { recursive: true })
  const scratch = await mkdtemp(join(scratchRoot, scratchEntryName('sql-')))
  const staged: StagedFile[] = []
  const release = async (): Promise<void> => {
    for (const sql of [
      `DROP VIEW IF EXISTS ${sqlIdent(name)}`,
      `DROP TABLE IF EXISTS ${sqlIdent(dvTable)}`,
      `DROP TABLE IF EXISTS ${sqlIdent(filesTable)}`,
    ]) {
      try {
        await connection.run(sql)
      } catch {
        // The connection may already be closed; the temporary objects went with it.
      }
    }
    await Promise.all(staged.map((s) => s.release()))
    await rm(scratch, { recursive: true, force: true })
  }
  try {
    await connection.run(`SET TimeZone = 'UTC'`)
    for (const ref of refs) {
      staged.push(await stageForRead(table.engine.storage, ref.key, scratch, options.signal))
    }
    let deletedRows = 0
    for (const ref of refs) deletedRows += ref.deletedRows?.length ?? 0
    const sql =
      refs.length === 0
        ? emptyViewSql(name, columns)
        : await fileViewSql(connection, {
            name,
            columns,
            refs,
            paths: staged.map((s) => s.path),
            dvTable,
            filesTable,
          })
    await connection.run(sql)
    return Object.freeze({ name, version: snap.version, files: refs.length, deletedRows, release })
  } catch (err) {
    await release()
    if (isDeltaError(err)) throw err
    throw new StorageError(
      `Could not define the DuckDB view '${name}': ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    )
  }
}

function emptyViewSql(name: string, columns: readonly ColumnSpec[]): string {
  const select = columns.map((c) => `CAST(NULL AS ${duckType(c.type)}) AS ${sqlIdent(c.name)}`).join(', ')
  return `CREATE OR REPLACE TEMP VIEW ${sqlIdent(name)} AS SELECT ${select || '1 AS "_"'} WHERE false`
}

async function fileViewSql(
  con: DuckDBConnection,
  plan: {
    name: string
    columns: readonly ColumnSpec[]
    refs: readonly DataFileRef[]
    paths: readonly string[]
    dvTable: string
    filesTable: string
  },
): Promise<string> {
  const { columns, refs, paths } = plan
  const source =
    `read_parquet([${paths.map(sqlString).join(', ')}], filename = ${sqlString(FILE_COL)}, ` +
    `file_row_number = true, union_by_name = true, hive_partitioning = false)`
  const present = new Set(
    (await con.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowsJS().map((r) => String(r[0])),
  )
  let from = `FROM (SELECT *, file_row_number AS ${ROW_COL} FROM ${source}) d`

  const partitionCols = columns.filter((c) => c.isPartition)
  if (partitionCols.length > 0) {
    const cols = [FILE_COL, ...partitionCols.map((_, i) => `p${i}`)].map(sqlIdent).join(', ')
    const rows = refs.map((ref, i) => {
      const values = partitionCols.map((c) => partitionValueLiteral(ref.partitionValues, c))
      return `(${[sqlString(paths[i] as string), ...values].join(', ')})`
    })
    await con.run(
      `CREATE OR REPLACE TEMP TABLE ${sqlIdent(plan.filesTable)} AS SELECT * FROM (VALUES ${rows.join(', ')}) v(${cols})`,
    )
    from += ` JOIN ${sqlIdent(plan.filesTable)} f ON d.${FILE_COL} = f.${FILE_COL}`
  }

  await con.run(`CREATE OR REPLACE TEMP TABLE ${sqlIdent(plan.dvTable)} (file VARCHAR, pos BIGINT)`)
  const withDv = refs.some((r) => (r.deletedRows?.length ?? 0) > 0)
  if (withDv) {
    const appender = await con.createAppender(plan.dvTable, 'main', 'temp')
    refs.forEach((ref, i) => {
      const rows = ref.deletedRows
      if (!rows) return
      for (let k = 0; k < rows.length; k++) {
        appender.appendVarchar(paths[i] as string)
        appender.appendBigInt(BigInt(rows[k] as number))
        appender.endRow()
      }
    })
    appender.closeSync()
    from += ` ANTI JOIN ${sqlIdent(plan.dvTable)} x ON d.${FILE_COL} = x.file AND d.${ROW_COL} = x.pos`
  }

  const select = columns.map((c) => {
    let expr: string
    if (c.isPartition) expr = `f.${sqlIdent(`p${partitionCols.findIndex((p) => p.name === c.name)}`)}`
    else if (!present.has(c.physicalName)) expr = `CAST(NULL AS ${duckType(c.type)})`
    else if (isPrimitive(c.type)) expr = `CAST(d.${sqlIdent(c.physicalName)} AS ${duckType(c.type)})`
    else expr = `d.${sqlIdent(c.physicalName)}`
    return `${expr} AS ${sqlIdent(c.name)}`
  })
  return `CREATE OR REPLACE TEMP VIEW ${sqlIdent(plan.name)} AS SELECT ${select.join(', ')} ${from}`
}
