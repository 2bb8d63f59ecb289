import { DeltaError } from './delta-error.js'
import { describeRow } from './describe-row.js'

/**
 * A write put a row into the table that breaks a CHECK constraint (`delta.constraints.<name>`) or
 * a column invariant (`delta.invariants`): the expression was false or NULL for the row, as
 * Delta's constraint check refuses it. Nothing is committed.
 */
export class CheckConstraintViolationError extends DeltaError {
  readonly code = 'DELTA_VIOLATE_CONSTRAINT_WITH_VALUES'
  /** The constraint's name (an invariant is named `EXPRESSION(<text>)`, as Delta names it). */
  readonly constraint: string
  /** The constraint's expression text. */
  readonly expression: string
  /** One offending row, as the data plane read it back (column name to value). */
  readonly row: Readonly<Record<string, unknown>>
  constructor(constraint: string, expression: string, row: Readonly<Record<string, unknown>>) {
    super(`CHECK constraint ${constraint} (${expression}) violated by row with values: ${describeRow(row)}`, {
      hint: 'Fix or filter the rows so the expression is true for each (NULL does not satisfy it), or drop the constraint with alter.dropConstraint.',
    })
    this.constraint = constraint
    this.expression = expression
    this.row = Object.freeze({ ...row })
  }
}

/**
 * A constraint cannot be added because rows already in the table break it: `ADD CONSTRAINT` and
 * `SET NOT NULL` check every live row first, as Delta does. Nothing is committed.
 */
export class NewConstraintViolationError extends DeltaError {
  readonly code: 'DELTA_NEW_CHECK_CONSTRAINT_VIOLATION' | 'DELTA_NEW_NOT_NULL_VIOLATION'
  /** The constraint's name, or the column for NOT NULL. */
  readonly constraint: string
  /** One offending row of the table. */
  readonly row: Readonly<Record<string, unknown>>
  constructor(
    kind: 'check' | 'not-null',
    constraint: string,
    expression: string,
    row: Readonly<Record<string, unknown>>,
  ) {
    super(
      kind === 'check'
        ? `Rows in the table violate the new CHECK constraint ${constraint} (${expression}), for example: ${describeRow(row)}`
        : `Rows in the table violate the new NOT NULL constraint on ${constraint}, for example: ${describeRow(row)}`,
      {
        hint:
          kind === 'check'
            ? 'Update or delete the rows the expression is false or NULL for, then add the constraint again.'
            : `Give ${constraint} a value in those rows (UPDATE), or delete them, then set NOT NULL again.`,
      },
    )
    this.code = kind === 'check' ? 'DELTA_NEW_CHECK_CONSTRAINT_VIOLATION' : 'DELTA_NEW_NOT_NULL_VIOLATION'
    this.constraint = constraint
    this.row = Object.freeze({ ...row })
  }
}

/** `alter.addConstraint` named a constraint the table has already. */
export class ConstraintAlreadyExistsError extends DeltaError {
  readonly code = 'DELTA_CONSTRAINT_ALREADY_EXISTS'
  readonly constraint: string
  constructor(constraint: string, existing: string) {
    super(`Constraint '${constraint}' already exists: ${existing}`, {
      hint: 'Drop it first with alter.dropConstraint, or choose another name.',
    })
    this.constraint = constraint
  }
}

/** `alter.dropConstraint` named a constraint the table does not have (without `ifExists`). */
export class ConstraintNotFoundError extends DeltaError {
  readonly code = 'DELTA_CONSTRAINT_DOES_NOT_EXIST'
  readonly constraint: string
  constructor(constraint: string, known: readonly string[]) {
    super(`Cannot drop nonexistent constraint '${constraint}'`, {
      hint:
        known.length === 0
          ? 'The table has no CHECK constraint; pass { ifExists: true } to make this a no-op.'
          : `The table's constraints: ${known.join(', ')}; pass { ifExists: true } to make a missing one a no-op.`,
    })
    this.constraint = constraint
  }
}

/**
 * `alter.setProperties` was given a `delta.` property Delta does not define, or one that only
 * Delta itself sets: it would be stored and silently do nothing, or break the table.
 */
export class UnknownTablePropertyError extends DeltaError {
  readonly code = 'DELTA_UNKNOWN_CONFIGURATION'
  /** The property key. */
  readonly property: string
  constructor(property: string, hint: string) {
    super(`Unknown or reserved table property: ${property}`, { hint })
    this.property = property
  }
}
