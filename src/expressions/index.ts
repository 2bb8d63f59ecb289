/**
 * Predicates and scalar expressions: an immutable tree, a parser for a SQL subset (close to
 * Spark SQL), rendering back to that syntax and to DuckDB SQL, in-JS evaluation over rows with
 * three-valued logic, and data skipping over file statistics and partition values.
 *
 * This module is pure: no I/O, no `node:*` imports, no async code. It is the basis of scan
 * pruning and of conflict-time data skipping, where it must never prune a file it cannot prove
 * irrelevant (see `evaluate-stats.ts`). Reference: design/protocol.md sections 6 (statistics),
 * 9 (partition values) and 10 (types).
 */

export {
  type And,
  type Arithmetic,
  type ArithmeticOperator,
  and,
  arithmetic,
  type Between,
  type BinaryLiteral,
  type BooleanLiteral,
  between,
  binaryLiteral,
  type Call,
  type Cast,
  type ColumnRef,
  type Comparison,
  type ComparisonOperator,
  call,
  cast,
  childrenOf,
  col,
  columnsOf,
  compare,
  conjuncts,
  type DateLiteral,
  type DecimalLiteral,
  dateLiteral,
  decimalLiteral,
  type Expression,
  eq,
  type FloatingLiteral,
  FUNCTION_ARITY,
  type FunctionName,
  floatingLiteral,
  ge,
  gt,
  type In,
  type IntegralLiteral,
  type IsBoolean,
  type IsNull,
  integralLiteral,
  isBoolean,
  isIn,
  isNotNull,
  isNull,
  type Like,
  type Literal,
  le,
  like,
  lit,
  lt,
  type Negate,
  type Not,
  type NullLiteral,
  ne,
  negate,
  not,
  nullSafeEq,
  type Or,
  or,
  type StringLiteral,
  stringLiteral,
  type TimestampLiteral,
  timestampLiteral,
  timestampNtzLiteral,
} from './ast.js'
export { type ColumnInfo, type ColumnResolver, columnsFromSchema, columnsFromTypes } from './columns.js'
export {
  type DataType,
  type DataTypeName,
  formatDataType,
  parseDataType,
  type SimpleTypeName,
} from './data-types.js'
export { type EvaluateOptions, evaluateRow } from './evaluate-rows.js'
export {
  type FileStats,
  mayMatchFile,
  type SkippingOptions,
  splitPartitionPredicate,
} from './evaluate-stats.js'
export { parseExpression, parsePredicate } from './parse-predicate.js'
export {
  type DuckDbRenderOptions,
  duckDbColumn,
  duckDbType,
  quoteDuckDbIdentifier,
  renderDuckDbSql,
} from './render-duckdb.js'
export { quoteIdentifier, toSql } from './to-sql.js'
