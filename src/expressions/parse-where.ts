import type { Expression } from './ast.js'
import { checkExpression } from './check-expression.js'
import { parsePredicate } from './parse-predicate.js'

/**
 * Parses a `where` option.
 *
 * @throws {InvalidPredicateError} on a malformed or too deep predicate
 * @throws {InvalidArgumentError} when `where` is neither text nor an expression tree
 */
export function parseWhere(where: string | Expression | undefined): Expression | undefined {
  if (where === undefined) return undefined
  if (typeof where === 'string') return where.trim() === '' ? undefined : parsePredicate(where)
  return checkExpression(where, 'where')
}
