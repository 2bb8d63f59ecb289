import {
  type ColumnBounds,
  type RemovedRowIds,
  type RemovedRows,
  removedRows,
} from '../conflict/case5b-removed-rows.js'
import { initDeletionVectors } from '../dv/index.js'
import { RoaringBitmapArray } from '../dv/roaring-bitmap-array.js'
import type { ColumnSpec, DataFileRef, ValueBounds } from '../engine/data-plane.js'
import type { WrittenFile } from '../engine/data-writer.js'
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import {
  columnsOf,
  dateLiteral,
  decimalLiteral,
  type Expression,
  floatingLiteral,
  integralLiteral,
  type Literal,
  stringLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from '../expressions/ast.js'
import { parseExpression } from '../expressions/parse-predicate.js'
import type { Action, AddFile, DeletionVectorDescriptor } from '../protocol/actions.js'
import { tombstoneOf, withNewDeletionVector } from '../protocol/file-action-rewrites.js'
import { fieldByName, type StructField } from '../protocol/schema.js'
import { parseStats } from '../protocol/stats.js'
import { canWriteDeletionVectors, isAppendOnly } from '../protocol/table-features.js'
import { columnSpecs } from '../scan/column-specs.js'
import { dataFileRefs } from '../scan/data-file-refs.js'
import { snapshotColumns } from '../scan/prune-files.js'
import { checkFilesTrackRows } from '../scan/row-tracking-scan.js'
import type { Snapshot } from '../snapshot/snapshot.js'
import { rowTrackingToPreserve } from '../txn/row-copying.js'
import type { OperationContext } from '../txn/staged-operation.js'
import { addFileOf, writeDeletionVectors, writeTargetOf } from './write-support.js'

/** One file some of whose live rows leave the table (deleted, or replaced by new images). */
export interface TouchedFile {
  readonly file: AddFile
  readonly ref: DataFileRef
  /** Ascending physical positions of the rows that leave. */
  readonly positions: readonly number[]
  /** Live rows of the file at read time. */
  readonly liveRows: number
  /**
   * On a table with row tracking enabled: the stable row id of each row of `positions`, read by
   * the same scan that matched them.
   */
  readonly rowIds?: readonly (bigint | null)[] | undefined
  /** With `rowIds`: bounds of the values of the rows that leave, for conflict-time pruning. */
  readonly bounds?: readonly ColumnBounds[] | undefined
}

/** What removing rows from files produced. */
export interface RowRemoval {
  readonly actions: readonly Action[]
  /** Rows that left the table (for files removed unread, their live count from the log). */
  readonly removedRows: number
  /** Files removed whole or rewritten without the rows. */
  readonly removedFiles: number
  readonly removedBytes: number
  /** Copy-on-write outputs (the rows that stay). */
  readonly addedFiles: number
  readonly addedBytes: number
  /** Rows copied to the copy-on-write outputs. */
  readonly copiedRows: number
  /** DVs written on files that had none. */
  readonly dvsAdded: number
  /** DVs written on files that already had one. */
  readonly dvsUpdated: number
  /** Files with a DV that left the table whole or were rewritten. */
  readonly dvsRemoved: number
  /** The files rows were taken out of by position (the change data of the rows that left). */
  readonly touched: readonly TouchedFile[]
}

/**
 * The live rows of `candidates` matching `predicate`, by file: the files are read with their
 * deletion vectors applied, and those without a match are left out.
 *
 * @param ctx - the transaction's context
 * @param candidates - the files that may hold matching rows (already pruned)
 * @param predicate - the row predicate; every live row matches when it is absent
 * @returns the touched files, in `candidates` order
 */
export async function matchRows(
  ctx: OperationContext,
  candidates: readonly AddFile[],
  predicate: Expression | undefined,
): Promise<TouchedFile[]> {
  if (candidates.length === 0) return []
  const refs = await dataFileRefs(ctx.engine, candidates, ctx.signal)
  const columns = columnSpecs(ctx.snapshot, undefined)
  // Row tracking enabled: the same scan keeps the stable ids of the matched rows and bounds on
  // their values, which a conflict with a relocating OPTIMIZE needs (Case 5b); no extra read.
  const rowTracking = rowTrackingToPreserve(ctx.snapshot)
  const boundsOf = rowTracking === undefined ? [] : boundedColumns(columns)
  const matches = await ctx.engine.data.matchPositions({
    files: refs,
    predicate,
    predicateColumns: columns,
    signal: ctx.signal,
    ...(rowTracking === undefined ? {} : { rowTracking, boundsOf }),
  })
  const touched: TouchedFile[] = []
  for (const [i, m] of matches.entries()) {
    if (m.positions.length === 0) continue
    const t: TouchedFile = {
      file: candidates[i]!,
      ref: refs[i]!,
      positions: m.positions,
      liveRows: m.liveRows,
    }
    touched.push(
      m.rowIds === undefined ? t : { ...t, rowIds: m.rowIds, bounds: columnBounds(boundsOf, m.bounds) },
    )
  }
  return touched
}

/** At most this many columns bound the rows a DML removes (Delta collects stats on 32 by default). */
const MAX_BOUNDED_COLUMNS = 32

/** Data columns whose min/max statistics can exclude a file: top-level, ordered primitive types. */
function boundedColumns(columns: readonly ColumnSpec[]): ColumnSpec[] {
  const ordered = new Set([
    'byte',
    'short',
    'integer',
    'long',
    'float',
    'double',
    'date',
    'timestamp',
    'timestamp_ntz',
    'string',
  ])
  return columns
    .filter(
      (c) =>
        !c.isPartition && typeof c.type === 'string' && (ordered.has(c.type) || c.type.startsWith('decimal')),
    )
    .slice(0, MAX_BOUNDED_COLUMNS)
}

/**
 * The bounds of the leaving rows on each column: the smallest and largest value as literals, and
 * whether some value is null. A column whose bounds cannot be written as a literal (NaN) is left
 * out: an unbounded column only admits more files.
 */
function columnBounds(
  columns: readonly ColumnSpec[],
  bounds: readonly ValueBounds[] | undefined,
): ColumnBounds[] {
  const out: ColumnBounds[] = []
  columns.forEach((c, k) => {
    const b = bounds?.[k]
    if (b === undefined) return
    const nulls = b.nullCount > 0
    if (b.min === null || b.max === null) {
      if (nulls) out.push({ column: c.name, nulls })
      return
    }
    const low = literalOf(c.type, b.min)
    const high = literalOf(c.type, b.max)
    if (low === undefined || high === undefined) return
    out.push({ column: c.name, range: { low, high }, nulls })
  })
  return out
}

/** A literal of a value in the data plane's row representation, or undefined when it has none. */
function literalOf(type: ColumnSpec['type'], v: unknown): Literal | undefined {
  try {
    switch (type) {
      case 'byte':
      case 'short':
      case 'integer':
      case 'long':
        return typeof v === 'bigint' || typeof v === 'number' ? integralLiteral(type, v) : undefined
      case 'float':
      case 'double':
        return typeof v === 'number' && Number.isFinite(v) ? floatingLiteral(type, v) : undefined
      case 'date':
        return typeof v === 'string' ? dateLiteral(v) : undefined
      case 'timestamp':
        return typeof v === 'string' ? timestampLiteral(v) : undefined
      case 'timestamp_ntz':
        return typeof v === 'string' ? timestampNtzLiteral(v) : undefined
      case 'string':
        return typeof v === 'string' ? stringLiteral(v) : undefined
      default:
        return typeof v === 'string' ? decimalLiteral(v) : undefined
    }
  } catch {
    return undefined
  }
}

/**
 * What a DML keeps of the rows it takes out, for Case 5b: per touched file the stable ids of the
 * rows leaving it (all its live rows when every one leaves) and their bounds. Undefined when the
 * table does not enable row tracking, or some file's rows were not read with their ids (a file
 * removed whole unread): the DML then cannot be reconciled with a relocation, and aborts.
 *
 * @param touched - the files and rows the DML takes out
 * @param options - files removed whole without being read, and how many rows of the DML's new
 *   files carry a preserved id
 * @returns the record, or undefined
 */
export function removedRowIdsOf(
  touched: readonly TouchedFile[],
  options: { readonly wholeFiles?: readonly AddFile[]; readonly preservedImageRows?: number } = {},
): RemovedRowIds | undefined {
  if ((options.wholeFiles?.length ?? 0) > 0) return undefined
  const files = new Map<string, RemovedRows>()
  for (const t of touched) {
    if (t.positions.length === 0) continue
    if (t.rowIds === undefined || t.rowIds.length !== t.positions.length) return undefined
    const rows = removedRows(t.rowIds, t.positions.length >= t.liveRows, t.bounds ?? [])
    if (rows === undefined) return undefined
    files.set(t.file.path, rows)
  }
  return Object.freeze({ files, preservedImageRows: options.preservedImageRows ?? 0 })
}

/**
 * Replaces rows: takes the `touched` rows out of their files (see {@link removeRows}) once
 * `written` already holds what replaces them, and returns the actions of both.
 *
 * @param ctx - the transaction's context
 * @param touched - the files and the positions leaving them
 * @param written - the new files (updated images, inserted rows), already handed to `ctx.wrote`
 * @returns the removal and every action to commit
 */
export async function replaceRows(
  ctx: OperationContext,
  touched: readonly TouchedFile[],
  written: readonly WrittenFile[],
): Promise<{ removal: RowRemoval; actions: Action[] }> {
  const removal = await removeRows(ctx, touched)
  const now = ctx.now()
  return { removal, actions: [...removal.actions, ...written.map((f) => ({ add: addFileOf(f, now, true) }))] }
}

/**
 * Takes rows out of files as a DV-based or copy-on-write DELETE does (protocol.md 5.6): a file
 * whose every live row leaves is removed whole; otherwise, when the table may take deletion
 * vectors, it gets the union of its old DV and the positions (`remove(P, oldDV)` +
 * `add(P, newDV)`, stats marked not tight); without, its remaining rows are copied to new files
 * and the file is removed. With row tracking enabled the copies keep each row's stable id and
 * commit version in the materialized columns ({@link rowTrackingToPreserve}), so the caller
 * declares `preservesRowIds`. Every action has `dataChange = true`. What it writes (DV file,
 * copies) is handed to `ctx.wrote` as soon as it is stored.
 *
 * @param ctx - the transaction's context
 * @param touched - the files and the positions leaving them (files without positions are skipped)
 * @param wholeFiles - files every live row of which leaves, known without reading them (a
 *   partition-only predicate): removed whole
 * @returns the actions and what they did
 * @throws {StorageError} when writing fails
 */
export async function removeRows(
  ctx: OperationContext,
  touched: readonly TouchedFile[],
  wholeFiles: readonly AddFile[] = [],
): Promise<RowRemoval> {
  const snap = ctx.snapshot
  const useDeletionVectors = canWriteDeletionVectors(snap.protocol, snap.metadata)
  const now = ctx.now()
  const actions: Action[] = []
  const dvUpdates: Array<{ file: AddFile; bitmap: RoaringBitmapArray }> = []
  const rewrites: TouchedFile[] = []
  let removedRows = 0
  let removedFiles = 0
  let removedBytes = 0
  let dvsRemoved = 0
  const removeWhole = (file: AddFile): void => {
    actions.push({ remove: tombstoneOf(file, BigInt(now), true) })
    removedFiles++
    removedBytes += Number(file.size)
    if (file.deletionVector) dvsRemoved++
  }
  for (const f of wholeFiles) {
    removeWhole(f)
    removedRows += liveRowsOf(f)
  }
  try {
    for (const t of touched) {
      if (t.positions.length === 0) continue
      removedRows += t.positions.length
      if (t.positions.length >= t.liveRows) {
        removeWhole(t.file)
      } else if (useDeletionVectors) {
        await initDeletionVectors()
        // The old DV's positions and the leaving ones are disjoint and ascending: one merge
        // builds the new DV, with no bitmap per part and no union.
        const set = t.ref.deletedRowSet
        if (set instanceof RoaringBitmapArray) {
          // The old DV as a set: a union, with no array of its positions.
          const leaving = RoaringBitmapArray.fromSorted(t.positions)
          dvUpdates.push({ file: t.file, bitmap: set.union(leaving) })
          leaving.dispose()
        } else {
          const old = t.ref.deletedRows
          const positions =
            old === undefined || old.length === 0 ? t.positions : mergeAscending(old, t.positions)
          dvUpdates.push({ file: t.file, bitmap: RoaringBitmapArray.fromSorted(positions) })
        }
      } else {
        rewrites.push(t)
      }
    }
    let copied: WrittenFile[] = []
    if (rewrites.length > 0) {
      // Row tracking enabled: the copies keep their stable ids and commit versions.
      const rowTracking = rowTrackingToPreserve(snap)
      if (rowTracking !== undefined) checkFilesTrackRows(rewrites.map((r) => r.file))
      copied = await ctx.engine.writer.rewrite({
        sources: rewrites.map((r) => r.ref),
        positions: new Map(rewrites.map((r) => [r.ref.key, r.positions])),
        positionsMode: 'exclude',
        target: writeTargetOf(snap),
        signal: ctx.signal,
        rowTracking,
      })
      ctx.wrote(copied.map((f) => f.key))
    }
    const { descriptors, key } = await writeDeletionVectors(
      ctx.engine,
      dvUpdates.map((u) => u.bitmap),
      ctx.signal,
    )
    if (key !== undefined) ctx.wrote([key])
    for (const [i, u] of dvUpdates.entries()) {
      const dv = descriptors[i] as DeletionVectorDescriptor
      actions.push({ remove: tombstoneOf(u.file, BigInt(now), true) })
      actions.push({ add: withNewDeletionVector(u.file, dv, true) })
    }
    for (const r of rewrites) removeWhole(r.file)
    for (const f of copied) actions.push({ add: addFileOf(f, now, true) })
    return {
      actions,
      removedRows,
      removedFiles,
      removedBytes,
      addedFiles: copied.length,
      addedBytes: copied.reduce((n, f) => n + f.size, 0),
      copiedRows: copied.reduce((n, f) => n + f.numRecords, 0),
      dvsAdded: dvUpdates.filter((u) => u.file.deletionVector === undefined).length,
      dvsUpdated: dvUpdates.filter((u) => u.file.deletionVector !== undefined).length,
      dvsRemoved,
      touched: touched.filter((t) => t.positions.length > 0),
    }
  } finally {
    // The bitmaps live in wasm memory; the DV file holds their bytes now.
    for (const u of dvUpdates) u.bitmap.dispose()
  }
}

/**
 * The ascending union of two ascending position lists, duplicates kept (`fromSorted` collapses
 * them).
 */
function mergeAscending(a: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  const out = new Float64Array(a.length + b.length)
  let i = 0
  let j = 0
  let n = 0
  while (i < a.length && j < b.length) out[n++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!
  while (i < a.length) out[n++] = a[i++]!
  while (j < b.length) out[n++] = b[j++]!
  return out
}

/** Live rows of a file from the log (its `numRecords` less its DV's cardinality), 0 when unknown. */
function liveRowsOf(f: AddFile): number {
  const total = parseStats(f.stats)?.numRecords ?? 0n
  const live = total - (f.deletionVector?.cardinality ?? 0n)
  return live > 0n ? Number(live) : 0
}

/**
 * Parses and checks `set` assignments against a snapshot's schema: every key is a top-level
 * column (matched case-insensitively, named once), every value an expression over existing
 * columns, and no NOT NULL column gets a literal NULL.
 *
 * @param snap - the read snapshot
 * @param set - column name to SQL expression text (or a parsed expression)
 * @param argument - the option name for messages
 * @returns column name as the schema spells it to its expression
 * @throws {InvalidArgumentError} for an empty or malformed `set`, an unknown or repeated column,
 *   a nested column, or NULL for a NOT NULL column
 * @throws {InvalidPredicateError} when an expression does not parse
 */
export function parseAssignments(
  snap: Snapshot,
  set: unknown,
  argument = 'set',
): Readonly<Record<string, Expression>> {
  if (set === null || typeof set !== 'object' || Array.isArray(set)) {
    throw new InvalidArgumentError(`${argument} must be an object of column name to SQL expression`, {
      argument,
      hint: "Pass e.g. { set: { name: \"'x'\", value: 'value + 1' } }.",
    })
  }
  const entries = Object.entries(set as Record<string, unknown>)
  if (entries.length === 0) {
    throw new InvalidArgumentError(`${argument} names no column to change`, { argument })
  }
  const columns = snapshotColumns(snap)
  const out: Record<string, Expression> = {}
  for (const [name, raw] of entries) {
    const field = assignedField(snap, name, argument)
    if (Object.hasOwn(out, field.name)) {
      throw new InvalidArgumentError(`Column '${field.name}' is assigned twice in ${argument}`, { argument })
    }
    const expr = toExpression(raw, `${argument}.${name}`)
    checkSetColumns(snap, expr, columns, field.name, argument)
    if (!field.nullable && isNullLiteral(expr)) {
      throw new InvalidArgumentError(`Column '${field.name}' is NOT NULL and cannot be set to NULL`, {
        argument,
      })
    }
    out[field.name] = expr
  }
  return Object.freeze(out)
}

/**
 * Every column a `set` expression names exists. A value meant as text but written without quotes
 * reads as a column name, the usual slip, so the message says which expression it was in and how
 * to write a string.
 *
 * @throws {InvalidArgumentError} for a column the table lacks
 */
function checkSetColumns(
  snap: Snapshot,
  expr: Expression,
  columns: ReturnType<typeof snapshotColumns>,
  target: string,
  argument: string,
): void {
  for (const path of columnsOf(expr)) {
    if (columns.resolve(path) !== undefined) continue
    const unknown = path.join('.')
    throw new InvalidArgumentError(
      `Unknown column '${unknown}' in the ${argument} expression for column '${target}'`,
      {
        argument,
        hint: `A ${argument} value is a SQL expression: write a string literal in single quotes, e.g. { ${target}: "'${unknown}'" }. The table has: ${snap.schema.fields.map((f) => f.name).join(', ')}`,
      },
    )
  }
}

/**
 * The top-level field a `set` key names.
 *
 * @throws {InvalidArgumentError} for an unknown or nested column
 */
function assignedField(snap: Snapshot, name: string, argument: string): StructField {
  const field = fieldByName(snap.schema, name)
  if (field !== undefined) return field
  const nested = name.includes('.') ? ' (nested fields cannot be assigned; set the whole struct column)' : ''
  throw new InvalidArgumentError(`Cannot assign unknown column '${name}'${nested}`, {
    argument,
    hint: `The table has: ${snap.schema.fields.map((f) => f.name).join(', ')}`,
  })
}

/**
 * An expression from SQL text or a parsed tree.
 *
 * @param raw - SQL expression text, or an expression node
 * @param argument - the option name for messages
 * @returns the expression
 * @throws {InvalidArgumentError} when the value is neither
 * @throws {InvalidPredicateError} when the text does not parse
 */
export function toExpression(raw: unknown, argument: string): Expression {
  if (typeof raw === 'string') {
    if (raw.trim() === '') {
      throw new InvalidArgumentError(
        `${argument} is empty; give a SQL expression such as 'value + 1' or 'NULL'`,
        {
          argument,
        },
      )
    }
    return parseExpression(raw)
  }
  if (raw !== null && typeof raw === 'object' && typeof (raw as { kind?: unknown }).kind === 'string') {
    return raw as Expression
  }
  throw new InvalidArgumentError(`${argument} must be SQL expression text, got ${describe(raw)}`, {
    argument,
    hint: 'Quote string values inside the SQL: { name: "\'Alice\'" }.',
  })
}

/**
 * Whether an expression is a NULL literal, possibly under casts.
 *
 * @param expr - an expression
 * @returns true for `NULL` and `CAST(NULL AS t)`
 */
export function isNullLiteral(expr: Expression): boolean {
  if (expr.kind === 'literal') return expr.type === 'null'
  if (expr.kind === 'cast') return isNullLiteral(expr.operand)
  return false
}

/**
 * Refuses row-changing DML on an append-only table (`delta.appendOnly`).
 *
 * @param snap - the read snapshot
 * @param operation - the operation name for the message
 * @throws {UnsupportedError} when the table is append-only
 */
export function checkNotAppendOnly(snap: Snapshot, operation: string): void {
  if (isAppendOnly(snap.protocol, snap.metadata)) {
    throw new UnsupportedError(
      `${operation} cannot change or delete rows of ${snap.location}: the table is append-only (delta.appendOnly = true)`,
      { hint: 'Only appends are allowed; unset delta.appendOnly to modify rows.' },
    )
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
