/**
 * A test double that wraps a real store and injects failures and delays according to a plan:
 * puts that fail before reaching the store, puts that land but report an error (the ambiguous
 * outcome the commit loop must resolve by looking at the log), failing reads and listings, and
 * slow calls. Every random choice comes from a seeded generator, so a plan replays identically.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { InvalidArgumentError, StorageError } from '../errors/index.js'
import { checkKey } from './keys.js'
import type { ByteRange, FileMeta, ObjectStore, PutOptions, StoreCallOptions } from './object-store.js'

/**
 * The calls of an {@link ObjectStore}, as named in plans and statistics. A prefix listing
 * (`listPrefix`) is a `listFrom` here: the bounded form of a directory listing, it is counted,
 * delayed and failed as one.
 */
export type StoreMethod = 'read' | 'head' | 'put' | 'delete' | 'listFrom' | 'listRecursive'

const METHODS: readonly StoreMethod[] = Object.freeze([
  'read',
  'head',
  'put',
  'delete',
  'listFrom',
  'listRecursive',
])

/**
 * Selects calls by key (for listings, the `from` or `prefix` argument):
 * - a `RegExp`, tested against the key;
 * - a glob string, matched against the whole key: `*` matches within one path segment, `**` across
 *   segments, `?` one character (`'_delta_log/*.json'`). Globs keep plans JSON-serialisable, so
 *   they can be handed to worker processes;
 * - a predicate.
 */
export type KeyMatcher = RegExp | string | ((key: string) => boolean)

/**
 * One fault rule. A rule watches the calls of its `methods` whose key matches `match`, numbers
 * them 1, 2, 3... in the order they start, and fires on the calls listed in `nth` and, with
 * probability `rate`, on any other. Every watched call is counted and draws from the rule's own
 * random stream whether or not another rule fires on it, so adding a rule never shifts the
 * behaviour of the others. When several rules fire on one call, the first in the plan applies.
 */
export interface FaultRule {
  /** The calls this rule watches. */
  readonly methods: StoreMethod | readonly StoreMethod[]
  /** Restricts the rule to matching keys; every key when absent. */
  readonly match?: KeyMatcher | undefined
  /** 1-based ordinals, among the calls this rule watches, on which it fires. */
  readonly nth?: number | readonly number[] | undefined
  /** Probability in [0, 1] that the rule fires on a watched call, drawn from the seeded generator. */
  readonly rate?: number | undefined
  /**
   * What a firing does:
   * - `'fail'` (default): throw a {@link StorageError} without calling the wrapped store;
   * - `'ambiguous'` (put and delete only): perform the call on the wrapped store, then throw a
   *   {@link StorageError} with `ambiguous: true` whatever its outcome, as when a response is lost.
   */
  readonly effect?: 'fail' | 'ambiguous' | undefined
  /** The `retryable` flag of the injected error (default false). */
  readonly retryable?: boolean | undefined
  /** The rule stops firing after this many faults (default unlimited); counting goes on. */
  readonly limit?: number | undefined
}

/** Slows calls down before they reach the wrapped store. An aborted signal cuts the wait short. */
export interface DelayRule {
  /** The delayed calls; every method when absent. */
  readonly methods?: StoreMethod | readonly StoreMethod[] | undefined
  /** Restricts the rule to matching keys; every key when absent. */
  readonly match?: KeyMatcher | undefined
  /** Milliseconds to wait (an upper bound when `random`). */
  readonly ms: number
  /** Wait a uniformly drawn time in [0, ms] instead of exactly `ms`. */
  readonly random?: boolean | undefined
}

/**
 * What a {@link FaultyStore} does to the calls it forwards. The empty plan `{}` forwards every
 * call untouched.
 *
 * ### Examples
 * ```ts
 * // The second commit file put lands but the caller sees an ambiguous error.
 * { faults: [{ methods: 'put', match: '_delta_log/*.json', nth: 2, effect: 'ambiguous' }] }
 * // Reads and listings fail 5% of the time, and every call waits up to 3 ms.
 * { seed: 7, faults: [{ methods: ['read', 'listFrom'], rate: 0.05, retryable: true }],
 *   delays: [{ ms: 3, random: true }] }
 * ```
 */
export interface FaultPlan {
  /** Seed of the random streams (an integer; default 1). */
  readonly seed?: number | undefined
  /** Fault rules, in precedence order. */
  readonly faults?: readonly FaultRule[] | undefined
  /** Delay rules; the waits of every matching rule add up. */
  readonly delays?: readonly DelayRule[] | undefined
}

/** Per-method counters of a {@link FaultyStore}. */
export interface FaultyStoreStats {
  /** Calls received, including those that then failed. Listings count when iteration starts. */
  readonly calls: Readonly<Record<StoreMethod, number>>
  /** Faults injected. */
  readonly faults: Readonly<Record<StoreMethod, number>>
}

/** An {@link ObjectStore} that injects the faults of a {@link FaultPlan} into a wrapped store. */
export interface FaultyStore extends ObjectStore {
  /** The wrapped store, for checking what really landed. */
  readonly inner: ObjectStore
  /** A snapshot of the counters. */
  readonly stats: FaultyStoreStats
  /**
   * Replaces the plan. Rule counters and random streams restart from the new plan's seed;
   * statistics are kept.
   *
   * @param plan - the new plan
   * @throws {InvalidArgumentError} when the plan is malformed
   */
  setPlan(plan: FaultPlan): void
  /** Sets every counter of {@link FaultyStore.stats} back to zero. */
  resetStats(): void
}

/**
 * Wraps `inner` in a store that follows `plan`. When `inner` has `localPath`, so does the
 * wrapper, and reads made through such paths bypass the plan; when it has `listPrefix`, so does
 * the wrapper, and the plan treats its calls as `listFrom` calls.
 *
 * @param inner - the store that really holds the objects
 * @param plan - the faults and delays to inject
 * @returns the wrapping store
 * @throws {InvalidArgumentError} when the plan is malformed
 */
export function createFaultyStore(inner: ObjectStore, plan: FaultPlan): FaultyStore {
  return new FaultyStoreImpl(inner, plan)
}

// === Implementation ===

interface ActiveFault {
  readonly rule: FaultRule
  readonly index: number
  readonly methods: ReadonlySet<StoreMethod>
  readonly matches: (key: string) => boolean
  readonly nth: ReadonlySet<number>
  readonly random: () => number
  seen: number
  fired: number
}

interface ActiveDelay {
  readonly rule: DelayRule
  readonly methods: ReadonlySet<StoreMethod>
  readonly matches: (key: string) => boolean
  readonly random: () => number
}

interface Decision {
  readonly fault: ActiveFault | undefined
  readonly waitMs: number
  readonly ordinal: number
}

class FaultyStoreImpl implements FaultyStore {
  readonly inner: ObjectStore
  readonly root: string
  // Declared, not defined, so that the wrapper has none of them when the wrapped store has none.
  declare readonly rootUri?: string
  declare readonly localPath?: (key: string) => string
  declare readonly listPrefix?: (prefix: string, opts?: StoreCallOptions) => AsyncGenerator<FileMeta>
  #faults: ActiveFault[] = []
  #delays: ActiveDelay[] = []
  #calls = zeroCounts()
  #injected = zeroCounts()

  constructor(inner: ObjectStore, plan: FaultPlan) {
    this.inner = inner
    this.root = inner.root
    if (inner.rootUri !== undefined) this.rootUri = inner.rootUri
    if (inner.localPath !== undefined) {
      const localPath = inner.localPath.bind(inner)
      this.localPath = (key: string) => localPath(key)
    }
    if (inner.listPrefix !== undefined) {
      const listPrefix = inner.listPrefix.bind(inner)
      this.listPrefix = (prefix: string, opts?: StoreCallOptions) =>
        this.#listPrefix(listPrefix, prefix, opts)
    }
    this.setPlan(plan)
  }

  get stats(): FaultyStoreStats {
    return Object.freeze({
      calls: Object.freeze({ ...this.#calls }),
      faults: Object.freeze({ ...this.#injected }),
    })
  }

  setPlan(plan: FaultPlan): void {
    const seed = plan.seed ?? 1
    if (!Number.isSafeInteger(seed)) {
      throw new InvalidArgumentError(`Invalid fault plan seed ${seed}: use an integer`, { argument: 'seed' })
    }
    this.#faults = (plan.faults ?? []).map((rule, index) => activateFault(rule, index, seed))
    this.#delays = (plan.delays ?? []).map((rule, index) => activateDelay(rule, index, seed))
  }

  resetStats(): void {
    this.#calls = zeroCounts()
    this.#injected = zeroCounts()
  }

  async read(key: string, range?: ByteRange, opts?: StoreCallOptions): Promise<Uint8Array> {
    const decision = await this.#enter('read', key, opts?.signal)
    this.#failBefore('read', key, decision)
    return this.inner.read(key, range, opts)
  }

  async head(key: string, opts?: StoreCallOptions): Promise<FileMeta> {
    const decision = await this.#enter('head', key, opts?.signal)
    this.#failBefore('head', key, decision)
    return this.inner.head(key, opts)
  }

  // biome-ignore lint/suspicious/noConfusingVoidType: a store written before puts reported metadata returns Promise<void>, and stays a valid store
  async put(key: string, data: Uint8Array, opts?: PutOptions): Promise<FileMeta | undefined | void> {
    const decision = await this.#enter('put', key, opts?.signal)
    this.#failBefore('put', key, decision)
    if (decision.fault === undefined) return this.inner.put(key, data, opts)
    const outcome = await settle(this.inner.put(key, data, opts))
    throw ambiguousError('put', key, decision, outcome)
  }

  async delete(key: string, opts?: StoreCallOptions): Promise<void> {
    const decision = await this.#enter('delete', key, opts?.signal)
    this.#failBefore('delete', key, decision)
    if (decision.fault === undefined) return this.inner.delete(key, opts)
    const outcome = await settle(this.inner.delete(key, opts))
    throw ambiguousError('delete', key, decision, outcome)
  }

  async *listFrom(from: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    const decision = await this.#enter('listFrom', from, opts?.signal)
    this.#failBefore('listFrom', from, decision)
    yield* this.inner.listFrom(from, opts)
  }

  async *listRecursive(prefix: string, opts?: StoreCallOptions): AsyncGenerator<FileMeta> {
    const decision = await this.#enter('listRecursive', prefix, opts?.signal)
    this.#failBefore('listRecursive', prefix, decision)
    yield* this.inner.listRecursive(prefix, opts)
  }

  async *#listPrefix(
    listPrefix: (prefix: string, opts?: StoreCallOptions) => AsyncIterable<FileMeta>,
    prefix: string,
    opts: StoreCallOptions | undefined,
  ): AsyncGenerator<FileMeta> {
    const decision = await this.#enter('listFrom', prefix, opts?.signal)
    this.#failBefore('listFrom', prefix, decision)
    yield* listPrefix(prefix, opts)
  }

  /** Validates, counts, decides the fault and waits the delay, in that order. */
  async #enter(method: StoreMethod, key: string, signal: AbortSignal | undefined): Promise<Decision> {
    checkKey(key)
    signal?.throwIfAborted()
    this.#calls[method]++
    let fault: ActiveFault | undefined
    let ordinal = 0
    for (const active of this.#faults) {
      if (!active.methods.has(method) || !active.matches(key)) continue
      active.seen++
      const drawn = active.rule.rate !== undefined && active.random() < active.rule.rate
      const fires = (active.nth.has(active.seen) || drawn) && active.fired < (active.rule.limit ?? Infinity)
      if (fires && fault === undefined) {
        active.fired++
        fault = active
        ordinal = active.seen
      }
    }
    if (fault !== undefined) this.#injected[method]++
    let waitMs = 0
    for (const delay of this.#delays) {
      if (!delay.methods.has(method) || !delay.matches(key)) continue
      waitMs += delay.rule.random ? delay.random() * delay.rule.ms : delay.rule.ms
    }
    if (waitMs > 0) await sleep(waitMs, undefined, signal === undefined ? undefined : { signal })
    return { fault, waitMs, ordinal }
  }

  #failBefore(method: StoreMethod, key: string, decision: Decision): void {
    const fault = decision.fault
    if (fault === undefined || (fault.rule.effect ?? 'fail') !== 'fail') return
    throw new StorageError(
      `Injected fault: ${method} of '${key}' failed before reaching ${this.root} (fault rule ${fault.index}, watched call ${decision.ordinal})`,
      { path: key, retryable: fault.rule.retryable ?? false },
    )
  }
}

function zeroCounts(): Record<StoreMethod, number> {
  return { read: 0, head: 0, put: 0, delete: 0, listFrom: 0, listRecursive: 0 }
}

async function settle(call: Promise<unknown>): Promise<{ ok: true } | { ok: false; error: unknown }> {
  try {
    await call
    return { ok: true }
  } catch (error) {
    return { ok: false, error }
  }
}

function ambiguousError(
  method: 'put' | 'delete',
  key: string,
  decision: Decision,
  outcome: { ok: true } | { ok: false; error: unknown },
): StorageError {
  const fault = decision.fault
  const what = outcome.ok ? 'succeeded' : 'failed'
  return new StorageError(
    `Injected fault: the ${method} of '${key}' ${what} on the store but its response was lost (fault rule ${fault?.index}, watched call ${decision.ordinal})`,
    {
      path: key,
      ambiguous: true,
      retryable: fault?.rule.retryable ?? false,
      ...(outcome.ok ? {} : { cause: outcome.error }),
      hint: 'Check whether the object is there before repeating the call.',
    },
  )
}

// === Plan validation ===

function methodSet(
  methods: StoreMethod | readonly StoreMethod[] | undefined,
  where: string,
): Set<StoreMethod> {
  const list = methods === undefined ? METHODS : typeof methods === 'string' ? [methods] : methods
  for (const m of list) {
    if (!METHODS.includes(m)) {
      throw new InvalidArgumentError(
        `Invalid ${where}: unknown method '${m}' (use one of ${METHODS.join(', ')})`,
        {
          argument: 'plan',
        },
      )
    }
  }
  return new Set(list)
}

function activateFault(rule: FaultRule, index: number, seed: number): ActiveFault {
  const where = `fault rule ${index}`
  const methods = methodSet(rule.methods, where)
  if (methods.size === 0) {
    throw new InvalidArgumentError(`Invalid ${where}: it watches no method`, { argument: 'plan' })
  }
  const nth = rule.nth === undefined ? [] : typeof rule.nth === 'number' ? [rule.nth] : rule.nth
  for (const n of nth) {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new InvalidArgumentError(`Invalid ${where}: nth ${n} must be a positive integer`, {
        argument: 'plan',
      })
    }
  }
  if (rule.rate !== undefined && !(rule.rate >= 0 && rule.rate <= 1)) {
    throw new InvalidArgumentError(`Invalid ${where}: rate ${rule.rate} must be within [0, 1]`, {
      argument: 'plan',
    })
  }
  if (rule.limit !== undefined && !(Number.isSafeInteger(rule.limit) && rule.limit >= 0)) {
    throw new InvalidArgumentError(`Invalid ${where}: limit ${rule.limit} must be a non-negative integer`, {
      argument: 'plan',
    })
  }
  const effect = rule.effect ?? 'fail'
  if (effect !== 'fail' && effect !== 'ambiguous') {
    throw new InvalidArgumentError(`Invalid ${where}: effect '${effect}' must be 'fail' or 'ambiguous'`, {
      argument: 'plan',
    })
  }
  if (effect === 'ambiguous' && [...methods].some((m) => m !== 'put' && m !== 'delete')) {
    throw new InvalidArgumentError(
      `Invalid ${where}: the 'ambiguous' effect applies to put and delete only`,
      {
        argument: 'plan',
      },
    )
  }
  return {
    rule,
    index,
    methods,
    matches: keyMatcher(rule.match, where),
    nth: new Set(nth),
    random: seededRandom(seed, 2 * index),
    seen: 0,
    fired: 0,
  }
}

function activateDelay(rule: DelayRule, index: number, seed: number): ActiveDelay {
  const where = `delay rule ${index}`
  if (!(Number.isFinite(rule.ms) && rule.ms >= 0)) {
    throw new InvalidArgumentError(`Invalid ${where}: ms ${rule.ms} must be a non-negative number`, {
      argument: 'plan',
    })
  }
  return {
    rule,
    methods: methodSet(rule.methods, where),
    matches: keyMatcher(rule.match, where),
    random: seededRandom(seed, 2 * index + 1),
  }
}

function keyMatcher(match: KeyMatcher | undefined, where: string): (key: string) => boolean {
  if (match === undefined) return () => true
  if (typeof match === 'function') return match
  if (match instanceof RegExp) {
    // A copy without the stateful flags, so that `test` gives the same answer on every call.
    const re = new RegExp(match.source, match.flags.replace(/[gy]/g, ''))
    return (key) => re.test(key)
  }
  if (typeof match === 'string') {
    const re = globToRegExp(match)
    return (key) => re.test(key)
  }
  throw new InvalidArgumentError(`Invalid ${where}: match must be a RegExp, a glob string or a function`, {
    argument: 'plan',
  })
}

/**
 * Translates a key glob into an anchored regular expression.
 *
 * @param glob - `*` within a segment, `**` across segments, `?` one character
 * @returns the equivalent regular expression
 */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*' && glob[i + 1] === '*') {
      source += '.*'
      i++
    } else if (c === '*') {
      source += '[^/]*'
    } else if (c === '?') {
      source += '[^/]'
    } else {
      source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    }
  }
  return new RegExp(`^${source}$`)
}

/**
 * A deterministic generator of numbers in [0, 1) (mulberry32), one independent stream per
 * `(seed, stream)` pair.
 */
function seededRandom(seed: number, stream: number): () => number {
  let state = (Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul(stream + 1, 0x85ebca77)) >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
