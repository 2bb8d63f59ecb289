import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backoffDelay, DEFAULT_RETRY_POLICY, lostRaceDelay } from '../../../src/txn/commit-options.js'

describe('commit retry delays', () => {
  it('after a lost race: jitter below baseDelayMs, however many attempts came before', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 8, maxDelayMs: 100 }
    assert.equal(lostRaceDelay(policy, 0), 0)
    assert.equal(lostRaceDelay(policy, 0.999), 7)
    assert.equal(lostRaceDelay({ ...policy, maxDelayMs: 3 }, 0.999), 2, 'never above maxDelayMs')
    assert.equal(lostRaceDelay({ ...policy, baseDelayMs: 0 }, 0.999), 0)
  })

  it('after a storage failure: exponential with full jitter up to maxDelayMs', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 2, maxDelayMs: 100 }
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 30].map((attempt) => backoffDelay(policy, attempt, 0.999)),
      [1, 3, 7, 15, 31, 63, 99, 99, 99],
    )
  })
})
