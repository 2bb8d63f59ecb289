import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  anyReconciliationEnabled,
  CONFLICT_FLAG_KEYS,
  DEFAULT_CONFLICT_FLAGS,
  parseConflictFlags,
} from '../../../src/conflict/flags.js'
import { InternalError, InvalidArgumentError } from '../../../src/errors/index.js'
import { A, add, check, flagsWith, loser, meta, winner } from './factories.js'

describe('parseConflictFlags', () => {
  it('turns every reconciliation off by default', () => {
    for (const input of [undefined, null, {}]) {
      const flags = parseConflictFlags(input)
      assert.deepEqual(flags, DEFAULT_CONFLICT_FLAGS)
      assert.equal(anyReconciliationEnabled(flags), false)
    }
  })

  it("'all' turns every switch on and keeps the numeric defaults", () => {
    const flags = parseConflictFlags('all')
    assert.deepEqual(flags, {
      ...DEFAULT_CONFLICT_FLAGS,
      rowLevelConcurrency: true,
      dataSkipping: true,
      dataSkippingValueExact: true,
      excludeNoDataChangeFiles: true,
      optimizeReconciliation: true,
      optimizeReverseReconciliation: true,
      optimizeZOrderReconciliation: true,
      optimizeZOrderReverseReconciliation: true,
      mergeSourceKeyReadPredicate: true,
      mergeRowLevelConflicts: true,
    })
    assert.ok(Object.isFrozen(flags))
  })

  const keys: readonly [string, keyof typeof DEFAULT_CONFLICT_FLAGS][] = [
    ['rowLevelConcurrency.enabled', 'rowLevelConcurrency'],
    ['conflictDetection.dataSkipping.enabled', 'dataSkipping'],
    ['conflictDetection.dataSkipping.valueExact.enabled', 'dataSkippingValueExact'],
    ['conflictDetection.excludeNoDataChangeFiles.enabled', 'excludeNoDataChangeFiles'],
    ['optimize.conflictReconciliation.enabled', 'optimizeReconciliation'],
    ['optimize.conflictReconciliation.reverse.enabled', 'optimizeReverseReconciliation'],
    ['optimize.zorder.conflictReconciliation.enabled', 'optimizeZOrderReconciliation'],
    ['optimize.zorder.conflictReconciliation.reverse.enabled', 'optimizeZOrderReverseReconciliation'],
    ['merge.sourceKeyReadPredicate.enabled', 'mergeSourceKeyReadPredicate'],
    ['merge.rowLevelConflicts.enabled', 'mergeRowLevelConflicts'],
  ]
  for (const [key, field] of keys) {
    for (const prefix of ['', 'spark.databricks.delta.']) {
      for (const value of [true, 'true', 'TRUE']) {
        it(`${prefix}${key} = ${JSON.stringify(value)} turns on only ${field}`, () => {
          const flags = parseConflictFlags({ [`${prefix}${key}`]: value })
          assert.deepEqual(flags, { ...DEFAULT_CONFLICT_FLAGS, [field]: true })
        })
      }
    }
  }

  it("accepts false and 'false'", () => {
    const flags = parseConflictFlags({
      'rowLevelConcurrency.enabled': 'false',
      'optimize.conflictReconciliation.enabled': false,
    })
    assert.deepEqual(flags, DEFAULT_CONFLICT_FLAGS)
  })

  it('parses the numeric settings from numbers and digit strings', () => {
    const flags = parseConflictFlags({
      'conflictDetection.dataSkipping.valueExact.maxBytes': '0',
      'spark.databricks.delta.merge.sourceKeyReadPredicate.inSetThreshold': 5,
    })
    assert.equal(flags.valueExactMaxBytes, 0)
    assert.equal(flags.mergeSourceKeyInSetThreshold, 5)
  })

  it('parses the Case 5b budgets, 0 meaning no bound', () => {
    const flags = parseConflictFlags({
      'optimize.zorder.conflictReconciliation.reverse.maxRowIds': '0',
      'optimize.zorder.conflictReconciliation.reverse.maxCandidateFiles': 7,
      'optimize.zorder.conflictReconciliation.reverse.maxIdColumnBytes': 1024,
      'spark.databricks.delta.optimize.zorder.conflictReconciliation.reverse.maxMillis': '250',
    })
    assert.equal(flags.zOrderReverseMaxRowIds, 0)
    assert.equal(flags.zOrderReverseMaxCandidateFiles, 7)
    assert.equal(flags.zOrderReverseMaxIdColumnBytes, 1024)
    assert.equal(flags.zOrderReverseMaxMillis, 250)
    assert.equal(DEFAULT_CONFLICT_FLAGS.zOrderReverseMaxCandidateFiles, 1000)
    assert.equal(DEFAULT_CONFLICT_FLAGS.zOrderReverseMaxMillis, 2000)
  })

  it('rejects an unknown key and lists the valid ones', () => {
    assert.throws(
      () => parseConflictFlags({ 'rowLevelConcurency.enabled': true }),
      (err: unknown) =>
        err instanceof InvalidArgumentError &&
        err.argument === 'rowLevelConcurency.enabled' &&
        CONFLICT_FLAG_KEYS.every((k) => err.hint?.includes(k)),
    )
  })

  const badValues: readonly [string, unknown][] = [
    ['rowLevelConcurrency.enabled', 'yes'],
    ['rowLevelConcurrency.enabled', 1],
    ['conflictDetection.dataSkipping.valueExact.maxBytes', -1],
    ['conflictDetection.dataSkipping.valueExact.maxBytes', 1.5],
    ['merge.sourceKeyReadPredicate.inSetThreshold', 'ten'],
  ]
  for (const [key, value] of badValues) {
    it(`rejects ${key} = ${JSON.stringify(value)}`, () => {
      assert.throws(() => parseConflictFlags({ [key]: value }), InvalidArgumentError)
    })
  }

  it('rejects an option that is neither an object nor all', () => {
    for (const bad of ['some', 3, true, ['rowLevelConcurrency.enabled']]) {
      assert.throws(() => parseConflictFlags(bad), InvalidArgumentError)
    }
  })
})

describe('checkConflicts and the deletion-vector library', () => {
  // This file never initializes roaring-wasm, so the guard is observable here.
  it('throws InternalError when a DV-reading reconciliation is on before initDeletionVectors()', () => {
    const m = meta({ id: 'long' })
    const txn = loser({ metadata: m, actions: [A.add(add('a'))] })
    const w = winner(2n, [A.add(add('b'))])
    assert.throws(() => check(txn, w, flagsWith({ rowLevelConcurrency: true })), InternalError)
    assert.equal(check(txn, w, flagsWith({ excludeNoDataChangeFiles: true, dataSkipping: true })).kind, 'ok')
  })
})
