/**
 * The layers of `src/`, written down once: what each folder owns and what it may import. The
 * architecture test (`architecture.test.ts`) checks every import of every file against this
 * table; the design brief (sections 2 and 3) and house-style.md ("Allowed imports") are where
 * the rules come from.
 *
 * Reading a row: files of the layer may import their own folder, the layers in `imports`, the
 * layers in `types` with `import type` only, the npm packages in `packages`, and `node:*` modules
 * when `node` is set. A `pure` layer imports no `node:*` module and has no async code.
 *
 * An import target is named by the folder under `src/` it resolves into (`'protocol'`), or by
 * the file for the package entry points (`'index.ts'` for `delta-rlc`, `'subpaths/engine.ts'`
 * for `delta-rlc/engine`, ...).
 */

/** One layer: a folder under `src/`, or the package entry files. */
export interface Layer {
  /** What the layer owns, and the rule that keeps it there. */
  readonly owns: string
  /** Layers whose values and types it may import. */
  readonly imports: readonly string[]
  /** Layers it may import types from, and nothing else (`import type` / `export type`). */
  readonly types?: readonly string[]
  /**
   * Imports the design forbids that the code still makes, each with the step that removes it:
   * allowed until then, and left out of the check that the layers form no cycle.
   */
  readonly todo?: readonly string[]
  /** npm packages it may import. */
  readonly packages?: readonly string[]
  /** Whether it may import `node:*` modules. */
  readonly node?: boolean
  /** No `node:*` import and no async code: protocol logic that runs the same anywhere. */
  readonly pure?: boolean
  /** Every import of the layer is `import type`: interfaces, no implementation. */
  readonly typesOnly?: boolean
}

/** The pure layers every layer above them may use. */
const PURE = ['protocol', 'dv', 'expressions', 'log', 'conflict'] as const
/** Leaves: import nothing internal, and every layer may import them. */
const LEAVES = ['errors', 'util'] as const

/** Every folder under `src/`, and the entry files, bottom up. */
export const LAYERS: Readonly<Record<string, Layer>> = {
  // === Leaves ===
  util: { owns: 'small helpers over arrays and promises (appendAll, maxOf, mapLimit)', imports: [] },
  errors: {
    owns: 'the DeltaError taxonomy, its stable codes, and the argument checks that raise InvalidArgumentError',
    imports: [],
    pure: true,
  },

  // === Pure protocol logic: no I/O, no node:*, no async ===
  protocol: {
    owns: 'actions and their JSON, schema, table features, properties, stats, partition values, log file names',
    imports: [...LEAVES],
    packages: ['lossless-json'],
    pure: true,
  },
  dv: {
    owns: 'the RoaringBitmapArray codec, Z85, DV descriptors, DV file framing with CRC',
    imports: [...LEAVES, 'protocol'],
    packages: ['roaring-wasm'],
    pure: true,
  },
  expressions: {
    owns: 'the predicate AST and parser, evaluation over rows and over min/max stats, rendering to SQL',
    imports: [...LEAVES, 'protocol'],
    pure: true,
  },
  log: {
    owns: 'log segment planning, action replay and reconciliation',
    imports: [...LEAVES, 'protocol', 'dv', 'expressions'],
    pure: true,
  },
  conflict: {
    owns: 'the baseline conflict checks and the row-level reconciliations, as pure functions',
    imports: [...LEAVES, 'protocol', 'dv', 'expressions', 'log'],
    pure: true,
  },

  // === Bytes ===
  storage: {
    owns: 'ObjectStore and its backends (local, memory, Azure, S3, and the wrapping test stores); knows nothing of Delta',
    imports: [...LEAVES],
    packages: ['@aws-sdk/client-s3', '@azure/storage-blob', '@google-cloud/storage'],
    node: true,
  },

  // === The engine boundary ===
  engine: {
    owns: 'the Engine interface: storage, Parquet, data plane, writer, MERGE executor',
    imports: [],
    types: ['protocol', 'expressions', 'storage'],
    typesOnly: true,
  },

  // === Driving the pure modules through an engine ===
  arrow: {
    owns: 'conversions between rows and Apache Arrow data',
    imports: [...LEAVES, 'protocol', 'expressions'],
    packages: ['apache-arrow'],
  },
  snapshot: {
    owns: 'loading and advancing snapshots, reading the log and checkpoints through the engine',
    imports: [...LEAVES, ...PURE.filter((l) => l !== 'conflict'), 'engine'],
    // The engine hands out its ObjectStore; listings come back as its FileMeta.
    types: ['storage'],
    packages: ['lossless-json'],
  },
  scan: {
    owns: 'scans of a snapshot: pruning, DV loading, rows, batches, Arrow',
    imports: [...LEAVES, ...PURE.filter((l) => l !== 'conflict'), 'engine', 'snapshot', 'arrow'],
    packages: ['apache-arrow'],
  },
  txn: {
    // It knows no operation: operations (ops/) stage onto it, and the public Transaction
    // (table/) binds them.
    owns: 'the transaction core and the commit loop: read set, conflict checks, retries, put-if-absent',
    imports: [...LEAVES, ...PURE, 'engine', 'snapshot', 'scan'],
    types: ['storage'],
    node: true,
  },
  ops: {
    owns: 'append, delete, update, merge, optimize, vacuum as transaction builders; they commit only through txn/',
    imports: [...LEAVES, ...PURE, 'engine', 'snapshot', 'scan', 'txn'],
    node: true,
  },

  // === Implementations and the table ===
  'engine-default': {
    owns: 'the default engine: node fs, the DuckDB data plane; DuckDB types stay inside',
    imports: [...LEAVES, 'protocol', 'dv', 'expressions', 'engine', 'storage'],
    // node-bindings: the raw vector copies that fill a chunk's string columns in bulk.
    packages: ['@duckdb/node-api', '@duckdb/node-bindings', 'lossless-json'],
    node: true,
  },
  table: {
    owns: 'DeltaTable: opens a store and an engine (the default one unless given) and runs the operations',
    imports: [
      ...LEAVES,
      ...PURE,
      'engine',
      'storage',
      'arrow',
      'snapshot',
      'scan',
      'txn',
      'ops',
      'engine-default',
    ],
    // sql-view.ts binds a snapshot to the live-rows view of engine-default/ and names
    // DuckDBConnection only as a type: the view's SQL lives in engine-default/duckdb-live-rows-view.ts.
    packages: ['@duckdb/node-api'],
    node: true,
  },

  // === The package's entry points ===
  'index.ts': {
    owns: "delta-rlc: the table API, the local and memory stores, errors, the caller's types",
    imports: [...LEAVES, ...PURE, 'engine', 'storage', 'arrow', 'snapshot', 'scan', 'txn', 'ops', 'table'],
  },
  subpaths: {
    owns: 'delta-rlc/engine, /storage/azure, /storage/s3, /storage/gcs, /duckdb, /testing: one entry file each',
    imports: [
      ...LEAVES,
      ...PURE,
      'engine',
      'storage',
      'arrow',
      'snapshot',
      'scan',
      'txn',
      'ops',
      'table',
      'engine-default',
    ],
  },

  // === Applications of the public API ===
  race: {
    owns: 'the multi-writer race and its verifier, on the public API; physical checks go through delta-rlc/testing',
    imports: ['util', 'index.ts', 'subpaths/engine.ts', 'subpaths/testing.ts'],
    node: true,
  },
  cli: {
    owns: 'the delta-rlc command: argument parsing and output, on the package root and its declared subpaths',
    imports: [
      'index.ts',
      'subpaths/engine.ts',
      'subpaths/storage-azure.ts',
      'subpaths/storage-s3.ts',
      'subpaths/storage-gcs.ts',
      'subpaths/duckdb.ts',
      'subpaths/testing.ts',
      'race',
    ],
    // Input files are read through DuckDB (input-file.ts), which names its value types.
    packages: ['@duckdb/node-api', 'lossless-json'],
    node: true,
  },
}
