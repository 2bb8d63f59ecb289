import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  cast,
  col,
  type Expression,
  floatingLiteral,
  integralLiteral,
  isIn,
  lit,
  not,
  stringLiteral,
} from '../../../src/expressions/ast.js'
import { columnsFromTypes } from '../../../src/expressions/columns.js'
import { type FileStats, mayMatchFile, possibleResults } from '../../../src/expressions/evaluate-stats.js'
import { sortedInList } from '../../../src/expressions/in-list-bounds.js'
import { sourceKeyPredicate } from '../../../src/ops/merge-source-keys.js'

const columns = columnsFromTypes({ id: 'long', name: 'string', score: 'double', day: 'date' })

function fileOf(column: string, min: unknown, max: unknown, nulls = 0): FileStats {
  return {
    numRecords: 100n,
    minValues: { [column]: min },
    maxValues: { [column]: max },
    nullCount: { [column]: nulls },
  }
}

function kept(pred: Expression, files: readonly FileStats[], prefixLength = 32): boolean[] {
  return files.map((f) => mayMatchFile(pred, f, {}, columns, { stringPrefixLength: prefixLength }))
}

describe('IN-lists of 10k keys against file bounds', () => {
  // Half the keys spread over [0, 10M) two thousand apart, half just above 10M, as a MERGE
  // that updates some rows and inserts others.
  const keys: bigint[] = []
  for (let k = 0; k < 5_000; k++) keys.push(BigInt(k * 2_000 + 1))
  for (let k = 0; k < 5_000; k++) keys.push(10_000_000n + BigInt(k))
  const files: FileStats[] = []
  for (let i = 0; i < 20; i++) files.push(fileOf('id', i * 500_000, (i + 1) * 500_000 - 1))
  // Between two keys, beyond every key, exactly one key, and one file whose bounds are lost.
  files.push(fileOf('id', 2, 2_000), fileOf('id', 10_005_000, 20_000_000), fileOf('id', 4_001, 4_001))
  files.push({ numRecords: 5n })
  const expected = files.map((f) => {
    const lo = f.minValues?.id as number | undefined
    const hi = f.maxValues?.id as number | undefined
    return lo === undefined || hi === undefined || keys.some((k) => k >= BigInt(lo) && k <= BigInt(hi))
  })

  it('keeps exactly the files whose range holds a key of the MERGE source-key predicate', () => {
    const rows = keys.map((id) => ({ id }))
    const pre = sourceKeyPredicate([{ target: 'id', targetType: 'long', source: 'id' }], rows, 10_000)
    assert.equal(pre?.kind, 'inSet')
    const pred = pre.preFilter
    if (pred.kind !== 'in') assert.fail(`expected an IN-list, got ${pred.kind}`)
    assert.equal(sortedInList(pred)?.values.length, 10_000)
    assert.deepEqual(kept(pred, files), expected)
    assert.deepEqual(expected.slice(20), [false, false, true, true])
  })

  it('answers NOT IN and lists with a NULL by the same three-valued rules', () => {
    const items = keys.map((k) => integralLiteral('long', k))
    // NOT IN excludes a file only when every value is a key: the single-value file at 4001.
    assert.deepEqual(
      kept(isIn(col('id'), items, true), files),
      files.map((_, i) => i !== 22),
    )
    // A NULL in the list makes IN never FALSE, so NOT IN is never TRUE.
    const withNull = [...items.slice(0, 5_000), lit(null), ...items.slice(5_000)]
    assert.deepEqual(kept(isIn(col('id'), withNull), files), expected)
    assert.deepEqual(
      kept(isIn(col('id'), withNull, true), files),
      files.map(() => false),
    )
    assert.deepEqual(possibleResults(isIn(col('id'), withNull), files[20], {}, columns), {
      t: false,
      f: false,
      n: true,
    })
  })

  it('compares string keys by code point and honours a truncated max', () => {
    const names = Array.from({ length: 10_000 }, (_, k) => `customer-${String(k).padStart(5, '0')}`)
    const pred = isIn(
      col('name'),
      names.map((n) => stringLiteral(n)),
    )
    const stringFiles = [
      fileOf('name', 'customer-00000', 'customer-00999'),
      fileOf('name', 'customer-10000', 'customer-99999'),
      fileOf('name', 'a', 'customer-'),
      // Truncated to 12 code points: the max only says values start with at most 'customer-000'.
      fileOf('name', 'customer-000', 'customer-000'),
      fileOf('name', 'customer-0000\u{10FFFF}', 'customer-0001'),
    ]
    assert.deepEqual(kept(pred, stringFiles, 12), [true, false, false, true, true])
    assert.deepEqual(kept(pred, stringFiles, 32), [true, false, false, false, false])
  })
})

describe('IN-lists whose order cannot be trusted take the per-item path', () => {
  it('does not sort integers with doubles, whose order is not transitive past 2^53', () => {
    const pred = isIn(col('id'), [
      integralLiteral('long', 9007199254740993n),
      floatingLiteral('double', 9007199254740992),
      integralLiteral('long', 9007199254740992n),
    ])
    assert.equal(sortedInList(pred), undefined)
    assert.equal(mayMatchFile(pred, fileOf('id', '9007199254740992', '9007199254740992'), {}, columns), true)
  })

  it('converts string items to the column type instead of searching them in string order', () => {
    const pred = isIn(col('id'), [stringLiteral('10'), stringLiteral('9')])
    assert.equal(mayMatchFile(pred, fileOf('id', 3, 9), {}, columns), true)
    assert.equal(mayMatchFile(pred, fileOf('id', 11, 90), {}, columns), false)
    const days = isIn(col('day'), [stringLiteral('2024-01-10'), stringLiteral('2023-12-31')])
    assert.equal(mayMatchFile(days, fileOf('day', '2024-01-01', '2024-01-31'), {}, columns), true)
    assert.equal(mayMatchFile(days, fileOf('day', '2024-02-01', '2024-02-28'), {}, columns), false)
  })

  it('finds NaN above every other double', () => {
    const nan = cast(stringLiteral('NaN'), 'double')
    const pred = isIn(col('score'), [nan, floatingLiteral('double', 1e300), nan])
    assert.equal(sortedInList(pred)?.values.length, 2)
    assert.equal(mayMatchFile(pred, fileOf('score', 3, 'NaN'), {}, columns), true)
    assert.equal(mayMatchFile(pred, fileOf('score', -1.5, 2.5), {}, columns), false)
    assert.equal(mayMatchFile(not(pred), fileOf('score', 'NaN', 'NaN'), {}, columns), false)
  })
})
