/**
 * Strings and blobs of a chunk-filled append: short values cross to DuckDB in one copy of their
 * 16-byte slots per chunk, long ones one call each. What DuckDB stores, and the Parquet bytes it
 * writes from it, are the same as through DuckDB's Node API vectors (one call per value) and
 * through the appender's own per-value calls, for every edge of the inline form: empty, 12 and
 * 13 bytes, multi-byte characters across the boundary, NUL characters, lone surrogates (which
 * both ways turn into U+FFFD), nulls, and chunks that mix all of them. A row set again after an
 * abandoned one keeps no trace of the first value.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  BLOB,
  DuckDBBlobValue,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBInstance,
  type DuckDBValue,
  INTEGER,
  VARCHAR,
} from '@duckdb/node-api'
import duckdb from '@duckdb/node-bindings'
import type { WrittenFile } from '../../../src/engine/data-writer.js'
import { ChunkAppender } from '../../../src/engine-default/duckdb-row-appender.js'
import { StringVectorBuffer } from '../../../src/engine-default/duckdb-string-vector.js'
import { createDuckDbInstance } from '../../../src/subpaths/duckdb.js'
import { readFileRows, schemaOf, targetOf, type WriterEnv, writerEnv } from './writer-helpers.js'

const utf8 = new TextEncoder()

/** Strings at every edge of the 12-byte inline form; null is a null row. */
const STRINGS: readonly (string | null)[] = [
  '',
  'a',
  'n42',
  'abcdefghijkl', // 12 bytes
  'abcdefghijklm', // 13 bytes
  'a'.repeat(100),
  'éééééé', // 6 units, 12 bytes
  'ééééééa', // 7 units, 13 bytes
  'abcdefghijké', // 12 units, 13 bytes
  '😀😀😀', // 6 units, 12 bytes
  '😀😀😀a', // 13 bytes
  '日本語の文字', // 18 bytes
  '\u0000',
  'a\u0000b',
  'abcdefghijk\u0000zzzz',
  '\uD800', // lone surrogate, 3 bytes as U+FFFD
  'x\uDC00'.repeat(5), // lone surrogates past 12 bytes
  null,
  'after a null',
  'z',
]

/** Blobs at the same edges. */
const BLOBS: readonly (Uint8Array | null)[] = [
  new Uint8Array(0),
  new Uint8Array([0]),
  new Uint8Array([0xff, 0x00, 0x80]),
  new Uint8Array(12).fill(7),
  new Uint8Array(13).fill(9),
  utf8.encode('bytes that are long enough'),
  null,
  new Uint8Array([0xc3]), // not UTF-8, and need not be
]

/** `n` rows cycling through the values, so a chunk (2048 rows) mixes them all. */
function cycle<T>(values: readonly T[], n: number): T[] {
  return Array.from({ length: n }, (_, i) => values[(i * 7) % values.length] as T)
}

/** A string as UTF-8 stores it: each lone surrogate replaced by U+FFFD. */
function wellFormed(s: string): string {
  return s.replace(/\p{Cs}/gu, '\uFFFD')
}

const ROWS = 5000 // two full chunks and a partial one
const TYPES = [INTEGER, VARCHAR, BLOB]

function asDuck(s: string | null, b: Uint8Array | null): [DuckDBValue, DuckDBValue] {
  return [s, b === null ? null : new DuckDBBlobValue(b)]
}

async function createTable(con: DuckDBConnection, name: string): Promise<void> {
  await con.run(`CREATE OR REPLACE TABLE ${name} (i INTEGER, s VARCHAR, b BLOB)`)
}

/** The rows through {@link ChunkAppender}. */
async function throughChunkAppender(
  con: DuckDBConnection,
  name: string,
  strings: readonly (string | null)[],
  blobs: readonly (Uint8Array | null)[],
): Promise<void> {
  await createTable(con, name)
  const appender = await con.createAppender(name)
  const chunks = new ChunkAppender(appender, TYPES)
  for (let i = 0; i < strings.length; i++) {
    const [s, b] = asDuck(strings[i] ?? null, blobs[i] ?? null)
    chunks.set(0, i)
    chunks.set(1, s)
    chunks.set(2, b)
    chunks.endRow()
  }
  chunks.flush()
  appender.closeSync()
}

/** The rows through DuckDB's Node API chunk vectors: one native call per string or blob. */
async function throughNodeApiVectors(
  con: DuckDBConnection,
  name: string,
  strings: readonly (string | null)[],
  blobs: readonly (Uint8Array | null)[],
): Promise<void> {
  await createTable(con, name)
  const appender = await con.createAppender(name)
  for (let start = 0; start < strings.length; start += 2048) {
    const end = Math.min(strings.length, start + 2048)
    const chunk = DuckDBDataChunk.create(TYPES, end - start)
    const ids: DuckDBValue[] = []
    const ss: DuckDBValue[] = []
    const bs: DuckDBValue[] = []
    for (let i = start; i < end; i++) {
      const [s, b] = asDuck(strings[i] ?? null, blobs[i] ?? null)
      ids.push(i)
      ss.push(s)
      bs.push(b)
    }
    chunk.setColumnValues(0, ids)
    chunk.setColumnValues(1, ss)
    chunk.setColumnValues(2, bs)
    appender.appendDataChunk(chunk)
  }
  appender.closeSync()
}

/** The rows through the appender's own per-value calls. */
async function throughAppenderCalls(
  con: DuckDBConnection,
  name: string,
  strings: readonly (string | null)[],
  blobs: readonly (Uint8Array | null)[],
): Promise<void> {
  await createTable(con, name)
  const appender = await con.createAppender(name)
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i] ?? null
    const b = blobs[i] ?? null
    appender.appendInteger(i)
    if (s === null) appender.appendNull()
    else appender.appendVarchar(s)
    if (b === null) appender.appendNull()
    else appender.appendBlob(b)
    appender.endRow()
  }
  appender.closeSync()
}

/** Each row's id, string bytes (hex) and blob bytes (hex), in id order. */
async function storedBytes(con: DuckDBConnection, name: string): Promise<unknown[][]> {
  const reader = await con.runAndReadAll(
    `SELECT i, s, hex(encode(s)), strlen(s), hex(b), octet_length(b) FROM ${name} ORDER BY i`,
  )
  return reader.getRowsJS()
}

/** The table written to Parquet by DuckDB (one thread, so the bytes are deterministic). */
async function parquetOf(con: DuckDBConnection, name: string, dir: string): Promise<Buffer> {
  const path = join(dir, `${name}.parquet`)
  await con.run(`COPY (SELECT * FROM ${name} ORDER BY i) TO '${path}' (FORMAT parquet)`)
  return readFile(path)
}

describe('ChunkAppender strings and blobs', () => {
  let dir: string
  let instance: DuckDBInstance
  let con: DuckDBConnection
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-chunk-strings-'))
    instance = await createDuckDbInstance({ threads: 1 })
    con = await instance.connect()
  })
  after(async () => {
    con.closeSync()
    instance.closeSync()
    await rm(dir, { recursive: true, force: true })
  })

  it('stores every inline edge as the per-value paths do, and DuckDB writes the same Parquet bytes', async () => {
    const strings = cycle(STRINGS, ROWS)
    const blobs = cycle(BLOBS, ROWS)
    await throughChunkAppender(con, 'chunked', strings, blobs)
    await throughNodeApiVectors(con, 'vectors', strings, blobs)
    await throughAppenderCalls(con, 'calls', strings, blobs)

    const stored = await storedBytes(con, 'chunked')
    assert.equal(stored.length, ROWS)
    assert.deepStrictEqual(stored, await storedBytes(con, 'vectors'))
    assert.deepStrictEqual(stored, await storedBytes(con, 'calls'))
    // The values themselves, independently of either path: exact for well-formed strings, a
    // lone surrogate as U+FFFD, NUL characters kept.
    for (const [i, s, , , b] of stored) {
      const want = strings[Number(i)] ?? null
      assert.equal(s, want === null ? null : wellFormed(want), `row ${i}`)
      const bytes = blobs[Number(i)] ?? null
      assert.equal(b, bytes === null ? null : Buffer.from(bytes).toString('hex').toUpperCase(), `row ${i}`)
    }

    const file = await parquetOf(con, 'chunked', dir)
    assert.ok(file.equals(await parquetOf(con, 'vectors', dir)), 'same Parquet bytes as Node API vectors')
    assert.ok(file.equals(await parquetOf(con, 'calls', dir)), 'same Parquet bytes as appender calls')
    // Inline comparisons read the whole 16-byte slot: equal values must group as equal.
    const groups = await con.runAndReadAll(
      'SELECT count(DISTINCT s), count(DISTINCT b), count(*) FILTER (WHERE s IS NULL) FROM chunked',
    )
    const distinctStrings = new Set(STRINGS.filter((s) => s !== null).map(wellFormed)).size
    assert.deepStrictEqual(groups.getRowsJS()[0], [
      BigInt(distinctStrings),
      BigInt(BLOBS.filter((b) => b !== null).length),
      BigInt(strings.filter((s) => s === null).length),
    ])
  })

  it("fills slots byte-identical to DuckDB's own assignment, also in a reused chunk", () => {
    // Inline slots compare as 16 bytes inside DuckDB, so stale bytes from a previous chunk would
    // make equal strings unequal; long slots hold a heap pointer, so only length and prefix compare.
    const first = cycle(STRINGS, 2048)
    const second = cycle(STRINGS.toReversed(), 2000)
    const chunk = DuckDBDataChunk.create([VARCHAR], 2048)
    const buffer = new StringVectorBuffer(2048, false)
    const fill = (values: readonly (string | null)[]) => {
      values.forEach((v, i) => {
        buffer.set(i, v)
      })
      buffer.flush(duckdb.data_chunk_get_vector(chunk.chunk, 0), values.length)
    }
    fill(first)
    chunk.reset()
    chunk.rowCount = 2048
    buffer.reset()
    fill(second)
    const ours = duckdb.vector_get_data(duckdb.data_chunk_get_vector(chunk.chunk, 0), second.length * 16)
    const reference = DuckDBDataChunk.create([VARCHAR], second.length)
    reference.setColumnValues(0, second)
    const theirs = duckdb.vector_get_data(
      duckdb.data_chunk_get_vector(reference.chunk, 0),
      second.length * 16,
    )
    const lengths = new Uint32Array(theirs.buffer, theirs.byteOffset, second.length * 4)
    for (let i = 0; i < second.length; i++) {
      // A null row's slot is never read (DuckDB's own is left uninitialised).
      if (second[i] === null) continue
      const compared = (lengths[i * 4] as number) <= 12 ? 16 : 8
      assert.deepStrictEqual(
        ours.subarray(i * 16, i * 16 + compared),
        theirs.subarray(i * 16, i * 16 + compared),
        `row ${i} (${JSON.stringify(second[i])})`,
      )
    }
  })

  it('keeps no trace of a value set in a row that is then set again', async () => {
    // A row abandoned half-way (its conversion failed) is refilled by the next one: a long value,
    // a null or a short value set before must not survive the new one, in any order.
    const firsts: DuckDBValue[] = ['a long first value past 12 bytes', null, 'short', 'ééééééé', '']
    const seconds: DuckDBValue[] = ['s', 'a long second value past 12 bytes', null, '', 'ab']
    await createTable(con, 'reset_rows')
    const appender = await con.createAppender('reset_rows')
    const chunks = new ChunkAppender(appender, TYPES)
    const expected: unknown[][] = []
    let i = 0
    for (const first of firsts) {
      for (const second of seconds) {
        chunks.set(0, -1)
        chunks.set(1, first)
        chunks.set(2, first === null ? null : new DuckDBBlobValue(utf8.encode(String(first))))
        chunks.set(0, i)
        chunks.set(1, second)
        chunks.set(2, second === null ? null : new DuckDBBlobValue(utf8.encode(String(second))))
        chunks.endRow()
        expected.push([
          i,
          second,
          second === null ? null : Buffer.from(String(second)).toString('hex').toUpperCase(),
        ])
        i++
      }
    }
    chunks.flush()
    appender.closeSync()
    const rows = (await con.runAndReadAll('SELECT i, s, hex(b) FROM reset_rows ORDER BY i')).getRowsJS()
    assert.deepStrictEqual(rows, expected)
    const equalToSelf = await con.runAndReadAll(
      `SELECT count(*) FROM reset_rows r JOIN reset_rows q ON r.s = q.s AND r.i = q.i`,
    )
    assert.equal(equalToSelf.getRowsJS()[0]?.[0], BigInt(expected.filter((r) => r[1] !== null).length))
  })
})

describe('writeRows strings and binary', () => {
  let env: WriterEnv
  before(async () => {
    env = await writerEnv()
  })
  after(async () => {
    await env.close()
  })

  it('round-trips strings and binary at every inline edge through a Parquet file', async () => {
    const schema = schemaOf(
      { name: 'id', type: 'long' },
      { name: 's', type: 'string' },
      { name: 'b', type: 'binary' },
    )
    // Lone surrogates are refused before they reach DuckDB (see lone-surrogates.test.ts).
    const strings = cycle(
      STRINGS.filter((s) => s === null || wellFormed(s) === s),
      ROWS,
    )
    const blobs = cycle(BLOBS, ROWS)
    const input = strings.map((s, i) => ({ id: BigInt(i), s, b: blobs[i] ?? null }))
    const files = await env.writer.writeRows({ rows: input, target: targetOf(schema) })
    assert.equal(files.length, 1)
    const { rows } = await readFileRows(env.store, (files[0] as WrittenFile).key, schema)
    assert.deepStrictEqual(
      rows.sort((a, b) => Number((a.id as bigint) - (b.id as bigint))),
      input,
    )
  })
})
