import { mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { DuckDBConnection } from '@duckdb/node-api'
import type { ColumnSpec, DataFileRef } from '../engine/data-plane.js'
import { isDeltaError, StorageError } from '../errors/index.js'
import type { ObjectStore } from '../storage/object-store.js'
import { deletedPositionsOf } from './duckdb-deletion-mask.js'
import { defineLiveRows } from './duckdb-live-rows.js'
import { sqlIdent } from './duckdb-runtime.js'
import { duckType } from './duckdb-types.js'
import { defaultScratchDir, ensureScratchDir, scratchEntryName } from './scratch-dir.js'
import { type StagedFile, stageAllForRead } from './staging.js'

/** What {@link createLiveRowsView} shows. */
export interface LiveRowsViewRequest {
  /** Name of the view; its helper tables get this name plus a suffix. */
  readonly name: string
  /** The view's columns, in order, under their logical names. */
  readonly columns: readonly ColumnSpec[]
  /** The data files whose live rows the view shows. */
  readonly files: readonly DataFileRef[]
  /** The store the file keys are in; files that have no local path are copied first. */
  readonly storage: ObjectStore
  readonly signal?: AbortSignal | undefined
}

/** A DuckDB view over the live rows of some data files. */
export interface LiveRowsView {
  /** The view's name. */
  readonly name: string
  /** Data files behind the view. */
  readonly files: number
  /** Rows hidden by deletion vectors (physical rows in the files that the view leaves out). */
  readonly deletedRows: number
  /**
   * The local directories the view reads from: the table root of a local store, and the private
   * folder remote files are copied to. A sandbox that allows only these still reads the view.
   */
  readonly directories: readonly string[]
  /** Drops the view and its helper tables, and deletes local copies of remote files. */
  release(): Promise<void>
}

/**
 * Defines a temporary DuckDB view of the live rows of data files on a caller's connection, so
 * that any DuckDB query can run over them: the {@link defineLiveRows} relation, with each column
 * under its logical name (quoted, so any name works; a query must quote a name that DuckDB's
 * parser reads as a keyword).
 *
 * Files on remote stores are copied to a private local folder first, inside the scratch
 * directory and named after this process, so that what a killed process left there is swept like
 * every other scratch entry; {@link LiveRowsView.release} deletes the copies. The connection's
 * time zone is set to UTC, which partition literals require.
 *
 * @param connection - the connection the view is created on (temporary objects are per connection)
 * @param request - the view's name, columns, files and store
 * @returns the view and a release function
 * @throws {InvalidDeletionVectorError} on a malformed deletion vector
 * @throws {InvalidTableError} `malformed-action` when a partition value does not fit its column type
 * @throws {StorageError} when DuckDB cannot read the data files
 */
export async function createLiveRowsView(
  connection: DuckDBConnection,
  request: LiveRowsViewRequest,
): Promise<LiveRowsView> {
  const { name, columns, files } = request
  const tables = {
    files: `${name}__files`,
    deletedRows: `${name}__deleted_rows`,
    deletionMasks: `${name}__deletion_masks`,
  }
  const scratchRoot = defaultScratchDir()
  await ensureScratchDir(scratchRoot)
  const scratch = await mkdtemp(join(scratchRoot, scratchEntryName('sql-')))
  const staged: StagedFile[] = []
  const release = async (): Promise<void> => {
    for (const object of [name, tables.files, tables.deletedRows, tables.deletionMasks]) {
      try {
        await connection.run(`DROP ${object === name ? 'VIEW' : 'TABLE'} IF EXISTS ${sqlIdent(object)}`)
      } catch {
        // The connection may already be closed; the temporary objects went with it.
      }
    }
    await Promise.all(staged.map((s) => s.release()))
    await rm(scratch, { recursive: true, force: true })
  }
  try {
    await connection.run(`SET TimeZone = 'UTC'`)
    await stageAllForRead(
      request.storage,
      files.map((f) => f.key),
      scratch,
      request.signal,
      staged,
    )
    let deletedRows = 0
    for (const f of files) deletedRows += deletedPositionsOf(f)?.count ?? 0
    let select: string
    if (files.length === 0) {
      const nulls = columns.map((c) => `CAST(NULL AS ${duckType(c.type)}) AS ${sqlIdent(c.name)}`)
      select = `SELECT ${nulls.join(', ') || '1 AS "_"'} WHERE false`
    } else {
      const live = await defineLiveRows(connection, {
        files,
        paths: staged.map((s) => s.path),
        columns,
        tables,
      })
      const named = columns.map((c, k) => `c${k} AS ${sqlIdent(c.name)}`)
      select = `SELECT ${named.join(', ') || '1 AS "_"'} FROM (${live.sql})`
    }
    await connection.run(`CREATE OR REPLACE TEMP VIEW ${sqlIdent(name)} AS ${select}`)
    const local = request.storage.localPath?.('')
    const directories = Object.freeze([...(local === undefined ? [] : [local]), scratch])
    return Object.freeze({ name, files: files.length, deletedRows, directories, release })
  } catch (err) {
    await release()
    if (isDeltaError(err)) throw err
    throw new StorageError(
      `Could not define the DuckDB view '${name}': ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    )
  }
}
