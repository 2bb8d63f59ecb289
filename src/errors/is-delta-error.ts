/**
 * The stable error codes as one type, and the guard that narrows a caught value by them. The
 * union is read off the classes, so a new error class adds its code here by being listed once.
 */
import type { InternalError, InvalidArgumentError, UnsupportedError } from './caller-errors.js'
import type {
  ChangeDataFileNotFoundError,
  ChangeDataRangeError,
  MissingChangeDataError,
} from './change-data-errors.js'
import type { ClusteringWithZOrderByError } from './clustering-errors.js'
import type {
  ColumnChangeRefusedError,
  ColumnMappingModeChangeError,
  ColumnMappingRequiredError,
} from './column-mapping-errors.js'
import type { CommitStateUnknownError, MaxCommitRetriesError } from './commit-errors.js'
import type { GeneratedColumnMismatchError, IdentityColumnError } from './computed-column-errors.js'
import type {
  ConcurrentAppendError,
  ConcurrentDeleteDeleteError,
  ConcurrentDeleteReadError,
  ConcurrentTransactionError,
  ConcurrentVacuumError,
  MetadataChangedError,
  ProtocolChangedError,
} from './conflict-errors.js'
import type {
  CheckConstraintViolationError,
  ConstraintAlreadyExistsError,
  ConstraintNotFoundError,
  NewConstraintViolationError,
  UnknownTablePropertyError,
} from './constraint-errors.js'
import { DeltaError } from './delta-error.js'
import type { RowIdAssignmentWithoutStatsError, RowTrackingNotEnabledError } from './row-tracking-errors.js'
import type {
  FileAlreadyExistsError,
  FileNotFoundError,
  ResourceExhaustedError,
  StorageError,
} from './storage-errors.js'
import type {
  InvalidDeletionVectorError,
  InvalidPredicateError,
  InvalidTableError,
  TableAlreadyExistsError,
  TableClosedError,
  TableNotFoundError,
  UnsupportedProtocolVersionError,
  UnsupportedTableFeatureError,
  VersionNotFoundError,
} from './table-errors.js'

/** Every concrete error class of the taxonomy. */
export type AnyDeltaError =
  | InvalidArgumentError
  | UnsupportedError
  | InternalError
  | MaxCommitRetriesError
  | CommitStateUnknownError
  | ConcurrentAppendError
  | ConcurrentDeleteReadError
  | ConcurrentDeleteDeleteError
  | MetadataChangedError
  | ProtocolChangedError
  | ConcurrentTransactionError
  | ConcurrentVacuumError
  | RowTrackingNotEnabledError
  | RowIdAssignmentWithoutStatsError
  | FileNotFoundError
  | FileAlreadyExistsError
  | StorageError
  | ResourceExhaustedError
  | TableNotFoundError
  | TableAlreadyExistsError
  | TableClosedError
  | InvalidTableError
  | UnsupportedProtocolVersionError
  | UnsupportedTableFeatureError
  | VersionNotFoundError
  | InvalidDeletionVectorError
  | InvalidPredicateError
  | ClusteringWithZOrderByError
  | CheckConstraintViolationError
  | NewConstraintViolationError
  | ConstraintAlreadyExistsError
  | ConstraintNotFoundError
  | UnknownTablePropertyError
  | MissingChangeDataError
  | ChangeDataRangeError
  | ChangeDataFileNotFoundError
  | ColumnMappingRequiredError
  | ColumnChangeRefusedError
  | ColumnMappingModeChangeError
  | GeneratedColumnMismatchError
  | IdentityColumnError

/** The stable codes of the library's errors (`'DELTA_CONCURRENT_APPEND'`, ...). */
export type DeltaErrorCode = AnyDeltaError['code']

/**
 * Narrows `err` to a {@link DeltaError}, or, given codes, to the error classes that carry them.
 * A code outside {@link DeltaErrorCode} is a type error, so a misspelt code cannot silently
 * never match.
 *
 * ### Examples
 * ```ts
 * try {
 *   await table.delete('id = 5')
 * } catch (err) {
 *   if (isDeltaError(err, 'DELTA_CONCURRENT_APPEND', 'DELTA_CONCURRENT_DELETE_READ')) retryLater()
 *   else throw err
 * }
 * ```
 *
 * @param err - anything caught
 * @param codes - when given, the error's code must be one of them
 * @returns whether `err` is such an error
 */
export function isDeltaError(err: unknown): err is DeltaError
export function isDeltaError<C extends DeltaErrorCode>(
  err: unknown,
  ...codes: [C, ...C[]]
): err is Extract<AnyDeltaError, { readonly code: C }>
export function isDeltaError(err: unknown, ...codes: readonly string[]): boolean {
  return err instanceof DeltaError && (codes.length === 0 || codes.includes(err.code))
}
