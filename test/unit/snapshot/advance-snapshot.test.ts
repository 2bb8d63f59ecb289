/**
 * Snapshot advance equals a fresh load: random logs, written file by file, with checkpoints of
 * every kind (classic, multi-part, V2 with sidecars, with tombstone expiry), log compaction
 * files, deletion-vector updates, metadata, protocol, app-transaction and domain changes. At
 * every version the snapshot advanced commit by commit (and one advanced across several commits)
 * equals a freshly loaded one field for field (also when the commit's writer advances with its
 * content in hand instead of reading it), in iteration order, on the local store (new
 * commits found by probing names), on the memory store (by listing from a key) and on a memory
 * store that lists as Azure does (by listing the block of versions that share a name prefix).
 *
 * `DELTA_RLC_PROPERTY_RUNS` sets the number of logs (default 200); the seed is fixed
 * (`DELTA_RLC_PROPERTY_SEED` explores another).
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import type { Engine } from '../../../src/engine/engine.js'
import { createDefaultEngine } from '../../../src/engine-default/default-engine.js'
import { serializeAction } from '../../../src/protocol/action-json.js'
import type { Action } from '../../../src/protocol/actions.js'
import {
  checkpointFileName,
  commitFileName,
  compactedFileName,
  LOG_DIR,
  multiPartCheckpointFileName,
  serializeLastCheckpoint,
  v2CheckpointFileName,
} from '../../../src/protocol/log-files.js'
import { advanceSnapshot } from '../../../src/snapshot/advance-snapshot.js'
import { loadSnapshot } from '../../../src/snapshot/load-snapshot.js'
import { parseLogBytes } from '../../../src/snapshot/log-reader.js'
import type { Snapshot } from '../../../src/snapshot/snapshot.js'
import { checkpointLines, planCheckpointActions } from '../../../src/snapshot/write-checkpoint.js'
import { createDelayStore } from '../../../src/storage/delay-store.js'
import { createLocalStore } from '../../../src/storage/local-store.js'
import { createMemoryStore } from '../../../src/storage/memory-store.js'
import type { FileMeta, ObjectStore } from '../../../src/storage/object-store.js'
import { passThroughStore } from '../../../src/storage/pass-through-store.js'

const RUNS = Number(process.env.DELTA_RLC_PROPERTY_RUNS ?? 200)
const SEED = Number(process.env.DELTA_RLC_PROPERTY_SEED ?? 20_261_201)

/** The checkpoint writer's clock: tombstones deleted more than 7 days before it expire. */
const NOW = 1_800_000_000_000
const DAY = 86_400_000

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

// A staging cache of this file's own: the shared default one holds every other run's entries,
// and each fill's eviction pass reads all of them (thousands of stat calls per checkpoint read).
const cacheDir = await mkdtemp(join(tmpdir(), 'delta-rlc-advance-cache-'))
roots.push(cacheDir)

// === Random logs ===

type Op =
  | { readonly t: 'add'; readonly f: number; readonly dv: number }
  | { readonly t: 'remove'; readonly f: number; readonly dv: number; readonly old: boolean }
  | { readonly t: 'dv'; readonly f: number; readonly from: number; readonly to: number }
  | { readonly t: 'meta'; readonly k: number }
  | { readonly t: 'protocol'; readonly w: number }
  | { readonly t: 'txn'; readonly app: number; readonly v: number }
  | { readonly t: 'domain'; readonly d: number; readonly removed: boolean }

type CheckpointKind = 'none' | 'classic' | 'multi-part' | 'v2'

interface Step {
  readonly ops: readonly Op[]
  readonly checkpoint: CheckpointKind
  /** Write `<v-span>.<v>.compacted.json` after this commit (0: none). */
  readonly compactSpan: number
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('add' as const), f: fc.nat(7), dv: fc.nat(2) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('remove' as const),
      f: fc.nat(7),
      dv: fc.nat(2),
      old: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('dv' as const), f: fc.nat(7), from: fc.nat(2), to: fc.nat(2) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('meta' as const), k: fc.nat(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('protocol' as const), w: fc.integer({ min: 2, max: 4 }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('txn' as const), app: fc.nat(2), v: fc.nat(50) }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('domain' as const), d: fc.nat(2), removed: fc.boolean() }),
  },
)

const stepArb: fc.Arbitrary<Step> = fc.record({
  ops: fc.array(opArb, { minLength: 0, maxLength: 5 }),
  checkpoint: fc.oneof(
    { weight: 6, arbitrary: fc.constant('none' as const) },
    { weight: 1, arbitrary: fc.constantFrom('classic' as const, 'multi-part' as const, 'v2' as const) },
  ),
  compactSpan: fc.oneof(
    { weight: 5, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
  ),
})

type StoreKind = 'local' | 'memory' | 'prefix'

const caseArb = fc.record({
  steps: fc.array(stepArb, { minLength: 1, maxLength: 9 }),
  store: fc.constantFrom<StoreKind>('local', 'memory', 'prefix'),
})

// === Writing the log ===

function dvOf(n: number): Record<string, unknown> | undefined {
  if (n === 0) return undefined
  return {
    storageType: 'u',
    pathOrInlineDv: `ab^-aqEH.-t@S}K{vb[*k^${n}`,
    offset: 1,
    sizeInBytes: 36,
    cardinality: n,
  }
}

function addLine(f: number, dv: number, version: number): Record<string, unknown> {
  const d = dvOf(dv)
  return {
    add: {
      path: `part-${f}.parquet`,
      partitionValues: {},
      size: 100 + f,
      modificationTime: NOW - version,
      dataChange: true,
      stats: `{"numRecords":${10 + f}}`,
      ...(d === undefined ? {} : { deletionVector: d }),
    },
  }
}

function removeLine(f: number, dv: number, old: boolean, version: number): Record<string, unknown> {
  const d = dvOf(dv)
  return {
    remove: {
      path: `part-${f}.parquet`,
      deletionTimestamp: old ? NOW - 30 * DAY - version : NOW - 3_600_000 - version,
      dataChange: true,
      extendedFileMetadata: true,
      partitionValues: {},
      size: 100 + f,
      ...(d === undefined ? {} : { deletionVector: d }),
    },
  }
}

function metaLine(k: number): Record<string, unknown> {
  return {
    metaData: {
      id: 'table-advance',
      format: { provider: 'parquet', options: {} },
      schemaString: JSON.stringify({
        type: 'struct',
        fields: [{ name: 'id', type: 'long', nullable: true, metadata: {} }],
      }),
      partitionColumns: [],
      configuration: { 'test.k': String(k) },
      createdTime: 1,
    },
  }
}

function commitLines(version: number, ops: readonly Op[]): string[] {
  const lines: Record<string, unknown>[] = [
    { commitInfo: { timestamp: NOW + version, operation: 'WRITE', readVersion: version - 1 } },
  ]
  if (version === 0) {
    lines.push({ protocol: { minReaderVersion: 1, minWriterVersion: 2 } }, metaLine(0))
  }
  for (const op of ops) {
    switch (op.t) {
      case 'add':
        lines.push(addLine(op.f, op.dv, version))
        break
      case 'remove':
        lines.push(removeLine(op.f, op.dv, op.old, version))
        break
      case 'dv':
        lines.push(removeLine(op.f, op.from, false, version), addLine(op.f, op.to, version))
        break
      case 'meta':
        lines.push(metaLine(op.k))
        break
      case 'protocol':
        lines.push({ protocol: { minReaderVersion: 1, minWriterVersion: op.w } })
        break
      case 'txn':
        lines.push({ txn: { appId: `app-${op.app}`, version: op.v, lastUpdated: NOW } })
        break
      case 'domain':
        lines.push({
          domainMetadata: { domain: `d${op.d}`, configuration: `{"v":${version}}`, removed: op.removed },
        })
        break
    }
  }
  return lines.map((l) => JSON.stringify(l))
}

const encode = (text: string) => new TextEncoder().encode(text)

async function writeCheckpointOf(engine: Engine, snap: Snapshot, kind: CheckpointKind): Promise<void> {
  const v = snap.version
  const actions = planCheckpointActions(snap, NOW)
  const lines = checkpointLines(actions, { asJson: true })
  let parts: number | undefined
  if (kind === 'classic') {
    await engine.parquet.writeActionRows(`${LOG_DIR}${checkpointFileName(v)}`, lines, {})
  } else if (kind === 'multi-part') {
    parts = Math.min(3, lines.length)
    const per = Math.ceil(lines.length / parts)
    for (let i = 0; i < parts; i++) {
      const key = `${LOG_DIR}${multiPartCheckpointFileName(v, i + 1, parts)}`
      await engine.parquet.writeActionRows(key, lines.slice(i * per, (i + 1) * per), {})
    }
  } else {
    // V2: the non-file actions in a JSON top-level file, the files in two Parquet sidecars.
    const isFile = (a: Action) => 'add' in a || 'remove' in a
    const fileLines = checkpointLines(actions.filter(isFile), { asJson: true })
    const top: string[] = [JSON.stringify({ checkpointMetadata: { version: Number(v) } })]
    for (const a of actions) if (!isFile(a)) top.push(serializeAction(a))
    const half = Math.ceil(fileLines.length / 2)
    for (const chunk of [fileLines.slice(0, half), fileLines.slice(half)]) {
      if (chunk.length === 0) continue
      const name = `${randomUUID()}.parquet`
      const size = await engine.parquet.writeActionRows(`${LOG_DIR}_sidecars/${name}`, chunk, {})
      top.push(JSON.stringify({ sidecar: { path: name, sizeInBytes: size, modificationTime: NOW } }))
    }
    await engine.storage.put(
      `${LOG_DIR}${v2CheckpointFileName(v, randomUUID(), 'json')}`,
      encode(top.join('\n')),
    )
  }
  const hint = serializeLastCheckpoint({
    version: v,
    size: actions.length,
    ...(parts === undefined ? {} : { parts }),
  })
  await engine.storage.put(`${LOG_DIR}_last_checkpoint`, encode(hint))
}

// === Comparing ===

/** Every field of a snapshot, maps as entry lists in iteration order. */
function fieldsOf(s: Snapshot): Record<string, unknown> {
  const st = s.state
  return {
    version: s.version,
    timestamp: s.timestamp,
    location: s.location,
    logSegment: s.logSegment,
    protocol: st.protocol,
    metadata: st.metadata,
    activeFiles: [...st.activeFiles.entries()],
    activeCount: st.activeFiles.size,
    tombstones: [...st.tombstones.entries()],
    tombstoneCount: st.tombstones.size,
    setTransactions: [...st.setTransactions.entries()],
    domainMetadata: [...st.domainMetadata.entries()],
    latestCommitInfo: st.latestCommitInfo,
    checkpointVersion: st.checkpointVersion,
  }
}

/**
 * The store of one case: the keys of a shared store under `prefix`, so every case runs on one
 * engine (one DuckDB instance) instead of starting its own.
 */
function prefixedStore(inner: ObjectStore, prefix: string): ObjectStore {
  const strip = (m: FileMeta): FileMeta => ({ ...m, key: m.key.slice(prefix.length) })
  const store: { -readonly [K in keyof ObjectStore]: ObjectStore[K] } = {
    root: `${inner.root}/${prefix}`,
    read: (key, range, opts) => inner.read(prefix + key, range, opts),
    async *listFrom(from, opts) {
      for await (const m of inner.listFrom(prefix + from, opts)) yield strip(m)
    },
    async *listRecursive(from, opts) {
      for await (const m of inner.listRecursive(prefix + from, opts)) yield strip(m)
    },
    put: async (key, data, opts) => {
      const meta = await inner.put(prefix + key, data, opts)
      return meta === undefined ? undefined : strip(meta)
    },
    head: async (key, opts) => strip(await inner.head(prefix + key, opts)),
    delete: (key, opts) => inner.delete(prefix + key, opts),
  }
  if (inner.listingReadsWholeDirectory !== undefined)
    store.listingReadsWholeDirectory = inner.listingReadsWholeDirectory
  const listPrefix = inner.listPrefix?.bind(inner)
  if (listPrefix !== undefined) {
    store.listPrefix = async function* (from, opts) {
      for await (const m of listPrefix(prefix + from, opts)) yield strip(m)
    }
  }
  const localPath = inner.localPath?.bind(inner)
  if (localPath !== undefined) store.localPath = (key) => localPath(prefix + key)
  return store
}

/** The engine of one case: the shared engine's Parquet access, under the case's prefix. */
function caseEngine(shared: Engine, prefix: string): Engine {
  return {
    ...shared,
    storage: prefixedStore(shared.storage, prefix),
    parquet: {
      readActionRows: (keys, opts) =>
        shared.parquet.readActionRows(
          keys.map((k) => prefix + k),
          opts,
        ),
      writeActionRows: (key, lines, opts) => shared.parquet.writeActionRows(prefix + key, lines, opts),
    },
    close: async () => {},
  }
}

/**
 * A memory store that lists as Azure does: a listing from a key reads the whole directory, a
 * listing by prefix only the matching names, so an advance lists the block of new versions.
 */
function prefixListingStore(name: string): ObjectStore {
  return { ...passThroughStore(createMemoryStore(name)), listingReadsWholeDirectory: true }
}

let nextCase = 0
const shared: { local?: Engine; memory?: Engine; prefix?: Engine } = {}
after(async () => {
  await shared.local?.close()
  await shared.memory?.close()
  await shared.prefix?.close()
})

async function engineFor(kind: StoreKind): Promise<Engine> {
  if (kind === 'memory') {
    shared.memory ??= createDefaultEngine(createMemoryStore('advance'), { cacheDir })
    return caseEngine(shared.memory, `case-${nextCase++}/`)
  }
  if (kind === 'prefix') {
    shared.prefix ??= createDefaultEngine(prefixListingStore('advance-prefix'), { cacheDir })
    return caseEngine(shared.prefix, `case-${nextCase++}/`)
  }
  if (shared.local === undefined) {
    const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-advance-'))
    roots.push(dir)
    shared.local = createDefaultEngine(createLocalStore(dir), { cacheDir })
  }
  return caseEngine(shared.local, `case-${nextCase++}/`)
}

/** What a snapshot holds: metadata, protocol, app transactions and the keys of its live files. */
function contentOf(s: Snapshot): Record<string, unknown> {
  return {
    version: s.version,
    protocol: s.protocol,
    metadata: s.metadata,
    files: [...s.state.activeFiles.keys()].sort(),
    txns: [...s.setTransactions().entries()].sort(),
  }
}

async function checkCase(steps: readonly Step[], kind: StoreKind): Promise<void> {
  const engine = await engineFor(kind)
  const store = engine.storage
  let stepwise: Snapshot | undefined
  let ownwise: Snapshot | undefined
  let first: Snapshot | undefined
  for (let v = 0; v < steps.length; v++) {
    const step = steps[v] as Step
    const key = `${LOG_DIR}${commitFileName(BigInt(v))}`
    const bytes = encode(commitLines(v, step.ops).join('\n'))
    const file = await store.put(key, bytes, { ifNotExists: true })
    const fresh = await loadSnapshot(engine, 'advance')
    first ??= fresh
    stepwise = stepwise === undefined ? fresh : await advanceSnapshot(engine, stepwise)
    assert.deepStrictEqual(fieldsOf(stepwise), fieldsOf(fresh), `advanced by one commit to version ${v}`)
    // As the writer of the commit advances: its content known, not read back.
    // Every other step also with the file's metadata as the put reported it.
    const known = {
      version: BigInt(v),
      actions: parseLogBytes(bytes, key, BigInt(v)),
      ...(v % 2 === 0 && file !== undefined ? { file } : {}),
    }
    ownwise = ownwise === undefined ? fresh : await advanceSnapshot(engine, ownwise, { known })
    assert.deepStrictEqual(fieldsOf(ownwise), fieldsOf(fresh), `advanced by its own commit to version ${v}`)
    if (step.checkpoint !== 'none') await writeCheckpointOf(engine, fresh, step.checkpoint)
    if (step.compactSpan > 0 && v >= step.compactSpan) {
      const start = v - step.compactSpan
      const lines: string[] = []
      for (let c = start; c <= v; c++) for (const l of commitLines(c, (steps[c] as Step).ops)) lines.push(l)
      await store.put(`${LOG_DIR}${compactedFileName(BigInt(start), BigInt(v))}`, encode(lines.join('\n')))
    }
  }
  // With one commit nothing is newer than `first`, and an advance returns it as it is (the last
  // test checks that), whatever checkpoint was written of its version since.
  if (first === undefined || steps.length < 2) return
  // Across every commit at once, checkpoints written after them included.
  const jumped = await advanceSnapshot(engine, first)
  assert.deepStrictEqual(fieldsOf(jumped), fieldsOf(await loadSnapshot(engine, 'advance')), 'advanced from 0')
  if (steps.length >= 3) {
    // A target version stops the advance there, with the live state of that version (its
    // tombstones may still hold ones a checkpoint it replayed across had expired).
    const mid = BigInt(steps.length - 2)
    const to = await advanceSnapshot(engine, first, { toVersion: mid })
    assert.deepStrictEqual(contentOf(to), contentOf(await loadSnapshot(engine, 'advance', { version: mid })))
  }
}

describe('snapshot advance', () => {
  it(`equals a fresh load at every version of ${RUNS} random logs`, async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ steps, store }) => checkCase(steps, store)),
      { numRuns: RUNS, seed: SEED },
    )
  })

  it('lists the block of new versions in one request, and probes on past its end, as a fresh load reads', async () => {
    // Commits 0..104 with a classic checkpoint at 95 and a multi-part one at 100: the advances
    // below start in the block of 90..99 or 100..109.
    const delayed = createDelayStore(prefixListingStore('advance-block'), { latencyMs: 0 })
    const engine = createDefaultEngine(delayed, { cacheDir })
    try {
      const bodies: Uint8Array[] = []
      for (let v = 0; v <= 104; v++) {
        bodies.push(encode(commitLines(v, [{ t: 'add', f: v % 8, dv: v % 3 }]).join('\n')))
        await delayed.put(`${LOG_DIR}${commitFileName(BigInt(v))}`, bodies[v] as Uint8Array)
        if (v === 95 || v === 100) {
          const at = await loadSnapshot(engine, 'block', { version: BigInt(v) })
          await writeCheckpointOf(engine, at, v === 95 ? 'classic' : 'multi-part')
        }
      }
      const fresh = await loadSnapshot(engine, 'block')
      const at = (version: bigint) => loadSnapshot(engine, 'block', { version })

      // From 98 (checkpoint 95): the block 90..99 ends in commits, so the rest is probed, and the
      // checkpoint at 100 found by its name.
      const from98 = await at(98n)
      assert.equal(from98.state.checkpointVersion, 95n)
      assert.deepStrictEqual(fieldsOf(await advanceSnapshot(engine, from98)), fieldsOf(fresh), 'from 98')
      // From 99: versions 96..100 span two blocks, so the advance probes.
      assert.deepStrictEqual(
        fieldsOf(await advanceSnapshot(engine, await at(99n))),
        fieldsOf(fresh),
        'from 99',
      )

      // From 101 (checkpoint 100), the writer of 104 advancing from 103: one listing of 101..105.
      const from103 = await at(103n)
      assert.equal(from103.state.checkpointVersion, 100n)
      const known = { version: 104n, actions: parseLogBytes(bodies[104] as Uint8Array, 'k', 104n) }
      delayed.resetRequests()
      const own = await advanceSnapshot(engine, from103, { known })
      assert.deepStrictEqual(
        { ...delayed.requests },
        { read: 0, head: 0, put: 0, delete: 0, listFrom: 1, listRecursive: 0, listTemporaryFiles: 0 },
      )
      assert.deepStrictEqual(fieldsOf(own), fieldsOf(fresh), 'own commit 104')
      // Another writer's commits 102..104 read after the listing; a late checkpoint at 100 of a
      // snapshot built from 95 is seen in the same listing.
      assert.deepStrictEqual(
        fieldsOf(await advanceSnapshot(engine, await at(101n))),
        fieldsOf(fresh),
        'from 101',
      )
      delayed.resetRequests()
      const nothing = await advanceSnapshot(engine, fresh)
      assert.equal(nothing, fresh)
      assert.equal(delayed.requests.listFrom + delayed.requests.head + delayed.requests.read, 1)
    } finally {
      await engine.close()
    }
  })

  it('returns the same snapshot when nothing was committed', async () => {
    const store = createMemoryStore('advance-same')
    const engine = createDefaultEngine(store, { cacheDir })
    try {
      await store.put(
        `${LOG_DIR}${commitFileName(0n)}`,
        encode(commitLines(0, [{ t: 'add', f: 1, dv: 0 }]).join('\n')),
      )
      const snap = await loadSnapshot(engine, 'same')
      assert.equal(await advanceSnapshot(engine, snap), snap)
    } finally {
      await engine.close()
    }
  })
})
