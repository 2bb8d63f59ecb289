/**
 * Streamed DuckDB results: a query that fails part-way must end in an error, never in a result
 * that merely looks short. DuckDB reports such a failure only by ending the stream, so every
 * reader goes through `openStream` / `streamChunks`, which check how the stream ended.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type DuckDBConnection, ResultReturnType } from '@duckdb/node-api'
import { DuckDbRuntime, openStream, streamChunks } from '../../../src/engine-default/duckdb-runtime.js'
import { DeltaTable, InvalidArgumentError, isDeltaError } from '../../../src/index.js'

/** A million rows whose last one does not convert: DuckDB fails after streaming most of them. */
const FAILS_AT_THE_END =
  "SELECT CAST(CASE WHEN i = 999999 THEN 'x' ELSE '1' END AS INTEGER) AS v FROM range(1000000) t(i)"

describe('DuckDB result streams', () => {
  const runtime = new DuckDbRuntime({ threads: 2 })
  let con: DuckDBConnection
  before(async () => {
    con = await runtime.connect()
  })
  after(async () => {
    con.closeSync()
    await runtime.close()
  })

  it('a raw stream of a query failing part-way ends short without an error (the DuckDB behaviour guarded against)', async () => {
    const result = await con.stream(FAILS_AT_THE_END)
    let rows = 0
    for (;;) {
      const chunk = await result.fetchChunk()
      if (chunk === null || chunk.rowCount === 0) break
      rows += chunk.rowCount
    }
    assert.ok(rows > 0 && rows < 1_000_000, `rows streamed before the silent end: ${rows}`)
    assert.equal(result.returnType, ResultReturnType.INVALID)
  })

  it('streamChunks throws a typed error with DuckDB’s message instead of ending short', async () => {
    let rows = 0
    await assert.rejects(
      async () => {
        for await (const chunk of streamChunks(con, FAILS_AT_THE_END)) rows += chunk.rowCount
      },
      (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_STORAGE_ERROR'), String(err))
        assert.match((err as Error).message, /after \d+ rows: Conversion Error: Could not convert string 'x'/)
        return true
      },
    )
    assert.ok(rows < 1_000_000)
  })

  it('openStream hands the failure (rows read, DuckDB’s message) to onFailure', async () => {
    const stream = await openStream(con, FAILS_AT_THE_END, {
      onFailure: (f) =>
        new InvalidArgumentError(`failed after ${f.rowsRead}: ${f.detail}`, { argument: 'query' }),
    })
    assert.deepEqual(stream.columnNames, ['v'])
    let rows = 0
    await assert.rejects(
      async () => {
        for await (const chunk of stream.chunks()) rows += chunk.rowCount
      },
      (err: unknown) => {
        assert.ok(err instanceof InvalidArgumentError)
        assert.equal(
          err.message,
          `failed after ${rows}: Conversion Error: Could not convert string 'x' to INT32`,
        )
        return true
      },
    )
  })

  it('a stream that completes yields every row', async () => {
    let rows = 0
    let sum = 0n
    for await (const chunk of streamChunks(con, 'SELECT i FROM range(300000) t(i)')) {
      rows += chunk.rowCount
      for (const [v] of chunk.getRows()) sum += v as bigint
    }
    assert.equal(rows, 300_000)
    assert.equal(sum, 44999850000n)
  })

  it('an abort signal ends the stream with its reason', async () => {
    const ac = new AbortController()
    let chunks = 0
    await assert.rejects(
      async () => {
        for await (const _ of streamChunks(con, 'SELECT i FROM range(1000000) t(i)', { signal: ac.signal })) {
          if (++chunks === 3) ac.abort(new Error('stop here'))
        }
      },
      { message: 'stop here' },
    )
    assert.equal(chunks, 3)
  })
})

describe('table scans over a failing stream', () => {
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'delta-rlc-stream-scan-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('a scan whose predicate fails on the last row throws instead of returning the rows before it', async () => {
    const n = 400_000
    const table = await DeltaTable.create(join(dir, 't'), { schema: 'id long, s string' })
    try {
      const rows: Array<{ id: bigint; s: string }> = new Array(n)
      for (let i = 0; i < n; i++) rows[i] = { id: BigInt(i), s: i === n - 1 ? 'x' : '1' }
      await table.append(rows)
      let seen = 0
      await assert.rejects(
        async () => {
          for await (const batch of table.scan({ where: 'CAST(s AS INT) > 0', columns: ['id'] }))
            seen += batch.length
        },
        (err: unknown) => {
          // The predicate's own value does not convert: the caller's predicate is at fault.
          assert.ok(isDeltaError(err, 'DELTA_INVALID_PREDICATE'), String(err))
          assert.match(
            (err as Error).message,
            /Could not convert string 'x'.* \(DuckDB stopped the scan after \d+ rows\)/,
          )
          return true
        },
      )
      assert.ok(seen < n)
      // The same table without the bad row scans in full.
      assert.equal((await table.scan({ where: "s = '1'", columns: ['id'] }).toArray()).length, n - 1)
    } finally {
      await table.close()
    }
  })
})
