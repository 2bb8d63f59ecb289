/**
 * FaultyStore: the fault plans later commit-loop and race tests rely on behave exactly as
 * documented, and replay identically from a seed.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { FileAlreadyExistsError, InvalidArgumentError, StorageError } from '../../src/errors/index.js'
import { globToRegExp } from '../../src/storage/faulty-store.js'
import {
  createFaultyStore,
  createLocalStore,
  createMemoryStore,
  type FaultPlan,
  type ObjectStore,
} from '../../src/storage/index.js'

const enc = (s: string) => new TextEncoder().encode(s)
const dec = (b: Uint8Array) => new TextDecoder().decode(b)

async function listKeys(store: ObjectStore, prefix = ''): Promise<string[]> {
  const keys: string[] = []
  for await (const m of store.listRecursive(prefix)) keys.push(m.key)
  return keys.sort()
}

/** Runs `count` sequential calls and returns, per call, whether it failed. */
async function failurePattern(call: () => Promise<unknown>, count: number): Promise<boolean[]> {
  const out: boolean[] = []
  for (let i = 0; i < count; i++) {
    try {
      await call()
      out.push(false)
    } catch (err) {
      assert.ok(err instanceof StorageError, String(err))
      out.push(true)
    }
  }
  return out
}

describe('FaultyStore put faults', () => {
  it('fails the nth put before it reaches the wrapped store', async () => {
    const inner = createMemoryStore()
    const store = createFaultyStore(inner, { faults: [{ methods: 'put', nth: 2 }] })
    await store.put('a', enc('1'))
    await assert.rejects(store.put('b', enc('2')), (err: unknown) => {
      assert.ok(err instanceof StorageError)
      assert.equal(err.ambiguous, false)
      assert.equal(err.retryable, false)
      assert.equal(err.path, 'b')
      return true
    })
    await store.put('c', enc('3'))
    assert.deepEqual(await listKeys(inner), ['a', 'c'])
  })

  it('counts only the puts whose key matches the glob', async () => {
    const inner = createMemoryStore()
    const store = createFaultyStore(inner, {
      faults: [{ methods: 'put', match: '_delta_log/*.json', nth: [1, 3] }],
    })
    const outcomes: boolean[] = []
    const puts = [
      'part-0.parquet',
      '_delta_log/00000000000000000000.json',
      '_delta_log/00000000000000000000.checkpoint.parquet',
      '_delta_log/00000000000000000001.json',
      'deletion_vector_1.bin',
      '_delta_log/00000000000000000002.json',
    ]
    for (const key of puts) {
      try {
        await store.put(key, enc(key))
        outcomes.push(false)
      } catch (err) {
        assert.ok(err instanceof StorageError)
        outcomes.push(true)
      }
    }
    assert.deepEqual(outcomes, [false, true, false, false, false, true])
    assert.deepEqual(await listKeys(inner), [
      '_delta_log/00000000000000000000.checkpoint.parquet',
      '_delta_log/00000000000000000001.json',
      'deletion_vector_1.bin',
      'part-0.parquet',
    ])
  })

  it('lands an ambiguous put on the wrapped store yet reports a StorageError with ambiguous set', async () => {
    const inner = createMemoryStore()
    const store = createFaultyStore(inner, {
      faults: [{ methods: 'put', match: /\.json$/, nth: 1, effect: 'ambiguous', retryable: true }],
    })
    await assert.rejects(
      store.put('_delta_log/0.json', enc('commit'), { ifNotExists: true }),
      (err: unknown) => {
        assert.ok(err instanceof StorageError)
        assert.equal(err.ambiguous, true)
        assert.equal(err.retryable, true)
        return true
      },
    )
    assert.equal(dec(await inner.read('_delta_log/0.json')), 'commit')
    // Retrying the put after an ambiguous outcome finds the object already there.
    await assert.rejects(
      store.put('_delta_log/0.json', enc('commit'), { ifNotExists: true }),
      FileAlreadyExistsError,
    )
  })

  it('reports an ambiguous put as ambiguous even when the wrapped put itself failed', async () => {
    const inner = createMemoryStore()
    await inner.put('k', enc('winner'))
    const store = createFaultyStore(inner, { faults: [{ methods: 'put', effect: 'ambiguous', nth: 1 }] })
    await assert.rejects(store.put('k', enc('loser'), { ifNotExists: true }), (err: unknown) => {
      assert.ok(err instanceof StorageError && err.ambiguous)
      assert.ok(err.cause instanceof FileAlreadyExistsError)
      return true
    })
    assert.equal(dec(await inner.read('k')), 'winner')
  })

  it('stops firing after its limit while still counting calls', async () => {
    const store = createFaultyStore(createMemoryStore(), { faults: [{ methods: 'put', rate: 1, limit: 2 }] })
    assert.deepEqual(await failurePattern(() => store.put('x', enc('x')), 4), [true, true, false, false])
  })

  it('applies the first firing rule when several fire on one call', async () => {
    const inner = createMemoryStore()
    const store = createFaultyStore(inner, {
      faults: [
        { methods: 'put', nth: 1, effect: 'ambiguous' },
        { methods: 'put', nth: [1, 2] },
      ],
    })
    await assert.rejects(
      store.put('a', enc('a')),
      (err: unknown) => err instanceof StorageError && err.ambiguous,
    )
    await assert.rejects(
      store.put('b', enc('b')),
      (err: unknown) => err instanceof StorageError && !err.ambiguous,
    )
    assert.deepEqual(await listKeys(inner), ['a'])
  })
})

describe('FaultyStore read and list faults', () => {
  const plan = (seed: number): FaultPlan => ({
    seed,
    faults: [{ methods: ['read', 'listFrom'], rate: 0.3 }],
  })

  async function pattern(seed: number): Promise<boolean[]> {
    const inner = createMemoryStore()
    await inner.put('d/k', enc('v'))
    const store = createFaultyStore(inner, plan(seed))
    const out: boolean[] = []
    for (let i = 0; i < 100; i++) {
      out.push(...(await failurePattern(() => store.read('d/k'), 1)))
      out.push(
        ...(await failurePattern(async () => {
          for await (const _ of store.listFrom('d/')) {
            // drained only to trigger the call
          }
        }, 1)),
      )
    }
    return out
  }

  it('replays the same failures from the same seed', async () => {
    const first = await pattern(42)
    assert.deepEqual(await pattern(42), first)
    const failures = first.filter(Boolean).length
    // 200 draws at rate 0.3: far outside this band only if the generator were broken.
    assert.ok(failures > 30 && failures < 90, `failures: ${failures}`)
  })

  it('draws different failures from a different seed', async () => {
    assert.notDeepEqual(await pattern(42), await pattern(43))
  })

  it('restarts the random streams and counters on setPlan', async () => {
    const inner = createMemoryStore()
    await inner.put('k', enc('v'))
    const store = createFaultyStore(inner, { seed: 5, faults: [{ methods: 'read', rate: 0.5 }] })
    const first = await failurePattern(() => store.read('k'), 40)
    store.setPlan({ seed: 5, faults: [{ methods: 'read', rate: 0.5 }] })
    assert.deepEqual(await failurePattern(() => store.read('k'), 40), first)
    store.setPlan({})
    assert.deepEqual(await failurePattern(() => store.read('k'), 5), [false, false, false, false, false])
  })

  it('fails the nth read and the nth recursive listing', async () => {
    const inner = createMemoryStore()
    await inner.put('a/b', enc('v'))
    const store = createFaultyStore(inner, {
      faults: [
        { methods: 'read', nth: 3 },
        { methods: 'listRecursive', nth: 1 },
      ],
    })
    assert.deepEqual(await failurePattern(() => store.read('a/b'), 4), [false, false, true, false])
    await assert.rejects(listKeys(store), StorageError)
    assert.deepEqual(await listKeys(store), ['a/b'])
  })
})

describe('FaultyStore delays', () => {
  it('delays matching calls by the fixed amount', async () => {
    const store = createFaultyStore(createMemoryStore(), { delays: [{ methods: 'put', ms: 60 }] })
    const start = performance.now()
    await store.put('k', enc('v'))
    assert.ok(performance.now() - start >= 55)
    const readStart = performance.now()
    await store.read('k')
    assert.ok(performance.now() - readStart < 50, 'reads are not delayed')
  })

  it('cuts a delay short when the signal aborts', async () => {
    const store = createFaultyStore(createMemoryStore(), { delays: [{ ms: 10_000 }] })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 10)
    await assert.rejects(
      store.put('k', enc('v'), { signal: controller.signal }),
      (err: unknown) => err instanceof Error && err.name === 'AbortError',
    )
    assert.deepEqual(await listKeys(store.inner), [])
  })
})

describe('FaultyStore stats and wrapping', () => {
  it('counts calls and injected faults per method', async () => {
    const store = createFaultyStore(createMemoryStore(), { faults: [{ methods: 'head', nth: 1 }] })
    await store.put('a', enc('1'))
    await store.put('b', enc('2'), { ifNotExists: true })
    await store.read('a')
    await assert.rejects(store.head('a'), StorageError)
    await store.head('a')
    await store.delete('a')
    for await (const _ of store.listFrom('')) {
      // drained only to count the call
    }
    await listKeys(store)
    assert.deepEqual(store.stats, {
      calls: { read: 1, head: 2, put: 2, delete: 1, listFrom: 1, listRecursive: 1 },
      faults: { read: 0, head: 1, put: 0, delete: 0, listFrom: 0, listRecursive: 0 },
    })
    store.resetStats()
    assert.equal(store.stats.calls.put, 0)
  })

  it('exposes localPath only when the wrapped store has one', () => {
    const memory = createFaultyStore(createMemoryStore(), {})
    assert.equal('localPath' in memory, false)
    const local = createFaultyStore(createLocalStore('/tmp/some-table'), {})
    assert.equal(local.localPath?.('_delta_log/0.json'), '/tmp/some-table/_delta_log/0.json')
  })

  it('rejects malformed plans', () => {
    const bad: FaultPlan[] = [
      { seed: 1.5 },
      { faults: [{ methods: 'put', rate: 2 }] },
      { faults: [{ methods: 'put', nth: 0 }] },
      { faults: [{ methods: 'read', effect: 'ambiguous' }] },
      { faults: [{ methods: [] }] },
      { delays: [{ ms: -1 }] },
    ]
    for (const plan of bad) {
      assert.throws(
        () => createFaultyStore(createMemoryStore(), plan),
        InvalidArgumentError,
        JSON.stringify(plan),
      )
    }
  })
})

describe('globToRegExp', () => {
  const cases: [string, string, boolean][] = [
    ['_delta_log/*.json', '_delta_log/00000000000000000001.json', true],
    ['_delta_log/*.json', '_delta_log/sub/1.json', false],
    ['_delta_log/*.json', 'x/_delta_log/1.json', false],
    ['**/*.parquet', 'a/b/c.parquet', true],
    ['**.parquet', 'c.parquet', true],
    ['part-?.parquet', 'part-1.parquet', true],
    ['part-?.parquet', 'part-10.parquet', false],
    ['a+b(c).json', 'a+b(c).json', true],
  ]
  for (const [glob, key, expected] of cases) {
    it(`${expected ? 'matches' : 'does not match'} '${key}' with '${glob}'`, () => {
      assert.equal(globToRegExp(glob).test(key), expected)
    })
  }
})
