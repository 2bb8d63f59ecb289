import { DeltaError } from './delta-error.js'

/** What is known about the commit that won the race against this transaction. */
export interface ConflictContext {
  /** The winning commit's version. */
  readonly winnerVersion: bigint
  /** The winning commit's operation (`commitInfo.operation`), when it recorded one. */
  readonly winnerOperation: string | undefined
  /** The file at the heart of the conflict, when there is one. */
  readonly file?: string | undefined
  /** Which check failed (e.g. `checkAddedFilesThatShouldHaveBeenRead`). */
  readonly check?: string | undefined
  /** When a row-level reconciliation was tried and refused, why. */
  readonly reconcileRefused?: string | undefined
  /**
   * What would have reconciled the conflict: a conflicts flag, or a table property, named only
   * when the case's own conditions were checked with it on.
   */
  readonly remedy?: string | undefined
}

const RERUN = 'This transaction was not committed; rerun it against the latest version of the table.'

/**
 * A concurrent commit made this transaction's result invalid. The transaction was not
 * committed; rerun it on the new table state.
 */
export abstract class ConcurrentModificationError extends DeltaError {
  readonly winnerVersion: bigint
  readonly winnerOperation: string | undefined
  readonly file: string | undefined
  readonly check: string | undefined
  readonly reconcileRefused: string | undefined
  /** What would have reconciled the conflict, when something would have (see {@link ConflictContext.remedy}). */
  readonly remedy: string | undefined
  /** The context the error was raised with. */
  readonly context: ConflictContext

  constructor(what: string, ctx: ConflictContext) {
    const op = ctx.winnerOperation ?? 'unknown operation'
    const file = ctx.file ? ` Conflicting file: ${ctx.file}.` : ''
    const refused = ctx.reconcileRefused
      ? ` Row-level reconciliation was refused: ${ctx.reconcileRefused}.`
      : ''
    super(`${what} The winning commit is version ${ctx.winnerVersion} (${op}).${file}${refused}`, {
      hint: ctx.remedy === undefined ? RERUN : `${RERUN} ${ctx.remedy}`,
    })
    this.winnerVersion = ctx.winnerVersion
    this.winnerOperation = ctx.winnerOperation
    this.file = ctx.file
    this.check = ctx.check
    this.reconcileRefused = ctx.reconcileRefused
    this.remedy = ctx.remedy
    this.context = ctx
  }
}

/** Files were added that this transaction should have read. */
export class ConcurrentAppendError extends ConcurrentModificationError {
  readonly code = 'DELTA_CONCURRENT_APPEND'
  constructor(ctx: ConflictContext) {
    super('Files were added to the table by a concurrent update that this transaction should have read.', ctx)
  }
}

/** A file this transaction read was deleted by a concurrent commit. */
export class ConcurrentDeleteReadError extends ConcurrentModificationError {
  readonly code = 'DELTA_CONCURRENT_DELETE_READ'
  constructor(ctx: ConflictContext) {
    super('A file this transaction read was deleted by a concurrent update.', ctx)
  }
}

/** A file this transaction deletes was also deleted by a concurrent commit. */
export class ConcurrentDeleteDeleteError extends ConcurrentModificationError {
  readonly code = 'DELTA_CONCURRENT_DELETE_DELETE'
  constructor(ctx: ConflictContext) {
    super('A file this transaction deletes was also deleted by a concurrent update.', ctx)
  }
}

/** The table metadata (schema, properties, partitioning) changed concurrently. */
export class MetadataChangedError extends ConcurrentModificationError {
  readonly code = 'DELTA_METADATA_CHANGED'
  constructor(ctx: ConflictContext) {
    super('The table metadata was changed by a concurrent update.', ctx)
  }
}

/** The table protocol changed concurrently. */
export class ProtocolChangedError extends ConcurrentModificationError {
  readonly code = 'DELTA_PROTOCOL_CHANGED'
  constructor(ctx: ConflictContext) {
    super('The table protocol was changed by a concurrent update.', ctx)
  }
}

/** A concurrent commit wrote a `txn` for an application id this transaction depends on. */
export class ConcurrentTransactionError extends ConcurrentModificationError {
  readonly code = 'DELTA_CONCURRENT_TRANSACTION'
  constructor(ctx: ConflictContext) {
    super('A concurrent update wrote a transaction marker for an application id this transaction read.', ctx)
  }
}

/**
 * A VACUUM that committed after this transaction's read version deleted (or, still running,
 * may delete) a file this transaction would reference. Nothing was committed; rerunning the
 * operation writes its files again.
 */
export class ConcurrentVacuumError extends ConcurrentModificationError {
  readonly code = 'DELTA_CONCURRENT_VACUUM'
  constructor(ctx: ConflictContext & { readonly missing: boolean }) {
    super(
      ctx.missing
        ? 'A concurrent VACUUM deleted a file this transaction adds.'
        : 'A VACUUM still running may delete a file this transaction adds (the file is older than its retention).',
      ctx,
    )
  }
}
