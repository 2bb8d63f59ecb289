/**
 * The retry loop and failure rules shared by the remote stores: validated options, bounded
 * backoff, attempt timeouts, caller aborts, which failures may have landed, and redaction.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { InvalidArgumentError, StorageError } from '../../src/errors/index.js'
import { type RequestFailure, redact, transience } from '../../src/storage/request-failure.js'
import {
  type AttemptVerdict,
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  type RetriedCall,
  resolveRetryPolicy,
  runWithRetries,
} from '../../src/storage/retry.js'

const READ: RetriedCall = { action: 'read', path: 'mem://x/k', service: 'Test' }
const PUT: RetriedCall = { action: 'put', path: 'mem://x/k', service: 'Test', write: 'plain' }

function failure(status: number | undefined, code: string | undefined): RequestFailure {
  return { status, code, message: '', requestId: undefined }
}

const transientVerdict = (mayHaveLanded: boolean) => (): AttemptVerdict => ({
  kind: 'retry',
  failure: failure(503, 'ServerBusy'),
  mayHaveLanded,
})

describe('resolveRetryPolicy', () => {
  it('fills in the defaults and keeps given values', () => {
    assert.deepEqual(resolveRetryPolicy(undefined), DEFAULT_RETRY_POLICY)
    assert.deepEqual(resolveRetryPolicy({ maxRetries: 0, attemptTimeoutMs: 50 }), {
      ...DEFAULT_RETRY_POLICY,
      maxRetries: 0,
      attemptTimeoutMs: 50,
    })
    assert.ok(Object.isFrozen(resolveRetryPolicy({})))
  })

  const bad = [
    { maxRetries: -1 },
    { maxRetries: 1.5 },
    { baseDelayMs: Number.NaN },
    { maxDelayMs: Number.POSITIVE_INFINITY },
    { attemptTimeoutMs: 0 },
    { baseDelayMs: '10' as unknown as number },
  ]
  for (const options of bad) {
    it(`rejects ${JSON.stringify(options)}`, () => {
      assert.throws(() => resolveRetryPolicy(options), InvalidArgumentError)
    })
  }
})

describe('backoffDelayMs', () => {
  const policy = resolveRetryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 })
  const cases: [number, number][] = [
    [0, 100],
    [1, 200],
    [3, 800],
    [4, 1000],
    [50, 1000],
  ]
  for (const [retry, cap] of cases) {
    it(`keeps retry ${retry} within [${cap / 2}, ${cap}] ms`, () => {
      assert.equal(
        backoffDelayMs(policy, retry, () => 0),
        cap / 2,
      )
      assert.ok(backoffDelayMs(policy, retry, () => 0.999999) <= cap)
      assert.ok(backoffDelayMs(policy, retry, () => 0.999999) > cap * 0.99)
    })
  }
})

describe('runWithRetries', () => {
  const policy = resolveRetryPolicy({ maxRetries: 3, baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 1000 })

  it('retries transient failures and returns the first success', async () => {
    let attempts = 0
    const result = await runWithRetries(
      policy,
      READ,
      undefined,
      async () => {
        attempts++
        if (attempts < 3) throw new Error('transient')
        return 'done'
      },
      transientVerdict(false),
    )
    assert.equal(result, 'done')
    assert.equal(attempts, 3)
  })

  it('stops at the first failure judged final', async () => {
    let attempts = 0
    const final = new StorageError('final')
    await assert.rejects(
      runWithRetries(
        policy,
        READ,
        undefined,
        async () => {
          attempts++
          throw new Error('boom')
        },
        () => ({ kind: 'throw', error: final }),
      ),
      (err: unknown) => err === final,
    )
    assert.equal(attempts, 1)
  })

  it('gives up after maxRetries + 1 attempts with a retryable StorageError', async () => {
    let attempts = 0
    await assert.rejects(
      runWithRetries(
        policy,
        READ,
        undefined,
        async () => {
          attempts++
          throw new Error('busy')
        },
        transientVerdict(true),
      ),
      (err: unknown) => {
        assert.ok(err instanceof StorageError)
        assert.equal(err.retryable, true)
        // A read that "may have landed" changes nothing: only writes are ambiguous.
        assert.equal(err.ambiguous, false)
        assert.match(err.message, /Test failed 4 times in a row, last with HTTP 503 ServerBusy/)
        return true
      },
    )
    assert.equal(attempts, 4)
  })

  it('marks an exhausted write ambiguous when one of its attempts may have landed', async () => {
    const verdicts = [
      transientVerdict(false),
      transientVerdict(true),
      transientVerdict(false),
      transientVerdict(false),
    ]
    let n = 0
    await assert.rejects(
      runWithRetries(
        policy,
        PUT,
        undefined,
        async () => {
          throw new Error('x')
        },
        () => verdicts[n++]!(),
      ),
      (err: unknown) => err instanceof StorageError && err.ambiguous && err.retryable,
    )
  })

  it('abandons an attempt at its timeout and tells the judge so', async () => {
    const short = resolveRetryPolicy({ maxRetries: 0, attemptTimeoutMs: 30 })
    let sawTimeout: boolean | undefined
    const start = performance.now()
    await assert.rejects(
      runWithRetries(
        short,
        READ,
        undefined,
        (signal) =>
          new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(new Error('aborted by timeout'))),
          ),
        (_err, timedOut) => {
          sawTimeout = timedOut
          return { kind: 'retry', failure: failure(undefined, 'TIMEOUT'), mayHaveLanded: true }
        },
      ),
      StorageError,
    )
    assert.equal(sawTimeout, true)
    assert.ok(performance.now() - start < 1000)
  })

  it('ends a backoff at once when the caller aborts, with AbortError', async () => {
    const slow = resolveRetryPolicy({ maxRetries: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 30)
    const start = performance.now()
    await assert.rejects(
      runWithRetries(
        slow,
        READ,
        controller.signal,
        async () => {
          throw new Error('busy')
        },
        transientVerdict(false),
      ),
      (err: unknown) => err instanceof Error && err.name === 'AbortError',
    )
    assert.ok(performance.now() - start < 2000)
  })
})

describe('transience', () => {
  const cases: [string, RequestFailure, { mayHaveLanded: boolean } | undefined][] = [
    ['a refused connection', failure(undefined, 'ECONNREFUSED'), { mayHaveLanded: false }],
    ['an unknown host', failure(undefined, 'ENOTFOUND'), { mayHaveLanded: false }],
    ['a reset connection', failure(undefined, 'ECONNRESET'), { mayHaveLanded: true }],
    ['a timeout', failure(undefined, 'TIMEOUT'), { mayHaveLanded: true }],
    ['throttling (429)', failure(429, 'TooManyRequests'), { mayHaveLanded: false }],
    ['a busy server (503)', failure(503, 'SlowDown'), { mayHaveLanded: false }],
    ['an internal error (500)', failure(500, 'InternalError'), { mayHaveLanded: true }],
    ['a gateway timeout (504)', failure(504, undefined), { mayHaveLanded: true }],
    ['not found (404)', failure(404, 'NoSuchKey'), undefined],
    ['forbidden (403)', failure(403, 'AccessDenied'), undefined],
  ]
  for (const [label, f, expected] of cases) {
    it(`judges ${label} ${expected === undefined ? 'permanent' : expected.mayHaveLanded ? 'transient, possibly landed' : 'transient, not landed'}`, () => {
      assert.deepEqual(transience(f), expected)
    })
  }
})

describe('redact', () => {
  it('removes listed secrets and signature-shaped parameters', () => {
    const text =
      'GET https://a.blob.core.windows.net/c/k?sv=1&sig=abc%2Bdef&se=2 failed; AccountKey=Zm9vYmFy; X-Amz-Signature=0123abcd with key s3cr3t-value'
    const out = redact(text, ['s3cr3t-value', ''])
    for (const leaked of ['abc%2Bdef', 'Zm9vYmFy', '0123abcd', 's3cr3t-value'])
      assert.ok(!out.includes(leaked), out)
    assert.match(out, /sig=\*\*\*/)
    assert.match(out, /sv=1/)
  })
})
