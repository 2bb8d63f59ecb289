import { InvalidArgumentError } from '../errors/index.js'
import type { Expression } from './ast.js'
import { checkExpression } from './check-expression.js'
import { parsePredicate } from './parse-predicate.js'

/**
 * Parses a `where` option. Absent means every row; blank text is refused, since it is almost
 * always a caller's bug (an unset variable, an empty form field), never a request for every row:
 * that is the option left out, or `'true'`.
 *
 * @param where - the predicate text or tree, or `undefined` for every row
 * @param argument - the option's name, for messages (default `where`)
 * @throws {InvalidPredicateError} on a malformed or too deep predicate
 * @throws {InvalidArgumentError} when `where` is blank text, or neither text nor an expression tree
 */
export function parseWhere(
  where: string | Expression | undefined,
  argument = 'where',
): Expression | undefined {
  if (where === undefined) return undefined
  if (typeof where === 'string') {
    refuseBlankPredicate(where, argument)
    return parsePredicate(where)
  }
  return checkExpression(where, argument)
}

/**
 * Refuses a blank or whitespace-only predicate text.
 *
 * @param text - the predicate text
 * @param argument - the argument it was given as
 * @throws {InvalidArgumentError} when `text` holds nothing but whitespace
 */
export function refuseBlankPredicate(text: string, argument: string): void {
  if (text.trim() !== '') return
  throw new InvalidArgumentError(`${argument} is ${text === '' ? 'empty' : 'blank'}: a predicate is needed`, {
    argument,
    hint: "A blank predicate is refused rather than taken for every row. To act on every row, leave the predicate out (e.g. delete() with no argument) or pass 'true'.",
  })
}
