/**
 * Commit files are read line by line from their bytes, never as one string: a commit larger
 * than the longest string the runtime can build (512 MiB) is read, and only a single line that
 * long is refused, with a typed error.
 *
 * The 600 MB commit takes minutes to write and read on a small machine: it runs with
 * DELTA_RLC_BIG=1. The default test checks the line-by-line decoding on a small log.
 */
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { isDeltaError } from '../../src/errors/index.js'
import { DeltaTable } from '../../src/table/delta-table.js'

const BIG = process.env.DELTA_RLC_BIG === '1'

const roots: string[] = []
after(() => Promise.all(roots.map((r) => rm(r, { recursive: true, force: true }))))

const commitPath = (root: string, v: number) =>
  join(root, '_delta_log', `${String(v).padStart(20, '0')}.json`)

async function newTable(rows: number): Promise<{ root: string; table: DeltaTable }> {
  const root = await mkdtemp(join(tmpdir(), 'delta-rlc-bigcommit-'))
  roots.push(root)
  const table = await DeltaTable.create(root, {
    schema: 'id long',
    properties: { 'delta.checkpointInterval': '1000' },
  })
  await table.append(Array.from({ length: rows }, (_, i) => ({ id: BigInt(i) })))
  return { root, table }
}

async function sortedIds(table: DeltaTable): Promise<bigint[]> {
  const rows = await table.scan().toArray()
  return rows.map((r) => r.id as bigint).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

describe('commit files read line by line', () => {
  it('decodes each line on its own: a leading BOM, CRLF, blank lines, multi-byte text, a bad byte', async () => {
    const { root, table } = await newTable(3)
    try {
      const [file] = (await table.snapshot()).activeFiles()
      assert.ok(file)
      await copyFile(join(root, file.path), join(root, 'copy.parquet'))
      // Commit 0 gets a byte-order mark and CRLF line ends.
      const zero = await readFile(commitPath(root, 0), 'utf8')
      await writeFile(commitPath(root, 0), `\ufeff${zero.trimEnd().split('\n').join('\r\n')}\r\n`)
      // Commit 2 adds a copy whose tags hold multi-byte characters, one line holds a byte that
      // is not UTF-8, and blank lines sit between the actions.
      const add = (path: string, tag: string) =>
        `{"add":{"path":"${path}","partitionValues":{},"size":${file.size},"modificationTime":1,"dataChange":true,"tags":{"note":"${tag}"}}}`
      const info = '{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE"}}'
      const bytes = Buffer.concat([
        Buffer.from(`${info}\n\n`),
        Buffer.from(`${add('copy.parquet', 'größe 数据 🦆')}\n  \n`),
        Buffer.from('{"txn":{"appId":"a\u00e9'),
        Buffer.from([0xff]),
        Buffer.from('b","version":7}}\n'),
      ])
      await writeFile(commitPath(root, 2), bytes)

      const reopened = await DeltaTable.open(root)
      try {
        const snap = await reopened.snapshot()
        assert.equal(snap.version, 2n)
        const copy = snap.activeFiles().find((f) => f.path === 'copy.parquet')
        assert.equal(copy?.tags?.note, 'größe 数据 🦆')
        assert.deepEqual([...snap.setTransactions().keys()], ['a\u00e9\ufffdb'])
        assert.deepEqual(await sortedIds(reopened), [0n, 0n, 1n, 1n, 2n, 2n])
        const [latest] = await reopened.history({ limit: 1 })
        assert.equal(latest?.operation, 'WRITE')
      } finally {
        await reopened.close()
      }

      // A line that is not JSON is named by its number, counted as in the file.
      await writeFile(commitPath(root, 2), Buffer.concat([bytes, Buffer.from('\n{"add":{"pa\n')]))
      await assert.rejects(DeltaTable.open(root), (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_INVALID_TABLE'), String(err))
        assert.match((err as Error).message, /00000000000000000002\.json line 7 /)
        return true
      })
    } finally {
      await table.close()
    }
  })
})

const MB = 1024 * 1024

/** Writes `count` lines built by `line(i)` to a file handle, in chunks of joined lines. */
async function writeLines(path: string, head: string[], count: number, line: (i: number) => string) {
  const fh = await open(path, 'wx')
  try {
    await fh.write(`${head.join('\n')}\n`)
    const CHUNK = 20_000
    for (let start = 0; start < count; start += CHUNK) {
      const lines: string[] = []
      for (let i = start; i < Math.min(count, start + CHUNK); i++) lines.push(line(i))
      await fh.write(`${lines.join('\n')}\n`)
    }
  } finally {
    await fh.close()
  }
}

describe('a commit over 512 MiB', {
  skip: BIG ? false : 'set DELTA_RLC_BIG=1 to run (writes and reads 600 MB)',
}, () => {
  it('is read: 600 MB of tombstones and adds, then history, scans and a new commit', {
    timeout: 900_000,
  }, async () => {
    const { root, table } = await newTable(10)
    try {
      const [file] = (await table.snapshot()).activeFiles()
      assert.ok(file)
      const COPIES = 20
      for (let i = 0; i < COPIES; i++) await copyFile(join(root, file.path), join(root, `copy-${i}.parquet`))
      const stats =
        '{\\"numRecords\\":1000,\\"minValues\\":{\\"id\\":0,\\"name\\":\\"' +
        'a'.repeat(120) +
        '\\"},\\"maxValues\\":{\\"id\\":999,\\"name\\":\\"' +
        'z'.repeat(120) +
        '\\"},\\"nullCount\\":{\\"id\\":0,\\"name\\":0}}'
      // A large rewrite: tombstones of files from long ago, plus the files that replace them.
      const TOMBSTONES = 900_000
      const head = ['{"commitInfo":{"timestamp":1700000000000,"operation":"OPTIMIZE"}}']
      for (let i = 0; i < COPIES; i++) {
        head.push(
          `{"add":{"path":"copy-${i}.parquet","partitionValues":{},"size":${file.size},"modificationTime":1,"dataChange":false}}`,
        )
      }
      await writeLines(commitPath(root, 2), head, TOMBSTONES, (i) => {
        const path = `old/part-${String(i).padStart(8, '0')}-${'0123456789abcdef'.repeat(4)}.c000.snappy.parquet`
        return `{"remove":{"path":"${path}","deletionTimestamp":1700000000000,"dataChange":false,"extendedFileMetadata":true,"partitionValues":{},"size":123456,"stats":"${stats}","tags":{"OPTIMIZE_TARGET_SIZE":"268435456"}}}`
      })
      const size = (await stat(commitPath(root, 2))).size
      assert.ok(size > 600_000_000, `the commit is ${size} bytes`)

      const reopened = await DeltaTable.open(root)
      try {
        const snap = await reopened.snapshot()
        assert.equal(snap.version, 2n)
        assert.equal(snap.activeFiles().length, COPIES + 1)
        assert.equal(snap.tombstones().length, TOMBSTONES)
        const ids = await sortedIds(reopened)
        assert.equal(ids.length, (COPIES + 1) * 10)
        assert.equal(
          ids.reduce((a, b) => a + b, 0n),
          BigInt((COPIES + 1) * 45),
        )
        const [latest] = await reopened.history({ limit: 1 })
        assert.equal(latest?.operation, 'OPTIMIZE')
        const next = await reopened.append([{ id: 100n }])
        assert.equal(next.version, 3n)
        assert.equal((await sortedIds(reopened)).at(-1), 100n)
      } finally {
        await reopened.close()
      }
    } finally {
      await table.close()
    }
  })

  it('refuses a single line longer than the longest string, with a typed error', {
    timeout: 300_000,
  }, async () => {
    const { root, table } = await newTable(1)
    try {
      const fh = await open(commitPath(root, 2), 'wx')
      try {
        await fh.write('{"commitInfo":{"timestamp":1700000000000,"operation":"WRITE","note":"')
        const block = Buffer.alloc(16 * MB, 0x78)
        for (let i = 0; i < 33; i++) await fh.write(block)
        await fh.write('"}}\n')
      } finally {
        await fh.close()
      }
      await assert.rejects(DeltaTable.open(root), (err: unknown) => {
        assert.ok(isDeltaError(err, 'DELTA_UNSUPPORTED'), String(err))
        assert.match((err as Error).message, /00000000000000000002\.json line 1 /)
        assert.ok((err as { hint?: string }).hint)
        return true
      })
      // The versions before it still read.
      const old = await table.snapshot({ version: 1n })
      assert.equal(old.activeFiles().length, 1)
    } finally {
      await table.close()
    }
  })
})
