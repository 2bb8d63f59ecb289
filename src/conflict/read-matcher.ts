/**
 * Whether a file may hold rows a recorded read selected, judged from its partition values
 * (exact) or its statistics (bounds). Every doubt, including an unusable schema, answers "may".
 */
import {
  type ColumnResolver,
  columnsFromSchema,
  type Expression,
  type FileStats,
  mayMatchFile,
} from '../expressions/index.js'
import type { AddFile, Metadata } from '../protocol/actions.js'
import { parseJsonText } from '../protocol/json-text.js'
import type { ReadPredicate } from './transaction-info.js'

/** Evaluates read predicates against files of one table. */
export interface ReadMatcher {
  /** Whether the table has partition columns. */
  readonly partitioned: boolean
  /**
   * @param read - a recorded read
   * @param file - a file (its partition values are used)
   * @returns false only when the read's partition part provably excludes the file
   */
  partitionMayMatch(read: ReadPredicate, file: Pick<AddFile, 'partitionValues'>): boolean
  /**
   * @param predicate - a predicate over data columns
   * @param file - a file (its stats and partition values are used)
   * @returns false only when the stats prove no row of the file satisfies the predicate
   */
  statsMayMatch(predicate: Expression, file: Pick<AddFile, 'partitionValues' | 'stats'>): boolean
}

/**
 * A matcher for the table described by `metadata` (the read-time metadata of the transaction).
 *
 * @param metadata - the table's schema and partition columns
 * @returns the matcher
 */
export function createReadMatcher(metadata: Metadata): ReadMatcher {
  let columns: ColumnResolver | undefined
  try {
    if (metadata.schemaString !== undefined) {
      columns = columnsFromSchema(metadata.schemaString, { partitionColumns: metadata.partitionColumns })
    }
  } catch {
    columns = undefined
  }
  const partitioned = metadata.partitionColumns.length > 0
  return Object.freeze({
    partitioned,
    partitionMayMatch(read: ReadPredicate, file: Pick<AddFile, 'partitionValues'>): boolean {
      if (isTrue(read.partitionPredicate) || columns === undefined) return true
      return mayMatchFile(read.partitionPredicate, undefined, file.partitionValues, columns)
    },
    statsMayMatch(predicate: Expression, file: Pick<AddFile, 'partitionValues' | 'stats'>): boolean {
      if (isTrue(predicate) || columns === undefined) return true
      const stats = parseFileStats(file.stats)
      if (stats === undefined) return true
      return mayMatchFile(predicate, stats, file.partitionValues, columns)
    },
  })
}

/**
 * Whether an expression is the literal `TRUE` (a read without filters).
 *
 * @param expr - an expression
 * @returns true for the `TRUE` literal
 */
export function isTrue(expr: Expression): boolean {
  return expr.kind === 'literal' && expr.type === 'boolean' && expr.value === true
}

function parseFileStats(text: string | undefined): FileStats | undefined {
  if (text === undefined || text === '') return undefined
  try {
    const v: unknown = parseJsonText(text)
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as FileStats) : undefined
  } catch {
    return undefined
  }
}
