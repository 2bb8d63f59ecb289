/**
 * Checkpoint rows whose `add` carries its statistics (or partition values) only in the typed
 * `stats_parsed` (`partitionValues_parsed`) struct, as Spark and Databricks write them with
 * `delta.checkpoint.writeStatsAsJson=false`. Typing those values needs the table schema, which
 * sits in another row of the checkpoint (possibly another part), so such rows are set aside
 * while the checkpoint is read and completed once its metadata is known.
 */
import { type ActionContext, parseCheckpointRow } from '../protocol/action-json.js'
import type { Action, Metadata, Protocol } from '../protocol/actions.js'
import {
  addNeedsParsedColumns,
  completeAddFromParsed,
  type ParsedColumnsLayout,
  parsedColumnsLayout,
} from '../protocol/parsed-stats.js'
import { parseSchema } from '../protocol/schema.js'
import { columnMappingMode } from '../protocol/table-features.js'

/** A checkpoint row set aside until the table schema is known. */
export interface DeferredCheckpointRow {
  readonly row: Readonly<Record<string, unknown>>
  readonly ctx: ActionContext
}

/**
 * Whether a decoded checkpoint row must wait for the table schema.
 *
 * @param row - the decoded row (nulls stripped)
 * @returns true for an `add` whose statistics or partition values exist only as parsed structs
 */
export function needsSchema(row: Readonly<Record<string, unknown>>): boolean {
  return addNeedsParsedColumns(row.add)
}

/**
 * Parses the rows set aside, with their parsed structs converted through the schema of the
 * checkpoint's own metadata.
 *
 * @param rows - the rows set aside, in read order
 * @param actions - the checkpoint's other actions (its protocol and metadata among them)
 * @returns the rows' actions, in order
 * @throws {InvalidTableError} `malformed-action` when a row is malformed (as any checkpoint row)
 */
export function parseDeferredRows(
  rows: readonly DeferredCheckpointRow[],
  actions: readonly Action[],
): Action[] {
  const out: Action[] = []
  if (rows.length === 0) return out
  const layout = layoutOf(actions)
  for (const { row, ctx } of rows) {
    const add = row.add as Readonly<Record<string, unknown>>
    const action = parseCheckpointRow(
      layout === undefined ? row : { ...row, add: completeAddFromParsed(add, layout) },
      ctx,
    )
    if (action) out.push(action)
  }
  return out
}

function layoutOf(actions: readonly Action[]): ParsedColumnsLayout | undefined {
  let metadata: Metadata | undefined
  let protocol: Protocol | undefined
  for (const a of actions) {
    if ('metaData' in a) metadata = a.metaData
    else if ('protocol' in a) protocol = a.protocol
  }
  if (metadata?.schemaString === undefined || protocol === undefined) return undefined
  try {
    const schema = parseSchema(metadata.schemaString)
    return parsedColumnsLayout(schema, metadata.partitionColumns, columnMappingMode(protocol, metadata))
  } catch {
    // Statistics are advisory: a schema that cannot type them leaves the files without; the
    // snapshot reports a bad schema or mode itself when it needs them.
    return undefined
  }
}
