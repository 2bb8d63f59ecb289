/**
 * `ALTER TABLE ... ALTER COLUMN c TYPE t` on a table that enables type widening: a metadata commit
 * (operation `CHANGE COLUMN`) that gives a column, or a nested struct field, a wider type the
 * protocol allows (`isSupportedTypeChange`, integer to decimal and to double included, as Delta
 * allows them when asked explicitly) and records the change in its `delta.typeChanges`. No data
 * file is rewritten: files written before hold the narrower type and read with a cast. Like ADD
 * COLUMNS it reads nothing, so it commits beside a concurrent append; a writer that loses to it
 * aborts (`DELTA_METADATA_CHANGED`).
 */
import { InvalidArgumentError, UnsupportedError } from '../errors/index.js'
import {
  isPrimitiveType,
  isStructType,
  type PrimitiveType,
  parseDdlSchema,
  type StructField,
  type StructType,
} from '../protocol/schema.js'
import { isSupportedTypeChange, typeWideningEnabled, withTypeChange } from '../protocol/type-widening.js'
import type { OperationContext, PreparedOperation } from '../txn/staged-operation.js'
import { schemaChange } from './schema-merge.js'

/**
 * Builds the type change of one column.
 *
 * @param ctx - the transaction's context
 * @param column - the column, dotted for a nested struct field
 * @param type - the new type as DDL text (`'long'`, `'bigint'`, `'decimal(12,2)'`, ...)
 * @returns the operation; no action when the column has the type already
 * @throws {InvalidArgumentError} for an unknown column, a type that does not parse or is not a
 *   primitive, a change the protocol does not allow, or a table without type widening enabled
 * @throws {UnsupportedError} for a partition column
 */
export function buildChangeColumnType(
  ctx: OperationContext,
  column: string,
  type: string,
): PreparedOperation {
  const snap = ctx.snapshot
  const to = parseType(type)
  const path = column.split('.')
  const { field, parentPath } = resolve(snap.schema, path, column)
  const parameters = (f: StructField) => ({
    column: JSON.stringify({ name: f.name, type: f.type, nullable: f.nullable, metadata: f.metadata }),
    ...(parentPath.length === 0 ? {} : { parent: parentPath.join('.') }),
  })
  if (field.type === to) {
    return {
      operation: 'CHANGE COLUMN',
      parameters: parameters(field),
      actions: [],
      metrics: {},
      changesData: false,
    }
  }
  if (!typeWideningEnabled(snap.properties)) {
    throw new InvalidArgumentError(
      `Cannot change column '${column}' from ${String(field.type)} to ${to}: the table does not enable type widening`,
      {
        argument: 'type',
        hint: "Set delta.enableTypeWidening to 'true' first (alter.setProperties), then change the type.",
      },
    )
  }
  if (!isSupportedTypeChange(field.type, to)) {
    throw new InvalidArgumentError(
      `Cannot change column '${column}' from ${String(field.type)} to ${to}: not a type widening Delta supports`,
      {
        argument: 'type',
        hint: 'Supported: byte -> short -> integer -> long, float -> double, byte/short/integer -> double, date -> timestamp_ntz, decimal(p,s) -> decimal(p+k1,s+k2) with k1 >= k2 >= 0, byte/short/integer -> decimal(10+k1,k2), long -> decimal(20+k1,k2).',
      },
    )
  }
  if (path.length === 1 && snap.partitionColumns.some((c) => c.toLowerCase() === field.name.toLowerCase())) {
    throw new UnsupportedError(`Changing the type of partition column '${field.name}' is not supported`, {
      hint: 'Partition values are kept as text in the log; overwrite the table with a new schema instead.',
    })
  }
  const changed = withTypeChange(field, to)
  const schema = replaceField(snap.schema, path, changed)
  const { actions } = schemaChange(snap, schema, snap.partitionColumns)
  return {
    operation: 'CHANGE COLUMN',
    parameters: parameters(changed),
    actions,
    metrics: {},
    changesData: false,
  }
}

// === Internals ===

function parseType(text: string): PrimitiveType {
  let parsed: StructType
  try {
    parsed = parseDdlSchema(`c ${text}`)
  } catch (err) {
    throw new InvalidArgumentError(
      `Invalid type '${text}': ${err instanceof Error ? err.message : String(err)}`,
      {
        argument: 'type',
        cause: err,
      },
    )
  }
  const t = parsed.fields[0]?.type
  if (parsed.fields.length !== 1 || t === undefined || !isPrimitiveType(t)) {
    throw new InvalidArgumentError(`Invalid type '${text}': expected one primitive type such as 'long'`, {
      argument: 'type',
    })
  }
  return t
}

function resolve(
  schema: StructType,
  path: readonly string[],
  column: string,
): { field: StructField; parentPath: string[] } {
  let fields = schema.fields
  const parentPath: string[] = []
  for (let i = 0; i < path.length; i++) {
    const name = (path[i] as string).toLowerCase()
    const f = fields.find((x) => x.name === path[i]) ?? fields.find((x) => x.name.toLowerCase() === name)
    if (f === undefined) {
      throw new InvalidArgumentError(`Unknown column '${column}'`, {
        argument: 'column',
        hint: `The ${i === 0 ? 'table' : `struct ${parentPath.join('.')}`} has: ${fields.map((x) => x.name).join(', ')}`,
      })
    }
    if (i === path.length - 1) {
      if (!isPrimitiveType(f.type)) {
        throw new InvalidArgumentError(
          `Column '${column}' is not of a primitive type: only those can be widened`,
          {
            argument: 'column',
          },
        )
      }
      return { field: f, parentPath }
    }
    if (!isStructType(f.type)) {
      throw new InvalidArgumentError(`Column '${parentPath.concat(f.name).join('.')}' is not a struct`, {
        argument: 'column',
      })
    }
    parentPath.push(f.name)
    fields = f.type.fields
  }
  throw new InvalidArgumentError('A column name is needed', { argument: 'column' })
}

/** The schema with the field at `path` (names compared without case) replaced. */
function replaceField(struct: StructType, path: readonly string[], next: StructField): StructType {
  const [head, ...rest] = path
  const lower = (head as string).toLowerCase()
  return Object.freeze({
    ...struct,
    fields: Object.freeze(
      struct.fields.map((f) => {
        if (f.name.toLowerCase() !== lower) return f
        if (rest.length === 0) return next
        return Object.freeze({ ...f, type: replaceField(f.type as StructType, rest, next) })
      }),
    ),
  })
}
