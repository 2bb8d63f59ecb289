import { fileDescriptorsExhausted } from '../errors/exhausted-resources.js'
import {
  InternalError,
  InvalidArgumentError,
  InvalidPredicateError,
  isDeltaError,
  StorageError,
  TableClosedError,
} from '../errors/index.js'
import type { Expression } from '../expressions/ast.js'
import { toSql } from '../expressions/to-sql.js'

/**
 * What a failure inside the data plane says about its cause:
 * - `query`: DuckDB rejected what the query computes (a value that does not convert, an
 *   overflow, a type mismatch, a malformed expression): the caller's expression when there is one;
 * - `io`: a file could not be read or written, by DuckDB or by Node;
 * - `internal`: DuckDB reported an internal failure, or the JavaScript side threw an error no
 *   library code raises on purpose (a `TypeError`, a stack overflow): both are bugs;
 * - `other`: any other DuckDB failure (out of memory, a transaction or catalog conflict).
 */
export type DataPlaneFailureKind = 'query' | 'io' | 'internal' | 'other'

/**
 * DuckDB error types (the words before ` Error:` that start every DuckDB message) whose cause is
 * the query itself rather than the files or the engine.
 */
const QUERY_TYPES: ReadonlySet<string> = new Set([
  'Binder',
  'Catalog',
  'Constraint',
  'Conversion',
  'Decimal',
  'Divide by Zero',
  'Expression',
  'Invalid Input',
  'Invalid type',
  'Mismatch Type',
  'Not implemented',
  'Out of Range',
  'Parameter Not Allowed',
  'Parameter Not Resolved',
  'Parser',
  'Syntax',
  'Unknown Type',
])

/**
 * The query types above that are about the SQL's shape (syntax, names, function signatures)
 * rather than about a value: in SQL the library wrote without any caller input, such an error
 * means the library wrote bad SQL.
 */
const SHAPE_TYPES: ReadonlySet<string> = new Set([
  'Binder',
  'Catalog',
  'Not implemented',
  'Parameter Not Allowed',
  'Parameter Not Resolved',
  'Parser',
  'Syntax',
])

const IO_TYPES: ReadonlySet<string> = new Set(['IO', 'HTTP', 'Network', 'Permission'])

const INTERNAL_TYPES: ReadonlySet<string> = new Set(['INTERNAL', 'FATAL'])

/**
 * The DuckDB error type of a failure, e.g. `Conversion` for `Conversion Error: Could not convert
 * ...`. DuckDB's Node bindings throw plain `Error`s whose message starts with the type: the message
 * is the only place the type is kept, so it is read from there (and only for errors that are
 * neither library errors nor JavaScript's own subclasses).
 *
 * @param err - anything thrown
 * @returns the type, or undefined when `err` is not a DuckDB error
 */
export function duckDbErrorType(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.constructor !== Error || isDeltaError(err)) return undefined
  // A failure inside a multi-statement text carries a prefix naming the step before the type.
  const m = /^(?:Failed to [^:]*: )?([A-Za-z][A-Za-z ]*?) Error: /.exec(err.message)
  return m?.[1]
}

/**
 * Classifies a failure raised while the data plane ran (see {@link DataPlaneFailureKind}).
 *
 * @param err - anything thrown, not a library error
 * @returns the kind
 */
export function dataPlaneFailureKind(err: unknown): DataPlaneFailureKind {
  const type = duckDbErrorType(err)
  if (type !== undefined) {
    if (QUERY_TYPES.has(type)) return 'query'
    if (IO_TYPES.has(type)) return 'io'
    if (INTERNAL_TYPES.has(type)) return 'internal'
    return 'other'
  }
  return isSystemError(err) ? 'io' : 'internal'
}

/**
 * Node's errors from the operating system carry an errno name (`ENOENT`, `ENOSPC`), and its file
 * system's own limits an `ERR_FS_` code (a file too large to read at once).
 */
function isSystemError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return err instanceof Error && typeof code === 'string' && /^(?:E[A-Z0-9]+|ERR_FS_[A-Z_]+)$/.test(code)
}

/** What the failing step was evaluating for the caller, if anything. */
export interface DataPlaneErrorContext {
  /** The step, in words: `scan`, `predicate evaluation`, `merge`, `write`, ... */
  readonly what: string
  /** The caller's predicate the query evaluates: a query failure is then reported against it. */
  readonly predicate?: Expression | undefined
  /** The argument holding the caller's expressions or values, when it is not a predicate. */
  readonly argument?: string | undefined
  /** The request's signal: its abort reason, whatever it is, passes through unchanged. */
  readonly signal?: AbortSignal | undefined
  /**
   * The local files the query reads. A failure that names one of them (or a Parquet file at all)
   * is about the file, never the caller's expression: DuckDB reports a damaged file as
   * `Invalid Input` too, the type it gives a value a function rejects.
   */
  readonly paths?: readonly string[] | undefined
  /** Said after DuckDB's message, e.g. how far a streamed query got. */
  readonly note?: string | undefined
  /**
   * Whether the engine was closed: a step still running then fails because its connection or
   * stream was taken away, whatever the error it meets says.
   */
  readonly closed?: boolean | undefined
}

/**
 * Turns a failure inside the data plane into the library error that says whose it is. Library
 * errors and aborts (an `AbortError`, or the signal's own reason) pass through unchanged. A query
 * failure is the caller's when the query evaluates the caller's predicate
 * ({@link InvalidPredicateError}) or expressions ({@link InvalidArgumentError}); otherwise a value
 * in the table's files did not fit ({@link StorageError}), or the library wrote SQL DuckDB cannot
 * parse or bind ({@link InternalError}). Any other DuckDB failure is a storage error, except that
 * DuckDB's internal errors and unexpected JavaScript errors are bugs ({@link InternalError}),
 * never reported as storage errors.
 *
 * @param err - anything thrown by the data plane
 * @param context - the step and the caller's input it evaluates
 * @returns the error to throw
 */
export function dataPlaneError(err: unknown, context: DataPlaneErrorContext): unknown {
  if (err instanceof Error && err.name === 'AbortError') return err
  if (context.signal?.aborted && err === context.signal.reason) return err
  // Whatever a step cut off by the close met (a lost connection, a stream that ended), the close
  // is the cause.
  if (context.closed === true && !(err instanceof TableClosedError)) {
    return new TableClosedError(`The data ${context.what} was cut off: the table (its engine) was closed`, {
      cause: err,
    })
  }
  if (isDeltaError(err)) return err
  const message = err instanceof Error ? err.message : String(err)
  const first = `${message.split('\n')[0] ?? message}${context.note === undefined ? '' : ` (${context.note})`}`
  const exhausted = descriptorErrno(err)
  if (exhausted !== undefined) return fileDescriptorsExhausted(exhausted, `run the data ${context.what}`, err)
  let kind = dataPlaneFailureKind(err)
  if (kind === 'query' && namesAFile(first, context.paths)) kind = 'io'
  switch (kind) {
    case 'query':
      if (context.predicate !== undefined) {
        return new InvalidPredicateError(
          `The predicate cannot be evaluated over the table: ${first}`,
          predicateText(context.predicate),
          undefined,
          {
            cause: err,
            hint: "Compare each column with values its type can hold (a decimal(p,s) literal needs at most p - s integer digits) and cast only values that convert; the message is DuckDB's own.",
          },
        )
      }
      if (context.argument !== undefined) {
        return new InvalidArgumentError(`Cannot evaluate the ${context.what}: ${first}`, {
          argument: context.argument,
          cause: err,
          hint: "An expression produced a value its column cannot hold, or a value that does not convert; the message is DuckDB's own.",
        })
      }
      if (SHAPE_TYPES.has(duckDbErrorType(err) ?? '')) {
        return new InternalError(`DuckDB rejected the SQL of the data ${context.what} (${first})`, {
          cause: err,
        })
      }
      return new StorageError(`Data ${context.what} failed: ${first}`, {
        cause: err,
        hint: "A value in the table's data files does not fit the type the table's schema gives it; the message is DuckDB's own.",
      })
    case 'io':
      return new StorageError(`Data ${context.what} failed: ${first}`, {
        cause: err,
        hint: "A file could not be read or written: check that the table's data files exist, are readable and are valid Parquet, and that the scratch directory has free space.",
      })
    case 'other':
      return new StorageError(`Data ${context.what} failed: ${first}`, {
        cause: err,
        hint: "The data plane (DuckDB) failed; the message is DuckDB's own.",
      })
    case 'internal': {
      const name = err instanceof Error ? err.name : typeof err
      return new InternalError(`the data ${context.what} failed unexpectedly (${name}: ${first})`, {
        cause: err,
      })
    }
  }
}

/**
 * `EMFILE` or `ENFILE` when `err` says that no file descriptor was left: Node's system error
 * carries the code, DuckDB's IO error only the system's text.
 */
function descriptorErrno(err: unknown): 'EMFILE' | 'ENFILE' | undefined {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'EMFILE' || code === 'ENFILE') return code
  if (duckDbErrorType(err) !== 'IO') return undefined
  const message = (err as Error).message
  if (/too many open files in system/i.test(message)) return 'ENFILE'
  if (/too many open files/i.test(message)) return 'EMFILE'
  return undefined
}

/** Whether DuckDB's message is about a data file rather than a value. */
function namesAFile(first: string, paths: readonly string[] | undefined): boolean {
  if (paths?.some((p) => first.includes(p))) return true
  return /\.parquet['"]|parquet (?:file|metadata|footer)|magic bytes/i.test(first)
}

/** The predicate as the caller could have written it (rendering is only for the message). */
function predicateText(predicate: Expression): string {
  try {
    return toSql(predicate)
  } catch {
    return '<predicate>'
  }
}

/**
 * The error for a streamed query that DuckDB ended part-way (the `onFailure` of `openStream`): the
 * error DuckDB raised when the query ran again, mapped as {@link dataPlaneError} maps it, else a
 * storage error with DuckDB's own words.
 *
 * @param failure - rows delivered, DuckDB's first line, and the error it raised again if any
 * @param context - the step and the caller's input it evaluates
 * @returns the error to throw
 */
export function streamFailureError(
  failure: { readonly rowsRead: number; readonly detail: string; readonly cause: unknown },
  context: DataPlaneErrorContext,
): Error {
  const note = `DuckDB stopped the ${context.what} after ${failure.rowsRead} rows`
  const mapped = failure.cause === undefined ? undefined : dataPlaneError(failure.cause, { ...context, note })
  if (mapped instanceof Error) return mapped
  return new StorageError(
    `DuckDB stopped the ${context.what} after ${failure.rowsRead} rows: ${failure.detail}`,
    {
      cause: failure.cause,
      hint: "A value did not convert or a file could not be read; the message is DuckDB's own.",
    },
  )
}
