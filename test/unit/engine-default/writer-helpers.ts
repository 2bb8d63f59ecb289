/**
 * Shared setup for the data writer tests: a real store in a temp dir (or a memory store), a real
 * DuckDB, and an independent way to read a written file back in physical row order.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import { parse } from 'lossless-json'
import type { WriteTarget } from '../../../src/engine/data-writer.js'
import { DuckDbRuntime } from '../../../src/engine-default/duckdb-runtime.js'
import { toJsValue } from '../../../src/engine-default/duckdb-values.js'
import { DuckDbWriter } from '../../../src/engine-default/duckdb-writer.js'
import {
  COLUMN_MAPPING_PHYSICAL_NAME_KEY,
  type ColumnMappingMode,
  type DataType,
  type StructType,
  toStructType,
} from '../../../src/protocol/schema.js'
import { createLocalStore, createMemoryStore } from '../../../src/storage/index.js'
import type { ObjectStore } from '../../../src/storage/object-store.js'

/** A writer over a fresh store, and how to dispose of it. */
export interface WriterEnv {
  readonly dir: string
  readonly store: ObjectStore
  readonly writer: DuckDbWriter
  close(): Promise<void>
}

/**
 * A writer over a new local store in a temp dir (or a memory store), with its own DuckDB.
 *
 * @param kind - which store
 */
export async function writerEnv(kind: 'local' | 'memory' = 'local'): Promise<WriterEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-writer-'))
  const store = kind === 'local' ? createLocalStore(join(dir, 'table')) : createMemoryStore()
  const duck = new DuckDbRuntime({ threads: 2 })
  const writer = new DuckDbWriter(store, duck, join(dir, 'scratch'))
  return {
    dir,
    store,
    writer,
    close: async () => {
      await duck.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** A schema field in the JSON form. */
export interface FieldSpec {
  readonly name: string
  readonly type: unknown
  readonly nullable?: boolean
  readonly metadata?: Record<string, unknown>
}

/**
 * Builds a validated schema.
 *
 * @param fields - fields in the JSON form; nullable defaults to true
 */
export function schemaOf(...fields: FieldSpec[]): StructType {
  return toStructType({
    type: 'struct',
    fields: fields.map((f) => ({
      name: f.name,
      type: f.type,
      nullable: f.nullable ?? true,
      metadata: f.metadata ?? {},
    })),
  })
}

/**
 * A write target with defaults: no partitions, no column mapping.
 *
 * @param schema - the table schema
 * @param extra - fields to override
 */
export function targetOf(schema: StructType, extra: Partial<WriteTarget> = {}): WriteTarget {
  return { schema, partitionColumns: [], columnMappingMode: 'none', ...extra }
}

/** Every object key in the store. */
export async function listKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = []
  for await (const f of store.listRecursive('')) keys.push(f.key)
  return keys.sort()
}

let reader: Promise<DuckDBInstance> | undefined

/**
 * Reads a data file back with a separate DuckDB, in physical row order, converting each
 * non-partition column of the schema to the row representation.
 *
 * @param store - where the file is
 * @param key - its key
 * @param schema - the table schema
 * @param options - partition columns to leave out, column mapping mode
 * @returns the file's rows keyed by logical name, and its Parquet column names
 */
export async function readFileRows(
  store: ObjectStore,
  key: string,
  schema: StructType,
  options: { partitionColumns?: readonly string[]; mode?: ColumnMappingMode } = {},
): Promise<{ rows: Record<string, unknown>[]; positions: number[]; columns: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-readback-'))
  try {
    const path = join(dir, 'f.parquet')
    await writeFile(path, await store.read(key))
    reader ??= DuckDBInstance.create(':memory:', { threads: '1' })
    const con = await (await reader).connect()
    try {
      await con.run(`SET TimeZone = 'UTC'`)
      const columns = (await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path}')`))
        .getRowsJS()
        .map((r) => String(r[0]))
      const fields = schema.fields.filter(
        (f) => !(options.partitionColumns ?? []).includes(f.name) && f.type !== 'void',
      )
      const phys = fields.map((f) => physical(f.metadata, f.name, options.mode ?? 'none'))
      const select = ['file_row_number', ...phys.map((p) => `"${p.replaceAll('"', '""')}"`)].join(', ')
      const result = await con.runAndReadAll(
        `SELECT ${select} FROM read_parquet('${path}', file_row_number = true) ORDER BY file_row_number`,
      )
      const positions: number[] = []
      const rows = result.getRows().map((r) => {
        positions.push(Number(r[0]))
        const row: Record<string, unknown> = {}
        fields.forEach((f, i) => {
          row[f.name] = toJsValue(r[i + 1] ?? null, f.type as DataType)
        })
        return row
      })
      return { rows, positions, columns }
    } finally {
      con.closeSync()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Parquet schema entries (name, field id) of a stored file.
 *
 * @param store - where the file is
 * @param key - its key
 */
export async function parquetFields(
  store: ObjectStore,
  key: string,
): Promise<{ name: string; fieldId: number | null }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'delta-rlc-readback-'))
  try {
    const path = join(dir, 'f.parquet')
    await writeFile(path, await store.read(key))
    reader ??= DuckDBInstance.create(':memory:', { threads: '1' })
    const con = await (await reader).connect()
    try {
      const rows = (
        await con.runAndReadAll(`SELECT name, field_id FROM parquet_schema('${path}')`)
      ).getRowsJS()
      return rows.slice(1).map((r) => ({ name: String(r[0]), fieldId: r[1] === null ? null : Number(r[1]) }))
    } finally {
      con.closeSync()
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Parses stats JSON keeping every number as its source text, so decimals and longs compare
 * exactly.
 *
 * @param json - `add.stats`
 */
export function parseStatsText(json: string): unknown {
  return parse(json, null, (text) => `#${text}`)
}

function physical(
  metadata: Readonly<Record<string, unknown>>,
  name: string,
  mode: ColumnMappingMode,
): string {
  const p = metadata[COLUMN_MAPPING_PHYSICAL_NAME_KEY]
  return mode !== 'none' && typeof p === 'string' ? p : name
}
