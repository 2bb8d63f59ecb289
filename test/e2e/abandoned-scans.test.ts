/**
 * Scans a caller stops reading hold nothing: breaking out of `for await` ends the DuckDB stream
 * and closes its connection (a stream left part-way keeps its query, its open Parquet files and
 * its buffers alive until garbage collection), `table.close()` lets go of the scans still open,
 * and running out of file descriptors is a typed error the commit loop does not retry.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import { runInNewContext } from 'node:vm'
import { TableClosedError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const ROWS = 5_000

let root: string
let dir: string

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'delta-rlc-abandoned-'))
  dir = join(root, 't')
  const table = await DeltaTable.create(dir, { schema: 'id long, s string' })
  const rows: { id: bigint; s: string }[] = []
  for (let i = 0; i < ROWS; i++) rows.push({ id: BigInt(i), s: `value-${i}` })
  await table.append(rows)
  await table.close()
})
after(() => rm(root, { recursive: true, force: true }))

async function openFds(): Promise<number> {
  return (await readdir('/proc/self/fd')).length
}

/**
 * RSS after a full garbage collection. What DuckDB holds for a result object that is no longer
 * reachable is freed only when V8 collects the object, and V8 cannot see that native memory:
 * without a collection RSS says more about when the last one ran than about what is held.
 */
async function rssMb(): Promise<number> {
  v8.setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  gc()
  await new Promise((resolve) => setImmediate(resolve))
  gc()
  return process.memoryUsage().rss / 2 ** 20
}

describe('abandoned scans', () => {
  it('1,000 scans left after their first batch keep file descriptors and memory flat', async (t) => {
    const table = await DeltaTable.open(dir)
    try {
      // Warm up: the first scans load DuckDB, the Parquet reader and the code paths.
      for (let i = 0; i < 20; i++) for await (const _ of table.scan({ batchSize: 100 })) break
      const fds = await openFds()
      const rss = await rssMb()
      let maxFds = fds
      let half = rss
      for (let i = 0; i < 1000; i++) {
        for await (const batch of table.scan({ batchSize: 100 })) {
          assert.ok(batch.length > 0)
          break
        }
        if (i % 50 === 49) maxFds = Math.max(maxFds, await openFds())
        if (i === 499) half = await rssMb()
      }
      const end = await rssMb()
      const grownMb = end - rss
      const secondHalfMb = end - half
      // Each abandoned stream used to keep 3 descriptors (DuckDB's Parquet readers) open until a
      // garbage collection that the JavaScript heap, small in such a loop, hardly ever asks for.
      assert.ok(maxFds - fds <= 10, `descriptors grew from ${fds} to ${maxFds}`)
      // The allocator keeps some freed native memory mapped, so RSS climbs to a plateau; what a leak
      // would show is growth that goes on: the second 500 scans must add little to the first.
      const growth = `RSS grew by ${grownMb.toFixed(0)} MB over 1,000 abandoned scans, ${secondHalfMb.toFixed(0)} MB of it in the second 500`
      t.diagnostic(growth)
      assert.ok(grownMb < 200, growth)
      assert.ok(secondHalfMb < 40, growth)
    } finally {
      await table.close()
    }
  })

  it('a scan stopped by a throw inside the loop, and one on its jsonSafe path, release theirs', async () => {
    const table = await DeltaTable.open(dir)
    try {
      for await (const _ of table.scan({ batchSize: 10 })) break
      const fds = await openFds()
      for (let i = 0; i < 100; i++) {
        await assert.rejects(async () => {
          for await (const _ of table.scan({ batchSize: 10 })) throw new Error('stop')
        }, /stop/)
        for await (const _ of table.scan({ batchSize: 10, jsonSafe: true })) break
      }
      assert.ok((await openFds()) - fds <= 10, 'descriptors stay flat')
    } finally {
      await table.close()
    }
  })

  it('table.close() releases the scans still open, and iterating them further is DELTA_TABLE_CLOSED', async () => {
    const table = await DeltaTable.open(dir)
    for await (const _ of table.scan({ batchSize: 10 })) break
    const fds = await openFds()
    const open: AsyncIterator<unknown>[] = []
    for (let i = 0; i < 50; i++) {
      const it = table.scan({ batchSize: 10 })[Symbol.asyncIterator]()
      const first = await it.next()
      assert.equal(first.done, false)
      open.push(it)
    }
    assert.ok((await openFds()) - fds >= 50, 'each open stream holds its Parquet file')
    await table.close()
    assert.ok((await openFds()) - fds <= 5, `close() released them: ${(await openFds()) - fds} left`)
    for (const it of open.slice(0, 5)) {
      await assert.rejects(() => it.next(), TableClosedError)
    }
  })
})

describe('running out of file descriptors', () => {
  it('is DELTA_RESOURCE_EXHAUSTED, not a retryable storage error, and is not retried', () => {
    // A child with a low descriptor limit that uses up what is left, then appends.
    const worker = fileURLToPath(new URL('../helpers/exhausted-fds-worker.ts', import.meta.url))
    const run = spawnSync('bash', ['-c', `ulimit -n 256 && exec node --import tsx "${worker}" "${dir}"`], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(run.status, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as {
      code: string
      retryable: unknown
      resource: unknown
      errno: unknown
      ms: number
    }
    assert.equal(report.code, 'DELTA_RESOURCE_EXHAUSTED', JSON.stringify(report))
    assert.equal(report.resource, 'file-descriptors')
    assert.ok(report.errno === 'EMFILE', JSON.stringify(report))
    assert.equal(report.retryable, undefined)
    // The commit loop's retries back off for seconds; a failure that is not retried is quick.
    assert.ok(report.ms < 2000, `failed after ${report.ms} ms`)
  })
})
