/**
 * Case 4b never trusts composition offsets on a permuting rewrite (design beyond-rlc S11): a
 * winning OPTIMIZE whose tombstones carry well-formed Case 4 tags is refused as soon as its
 * commitInfo names a non-empty `zOrderBy` or `clusterBy`, whoever wrote it; the same tagged
 * winner without them (or with empty lists, as Delta writes for a plain compaction) reconciles.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { summarizeWinningCommit } from '../../../src/conflict/winning-commit.js'
import { initDeletionVectors } from '../../../src/dv/initialization.js'
import { type Action, createAction } from '../../../src/protocol/actions.js'
import { compaction, dvUpdate, source } from './compaction-fixture.js'
import { check, DV_PROTOCOL, dvMeta, flagsWith, inlineDv, loser } from './factories.js'

await initDeletionVectors()

const ON = flagsWith({ optimizeReverseReconciliation: true })
const PERMUTED = /permuted rows \(Z-order or clustering\)/

/** The tagged compaction of three sources, committed with these OPTIMIZE parameters. */
function taggedWinner(parameters: Readonly<Record<string, unknown>>) {
  const sources = [source(0), source(1), source(2)]
  const info: Action = createAction('commitInfo', {
    operation: 'OPTIMIZE',
    operationParameters: parameters,
    isBlindAppend: false,
  })
  const txn = loser({
    metadata: dvMeta(),
    protocol: DV_PROTOCOL,
    files: sources,
    reads: [{ scan: 'id = 150' }],
    actions: dvUpdate(sources[1]!, inlineDv([50])),
    operation: 'DELETE',
  })
  return { txn, winner: summarizeWinningCommit(2n, [info, ...compaction(sources)]) }
}

describe('Case 4b refuses a tagged winner that permuted rows', () => {
  const refused: readonly [string, Readonly<Record<string, unknown>>][] = [
    ['a non-empty zOrderBy', { predicate: '[]', zOrderBy: '["x","y"]', auto: false }],
    ['a non-empty clusterBy (zOrderBy empty, as Delta writes it)', { zOrderBy: '[]', clusterBy: '["x"]' }],
    ['zOrderBy as a JSON array rather than its text', { zOrderBy: ['x'] }],
    ['an unparsable zOrderBy', { zOrderBy: '[x' }],
  ]
  for (const [name, parameters] of refused) {
    it(`aborts the DML when the winner's commitInfo names ${name}`, () => {
      const { txn, winner } = taggedWinner(parameters)
      const result = check(txn, winner, ON)
      assert.equal(result.kind, 'conflict')
      if (result.kind === 'conflict') assert.match(result.error.reconcileRefused ?? '', PERMUTED)
    })
  }

  it('reconciles the same tagged winner when zOrderBy and clusterBy are empty', () => {
    const { txn, winner } = taggedWinner({ predicate: '[]', zOrderBy: '[]', clusterBy: '[]', auto: false })
    const result = check(txn, winner, ON)
    assert.equal(result.kind, 'ok')
    if (result.kind === 'ok') {
      assert.deepEqual(
        result.reconciliations.map((r) => r.kind),
        ['case4b-reverse-remap'],
      )
    }
  })
})
