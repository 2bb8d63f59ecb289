/**
 * The switches of the row-level reconciliations (api.md "Reconciliation flags"). Every
 * reconciliation is off by default; with all of them off the checker is Delta's file-level one.
 */
import { InvalidArgumentError } from '../errors/index.js'

/** Which reconciliations run, and their tuning values. */
export interface ConflictFlags {
  /** Case 2: same file, disjoint rows, union of deletion vectors. */
  readonly rowLevelConcurrency: boolean
  /** Case 1 stats tier: winner adds pruned by their min/max statistics. */
  readonly dataSkipping: boolean
  /** Case 1 value-exact tier, and the delete/read refinement 1b (needs `dataSkipping` too). */
  readonly dataSkippingValueExact: boolean
  /** Value-exact tier: skip the row scan when the candidates exceed this many bytes; 0 = no bound. */
  readonly valueExactMaxBytes: number
  /** Case 3: `dataChange = false` files excluded from the file-level checks. */
  readonly excludeNoDataChangeFiles: boolean
  /** Case 4a: a losing OPTIMIZE remaps a winner's new deletions onto its outputs. */
  readonly optimizeReconciliation: boolean
  /** Case 4b: a losing DML remaps its deletions onto a winning OPTIMIZE's outputs. */
  readonly optimizeReverseReconciliation: boolean
  /** Case 5a: a losing Z-order OPTIMIZE remaps a winner's deletions through its own permutation. */
  readonly optimizeZOrderReconciliation: boolean
  /**
   * Case 5b: a losing DML finds the rows it takes out, by stable row id, in the outputs of a
   * winning OPTIMIZE that relocated them (Z-order, clustering, or any relocation that preserves
   * row ids), and masks them there.
   */
  readonly optimizeZOrderReverseReconciliation: boolean
  /** Case 5b budget: at most this many row ids sought against one winner; 0 = no bound. */
  readonly zOrderReverseMaxRowIds: number
  /** Case 5b budget: at most this many candidate outputs searched; 0 = no bound. */
  readonly zOrderReverseMaxCandidateFiles: number
  /** Case 5b budget: at most this many bytes of id column (8 per candidate row); 0 = no bound. */
  readonly zOrderReverseMaxIdColumnBytes: number
  /** Case 5b budget: the search stops after this many milliseconds; 0 = no bound. */
  readonly zOrderReverseMaxMillis: number
  /** MERGE records "target key in the source keys" as its read predicate (feeds Case 1). */
  readonly mergeSourceKeyReadPredicate: boolean
  /** MERGE source-key read: at most this many distinct keys form an IN-set, more a key range. */
  readonly mergeSourceKeyInSetThreshold: number
  /**
   * Case 6: a losing MERGE records its row-level read set (source keys and NOT MATCHED BY SOURCE
   * conditions) and is checked row by row against each winner's changed rows.
   */
  readonly mergeRowLevelConflicts: boolean
  /** Case 6: at most this many distinct source key tuples are kept exactly, more in a Bloom filter. */
  readonly mergeRowLevelMaxExactKeys: number
  /** Case 6: the row reads against one winner stop after this many milliseconds; 0 = no bound. */
  readonly mergeRowLevelMaxMillis: number
}

/** Default of {@link ConflictFlags.valueExactMaxBytes}: 1 GiB. */
export const DEFAULT_VALUE_EXACT_MAX_BYTES = 1 << 30
/** Default of {@link ConflictFlags.mergeSourceKeyInSetThreshold}. */
export const DEFAULT_MERGE_SOURCE_KEY_IN_SET_THRESHOLD = 10_000
/** Default of {@link ConflictFlags.mergeRowLevelMaxExactKeys}. */
export const DEFAULT_MERGE_ROW_LEVEL_MAX_EXACT_KEYS = 1_000_000

/** Every reconciliation off: Delta's file-level checker. */
export const DEFAULT_CONFLICT_FLAGS: ConflictFlags = Object.freeze({
  rowLevelConcurrency: false,
  dataSkipping: false,
  dataSkippingValueExact: false,
  valueExactMaxBytes: DEFAULT_VALUE_EXACT_MAX_BYTES,
  excludeNoDataChangeFiles: false,
  optimizeReconciliation: false,
  optimizeReverseReconciliation: false,
  optimizeZOrderReconciliation: false,
  optimizeZOrderReverseReconciliation: false,
  zOrderReverseMaxRowIds: 10_000_000,
  zOrderReverseMaxCandidateFiles: 1_000,
  zOrderReverseMaxIdColumnBytes: 64 * 1024 * 1024,
  zOrderReverseMaxMillis: 2_000,
  mergeSourceKeyReadPredicate: false,
  mergeSourceKeyInSetThreshold: DEFAULT_MERGE_SOURCE_KEY_IN_SET_THRESHOLD,
  mergeRowLevelConflicts: false,
  mergeRowLevelMaxExactKeys: DEFAULT_MERGE_ROW_LEVEL_MAX_EXACT_KEYS,
  mergeRowLevelMaxMillis: 2_000,
})

/** A boolean switch of {@link ConflictFlags}. */
export type BooleanFlag = {
  [K in keyof ConflictFlags]: ConflictFlags[K] extends boolean ? K : never
}[keyof ConflictFlags]
type NumericFlag = Exclude<keyof ConflictFlags, BooleanFlag>

/** Option keys (without the Spark prefix) of the boolean switches. */
const BOOLEAN_KEYS: Readonly<Record<string, BooleanFlag>> = Object.freeze({
  'rowLevelConcurrency.enabled': 'rowLevelConcurrency',
  'conflictDetection.dataSkipping.enabled': 'dataSkipping',
  'conflictDetection.dataSkipping.valueExact.enabled': 'dataSkippingValueExact',
  'conflictDetection.excludeNoDataChangeFiles.enabled': 'excludeNoDataChangeFiles',
  'optimize.conflictReconciliation.enabled': 'optimizeReconciliation',
  'optimize.conflictReconciliation.reverse.enabled': 'optimizeReverseReconciliation',
  'optimize.zorder.conflictReconciliation.enabled': 'optimizeZOrderReconciliation',
  'optimize.zorder.conflictReconciliation.reverse.enabled': 'optimizeZOrderReverseReconciliation',
  'merge.sourceKeyReadPredicate.enabled': 'mergeSourceKeyReadPredicate',
  'merge.rowLevelConflicts.enabled': 'mergeRowLevelConflicts',
})

/** Option keys (without the Spark prefix) of the numeric settings, with their minimum. */
const NUMERIC_KEYS: Readonly<Record<string, readonly [NumericFlag, number]>> = Object.freeze({
  'conflictDetection.dataSkipping.valueExact.maxBytes': ['valueExactMaxBytes', 0] as const,
  'merge.sourceKeyReadPredicate.inSetThreshold': ['mergeSourceKeyInSetThreshold', 0] as const,
  'merge.rowLevelConflicts.maxExactKeys': ['mergeRowLevelMaxExactKeys', 0] as const,
  'merge.rowLevelConflicts.maxMillis': ['mergeRowLevelMaxMillis', 0] as const,
  'optimize.zorder.conflictReconciliation.reverse.maxRowIds': ['zOrderReverseMaxRowIds', 0] as const,
  'optimize.zorder.conflictReconciliation.reverse.maxCandidateFiles': [
    'zOrderReverseMaxCandidateFiles',
    0,
  ] as const,
  'optimize.zorder.conflictReconciliation.reverse.maxIdColumnBytes': [
    'zOrderReverseMaxIdColumnBytes',
    0,
  ] as const,
  'optimize.zorder.conflictReconciliation.reverse.maxMillis': ['zOrderReverseMaxMillis', 0] as const,
})

const SPARK_PREFIX = 'spark.databricks.delta.'

/** The option keys {@link parseConflictFlags} accepts (each also with the Spark prefix). */
export const CONFLICT_FLAG_KEYS: readonly string[] = Object.freeze([
  ...Object.keys(BOOLEAN_KEYS),
  ...Object.keys(NUMERIC_KEYS),
])

/**
 * Parses the user's `conflicts` option.
 *
 * - `undefined`: every reconciliation off.
 * - `'all'`: every reconciliation on (numeric settings at their defaults).
 * - an object: keys as in api.md, with or without the `spark.databricks.delta.` prefix; boolean
 *   switches take `true`/`false` or the strings `'true'`/`'false'` (any case); numeric settings take
 *   a non-negative integer or its decimal string. Missing keys keep their default (off).
 *
 * @param options - the option value
 * @returns the frozen flags
 * @throws {InvalidArgumentError} on an unknown key (the message lists the valid ones), a value of
 *   the wrong type, or an option that is neither `'all'` nor an object
 */
export function parseConflictFlags(options: unknown): ConflictFlags {
  if (options === undefined || options === null) return DEFAULT_CONFLICT_FLAGS
  if (options === 'all') return allFlagsOn()
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(
      `Invalid conflicts option ${describe(options)}: expected 'all' or an object of flags`,
      {
        argument: 'conflicts',
        hint: `Pass 'all', or an object with keys among: ${CONFLICT_FLAG_KEYS.join(', ')}.`,
      },
    )
  }
  const out: Record<string, boolean | number> = { ...DEFAULT_CONFLICT_FLAGS }
  for (const [rawKey, value] of Object.entries(options)) {
    if (value === undefined) continue
    const key = rawKey.startsWith(SPARK_PREFIX) ? rawKey.slice(SPARK_PREFIX.length) : rawKey
    const booleanField = BOOLEAN_KEYS[key]
    if (booleanField !== undefined) {
      out[booleanField] = parseBoolean(rawKey, value)
      continue
    }
    const numeric = NUMERIC_KEYS[key]
    if (numeric !== undefined) {
      out[numeric[0]] = parseCount(rawKey, value, numeric[1])
      continue
    }
    throw new InvalidArgumentError(`Unknown conflicts option '${rawKey}'`, {
      argument: rawKey,
      hint: `Valid keys (optionally prefixed with '${SPARK_PREFIX}'): ${CONFLICT_FLAG_KEYS.join(', ')}; or pass 'all'.`,
    })
  }
  return Object.freeze(out) as unknown as ConflictFlags
}

/**
 * Whether any reconciliation is on. With none on, the checker needs no fetched facts.
 *
 * @param flags - the flags
 * @returns true when at least one switch is on
 */
export function anyReconciliationEnabled(flags: ConflictFlags): boolean {
  return Object.values(BOOLEAN_KEYS).some((field) => flags[field])
}

/**
 * The option key (as api.md spells it, without the Spark prefix) of a boolean switch.
 *
 * @param field - the switch
 * @returns its key, e.g. `rowLevelConcurrency.enabled`
 */
export function conflictFlagKey(field: BooleanFlag): string {
  for (const [key, f] of Object.entries(BOOLEAN_KEYS)) if (f === field) return key
  return field
}

/**
 * The flags with some switches turned on.
 *
 * @param flags - the flags
 * @param fields - the switches to turn on
 * @returns the frozen flags
 */
export function withFlagsOn(flags: ConflictFlags, fields: Iterable<BooleanFlag>): ConflictFlags {
  const out: Record<string, boolean | number> = { ...flags }
  for (const field of fields) out[field] = true
  return Object.freeze(out) as unknown as ConflictFlags
}

/**
 * The switches that are off.
 *
 * @param flags - the flags
 * @returns the switches that are off, in api.md order
 */
export function flagsOff(flags: ConflictFlags): readonly BooleanFlag[] {
  return Object.values(BOOLEAN_KEYS).filter((field) => !flags[field])
}

// === Internals ===

function allFlagsOn(): ConflictFlags {
  const out: Record<string, boolean | number> = { ...DEFAULT_CONFLICT_FLAGS }
  for (const field of Object.values(BOOLEAN_KEYS)) out[field] = true
  return Object.freeze(out) as unknown as ConflictFlags
}

function parseBoolean(key: string, value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase()
    if (v === 'true') return true
    if (v === 'false') return false
  }
  throw new InvalidArgumentError(
    `Invalid value ${describe(value)} for conflicts option '${key}': expected a boolean`,
    {
      argument: key,
      hint: `Set '${key}' to true or false.`,
    },
  )
}

function parseCount(key: string, value: unknown, min: number): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value
  if (typeof n === 'number' && Number.isSafeInteger(n) && n >= min) return n
  throw new InvalidArgumentError(
    `Invalid value ${describe(value)} for conflicts option '${key}': expected an integer >= ${min}`,
    { argument: key, hint: `Set '${key}' to a whole number of at least ${min}.` },
  )
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'object')
    return value === null ? 'null' : Array.isArray(value) ? 'an array' : 'an object'
  return String(value)
}
